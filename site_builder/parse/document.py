"""Read one belief document, line by line, per the grammar of spec §3.2.

Every line ends up as data, as recognised derived content (kept in `Stated` and in the
line layout that `fmt` rewrites), or as the subject of a diagnostic. No Markdown
tokenizer is involved: text lines such as `---` or `1.` stay text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Mapping

from ..diagnostics import Diagnostic, quoted
from ..ids import id_from_document_path, id_problem
from ..load import SourceFile
from ..model import IN, OUT, Belief, Item, Justification, Stated
from . import grammar as g
from .frontmatter import YamlProblem, load_yaml
from .fields import FRONT_KEYS, UNKNOWN_TYPE_HINT, front_to_fields, unknown_types

# Line roles in the layout (what fmt may rewrite).
DATA, STATUS, COUNT, ITEM, DEPENDENT, CHALLENGE = "data", "status", "count", "item", "dependent", "challenge"


@dataclass(frozen=True, slots=True)
class Line:
    """One physical line of a document and what it means."""

    text: str
    role: str = DATA
    match: re.Match | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True)
class Document:
    """A parsed document: its belief (None when excluded), stated derived content, layout."""

    source: SourceFile
    belief: Belief | None
    stated: Stated
    lines: tuple[Line, ...]
    diagnostics: tuple[Diagnostic, ...]
    markdown: bool
    """True for the Markdown spelling (`# id`), False for the seed's plain text."""
    dependents_anchor: int | None = None
    """Index of the line after which Dependents items belong (header or sentence)."""

    def facts(self) -> "Facts":
        """What checks and builds read of this document (not its line layout)."""
        echoes = {k + 1: line.match.group("echo") for k, line in enumerate(self.lines)
                  if line.role == ITEM and line.match and line.match.group("rest")
                  and line.match.group("echo") is not None}
        return Facts(self.source.path, self.source.relative.as_posix(), self.belief, self.stated,
                     self.diagnostics, echoes, self.dependents_anchor)


@dataclass(frozen=True, slots=True)
class Facts:
    """A parsed document without its line layout, which only fmt reads: small enough for the
    build's cache to keep (site_builder.documents_cache), a tenth of a Document's size."""

    path: str
    """The document's path as diagnostics show it."""
    relative: str
    """Its POSIX path relative to the documents folder."""
    belief: Belief | None
    stated: Stated
    diagnostics: tuple[Diagnostic, ...]
    echoes: Mapping[int, str]
    """Line -> the claim echoed after a justification item on that line (W503 compares it)."""
    dependents_anchor: int | None = None


