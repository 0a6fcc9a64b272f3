"""A NetworkDiff as GitHub-flavoured Markdown for a pull-request comment or a job summary.

Counts first, every list in a collapsed `<details>`. Claims are untrusted: HTML and
Markdown syntax are escaped, and `@`/`#` get a zero-width space so a claim can neither
mention a user nor link an issue. GitHub refuses comments over 65,536 characters, so the
lists shrink until the whole text fits in MAX_BYTES of UTF-8 (bytes, not characters: the
comment workflow may then cut an untrusted artifact by bytes without touching ours).
"""

from __future__ import annotations

import re
from html import escape

from ..diagnostics import UNSHOWABLE, counted
from .records import Edited, Flip, NetworkDiff
from .textdiff import words

__all__ = ["markdown", "MAX_BYTES"]

MAX_BYTES = 60_000
_SPECIAL = re.compile(r"([\\`*_{}\[\]()+\-.!|~>])")
_GH_REFERENCE = re.compile(r"\b(GH)(?=\\?-\d)", re.IGNORECASE)
CONTEXT = 30
"""Characters of unchanged text kept on each side of an edit of a claim or summary."""
SHOWN_EDITS = 3
"""Edits of one claim or summary the comment shows (the changes page shows them all)."""


def text(value: str, limit: int = 120) -> str:
    """Untrusted text, one line, as inert Markdown."""
    value = " ".join(value.split())
    if len(value) > limit:
        value = value[: limit - 1].rstrip() + "\u2026"
    return _inert(value)


def _inert(value: str) -> str:
    value = _SPECIAL.sub(r"\\\1", escape(UNSHOWABLE.sub("\ufffd", value), quote=False))
    value = value.replace("@", "@\u200b").replace("#", "#\u200b")
    return _GH_REFERENCE.sub("\\1\u200b", value)  # GH-12 links (and cross-references) issue 12 as #12 does


def _reworded(before: str, after: str) -> str:
    """What an edit of prose changed, on one line: the removed and added words with a
    little of the text around them (GitHub shows <del> struck through, <ins> underlined)."""
    segments = words(" ".join(before.split()), " ".join(after.split()))
    edits, cut = 0, len(segments)
    for k, (kind, _) in enumerate(segments):
        if kind != "same" and (k == 0 or segments[k - 1][0] == "same"):
            edits += 1
            if edits > SHOWN_EDITS:
                cut = k
                break
    if edits == 0:
        return "whitespace only"
    out = []
    for k, (kind, value) in enumerate(segments[:cut]):
        if kind != "same":
            out.append(f"<{kind}>{_inert(_cut(value, 200, 0))}</{kind}>")
        else:  # the text before the first edit, between two, and after the last shown
            out.append(_inert(_cut(value, CONTEXT if k else 0, CONTEXT if k < cut - 1 else 0)))
    more = " \u2026 (more on the changes page)" if cut < len(segments) else ""
    return ("".join(out).rstrip() + more) if more else "".join(out)


def _cut(value: str, head: int, tail: int) -> str:
    """At most `head` characters of the start of `value` and `tail` of its end, in whole
    words, an ellipsis between."""
    if len(value) <= head + tail:
        return value
    start = value[:head]
    if head and not value[head].isspace() and " " in start:
        start = start.rsplit(" ", 1)[0] + " "
    end = value[len(value) - tail:] if tail else ""
    if end and not value[len(value) - tail - 1].isspace() and " " in end:
        end = end[end.index(" "):]
    return start + "\u2026" + end


def _edited(e: Edited, ref: "_Ids") -> str:
    """An edited belief: its changed fields, a claim or summary with what changed."""
    fields = [f"{c.field} ({_reworded(c.before or '', c.after or '')})" if c.field in ("claim", "summary")
              else c.field for c in e.changes]
    return f"- {ref(e.id)}: {'; '.join(fields)}"


class _Ids:
    """Ids as code spans, linked to their pages when the site's URL is known."""

    def __init__(self, site_url: str | None, prefix: str, gone: frozenset[str] = frozenset()) -> None:
        self.base = f"{site_url.rstrip('/')}/{prefix}/" if site_url else None
        self.gone = gone
        """Ids the head site has no page for (removed, renamed without alias): never linked."""

    def __call__(self, belief_id: str, link: bool = True) -> str:
        # Ids match the spec §3.1 grammar ([a-z0-9.-] and ':'): safe inside a code span.
        code = f"`{belief_id}`"
        if not (link and self.base) or belief_id in self.gone:
            return code
        return f"[{code}]({self.base}{belief_id.replace(':', '/')}/)"


