"""Line numbers of network.json keys (diagnostics point at the node's line): the fast scan in
parse/network_json.py must find what the plain regex finds, on any formatting of any keys."""

from __future__ import annotations

import json
import re

from hypothesis import assume, given, settings
from hypothesis import strategies as st

from site_builder.parse import network_json
from site_builder.parse.network_json import _KeyLines, _key_lines

# The plain form of the pattern: a key first on its line (after any whitespace) opening an object.
PLAIN = re.compile(r'^\s*("(?:[^"\\]|\\.)*")\s*:\s*\{', re.M)


def plain_lines(text: str) -> dict[str, int]:
    lines: dict[str, int] = {}
    for match in PLAIN.finditer(text):
        try:
            key = json.loads(match.group(1))
        except ValueError:
            continue
        lines.setdefault(key, text.count("\n", 0, match.start(1)) + 1)
    return lines


keys = st.text(st.characters(codec="utf-8"), max_size=8)
values = st.recursive(st.none() | st.integers() | keys,
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                      max_leaves=12)


@settings(max_examples=300, derandomize=True)
@given(st.dictionaries(keys, values, max_size=4), st.sampled_from([None, 0, 1, 2, 4, "\t", "\r", "\r\n "]),
       st.sampled_from([(",", ": "), (",", ":"), (" , ", " : "), (",", "\n: "), (",", " :\n  ")]), st.booleans())
def test_the_scan_finds_the_lines_the_plain_pattern_finds(data, indent, separators, ascii_only):
    text = json.dumps({"nodes": data, **data}, indent=indent, separators=separators, ensure_ascii=ascii_only)
    assert _key_lines(text) == plain_lines(text)


def test_a_node_is_found_on_its_line():
    text = '{\n  "nodes": {\n    "a": {"text": "x"},\n\n    "b\\"c" : {\n    }\n  }\n}\n'
    assert _key_lines(text) == {"nodes": 2, "a": 3, 'b"c': 5}


ids = st.from_regex(r"[a-z0-9](?:[a-z0-9.-]{0,6}[a-z0-9])?", fullmatch=True)
node_values = st.dictionaries(st.sampled_from(["text", "metadata", "extra", "x"]), values, max_size=3)


@settings(max_examples=300, derandomize=True)
@given(st.dictionaries(ids, node_values, min_size=1, max_size=5), st.dictionaries(keys, values, max_size=2),
       st.sampled_from([None, 0, 1, 2, 4, "\t", "\r\n "]),
       st.sampled_from([(",", ": "), (",", ":"), (" , ", " : "), (",", "\n: ")]), st.booleans())
def test_node_lines_are_the_lines_the_plain_pattern_finds(nodes, top, indent, separators, ascii_only):
    """Node keys are looked for in file order (_KeyLines); any other key, and every key when a
    node's is not found that way, comes from the scan of the whole text: the same lines."""
    text = json.dumps({**top, "nodes": nodes}, indent=indent, separators=separators, ensure_ascii=ascii_only)
    inner = plain_lines(json.dumps(list(nodes.values()), indent=indent, separators=separators,
                                   ensure_ascii=ascii_only))
    assume(not set(nodes) & (set(inner) | set(top)))  # a node id also a key elsewhere: the first one counts
    expected = plain_lines(text)
    found = _KeyLines(text, json.loads(text)["nodes"])
    for key in [*nodes, *top, "nodes", "meta"]:
        assert found.get(key, 0) == expected.get(key, 0)


def test_node_lines_are_found_in_order_without_a_scan_of_every_key(monkeypatch):
    text = json.dumps({"meta": {}, "nodes": {f"b{k}": {"text": "x", "metadata": {"b9": {}}} for k in range(8)}},
                      indent=2)
    scans = []
    monkeypatch.setattr(network_json, "_key_lines", lambda t: scans.append(t) or plain_lines(t))
    found = _KeyLines(text, json.loads(text)["nodes"])
    assert [found.get(f"b{k}", 0) for k in range(8)] == [plain_lines(text)[f"b{k}"] for k in range(8)]
    assert scans == []  # asked for a node only: no scan
    assert found.get("meta", 0) == 2 and len(scans) == 1
