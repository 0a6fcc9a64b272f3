"""Rows of the site's own files kept from the last build: listing rows and export records.

After a claim edit, the index and `beliefs.json` differ from the last build's by one row
each, yet rendering all of them took most of an incremental build's worker time. An emitter
takes its part's memo (`memo(ctx, "index_row")`), asks it for each belief's row (`row(id, make)`)
and says when it is `done`. With a build cache (cache.Rows), a row is taken from the last
build when the content of its belief, and of the other beliefs it shows, is the one it was
made from; the rows' salt covers everything else a row may show (every status, structure,
visibility, configuration, templates, code: cache.Cache.rows_salt), so a changed salt keeps
no row.
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

from . import RenderContext

__all__ = ["Memo", "memo"]


class Memo(Protocol):
    def row(self, belief_id: str, make: Callable[[], str], shows: Iterable[str] = (),
            own: bool = True) -> str:
        """The belief's row: kept from the last build, or made now; `shows`: the other beliefs
        whose content the row shows (an OUT belief's causes, with their claims); `own=False`:
        the row shows nothing of the belief's content (its place in the explorer)."""

    def done(self) -> None:
        """Every row of the part was asked for: keep them for the next build."""


class _Fresh:
    """No cache: every row is made."""

    def row(self, belief_id: str, make: Callable[[], str], shows: Iterable[str] = (),
            own: bool = True) -> str:
        return make()

    def done(self) -> None:
        pass


def memo(ctx: RenderContext, part: str) -> Memo:
    """The memo of one part of the site's files (a fresh one without a build cache)."""
    return _Fresh() if ctx.rows is None else ctx.rows.part(part)
