"""Read a ftl-reasons network.json, every schema generation of spec §2.1 and §4.

A file that is not JSON is E601 and is never repaired; a node with a bad id, truth value
or field type is E602 and left out; unknown keys are kept verbatim (W604).
"""

from __future__ import annotations

import json
import marshal
import re
from collections import Counter
from typing import Any

from ..diagnostics import QUOTED_AT_MOST, Diagnostic, quoted, short
from ..ids import id_problem
from ..load import SURROGATE_ESCAPE, SourceFile, joined_surrogates
from ..model import IN, NODE_FIELDS, OUT, STRING_FIELDS, Belief, Network, Nogood
from .fields import UNKNOWN_TYPE_HINT, justification_from_json, unknown_types
from .grammar import ACCEPTED_TYPES

#: Node keys the newest library writes beyond NODE_FIELDS (§2.1); kept in `extra` silently.
KNOWN_EXTRA = ("supporting_justification", "text_hash")
_NODE_KEYS = frozenset(NODE_FIELDS)
_TOP_KEYS = ("meta", "nodes", "nogoods", "repos")
# A key that opens an object, first on its line (a JSON object never starts with a key on its
# first line: it starts with `{`). Tried only at the start of a line where a key's closing
# quote meets `: {` (`_OPENS`), one line in ten in an export: the scan of a 7 MB export takes
# 0.033 s rather than 0.09 s over every line.
_KEY_LINE = re.compile(r'\n\s*("[^"\\]*(?:\\.[^"\\]*)*")\s*:\s*\{')
_OPENS = re.compile(r'"\s*:\s*\{')


def corrupt_hint(text: str) -> str:
    """Why a network.json might not parse, and what to do (never auto-repaired)."""
    first = text.split("\n", 1)[0][:60]
    if first.startswith("Written to"):
        return (f"the file starts with {first!r}: a command's status line overwrote its first "
                "bytes; restore it from version control (git checkout -- FILE) or export it "
                "again with `reasons export`; belief-site does not repair it")
    return "check that the file is a complete `reasons export` (JSON object with 'nodes')"


def _too_deep(source: SourceFile) -> Diagnostic:
    return Diagnostic(source.path, 1, "E601", "not a network export: arrays or objects nested too deeply to read",
                      corrupt_hint(source.text))


class _NotJsonNumber(ValueError):
    """NaN or Infinity: Python's json reads them, JSON has no such number (nor can a page show one)."""


def _no_constant(name: str) -> float:
    raise _NotJsonNumber(name)


_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)')
"""Strings, or such a value outside them: the first is where the decoder stopped (it does not say)."""


def _pairs_hook(duplicates: list[tuple[str, dict]]):
    def hook(pairs):
        found = dict(pairs)
        if len(found) < len(pairs):  # rare: count only then
            seen = Counter(k for k, _ in pairs)
            duplicates.extend((k, found) for k, n in seen.items() if n > 1)
        return found
    return hook


def _holders(nodes: dict) -> dict[int, str]:
    """id() of every object inside a node -> that node's id (made only when a key was
    duplicated: one walk, not one per duplicate)."""
    found: dict[int, str] = {}
    for node_id, node in nodes.items():
        stack = [node]
        while stack:  # not recursive: values may be nested hundreds deep
            value = stack.pop()
            if isinstance(value, dict):
                found[id(value)] = node_id
                stack.extend(value.values())
            elif isinstance(value, list):
                stack.extend(value)
    return found


def _key_lines(text: str) -> dict[str, int]:
    """First line of each `"key": {` in the text (for diagnostics), in one pass."""
    lines: dict[str, int] = {}
    line, position, previous = 1, 0, 0
    for opens in _OPENS.finditer(text):
        # Keys hold no newline: the last one before the key starts its line. Searched for only
        # back to the previous key (none: the same line, tried already, or the first line), so
        # that a file on one line is scanned once, not once per key.
        start = text.rfind("\n", previous, opens.start())
        previous = opens.start()
        if start < 0:
            continue
        match = _KEY_LINE.match(text, start)
        if match is None:
            continue
        line += text.count("\n", position, match.start(1))  # count only the new stretch
        position = match.start(1)
        quoted = match.group(1)
        try:
            key = quoted[1:-1] if "\\" not in quoted else json.loads(quoted)  # most keys: no escapes
        except ValueError:
            continue
        lines.setdefault(key, line)
    return lines


_OPENS_OBJECT = re.compile(r'\s*:\s*\{')


