"""One belief as a JSON-ready record, with hidden beliefs removed (DESIGN "partial publishing").

The record is shared by `beliefs.json` and `belief/<id>/index.json`, so both say the same
thing. Visibility rule for every id a record lists (antecedents, outlist, dependents):

- a belief of the network that is not visible is dropped, and not counted anywhere
  (DESIGN: hidden beliefs appear nowhere, counts included);
- an id that is not in the network at all (an external reference, spec §1.7.1) is kept:
  it names no hidden belief;
- statuses, validity and depth are still computed on the whole network.

Fields that may hold private or author-local data are left out: `repos` (absolute paths)
and `metadata` (only `retract_reason` is published).
"""

from __future__ import annotations

import json
import re

from typing import Any, Iterable

from ... import __version__, urls
from ...checks import kind_of
from ...evaluate import explain_valid
from ...model import IN, OUT, Belief
from .. import RenderContext
from ..markup import safe_source_url

compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON, UTF-8 text kept as is. One encoder for the build: `json.dumps` with these
arguments makes a new one per call, which cost 0.05 s over graph.json's 20,000 pieces."""

SCHEMA_VERSION = "1.0"
GENERATOR = f"belief-site/{__version__}"

#: Dated and provenance fields published verbatim ("" when absent).
TEXT_FIELDS = ("source_hash", "date", "created_at", "updated_at", "reviewed_at",
               "verified_at", "retracted_at")


def one_line(text: str) -> str:
    """Text on a single line: every run of whitespace or control characters becomes one space."""
    joined = " ".join(text.split())  # str.split: the same whitespace as \s, 5x faster than the regex
    return joined if joined.isprintable() else _BLANKS.sub(" ", text).strip(" ")


_BLANKS = re.compile(r"[\s\x00-\x1f\x7f-\x9f]+")  # \s: exactly the characters str.isspace() accepts


def site_base(ctx: RenderContext) -> str:
    """The site's URL as the exports write it ('' without one): on one line (a newline in
    the configuration would add lines to robots.txt or llms.txt), spaces escaped."""
    return one_line(ctx.config.site_url or "").replace(" ", "%20")


def first_line(text: str) -> str:
    """The first non-blank line of a claim, on one line."""
    for line in text.splitlines():
        if line.strip():
            return one_line(line)
    return ""


def published(ctx: RenderContext, ids: Iterable[str]) -> list[str]:
    """The ids that may be shown: unpublished beliefs removed, ids outside the network kept."""
    return [i for i in ids if i not in ctx.beliefs or ctx.is_visible(i)]


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
    justifications = [{
        "type": j.type, "label": j.label, "antecedents": published(ctx, j.antecedents),
        "outlist": published(ctx, j.outlist), "valid": explain_valid(ev, belief, index),
    } for index, j in enumerate(belief.justifications)]
    dependents = [{"id": d.id, "justification": d.index, "label": d.label, "role": d.role}
                  for d in ev.dependents.get(belief.id, ()) if ctx.is_visible(d.id)]
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
        "source_url": belief.source_url if safe_source_url(belief.source_url) else "",
    }
    record.update((name, getattr(belief, name)) for name in TEXT_FIELDS)
    record.update({
        "retract_reason": belief.retract_reason,
        "justifications": justifications,
        "supporting_justification": ev.supporting.get(belief.id),
        "dependents": dependents,
        "url": page_url(ctx, belief.id),
        "json": urls.json_path(belief.id, prefix),
        "badge": urls.badge_path(belief.id, prefix),
    })
    return record
