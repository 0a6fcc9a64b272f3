"""Rows of the site's own files kept from the last build: listing rows and export records.

After a claim edit, the index and `beliefs.json` differ from the last build's by one row
each, yet rendering all of them took most of an incremental build's worker time. An emitter
takes its part's memo (`memo(ctx, "index_row")`), asks it for each belief's row (`row(id, make)`)
and says when it is `done`. With a build cache (cache.Rows), a row is taken from the last
build when the content and state (status, pin, support: cache.state) of its belief, and of
the other beliefs it shows (`shows`) and the states it computes from (`states`), are the
ones it was made from; the cache's salt covers everything else a row may show (structure,
depth and traces, visibility, configuration, templates, code: cache.salt), so a changed
salt keeps no row. A row that reads another belief's status must name it in `shows` or
`states`: a flip keeps every other row. An export that joins a row of every published
belief asks for them all at once (`joined`): after a claim edit, the last build's text is
taken whole but where a row is made again, with no step per kept row (the four exports'
rows took 0.1 s of a 10k claim edit's worker time one by one).
"""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

from ..model import Belief
from . import RenderContext

__all__ = ["Memo", "cited", "memo", "structural"]


class Memo(Protocol):
    def row(self, belief_id: str, make: Callable[[], str], shows: Iterable[str] = (),
            own: bool = True, states: Iterable[str] = ()) -> str:
        """The belief's row: kept from the last build, or made now; `shows`: the other beliefs
        whose content the row shows (an OUT belief's causes, with their claims); `states`:
        those whose state alone it computes from (`cited`: a justification's validity);
        `own=False`: the row shows nothing of the belief's content or state (its place in
        the explorer)."""

    def joined(self, belief_ids: list[str], make: Callable[[int], str], sep: str,
               states: list[tuple[str, ...]] | None = None, shows: list[tuple[str, ...]] | None = None) -> bytes:
        """`sep.join` of the rows of all the part's beliefs, in order, as UTF-8 (a lone
        surrogate passed through), each keyed on its own belief, (`shows[k]`) the other
        beliefs it shows and (`states[k]`) those whose states it computes from; `make(k)`
        makes the k-th. After a claim edit the last build's text is taken whole but for the
        rows to make again."""

    def done(self) -> None:
        """Every row of the part was asked for: keep them for the next build."""


class _Fresh:
    """No cache: every row is made."""

    def row(self, belief_id: str, make: Callable[[], str], shows: Iterable[str] = (),
            own: bool = True, states: Iterable[str] = ()) -> str:
        return make()

    def joined(self, belief_ids: list[str], make: Callable[[int], str], sep: str,
               states: list[tuple[str, ...]] | None = None, shows: list[tuple[str, ...]] | None = None) -> bytes:
        return sep.join([make(k) for k in range(len(belief_ids))]).encode("utf-8", "surrogatepass")

    def done(self) -> None:
        pass


def cited(belief: Belief) -> tuple[str, ...]:
    """The beliefs its justifications cite: their states decide its explanation (an OUT
    belief's causes) and which of its justifications are valid."""
    justifications = belief.justifications
    if not justifications:  # a premise: most beliefs
        return ()
    if len(justifications) == 1:
        ids = (*justifications[0].antecedents, *justifications[0].outlist)
        return ids if len(set(ids)) == len(ids) else tuple(dict.fromkeys(ids))
    return tuple(dict.fromkeys(i for j in justifications for i in (*j.antecedents, *j.outlist)))


def structural(ctx: RenderContext, name: str, make: Callable[[], bytes]) -> bytes:
    """A value that only the network's structure, visibility and configuration decide (the
    premises' ranking, the explorer's edges): what the cache's salt covers, so the last
    build's is taken while the salt is the same (a claim edit or a flip computes none)."""
    return make() if ctx.rows is None else ctx.rows.whole(name, make)


def memo(ctx: RenderContext, part: str) -> Memo:
    """The memo of one part of the site's files (a fresh one without a build cache)."""
    return _Fresh() if ctx.rows is None else ctx.rows.part(part)
