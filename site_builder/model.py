"""Frozen records of a belief network (spec §1.1, §2.1).

Only authoritative data lives here. Derived content (kind, depth, tags, echoes,
dependents, computed truth values) belongs to the evaluation; what a document
*states* about derived content is kept in `Stated` so that `check` can compare
and `fmt` can rewrite it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

IN = "IN"
OUT = "OUT"

#: network.json node keys in the order ftl-reasons writes them (§2.1).
NODE_FIELDS = (
    "text", "truth_value", "justifications", "source", "source_url", "source_hash",
    "date", "metadata", "created_at", "updated_at", "reviewed_at", "verified_at",
    "retracted_at",
)
#: The string fields a Belief carries verbatim.
STRING_FIELDS = (
    "source", "source_url", "source_hash", "date", "created_at", "updated_at",
    "reviewed_at", "verified_at", "retracted_at",
)
#: Fields present in the newest schema generation; hand-written documents export these.
DEFAULT_NODE_FIELDS = NODE_FIELDS


@dataclass(frozen=True, slots=True)
class Justification:
    """One reason for a belief: SL (or CP, checked the same way, §1.2)."""

    type: str
    """`SL` or `CP`; any other type is never valid (E303)."""
    antecedents: tuple[str, ...] = ()
    """The inlist: all must be IN."""
    outlist: tuple[str, ...] = ()
    """All must be OUT (or absent)."""
    label: str = ""
    """Free prose."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Unmodelled keys of the network.json justification (e.g. `content_hash`), verbatim."""
    line: int = field(default=0, compare=False)
    """Line of the justification header in its document (0 when not from a document)."""
    ante_lines: tuple[int, ...] = field(default=(), compare=False)
    """Line of each antecedent item, aligned with `antecedents`."""
    out_lines: tuple[int, ...] = field(default=(), compare=False)
    """Line of each outlist item, aligned with `outlist`."""
    ante_tags: tuple[str | None, ...] = field(default=(), compare=False)
    """The tag written before each antecedent (IN, OUT, ? or None); only read for external ids."""
    out_tags: tuple[str | None, ...] = field(default=(), compare=False)
    """The tag written before each outlist member."""


@dataclass(frozen=True, slots=True)
class Belief:
    """A node: authoritative fields only (§3.3 table)."""

    id: str
    text: str
    declared: str = IN
    """The truth value the source states (IN/OUT); a cache for unpinned derived beliefs (§3.4)."""
    retracted: bool = False
    """An explicit retraction mark: `retracted: true`, STALE, or a network.json W502 pin."""
    justifications: tuple[Justification, ...] = ()
    source: str = ""
    source_url: str = ""
    source_hash: str = ""
    date: str = ""
    created_at: str = ""
    updated_at: str = ""
    reviewed_at: str = ""
    verified_at: str = ""
    retracted_at: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    """Verbatim metadata (includes `retract_reason`, `aliases`)."""
    summary: str = ""
    """Prose summary (the wiki's sidecar text; not part of network.json)."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Unmodelled network.json node keys, verbatim (W604)."""
    json_fields: tuple[str, ...] | None = None
    """Which NODE_FIELDS the network.json form carries; None means the project default."""
    path: str = field(default="", compare=False)
    """Source file (document or network.json) for diagnostics."""
    line: int = field(default=0, compare=False)
    """Line of the title in its document (or of the id in network.json)."""

    @property
    def is_premise(self) -> bool:
        """A premise has no justification (§1.1)."""
        return not self.justifications

    @property
    def reason_out(self) -> str:
        """Why the belief is OUT, for readers: `retract_reason`, else beliefs.md's `stale_reason`."""
        stale = self.metadata.get("stale_reason", "")
        return self.retract_reason or (stale if isinstance(stale, str) else str(stale))

    @property
    def retract_reason(self) -> str:
        """`metadata.retract_reason` as text ("" when absent)."""
        reason = self.metadata.get("retract_reason", "")
        return reason if isinstance(reason, str) else str(reason)


@dataclass(frozen=True, slots=True)
class Nogood:
    """A recorded contradiction (§1.3); never re-checked by ftl-reasons."""

    id: str
    nodes: tuple[str, ...] = ()
    discovered: str = ""
    resolution: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    line: int = field(default=0, compare=False)
    """Line of the nogood in its source (network.json or _project.yaml)."""


@dataclass(frozen=True, slots=True)
class Network:
    """A whole belief network, beliefs keyed by id in sorted order."""

    beliefs: Mapping[str, Belief]
    nogoods: tuple[Nogood, ...] = ()
    repos: Mapping[str, Any] = field(default_factory=dict)
    meta: Mapping[str, Any] | None = None
    """network.json `meta`, or None for exports that predate it."""
    node_fields: tuple[str, ...] = DEFAULT_NODE_FIELDS
    """Default network.json node keys for beliefs whose `json_fields` is None."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Unknown top-level network.json keys, kept verbatim (W604)."""
    pins_lost: bool = False
    """True for network.json and beliefs.md, which do not record derived pins (§3.4, W502)."""
    origin: str = field(default="", compare=False)
    """Where network-wide data (nogoods, meta) was read from, for diagnostics."""


@dataclass(frozen=True, slots=True)
class Item:
    """One stated list item (`IN id — echo`) as written in a document."""

    ref: str
    tag: str | None
    echo: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Stated:
    """What a document states about derived content (checked by W503, rewritten by fmt)."""

    kind: str | None = None
    depth: int | None = None
    status_line: int = 0
    count: int | None = None
    count_line: int = 0
    dependents: tuple[Item, ...] | None = None
    """None when the document has no Dependents section."""
    challenges: tuple[Item, ...] | None = None
