"""Evaluate: a Network -> truth values, depth, dependents and trace, once per build.

Spec §1.7 and §3.4. Everything is iterative (a topological order of the strongly
connected components), so a 100,000-belief chain never meets the recursion limit.
"""

from __future__ import annotations

import graphlib
from collections import Counter
from dataclasses import dataclass, field
from dataclasses import replace
from itertools import chain, islice
from operator import attrgetter
from typing import Mapping, NamedTuple, Sequence

from ..diagnostics import Diagnostic
from ..model import IN, OUT, Belief, Network
from .truth import evaluate_component, is_retracted, justification_valid, references, supporting

__all__ = ["Evaluation", "Dependent", "evaluate", "as_data", "from_data", "inputs", "DEFAULT_LIMIT"]

DEFAULT_LIMIT = 100


class Dependent(NamedTuple):
    """A belief that cites another, through justification `index` in `role` (a tuple: a 10k
    network makes 20,000 of them per evaluation, and a frozen dataclass took 3x as long)."""

    id: str
    index: int
    label: str
    role: str
    """`antecedent` or `outlist`."""


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Everything computed from a network; later stages read it, never change it."""

    network: Network
    status: Mapping[str, str]
    """Computed IN/OUT of every belief."""
    pinned: frozenset[str]
    """Beliefs held OUT by retraction (premises OUT, retracted derived, W502)."""
    supporting: Mapping[str, int | None]
    depth: Mapping[str, int]
    dependents: Mapping[str, tuple[Dependent, ...]]
    trace: Mapping[str, tuple[str, ...]]
    """Premises each belief rests on, first-visit order, at most limit+1 entries."""
    component: Mapping[str, int]
    """Topological index of each belief's strongly connected component."""
    members: Mapping[int, tuple[str, ...]]
    """Members of each component with more than one belief."""
    outlist_cycle: frozenset[int]
    """Components containing an outlist edge (W406)."""
    limit: int
    diagnostics: tuple[Diagnostic, ...] = field(default=())

    def value(self, belief_id: str) -> str:
        """Computed value (OUT for unknown ids)."""
        return self.status.get(belief_id, OUT)

    def is_pinned(self, belief_id: str) -> bool:
        """True when retraction holds the belief OUT."""
        return belief_id in self.pinned


def _components(beliefs: Mapping[str, Belief]) -> list[tuple[str, ...]]:
    """The strongly connected components (members sorted) in topological order, antecedents
    first. Most networks are acyclic: graphlib orders them without building a graph, 4x
    faster than networkx's condensation, and networkx (0.1 s to import) is loaded only for
    a network with a cycle."""
    cited = {b.id: [ref for ref, _, _ in references(b) if ref in beliefs] for b in beliefs.values()}
    try:
        return [(m,) for m in graphlib.TopologicalSorter(cited).static_order()]
    except graphlib.CycleError:
        pass
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(beliefs)
    graph.add_edges_from((ref, belief_id) for belief_id, refs in cited.items() for ref in refs)
    condensed = nx.condensation(graph)
    return [tuple(sorted(condensed.nodes[node]["members"])) for node in nx.topological_sort(condensed)]


def _through_outlist(beliefs: Mapping[str, Belief], group: Sequence[str]) -> bool:
    """True when a member of the cycle `group` has another member in an outlist."""
    inside = set(group)
    return any(ref in inside for m in group for ref, _, role in references(beliefs[m]) if role == "outlist")


