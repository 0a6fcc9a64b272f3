"""What changed, in the site: the changes page of a PR preview, and redirects for aliases.

- `emit(ctx)`: `changes/index.html` from the NetworkDiff the build put on the context
  (`build --diff-base REV`); nothing without one. Each renamed or edited belief shows what
  changed (diff/textdiff.py), the first DETAILED of them.
- `emit_redirects(ctx)`: for every alias (spec §3.3) of a published belief, a page at the
  old URL that sends readers to the new one, and copies of its badges, because an embedded
  `<img>` follows no redirect page (published links must not break, issue 6).

Partial sites: beliefs outside `visible_to` appear nowhere; removed beliefs (no longer in
the network, so their tags cannot be checked) are listed only when everything is published.
"""

from __future__ import annotations

import json
from typing import Any, Iterator

from markupsafe import escape

from .. import urls
from ..diff.aliases import redirects
from ..diff.records import FieldChange
from ..diff.textdiff import lines
from . import OutputFile, RenderContext
from .views import ref

__all__ = ["emit", "emit_redirects", "field_diffs", "PATH", "DETAILED"]

PATH = "changes/index.html"

DETAILED = 200
"""Edited (and renamed) beliefs whose changes the page shows word by word; past them it
names the changed fields only (`belief-site diff --format json` has every value)."""


def _any_ref(ctx: RenderContext, belief_id: str, here: str) -> dict[str, Any] | None:
    """A link to a published belief, a plain entry for an id the head no longer has (full
    sites only), or None when it must not be shown."""
    if belief_id in ctx.beliefs:
        return ref(ctx, belief_id, here)
    if ctx.config.visible_to is None:
        return {"id": belief_id, "gone": True}
    return None


def _visible_path(ctx: RenderContext, ids: tuple[str, ...], here: str) -> tuple[list, bool]:
    """The path's refs from the last unpublished id on, and whether anything was cut."""
    shown: list = []
    for belief_id in reversed(ids):
        one = _any_ref(ctx, belief_id, here)
        if one is None:
            return shown[::-1], True
        shown.append(one)
    return shown[::-1], False


def _flips(ctx: RenderContext, diff, here: str) -> list[dict[str, Any]]:
    rows = []
    for flip in diff.flips:
        target = ref(ctx, flip.id, here)
        if target is None:
            continue
        path, cut = _visible_path(ctx, flip.path, here)
        causes = [c for c in (_any_ref(ctx, i, here) for i in flip.causes) if c is not None]
        rows.append({"ref": target, "before": flip.before, "after": flip.after, "causes": causes,
                     "more_causes": not flip.causes_complete, "path": path,
                     # cut: shown from the last unpublished id on (a leading "…"); elided:
                     # hops left out after the cause of a very long path.
                     "cut": cut, "elided": 0 if cut else flip.elided})
    return rows


def _as_lines(field: str, value: Any) -> list[str]:
    """A field's value (diff.fields: JSON-shaped) as lines of text to compare."""
    if value is None:
        return ["(computed from its justifications)"] if field == "status" else []
    if field == "justifications":
        return [_justification_line(j) for j in value]
    if isinstance(value, str):
        return value.split("\n")
    if isinstance(value, dict):
        return [f"{key}: {json.dumps(value[key], ensure_ascii=False, sort_keys=True)}" for key in sorted(value)]
    if isinstance(value, list):
        return [v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value]
    return [json.dumps(value, ensure_ascii=False)]


def _justification_line(j: dict[str, Any]) -> str:
    line = j["type"] + (f" \u2014 {j['label']}" if j["label"] else "")
    line += ": " + (", ".join(j["antecedents"]) or "(no antecedents)")
    if j["outlist"]:
        line += "; unless " + ", ".join(j["outlist"])
    if j.get("assumed"):  # the assumed value of an id outside the network (§1.7.1)
        line += "; assuming " + ", ".join(f"{k} {v}" for k, v in sorted(j["assumed"].items()))
    if j.get("extra"):
        line += "; " + json.dumps(j["extra"], ensure_ascii=False, sort_keys=True)
    return line


