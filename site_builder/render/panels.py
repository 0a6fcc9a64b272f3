"""The bounded per-belief panels (explain, trace, impact), computed once per build.

Both the belief pages and their `index.json` show them, so they are computed here, once
for each visible belief, with unpublished beliefs removed (DESIGN "partial publishing"):
explain never walks through a hidden belief, and counts cover visible beliefs only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..evaluate import Evaluation
from ..evaluate.queries import Bounded, Step, explain, impact, trace


@dataclass(frozen=True, slots=True)
class Panels:
    """What a belief page says about why, on what, and what if."""

    explain: Bounded[Step]
    trace: Bounded[str]
    impact: Bounded[tuple[str, str]]


def panels_for(ev: Evaluation, belief_id: str, limit: int, visible: Callable[[str], bool],
               steps_of: dict | None = None) -> Panels:
    """The three panels of one belief, hidden beliefs removed (`steps_of`: queries.explain's
    memo, shared by the calls of one build on one evaluation)."""
    premises = trace(ev, belief_id)
    shown = tuple(p for p in premises.items if visible(p))
    flipped = impact(ev, belief_id, limit)
    changed = tuple(item for item in flipped.items if visible(item[0]))
    return Panels(
        explain(ev, belief_id, limit, visible, steps_of),
        Bounded(shown[:limit], len(shown), premises.complete),
        Bounded(changed, len(changed), flipped.complete))


def compute_panels(ev: Evaluation, ids, limit: int, visible: Callable[[str], bool]) -> dict[str, Panels]:
    """Panels of every given belief (bounded work each: linear over the network)."""
    steps_of: dict = {}
    return {belief_id: panels_for(ev, belief_id, limit, visible, steps_of) for belief_id in ids}
