"""The neighbourhood of one belief: bounded BFS up (antecedents) and down (dependents).

DESIGN "diagrams": the belief in row 0, antecedents in rows -1..-depth by derivation
distance, dependents in rows 1..depth. A belief reachable both ways or at several
distances takes the shortest distance, ties above. Work per diagram is bounded by
`diagram_max_nodes` and a scan budget, never by the size of the network: a premise with
50,000 dependents costs each of its neighbours' diagrams at most the budget.
Hidden beliefs (`visible_to`) are neither drawn, nor crossed, nor counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple

from ...evaluate import Evaluation

__all__ = ["Adjacency", "Node", "Edge", "Neighbourhood", "neighbourhood"]

ABOVE, BELOW = "above", "below"


class Adjacency:
    """Visible references and dependents of each belief, computed lazily once per build.

    Over a build every belief's lists are built at most once, so the total is linear in
    the number of references.
    """

    def __init__(self, evaluation: Evaluation, visible: frozenset[str] | set[str]) -> None:
        self._ev = evaluation
        self._visible = visible
        self._refs: dict[str, Mapping[str, bool]] = {}
        self._deps: dict[str, tuple[str, ...]] = {}

    def refs(self, belief_id: str) -> Mapping[str, bool]:
        """Visible beliefs cited by `belief_id` (sorted) -> True when cited only in outlists."""
        found = self._refs.get(belief_id)
        if found is None:
            beliefs, visible = self._ev.network.beliefs, self._visible
            outlist_only: dict[str, bool] = {}
            for j in beliefs[belief_id].justifications:
                for a in j.antecedents:
                    if a != belief_id and a in visible and a in beliefs:
                        outlist_only[a] = False
                for o in j.outlist:
                    if o != belief_id and o in visible and o in beliefs:
                        outlist_only.setdefault(o, True)
            found = self._refs[belief_id] = {k: outlist_only[k] for k in sorted(outlist_only)}
        return found

    def deps(self, belief_id: str) -> tuple[str, ...]:
        """Visible beliefs citing `belief_id`, sorted, each once."""
        found = self._deps.get(belief_id)
        if found is None:
            visible = self._visible
            # Evaluation.dependents is sorted by id: duplicates (several justifications) are adjacent.
            out: list[str] = []
            for d in self._ev.dependents.get(belief_id, ()):
                if d.id != belief_id and d.id in visible and (not out or out[-1] != d.id):
                    out.append(d.id)
            found = self._deps[belief_id] = tuple(out)
        return found


class Node(NamedTuple):
    """A box of the diagram: a belief, or a "+N more" node (`more` > 0). Named tuples, here
    and for the other parts of a drawing: a 10k build makes over half a million of them, and
    a frozen dataclass takes twice as long to make."""

    key: str
    """Belief id, or `+above` / `+below` for the "more" nodes."""
    row: int
    """0 for the belief, negative above (antecedents), positive below (dependents)."""
    more: int = 0
    """For "more" nodes: how many beliefs within the depth were left out."""
    complete: bool = True
    """For "more" nodes: False when the bounded count stopped (`more` is a lower bound)."""

    @property
    def is_more(self) -> bool:
        return self.more > 0


class Edge(NamedTuple):
    """Antecedent (`source`) -> dependent (`target`), as indexes into `Neighbourhood.nodes`."""

    source: int
    target: int
    outlist: bool
    """The dependent cites the source only in outlists (drawn dashed)."""


@dataclass(frozen=True, slots=True)
class Neighbourhood:
    """Nodes sorted by (row, more, key); edges sorted by (source, target)."""

    center: str
    depth: int
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]

    def count(self, side: str) -> int:
        """Beliefs drawn above (antecedents) or below (dependents) the belief."""
        if side == ABOVE:
            return sum(1 for n in self.nodes if n.row < 0 and not n.is_more)
        return sum(1 for n in self.nodes if n.row > 0 and not n.is_more)

    def more(self, side: str) -> Node | None:
        key = "+" + side
        return next((n for n in self.nodes if n.key == key), None)


class _Scan:
    """A budget of adjacency entries looked at for one diagram."""

    __slots__ = ("left",)

    def __init__(self, budget: int) -> None:
        self.left = budget

    def take(self) -> bool:
        self.left -= 1
        return self.left >= 0


def _split(up: int, down: int, budget: int) -> tuple[int, int]:
    """Share the remaining node budget between the two sides, fairly; the spare goes above."""
    if up + down <= budget:
        return up, down
    half_down = budget // 2
    half_up = budget - half_down
    if up <= half_up:
        return up, budget - up
    if down <= half_down:
        return budget - down, down
    return half_up, half_down


def _candidates(frontier: list[str], step, placed: Mapping[str, int], scan: _Scan,
                exclude: set[str] | None = None) -> list[str]:
    """Unplaced neighbours of the frontier, in frontier order then id order, each once."""
    seen: dict[str, None] = {}
    for node in frontier:
        for other in step(node):
            if not scan.take():
                return list(seen)
            if other not in placed and other not in seen and (exclude is None or other not in exclude):
                seen[other] = None
    return list(seen)


def neighbourhood(adjacency: Adjacency, center: str, depth: int, max_nodes: int) -> Neighbourhood:
    """The rows, nodes and edges of one belief's diagram (bounded work)."""
    refs = adjacency.refs
    max_nodes = max(1, max_nodes)
    scan = _Scan(max(100, 10 * max_nodes))
    placed: dict[str, int] = {center: 0}
    budget = max_nodes - 1
    up_frontier, down_frontier = [center], [center]
    up_left: list[str] = []  # found but not placed: counted in "+N more"
    down_left: list[str] = []
    cut_row = {ABOVE: 0, BELOW: 0}
    for distance in range(1, depth + 1):
        up = _candidates(up_frontier, lambda b: refs(b).keys(), placed, scan)
        down = _candidates(down_frontier, adjacency.deps, placed, scan, set(up))  # ties above
        take_up, take_down = _split(len(up), len(down), budget)
        budget -= take_up + take_down
        for b in up[:take_up]:
            placed[b] = -distance
        for b in down[:take_down]:
            placed[b] = distance
        if take_up < len(up) and not cut_row[ABOVE]:
            cut_row[ABOVE] = -distance
        if take_down < len(down) and not cut_row[BELOW]:
            cut_row[BELOW] = distance
        up_left += up[take_up:]
        down_left += down[take_down:]
        # Left-out beliefs stay in the frontier: what lies beyond them within the depth is
        # found (never placed, the budget being spent) and counted in "+N more".
        up_frontier, down_frontier = up, down
        if not up and not down:
            break
    nodes = [Node(b, row) for b, row in placed.items()]
    complete = scan.left >= 0
    left_above = set(up_left) - placed.keys()
    left_below = set(down_left) - placed.keys() - left_above  # ties above, counted once
    for side, left, sign in ((ABOVE, left_above, -1), (BELOW, left_below, 1)):
        count = len(left)
        if count:
            row = cut_row[side] or sign * depth
            nodes.append(Node("+" + side, row, count, complete))
    nodes.sort(key=lambda n: (n.row, n.is_more, n.key))
    index = {n.key: i for i, n in enumerate(nodes) if not n.is_more}
    edges: list[Edge] = []
    keys = list(index)
    for target in keys:
        cited = refs(target)
        t = index[target]
        if len(cited) <= len(keys):
            edges += [Edge(index[s], t, cited[s]) for s in cited if s in index]
        else:  # a belief with thousands of antecedents: look up the drawn ones instead
            edges += [Edge(index[s], t, cited[s]) for s in keys if s in cited]
    edges.sort()  # by (source, target): one edge per pair
    return Neighbourhood(center, depth, tuple(nodes), tuple(edges))
