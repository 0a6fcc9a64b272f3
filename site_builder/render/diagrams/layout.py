"""The built-in layered layout (DESIGN "diagrams"): rows by derivation distance, dummy
points on long edges, barycenter ordering with transposition (then sifting and a few
seeded restarts for the rare orders that keep crossings), compact x-coordinates and cubic
Bézier edges.

Rows are given by the neighbourhood (Sugiyama's layering step is the BFS distance), so
only ordering and placement happen here. Everything iterates over lists in a fixed order:
the same neighbourhood always gives the same drawing.

Geometry is chosen so that the drawn crossings equal the counted ones: every edge crosses
each band between two rows as one cubic with vertical tangents from the bottom of the upper
row to the top of the lower row, so two band curves cross exactly when their end orders
are inverted (x(t) is the same convex combination of the end abscissas for both).
Edges within a row (an antecedent citing another antecedent at the same distance) are arcs
that bow away from the belief's row, into the outer band, where fewer edges run.
"""

from __future__ import annotations

from bisect import bisect_right, insort
from itertools import accumulate

from .geometry import BOX_H, Box, Drawing, Route, box_widths
from .neighbourhood import Neighbourhood

__all__ = ["layout", "order_layers", "bilayer_crossings", "ROW_GAP"]

ROW_GAP = 46.0
"""Vertical room for edges between two rows of boxes."""
GAP = 14.0
"""Horizontal room between two boxes."""
DUMMY_W = 4.0
DUMMY_GAP = 8.0
SWEEPS = 8
"""Down+up barycenter sweeps at most (the best order seen is kept)."""
CROSSING = 4096
"""Cost of one crossing in the ordering; costs below it only break ties (see _flat_cost)."""
SIFT_ROUNDS = 3
"""Sifting rounds, only for the few orders that still have crossings."""
RESTARTS = 4
"""Further searches from other start orders, only for orders that still have crossings..."""
FEW_CROSSINGS = 8
"""...and only 2 of them when more crossings than this remain: restarts mostly help nearly
planar neighbourhoods stuck on a plateau, and dense ones would pay ten times the work."""
RESTART_SEED = 20261202
TRANSPOSE_LIMIT = 24
"""Above this many vertices (dummies included) the ordering is barycentric sweeps only:
on a dense generated 10k network, transposition from 24 to 40 vertices cost 40% of the
ordering time for 8% fewer crossings in hairballs no order untangles (the shared networks
gain one crossing in all: 51 instead of 50)."""
SEARCH_LIMIT = 16
"""Sifting and restarts cost more than linear time: only for diagrams up to this many
vertices (dummies included). On dense generated networks those between 16 and 24 vertices
took ~6 ms each; on the shared networks this cap (with TRANSPOSE_LIMIT) leaves 51 crossings
in all instead of 28 (Graphviz: 150)."""
PLACEMENT_ROUNDS = 1
"""Sweeps of the placement (down and up from the widest row, then down and up the whole
diagram). More rounds moved no box of the shared networks and shortened edges of a dense
generated network by under 0.5%, at 2.4x the placement time."""


