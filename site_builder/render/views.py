"""Read-only views of beliefs for the templates: plain dicts, visibility applied, bounded lists.

Templates never see the model; every id that reaches a page passes `ref`, which hides
beliefs that are not published and gives each link relative to the page being written.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from markupsafe import Markup

from ..checks import echo_of, kind_of
from ..evaluate.queries import Step
from ..model import IN, Belief
from .. import urls
from . import RenderContext
from ..diagnostics import short
from .markup import escaped, render_block, render_inline, safe_source_url, safe_url


CLAIM_ECHO = 200
"""Characters of another belief's claim shown beside a link to it (the full claim is on its page)."""


def echoed_claim(belief: Belief) -> str:
    """The claim beside a link to the belief, on another belief's page (`ref`)."""
    return short(echo_of(belief), CLAIM_ECHO)


def tooltip_claim(belief: Belief) -> str:
    """The claim in the belief's box of another belief's diagram."""
    return short(" ".join(belief.text.split()), CLAIM_ECHO)


def claim_shown_elsewhere(belief: Belief) -> tuple[str, str]:
    """All that the files of other beliefs show of this one's claim (`ref` and diagrams,
    the only readers of another belief's claim): an edit that leaves it alone renders the
    belief's own files only (cache.shown)."""
    return echoed_claim(belief), tooltip_claim(belief)


Links = tuple[str, str | None, dict]
"""What `_links` says of a page: its folder (with its "/"), the key of the pages sharing its
links, and those links (id -> (page, `ref` view))."""


def _ref_html(belief_id: str, status: str, href: str, claim: str | None) -> Markup:
    """The link; `data-claim` feeds the hover preview (left out where the claim is echoed)."""
    preview = f' data-claim="{escaped(claim)}"' if claim is not None else ""
    link = f'href="{escaped(href)}"{preview} data-status="{status}"'
    return Markup(f'<span class="ref"><span class="status status-{status.lower()}">{status}</span> '
                  f'<a {link}><code>{escaped(belief_id)}</code></a></span>')


def _missing_html(belief_id: str) -> Markup:
    return Markup('<span class="ref missing"><span class="status status-missing">?</span> '
                  f'<code>{escaped(belief_id)}</code> <em>(not in this network)</em></span>')


def ref(ctx: RenderContext, belief_id: str, here: str,
        links: Links | None = None) -> dict[str, Any] | None:
    """A link to a belief from page `here`, or None when it must not be shown.

    The dict carries its HTML (`html`; `echoed` without the preview, for lists that show
    the claim beside it; `listed`: that with the claim beside it), escaped once per target
    and href, not per use: a busy page lists hundreds of references. Templates read it,
    never mutate it. `links`: `_links(ctx, here)`, when the caller asks for many."""
    beliefs = ctx.beliefs
    if belief_id not in beliefs:
        html = _missing_html(belief_id)
        return {"id": belief_id, "href": None, "status": None, "claim": "", "missing": True,
                "html": html, "echoed": html, "listed": html}
    if belief_id not in ctx.visible:
        return None
    inside, _, table = links or _links(ctx, here)
    found = table.get(belief_id)
    if found is None or found[0].startswith(inside):
        page = ctx.page(belief_id)
        href = ctx.href(here, page)
        status, claim = ctx.evaluation.value(belief_id), echoed_claim(beliefs[belief_id])
        html, echoed = _ref_html(belief_id, status, href, claim), _ref_html(belief_id, status, href, None)
        listed = Markup(f'{echoed} <span class="claim-echo">— {escaped(claim)}</span>') if claim else html
        view = {"id": belief_id, "href": href, "status": status, "claim": claim, "missing": False,
                "html": html, "echoed": echoed, "listed": listed}
        if not page.startswith(inside):
            table[belief_id] = (page, view)
        return view
    return found[1]


def _links(ctx: RenderContext, here: str) -> Links:
    """The folder of page `here` (with its "/"), the key of the pages whose links it shares,
    and those links: id -> (its page, its `ref`). Pages in the folders of one parent (every
    belief page) link to a belief alike, unless it lies inside the page's own folder
    (RenderContext.href); pages at the root share their links too (key None: no parent)."""
    folder = here.rpartition("/")[0]
    shared = folder.rpartition("/")[0] if folder else None
    table = ctx.memo.get(("ref", shared))
    if table is None:
        table = ctx.memo[("ref", shared)] = {}
    return folder + "/", shared, table


def refs(ctx: RenderContext, ids, here: str,
         links: Links | None = None) -> list[dict[str, Any]]:
    """`ref` for each id, dropping the unpublished ones."""
    links = links or _links(ctx, here)
    return [r for r in (ref(ctx, i, here, links) for i in ids) if r is not None]


def bounded(items: list, limit: int, count: int | None = None, complete: bool = True) -> dict:
    """At most `limit` items with the exact count, or "N+" when the search stopped."""
    total = len(items) if count is None else count
    return {"entries": items[:limit], "count": f"{total}" if complete else f"{total}+",
            "more": total - min(limit, len(items)) if complete else None}


