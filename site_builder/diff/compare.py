"""Compare two evaluated networks: added, removed, edited, renamed beliefs and status flips."""

from __future__ import annotations

from collections import defaultdict

from ..checks import echo_of
from .fields import aliases_of, causal_change, field_changes
from .flips import find_flips
from .records import Edited, Entry, NetworkDiff, Renamed
from .sides import Side

__all__ = ["compare", "find_renames"]

ALIAS, CLAIM = "alias", "claim"


def find_renames(base: Side, head: Side) -> dict[str, tuple[str, str]]:
    """Old id -> (new id, `alias` | `claim`) for each base id missing from the head.

    With alias: a head belief lists the old id in `aliases` (the first by id when several
    do; `check` reports that as E411). Without: exactly one vanished and one new belief
    share the same claim text, a likely rename whose published links break.
    """
    gone = {i for i in base.beliefs if i not in head.beliefs}
    renames: dict[str, tuple[str, str]] = {}
    for new_id in sorted(head.beliefs):
        for alias in aliases_of(head.beliefs[new_id]):
            if alias in gone and alias not in renames:
                renames[alias] = (new_id, ALIAS)
    targets = {new for new, _ in renames.values()}
    old_by_claim, new_by_claim = defaultdict(list), defaultdict(list)
    for old in sorted(gone - renames.keys()):
        old_by_claim[base.beliefs[old].text.strip()].append(old)
    for new in sorted(head.beliefs):
        if new not in base.beliefs and new not in targets:
            new_by_claim[head.beliefs[new].text.strip()].append(new)
    for claim, olds in old_by_claim.items():
        news = new_by_claim.get(claim, [])
        if len(olds) == 1 and len(news) == 1:  # ambiguous matches stay added and removed
            renames[olds[0]] = (news[0], CLAIM)
    return dict(sorted(renames.items()))


def _entry(side: Side, belief_id: str) -> Entry:
    return Entry(belief_id, side.status(belief_id), echo_of(side.beliefs[belief_id]))


def compare(base: Side, head: Side, limit: int = 100) -> NetworkDiff:
    """Everything that changed from base to head; `limit` caps causes and path lengths."""
    renames = find_renames(base, head)
    targets = {new for new, _ in renames.values()}
    common = sorted(i for i in head.beliefs if i in base.beliefs)
    added = tuple(_entry(head, i) for i in sorted(head.beliefs)
                  if i not in base.beliefs and i not in targets)
    removed = tuple(_entry(base, i) for i in sorted(base.beliefs)
                    if i not in head.beliefs and i not in renames)
    edited = []
    for i in common:
        changes = field_changes(base.beliefs[i], base.evaluation, head.beliefs[i], head.evaluation)
        if changes:
            edited.append(Edited(i, changes))
    # A head id can take over several old ids (a merge); the first by id carries its history.
    origin: dict[str, str] = {}
    for old, (new, _) in renames.items():
        if new not in base.beliefs:
            origin.setdefault(new, old)
    renamed = []
    for old, (new, via) in renames.items():
        changes = () if origin.get(new) != old else field_changes(
            base.beliefs[old], base.evaluation, head.beliefs[new], head.evaluation, skip=("aliases",))
        renamed.append(Renamed(old, new, via, changes))
    causal = {e.id for e in edited if causal_change(e.changes)}
    causal |= {r.target for r in renamed if causal_change(r.changes)}
    existence = {e.id for e in added} | {e.id for e in removed} | set(renames)
    pairs = {i: i for i in common} | {new: old for new, old in origin.items()}
    flips = find_flips(base, head, pairs, causal, existence,
                       {old: new for old, (new, _) in renames.items()}, limit)
    errors = tuple(sum(d.severity == "error" for d in side.diagnostics) for side in (base, head))
    return NetworkDiff(base.label, head.label, added, removed, tuple(edited), tuple(renamed), flips, errors)
