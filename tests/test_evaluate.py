"""Truth maintenance per spec §1.7 and §3.4, and the bounded per-belief questions."""

from __future__ import annotations

import sys

from site_builder.evaluate import evaluate
from site_builder.evaluate.queries import explain, impact, trace
from site_builder.evaluate.visibility import visible_ids
from site_builder.model import IN, OUT, Belief, Justification, Network, Nogood

from .conftest import BAD_CODE


def sl(*antecedents: str, unless: tuple[str, ...] = (), label: str = "", kind: str = "SL") -> Justification:
    return Justification(kind, tuple(antecedents), tuple(unless), label)


def net(*beliefs: Belief, pins_lost: bool = False) -> Network:
    return Network({b.id: b for b in beliefs}, pins_lost=pins_lost)


def premise(belief_id: str, declared: str = IN, **kw) -> Belief:
    return Belief(belief_id, f"claim {belief_id}", declared, **kw)


def derived(belief_id: str, *justs: Justification, declared: str = IN, **kw) -> Belief:
    return Belief(belief_id, f"claim {belief_id}", declared, justifications=justs, **kw)


def codes(ev) -> list[str]:
    return sorted(d.code for d in ev.diagnostics)


def test_derived_belief_is_in_when_all_antecedents_are_in():
    ev = evaluate(net(premise("a"), premise("b"), derived("c", sl("a", "b"))))
    assert ev.status == {"a": IN, "b": IN, "c": IN}
    assert ev.supporting["c"] == 0


def test_retracting_a_premise_takes_its_dependents_out_and_restoring_brings_them_back():
    chain = [derived("c", sl("a")), derived("d", sl("c"))]
    assert evaluate(net(premise("a", OUT), *chain)).status == {"a": OUT, "c": OUT, "d": OUT}
    # Stated values of derived beliefs are caches: the computed value wins both ways (W501).
    stale = [derived("c", sl("a"), declared=OUT), derived("d", sl("c"), declared=OUT)]
    ev = evaluate(net(premise("a"), *stale))
    assert ev.status == {"a": IN, "c": IN, "d": IN}
    assert codes(ev) == ["W501", "W501"]


def test_outlist_member_in_defeats_the_justification():
    ev = evaluate(net(premise("a"), premise("x"), derived("c", sl("a", unless=("x",)))))
    assert ev.status["c"] == OUT
    ev = evaluate(net(premise("a"), premise("x", OUT), derived("c", sl("a", unless=("x",)))))
    assert ev.status["c"] == IN


def test_outlist_only_justification_holds_unless():
    ev = evaluate(net(premise("x", OUT), derived("c", sl(unless=("x",)))))
    assert ev.status["c"] == IN


def test_justifications_are_disjunctive_and_the_newest_valid_one_supports():
    ev = evaluate(net(premise("a"), premise("b", OUT), derived("c", sl("a"), sl("b"), sl("a"))))
    assert ev.status["c"] == IN and ev.supporting["c"] == 2
    ev = evaluate(net(premise("a", OUT), premise("b", OUT), derived("c", sl("a"), sl("b"))))
    assert ev.status["c"] == OUT and ev.supporting["c"] is None


def test_cp_is_checked_like_sl_and_other_types_never_hold():
    ev = evaluate(net(premise("a"), derived("c", sl("a", kind="CP")), derived("d", sl("a", kind="XL"))))
    assert ev.status["c"] == IN and ev.status["d"] == OUT


def test_a_retracted_derived_belief_is_pinned_out():
    for marker in ({"retracted": True}, {"metadata": {"retract_reason": "wrong"}},
                   {"retracted_at": "2026-01-01T00:00:00+00:00"}):
        ev = evaluate(net(premise("a"), derived("c", sl("a"), declared=OUT, **marker),
                          derived("d", sl("c"))))
        assert ev.status == {"a": IN, "c": OUT, "d": OUT}, marker
        assert ev.is_pinned("c")


