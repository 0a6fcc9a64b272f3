"""`objects.inv`: a Sphinx inventory v2 with one `std:label` per visible belief (DESIGN
"cross-references"; background/tech-due-diligence.md §5).

Intersphinx (``:ref:`beliefs:<id>` ``) and mkdocstrings/autorefs (`[<id>][]`) then link beliefs
by id. Written by hand with zlib: four plain header lines, then a zlib stream of lines
`name domain:role priority uri dispname`. Priority -1 keeps beliefs out of Sphinx's search.
Ids are lower-case by rule (spec §3.1), as Sphinx labels must be. The aliases of renamed
beliefs follow, each at its belief's page.
"""

from __future__ import annotations

import zlib
from typing import Iterator

from ...diff import redirects
from ...model import Belief
from .. import OutputFile, RenderContext
from ..rows import memo
from .records import one_line, page_url

INVENTORY = "objects.inv"
DISPNAME_MAX = 80


def dispname(text: str) -> str:
    """The claim on one line, at most ~80 characters, or `-` ("same as the name")."""
    line = one_line(text)
    if len(line) > DISPNAME_MAX:
        cut = line[:DISPNAME_MAX - 1]
        line = (cut.rsplit(" ", 1)[0] if " " in cut[DISPNAME_MAX // 2:] else cut).rstrip() + "…"
    return line or "-"


def _line(ctx: RenderContext, belief: Belief) -> str:
    return f"{belief.id} std:label -1 {page_url(ctx, belief.id)} {dispname(belief.text)}\n"


def inventory(ctx: RenderContext) -> bytes:
    """The inventory bytes (deterministic: sorted ids, fixed compression level)."""
    project = one_line(ctx.config.site_name) or "Beliefs"
    header = ("# Sphinx inventory version 2\n"
              f"# Project: {project}\n"
              "# Version: \n"
              "# The remainder of this file is compressed using zlib.\n")
    # A uri ending in `$` would be expanded to the name; ours end in `/` or `index.html`.
    kept = memo(ctx, "inventory")  # a line per belief, kept by the build cache (render/rows.py)
    shown = ctx.shown()
    lines = kept.joined([b.id for b in shown], lambda k: _line(ctx, shown[k]), "")
    kept.done()
    # Level 4: 14 ms at 10k beliefs against 34 ms at 6, for a file 11% larger (217 against 195 KB).
    return header.encode("utf-8") + zlib.compress(lines + _aliases(ctx), 4)


def _aliases(ctx: RenderContext) -> bytes:
    """A label per alias (spec §3.3) of a published belief, at its page: a document that
    referenced the old id keeps resolving after a rename, as its old URL does."""
    beliefs = ctx.beliefs
    return "".join(f"{old} std:label -1 {page_url(ctx, new)} {dispname(beliefs[new].text)}\n"
                   for old, new in redirects(ctx.evaluation.network).items()
                   if ctx.is_visible(new)).encode("utf-8", "surrogatepass")


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """objects.inv at the site root."""
    yield OutputFile(INVENTORY, inventory(ctx))