def evaluate(network: Network, limit: int = DEFAULT_LIMIT, previous: Evaluation | None = None) -> Evaluation:
    """Network -> Evaluation (truth values, depth, dependents, trace, diagnostics). With the
    `previous` evaluation (serve's build process keeps it), a network whose every input to the
    evaluation is the same (`inputs`: after an edit of claims or summaries that moves no line)
    takes its results."""
    if previous is not None and previous.limit == limit and inputs(previous.network) == inputs(network):
        return replace(previous, network=network)
    beliefs = network.beliefs
    found: list[Diagnostic] = []
    order = _components(beliefs)
    pinned = {b.id for b in beliefs.values() if is_retracted(b)}
    status: dict[str, str] = {}
    component, members, outlist_cycle = {}, {}, set()
    for position, group in enumerate(order):
        for m in group:
            component[m] = position
        has_out = len(group) > 1 and _through_outlist(beliefs, group)
        if len(group) > 1:
            members[position] = tuple(group)
            _cycle_diagnostic(beliefs, group, has_out, found)
            if has_out:
                outlist_cycle.add(position)
        values = evaluate_component(group, beliefs, status.__getitem__, pinned.__contains__, has_out)
        if network.pins_lost and not has_out and _pin_w502(group, beliefs, values, status, found, pinned):
            values = evaluate_component(group, beliefs, status.__getitem__, pinned.__contains__, has_out)
        status.update(values)
    support = {b.id: (supporting(b, status.__getitem__, beliefs)
                      if status[b.id] == IN and not b.is_premise else None)
               for b in beliefs.values()}
    _status_diagnostics(network, status, found)
    dependents = _dependents(beliefs)
    depth = _depth(beliefs, order, component)
    trace = _trace(beliefs, order, limit)
    return Evaluation(network, status, frozenset(pinned), support, depth, dependents, trace,
                      component, members, frozenset(outlist_cycle), limit, tuple(found))


_JUSTIFICATION_INPUTS = attrgetter("type", "antecedents", "outlist", "label", "line", "ante_lines",
                                   "out_lines", "ante_tags", "out_tags")
_BELIEF_INPUTS = attrgetter("id", "declared", "retracted", "retract_reason", "retracted_at", "path", "line")


def as_data(evaluation: Evaluation) -> tuple:
    """The evaluation's results as plain values (dicts, lists, tuples, strings, numbers), which
    `from_data` makes an Evaluation of again: what a build cache keeps between processes."""
    ev = evaluation
    return (dict(ev.status), sorted(ev.pinned), dict(ev.supporting), dict(ev.depth),
            {k: [tuple(d) for d in v] for k, v in ev.dependents.items() if v}, dict(ev.trace),
            dict(ev.component), dict(ev.members), sorted(ev.outlist_cycle), ev.limit,
            [(d.path, d.line, d.code, d.message, d.hint) for d in ev.diagnostics])


def from_data(network: Network, data: tuple) -> Evaluation:
    """The Evaluation `as_data` gave `data` of, for `network` (whose every input to `evaluate`
    is the evaluated network's: see `inputs`). Other data raises (TypeError, ValueError,
    AttributeError...)."""
    status, pinned, supporting, depth, cited, trace, component, members, cycles, limit, found = data
    dependents = {k: () for k in network.beliefs}  # in the network's order, as `_dependents` gives them
    dependents.update((k, tuple(Dependent(*d) for d in v)) for k, v in cited.items())
    return Evaluation(network, status, frozenset(pinned), supporting, depth, dependents, trace, component,
                      members, frozenset(cycles), limit, tuple(Diagnostic(*d) for d in found))


def inputs(network: Network) -> tuple:
    """Everything `evaluate` reads, in the network's order (which orders ties and traces):
    each belief's justifications, status fields and location (diagnostics carry it), and
    the nogoods. Claims, summaries and other metadata are not among them."""
    beliefs = [(_BELIEF_INPUTS(b), [_JUSTIFICATION_INPUTS(j) for j in b.justifications])
               for b in network.beliefs.values()]
    nogoods = [(n.id, n.nodes, n.line) for n in network.nogoods]
    return beliefs, nogoods, network.pins_lost, network.origin