def justifications(ctx: RenderContext, belief: Belief, here: str) -> list[dict[str, Any]]:
    """Each justification with its linked antecedents and outlist, and whether it supports."""
    ev = ctx.evaluation
    out = []
    for index, j in enumerate(belief.justifications):
        out.append({
            "number": index + 1, "type": j.type, "label": Markup(render_inline(j.label)),
            "supporting": ev.supporting.get(belief.id) == index,
            "antecedents": refs(ctx, [a for a in j.antecedents if a != belief.id], here),
            "outlist": refs(ctx, j.outlist, here),
            "valid": _valid(ctx, belief, index),
        })
    return out


def _valid(ctx: RenderContext, belief: Belief, index: int) -> bool:
    from ..evaluate import explain_valid
    return explain_valid(ctx.evaluation, belief, index)


def dependents(ctx: RenderContext, belief: Belief, here: str) -> dict:
    """Dependents with the justification label and role, bounded."""
    rows, links = [], _links(ctx, here)
    for dep in ctx.evaluation.dependents.get(belief.id, ()):
        target = ref(ctx, dep.id, here, links)
        if target:
            rows.append({**target, "label": dep.label, "role": dep.role, "number": dep.index + 1})
    return bounded(rows, ctx.config.panel_max_items)


def explanation(ctx: RenderContext, belief_id: str, here: str) -> dict:
    """Why the belief is IN or OUT (bounded, depth-first)."""
    result = ctx.panels_of(belief_id).explain
    links = _links(ctx, here)
    steps = [view for step in result.items if (view := _step_view(ctx, step, here, links)) is not None]
    return bounded(steps, len(steps), result.count, result.complete)


def _step_view(ctx: RenderContext, step: Step, here: str,
               links: Links) -> dict[str, Any] | None:
    """One step of an explanation (None: its belief is not published). A belief's step is
    one object on every page that explains through it (queries.explain's memo) and, as
    `ref`'s links (`links`: `_links`), reads alike from pages of one parent folder unless
    it links into the page's own: made once per such folder. Its ids are
    its belief's antecedents and outlist, whose reads the memo notes for every page that
    takes it (render.belief._SeenSteps)."""
    inside, shared, _ = links
    key = ("step view", step.id, shared)
    found = ctx.memo.get(key)
    if found is not None and found[0] is step and inside not in found[2]:
        return found[1]
    target = ref(ctx, step.id, here, links)
    if target is None:
        return None
    causes = [{"number": s.index + 1, "type": s.type, "valid": s.valid,
               "failed": refs(ctx, s.failed, here, links), "missing": refs(ctx, s.missing, here, links),
               "violated": refs(ctx, s.violated, here, links)} for s in step.justifications]
    view = {**target, "value": step.value, "reason": step.reason, "justifications": causes}
    view["item"] = _step_item(view)
    linked = [ctx.page(r["id"]) for r in (target, *(r for c in causes for name in ("failed", "missing", "violated")
                                                   for r in c[name])) if not r["missing"]]
    if not any(p.startswith(inside) for p in linked):
        ctx.memo[key] = (step, view, _folders_holding(linked, shared))
    return view


def _folders_holding(pages: list[str], shared: str | None) -> frozenset[str]:
    """The folders (with their "/"), one level below `shared`, that hold one of `pages` (a
    page's own folder included): the pages in them would link to it otherwise (a set:
    every later page of the parent asks whether its folder is one)."""
    if shared is None:  # pages at the root: no folder holds a page ("" + "/" starts none)
        return frozenset()
    top = f"{shared}/" if shared else ""  # "": the page's folder is at the root
    return frozenset(f"{top}{rest.partition('/')[0]}/" for p in pages
                     if p.startswith(top) and "/" in (rest := p[len(top):]))


_BECAUSE = (("failed", "OUT antecedents: "), ("missing", "missing antecedents: "),
            ("violated", "IN outlist members: "))


def _step_item(step: dict[str, Any]) -> Markup:
    """The step as the default theme's explanation lists it (`{{ step.item }}` in belief.html;
    the parts stay in the view for themes): made with the view, once per step and folder,
    not by the template on every page that explains through it (a third of a belief page's
    template time at 10,000 beliefs)."""
    parts = [f"  <li>{step['html']}: {escaped(step['reason'])}\n"]
    for j in step["justifications"]:
        if j["failed"] or j["missing"] or j["violated"]:
            parts.append(f'    <div class="because">justification {j["number"]} ({escaped(j["type"])}):\n')
            parts.extend(words + "".join(f"{r['html']} " for r in j[name]) for name, words in _BECAUSE if j[name])
            parts.append("    </div>\n")
    parts.append("  </li>")
    return Markup("".join(parts))


def premises(ctx: RenderContext, belief_id: str, here: str) -> dict:
    """The premises a belief rests on (trace)."""
    result = ctx.panels_of(belief_id).trace
    return bounded(refs(ctx, result.items, here), ctx.config.panel_max_items, result.count, result.complete)