class _Reader:
    """State of one pass over a document's lines."""

    def __init__(self, source: SourceFile):
        self.src = source
        self.raw = source.text.split("\n")
        self.lines = [Line(t) for t in self.raw]
        self.found: list[Diagnostic] = []
        self.fields: dict[str, Any] = {}
        self.front: dict[str, Any] = {}
        self.excluded = False
        self.i = 0
        self.stated: dict[str, Any] = {}
        self.dep_anchor: int | None = None
        self.field_lines: dict[str, int] = {}  # field -> the line the body gave it on

    # -- helpers -------------------------------------------------------------------------
    def diag(self, index: int, code: str, message: str, hint: str = "") -> None:
        """Record a diagnostic at 0-based line `index`."""
        self.found.append(Diagnostic(self.src.path, index + 1, code, message, hint))
        if code in ("E105", "E201", "E202"):
            self.excluded = True

    def put(self, index: int, field: str, value: str, name: str) -> None:
        """A field the body gives on line `index`: given again with another value, E107 (the
        last kept), so that neither value is dropped unseen."""
        if field in self.fields and self.fields[field] != value:
            self.diag(index, "E107", f"{name} given twice with different values: {self.fields[field]!r} "
                      f"(line {self.field_lines[field] + 1}) and {value!r} (this one kept)")
        self.fields[field], self.field_lines[field] = value, index

    def body(self, index: int) -> str:
        """Line content without trailing spaces (they are not content, §3.2)."""
        return self.raw[index].rstrip()

    def mark(self, index: int, role: str, match: re.Match | None = None) -> None:
        self.lines[index] = Line(self.raw[index], role, match)

    def skip_blank(self) -> None:
        while self.i < len(self.raw) and not self.body(self.i):
            self.i += 1

    # -- front matter and head --------------------------------------------------------------
    def front_matter(self) -> None:
        if self.raw[0] != "---":
            return
        for end in range(1, len(self.raw)):
            if self.raw[end] in ("---", "..."):
                break
        else:
            self.diag(0, "E105", "front matter is not terminated", "close it with a line '---'")
            return
        try:
            data = load_yaml("\n".join(self.raw[1:end]) + "\n")
        except YamlProblem as exc:
            self.diag(exc.line, "E105", f"invalid front matter: {exc}")
            return
        if data is None:
            data = {}
        if not isinstance(data, dict):
            self.diag(1, "E105", "front matter must be a map of keys")
            return
        for key in data:
            if key not in FRONT_KEYS:
                self.diag(self._key_line(key, end), "E106", f"unknown front matter key {key!r}",
                          "allowed: " + ", ".join(FRONT_KEYS))
        fields, problems = front_to_fields({k: v for k, v in data.items() if k in FRONT_KEYS})
        for key, problem in problems:
            self.diag(self._key_line(key, end), "E105", f"front matter {key!r}: {problem}")
        for problem in unknown_types(fields.get("justifications", ())):
            self.diag(self._key_line("justifications", end), "E303", f"front matter {problem}", UNKNOWN_TYPE_HINT)
        for k, j in enumerate(fields.get("justifications", ())):  # as an item of the body is (E304)
            for ref, problem in ((r, id_problem(r)) for r in (*j.antecedents, *j.outlist)):
                if problem:
                    self.diag(self._key_line("justifications", end), "E304",
                              f"front matter justification {k + 1}: {quoted(ref)}: {problem}",
                              "write the id as its file is named")
        self.front = fields
        self.i = end + 1

    def _key_line(self, key: str, end: int) -> int:
        written = re.compile(rf"""(?:{re.escape(key)}|"{re.escape(key)}"|'{re.escape(key)}')[ \t]*:""")
        for index in range(1, end):
            if written.match(self.raw[index]):
                return index
        return 0

    def title(self) -> None:
        self.skip_blank()
        if self.i >= len(self.raw):
            self.diag(max(self.i - 1, 0), "E201", "no title line", "the first line is the belief id")
            return
        line = self.body(self.i)
        self.markdown = line.startswith("# ")
        belief_id = line[2:].strip() if self.markdown else line.strip()
        self.title_line = self.i
        problem = id_problem(belief_id)
        if problem and belief_id == "---":  # front matter after a blank line is no front matter
            self.diag(self.i, "E202", "front matter ('---') must begin on the first line of the file",
                      "remove what comes before it (a byte-order mark may stay)")
        elif problem:
            self.diag(self.i, "E202", f"invalid id {quoted(belief_id)}: {problem}")
        self.fields["id"] = belief_id
        self.i += 1

    def status(self) -> None:
        self.skip_blank()
        if self.i >= len(self.raw):
            return
        line = self.body(self.i)
        full = g.STATUS.fullmatch(line)
        if full:
            self._take_status(full)
            return
        if g.looks_like_status(line):
            self.diag(self.i, "E205", f"malformed status line {quoted(line)}",
                      "write e.g. 'IN premise' or 'OUT derived (depth 2)'")
            self.i += 1
            self.status_seen = True

    def _take_status(self, match: re.Match) -> None:
        self.mark(self.i, STATUS, match)
        tv = match.group("tv")
        if tv == "STALE":
            self.diag(self.i, "W207", "STALE status: read as OUT and retracted",
                      "write 'OUT' with a 'Reason OUT:' line")
            self.fields["retracted"] = True
        self.fields["declared"] = OUT if tv == "STALE" else tv
        if match.group("source") is not None:
            self.put(self.i, "source", match.group("source"), "Source")
        depth = match.group("depth")
        self.stated.update(kind=match.group("kind"), depth=int(depth) if depth else None,
                           status_line=self.i + 1)
        self.status_seen = True
        self.i += 1

    def dates(self) -> None:
        self.skip_blank()
        if self.i >= len(self.raw):
            return
        line = self.body(self.i)
        if g.DATES.fullmatch(line):
            for part in g.DATE_PART.finditer(line):
                stamp = part.group("stamp")
                if not (g.ISO.fullmatch(stamp) and g.calendar_date(stamp)):
                    self.diag(self.i, "W208", f"timestamp {quoted(stamp)} is not ISO-8601 (kept verbatim)")
                self.put(self.i, g.DATE_FIELDS[part.group("word")], stamp, part.group("word"))
            self.i += 1
        elif g.looks_like_dates(line):  # a typo must not turn into claim text (§3.2)
            self.diag(self.i, "E205", f"malformed dates line {quoted(line)}",
                      "write e.g. 'Created 2026-06-21 · Reviewed 2026-06-22' (a space after each word, ' · ' between)")
            self.i += 1

    def reason(self) -> None:
        self.skip_blank()
        if self.i >= len(self.raw):
            return
        line = self.body(self.i)
        match = g.REASON.fullmatch(line)
        if match:
            self.fields["retract_reason"] = match.group("reason")
            self.i += 1
        elif g.looks_like_reason(line):
            self.diag(self.i, "E205", f"malformed reason line {quoted(line)}", "write 'Reason OUT: <why it is OUT>'")
            self.i += 1

    def text(self) -> None:
        start = self.i
        self.i = self._next_marker(self.i)
        self._misplaced_head(start, self.i)
        block = [self.body(k) for k in range(start, self.i)]
        text = _trim_block(block)
        if text and all(t.startswith("> ") or t == ">" for t in text.split("\n")):
            text = "\n".join(t[2:] for t in text.split("\n"))
        if text:
            self.fields["text"] = text
            self.text_line = start

    def _misplaced_head(self, start: int, end: int) -> None:
        """E205 for a status, dates or reason line that opens the claim: repeated, or out of
        the head's order (title, status, dates, reason). A typo must not turn into claim
        text (§3.2), nor a misplaced line (it stays in the text, which the error holds back)."""
        k = start
        while k < end:
            if not self.body(k):
                k += 1
                continue
            line, alone = self.body(k), k + 1 >= end or not self.body(k + 1)
            what = next((name for name, full in _HEAD_LINES if full.fullmatch(line)), None)
            if what == "dates" and not all(g.ISO.fullmatch(p.group("stamp")) for p in g.DATE_PART.finditer(line)):
                what = None  # "Updated yearly." is a claim; a misplaced dates line holds dates
            if not alone or what is None:
                return  # the claim itself
            self.diag(k, "E205", f"{what} line {quoted(line)} in the claim: repeated, or out of order",
                      "the head is the title, then one status line, one dates line and one "
                      "'Reason OUT:' line, in that order; the claim follows")
            k += 1

    def _next_marker(self, index: int) -> int:
        while index < len(self.raw):
            after_blank = index > 0 and not self.body(index - 1)
            if g.marker_name(self.body(index), after_blank):
                return index
            index += 1
        return index

    # -- sections ----------------------------------------------------------------------------
    def sections(self) -> None:
        seen: set[str] = set()
        while self.i < len(self.raw):
            after_blank = self.i > 0 and not self.body(self.i - 1)
            name = g.marker_name(self.body(self.i), after_blank)
            header, start = self.i, self.i + 1
            end = self._next_marker(start)
            self.i = end
            if name and name.startswith(g.MISSPELT):
                self.diag(header, "E301", f"{quoted(self.body(header))} is not a section heading",
                          f"write '## {name[1:].title()}' (or '{name[1:].title()}' alone after a blank line)")
                continue
            if name not in g.SECTIONS:
                self.diag(header, "E301", f"unknown section heading {quoted(self.body(header))}",
                          "sections are: Summary, Justifications, Challenges, Dependents, Details")
                continue
            if name in seen:
                self.diag(header, "E302", f"section {name.title()} repeated")
                continue
            seen.add(name)
            getattr(self, f"section_{name}")(header, start, end)

    def section_summary(self, header: int, start: int, end: int) -> None:
        summary = _trim_block([self.body(k) for k in range(start, end)])
        if summary:
            self.fields["summary"] = summary

    def section_details(self, header: int, start: int, end: int) -> None:
        for k in range(start, end):
            line = self.body(k)
            row = g.DETAILS_ROW.fullmatch(line)
            if row and row.group("key") == "Source":
                self.put(k, "source", row.group("value"), "Source")
            elif row:
                self.put(k, g.DATE_FIELDS[row.group("key")], row.group("value"), row.group("key"))
            elif line and not set(line) <= set("|-: "):
                self.diag(k, "W310", f"unrecognised line in Details: {quoted(line)}")

    def section_justifications(self, header: int, start: int, end: int) -> None:
        from .justifications import read_justifications
        justs, count = read_justifications(self, start, end)
        self.fields["justifications"] = justs
        if count is not None:
            self.stated.update(count=count[0], count_line=count[1])
        self.has_justifications_section = True

    def section_dependents(self, header: int, start: int, end: int) -> None:
        self.dep_anchor = header
        items = []
        for k in range(start, end):
            line = self.body(k)
            if not line:
                continue
            if line == g.DEPENDENTS_SENTENCE:
                self.dep_anchor = k
                continue
            match = g.ITEM.fullmatch(line)
            if match and not id_problem(g.item_id(match)):
                self.mark(k, DEPENDENT, match)
                items.append(Item(g.item_id(match), match.group("tag"), match.group("echo"), k + 1))
            else:
                self.diag(k, "W310", f"unrecognised line in Dependents: {quoted(line)}",
                          "fmt refreshes the list around it and keeps this line below the item "
                          "above it; a note fits better outside this derived section")
        self.stated["dependents"] = tuple(items)

    def section_challenges(self, header: int, start: int, end: int) -> None:
        items = []
        for k in range(start, end):
            line = self.body(k)
            if not line or g.CHALLENGES_SENTENCE.fullmatch(line):
                continue
            defeated = g.DEFEATED.fullmatch(line)
            match = g.ITEM.fullmatch(defeated.group("head") if defeated else line)
            if match and not id_problem(g.item_id(match)):
                self.mark(k, CHALLENGE, match)
                items.append(Item(g.item_id(match), match.group("tag"), match.group("echo"), k + 1))
            else:
                self.diag(k, "W310", f"unrecognised line in Challenges: {quoted(line)}")
        self.stated["challenges"] = tuple(items)


