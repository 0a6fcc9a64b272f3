"""The cache's parsed documents: each belief document's facts (parse.Facts), kept between builds.

Parsing is most of reading a documents folder (about 0.85 of 1.6 s for 10,000 documents).
A build with a cache folder takes the facts of every document whose file is unchanged from
`documents.jsonl` there and parses only the others. An entry's key is a hash of the code
(site_builder's sources), the file's displayed and relative paths and its decoded text, so
an entry can never be stale; each line is `key<TAB>facts as JSON`. The file is rewritten
with this build's documents only, so it never grows with deleted ones.

A document whose file has the same status as when the last build read it (device, inode,
size, modification and change times: `documents.index`) is not even read: its facts are
taken by that build's key. Only files changed more than RACY_NS before that build started
are listed there: a change within one timestamp tick of the read could leave the status as
it was (git's "racily clean" files), and so could a clock stepped back by more than that.
"Started" is read from the file system's own clock (the time it gives a probe file in the
cache folder, `documents.clock`), and only files on that file system are listed, so a
server's clock (NFS) is never compared with this machine's. Only on POSIX systems, whose
change time moves on every write (Windows reports the creation time there).

The stamp is the trust boundary: the files are read only when a build wrote them in place,
as `documents.stamp` (their inodes, modification times and sizes, which no checkout or copy
reproduces) tells, so a cache folder committed to a repository cannot decide what a build
shows. Inside it, entries are checked only against damage (a value of the wrong kind is
parsed again, never a traceback). Facts holding a value of a type `encode`
does not know are not kept: that document is parsed on every build. Two
sources sharing one cache folder each keep only their own documents, so they take turns
parsing everything.
"""

from __future__ import annotations

import json
import os
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
INDEX = "documents.index"
STAMP = "documents.stamp"
CLOCK = "documents.clock"
FORMAT = 1

RACY_NS = 2_000_000_000
"""Files changed less than this before a build started are read again by the next one."""

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


def _stamp(folder: Path) -> str:
    """The identity of the facts and the index, as the stamp holds it (compared as text: never parsed)."""
    found = [[st.st_ino, st.st_mtime_ns, st.st_size] for st in (os.stat(folder / f) for f in (DOCUMENTS, INDEX))]
    return json.dumps({"format": FORMAT, "files": found})


def _clock(folder: Path) -> tuple[int, int] | None:
    """(device, now) by the clock of the cache folder's file system, or None where no file
    status may be trusted (not POSIX, or the folder cannot be written)."""
    if os.name != "posix":
        return None
    probe = folder / CLOCK
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with open(probe, "ab"):
            pass
        os.utime(probe)  # the file system's "now" (a network server's, on NFS)
        st = os.stat(probe)
    except OSError:
        return None
    return st.st_dev, st.st_mtime_ns


def _status(st: os.stat_result) -> list[int]:
    """What a file's index entry compares: any write or rename changes one of them."""
    return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _sound(facts: Any, path: str, relative: str) -> bool:
    """Decoded facts of the right kinds, for this file (damage inside a stamped file); the
    relative path counts too (`docs` + `ns/a.md` and `docs/ns` + `a.md` show one path)."""
    return (isinstance(facts, Facts) and facts.path == path and facts.relative == relative
            and isinstance(facts.belief, (Belief, type(None))) and isinstance(facts.stated, Stated)
            and type(facts.diagnostics) is tuple and all(type(d) is Diagnostic for d in facts.diagnostics)
            and type(facts.echoes) is dict)


