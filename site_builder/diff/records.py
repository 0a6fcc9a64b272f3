"""Frozen records of a network diff (issue 6): what changed between two versions.

Every collection is sorted when the record is made, so every output (text, Markdown,
JSON, the changes page) is deterministic without sorting again.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

#: Version of the JSON form; bump when a key changes meaning or disappears.
SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class FieldChange:
    """One authoritative field of a belief, before and after (JSON-shaped values)."""

    field: str
    before: Any
    after: Any


@dataclass(frozen=True, slots=True)
class Entry:
    """A belief that exists on one side only (added or removed)."""

    id: str
    status: str
    """Its computed status on the side where it exists."""
    claim: str


@dataclass(frozen=True, slots=True)
class Edited:
    """A belief present on both sides whose authoritative fields differ."""

    id: str
    changes: tuple[FieldChange, ...]

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the changed fields, in the fixed field order."""
        return tuple(c.field for c in self.changes)


@dataclass(frozen=True, slots=True)
class Renamed:
    """An id of the base that lives on under another id in the head."""

    source: str
    """The old id (`from` in JSON)."""
    target: str
    """The new id (`to` in JSON)."""
    via: str
    """`alias` (the head belief lists the old id in `aliases`) or `claim` (identical claim
    text, no alias: published links to the old id break)."""
    changes: tuple[FieldChange, ...] = ()
    """Field changes between the old and the new belief (`aliases` itself left out)."""

    @property
    def fields(self) -> tuple[str, ...]:
        """Names of the changed fields."""
        return tuple(c.field for c in self.changes)


@dataclass(frozen=True, slots=True)
class Flip:
    """A belief whose computed status differs between base and head."""

    id: str
    """The head id (the new id of a renamed belief)."""
    before: str
    after: str
    causes: tuple[str, ...]
    """Changed beliefs from which the flip propagates (sorted, at most the diff's limit)."""
    causes_complete: bool
    """False when more causes exist than were listed."""
    path: tuple[str, ...]
    """Ids from the nearest cause to this belief along justification edges; when longer
    than the limit, the cause, then the last hops (`elided` ids left out between)."""
    elided: int = 0


@dataclass(frozen=True, slots=True)
class NetworkDiff:
    """Everything that changed from `base` to `head`."""

    base: str
    head: str
    added: tuple[Entry, ...] = ()
    removed: tuple[Entry, ...] = ()
    edited: tuple[Edited, ...] = ()
    renamed: tuple[Renamed, ...] = ()
    flips: tuple[Flip, ...] = ()
    errors: tuple[int, int] = (0, 0)
    """Errors in the base and in the head: what they left out is missing from the comparison
    (a document that could not be read shows as removed or added)."""

    @property
    def is_empty(self) -> bool:
        """True when nothing changed (fmt-only changes and no-op commits)."""
        return not (self.added or self.removed or self.edited or self.renamed or self.flips)

    def counts(self) -> dict[str, int]:
        """Sizes of each list, and flips by direction."""
        return {"added": len(self.added), "removed": len(self.removed),
                "edited": len(self.edited), "renamed": len(self.renamed),
                "flips": len(self.flips),
                "in_to_out": sum(f.before == "IN" for f in self.flips),
                "out_to_in": sum(f.before == "OUT" for f in self.flips)}

    def marks(self) -> Mapping[str, tuple[str, ...]]:
        """Head id -> short change labels (`added`, `edited`, `renamed`, `IN→OUT`, `OUT→IN`),
        for marking changed beliefs on their pages and in the index."""
        found: dict[str, list[str]] = {}
        for entry in self.added:
            found.setdefault(entry.id, []).append("added")
        for rename in self.renamed:
            found.setdefault(rename.target, []).append("renamed")
        for edit in self.edited:
            found.setdefault(edit.id, []).append("edited")
        for flip in self.flips:
            found.setdefault(flip.id, []).append(f"{flip.before}\u2192{flip.after}")
        return {k: tuple(v) for k, v in sorted(found.items())}


def _changes_json(changes: tuple[FieldChange, ...]) -> dict[str, Any]:
    return {c.field: {"from": c.before, "to": c.after} for c in changes}


def to_json(diff: NetworkDiff) -> dict[str, Any]:
    """The JSON form (schema in README: `belief-site diff --format json`)."""
    return {
        "schema_version": SCHEMA_VERSION,
        "base": diff.base,
        "head": diff.head,
        "counts": diff.counts(),
        "errors": {"base": diff.errors[0], "head": diff.errors[1]},
        "added": [{"id": e.id, "status": e.status, "claim": e.claim} for e in diff.added],
        "removed": [{"id": e.id, "status": e.status, "claim": e.claim} for e in diff.removed],
        "edited": [{"id": e.id, "fields": list(e.fields), "changes": _changes_json(e.changes)}
                   for e in diff.edited],
        "renamed": [{"from": r.source, "to": r.target, "via": r.via, "fields": list(r.fields),
                     "changes": _changes_json(r.changes)} for r in diff.renamed],
        "flips": [{"id": f.id, "from": f.before, "to": f.after, "cause": list(f.causes),
                   "cause_complete": f.causes_complete, "path": list(f.path),
                   "elided": f.elided} for f in diff.flips],
    }
