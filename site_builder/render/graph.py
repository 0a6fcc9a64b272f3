"""The graph explorer's data: `graph/graph.json`, every published belief with a fixed position.

The explorer page (`graph/`, templates/graph.html) draws the whole network with a vendored
WebGL renderer (sigma + graphology) and loads nothing else. Positions are computed here, once
per build, so the page opens at once and the same network always looks the same:

- each connected group of beliefs is drawn in rows by depth (premises on top, as in the
  per-belief diagrams), ordered within rows by a few barycenter sweeps so that a belief sits
  near its antecedents and dependents;
- a row longer than about 1.2 times the square root of its group is folded into staggered
  sub-rows, which keeps left-to-right order and a readable aspect ratio;
- beliefs that touch no other published belief are set out in a grid, and the groups are
  packed onto shelves, largest first.

Every step is linear in beliefs plus justification edges, apart from sorting; no force
simulation (quadratic without a spatial index, and never byte-stable across platforms).
"""

from __future__ import annotations

import json
import math
import posixpath
from collections import defaultdict
from functools import cache
from typing import Iterator

from ..checks import echo_of, kind_of
from ..model import Belief
from . import OutputFile, RenderContext
from .exports.records import compact
from ..diagnostics import short
from .rows import memo, structural

__all__ = ["GRAPH_PAGE", "GRAPH_DATA", "graph_data", "layout", "page_values", "emit"]

GRAPH_PAGE = "graph/index.html"
GRAPH_DATA = "graph/graph.json"
CLAIM_LIMIT = 160
SWEEPS = 4
X_STEP = 3.0
"""Between neighbours in a row: ids are long labels drawn to the right of their dot."""
ROW_GAP = 3.0
SUB_ROW_GAP = 1.0
BLOCK_GAP = 6.0
ASPECT = 1.6
"""Width over height the packing aims at (screens are landscape)."""


def _edges(shown: list[Belief], index: dict[str, int]) -> list[tuple[int, int, bool]]:
    """(antecedent, dependent, through an outlist) between published beliefs, once each."""
    found: dict[tuple[int, int], bool] = {}
    for belief in shown:
        target = index[belief.id]
        for j in belief.justifications:
            for ids, outlist in ((j.antecedents, False), (j.outlist, True)):
                for source_id in ids:
                    source = index.get(source_id)
                    if source is None or source == target:
                        continue  # unpublished, missing or self: nothing to draw
                    key = (source, target)
                    found[key] = found.get(key, True) and outlist  # an inlist edge wins
    return sorted((s, t, o) for (s, t), o in found.items())


def _components(count: int, edges: list[tuple[int, int, bool]]) -> list[list[int]]:
    """Weakly connected groups (union-find), each sorted, ordered by their first member."""
    parent = list(range(count))

    def find(a: int) -> int:
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for s, t, _ in edges:
        a, b = find(s), find(t)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = defaultdict(list)
    for node in range(count):
        groups[find(node)].append(node)
    return [groups[root] for root in sorted(groups)]


def _order_rows(rows: list[list[int]], ins: list[list[int]], outs: list[list[int]], row_of: dict[int, int]) -> None:
    """Barycenter sweeps (down by antecedents, up by dependents), in place."""
    where: dict[int, float] = {}

    def place(row: list[int]) -> None:
        size = len(row)
        for i, node in enumerate(row):
            where[node] = (i + 0.5) / size

    for row in rows:
        place(row)
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        indices = range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)
        for r in indices:
            row = rows[r]

            def key(node: int) -> tuple[float, float]:
                near = [where[n] for n in (ins[node] if down else outs[node])
                        if (row_of[n] < r if down else row_of[n] > r)]
                return (sum(near) / len(near) if near else where[node], where[node])

            row.sort(key=key)
            place(row)


def _component_layout(nodes: list[int], depth: list[int], ins, outs) -> tuple[dict[int, tuple[float, float]], float, float]:
    """Positions of one group (origin top left) and its width and height."""
    used = sorted({depth[n] for n in nodes})
    row_index = {d: i for i, d in enumerate(used)}
    rows: list[list[int]] = [[] for _ in used]
    row_of: dict[int, int] = {}
    for node in nodes:  # nodes are sorted by id: the sweeps start from a stable order
        r = row_index[depth[node]]
        rows[r].append(node)
        row_of[node] = r
    _order_rows(rows, ins, outs, row_of)
    cap = max(8, math.ceil(1.2 * math.sqrt(len(nodes))))
    placed: dict[int, tuple[float, float]] = {}
    y, width = 0.0, 0.0
    for row in rows:
        folds = math.ceil(len(row) / cap)
        row_width = X_STEP * (len(row) - 1) / folds
        width = max(width, row_width)
        for i, node in enumerate(row):
            placed[node] = (X_STEP * i / folds - row_width / 2, y + (i % folds) * SUB_ROW_GAP)
        y += (folds - 1) * SUB_ROW_GAP + ROW_GAP
    height = y - ROW_GAP
    return {n: (x + width / 2, yy) for n, (x, yy) in placed.items()}, width, height


