"""Partial publishing (DESIGN "partial publishing", spec §1.3 access_tags).

A belief's tags are its own `metadata.access_tags` unioned over its whole antecedent
closure, recomputed here (never trusted from the input); it is visible when they are all
among the allowed tags. Statuses are still computed on the whole network.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from . import Evaluation


MALFORMED = object()
"""The tag of a belief whose `access_tags` is neither a string nor a list of strings (E507):
no `visible_to` can allow it, so such a belief, and what rests on it, is published to no one."""


def own_tags(belief) -> frozenset | None:
    """Its `metadata.access_tags` (a string is one tag; null is none), or None when malformed."""
    tags = belief.metadata.get("access_tags")
    if tags is None:
        return frozenset()
    if isinstance(tags, str):
        return frozenset((tags,))
    if isinstance(tags, (list, tuple)) and all(isinstance(t, str) for t in tags):
        return frozenset(tags)
    return None


def _own_tags(belief) -> frozenset:
    tags = own_tags(belief)
    return frozenset((MALFORMED,)) if tags is None else tags


def closure_tags(ev: Evaluation, incomplete: bool = False) -> dict[str, frozenset[str]]:
    """id -> access tags unioned over its antecedent closure (linear, in topological order).
    `incomplete`: files of the source were left out (errors), so an antecedent not in the
    network may be one of theirs, whose tags are unknown: it counts as MALFORMED."""
    beliefs = ev.network.beliefs
    groups: dict[int, list[str]] = defaultdict(list)
    for belief_id, position in ev.component.items():
        groups[position].append(belief_id)
    tags: dict[str, frozenset[str]] = {}
    for position in sorted(groups):
        members = groups[position]
        union = set()
        for m in members:
            union |= _own_tags(beliefs[m])
            for j in beliefs[m].justifications:
                for a in j.antecedents:
                    if a in tags:
                        union |= tags[a]
                    elif incomplete and a not in beliefs:
                        union.add(MALFORMED)
        frozen = frozenset(union)
        for m in members:
            tags[m] = frozen
    return tags


def visible_ids(ev: Evaluation, allowed: Iterable[str] | None, incomplete: bool = False) -> frozenset[str]:
    """Ids a site may show: all of them without `visible_to`; `incomplete`: see closure_tags."""
    if allowed is None:
        return frozenset(ev.network.beliefs)
    allowed = frozenset(allowed)
    return frozenset(i for i, t in closure_tags(ev, incomplete).items() if t <= allowed)