def test_unmarked_out_with_a_valid_justification_is_pinned_only_where_pins_are_lost():
    beliefs = (premise("a"), derived("c", sl("a"), declared=OUT))
    assert evaluate(net(*beliefs)).status["c"] == IN
    ev = evaluate(net(*beliefs, pins_lost=True))
    assert ev.status["c"] == OUT and "W502" in codes(ev)


def test_self_antecedent_is_ignored_and_self_outlist_never_holds():
    ev = evaluate(net(premise("a"), derived("c", sl("a", "c")), derived("d", sl("a", unless=("d",)), declared=OUT)))
    assert ev.status["c"] == IN and ev.status["d"] == OUT
    assert codes(ev) == ["E404", "W403"]
    assert ev.depth["c"] == 1


def test_dangling_antecedent_fails_and_dangling_outlist_does_not_block():
    ev = evaluate(net(premise("a"), derived("c", sl("a", "ghost"), declared=OUT),
                      derived("d", sl("a", unless=("ghost",)))))
    assert ev.status["c"] == OUT and ev.status["d"] == IN
    assert codes(ev) == ["W401", "W401"]


def test_external_ids_take_the_value_of_their_tag():
    tagged = Justification("SL", ("ext",), ("ext2",), ante_tags=(IN,), out_tags=(OUT,))
    ev = evaluate(net(derived("c", tagged)))
    assert ev.status["c"] == IN
    untagged = Justification("SL", ("ext",), (), ante_tags=("?",))
    assert evaluate(net(derived("c", untagged))).status["c"] == OUT


def test_positive_cycle_without_outside_support_goes_out():
    ev = evaluate(net(derived("x", sl("y")), derived("y", sl("x"))))
    assert ev.status == {"x": OUT, "y": OUT}
    assert codes(ev) == ["W405", "W501", "W501"]


def test_positive_cycle_with_outside_support_comes_in():
    ev = evaluate(net(premise("a"), derived("x", sl("y"), sl("a")), derived("y", sl("x"))))
    assert ev.status == {"a": IN, "x": IN, "y": IN}
    assert ev.depth["x"] == ev.depth["y"] == 1


def test_cycle_through_an_outlist_keeps_declared_values():
    ev = evaluate(net(premise("a"), derived("x", sl("a", unless=("y",))),
                      derived("y", sl("x"), declared=OUT)))
    assert ev.status == {"a": IN, "x": IN, "y": OUT}
    assert "W406" in codes(ev)


def test_dependents_record_justification_and_role():
    ev = evaluate(net(premise("a"), premise("x"), derived("c", sl("a", unless=("x",), label="because"))))
    (dep,) = ev.dependents["a"]
    assert (dep.id, dep.index, dep.label, dep.role) == ("c", 0, "because", "antecedent")
    assert ev.dependents["x"][0].role == "outlist"


def test_depth_ignores_outlists_and_counts_missing_as_zero():
    ev = evaluate(net(premise("a"), derived("b", sl("a")), derived("c", sl("b", unless=("a",))),
                      derived("d", sl("ghost")), derived("e", sl())))
    assert ev.depth == {"a": 0, "b": 1, "c": 2, "d": 1, "e": 1}


def test_explain_an_in_belief_walks_its_support_and_an_out_belief_its_causes():
    network = net(premise("a"), premise("b", OUT, metadata={"retract_reason": "refuted"}),
                  derived("c", sl("a")), derived("d", sl("c", "b")))
    ev = evaluate(network)
    steps = explain(ev, "c")
    assert [(s.id, s.reason) for s in steps.items] == [("c", "SL justification 1 valid"), ("a", "premise")]
    why_out = explain(ev, "d")
    assert why_out.items[0].justifications[0].failed == ("b",)
    assert why_out.items[1].reason == "retracted premise: refuted"
    assert why_out.complete and why_out.count == 2



