"""Status flips and their causes (issue 6).

A flip is a belief whose computed status differs between base and head. Its causes are
the changed beliefs from which a chain of justification edges reaches it with every belief
on the chain flipped. Changed beliefs that can start a chain ("seeds"):
- a flipped belief whose own status or justification structure was edited (its own cause);
- an added or removed belief, or the old id of a renamed one (citations of it now resolve
  differently).
An edited belief whose status did not change cannot move its dependents, so it is no seed;
it is used only as a last resort for a flip nothing else explains.

Edges are the head's references, plus the base's (old ids mapped to new ones), so a removal
is followed through the base's network. Work is linear in the flipped subgraph: one
multi-source BFS gives each flip its nearest cause and shortest path, one pass over the
condensed subgraph in topological order gives every cause (capped at `limit`).
"""

from __future__ import annotations

from collections import deque
from typing import Iterable, Mapping

from ..evaluate.truth import references
from .records import Flip
from .sides import Side

__all__ = ["find_flips"]


def _parents(new: str, old: str, base: Side, head: Side, canon: Mapping[str, str]) -> set[str]:
    """Ids the flipped belief cites, on either side (base ids mapped through renames)."""
    found = {ref for ref, _, _ in references(head.beliefs[new])}
    found.update(canon.get(ref, ref) for ref, _, _ in references(base.beliefs[old]))
    found.discard(new)
    return found


def _children(flipped: Iterable[str], parents: Mapping[str, set[str]],
              sources: set[str]) -> dict[str, list[str]]:
    """x -> flipped beliefs citing x, for x a flip or a possible cause (sorted)."""
    out: dict[str, list[str]] = {}
    for y in sorted(flipped):
        for x in parents[y]:
            if x in sources:
                out.setdefault(x, []).append(y)
    return out


def _nearest(seeds: list[str], children: Mapping[str, list[str]], targets: set[str]):
    """Multi-source BFS: for each reached target, (distance, previous hop, nearest seed)."""
    reach = {s: (0, None, s) for s in seeds}
    queue = deque(seeds)
    while queue:
        x = queue.popleft()
        dist, _, root = reach[x]
        for y in children.get(x, ()):
            if y in targets and y not in reach:
                reach[y] = (dist + 1, x, root)
                queue.append(y)
    return reach


def _all_causes(seeds: list[str], children: Mapping[str, list[str]], targets: set[str],
                limit: int) -> dict[str, tuple[tuple[str, ...], bool]]:
    """Every seed reaching each target, the `limit` smallest ids and whether that is all.

    Members of a strongly connected component reach each other, so they share causes; the
    condensation is a DAG, visited once in topological order.
    """
    import networkx as nx  # here: a build without --diff-base never needs it (0.1 s to import)

    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(set(seeds) | targets))
    graph.add_edges_from((x, y) for x in sorted(children) for y in children[x] if y in targets)
    condensed = nx.condensation(graph)
    seed_set, result, per = set(seeds), {}, {}
    for comp in nx.topological_sort(condensed):
        members = condensed.nodes[comp]["members"]
        found = {m for m in members if m in seed_set}
        complete = True
        for pred in condensed.predecessors(comp):
            causes, done = per[pred]
            found.update(causes)
            complete &= done
        if len(found) > limit:  # the `limit` smallest of a union: deterministic in any order
            found, complete = set(sorted(found)[:limit]), False
        per[comp] = (found, complete)
        for m in members:
            if m in targets:
                result[m] = (tuple(sorted(found)), complete)
    return result


def _path(target: str, reach: Mapping[str, tuple], limit: int) -> tuple[tuple[str, ...], int]:
    """Nearest cause .. target; past `limit` ids, the cause then the last hops."""
    dist, _, root = reach[target]
    keep = dist + 1 if dist + 1 <= limit else max(limit - 1, 1)
    hops, node = [], target
    while len(hops) < keep:
        hops.append(node)
        node = reach[node][1]
    hops.reverse()
    if dist + 1 <= limit:
        return tuple(hops), 0
    return (root, *hops), dist + 1 - len(hops) - 1


def _attribute(targets: set[str], seeds: list[str], parents, limit: int) -> dict[str, tuple]:
    """target -> (causes, complete, path, elided) for the targets the seeds reach."""
    children = _children(targets, parents, targets | set(seeds))
    reach = _nearest(seeds, children, targets)
    reached = {t for t in targets if t in reach}
    causes = _all_causes(seeds, children, reached, limit)
    out = {}
    for t in reached:
        listed, complete = causes[t]
        root = reach[t][2]
        if root not in listed:  # the nearest cause is always listed, even past the cap
            listed = tuple(sorted((*listed[: limit - 1], root)))
        out[t] = (listed, complete, *_path(t, reach, limit))
    return out


def find_flips(base: Side, head: Side, pairs: Mapping[str, str], causal: set[str],
               existence: set[str], canon: Mapping[str, str], limit: int = 100) -> tuple[Flip, ...]:
    """Flips of the beliefs in `pairs` (head id -> base id), each with causes and path.

    `causal`: head ids whose own status or justification structure was edited;
    `existence`: added and removed ids and the old ids of renamed beliefs;
    `canon`: old id -> new id of every rename.
    """
    before = {new: base.status(old) for new, old in pairs.items()}
    flipped = {new for new in pairs if before[new] != head.status(new)}
    parents = {v: _parents(v, pairs[v], base, head, canon) for v in flipped}
    found = _attribute(flipped, sorted((causal & flipped) | existence), parents, limit)
    rest = flipped - found.keys()
    if rest:  # last resort: an edit that did not flip its own belief
        found.update(_attribute(rest, sorted(causal - flipped), parents, limit))
    flips = []
    for v in sorted(flipped):
        causes, complete, path, elided = found.get(v, ((), False, (v,), 0))
        flips.append(Flip(v, before[v], head.status(v), causes, complete, path, elided))
    return tuple(flips)