class _Layered:
    """The proper layered graph: real vertices 0..n-1, then one dummy per inner row of a long edge."""

    __slots__ = ("n", "layer_of", "up", "down", "chains", "upward", "flat", "more", "layers",
                 "width", "nlayers", "top_row")

    def __init__(self, nb: Neighbourhood, widths: list[float]) -> None:
        nodes = nb.nodes
        self.n = len(nodes)
        self.top_row = min(n.row for n in nodes)
        self.nlayers = max(n.row for n in nodes) - self.top_row + 1
        self.layer_of = [n.row - self.top_row for n in nodes]
        self.width = list(widths)
        self.up: list[list[int]] = [[] for _ in nodes]
        self.down: list[list[int]] = [[] for _ in nodes]
        self.layers: list[list[int]] = [[] for _ in range(self.nlayers)]
        self.more: list[list[int]] = [[] for _ in range(self.nlayers)]
        for v, node in enumerate(nodes):
            (self.more if node.is_more else self.layers)[self.layer_of[v]].append(v)
        self.chains: list[list[int]] = []
        self.upward: list[bool] = []
        self.flat: list[list[tuple[int, int, int]]] = [[] for _ in range(self.nlayers)]
        for e, edge in enumerate(nb.edges):
            s, t = edge.source, edge.target
            ls, lt = self.layer_of[s], self.layer_of[t]
            self.upward.append(ls > lt)
            if ls == lt:
                self.flat[ls].append((s, t, e))
                self.chains.append([s, t])
                continue
            top, bottom = (s, t) if ls < lt else (t, s)
            chain = [top]
            for layer in range(min(ls, lt) + 1, max(ls, lt)):
                d = self._vertex(layer, DUMMY_W)
                chain.append(d)
            chain.append(bottom)
            for a, b in zip(chain, chain[1:]):
                self.down[a].append(b)
                self.up[b].append(a)
            self.chains.append(chain)

    def _vertex(self, layer: int, width: float) -> int:
        v = len(self.layer_of)
        self.layer_of.append(layer)
        self.width.append(width)
        self.up.append([])
        self.down.append([])
        self.layers[layer].append(v)
        return v

    def outward(self, layer: int) -> int:
        """The band a row's flat arcs bow into: -1 above (antecedent rows), +1 below."""
        return -1 if layer + self.top_row < 0 else 1

    def band(self, layer: int) -> list[list[int]]:
        """Each vertex's neighbours in the band that row's flat arcs bow into."""
        return self.up if self.outward(layer) < 0 else self.down


def bilayer_crossings(pairs: list[tuple[int, int]]) -> int:
    """Crossings between two rows: `pairs` of (upper position, lower position), one per segment."""
    pairs.sort()
    seen: list[int] = []
    total = 0
    for _, lower in pairs:
        total += len(seen) - bisect_right(seen, lower)
        insort(seen, lower)
    return total


def _band_ends(g: _Layered, i: int, layer: list[int], pos: list[int]) -> list[int]:
    """ends[p]: how many edge ends row i has, at its positions before p, into the band its
    flat arcs bow into."""
    band = g.band(i)
    at = [0] * len(layer)
    for v in layer:
        at[pos[v]] = len(band[v])
    return list(accumulate(at, initial=0))


def _flat_cost(g: _Layered, i: int, pos: list[int], ends: list[int],
               touching: tuple[int, int] | None = None) -> int:
    """Cost of the edges within row i: crossings (x CROSSING) with edge ends strictly under
    their arcs (`ends`: _band_ends) and with each other, plus how far apart their ends are
    (adjacent ends are joined by a short straight line, which is what Graphviz draws too).

    With `touching` (two vertices side by side), only the terms that swapping them can
    change: those of arcs ending at one of them (an arc ending elsewhere keeps its span and
    holds both positions or neither)."""
    flats = g.flat[i]
    if not flats:
        return 0
    spans = []
    for u, v, _ in flats:
        pu, pv = pos[u], pos[v]
        spans.append((pu, pv, u, v) if pu < pv else (pv, pu, u, v))
    mine = [True] * len(spans) if touching is None else \
        [u in touching or v in touching for _, _, u, v in spans]
    total = 0
    for k, (lo, hi, u, v) in enumerate(spans):
        if mine[k]:
            total += hi - lo - 1
            total += CROSSING * (ends[hi] - ends[lo + 1])  # ends strictly inside the arc
        for m in range(k + 1, len(spans)):
            if not (mine[k] or mine[m]):
                continue
            lo2, hi2, u2, v2 = spans[m]
            if u in (u2, v2) or v in (u2, v2):
                continue
            if lo < lo2 < hi < hi2 or lo2 < lo < hi2 < hi:
                total += CROSSING
    return total


