"""Every file of one belief (page, index.json, badges): the unit of parallel and incremental builds.

`belief_outputs` renders them with the belief's panels and diagram computed here, for this
belief only (a build never holds every diagram), and records which beliefs' content the
files read (`Outputs.reads`): an incremental build re-renders the belief when one of them
changes (cache.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping

import jinja2

from ..model import Belief
from . import OutputFile, RenderContext
from .badges import belief_badges
from .diagrams import diagram_of
from .exports.json_exports import belief_json
from .pages import belief_spec, render_page
from .panels import panels_for

__all__ = ["Outputs", "belief_outputs"]


@dataclass(frozen=True, slots=True)
class Outputs:
    """The files of one belief and the ids of the beliefs whose content they show."""

    belief_id: str
    files: tuple[OutputFile, ...]
    reads: frozenset[str]


class _Reads(Mapping[str, Belief]):
    """The network's beliefs, noting every id looked up (a page's content dependencies)."""

    def __init__(self, beliefs: Mapping[str, Belief]) -> None:
        self._beliefs = beliefs
        self.seen: set[str] = set()

    def __getitem__(self, key: str) -> Belief:
        self.seen.add(key)
        return self._beliefs[key]

    def __contains__(self, key: object) -> bool:
        self.seen.add(key)  # type: ignore[arg-type]
        return key in self._beliefs

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a page may not depend on the whole network")  # it would defeat caching

    def __len__(self) -> int:
        return len(self._beliefs)


def belief_outputs(ctx: RenderContext, env: jinja2.Environment, counts: Counter,
                   belief: Belief) -> Outputs:
    """Page, index.json and badges of one visible belief."""
    reads = _Reads(ctx.beliefs)
    one = replace(ctx, texts=reads)
    limit = ctx.config.panel_max_items
    panels = panels_for(ctx.evaluation, belief.id, limit, ctx.is_visible, ctx.explain_steps())
    extra: dict[str, Any] = {"panels": {belief.id: panels}}
    if belief.id not in ctx.diagrams:  # the built-in engine, drawn here (Graphviz is batched before)
        extra["diagrams"] = {belief.id: diagram_of(one, belief.id)}
    one = replace(one, **extra)
    page = render_page(env, one, belief_spec(one, belief), counts)
    files = (OutputFile(one.page(belief.id), page.encode("utf-8")), belief_json(one, belief),
             *belief_badges(one, belief.id))
    reads.seen.add(belief.id)
    return Outputs(belief.id, files, frozenset(reads.seen))
