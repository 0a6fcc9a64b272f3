"""A NetworkDiff as text (terminals), JSON (tools) or Markdown (pull requests): `render`."""

from __future__ import annotations

import json

from ..diagnostics import counted, short
from .markdown import markdown
from .records import FieldChange, Flip, NetworkDiff, to_json

__all__ = ["FORMATS", "render", "summary_line"]

FORMATS = ("text", "markdown", "json")


def summary_line(diff: NetworkDiff) -> str:
    """One line of counts, the same in every format."""
    c = diff.counts()
    return (f"{c['flips']} status flips ({c['in_to_out']} IN->OUT, {c['out_to_in']} OUT->IN), "
            f"{c['added']} added, {c['removed']} removed, {c['edited']} edited, "
            f"{c['renamed']} renamed")


def _short(text: str, limit: int = 100) -> str:
    return short(" ".join(text.split()), limit)


def _path(flip: Flip) -> str:
    ids = list(flip.path)
    if flip.elided:
        ids[1:1] = [f"... ({flip.elided} more)"]
    return " -> ".join(ids)


def _fields(changes: tuple[FieldChange, ...]) -> str:
    return ", ".join(c.field for c in changes)


def _text_flips(diff: NetworkDiff) -> list[str]:
    lines = []
    for flip in diff.flips:
        cause = ", ".join(flip.causes) or "(unknown)"
        more = "" if flip.causes_complete or not flip.causes else ", ..."
        lines.append(f"  {flip.before} -> {flip.after}  {flip.id}")
        lines.append(f"      cause: {cause}{more}; path: {_path(flip)}")
    return lines


def text(diff: NetworkDiff) -> str:
    """Plain text for a terminal: counts first, then one section per kind of change."""
    out = [f"{diff.base} .. {diff.head}: {summary_line(diff)}"]
    for side, count in zip((diff.base, diff.head), diff.errors):
        if count:
            out.append(f"warning: {side} has {counted(count, 'error')}: beliefs that could "
                       "not be read are missing from this comparison")
    if diff.is_empty:
        return "\n".join(out) + "\nno belief changed\n"
    sections = [
        ("Status flips", _text_flips(diff)),
        ("Added", [f"  + {e.id} [{e.status}] {_short(e.claim)}" for e in diff.added]),
        ("Removed", [f"  - {e.id} [{e.status}] {_short(e.claim)}" for e in diff.removed]),
        ("Renamed", [f"  {r.source} -> {r.target} (by {r.via})"
                     + (f"; also edited: {_fields(r.changes)}" if r.changes else "")
                     for r in diff.renamed]),
        ("Edited", [f"  ~ {e.id}: {_fields(e.changes)}" for e in diff.edited]),
    ]
    for title, lines in sections:
        if lines:
            out += ["", f"{title} ({len(lines) if title != 'Status flips' else len(diff.flips)}):",
                    *lines]
    return "\n".join(out) + "\n"


def render(diff: NetworkDiff, fmt: str = "text", site_url: str | None = None,
           prefix: str = "belief") -> str:
    """The diff in one of FORMATS; `site_url` turns ids into links in Markdown."""
    if fmt == "json":
        return json.dumps(to_json(diff), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return markdown(diff, site_url, prefix)
    return text(diff)
