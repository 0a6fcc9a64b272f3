"""Dependency diagrams: an inline SVG per visible belief (DESIGN "diagrams").

`render_diagrams(ctx)` is the entry point: for every visible belief it takes the bounded
neighbourhood (neighbourhood.py), lays it out with the configured engine (layout.py, or
graphviz.py in one batch for the whole site, falling back to the built-in layout per
diagram with a W901 warning), and writes the SVG (svg.py). Links are relative from the
belief's own page; "+N more" nodes link to the lists on that page (`#justifications`
above, `#dependents` below).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Mapping

from ...diagnostics import Diagnostic
from ...model import IN
from ..views import tooltip_claim
from .geometry import Drawing, box_widths, label
from .graphviz import GraphvizRunner
from .layout import layout as layered_layout
from .neighbourhood import ABOVE, BELOW, Adjacency, Neighbourhood, neighbourhood
from .svg import NodeInfo, write_svg

if TYPE_CHECKING:  # the render package imports this one to fill RenderContext.diagrams
    from .. import RenderContext

__all__ = ["DiagramSet", "render_diagrams", "diagram_for", "diagram_of", "neighbourhoods"]

MORE_TARGET = {ABOVE: "#justifications", BELOW: "#dependents"}


@dataclass(frozen=True, slots=True)
class DiagramSet:
    """Inline SVG per visible belief id, and the warnings met on the way."""

    svg: Mapping[str, str]
    diagnostics: tuple[Diagnostic, ...] = ()


def neighbourhoods(ctx: RenderContext) -> dict[str, Neighbourhood]:
    """The neighbourhood of every visible belief, by id (sorted)."""
    return {b: neighbourhood_of(ctx, b) for b in sorted(ctx.visible) if b in ctx.beliefs}


def neighbourhood_of(ctx: RenderContext, belief_id: str) -> Neighbourhood:
    """One belief's bounded neighbourhood; the adjacency is built once per context."""
    adjacency = ctx.memo.get(Adjacency)
    if adjacency is None:
        adjacency = ctx.memo[Adjacency] = Adjacency(ctx.evaluation, ctx.visible)
    return neighbourhood(adjacency, belief_id, max(0, ctx.config.diagram_depth),
                         max(1, ctx.config.diagram_max_nodes))


def diagram_of(ctx: RenderContext, belief_id: str) -> str:
    """One belief's diagram with the built-in engine (the unit of parallel and incremental builds)."""
    return diagram_for(ctx, neighbourhood_of(ctx, belief_id))


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _describe(ctx: RenderContext, nb: Neighbourhood) -> tuple[str, str]:
    """The diagram's <title> and <desc> (read by screen readers instead of the picture)."""
    center = nb.center
    title = f"Dependency diagram of {center}"
    above, below = nb.count(ABOVE), nb.count(BELOW)
    steps = _plural(nb.depth, "step")
    desc = (f"{center} is {ctx.evaluation.value(center)}; {_plural(above, 'antecedent')} above and "
            f"{_plural(below, 'dependent')} below, up to {steps} away.")
    for side, word in ((ABOVE, "antecedent"), (BELOW, "dependent")):
        more = nb.more(side)
        if more is not None:
            count = f"{more.more}" if more.complete else f"At least {more.more}"
            desc += f" {count} more {word}{'' if more.more == 1 else 's'} not shown."
    if any(e.outlist for e in nb.edges):
        desc += " Dashed arrows come from outlists (the dependent holds only while that belief is OUT)."
    return title, desc


def _nodes(ctx: RenderContext, nb: Neighbourhood) -> list[NodeInfo]:
    page = ctx.page(nb.center)
    ev, beliefs = ctx.evaluation, ctx.beliefs
    infos = []
    for node in nb.nodes:
        text = label(node)
        if node.is_more:
            side = ABOVE if node.row < 0 else BELOW
            words = "antecedents" if side == ABOVE else "dependents"
            count = f"{node.more}" if node.complete else f"at least {node.more}"
            where = "the justifications" if side == ABOVE else "all dependents"
            infos.append(NodeInfo(text, MORE_TARGET[side], "more", False,
                                  f"{count} more {words} within {nb.depth} steps: see {where}"))
            continue
        belief = beliefs[node.key]  # read here, so that an incremental build sees the dependency
        found = ctx.memo.get(("diagram node", node.key))
        if found is None:  # once per belief (each is in a dozen diagrams): the writer's escaping is cached by it
            value = ev.value(node.key)
            found = ctx.memo[("diagram node", node.key)] = (
                ctx.page(node.key), "in" if value == IN else "out",
                f"{node.key} ({value}): {tooltip_claim(belief)}")
        to_page, kind, tooltip = found
        infos.append(NodeInfo(text, ctx.href(page, to_page), kind, node.row == 0, tooltip))
    return infos


def diagram_for(ctx: RenderContext, nb: Neighbourhood, drawing: Drawing | None = None) -> str:
    """The SVG of one neighbourhood (laid out with the built-in engine unless given)."""
    drawing = drawing if drawing is not None else layered_layout(nb)
    title, desc = _describe(ctx, nb)
    nodes = _nodes(ctx, nb)
    return write_svg(drawing, nodes, [e.outlist for e in nb.edges], title, desc)


def render_diagrams(ctx: RenderContext, runner: GraphvizRunner | None = None) -> DiagramSet:
    """Every visible belief's diagram, with the configured engine (`diagram_engine`).

    `runner` lets a host keep one Graphviz cache across rebuilds (`serve`); by default
    each call has its own.
    """
    hoods = neighbourhoods(ctx)
    engine = ctx.config.diagram_engine
    drawings: dict[str, Drawing] = {}
    found: list[Diagnostic] = []
    if engine != "builtin" and hoods:
        runner = runner or GraphvizRunner.for_engine(engine)
        ids = list(hoods)
        results = runner.layout_many([(hoods[b], box_widths(hoods[b])) for b in ids])
        reasons = {r for r in results if isinstance(r, str)}
        if len(ids) > 1 and len(reasons) == 1 and all(isinstance(r, str) for r in results):
            # The engine cannot run at all (not installed, a wrong path): said once, not per belief.
            found.append(Diagnostic(ctx.config.config_path or "mkdocs.yml", 0, "W901",
                                    f"diagram_engine {engine!r}: {reasons.pop()}",
                                    f"the built-in layout was used for all {len(ids)} diagrams"))
            results = []
        for b, result in zip(ids, results):
            if isinstance(result, str):
                belief = ctx.beliefs[b]
                found.append(Diagnostic(belief.path, belief.line, "W901",
                                        f"diagram for {b}: graphviz failed: {result}",
                                        "the built-in layout was used for this diagram"))
            else:
                drawings[b] = result
    svg = {}
    for b, nb in hoods.items():
        svg[b] = diagram_for(ctx, nb, drawings.get(b))
    return DiagramSet(svg, tuple(sorted(found, key=Diagnostic.sort_key)))