def _count(g: _Layered, layers: list[list[int]], pos: list[int]) -> int:
    """Cost of an order: CROSSING per crossing (segments between adjacent rows, edges within
    rows), plus the spread of edges within rows as a tie-break."""
    total = 0
    down = g.down
    for i in range(len(layers) - 1):
        if len(layers[i]) < 2 or len(layers[i + 1]) < 2:  # segments sharing an end never cross
            continue
        pairs = [(pos[a], pos[b]) for a in layers[i] for b in down[a]]
        if len(pairs) > 1:
            total += CROSSING * bilayer_crossings(pairs)
    for i, flats in enumerate(g.flat):
        if flats:  # most rows have none: no call
            total += _flat_cost(g, i, pos, _band_ends(g, i, layers[i], pos))
    return total


def _positions(layers: list[list[int]], size: int) -> list[int]:
    pos = [0] * size
    for layer in layers:
        for k, v in enumerate(layer):
            pos[v] = k
    return pos


def _sweep(layers: list[list[int]], pos: list[int], fixed_nbrs: list[list[int]], indexes) -> None:
    """Reorder each layer in `indexes` by the barycenter of its neighbours in the previous one."""
    for i in indexes:
        layer = layers[i]
        if len(layer) < 2:
            continue
        keyed = []
        at = pos.__getitem__
        for v in layer:
            nbrs = fixed_nbrs[v]
            # No neighbours: keep the current place (the usual barycenter rule).
            key = sum(map(at, nbrs)) / len(nbrs) if nbrs else float(pos[v])
            keyed.append((key, pos[v], v))
        keyed.sort()
        layer[:] = [v for _, _, v in keyed]
        for k, v in enumerate(layer):
            pos[v] = k


def _pair_costs(a: int, b: int, pos: list[int], sides: tuple[list[list[int]], ...]) -> tuple[int, int]:
    """Cost of the crossings among the segments of a and b towards the rows in `sides`, with
    a left of b and with b left of a (one pass over the pairs of segments serves both)."""
    before = after = 0
    for nbrs in sides:
        nb_ = nbrs[b]
        if not nb_:
            continue
        for p in nbrs[a]:
            pp = pos[p]
            for q in nb_:
                pq = pos[q]
                if pp > pq:
                    before += CROSSING
                elif pp < pq:
                    after += CROSSING
    return before, after


def _transpose(g: _Layered, layers: list[list[int]], pos: list[int]) -> None:
    """Swap adjacent vertices while that removes crossings (Gansner et al., "transpose")."""
    both = (g.up, g.down)
    for _ in range(8):
        improved = False
        for i, layer in enumerate(layers):
            flats = bool(g.flat[i])
            if flats:  # a swap changes the row's flat cost only through arcs ending at it
                arc_ends = {v for e in g.flat[i] for v in e[:2]}
                band = g.band(i)
                ends = _band_ends(g, i, layer, pos)  # a swap at k, k+1 changes ends[k + 1] only
            for k in range(len(layer) - 1):
                a, b = layer[k], layer[k + 1]
                before, after = _pair_costs(a, b, pos, both)
                if flats and (a in arc_ends or b in arc_ends):
                    before += _flat_cost(g, i, pos, ends, (a, b))
                    pos[a], pos[b] = k + 1, k
                    ends[k + 1] = ends[k] + len(band[b])
                    after += _flat_cost(g, i, pos, ends, (a, b))
                    pos[a], pos[b] = k, k + 1
                    ends[k + 1] = ends[k] + len(band[a])
                if after < before:
                    layer[k], layer[k + 1] = b, a
                    pos[a], pos[b] = k + 1, k
                    if flats:
                        ends[k + 1] = ends[k] + len(band[b])
                    improved = True
        if not improved:
            return


