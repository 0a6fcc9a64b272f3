"""Line numbers of network.json keys (diagnostics point at the node's line): the fast scan in
parse/network_json.py must find what the plain regex finds, on any formatting of any keys."""

from __future__ import annotations

import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from site_builder.parse.network_json import _key_lines

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