def test_explanations_sharing_a_memo_explain_each_belief_once(monkeypatch):
    from site_builder.evaluate import queries
    network = net(premise("a"), premise("b", OUT), derived("c", sl("a")), derived("d", sl("c")),
                  derived("e", sl("d", "b")))
    ev = evaluate(network)
    alone = [explain(ev, i) for i in ("c", "d", "e")]
    calls = []
    real = queries.explain_step
    monkeypatch.setattr(queries, "explain_step", lambda ev, i: calls.append(i) or real(ev, i))
    memo: dict = {}
    shared = [explain(ev, i, steps_of=memo) for i in ("c", "d", "e")]
    assert shared == alone  # the same steps, counts and completeness
    assert sorted(calls) == ["a", "b", "c", "d", "e"]  # without the memo: c, a, d, c, a, e, d, c, a, b

def test_trace_lists_premises_in_first_visit_order():
    ev = evaluate(net(premise("p1"), premise("p2"), derived("c", sl("p2")),
                      derived("d", sl("c", "p1"), sl("p2"))))
    assert trace(ev, "d").items == ("p2", "p1")
    assert trace(ev, "p1").items == ("p1",)


def test_impact_of_retracting_and_of_asserting():
    network = net(premise("a"), premise("x", OUT), derived("c", sl("a")),
                  derived("g", sl(unless=("x",))), derived("h", sl("g")))
    ev = evaluate(network)
    assert impact(ev, "a").items == (("c", OUT),)
    assert impact(ev, "x").items == (("g", OUT), ("h", OUT))
    network = net(premise("a"), derived("g", sl(unless=("a",))))
    assert impact(evaluate(network), "a").items == (("g", IN),)


def _chain(n: int) -> Network:
    beliefs = [premise("b0")] + [derived(f"b{i}", sl(f"b{i - 1}")) for i in range(1, n)]
    return net(*beliefs)


def test_a_100000_belief_chain_needs_no_recursion():
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(200)  # anything recursive would fail at once
    try:
        ev = evaluate(_chain(100_000), limit=10)
        last = "b99999"
        assert ev.status[last] == IN and ev.depth[last] == 99_999
        assert trace(ev, last).items == ("b0",)
        steps = explain(ev, last)
        assert not steps.complete and steps.shown_count == "10+" and len(steps.items) == 10
        flipped = impact(ev, "b0")
        assert not flipped.complete and flipped.shown_count == "10+"
    finally:
        sys.setrecursionlimit(limit)


def test_per_belief_lists_are_bounded_on_a_wide_fan():
    beliefs = [premise("hub")] + [derived(f"d{i:05d}", sl("hub")) for i in range(5000)]
    ev = evaluate(net(*beliefs), limit=50)
    result = impact(ev, "hub")
    assert not result.complete and len(result.items) == 50 and result.shown_count == "50+"
    assert impact(ev, "d00001").complete and impact(ev, "d00001").count == 0
    wide = [premise(f"p{i:04d}") for i in range(300)] + [derived("all", sl(*[f"p{i:04d}" for i in range(300)]))]
    listed = trace(evaluate(net(*wide), limit=50), "all")
    assert not listed.complete and len(listed.items) == 50 and listed.shown_count == "50+"


def _networks():
    """Random networks: premises IN or OUT, justifications citing any id (later ones make
    cycles), missing ids and self-references included."""
    from hypothesis import strategies as st

    ids = [f"b{i}" for i in range(8)]
    refs = st.lists(st.sampled_from([*ids, "gone"]), max_size=3)
    just = st.builds(lambda a, o: sl(*a, unless=tuple(o)), refs, refs)

    @st.composite
    def build(draw):
        n = draw(st.integers(1, len(ids)))
        beliefs = []
        for belief_id in ids[:n]:
            justs = draw(st.lists(just, max_size=2))
            declared = draw(st.sampled_from([IN, OUT]))
            beliefs.append(derived(belief_id, *justs, declared=declared) if justs
                           else premise(belief_id, declared))
        return net(*beliefs)
    return build()