class DocumentsCache:
    """The facts kept by the last build in `folder`, and those of this build."""

    def __init__(self, folder: Path, stored: dict[str, str], index: dict | None = None,
                 clock: tuple[int, int] | None = None, known: dict[str, Facts] | None = None) -> None:
        self.folder = folder
        self.clock = clock
        """(device, time) of the cache's file system before this build read any document (RACY_NS)."""
        self._code = ""
        """A hash of the code that parses, computed on the first document (none for network.json)."""
        self._stored = stored
        """key -> the JSON of its facts, as read."""
        self._index = index if isinstance(index, dict) else {}
        """As read: {"code": the code's hash, "files": {displayed path: status + [key]}}."""
        self._used: dict[str, str] = {}
        """key -> JSON, for each document of this build whose facts were kept."""
        self._keys: dict[str, str] = {}
        """displayed path -> key, for each document of this build without a byte-order mark."""
        self._missed: dict[str, str] = {}
        """displayed path -> key, for each document parsed this build."""
        self._statuses: dict[str, list[int]] = {}
        """displayed path -> the file's status before this build read it (`vouch`)."""
        self._vouched: dict[str, Facts] = {}
        """displayed path -> facts, for each document taken by its status, not read."""
        self._known = known or {}
        """key -> facts an earlier build in this process kept (`kept`): not decoded again."""
        self._taken: dict[str, Facts] = {}
        """key -> facts, for each document of this build whose facts were taken from the cache."""

    @classmethod
    def open(cls, folder: Path, known: dict[str, Facts] | None = None) -> "DocumentsCache":
        """The facts in `folder` (none when missing, damaged or not written there by a build);
        `known`: what `kept` gave after an earlier build in this process (serve's)."""
        stored: dict[str, str] = {}
        index = None
        try:
            stamp = (folder / STAMP).read_text("ascii")
            if stamp == _stamp(folder):
                text = (folder / DOCUMENTS).read_text("ascii")
                stored = dict(line.split("\t", 1) for line in text.splitlines())
                index = json.loads((folder / INDEX).read_text("ascii"))
        except (OSError, ValueError, RecursionError):  # ValueError: not ASCII, or a line without a tab
            stored, index = {}, None
        return cls(folder, stored, index, _clock(folder), known)

    def _code_hash(self) -> str:
        if not self._code:
            self._code = digest(str(FORMAT), code_digest())
        return self._code

    def _key(self, file: SourceFile) -> str:
        return digest(self._code_hash(), repr((file.path, file.relative.as_posix(), file.had_bom, file.crlf)),
                      file.text)

    def _decoded(self, key: str, path: str, relative: str) -> Facts | None:
        """The stored facts under `key`, when whole and of this file (else None: parse it)."""
        found = self._stored.get(key)
        if found is None:
            return None
        facts = self._known.get(key)  # one text of one file; but `vouch` finds keys by displayed path
        if facts is None or facts.path != path or facts.relative != relative:
            try:
                facts = decode(json.loads(found))
            except (ValueError, TypeError, LookupError, RecursionError):  # damaged: parse it
                return None
            if not _sound(facts, path, relative):
                return None
        self._used[key] = found
        self._taken[key] = facts
        return facts

    def vouch(self, shown: str, full: str, relative) -> SourceFile | None:
        """A document the last build read, unchanged by its status, as an unread SourceFile
        (`token`: its key), or None: read it. Notes the status first, so that the index keeps
        the status the file had before it was read (load.load calls it for each document)."""
        try:
            status = _status(os.stat(full))
        except OSError:  # reading it will say why
            return None
        if not os.access(full, os.R_OK):  # nor may this user read it (a cache another user filled)
            return None
        self._statuses[shown] = status
        files = self._index.get("files") if self._index.get("code") == self._code_hash() else None
        entry = files.get(shown) if type(files) is dict else None
        if type(entry) is not list or entry[:-1] != status or type(entry[-1]) is not str:
            return None
        facts = self._decoded(entry[-1], shown, relative.as_posix())
        if facts is None:
            return None
        self._vouched[shown] = facts
        self._keys[shown] = entry[-1]
        return SourceFile(shown, relative, "", token=entry[-1])

    def facts(self, file: SourceFile) -> Facts | None:
        """The kept facts of a document whose file is unchanged, or None (parse it)."""
        if file.token:
            return self._vouched[file.path]
        key = self._key(file)
        if not file.had_bom:  # its W103 comes from reading it: always read
            self._keys[file.path] = key
        facts = self._decoded(key, file.path, file.relative.as_posix())
        if facts is None:
            self._missed[file.path] = key
        return facts

    @property
    def hits(self) -> int:
        """Documents whose facts were taken from the cache by this build."""
        return len(self._used)

    @property
    def unread(self) -> int:
        """Documents this build did not even read (`vouch`)."""
        return len(self._vouched)

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
        index = {"code": self._code_hash(), "files": self._settled(parsed, entries)}
        if entries == self._stored and index == self._index:
            return  # unchanged: nothing to write
        lines = "".join(f"{key}\t{data}\n" for key, data in sorted(entries.items()))
        replace_file(self.folder / DOCUMENTS, lines.encode("ascii"))
        replace_file(self.folder / INDEX, json.dumps(index, ensure_ascii=True).encode("ascii"))
        replace_file(self.folder / STAMP, _stamp(self.folder).encode("ascii"))

    def kept(self, parsed: tuple[Facts, ...]) -> dict[str, Facts]:
        """key -> facts of this build's documents (`parsed`: all of them), for the next build
        in this process to take without decoding them (10,000 documents: 0.2 s)."""
        found = dict(self._taken)
        found.update((self._missed[f.path], f) for f in parsed if f.path in self._missed)
        return found

    def _settled(self, parsed: tuple[Facts, ...], entries: dict[str, str]) -> dict[str, list]:
        """displayed path -> status + [key], for each document with kept facts, on the cache's
        file system, whose file had not changed for RACY_NS when this build started."""
        if self.clock is None:
            return {}
        device, started = self.clock
        settled = {}
        for facts in parsed:
            key, status = self._keys.get(facts.path), self._statuses.get(facts.path)
            if key in entries and status is not None and status[0] == device and max(status[3:]) < started - RACY_NS:
                settled[facts.path] = [*status, key]
        return settled
