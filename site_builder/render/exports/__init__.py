"""Machine-readable exports (DESIGN "URLs", "cross-references", "partial publishing").

`beliefs.json` + `beliefs.schema.json`, `belief/<id>/index.json`, `objects.inv`,
`sitemap.xml` + `robots.txt` (with `site_url` only) and `llms.txt`. Every export lists
visible beliefs only, sorted by id, and never names a hidden belief (see `records`).
"""

from __future__ import annotations

from typing import Iterator

from .. import OutputFile, RenderContext
from . import inventory, json_exports, llms, sitemap

__all__ = ["PARTS", "emit"]

PARTS = (json_exports.emit, inventory.emit, sitemap.emit, llms.emit)
"""One emitter per export (separate tasks for the worker pool: they take 0.1-0.2 s each at 10k)."""


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """Every export file of the site."""
    for part in PARTS:
        yield from part(ctx)
