"""network.json read again in the same process (serve's build process): nodes that read as
before keep their reading (parse/network_json.NodesRead), and the result is always what a
fresh parse gives."""

from __future__ import annotations

import json
from pathlib import PurePosixPath

from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder.load import SourceFile
from site_builder.parse import network_json
from site_builder.parse.network_json import NodesRead, parse_network_json


def _source(nodes: dict, path: str = "network.json", **top) -> SourceFile:
    text = json.dumps({"nodes": nodes, **top}, indent=2)
    return SourceFile(path, PurePosixPath(path), text)


def _fresh(source: SourceFile):
    network, found = parse_network_json(source)
    return network, sorted(found, key=lambda d: d.sort_key())


def _again(source: SourceFile, last: NodesRead):
    network, found = parse_network_json(source, last)
    return network, sorted(found, key=lambda d: d.sort_key())


def _same_reading(one, other) -> bool:
    """The same networks, field by field: repr keeps what == leaves out (the order of a
    dict's keys, which pages, exports and content hashes keep; a Belief's path and line)."""
    (a, da), (b, db) = one, other
    return a == b and da == db and all(
        repr(x) == repr(y) and (x.path, x.line) == (y.path, y.line)
        for x, y in zip(a.beliefs.values(), b.beliefs.values(), strict=True))


scalars = st.none() | st.booleans() | st.integers(-2, 2) | st.sampled_from([0.0, 1.0, 2.5]) | st.text(max_size=3)
metadata = st.dictionaries(st.sampled_from(["a", "b", "retract_reason"]), scalars, max_size=3)  # any order
node = st.fixed_dictionaries(
    {"text": st.sampled_from(["claim", "other claim"]),
     "truth_value": st.sampled_from(["IN", "OUT"])},
    optional={"metadata": metadata | scalars,  # not an object: E602
              "justifications": st.lists(st.fixed_dictionaries(
                  {"type": st.just("SL"), "antecedents": st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)}),
                  max_size=2),
              "source": st.sampled_from(["", "src"]),
              "odd": scalars})  # an unknown key: W604
networks = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "Bad Id"]), node, max_size=5)


@settings(max_examples=300, deadline=None)
@given(st.lists(networks, min_size=2, max_size=4))
def test_reading_again_gives_what_a_fresh_parse_gives(versions):
    last = NodesRead()
    for nodes in versions:
        source = _source(nodes)
        assert _same_reading(_again(source, last), _fresh(source))


def test_a_node_read_as_before_keeps_its_belief_and_a_changed_one_is_read_again(monkeypatch):
    nodes = {"a": {"text": "one", "truth_value": "IN", "metadata": {"n": 1}}, "b": {"text": "two", "truth_value": "IN", "odd": 1},
             "c": {"text": "three", "truth_value": "IN", "metadata": {}}}
    last = NodesRead()
    first, found = parse_network_json(_source(nodes), last)
    assert [d.code for d in found] == ["W604"]
    checked = []
    real = network_json._node
    monkeypatch.setattr(network_json, "_node", lambda i, *rest: checked.append(i) or real(i, *rest))

    same, found = parse_network_json(_source(nodes), last)
    assert checked == [] and all(same.beliefs[i] is first.beliefs[i] for i in nodes)
    assert [d.code for d in found] == ["W604"]  # a kept node's diagnostics come again

    # JSON equality is not enough: true == 1 and 1 == 1.0 in Python, not in the file, and
    # == leaves out the order of keys, which pages, exports and content hashes keep
    # (the last node changes: the lines of those before it stay; its keys are its own, as a
    # key shared with another node marshals with a back-reference: a re-read, never a wrong one)
    for metadata in ({"p": True}, {"p": 1}, {"p": 1.0}, {"p": 1.0, "q": 2}, {"q": 2, "p": 1.0}):
        changed = {**nodes, "c": {"text": "three", "truth_value": "IN", "metadata": metadata}}
        again, _ = parse_network_json(_source(changed), last)
        assert checked == ["c"] and repr(again.beliefs["c"].metadata) == repr(metadata)
        assert again.beliefs["a"] is first.beliefs["a"] and again.beliefs["b"] is first.beliefs["b"]
        checked.clear()
    moved = _source(nodes, meta={"note": "a line\nabove"})  # the same nodes, on other lines
    again, _ = parse_network_json(SourceFile("network.json", PurePosixPath("network.json"),
                                             moved.text.replace('"nodes": {', '"nodes": {\n', 1)), last)
    assert sorted(checked) == ["a", "b", "c"]
    parse_network_json(_source(nodes), last)
    checked.clear()
    elsewhere, _ = parse_network_json(_source(nodes, path="other.json"), last)  # the same text, another file
    assert sorted(checked) == ["a", "b", "c"] and elsewhere.beliefs["a"].path == "other.json"


def test_a_new_commonest_field_set_builds_every_belief_again():
    """A belief records its own field set only where it differs from the project's, the
    commonest one: when that changes, a node read as before needs a new Belief."""
    last = NodesRead()
    before = {"a": {"text": "one", "source": "x"}, "b": {"text": "two", "source": "y"}, "c": {"text": "three"}}
    parse_network_json(_source(before), last)
    after = {**before, "d": {"text": "four"}, "e": {"text": "five"}}
    again, _ = parse_network_json(_source(after), last)
    fresh, _ = parse_network_json(_source(after))
    assert [b.json_fields for b in again.beliefs.values()] == [b.json_fields for b in fresh.beliefs.values()]
    assert again.beliefs["a"].json_fields == ("text", "source")


def test_a_parse_with_no_next_one_keeps_nothing(monkeypatch):
    """Marshalling every node costs 0.3 s at 50,000 nodes: only for a parse that keeps them."""
    class Unused:
        def dumps(self, value):
            raise AssertionError("marshalled with no NodesRead to keep it")

    monkeypatch.setattr(network_json, "marshal", Unused())
    network, _ = parse_network_json(_source({"a": {"text": "one"}, "b": {"text": "two"}}))
    assert sorted(network.beliefs) == ["a", "b"]