def _path(flip: Flip, ref: _Ids) -> str:
    parts = [ref(i) for i in flip.path]
    if flip.elided:
        parts[1:1] = [f"\u2026 ({flip.elided} more)"]
    return " \u2192 ".join(parts)


def _causes(flip: Flip, ref: _Ids, shown: int = 5) -> str:
    if not flip.causes:
        return "(unknown)"
    listed = ", ".join(ref(c) for c in flip.causes[:shown])
    extra = len(flip.causes) - shown
    if extra > 0 or not flip.causes_complete:
        listed += f" and {max(extra, 0)}{'' if flip.causes_complete else '+'} more"
    return listed


def _details(title: str, count: int, lines: list[str], cap: int, table_head: str = "") -> list[str]:
    if not count:
        return []
    body = lines[:cap]
    if len(lines) > cap:
        body.append(f"\n\u2026 and {len(lines) - cap} more (see the JSON form or the changes page)")
    head = [table_head, "|---" * (table_head.count("|") - 1) + "|"] if table_head else []
    return ["", f"<details><summary>{title} ({count})</summary>", "", *head, *body, "",
            "</details>"]


def _sections(diff: NetworkDiff, ref: _Ids, cap: int) -> list[str]:
    flips = [f"| {ref(f.id)} | {f.before} \u2192 {f.after} | {_causes(f, ref)} | {_path(f, ref)} |"
             for f in diff.flips]
    added = [f"- {ref(e.id)} ({e.status}): {text(e.claim)}" for e in diff.added]
    removed = [f"- {ref(e.id, link=False)} (was {e.status}): {text(e.claim)}" for e in diff.removed]
    renamed = [f"- {ref(r.source, link=False)} \u2192 {ref(r.target)} "
               + ("(alias kept)" if r.via == "alias" else "(**no alias**: old links break)")
               + (f"; also edited: {', '.join(r.fields)}" if r.changes else "") for r in diff.renamed]
    edited = [_edited(e, ref) for e in diff.edited]
    return [*_details("Status flips", len(flips), flips, cap, "| Belief | Status | Cause | Path |"),
            *_details("Added", len(added), added, cap),
            *_details("Removed", len(removed), removed, cap),
            *_details("Renamed", len(renamed), renamed, cap),
            *_details("Edited", len(edited), edited, cap)]


def _headline(diff: NetworkDiff) -> list[str]:
    c = diff.counts()
    return ["### Belief changes", "",
            f"**{c['flips']} status flips** ({c['in_to_out']} IN\u2192OUT, "
            f"{c['out_to_in']} OUT\u2192IN) \u00b7 {c['added']} added \u00b7 {c['removed']} "
            f"removed \u00b7 {c['edited']} edited \u00b7 {c['renamed']} renamed", "",
            f"<sub>base {text(diff.base, 200)} \u2192 head {text(diff.head, 200)}</sub>", *_errors(diff)]


def _errors(diff: NetworkDiff) -> list[str]:
    """A warning when a side has errors: what they left out shows as removed or added."""
    sides = [f"{'the base' if k == 0 else 'the head'} has {counted(n, 'error')}"
             for k, n in enumerate(diff.errors) if n]
    if not sides:
        return []
    return ["", f"**Warning:** {' and '.join(sides)}: beliefs that could not be read are missing from "
                "this comparison, so some may show as removed or added (run `belief-site check`)."]


def markdown(diff: NetworkDiff, site_url: str | None = None, prefix: str = "belief") -> str:
    """The whole summary, at most MAX_BYTES long in UTF-8."""
    gone = frozenset(e.id for e in diff.removed) | {r.source for r in diff.renamed if r.via != "alias"}
    ref = _Ids(site_url, prefix, gone)
    head = _headline(diff)
    if diff.is_empty:
        return "\n".join(head + ["", "No belief changed."]) + "\n"
    cap = 200
    while True:
        out = "\n".join(head + _sections(diff, ref, cap)) + "\n"
        if len(out.encode("utf-8")) <= MAX_BYTES or cap <= 1:
            return out
        cap //= 2
