"""Per-belief questions with bounded work: explain (why IN/OUT), trace, impact (§1.6, DESIGN).

Each answer holds at most `limit` entries plus the exact count, or `complete=False`
when the bounded search stopped ("N+"), so answering for every belief stays linear.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Callable, Generic, TypeVar

from ..model import IN, OUT
from . import Evaluation
from .truth import evaluate_component, justification_valid

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Bounded(Generic[T]):
    """At most `limit` items; `count` is exact when `complete`, a lower bound otherwise."""

    items: tuple[T, ...]
    count: int
    complete: bool

    @property
    def shown_count(self) -> str:
        """`12`, or `100+` when the search stopped."""
        return str(self.count) if self.complete else f"{self.count}+"


@dataclass(frozen=True, slots=True)
class JustificationState:
    """One justification of an explained belief, under the computed values."""

    index: int
    type: str
    label: str
    valid: bool
    antecedents: tuple[str, ...]
    outlist: tuple[str, ...]
    failed: tuple[str, ...]
    """Antecedents that are OUT."""
    missing: tuple[str, ...]
    """Antecedents not in the network (and not assumed IN)."""
    violated: tuple[str, ...]
    """Outlist members that are IN."""


@dataclass(frozen=True, slots=True)
class Step:
    """Why one belief has its value."""

    id: str
    value: str
    reason: str
    justifications: tuple[JustificationState, ...] = ()


def _state(ev: Evaluation, belief_id: str, index: int) -> JustificationState:
    beliefs = ev.network.beliefs
    belief = beliefs[belief_id]
    j = belief.justifications[index]
    valid = justification_valid(belief_id, j, ev.value, beliefs)
    ante = tuple(a for a in j.antecedents if a != belief_id)
    return JustificationState(
        index, j.type, j.label, valid, ante, j.outlist,
        tuple(a for a in ante if a in beliefs and ev.value(a) == OUT),
        tuple(a for k, a in enumerate(j.antecedents) if a not in beliefs and not (
            k < len(j.ante_tags) and j.ante_tags[k] == IN)),
        tuple(o for o in j.outlist if (o in beliefs and ev.value(o) == IN) or o == belief_id))


def explain_step(ev: Evaluation, belief_id: str) -> tuple[Step, tuple[str, ...]]:
    """The step for one belief and the beliefs to explain next. It reads the state of the
    belief and of the beliefs its justifications cite, nothing else: render.belief notes
    those reads when a step comes from explain's memo (keep them in step)."""
    belief = ev.network.beliefs[belief_id]
    value = ev.value(belief_id)
    reason_text = belief.reason_out
    if belief.is_premise:
        reason = "premise" if value == IN else "retracted premise"
        return Step(belief_id, value, reason + (f": {reason_text}" if value == OUT and reason_text else "")), ()
    states = tuple(_state(ev, belief_id, i) for i in range(len(belief.justifications)))
    if ev.is_pinned(belief_id):
        return Step(belief_id, value, "retracted" + (f": {reason_text}" if reason_text else ""), states), ()
    if ev.component.get(belief_id) in ev.outlist_cycle:
        return Step(belief_id, value, "declared value kept (cycle through an outlist)", states), ()
    if value == IN:
        chosen = states[ev.supporting[belief_id]] if ev.supporting[belief_id] is not None else None
        if chosen is None:
            return Step(belief_id, value, "IN", states), ()
        step = Step(belief_id, value, f"{chosen.type} justification {chosen.index + 1} valid", (chosen,))
        return step, tuple(a for a in chosen.antecedents if a in ev.network.beliefs)
    causes = tuple(dict.fromkeys(a for s in states for a in s.failed + s.violated))
    reason = "no justification valid" if states else "OUT"
    return Step(belief_id, value, reason, states), causes


def explain(ev: Evaluation, belief_id: str, limit: int | None = None,
            visible: Callable[[str], bool] = lambda _: True,
            steps_of: dict[str, tuple[Step, tuple[str, ...]]] | None = None) -> Bounded[Step]:
    """Depth-first explanation, each belief once, at most `limit` steps (iterative).

    `visible` keeps the walk away from beliefs a partial site does not publish. `steps_of`
    keeps each belief's `explain_step` for later calls on the same evaluation: explanations
    of deep beliefs repeat their ancestors' steps (15 per belief on a generated 10k network).
    """
    steps_of = {} if steps_of is None else steps_of
    limit = ev.limit if limit is None else limit
    steps: list[Step] = []
    visited = {belief_id}
    stack = [iter((belief_id,))]
    while stack:
        nxt = next(stack[-1], None)
        if nxt is None:
            stack.pop()
            continue
        if len(steps) == limit:
            return Bounded(tuple(steps), limit, False)
        found = steps_of.get(nxt)
        if found is None:
            found = steps_of[nxt] = explain_step(ev, nxt)
        step, children = found
        steps.append(step)
        fresh = [c for c in children if c not in visited and visible(c)]
        visited.update(fresh)
        stack.append(iter(fresh))
    return Bounded(tuple(steps), len(steps), True)


def trace(ev: Evaluation, belief_id: str, limit: int | None = None) -> Bounded[str]:
    """Premises the belief rests on (precomputed, capped at the evaluation's limit)."""
    limit = ev.limit if limit is None else min(limit, ev.limit)
    premises = ev.trace[belief_id]
    complete = len(premises) <= ev.limit
    shown = premises[:limit]
    return Bounded(shown, len(premises) if complete else ev.limit, complete)


def impact(ev: Evaluation, belief_id: str, limit: int | None = None,
           budget: int | None = None) -> Bounded[tuple[str, str]]:
    """Beliefs whose value changes if `belief_id` flips (retracted if IN, asserted if OUT).

    Components are re-evaluated in topological order from the flipped belief, so each is
    computed once with final inputs; work stops after `budget` steps ("N+").
    """
    limit = ev.limit if limit is None else limit
    budget = max(1000, 20 * limit) if budget is None else budget
    beliefs = ev.network.beliefs
    overlay = {belief_id: OUT if ev.value(belief_id) == IN else IN}
    value = lambda b: overlay.get(b, ev.status.get(b, OUT))  # noqa: E731
    pinned = lambda b: b != belief_id and ev.is_pinned(b)  # noqa: E731
    heap: list[tuple[int, str]] = []
    queued: set[int] = {ev.component[belief_id]}
    changed: list[tuple[str, str]] = []
    work = 0

    def push_dependents(source: str, free: bool = False) -> bool:
        nonlocal work
        for dep in ev.dependents[source]:
            position = ev.component[dep.id]
            if position not in queued:
                work += 0 if free else 1
                if work > budget:
                    return False
                queued.add(position)
                heapq.heappush(heap, (position, dep.id))
        return True

    # The flipped belief's own dependents are its degree: linear over all beliefs.
    complete = push_dependents(belief_id, free=True)
    while heap and complete:
        position, first = heapq.heappop(heap)
        work += 1
        group = list(ev.members.get(position, (first,)))
        values = evaluate_component(group, beliefs, value, pinned, position in ev.outlist_cycle)
        for member in group:
            if values[member] != ev.value(member):
                overlay[member] = values[member]
                changed.append((member, values[member]))
                complete = push_dependents(member) and complete
        complete = complete and len(changed) <= limit and work <= budget
    changed.sort()
    if complete:
        return Bounded(tuple(changed), len(changed), True)
    return Bounded(tuple(changed[:limit]), min(len(changed), limit), False)