def _sift(g: _Layered, layers: list[list[int]], pos: list[int], indexes,
          sides: tuple[list[list[int]], ...]) -> None:
    """Move each vertex to the best place in its row towards `sides`, others fixed
    (sifting, Matuszewski et al.; one-sided in a sweep, two-sided at the end)."""
    for i in indexes:
        layer = layers[i]
        if len(layer) < 2:
            continue
        flats = bool(g.flat[i])
        band = g.band(i)
        for v in sorted(layer, key=lambda u: (-(len(g.up[u]) + len(g.down[u])), pos[u])):
            others = [u for u in layer if u != v]
            here = pos[v]
            # cost(j): v after the first j others = sum of left pairs + sum of right pairs.
            left, right = map(list, zip(*[_pair_costs(u, v, pos, sides) for u in others]))
            cost = sum(right)
            best_j, best = here, None
            if flats:  # v first; each next j moves it past one more (ends[j] alone changes)
                trial = [v, *others]
                for k, u in enumerate(trial):
                    pos[u] = k
                ends = _band_ends(g, i, trial, pos)
            for j in range(len(others) + 1):
                if j:
                    cost += left[j - 1] - right[j - 1]
                total = cost
                if flats:
                    if j:
                        passed = others[j - 1]
                        pos[passed], pos[v] = j - 1, j
                        ends[j] = ends[j - 1] + len(band[passed])
                    total += _flat_cost(g, i, pos, ends)
                if best is None or total < best or (total == best and j == here):
                    best_j, best = j, total
            layer[:] = others[:best_j] + [v] + others[best_j:]
            for k, u in enumerate(layer):
                pos[u] = k


class _Shuffler:
    """Fisher-Yates with a 64-bit xorshift: the same permutations on every Python version
    (the `random` module promises no such thing across releases)."""

    __slots__ = ("state",)

    def __init__(self, seed: int) -> None:
        self.state = seed & 0xFFFFFFFFFFFFFFFF or 1

    def _next(self) -> int:
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFFFFFFFFFF
        x ^= x >> 7
        x ^= (x << 17) & 0xFFFFFFFFFFFFFFFF
        self.state = x
        return x

    def __call__(self, items: list[int]) -> list[int]:
        out = list(items)
        for k in range(len(out) - 1, 0, -1):
            j = self._next() % (k + 1)
            out[k], out[j] = out[j], out[k]
        return out


def _search(g: _Layered, start: list[list[int]], best: int) -> tuple[list[list[int]], int]:
    """From one start order (whose cost is `best`): barycenter sweeps with transposition,
    then (while crossings remain) one-sided and two-sided sifting; the best order seen and
    its cost."""
    layers = [list(layer) for layer in start]
    size = len(g.layer_of)
    pos = _positions(layers, size)
    best_layers = [list(layer) for layer in layers]
    n = len(layers)
    downward, upward = range(1, n), range(n - 2, -1, -1)

    def keep() -> bool:
        nonlocal best, best_layers
        count = _count(g, layers, pos)
        if count < best:
            best, best_layers = count, [list(layer) for layer in layers]
            return True
        return False

    stale = 0
    after: list = [None, None]  # the order after the last sweep of each direction
    for sweep in range(SWEEPS):
        if sweep % 2 == 0:
            _sweep(layers, pos, g.up, downward)
        else:
            _sweep(layers, pos, g.down, upward)
        if size <= TRANSPOSE_LIMIT:
            _transpose(g, layers, pos)
        stale = 0 if keep() else stale + 1
        if best == 0 or stale >= 4:
            break
        # Back at the order the last sweep in this direction left: from here the sweeps
        # only repeat the last two orders, both costed already, so none would be better.
        order = [tuple(layer) for layer in layers]
        if order == after[sweep % 2]:
            break
        after[sweep % 2] = order
    for _ in range(SIFT_ROUNDS if size <= SEARCH_LIMIT else 0):
        if best == 0:
            break
        layers[:] = [list(layer) for layer in best_layers]
        pos = _positions(layers, size)
        improved = False
        for indexes, sides in ((downward, (g.up,)), (upward, (g.down,)), (range(n), (g.up, g.down))):
            _sift(g, layers, pos, indexes, sides)
            _transpose(g, layers, pos)
            improved = keep() or improved
        if not improved:
            break
    return best_layers, best


