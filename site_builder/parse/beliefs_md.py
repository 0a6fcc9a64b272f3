"""Read a legacy beliefs.md (`reasons export-markdown`, ftl-beliefs; spec §2.2).

beliefs.md is lossy, so this reader keeps everything the file does say and reports what
it cannot say: W701 once per file (what the format never records) and once per belief
whose justifications were flattened; E702 for every line it cannot place. Unlike the
library's importer it keeps dangling ids, ids containing `.`, extra text lines and
unknown `- Key: value` lines (under metadata `beliefs_md_extra`, with W701).

`- Defeated by: d (type[, reason type])` puts `d` in the outlist and writes the defeater
metadata the export was printed from (`defeater_type`, `defeats_node`, `defeat_reason_type`,
and `defeats_justification` 0, the one flattened justification) back onto belief `d`, so a
re-export prints the same line; when `d` is absent the text is kept in `beliefs_md_extra`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..diagnostics import Diagnostic, quoted
from ..ids import id_problem
from ..load import SourceFile
from ..model import IN, OUT, Belief, Justification, Network, Nogood
from .frontmatter import YamlProblem, load_yaml

#: Metadata key holding `- Key: value` lines this reader does not model, verbatim by key.
EXTRA_KEY = "beliefs_md_extra"
_CLAIM = re.compile(r"### (?P<id>\S+) \[(?P<status>IN|OUT|STALE)\](?:[ \t]+(?P<type>.*?))?\s*")
_NOGOOD = re.compile(r"### (?P<id>nogood-[^\s:]+)(?::[ \t]*(?P<desc>.*?))?\s*")
_KEY = re.compile(r"- (?P<key>[A-Za-z][\w -]*?): ?(?P<value>.*)")
_DEFEATER = re.compile(r"(?P<id>\S+)(?:\s+\((?P<label>[^()]*)\))?\s*")
# `- Key:` (lower-cased) -> Belief field, and -> metadata key, as the library importer maps them.
_FIELDS = {k: k.replace(" ", "_") for k in ("source", "source url", "source hash", "date")}
_META = {k: k.replace(" ", "_") for k in (
    "source type", "stale reason", "duplicate of", "superseded by", "accepted pr")}
_LISTS = {"depends on": "antecedents", "unless": "outlist"}
_NOGOOD_KEYS = {"discovered", "resolution", "affects", "discovered by"}
_SKIP = object()  # the current block was left out (E702 already reported)
_NEVER_RECORDED = (
    "beliefs.md never records justification labels, how antecedents split into several "
    "justifications, timestamps (created/updated/reviewed/verified/retracted), the defeated "
    "justification's index, whether 'Stale reason' was a retract_reason, or metadata beyond "
    "source type, stale reason, duplicate of, superseded by, accepted PR and beliefs type")


@dataclass
class _Block:
    """One `###` block being read: a claim or a nogood."""

    kind: str
    id: str
    line: int
    status: str = IN
    type: str = ""
    text: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)
    refs: dict[str, list[tuple[str, int]]] = field(
        default_factory=lambda: {"antecedents": [], "outlist": []})
    defeaters: list[tuple[str, str, int]] = field(default_factory=list)
    extra: dict[str, str] = field(default_factory=dict)


def _ids(value: str) -> list[str]:
    return [part.strip() for part in value.split(",") if part.strip()]


class _Reader:
    """Line-by-line state machine; collects blocks, repos, meta and diagnostics."""

    def __init__(self, path: str):
        self.path = path
        self.found: list[Diagnostic] = []
        self.meta: dict[str, Any] | None = None
        self.count_line = 0
        self.repos: dict[str, str] = {}
        self.section: str | None = None
        self.block: _Block | object | None = None
        self.claims: dict[str, _Block] = {}
        self.nogoods: list[_Block] = []
        self.headers = 0

    def diag(self, line: int, code: str, message: str, hint: str = "") -> None:
        self.found.append(Diagnostic(self.path, line, code, message, hint))

    def read(self, text: str) -> None:
        lines = text.split("\n")
        for number in range(self._front_matter(lines), len(lines)):
            self._line(number + 1, lines[number])
        self.block = None

    def _front_matter(self, lines: list[str]) -> int:
        """Read YAML front matter into meta; return the index of the first body line."""
        if lines[0].rstrip() != "---":
            return 0
        end = next((i for i in range(1, len(lines)) if lines[i].rstrip() == "---"), None)
        if end is None:
            self.diag(1, "E105", "front matter is not terminated by '---' (read as body)")
            return 1
        try:
            data = load_yaml("\n".join(lines[1:end]))
        except YamlProblem as exc:
            self.diag(exc.line + 1, "E105", f"invalid front matter: {exc}")
            return end + 1
        if not isinstance(data, dict):
            self.diag(1, "E105", "front matter must be a map (ignored)")
            return end + 1
        # The writer prints an empty project_name as a bare key, which YAML reads as null.
        self.meta = {k: "" if v is None else v for k, v in data.items()}
        self.count_line = next((i + 1 for i in range(1, end)
                                if lines[i].startswith("node_count:")), 1)
        return end + 1

    def _line(self, n: int, line: str) -> None:
        stripped = line.strip()
        if not stripped and isinstance(self.block, _Block) and self.block.kind == "claim" and self.block.text:
            self.block.text.append("")  # between two paragraphs of a claim (trailing ones go: _belief)
            return
        if not stripped or (stripped.startswith("<!--") and stripped.endswith("-->")):
            return  # layout and the "Generated by" comment carry no data
        if line.startswith("## "):
            self._section(n, stripped[3:].strip())
        elif line.startswith("### "):
            self._header(n, line)
        elif self.block is _SKIP:
            return  # inside a block already reported as left out
        elif isinstance(self.block, _Block):
            (self._claim_line if self.block.kind == "claim" else self._nogood_line)(n, line)
        elif self.section == "repos":
            self._repo(n, line)
        elif line.startswith("# ") and self.section is None:
            return  # the `# Belief Registry` / `# Nogoods` title
        else:
            self.diag(n, "E702", "line outside any claim or nogood block (not imported)")

    def _section(self, n: int, name: str) -> None:
        self.block = None
        self.section = name.lower() if name.lower() in ("repos", "claims", "nogoods") else "?"
        if self.section == "?":
            self.diag(n, "E702", f"unknown section '## {name}' (its lines are not imported)",
                      "beliefs.md has the sections Repos, Claims and Nogoods")

    def _header(self, n: int, line: str) -> None:
        self.block = _SKIP
        claim, nogood = _CLAIM.fullmatch(line), _NOGOOD.fullmatch(line)
        if claim:
            self.headers += 1
            self._start_claim(n, claim)
        elif nogood:
            block = _Block("nogood", nogood["id"], n)
            if nogood["desc"]:
                block.metadata["description"] = nogood["desc"]
            self.nogoods.append(block)
            self.block = block
        else:
            self.diag(n, "E702", "heading not understood: its block is left out",
                      "expected '### <id> [IN|OUT|STALE] <TYPE>' or '### nogood-NNN'")

    def _start_claim(self, n: int, match: re.Match) -> None:
        belief_id = match["id"]
        problem = id_problem(belief_id)
        if problem:
            self.diag(n, "E702", f"invalid id {quoted(belief_id)}: {problem} (block left out)")
        elif belief_id in self.claims:
            self.diag(n, "E702", f"id {belief_id!r} repeats the claim at line "
                                 f"{self.claims[belief_id].line} (this block left out)")
        else:
            self.block = self.claims[belief_id] = _Block(
                "claim", belief_id, n, match["status"], match["type"] or "")

    def _claim_line(self, n: int, line: str) -> None:
        block = self.block
        match = _KEY.fullmatch(line)
        key = match["key"].lower() if match else ""
        known = key in _FIELDS or key in _META or key in _LISTS or key == "defeated by"
        if not known and (n == block.line + 1 or not match):
            block.text.append(line)  # the claim text; later lines are kept too, never dropped
        elif key in _LISTS:
            block.refs[_LISTS[key]] += [(ref, n) for ref in self._listed(n, match["key"], match["value"])]
        elif key == "defeated by":
            self._defeated_by(n, match["value"])
        elif key in _FIELDS and _FIELDS[key] not in block.fields:
            block.fields[_FIELDS[key]] = match["value"]
        elif key in _META and _META[key] not in block.metadata:
            block.metadata[_META[key]] = match["value"]
        else:  # unknown or repeated key: keep it verbatim and say so
            self._keep_extra(n, block, match["key"], match["value"])

    def _listed(self, n: int, key: str, value: str) -> list[str]:
        """The ids of a `- Depends on:` or `- Unless:` line; an empty entry or an invalid id is E702."""
        ids = []
        for part in (p.strip() for p in value.split(",")):
            problem = id_problem(part) if part else "empty entry"
            if problem:
                self.diag(n, "E702", f"'- {key}:' {quoted(part) + ': ' if part else ''}{problem} (left out)",
                          "list ids separated by ', '")
            else:
                ids.append(part)
        return ids

    def _defeated_by(self, n: int, value: str) -> None:
        match = _DEFEATER.fullmatch(value.strip())
        if match:
            self.block.defeaters.append((match["id"], match["label"] or "", n))
        else:
            self.diag(n, "E702", f"'Defeated by' value {quoted(value)} not understood",
                      "expected '- Defeated by: <id> (<type>)'")

    def _keep_extra(self, n: int, block: _Block, key: str, value: str,
                    why: str = "is not a field this reader maps (or repeats one)") -> None:
        extra = block.extra
        extra[key] = f"{extra[key]}\n{value}" if key in extra else value
        self.diag(n, "W701", f"'- {key}:' {why}: kept verbatim in {block.id}'s metadata "
                             f"{EXTRA_KEY}[{key!r}]")

    def _nogood_line(self, n: int, line: str) -> None:
        block = self.block
        match = _KEY.fullmatch(line)
        key = match["key"].lower() if match else ""
        slot = key.replace(" ", "_")
        if not match:
            self.diag(n, "E702", f"line in nogood {block.id} not understood (not imported)")
        elif key in _NOGOOD_KEYS and slot not in block.metadata:
            block.metadata[slot] = _ids(match["value"]) if key == "affects" else match["value"]
        else:
            self._keep_extra(n, block, match["key"], match["value"])

    def _repo(self, n: int, line: str) -> None:
        name, colon, path = line[2:].partition(":") if line.startswith("- ") else ("", "", "")
        if colon and name.strip() in self.repos and self.repos[name.strip()] != path.strip():
            self.diag(n, "E702", f"repo {name.strip()!r} listed again with another path (the last kept)")
        if colon and name.strip():
            self.repos[name.strip()] = path.strip()
        else:
            self.diag(n, "E702", "Repos line not understood (expected '- name: path')")

    def network(self) -> Network:
        """The blocks read so far as a Network."""
        self._restore_defeaters()
        beliefs = {b.id: self._belief(b) for b in sorted(self.claims.values(), key=lambda b: b.id)}
        stated = (self.meta or {}).get("node_count")
        if isinstance(stated, int) and stated != self.headers:
            self.diag(self.count_line, "W603",
                      f"node_count is {stated} but the file has {self.headers} claims")
        return Network(beliefs, tuple(self._nogood(b) for b in self.nogoods), self.repos,
                       self.meta, pins_lost=True, origin=self.path)

    def _restore_defeaters(self) -> None:
        """Give each defeater back the metadata `Defeated by` was printed from."""
        for block in self.claims.values():
            for defeater, label, n in block.defeaters:
                kind, _, reason = (part.strip() for part in label.partition(","))
                target = self.claims.get(defeater)
                if target and target.metadata.get("defeats_node", block.id) == block.id:
                    # One flattened justification, so the defeated index is 0 in our network.
                    target.metadata.update(defeater_type=kind or "defeater", defeats_node=block.id,
                                           defeats_justification=0)
                    if reason:
                        target.metadata["defeat_reason_type"] = reason
                else:  # no such claim, or it already defeats another one: keep the text
                    self._keep_extra(n, block, "Defeated by", f"{defeater} ({label})",
                                     "names no claim free to carry the defeater type")

    def _belief(self, block: _Block) -> Belief:
        ante, out = block.refs["antecedents"], block.refs["outlist"]
        out = out + [(d, n) for d, _, n in block.defeaters]
        justified = bool(ante or out)
        metadata = dict(block.metadata)
        if block.type and block.type != ("DERIVED" if justified else "OBSERVATION"):
            metadata["beliefs_type"] = block.type
        if block.extra:
            metadata[EXTRA_KEY] = dict(block.extra)
        justs = ()
        if justified:
            justs = (Justification("SL", tuple(r for r, _ in ante), tuple(r for r, _ in out),
                                   line=block.line, ante_lines=tuple(n for _, n in ante),
                                   out_lines=tuple(n for _, n in out)),)
            self.diag(block.line, "W701", f"{block.id!r}: 'Depends on' and 'Unless' read as one "
                      "SL justification; labels and alternative justifications are not recorded")
        elif block.type == "DERIVED":
            self.diag(block.line, "W701", f"{block.id!r} is DERIVED but lists no antecedents: "
                      "its justifications are not recorded; read as a premise")
        text = "\n".join(block.text).strip("\n")
        if not text:
            self.diag(block.line, "E702", f"claim {block.id!r} has no text (the line after its heading)")
        return Belief(
            id=block.id, text=text,
            declared=IN if block.status == IN else OUT, retracted=block.status == "STALE",
            justifications=justs, metadata=metadata, path=self.path, line=block.line,
            **block.fields)

    @staticmethod
    def _nogood(block: _Block) -> Nogood:
        meta = dict(block.metadata)
        nodes = tuple(meta.pop("affects", ()))
        discovered, resolution = meta.pop("discovered", ""), meta.pop("resolution", "")
        meta.update({EXTRA_KEY: dict(block.extra)} if block.extra else {})
        return Nogood(block.id, nodes, discovered, resolution, meta)


def parse_beliefs_md(source: SourceFile) -> tuple[Network, list[Diagnostic]]:
    """Decoded beliefs.md -> (Network, diagnostics); never raises on content."""
    reader = _Reader(source.path)
    reader.read(source.text)
    network = reader.network()
    reader.diag(1, "W701", _NEVER_RECORDED, "import from network.json instead when you have it")
    return network, reader.found