def field_diffs(changes: tuple[FieldChange, ...]) -> list[dict[str, Any]]:
    """Each changed field with its old and new values compared line by line, word by word."""
    return [{"field": c.field, "lines": lines(_as_lines(c.field, c.before), _as_lines(c.field, c.after))}
            for c in changes]


def _edits(ctx: RenderContext, diff, here: str, full: bool) -> tuple[list, list]:
    """The renamed and edited entries; on a site that publishes everything, the first
    DETAILED of them with their field diffs (a partial site names the fields only: an
    old value may cite or tag what it must not show)."""
    renamed = [({"old": r.source, "new": ref(ctx, r.target, here), "via": r.via, "fields": r.fields}, r.changes)
               for r in diff.renamed if ctx.is_visible(r.target)]
    edited = [({"ref": ref(ctx, e.id, here), "fields": e.fields}, e.changes)
              for e in diff.edited if ctx.is_visible(e.id)]
    budget = DETAILED if full else 0
    for entry, changes in (*renamed, *edited):
        entry["diffs"] = field_diffs(changes) if changes and budget > 0 else None
        budget -= bool(changes)
    return [e for e, _ in renamed], [e for e, _ in edited]


def changes_view(ctx: RenderContext, diff, here: str = PATH) -> dict[str, Any]:
    """Everything the changes page shows, visibility applied."""
    full = ctx.config.visible_to is None
    flips = _flips(ctx, diff, here)
    renamed, edited = _edits(ctx, diff, here, full)
    return {
        "base": diff.base,
        "flips": flips,
        "in_to_out": sum(f["before"] == "IN" for f in flips),
        "out_to_in": sum(f["before"] == "OUT" for f in flips),
        "added": [r for r in (ref(ctx, e.id, here) for e in diff.added) if r],
        "removed": [{"id": e.id, "status": e.status, "claim": e.claim} for e in diff.removed] if full else [],
        "renamed": renamed,
        "edited": edited,
        "detailed": DETAILED,
        "undetailed": sum(1 for e in (*renamed, *edited) if e["fields"] and e["diffs"] is None) if full else 0,
    }


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """`changes/index.html`, when the build was given a diff base."""
    diff = getattr(ctx, "diff", None)
    if diff is None:
        return
    from .pages import PageSpec, environment, render_page, site_counts
    spec = PageSpec(PATH, "Changes", "changes.html", {"changes": changes_view(ctx, diff)})
    html = render_page(environment(ctx), ctx, spec, site_counts(ctx))
    yield OutputFile(PATH, html.encode("utf-8"))


_REDIRECT = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Moved: {old} is now {new}</title>
<meta name="robots" content="noindex">
<meta http-equiv="refresh" content="0; url={href}">
{canonical}</head>
<body>
<p>The belief <code>{old}</code> is now <a href="{href}"><code>{new}</code></a>.</p>
</body>
</html>
"""


def redirect_page(old: str, new: str, href: str, absolute: str | None = None) -> str:
    """A page that sends readers (and, with `absolute`, search engines) to the new URL."""
    canonical = f'<link rel="canonical" href="{escape(absolute)}">\n' if absolute else ""
    return _REDIRECT.format(old=escape(old), new=escape(new), href=escape(href), canonical=canonical)


def emit_redirects(ctx: RenderContext) -> Iterator[OutputFile]:
    """Redirect pages and badge copies at the old URLs of published beliefs."""
    from .badges import COLORS, LABEL, badge_svg, endpoint_json
    prefix, site_url = ctx.config.prefix, ctx.config.site_url
    for old, new in redirects(ctx.evaluation.network).items():
        if not ctx.is_visible(new):
            continue
        path, target = urls.page_path(old, prefix), ctx.page(new)
        absolute = urls.site_url_for(site_url, target, ctx.config.use_directory_urls) if site_url else None
        yield OutputFile(path, redirect_page(old, new, ctx.href(path, target), absolute).encode("utf-8"))
        status = ctx.evaluation.value(new)
        svg = badge_svg(LABEL, status, COLORS[status], f"{new}: {status}")
        yield OutputFile(urls.badge_path(old, prefix, "svg"), svg.encode("utf-8"))
        yield OutputFile(urls.badge_path(old, prefix, "json"),
                         endpoint_json(status, COLORS[status]).encode("utf-8"))