def order_layers(g: _Layered) -> tuple[list[list[int]], int]:
    """The order with the fewest counted crossings found, and that number.

    Most neighbourhoods are trees or nearly so and have none after the first search. For
    the rest the search starts again from other orders (each row reversed, then seeded
    shuffles: the same every run), as local moves get stuck on plateaus.
    """
    layers = [list(layer) for layer in g.layers]
    best = _count(g, layers, _positions(layers, len(g.layer_of)))
    if best == 0:
        return layers, 0
    best_layers, best = _search(g, layers, best)
    if best < CROSSING or len(g.layer_of) > SEARCH_LIMIT:
        return best_layers, best // CROSSING
    shuffle = _Shuffler(RESTART_SEED)
    for attempt in range(RESTARTS if best // CROSSING <= FEW_CROSSINGS else 2):
        if attempt == 0:
            start = [layer[::-1] for layer in g.layers]
        else:
            start = [shuffle(layer) for layer in g.layers]
        found, count = _search(g, start, _count(g, start, _positions(start, len(g.layer_of))))
        if count < best:
            best_layers, best = found, count
            if best < CROSSING:
                break
    return best_layers, best // CROSSING


def _pav(targets: list[float], weights: list[float], offsets: list[float]) -> list[float]:
    """Least-squares positions keeping order and minimum separations (pool adjacent violators)."""
    if len(targets) == 1:  # most rows of most diagrams (the same arithmetic as below)
        return [(targets[0] - offsets[0]) * weights[0] / weights[0] + offsets[0]]
    blocks: list[list[float]] = []  # [weighted sum, weight, count]
    for t, w, off in zip(targets, weights, offsets):
        blocks.append([(t - off) * w, w, 1])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            s, wt, c = blocks.pop()
            blocks[-1][0] += s
            blocks[-1][1] += wt
            blocks[-1][2] += c
    out: list[float] = []
    k = 0
    for s, wt, c in blocks:
        mean = s / wt
        for _ in range(int(c)):
            out.append(mean + offsets[k])
            k += 1
    return out


def _place(g: _Layered, layers: list[list[int]]) -> list[float]:
    """x-coordinates: each row as close as it can be to its neighbours' mean, never overlapping."""
    size = len(g.layer_of)
    x = [0.0] * size
    width, n = g.width, g.n
    offsets_of: list[list[float]] = []
    for layer in layers:
        offsets, acc = [], 0.0
        for k, v in enumerate(layer):
            if k:
                u = layer[k - 1]
                acc += (width[u] + width[v]) / 2 + (GAP if u < n and v < n else DUMMY_GAP)
            offsets.append(acc)
        offsets_of.append(offsets)
        for v, off in zip(layer, offsets):
            x[v] = off - acc / 2
    weight = [1.0 if v < n else 2.0 for v in range(size)]  # straighter long edges
    last = len(layers) - 1
    centre = max(range(len(layers)), key=lambda i: len(layers[i]))
    passes = []
    for _ in range(PLACEMENT_ROUNDS):
        passes.append((range(centre + 1, last + 1), (g.up,)))
        passes.append((range(centre - 1, -1, -1), (g.down,)))
        passes.append((range(1, last + 1), (g.up,)))
        passes.append((range(last - 1, -1, -1), (g.down,)))
    passes.append((range(0, last + 1), (g.up, g.down)))
    for indexes, sides in passes:
        for i in indexes:
            layer = layers[i]
            if not layer:
                continue
            targets = []
            for v in layer:
                total, count = 0.0, 0
                for nbrs in sides:
                    for u in nbrs[v]:
                        total += x[u]
                        count += 1
                targets.append(total / count if count else x[v])
            for v, value in zip(layer, _pav(targets, [weight[v] for v in layer], offsets_of[i])):
                x[v] = value
    return x


def _spread(k: int, count: int, width: float) -> float:
    """Offset of the k-th of `count` edge ends along a box side (keeps their order)."""
    if count < 2:
        return 0.0
    step = min(10.0, width * 0.7 / (count - 1))
    return (k - (count - 1) / 2) * step


def layout(nb: Neighbourhood, widths: list[float] | None = None) -> Drawing:
    """Lay a neighbourhood out with the built-in engine."""
    widths = box_widths(nb) if widths is None else widths
    g = _Layered(nb, widths)
    layers, _ = order_layers(g)
    x = _place(g, layers)
    pitch = BOX_H + ROW_GAP
    y = [g.layer_of[v] * pitch for v in range(len(g.layer_of))]
    # "+N more" boxes go at the end of their row.
    for i, extra in enumerate(g.more):
        right = max((x[v] + g.width[v] / 2 for v in layers[i]), default=None)
        for v in extra:
            x[v] = (right + GAP + g.width[v] / 2) if right is not None else 0.0
            right = x[v] + g.width[v] / 2
    pos = _positions(layers, len(g.layer_of))
    half = BOX_H / 2
    # Port offsets: edge ends spread along the top and bottom sides in the order of the far end.
    port_top: dict[tuple[int, int], float] = {}
    port_bottom: dict[tuple[int, int], float] = {}
    for v in range(g.n):
        for nbrs, ports in ((g.up[v], port_top), (g.down[v], port_bottom)):
            if len(nbrs) == 1:  # most: no spreading
                ports[v, nbrs[0]] = 0.0
                continue
            ordered = sorted(nbrs, key=pos.__getitem__)
            for k, u in enumerate(ordered):
                ports[v, u] = _spread(k, len(ordered), widths[v])
    routes = []
    for e, chain in enumerate(g.chains):
        a, b = chain[0], chain[-1]
        if g.layer_of[a] == g.layer_of[b]:
            routes.append(_arc(g, a, b, x, y, pos, widths))
            continue
        start = (x[a] + port_bottom[a, chain[1]], y[a] + half)
        segments: list[tuple[tuple[float, float], ...]] = []
        px, py = start
        for k in range(1, len(chain)):
            v = chain[k]
            if v < g.n:
                ex, ey = x[v] + port_top[v, chain[k - 1]], y[v] - half
            else:
                ex, ey = x[v], y[v] - half
            mid = (py + ey) / 2
            segments.append(((px, mid), (ex, mid), (ex, ey)))
            px, py = ex, ey
            if v >= g.n:  # dummy: straight through its row
                py = y[v] + half
                segments.append(((px, py),))
        route = Route(start, tuple(segments))
        routes.append(_reverse(route) if g.upward[e] else route)
    boxes = tuple(Box(x[v], y[v], widths[v], BOX_H) for v in range(g.n))
    return Drawing(boxes, tuple(routes), "builtin")


def _arc(g: _Layered, a: int, b: int, x, y, pos, widths) -> Route:
    """An edge within one row: a straight line between neighbours, else an arc bowing
    into the outer band."""
    out = g.outward(g.layer_of[a])
    side = 1.0 if x[b] > x[a] else -1.0
    span = abs(pos[a] - pos[b])
    if span == 1:
        return Route((x[a] + side * widths[a] / 2, y[a]), (((x[b] - side * widths[b] / 2, y[b]),),))
    inset = 6.0
    ax = x[a] + side * (widths[a] / 2 - min(inset, widths[a] / 4))
    bx = x[b] - side * (widths[b] / 2 - min(inset, widths[b] / 4))
    edge_y = y[a] + out * BOX_H / 2
    bulge = min(ROW_GAP * 0.8, 10.0 + 7.0 * (span - 1))
    cy = edge_y + out * bulge / 0.75  # a cubic with both controls at cy peaks at 3/4 of it
    return Route((ax, edge_y), (((ax, cy), (bx, cy), (bx, edge_y)),))


def _reverse(route: Route) -> Route:
    """The same path walked the other way (upward edges: arrow at the upper end)."""
    points = [route.start]
    kinds = []
    for seg in route.segments:
        points.extend(seg)
        kinds.append(len(seg))
    segments = []
    end = len(points) - 1
    for size in reversed(kinds):
        seg = tuple(points[end - k] for k in range(1, size + 1))
        segments.append(seg)
        end -= size
    return Route(points[-1], tuple(segments))