def _as_sets(ev):
    """An evaluation without the component numbering (any topological order is right)."""
    groups = {frozenset(ev.members.get(p, (i,))) for i, p in ev.component.items()}
    cycles = {frozenset(ev.members[p]) for p in ev.outlist_cycle}
    return (ev.status, ev.pinned, ev.supporting, ev.depth, ev.dependents, ev.trace, groups, cycles,
            ev.diagnostics)


def test_the_fast_order_of_acyclic_networks_evaluates_as_networkx_does(monkeypatch):
    """graphlib orders acyclic networks; networkx's condensation (every network with a cycle)
    must give the same evaluation on any network, acyclic ones included."""
    import graphlib

    from hypothesis import given, settings

    import site_builder.evaluate as evaluation

    class Cyclic(graphlib.TopologicalSorter):
        def static_order(self):
            raise graphlib.CycleError("forced")

    @settings(max_examples=300, deadline=None)
    @given(_networks())
    def check(network):
        fast = evaluate(network)
        monkeypatch.setattr(evaluation.graphlib, "TopologicalSorter", Cyclic)
        try:
            slow = evaluate(network)
        finally:
            monkeypatch.undo()
        assert _as_sets(fast) == _as_sets(slow)
    check()


def test_evaluating_an_acyclic_network_leaves_networkx_unloaded():
    """networkx costs 0.1 s to import, a tenth of an incremental build: only cycles need it."""
    import subprocess
    code = ("import sys\n"
            "from site_builder.evaluate import evaluate\n"
            "from tests.test_evaluate import _chain, net, premise, derived, sl\n"
            "evaluate(_chain(50))\n"
            "assert 'networkx' not in sys.modules, 'acyclic'\n"
            "evaluate(net(derived('a', sl('b')), derived('b', sl('a'))))\n"
            "assert 'networkx' in sys.modules, 'cycle'\n")
    root = str(__import__("pathlib").Path(__file__).resolve().parents[1])
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


# --- the previous evaluation (serve's build process keeps it) ------------------------------------

def test_a_previous_evaluation_stands_for_any_network_it_evaluates_the_same():
    """For any two networks, and any network and its copy with other claims, an evaluation
    given the first one's equals a fresh one."""
    from dataclasses import replace

    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(_networks(), _networks(), st.booleans(), st.text(max_size=4))
    def check(first, second, reworded, words):
        if reworded:
            second = replace(first, beliefs={i: replace(b, text=b.text + words, summary=words)
                                             for i, b in first.beliefs.items()})
        before = evaluate(first)
        again = evaluate(second, previous=before)
        assert again == evaluate(second) and again.network is second
        if reworded:  # taken, not computed again
            assert again.status is before.status and again.trace is before.trace
    check()


def test_an_evaluation_kept_as_plain_data_is_the_same_evaluation():
    """`as_data` and `from_data` (the build cache keeps evaluations between processes, in
    marshal): any network's evaluation comes back equal, its dependents in the same order."""
    import marshal

    from hypothesis import given, settings

    from site_builder.evaluate import as_data, from_data

    @settings(max_examples=300, deadline=None)
    @given(_networks())
    def check(network):
        before = evaluate(network)
        again = from_data(network, marshal.loads(marshal.dumps(as_data(before))))
        assert again == before and list(again.dependents) == list(before.dependents)
        assert all(type(d).__name__ == "Dependent" for ds in again.dependents.values() for d in ds)
    check()