def impacted(ctx: RenderContext, belief_id: str, here: str) -> dict:
    """What changes if this belief flips."""
    result = ctx.panels_of(belief_id).impact
    links = _links(ctx, here)
    rows = [{**r, "new": new} for i, new in result.items if (r := ref(ctx, i, here, links))]
    return bounded(rows, ctx.config.panel_max_items, result.count, result.complete)


def challenges(ctx: RenderContext, belief: Belief, here: str) -> list[dict]:
    """Challenges (metadata.challenges) and the defences of each (spec §1.3)."""
    listed = belief.metadata.get("challenges", [])
    out = []
    for challenge_id in listed if isinstance(listed, list) else []:
        target = ref(ctx, str(challenge_id), here)
        if not target:
            continue
        challenge = ctx.beliefs.get(str(challenge_id))
        defences = challenge.metadata.get("challenges", []) if challenge else []
        out.append({**target, "defences": refs(ctx, defences if isinstance(defences, list) else [], here)})
    return out


def embeds(ctx: RenderContext, belief_id: str, here: str) -> dict[str, str]:
    """Markdown, HTML and reStructuredText snippets embedding the badge and link."""
    site = ctx.config.site_url
    page_dir, badge = urls.belief_dir(belief_id, ctx.config.prefix), urls.badge_path(belief_id, ctx.config.prefix)
    page_url = urls.site_url_for(site, page_dir) if site else ctx.href(here, ctx.page(belief_id))
    badge_url = urls.site_url_for(site, badge) if site else ctx.href(here, badge)
    alt = f"belief {belief_id}"
    return {
        "Markdown": f"[![{alt}]({badge_url})]({page_url})",
        "HTML": f'<a href="{page_url}"><img src="{badge_url}" alt="{alt}"></a>',
        "reStructuredText": f".. image:: {badge_url}\n   :target: {page_url}\n   :alt: {alt}",
    }


def edit_link(ctx: RenderContext, belief_id: str) -> str | None:
    """"Edit this belief" URL from repo_url + edit_uri, for documents sources only."""
    config, path = ctx.config, ctx.documents.get(belief_id)
    if not (config.edit_links and config.repo_url and path):
        return None
    edit_uri = config.edit_uri
    if edit_uri is None and any(h in config.repo_url for h in ("github.com", "gitlab.com")):
        edit_uri = "edit/main/"
    if not edit_uri:
        return None
    # MkDocs' edit_uri points at docs_dir (`edit/main/docs/`); belief documents live beside
    # it, so the part naming docs_dir is dropped and the path from mkdocs.yml's folder used.
    edit_uri = edit_uri.strip("/")
    docs = config.docs_dir.strip("/")
    if docs and docs != "." and (edit_uri == docs or edit_uri.endswith("/" + docs)):
        edit_uri = edit_uri[: -len(docs)].rstrip("/")
    # Percent-encoded as bytes: a folder name that is not UTF-8 keeps its bytes, never a traceback.
    path = quote(path, safe="/", errors="surrogateescape")
    url = "/".join(part for part in (config.repo_url.rstrip("/"), edit_uri, path) if part)
    return url if safe_url(url) else None


def belief_page(ctx: RenderContext, belief: Belief, here: str) -> dict[str, Any]:
    """Everything the belief page shows (DESIGN "Pages")."""
    ev = ctx.evaluation
    status = ev.value(belief.id)
    stated = belief.declared if (not belief.is_premise and belief.declared != status) else None
    return {
        "id": belief.id, "status": status, "stated": stated, "kind": kind_of(belief),
        "depth": ev.depth[belief.id], "pinned": ev.is_pinned(belief.id),
        "retract_reason": belief.reason_out,
        "claim": Markup(render_block(belief.text)), "summary": Markup(render_block(belief.summary)) if belief.summary else None,
        "dates": [(w, getattr(belief, f)) for w, f in _DATES if getattr(belief, f)],
        "source": belief.source, "source_url": belief.source_url if safe_source_url(belief.source_url) else None,
        "justifications": justifications(ctx, belief, here),
        "dependents": dependents(ctx, belief, here),
        "explain": explanation(ctx, belief.id, here), "trace": premises(ctx, belief.id, here),
        "impact": impacted(ctx, belief.id, here), "flip": "retracted" if status == IN else "asserted",
        "challenges": challenges(ctx, belief, here), "embeds": embeds(ctx, belief.id, here),
        "edit": edit_link(ctx, belief.id), "embed_absolute": bool(ctx.config.site_url), "diagram": Markup(ctx.diagrams.get(belief.id, "")),
        "json": "index.json", "badge": "badge.svg",
        "changes": ctx.marks.get(belief.id, ()),
        "changes_href": ctx.href(here, "changes/index.html") if ctx.diff is not None else None,
    }


_DATES = (("Created", "created_at"), ("Updated", "updated_at"), ("Reviewed", "reviewed_at"),
          ("Verified", "verified_at"), ("Retracted", "retracted_at"))
