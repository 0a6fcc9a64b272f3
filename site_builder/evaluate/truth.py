"""Truth values per spec §1.7 and §3.4: SCC condensation, topological evaluation.

Shared by the whole-network evaluation and by `impact`, which re-evaluates a few
components with one belief's value flipped.
"""

from __future__ import annotations

from collections import deque
from typing import Callable, Iterable, Mapping

from ..model import IN, OUT, Belief, Justification

Lookup = Callable[[str], str]


def is_retracted(belief: Belief) -> bool:
    """Pinned OUT by an explicit marker (spec §3.4); premises OUT are retracted too."""
    if belief.declared != OUT:
        return False
    if belief.is_premise or belief.retracted:
        return True
    return bool(belief.retract_reason) or bool(belief.retracted_at)


def external_value(tag: str | None, role: str) -> str:
    """Assumed value of an id outside the network (§1.7.1): its tag, else the library rule."""
    if tag in (IN, OUT):
        return tag
    return OUT  # antecedent unmet; outlist member does not block


def justification_valid(belief_id: str, j: Justification, value: Lookup,
                        known: Mapping[str, Belief]) -> bool:
    """SL/CP validity (§1.2): antecedents IN, outlist OUT; self-antecedents ignored."""
    if j.type not in ("SL", "CP") or belief_id in j.outlist:
        return False
    for k, a in enumerate(j.antecedents):
        if a == belief_id:
            continue  # W403: dropped from evaluation
        v = value(a) if a in known else external_value(_tag(j.ante_tags, k), "antecedent")
        if v != IN:
            return False
    for k, o in enumerate(j.outlist):
        v = value(o) if o in known else external_value(_tag(j.out_tags, k), "outlist")
        if v == IN:
            return False
    return True


def _tag(tags: tuple, k: int) -> str | None:
    return tags[k] if k < len(tags) else None


def supporting(belief: Belief, value: Lookup, known: Mapping[str, Belief]) -> int | None:
    """Index of the highest-index valid justification (§1.7.4), or None."""
    for index in range(len(belief.justifications) - 1, -1, -1):
        if justification_valid(belief.id, belief.justifications[index], value, known):
            return index
    return None


def evaluate_component(members: list[str], beliefs: Mapping[str, Belief], value: Lookup,
                       pinned: Callable[[str], bool], has_outlist_edge: bool) -> dict[str, str]:
    """Values for one strongly connected component, given values outside it."""
    if len(members) == 1 and not has_outlist_edge:
        return {members[0]: _single(beliefs[members[0]], value, beliefs, pinned)}
    if has_outlist_edge:
        # W406: no stable answer in general; members keep their declared values.
        return {m: OUT if pinned(m) else beliefs[m].declared for m in members}
    return _least_fixpoint(members, beliefs, value, pinned)


def _single(belief: Belief, value: Lookup, beliefs: Mapping[str, Belief],
            pinned: Callable[[str], bool]) -> str:
    if belief.is_premise:
        return belief.declared
    if pinned(belief.id):
        return OUT
    return IN if supporting(belief, value, beliefs) is not None else OUT


def _least_fixpoint(members: list[str], beliefs: Mapping[str, Belief], value: Lookup,
                    pinned: Callable[[str], bool]) -> dict[str, str]:
    """Positive cycle: start from OUT, derive what is supported (Dowling–Gallier, linear)."""
    inside = set(members)
    result = {m: OUT for m in members}
    missing: dict[tuple[str, int], int] = {}
    waiting: dict[str, list[tuple[str, int]]] = {}
    ready: deque[str] = deque()
    for m in members:
        if pinned(m):
            continue
        for index, j in enumerate(beliefs[m].justifications):
            inner = {a for a in j.antecedents if a in inside and a != m}
            outer_ok = justification_valid(
                m, _without(j, inner | {m}), value, beliefs)
            if not outer_ok:
                continue
            missing[(m, index)] = len(inner)
            for a in inner:
                waiting.setdefault(a, []).append((m, index))
            if not inner:
                ready.append(m)
    while ready:
        m = ready.popleft()
        if result[m] == IN:
            continue
        result[m] = IN
        for key in waiting.get(m, ()):
            missing[key] -= 1
            if missing[key] == 0:
                ready.append(key[0])
    return result


def _without(j: Justification, drop: set[str]) -> Justification:
    """The justification with some antecedents removed (their tags kept aligned)."""
    keep = [k for k, a in enumerate(j.antecedents) if a not in drop]
    return Justification(j.type, tuple(j.antecedents[k] for k in keep), j.outlist, j.label,
                         ante_tags=tuple(_tag(j.ante_tags, k) for k in keep), out_tags=j.out_tags)


def references(belief: Belief) -> Iterable[tuple[str, int, str]]:
    """(id, justification index, role) for every reference, self-references excluded."""
    for index, j in enumerate(belief.justifications):
        for a in j.antecedents:
            if a != belief.id:
                yield a, index, "antecedent"
        for o in j.outlist:
            if o != belief.id:
                yield o, index, "outlist"
