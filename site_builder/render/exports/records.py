"""One belief as a JSON-ready record, with hidden beliefs removed (DESIGN "partial publishing").

The record is shared by `beliefs.json` and `belief/<id>/index.json`, so both say the same
thing. Visibility rule for every id a record lists (antecedents, outlist, dependents):

- a belief of the network that is not visible is dropped, and counted in
  `hidden_references` (distinct hidden beliefs, per justification and per record) so that
  a shortened list never looks complete (the count says that something is withheld, never
  what);
- an id that is not in the network at all (an external reference, spec §1.7.1) is kept:
  it names no hidden belief;
- statuses, validity and depth are still computed on the whole network.

Fields that may hold private or author-local data are left out: `repos` (absolute paths)
and `metadata` (only `retract_reason` is published).
"""

from __future__ import annotations

from typing import Any, Iterable

from ... import __version__, urls
from ...checks import kind_of
from ...evaluate import explain_valid
from ...model import IN, OUT, Belief
from .. import RenderContext
from ..markup import safe_url

SCHEMA_VERSION = "1.0"
GENERATOR = f"belief-site/{__version__}"

#: Dated and provenance fields published verbatim ("" when absent).
TEXT_FIELDS = ("source_hash", "date", "created_at", "updated_at", "reviewed_at",
               "verified_at", "retracted_at")


def one_line(text: str) -> str:
    """Text on a single line: every run of whitespace or control characters becomes one space."""
    cleaned = "".join(" " if (c.isspace() or ord(c) < 32 or 0x7F <= ord(c) < 0xA0) else c
                      for c in text)
    return " ".join(cleaned.split())


def first_line(text: str) -> str:
    """The first non-blank line of a claim, on one line."""
    for line in text.splitlines():
        if line.strip():
            return one_line(line)
    return ""


def published(ctx: RenderContext, ids: Iterable[str]) -> tuple[list[str], set[str]]:
    """(ids that may be shown, the hidden beliefs removed)."""
    kept, hidden = [], set()
    for belief_id in ids:
        if belief_id in ctx.beliefs and not ctx.is_visible(belief_id):
            hidden.add(belief_id)
        else:
            kept.append(belief_id)
    return kept, hidden


def counts(ctx: RenderContext) -> dict[str, int]:
    """Totals over the visible beliefs only."""
    shown = ctx.shown()
    status = [ctx.evaluation.value(b.id) for b in shown]
    premises = sum(1 for b in shown if b.is_premise)
    return {"beliefs": len(shown), "IN": status.count(IN), "OUT": status.count(OUT),
            "premises": premises, "derived": len(shown) - premises}


def page_url(ctx: RenderContext, belief_id: str) -> str:
    """The belief page relative to the site root (`belief/<id>/` or `.../index.html`)."""
    prefix = ctx.config.prefix
    if ctx.config.use_directory_urls:
        return urls.belief_dir(belief_id, prefix)
    return urls.page_path(belief_id, prefix)


def belief_record(ctx: RenderContext, belief: Belief) -> dict[str, Any]:
    """The published record of one visible belief (see beliefs.schema.json `$defs/belief`)."""
    ev, prefix = ctx.evaluation, ctx.config.prefix
    justifications, hidden_all = [], set()
    for index, j in enumerate(belief.justifications):
        antecedents, hidden = published(ctx, j.antecedents)
        outlist, hidden_out = published(ctx, j.outlist)
        hidden |= hidden_out
        hidden_all |= hidden
        justifications.append({
            "type": j.type, "label": j.label, "antecedents": antecedents, "outlist": outlist,
            "valid": explain_valid(ev, belief, index), "hidden_references": len(hidden),
        })
    dependents = []
    for dep in ev.dependents.get(belief.id, ()):
        if ctx.is_visible(dep.id):
            dependents.append({"id": dep.id, "justification": dep.index, "label": dep.label,
                               "role": dep.role})
        else:
            hidden_all.add(dep.id)
    record: dict[str, Any] = {
        "id": belief.id,
        "text": belief.text,
        "summary": belief.summary,
        "status": ev.value(belief.id),
        "declared": belief.declared,
        "pinned": ev.is_pinned(belief.id),
        "kind": kind_of(belief),
        "depth": ev.depth[belief.id],
        "source": belief.source,
        "source_url": belief.source_url if safe_url(belief.source_url) else "",
    }
    record.update((name, getattr(belief, name)) for name in TEXT_FIELDS)
    record.update({
        "retract_reason": belief.retract_reason,
        "justifications": justifications,
        "supporting_justification": ev.supporting.get(belief.id),
        "dependents": dependents,
        "hidden_references": len(hidden_all),
        "url": page_url(ctx, belief.id),
        "json": urls.json_path(belief.id, prefix),
        "badge": urls.badge_path(belief.id, prefix),
    })
    return record