def _node_lines(text: str, nodes: dict) -> dict[str, int] | None:
    """The line of each node's key, as `_key_lines` finds it, looked for in file order (the
    order json gives the keys) from where the last one was found; None when one is not found
    that way (written with escapes, or not first on its line opening an object)."""
    lines: dict[str, int] = {}
    line, position = 1, 0
    for key in nodes:
        needle = f'"{key}"'
        at = text.find(needle, position)
        while at >= 0:
            start = text.rfind("\n", 0, at) + 1  # strings hold no newline: the key's line starts there
            if (start == at or text[start:at].isspace()) and _OPENS_OBJECT.match(text, at + len(needle)):
                break
            at = text.find(needle, at + 1)
        if at < 0:
            return None
        line += text.count("\n", position, at)
        position = at
        lines[key] = line
    return lines


class _KeyLines:
    """The line of a key, for diagnostics: a node's from `_node_lines` (0.018 s for 10,000
    nodes, where `_key_lines` scans every key in 0.036), any other key's (a duplicate, `meta`,
    an unknown top-level key), or every key's when a node's is not found in order, from
    `_key_lines`, made only when one is asked for."""

    def __init__(self, text: str, nodes: dict) -> None:
        self._text = text
        self._nodes = _node_lines(text, nodes)
        self._all: dict[str, int] | None = None

    def get(self, key: str, default: int) -> int:
        if self._nodes is not None and key in self._nodes:
            return self._nodes[key]
        if self._all is None:
            self._all = _key_lines(self._text)
        return self._all.get(key, default)

    def of_other(self, key: str, default: int) -> int:
        """The line of a node whose value is no object (written `null`): its key first on its
        line, two levels deep (not a field of that name inside another node)."""
        pattern = re.compile(rf'^[ \t]*{re.escape(json.dumps(key, ensure_ascii=False))}[ \t]*:', re.M)
        for found in pattern.finditer(self._text):
            if _depth(self._text, found.start()) == 2:
                return self._text.count("\n", 0, found.start()) + 1
        return default


_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]]')


def _depth(text: str, position: int) -> int:
    """How many objects and arrays are open at `position` (strings skipped; on errors only)."""
    depth = 0
    for token in _TOKEN.finditer(text, 0, position):
        if token.group() in "{[":
            depth += 1
        elif token.group() in "}]":
            depth -= 1
    return depth


class NodesRead:
    """The nodes a parse of one file read, for the next parse of it in the same process
    (serve's build process): a node that reads as before, at the same line, is not checked
    again, and keeps its Belief while the project's field set is the same. Nodes are compared
    by their marshal bytes, which tell `true` from `1`, `1` from `1.0` and one order of keys
    from another (== does not). Equal nodes may marshal differently (a key another node came
    to share is written as a back-reference): then the node is only read again.
    10,000 nodes take 0.15 s to check; comparing them with the last ones, 0.02 s."""

    def __init__(self) -> None:
        self.path = ""
        self.default: tuple[str, ...] = ()
        self.nodes: dict[str, _Read] = {}


_Read = tuple[bytes, int, tuple[Diagnostic, ...], "dict | None", "Belief | None"]
"""A node's marshal bytes, its line, its diagnostics, its Belief's fields (None: left out), its Belief."""


def _nodes(data: dict, path: str, lines: _KeyLines, found: list, last: NodesRead | None) -> dict[str, _Read]:
    """Each node as read; its diagnostics are added to `found`. A node the `last` parse read
    the same keeps that parse's reading (its Belief too)."""
    known = last.nodes if last is not None and last.path == path else {}
    read, shapes = {}, {}
    for node_id in sorted(data["nodes"]):
        node = data["nodes"][node_id]
        line = lines.get(node_id, 0) if isinstance(node, dict) else lines.of_other(node_id, 0)
        if last is None:  # no next parse to keep it for (0.3 s of 50,000 nodes)
            read[node_id] = (b"", line, (), _node(node_id, node, path, line, found, shapes), None)
            continue
        try:
            key = marshal.dumps(node)
        except ValueError:  # nested deeper than marshal goes: read it afresh
            key = b""
        before = known.get(node_id)
        if key and before is not None and before[1] == line and before[0] == key:
            found.extend(before[2])
            read[node_id] = before
            continue
        start = len(found)
        fields = _node(node_id, node, path, line, found, shapes)
        read[node_id] = (key, line, tuple(found[start:]), fields, None)
    return read