_HEAD_LINES = (("status", g.STATUS), ("dates", g.DATES), ("reason", g.REASON))
"""The head's lines after the title (as written right: a near miss may be claim text there)."""


def _trim_block(block: list[str]) -> str:
    """Join lines, dropping outer blank lines."""
    while block and not block[0]:
        block.pop(0)
    while block and not block[-1]:
        block.pop()
    return "\n".join(block)


def parse_document(source: SourceFile) -> Document:
    """One decoded document -> Document (belief None when the file must be excluded)."""
    r = _Reader(source)
    r.markdown, r.status_seen, r.title_line, r.text_line = False, False, 0, 0
    r.has_justifications_section = False
    r.front_matter()
    if not r.excluded:
        r.title()
    if not r.excluded:
        r.status(), r.dates(), r.reason(), r.text(), r.sections()
    belief = None if r.excluded else _assemble(r)
    return Document(source, belief, Stated(**r.stated), tuple(r.lines), tuple(r.found),
                    r.markdown, r.dep_anchor)


def _assemble(r: _Reader) -> Belief | None:
    """Merge body fields with front matter (E107 on conflicts) and check the whole."""
    from .fields import merge_front
    fields = merge_front(r, r.fields, r.front)
    expected = id_from_document_path(PurePosixPath(r.src.relative))
    if fields["id"] != expected:
        r.diag(r.title_line, "E203", f"id {fields['id']!r} does not match the file path "
               f"(expected {expected!r})", f"rename the file or change the title to {expected!r}")
    if not r.status_seen and "declared" not in r.front:
        r.diag(r.title_line, "W206", "missing status line (IN assumed)",
               "add a line such as 'IN premise' after the title")
    if not fields.get("text") and "text" not in r.front:  # `text: ""` says it: a network.json's empty claim
        r.diag(r.text_line or r.title_line, "E209", "no claim text",
               "write the claim after the title and status lines")
    if any(d.severity == "error" and d.code in ("E105", "E201", "E202") for d in r.found):
        return None
    fields.setdefault("declared", IN)
    fields.setdefault("text", "")  # E209 was reported; --keep-going leaves the file out
    return Belief(path=r.src.path, line=r.title_line + 1, **fields)