def _input_changes() -> tuple[Network, list[Network], Network]:
    """A network, networks that change each field the evaluation reads, and one that changes
    a claim only."""
    from dataclasses import replace
    base = net(premise("p"), derived("d", sl("p", "gone"), declared=OUT, path="d.md", line=3),
               premise("q", declared=OUT))

    def changed(belief_id: str, **fields) -> Network:
        return replace(base, beliefs={**base.beliefs, belief_id: replace(base.beliefs[belief_id], **fields)})

    j = base.beliefs["d"].justifications[0]
    networks = [
        changed("d", line=4), changed("d", path="e.md"), changed("p", declared=OUT), changed("q", retracted=True),
        changed("q", retracted_at="2026-12-03"), changed("q", metadata={"retract_reason": "wrong"}),
        changed("d", justifications=(replace(j, label="other"),)), changed("d", justifications=(replace(j, line=9),)),
        changed("d", justifications=(replace(j, ante_lines=(4, 5)),)),
        changed("d", justifications=(replace(j, ante_tags=(None, IN)),)),
        changed("d", justifications=(j, sl("q"))),
        replace(base, nogoods=(Nogood("n1", ("p", "q")),)), replace(base, pins_lost=True),
        replace(base, origin="other.json"),
        Network({i: base.beliefs[i] for i in ("q", "p", "d")}),  # another order: ties and traces follow it
    ]
    return base, networks, changed("d", text="other words")


def test_every_input_of_the_evaluation_is_compared():
    """A change of any field the evaluation reads is evaluated afresh, locations included
    (diagnostics carry them)."""
    base, networks, reworded = _input_changes()
    before = evaluate(base)
    for network in networks:
        again = evaluate(network, previous=before)
        assert again.status is not before.status and again == evaluate(network), network
    assert evaluate(base, limit=5, previous=before).limit == 5
    assert evaluate(reworded, previous=before).status is before.status


def test_the_build_cache_keeps_an_evaluation_for_its_inputs_limit_and_code(tmp_path, monkeypatch):
    """cache.kept_evaluation: taken for a network whose every input is the kept one's (a claim
    edit), never for one that changes any, another limit or other code, nor from a damaged file."""
    from site_builder import cache

    base, networks, reworded = _input_changes()
    with cache.locked(tmp_path):  # a build held it: the folder is vouched for (cache.vouched)
        pass
    cache.keep_evaluation(tmp_path, evaluate(base))
    assert cache.kept_evaluation(tmp_path, reworded, 100) == evaluate(reworded)
    assert cache.kept_evaluation(tmp_path, reworded, 100).network is reworded
    for network in networks:
        assert cache.kept_evaluation(tmp_path, network, 100) is None, network
    assert cache.kept_evaluation(tmp_path, base, 5) is None
    kept = tmp_path / cache.EVALUATION
    data = kept.read_bytes()
    for damaged in (data[:-1], data[:-3] + b"xyz", b"", data.partition(b"\n")[0]):
        kept.write_bytes(damaged)
        assert cache.kept_evaluation(tmp_path, base, 100) is None
    head = data.split(b"\n", 2)[1]
    kept.write_bytes(cache._sealed(head + b"\n" + BAD_CODE))  # sealed, yet marshal fails (SystemError)
    assert cache.kept_evaluation(tmp_path, base, 100) is None
    kept.write_bytes(data)
    assert cache.kept_evaluation(tmp_path, base, 100) == evaluate(base)
    monkeypatch.setattr(cache, "code_digest", lambda: "another version")
    assert cache.kept_evaluation(tmp_path, base, 100) is None


def test_malformed_access_tags_hide_a_belief_and_what_rests_on_it_from_any_audience():
    ev = evaluate(net(premise("open"), premise("odd", metadata={"access_tags": {"team": True}}),
                      premise("tagged", metadata={"access_tags": "team"}),
                      derived("above", sl("open", "odd")), derived("fine", sl("open", "tagged"))))
    allowed = ("team", "True", "{'team': True}")  # what a str() of the malformed value could give
    assert visible_ids(ev, allowed) == {"open", "tagged", "fine"}
    assert visible_ids(ev, None) == set(ev.network.beliefs)
    none = evaluate(net(premise("open", metadata={"access_tags": None}), derived("ext", sl("open", "elsewhere"))))
    assert visible_ids(none, ()) == {"open", "ext"}  # null: no tags; an unknown id: external
    assert visible_ids(none, (), incomplete=True) == {"open"}  # ...unless files were left out
