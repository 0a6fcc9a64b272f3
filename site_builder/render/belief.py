"""Every file of one belief (page, index.json, badges): the unit of parallel and incremental builds.

`belief_outputs` renders them with the belief's panels and diagram computed here, for this
belief only (a build never holds every diagram), and, in a build with a cache
(`RenderContext.recording`), records which beliefs the files read (`Outputs.reads`): whose
content, status, pin or supporting justification they show or computed from (an impact
panel re-evaluates dependents it may not list). An incremental build re-renders the belief
when one of them changed any of those (cache.py).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from typing import Any, Iterator, Mapping

import jinja2

from ..evaluate import Evaluation
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
    """The files of one belief and the ids of the beliefs whose content or state they read
    (the belief's own id alone when the build does not record: `RenderContext.recording`)."""

    belief_id: str
    files: tuple[OutputFile, ...]
    reads: frozenset[str]


class _Seen(Mapping[str, Any]):
    """The network's beliefs, or a mapping of the evaluation (status, supporting), noting
    every id looked up (a page's dependencies)."""

    def __init__(self, values: Mapping[str, Any], seen: set[str]) -> None:
        self._values, self._note = values, seen.add

    def __getitem__(self, key: str) -> Any:
        self._note(key)
        return self._values[key]

    def get(self, key: str, default: Any = None) -> Any:
        self._note(key)
        return self._values.get(key, default)

    def __contains__(self, key: object) -> bool:
        self._note(key)  # type: ignore[arg-type]
        return key in self._values

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a page may not depend on the whole network")  # it would defeat caching

    def __len__(self) -> int:
        return len(self._values)


class _SeenPins:
    """`Evaluation.pinned` as a page may use it (`in`: is_pinned), noting every id asked about."""

    def __init__(self, pinned: frozenset[str], seen: set[str]) -> None:
        self._pinned, self._note = pinned, seen.add

    def __contains__(self, key: object) -> bool:
        self._note(key)  # type: ignore[arg-type]
        return key in self._pinned

    def __iter__(self) -> Iterator[str]:
        raise TypeError("a page may not depend on every pin")  # it would defeat caching


class _SeenSteps:
    """queries.explain's memo of steps, shared by the beliefs of a build: a step taken from it
    was computed for another belief, so its reads are noted here (what `explain_step` reads:
    the belief and every belief its justifications cite)."""

    def __init__(self, steps: dict, beliefs: Mapping[str, Belief], seen: set[str]) -> None:
        self._steps, self._beliefs, self._seen = steps, beliefs, seen

    def get(self, key: str) -> Any:
        found = self._steps.get(key)
        if found is not None:
            self._seen.add(key)
            for j in self._beliefs[key].justifications:
                self._seen.update(j.antecedents)
                self._seen.update(j.outlist)
        return found

    def __setitem__(self, key: str, value: Any) -> None:
        self._steps[key] = value


def _recording(ev: Evaluation, seen: set[str]) -> Evaluation:
    """The evaluation, noting into `seen` each belief whose status, pin or support is read."""
    return replace(ev, status=_Seen(ev.status, seen), supporting=_Seen(ev.supporting, seen),
                   pinned=_SeenPins(ev.pinned, seen))


def belief_outputs(ctx: RenderContext, env: jinja2.Environment, counts: Counter | None,
                   belief: Belief) -> Outputs:
    """Page, index.json and badges of one visible belief (`counts`: pages.belief_page_counts,
    not recorded: with them, the cache's salt holds every status). Its reads are noted only
    when `ctx.recording` (a build without a cache renders 5% quicker without the wrappers)."""
    seen: set[str] = set()
    ev, one, steps = ctx.evaluation, ctx, ctx.explain_steps()
    if ctx.recording:
        ev = _recording(ctx.evaluation, seen)
        one = replace(ctx, texts=_Seen(ctx.beliefs, seen), evaluation=ev)
        steps = _SeenSteps(steps, ctx.beliefs, seen)
    panels = panels_for(ev, belief.id, ctx.config.panel_max_items, ctx.is_visible, steps)
    extra: dict[str, Any] = {"panels": {belief.id: panels}}
    if belief.id not in ctx.diagrams:  # the built-in engine, drawn here (Graphviz is batched before)
        extra["diagrams"] = {belief.id: diagram_of(one, belief.id)}
    one = replace(one, **extra)
    page = render_page(env, one, belief_spec(one, belief), counts)
    files = (OutputFile(one.page(belief.id), page.encode("utf-8")), belief_json(one, belief),
             *belief_badges(one, belief.id))
    seen.add(belief.id)
    return Outputs(belief.id, files, frozenset(seen))