def _pin_w502(group: Sequence[str], beliefs: Mapping[str, Belief], values: Mapping[str, str],
              status: Mapping[str, str], found: list, pinned: set) -> bool:
    """network.json: a derived belief stored OUT, unmarked, whose justification holds is
    treated as retracted (§3.4); True when one was. A lone belief's holds when it computed
    IN; inside a positive cycle, on its cycle mates' stored values (their computed values
    depend on its own, and a pin goes in before the fixpoint). The library's import judges
    a mate it has not read yet as absent, so its answer depends on the order of the nodes in
    the file; this one does not (tests/test_oracle.py shows where the two agree)."""
    mates = set(group)
    stored = lambda ref: beliefs[ref].declared if ref in mates else status[ref]  # noqa: E731
    newly = [m for m in group if not beliefs[m].is_premise and beliefs[m].declared == OUT and m not in pinned
             and (values[m] == IN if len(group) == 1 else supporting(beliefs[m], stored, beliefs) is not None)]
    for m in newly:
        pinned.add(m)
        found.append(Diagnostic(beliefs[m].path, beliefs[m].line, "W502",
                                f"{m!r} is stored OUT with a valid justification and no "
                                "retraction marker: treated as retracted",
                                "the importer writes 'retracted: true' for it"))
    return bool(newly)


def _cycle_diagnostic(beliefs, group, has_out, found) -> None:
    first = beliefs[group[0]]
    shown = ", ".join(group[:8]) + (f" and {len(group) - 8} more" if len(group) > 8 else "")
    if has_out:
        found.append(Diagnostic(first.path, first.line, "W406",
                                f"cycle through an outlist among {shown}: declared values kept"))
    else:
        found.append(Diagnostic(first.path, first.line, "W405",
                                f"positive cycle among {shown}: only what is supported from "
                                "outside the cycle is IN (least fixpoint)"))


def _status_diagnostics(network: Network, status: Mapping[str, str], found: list) -> None:
    """W401, W403, E404, W501, W505, W605, W506."""
    beliefs = network.beliefs
    for belief in beliefs.values():
        _reference_diagnostics(belief, beliefs, found)
        computed = status[belief.id]
        if not belief.is_premise and belief.declared != computed:
            found.append(Diagnostic(belief.path, belief.line, "W501",
                                    f"{belief.id!r} is declared {belief.declared} but computes "
                                    f"{computed}", "run `belief-site fmt` to refresh it"))
        if computed == IN and (belief.retract_reason or belief.retracted_at):
            found.append(Diagnostic(belief.path, belief.line, "W505",
                                    f"{belief.id!r} is IN but keeps retraction residue "
                                    "(retract_reason or retracted_at)"))
    for nogood in network.nogoods:
        missing = [n for n in nogood.nodes if n not in beliefs]
        if missing:
            found.append(Diagnostic(network.origin, nogood.line, "W605",
                                    f"nogood {nogood.id} names missing beliefs: {', '.join(missing)}"))
        if nogood.nodes and all(status.get(n) == IN for n in nogood.nodes):
            found.append(Diagnostic(network.origin, nogood.line, "W506",
                                    f"nogood {nogood.id}: all of its beliefs are IN"))


def _list_diagnostics(belief: Belief, index: int, found: list) -> None:
    """W306, W307, W308 for justification `index`."""
    j = belief.justifications[index]
    line = j.line or belief.line
    where = f"{belief.id!r} justification {index + 1}"
    if not j.antecedents and not j.outlist:
        found.append(Diagnostic(belief.path, line, "W306",
                                f"{where} has no antecedents and no outlist: always valid"))
    for name, ids in (("antecedents", j.antecedents), ("outlist", j.outlist)):
        for dup in sorted(i for i, n in Counter(ids).items() if n > 1):
            found.append(Diagnostic(belief.path, line, "W307", f"{where}: {dup!r} repeated in the {name}"))
    for both in sorted(set(j.antecedents) & set(j.outlist)):
        found.append(Diagnostic(belief.path, line, "W308",
                                f"{where}: {both!r} is in both antecedents and outlist (never valid)"))