def parse_network_json(source: SourceFile, last: NodesRead | None = None) -> tuple[Network | None, list[Diagnostic]]:
    """Decoded network.json -> (Network or None when unreadable, diagnostics); with `last`,
    the nodes of the last parse of this file are taken where they read the same, and this
    parse's nodes are left in it."""
    path, found = source.path, []
    duplicates: list[tuple[str, dict]] = []
    try:
        data = json.loads(source.text, object_pairs_hook=_pairs_hook(duplicates), parse_constant=_no_constant)
    except _NotJsonNumber as exc:
        at = next((m.start(1) for m in _CONSTANT.finditer(source.text) if m.group(1)), 0)
        line = source.text.count("\n", 0, at) + 1
        return None, [Diagnostic(path, line, "E601", f"not valid JSON: {exc} is not a JSON number",
                                 "write it as a string, or leave the key out")]
    except json.JSONDecodeError as exc:
        found.append(Diagnostic(path, exc.lineno, "E601",
                                f"not valid JSON: {exc.msg} (line {exc.lineno} column {exc.colno})",
                                corrupt_hint(source.text)))
        return None, found
    except RecursionError:  # thousands of nested brackets: no export is like that
        return None, [_too_deep(source)]
    except ValueError as exc:  # a number of more than 4,300 digits (Python's limit on int())
        return None, [Diagnostic(path, 1, "E601", f"not valid JSON: {exc}", corrupt_hint(source.text))]
    if not isinstance(data, dict) or not isinstance(data.get("nodes"), dict):
        found.append(Diagnostic(path, 1, "E601", "not a network export: no 'nodes' object",
                                corrupt_hint(source.text)))
        return None, found
    lines = _KeyLines(source.text, data["nodes"])
    if SURROGATE_ESCAPE.search(source.text):  # rare: only escapes make surrogates
        try:
            data, lone = _joined(data)
        except RecursionError:  # hundreds of nested arrays: joining recurses per level
            return None, [*found, _too_deep(source)]
        if lone:
            key, where = lone
            found.append(Diagnostic(path, lines.get(key, 1), "E601",
                                    f"{where} holds a lone UTF-16 surrogate escape (such as \\ud800): "
                                    "no character, and no UTF-8 file can hold it",
                                    "write the character itself, or a complete surrogate pair"))
            return None, found
    holders = _holders(data["nodes"]) if duplicates else {}
    for dup, obj in duplicates:
        holder = holders.get(id(obj)) if obj is not data["nodes"] else None
        where = f" of node {holder!r}" if holder is not None else ""
        code = "E602" if holder is not None else "E204"  # E204: a node id (a belief) twice
        found.append(Diagnostic(path, lines.get(holder if holder is not None else dup, 1), code,
                                f"key {dup!r} appears twice in one object{where} (last one kept by JSON)"))
    for key in data:
        if key not in _TOP_KEYS:
            found.append(Diagnostic(path, lines.get(key, 1), "W604",
                                    f"unknown top-level key {key!r} (kept verbatim)"))
    read = _nodes(data, path, lines, found, last)
    valid = {node_id: entry[3] for node_id, entry in read.items() if entry[3] is not None}
    # The project's field set is the commonest among valid nodes (ties: the first by id); a
    # belief records its own set only when it differs.
    counted = Counter(f["json_fields"] for f in valid.values()).most_common(1)
    default = counted[0][0] if counted else NODE_FIELDS
    same = last is not None and last.path == path and last.default == default
    beliefs = {}
    for node_id, fields in valid.items():
        kept = read[node_id][4]
        if kept is None or not same:
            own = fields["json_fields"]
            kept = Belief(**{**fields, "json_fields": None if own == default else own})
            read[node_id] = (*read[node_id][:4], kept)
        beliefs[node_id] = kept
    if last is not None:
        last.path, last.default, last.nodes = path, default, read
    meta = data.get("meta")
    _check_meta(meta, len(data["nodes"]), path, lines, found)
    nogoods = _nogoods(data.get("nogoods", []), path, found, source.text)
    repos = data.get("repos", {})
    if not isinstance(repos, dict):
        at = max((m.start() for m in re.finditer(r'"repos"\s*:', source.text)), default=0)  # top level: last
        found.append(Diagnostic(path, source.text.count("\n", 0, at) + 1, "E602", "'repos' must be an object (ignored)"))
        repos = {}
    return Network(beliefs, nogoods, repos, meta if isinstance(meta, dict) else None,
                   default, extra={k: v for k, v in data.items() if k not in _TOP_KEYS},
                   pins_lost=True, origin=path), found


def _joined(data: dict) -> tuple[dict, tuple[str, str] | None]:
    """`data` with surrogate pairs joined (load.joined_surrogates), or where a lone surrogate
    sits: (the key that locates it, "node 'x'" or "key 'y'")."""
    parts = [(i, f"node {i!r}", [i, node]) for i, node in data["nodes"].items()]
    parts += [(k, f"key {k!r}", [k, v]) for k, v in data.items() if k != "nodes"]
    for key, where, part in parts:
        try:
            joined_surrogates(part)
        except ValueError:
            return data, (key, where)
    return joined_surrogates(data), None


