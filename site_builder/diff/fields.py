"""The authoritative fields of a belief (spec §3.3 table), as JSON values to compare.

Derived content (kind, depth, tags, echoes, dependents, the cached value of an unpinned
derived belief) is left out: `fmt` refreshing it is no change. The stated `status` is
authoritative only where §3.4 says so: a premise's value, a retraction, and the declared
value kept inside a cycle through an outlist (W406).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..evaluate import Evaluation
from ..model import IN, OUT, STRING_FIELDS, Belief, Justification
from .records import FieldChange

__all__ = ["FIELD_ORDER", "CAUSAL", "aliases_of", "field_changes", "causal_change"]

#: Output order of changed fields.
FIELD_ORDER = ("claim", "summary", "justifications", "status", *STRING_FIELDS,
               "aliases", "metadata", "extra")


def aliases_of(belief: Belief) -> tuple[str, ...]:
    """Previous ids of the belief (spec §3.3 `aliases`; network.json `metadata.aliases`)."""
    value = belief.metadata.get("aliases") or ()
    if isinstance(value, str):  # a lone string is one alias, not a list of characters
        value = (value,)
    return tuple(a for a in value if isinstance(a, str)) if isinstance(value, (list, tuple)) else ()


def stated_status(belief: Belief, ev: Evaluation) -> str | None:
    """The status the source states with authority, or None when it is computed."""
    if ev.is_pinned(belief.id):
        return OUT
    if belief.is_premise:
        return belief.declared
    if ev.component.get(belief.id) in ev.outlist_cycle:
        return belief.declared
    return None


def _assumed(j: Justification, known) -> dict[str, str]:
    """Tags of ids outside the network: their assumed value is an input (§1.7.1, W401)."""
    pairs = list(zip(j.antecedents, j.ante_tags)) + list(zip(j.outlist, j.out_tags))
    return {ref: tag for ref, tag in pairs if ref not in known and tag in (IN, OUT)}


def _justification(j: Justification, known) -> dict[str, Any]:
    out: dict[str, Any] = {"type": j.type, "antecedents": list(j.antecedents),
                           "outlist": list(j.outlist), "label": j.label}
    assumed = _assumed(j, known)
    if assumed:
        out["assumed"] = assumed
    if j.extra:
        out["extra"] = dict(j.extra)
    return out


def belief_fields(belief: Belief, ev: Evaluation, known) -> dict[str, Any]:
    """Field name -> JSON value, for every field in FIELD_ORDER; `known` holds the ids whose
    item tags are derived content (any id of either side: a tag is only an input for an
    id outside both, else adding that belief would look like an edit of its dependents)."""
    values: dict[str, Any] = {
        "claim": belief.text, "summary": belief.summary,
        "justifications": [_justification(j, known) for j in belief.justifications],
        "status": stated_status(belief, ev),
        "aliases": list(aliases_of(belief)),
        "metadata": {k: v for k, v in belief.metadata.items() if k != "aliases"},
        "extra": dict(belief.extra),
    }
    for name in STRING_FIELDS:
        values[name] = getattr(belief, name)
    return values


def field_changes(before: Belief, base: Evaluation, after: Belief, head: Evaluation,
                  skip: tuple[str, ...] = ()) -> tuple[FieldChange, ...]:
    """The fields that differ, in FIELD_ORDER."""
    known = _Either(base.network.beliefs, head.network.beliefs)
    old, new = belief_fields(before, base, known), belief_fields(after, head, known)
    return tuple(FieldChange(name, old[name], new[name]) for name in FIELD_ORDER
                 if name not in skip and old[name] != new[name])


class _Either:
    """Membership in either of two id mappings, without building their union."""

    __slots__ = ("first", "second")

    def __init__(self, first: Mapping, second: Mapping) -> None:
        self.first, self.second = first, second

    def __contains__(self, key: object) -> bool:
        return key in self.first or key in self.second


def _structure(justifications: list[dict[str, Any]]) -> list[tuple]:
    return [(j["type"], j["antecedents"], j["outlist"], j.get("assumed")) for j in justifications]


def causal_change(changes: tuple[FieldChange, ...]) -> bool:
    """True when a change can move truth values: the stated status, or the structure of the
    justifications (a label or claim edit cannot flip anything)."""
    for change in changes:
        if change.field == "status":
            return True
        if change.field == "justifications" and \
                _structure(change.before) != _structure(change.after):
            return True
    return False


CAUSAL = ("status", "justifications")