def _reference_diagnostics(belief: Belief, beliefs: Mapping[str, Belief], found: list) -> None:
    for index, j in enumerate(belief.justifications):
        _list_diagnostics(belief, index, found)
        lines = j.ante_lines + j.out_lines
        refs = j.antecedents + j.outlist
        for k, ref in enumerate(refs):
            line = lines[k] if k < len(lines) else (j.line or belief.line)
            role = "antecedent" if k < len(j.antecedents) else "outlist member"
            if ref == belief.id:
                code = "W403" if role == "antecedent" else "E404"
                what = ("self-antecedent (ignored)" if code == "W403"
                        else "belief in its own outlist: this justification is never valid")
                found.append(Diagnostic(belief.path, line, code, f"{belief.id!r}: {what}"))
            elif ref not in beliefs:
                tags = j.ante_tags + j.out_tags
                tag = tags[k] if k < len(tags) else None
                assumed = (f"assumed {tag} from its tag" if tag in (IN, OUT) else
                           "treated as OUT" if role == "antecedent" else "does not block")
                found.append(Diagnostic(belief.path, line, "W401",
                                        f"{role} {ref!r} of justification {index + 1} is not in "
                                        f"the network: {assumed}"))


def _dependents(beliefs: Mapping[str, Belief]) -> dict[str, tuple[Dependent, ...]]:
    """Each belief's dependents, once each, sorted by (id, index, role)."""
    out: dict[str, list[Dependent]] = {b: [] for b in beliefs}
    for belief in beliefs.values():
        cites = belief.id
        for index, j in enumerate(belief.justifications):  # `references`, without a generator per belief
            for role, ids in (("antecedent", j.antecedents), ("outlist", j.outlist)):
                for ref in ids:
                    if ref != cites and ref in out:
                        out[ref].append(Dependent(cites, index, j.label, role))
    return {k: tuple(sorted(set(v), key=_DEPENDENT_ORDER)) if len(v) > 1 else tuple(v) for k, v in out.items()}


_DEPENDENT_ORDER = attrgetter("id", "index", "role")


def _depth(beliefs, order, component) -> dict[str, int]:
    """§1.5: premise 0; derived 1 + max antecedent depth (outlists, self, missing ignored)."""
    depth: dict[str, int] = {}
    for position, group in enumerate(order):
        best, derived = 0, False
        for m in group:
            belief = beliefs[m]
            derived |= not belief.is_premise
            for j in belief.justifications:
                for a in j.antecedents:
                    if a in beliefs and component[a] != position:
                        best = max(best, depth[a])
        for m in group:
            depth[m] = best + 1 if derived else 0
    return depth


def _trace(beliefs, order, limit: int) -> dict[str, tuple[str, ...]]:
    """Premises per belief (§1.6), each list capped at limit+1 so the total stays linear."""
    trace: dict[str, tuple[str, ...]] = {}
    for group in order:
        if len(group) == 1:
            (m,) = group
            if beliefs[m].is_premise:
                trace[m] = (m,)
                continue
        inside = set(group) if len(group) > 1 else group  # a cycle may hold thousands
        sources = [trace[a] for m in group for j in beliefs[m].justifications
                   for a in j.antecedents if a in beliefs and a not in inside]
        result = sources[0] if len(sources) == 1 else _merge(sources, limit + 1)
        for m in group:
            trace[m] = result
    return trace


def _merge(sources: list[tuple[str, ...]], cap: int) -> tuple[str, ...]:
    """The first `cap` premises in first-visit order. Every source is at most `cap` long, so
    merging them all in C and cutting after costs less than stopping early in Python."""
    return tuple(islice(dict.fromkeys(chain.from_iterable(sources)), cap))


def explain_valid(evaluation: Evaluation, belief: Belief, index: int) -> bool:
    """Whether justification `index` of `belief` holds under the computed values."""
    return justification_valid(belief.id, belief.justifications[index], evaluation.value,
                               evaluation.network.beliefs)