def _node(node_id: str, node: Any, path: str, line: int, found: list, shapes: dict) -> dict[str, Any] | None:
    """One node -> the Belief's fields (`json_fields`: the keys it carries), or None with E602.
    `shapes`: what `_shape` found for each order of keys met in this file (most nodes share one)."""
    def bad(message: str) -> None:
        found.append(Diagnostic(path, line, "E602", f"node {quoted(node_id)}: {message} (node left out)"))

    problem = id_problem(node_id)
    if problem:
        return bad(f"invalid id: {problem}")
    if not isinstance(node, dict):
        return bad("must be an object")
    keys = tuple(node)
    shape = shapes.get(keys)
    if shape is None:
        shape = shapes[keys] = _shape(keys)
    strings, json_fields, extra_keys = shape
    text = node.get("text")
    if not isinstance(text, str):
        return bad("'text' must be a string")
    tv = node.get("truth_value", IN)
    if tv not in (IN, OUT):
        return bad(f"truth_value must be IN or OUT, not {tv!r}")
    if "truth_value" not in node:  # as a document without its status line
        found.append(Diagnostic(path, line, "W206", f"node {node_id!r}: no truth_value (IN assumed)",
                                "add \"truth_value\": \"IN\" or \"OUT\""))
    for key in strings:
        if not isinstance(node[key], str):
            return bad(f"{key!r} must be a string")
    metadata = node.get("metadata", {})
    if not isinstance(metadata, dict):
        return bad("'metadata' must be an object")
    listed = node.get("justifications", [])
    if not isinstance(listed, list):
        return bad("'justifications' must be a list")
    justs = []
    for j in listed:
        just, problem = justification_from_json(j)
        if problem:
            return bad(problem)
        justs.append(just)
    if any(j.type not in ACCEPTED_TYPES for j in justs):
        found += [Diagnostic(path, line, "E303", f"node {node_id!r}: {problem}", UNKNOWN_TYPE_HINT)
                  for problem in unknown_types(tuple(justs))]
    for key in extra_keys:
        if key not in KNOWN_EXTRA:
            found.append(Diagnostic(path, line, "W604", f"node {node_id!r}: unknown key {key!r} (kept verbatim)"))
    return dict(
        id=node_id, text=text, declared=tv, justifications=tuple(justs), metadata=metadata,
        extra={k: node[k] for k in extra_keys}, json_fields=json_fields, path=path, line=line,
        **{k: node[k] for k in strings})


def _shape(keys: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """For a node's keys in their order: its string fields (in STRING_FIELDS order, as they
    are checked), its NODE_FIELDS (in that order: `json_fields`) and its other keys (in its order)."""
    present = set(keys)
    return (tuple(k for k in STRING_FIELDS if k in present), tuple(k for k in NODE_FIELDS if k in present),
            tuple(k for k in keys if k not in _NODE_KEYS))


def _check_meta(meta: Any, count: int, path: str, lines: _KeyLines, found: list) -> None:
    if meta is None:
        return
    if not isinstance(meta, dict):
        found.append(Diagnostic(path, lines.get("meta", 1), "E602", "'meta' must be an object"))
        return
    stated = meta.get("node_count")
    if stated is not None and stated != count:
        found.append(Diagnostic(path, lines.get("meta", 1), "W603",
                                f"meta.node_count is {stated!r} but the file has {count} nodes"))


def line_of(text: str, needle: str, start: int = 0) -> int:
    """1-based line of the first occurrence of `needle` in `text` from `start` (0 when absent)."""
    at = text.find(needle, start)
    return text.count("\n", 0, at) + 1 if at >= 0 else 0


def _nogoods(data: Any, path: str, found: list, text: str) -> tuple[Nogood, ...]:
    start = max(text.find('"nogoods"'), 0)
    key_line = text.count("\n", 0, start) + 1
    if not isinstance(data, list):
        found.append(Diagnostic(path, key_line, "E602", "'nogoods' must be a list (ignored)"))
        return ()
    out = []
    for entry in data:
        named = isinstance(entry, dict) and isinstance(entry.get("id"), str)
        line = (line_of(text, json.dumps(entry["id"]), start) if named else 0) or key_line
        if not named or not isinstance(entry.get("nodes", []), list) or \
                not all(isinstance(n, str) for n in entry.get("nodes", [])):
            found.append(Diagnostic(path, line, "E602", f"malformed nogood {short(repr(entry), QUOTED_AT_MOST)} (ignored)"))
            continue
        extra = {k: v for k, v in entry.items() if k not in ("id", "nodes", "discovered", "resolution")}
        out.append(Nogood(entry["id"], tuple(entry.get("nodes", ())), entry.get("discovered", ""),
                          entry.get("resolution", ""), extra, line))
    return tuple(out)