def layout(count: int, edges: list[tuple[int, int, bool]], depth: list[int]) -> list[tuple[float, float]]:
    """(x, y) for every node 0..count-1; y grows downward (antecedents above dependents)."""
    ins: list[list[int]] = [[] for _ in range(count)]
    outs: list[list[int]] = [[] for _ in range(count)]
    for s, t, _ in edges:
        outs[s].append(t)
        ins[t].append(s)
    blocks: list[tuple[dict[int, tuple[float, float]], float, float]] = []
    loners: list[int] = []
    for group in _components(count, edges):
        if len(group) == 1:
            loners.append(group[0])
        else:
            blocks.append(_component_layout(group, depth, ins, outs))
    blocks.sort(key=lambda b: (-len(b[0]), min(b[0])))
    if loners:
        y_step = X_STEP / 2
        side = math.ceil(math.sqrt(len(loners) * ASPECT * y_step / X_STEP))  # a landscape block
        grid = {n: (X_STEP * (i % side), y_step * (i // side)) for i, n in enumerate(loners)}
        blocks.append((grid, X_STEP * (side - 1), y_step * ((len(loners) - 1) // side)))
    # Shelf packing: shelves as wide as the widest block, or as a landscape rectangle of the total area.
    area = sum((w + BLOCK_GAP) * (h + BLOCK_GAP) for _, w, h in blocks)
    shelf_width = max([math.sqrt(area * ASPECT)] + [w for _, w, _ in blocks])
    positions: list[tuple[float, float]] = [(0.0, 0.0)] * count
    x = y = shelf_height = 0.0
    for placed, w, h in blocks:
        if x > 0 and x + w > shelf_width:
            x, y, shelf_height = 0.0, y + shelf_height + BLOCK_GAP, 0.0
        for node, (px, py) in placed.items():
            positions[node] = (round(x + px, 3), round(y + py, 3))
        x += w + BLOCK_GAP
        shelf_height = max(shelf_height, h)
    return positions


def graph_json(ctx: RenderContext) -> bytes:
    """graph.json: nodes (with positions and links from the graph page), then edges.

    Each node is encoded on its own and kept by the build cache (render/rows.py), and so are
    the edges, each node's count of dependents and its position, which the cache's salt
    alone decides (structure, depths, visibility): after a claim edit one node is encoded
    again, and neither the edges nor the layout are computed at all."""
    shown, ev = ctx.shown(), ctx.evaluation

    def structure() -> bytes:  # each node's count of dependents, its position, then the edges
        edges = _edges(shown, {b.id: i for i, b in enumerate(shown)})
        dependents = [0] * len(shown)  # distinct published dependents (sizes the dots)
        for s, _, _ in edges:
            dependents[s] += 1
        places = layout(len(shown), edges, [ev.depth[b.id] for b in shown])
        links = [{"source": shown[s].id, "target": shown[t].id, "outlist": o} for s, t, o in edges]
        return (compact(dependents) + "\n" + compact(places) + "\n" + compact(links)).encode("utf-8")

    counted, places, links = structural(ctx, "graph_structure", structure).split(b"\n", 2)

    @cache
    def known() -> tuple[list[int], list[list[float]]]:  # decoded for the nodes made again only
        return json.loads(counted), json.loads(places)

    def node(i: int, b: Belief) -> str:
        dependents, (x, y) = known()[0][i], known()[1][i]
        facts = {"id": b.id, "status": ev.value(b.id), "kind": kind_of(b), "depth": ev.depth[b.id],
                 "dependents": dependents, "url": ctx.href(GRAPH_PAGE, ctx.page(b.id)),
                 "claim": short(echo_of(b), CLAIM_LIMIT), "x": x, "y": y}
        return compact(facts)

    kept = memo(ctx, "graph_node")
    nodes = kept.joined([b.id for b in shown], lambda i: node(i, shown[i]), ",")
    kept.done()
    return b'{"version":1,"nodes":[' + nodes + b'],"edges":' + links + b"}"


def graph_data(ctx: RenderContext) -> dict:
    """The explorer's data, as graph.json holds it."""
    return json.loads(graph_json(ctx))


def page_values(ctx: RenderContext) -> dict:
    """What templates/graph.html needs besides the common values."""
    return {"graph_data": posixpath.relpath(GRAPH_DATA, posixpath.dirname(GRAPH_PAGE)),
            "node_count": len(ctx.visible)}


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """`graph/graph.json` (the page itself is one of the pages' specs)."""
    yield OutputFile(GRAPH_DATA, graph_json(ctx))
