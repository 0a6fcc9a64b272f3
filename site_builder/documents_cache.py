"""The cache's parsed documents: each belief document's facts (parse.Facts), kept between builds.

Parsing is most of reading a documents folder (about 0.85 of 1.6 s for 10,000 documents).
A build with a cache folder takes the facts of every document whose file is unchanged from
`documents.jsonl` there and parses only the others. An entry's key is a hash of the code
(site_builder's sources), the file's displayed and relative paths and its decoded text, so
an entry can never be stale; each line is `key<TAB>facts as JSON`. The file is rewritten
with this build's documents only, so it never grows with deleted ones.

The stamp is the trust boundary: the file is read only when a build wrote it in place, as
`documents.stamp` (its inode, modification time and size, which no checkout or copy
reproduces) tells, so a cache folder committed to a repository cannot decide what a build
shows. Inside it, entries are checked only against damage (a value of the wrong kind is
parsed again, never a traceback). Facts holding a value JSON cannot carry exactly (bytes
from a YAML `!!binary`, say) are not kept: that document is parsed on every build. Two
sources sharing one cache folder each keep only their own documents, so they take turns
parsing everything.
"""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

from .cache import code_digest, digest
from .diagnostics import Diagnostic
from .load import SourceFile
from .model import Belief, Item, Justification, Stated
from .parse import Facts
from .write import replace_file

__all__ = ["DocumentsCache", "DOCUMENTS", "STAMP"]

DOCUMENTS = "documents.jsonl"
STAMP = "documents.stamp"
FORMAT = 1

_CLASSES = (Facts, Belief, Justification, Stated, Item, Diagnostic)
_FIELDS = {kind: tuple(f.name for f in fields(kind)) for kind in _CLASSES}
_TAGS = {kind: tag for tag, kind in enumerate(_CLASSES)}


def encode(value: Any) -> Any:
    """Facts -> JSON values: a dataclass is [tag, *fields], a tuple ["T", *items], a list
    ["L", *items], a dict ["M", key, value, ...]; any other type raises TypeError."""
    kind = type(value)
    if kind in (str, int, float, bool) or value is None:
        return value
    if kind is tuple or kind is list:
        return ["T" if kind is tuple else "L", *map(encode, value)]
    if kind is dict:
        return ["M", *(x for k, v in value.items() for x in (encode(k), encode(v)))]
    if kind in _TAGS:
        return [_TAGS[kind], *(encode(getattr(value, name)) for name in _FIELDS[kind])]
    raise TypeError(f"a {kind.__name__} is not kept")


def decode(data: Any) -> Any:
    """The inverse of `encode` (raises on anything it did not write)."""
    if type(data) is not list or not data:
        raise ValueError("not an encoded value")
    tag, rest = data[0], [decode(x) if type(x) is list else x for x in data[1:]]
    if tag == "T":
        return tuple(rest)
    if tag == "L":
        return rest
    if tag == "M":
        pairs = iter(rest)
        return dict(zip(pairs, pairs, strict=True))
    if type(tag) is not int or not 0 <= tag < len(_CLASSES):
        raise ValueError(f"unknown tag {tag!r}")
    return _CLASSES[tag](*rest)


def _stamp(path: Path) -> str:
    """The file's identity as the stamp holds it (compared as text: never parsed)."""
    st = path.stat()
    return json.dumps({"format": FORMAT, "file": [st.st_ino, st.st_mtime_ns, st.st_size]})


def _sound(facts: Any, file: SourceFile) -> bool:
    """Decoded facts of the right kinds, for this file (damage inside a stamped file)."""
    return (isinstance(facts, Facts) and facts.path == file.path
            and isinstance(facts.belief, (Belief, type(None))) and isinstance(facts.stated, Stated)
            and type(facts.diagnostics) is tuple and all(type(d) is Diagnostic for d in facts.diagnostics)
            and type(facts.echoes) is dict)


class DocumentsCache:
    """The facts kept by the last build in `folder`, and those of this build."""

    def __init__(self, folder: Path, stored: dict[str, str]) -> None:
        self.folder = folder
        self._code = ""
        """A hash of the code that parses, computed on the first document (none for network.json)."""
        self._stored = stored
        """key -> the JSON of its facts, as read."""
        self._used: dict[str, str] = {}
        """key -> JSON, for each document of this build whose facts were kept."""
        self._missed: dict[str, str] = {}
        """displayed path -> key, for each document parsed this build."""

    @classmethod
    def open(cls, folder: Path) -> "DocumentsCache":
        """The facts in `folder` (none when missing, damaged or not written there by a build)."""
        stored: dict[str, str] = {}
        try:
            stamp = (folder / STAMP).read_text("ascii")
            if stamp == _stamp(folder / DOCUMENTS):
                text = (folder / DOCUMENTS).read_text("ascii")
                stored = dict(line.split("\t", 1) for line in text.splitlines())
        except (OSError, ValueError):  # ValueError: not ASCII, or a line without a tab
            stored = {}
        return cls(folder, stored)

    def _key(self, file: SourceFile) -> str:
        if not self._code:
            self._code = digest(str(FORMAT), code_digest())
        return digest(self._code, repr((file.path, file.relative.as_posix(), file.had_bom, file.crlf)),
                      file.text)

    def facts(self, file: SourceFile) -> Facts | None:
        """The kept facts of a document whose file is unchanged, or None (parse it)."""
        key = self._key(file)
        found = self._stored.get(key)
        if found is not None:
            try:
                facts = decode(json.loads(found))
            except (ValueError, TypeError, LookupError, RecursionError):  # damaged: parse it
                facts = None
            if _sound(facts, file):
                self._used[key] = found
                return facts
        self._missed[file.path] = key
        return None

    @property
    def hits(self) -> int:
        """Documents whose facts were taken from the cache by this build."""
        return len(self._used)

    def save(self, parsed: tuple[Facts, ...]) -> None:
        """Keep the facts of this build's documents (`parsed`: all of them, by path)."""
        entries = dict(self._used)
        for facts in parsed:
            key = self._missed.get(facts.path)
            if key is None:
                continue
            try:
                entries[key] = json.dumps(encode(facts), separators=(",", ":"))
            except (TypeError, ValueError):  # a value JSON would not give back as it is
                continue
        if entries == self._stored:
            return  # unchanged: nothing to write
        lines = "".join(f"{key}\t{data}\n" for key, data in sorted(entries.items()))
        replace_file(self.folder / DOCUMENTS, lines.encode("ascii"))
        replace_file(self.folder / STAMP, _stamp(self.folder / DOCUMENTS).encode("ascii"))
