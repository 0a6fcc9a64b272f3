"""Machine-readable exports (DESIGN "URLs", "cross-references", "partial publishing").

`beliefs.json` + `beliefs.schema.json`, `belief/<id>/index.json`, `objects.inv`,
`sitemap.xml` + `robots.txt` (with `site_url` only) and `llms.txt`. Every export lists
visible beliefs only, sorted by id, and never names a hidden belief (see `records`).
"""

from __future__ import annotations

from typing import Iterator

from .. import OutputFile, RenderContext
from . import inventory, json_exports, llms, sitemap

__all__ = ["emit"]


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """Every export file of the site."""
    for part in (json_exports.emit, inventory.emit, sitemap.emit, llms.emit):
        yield from part(ctx)
