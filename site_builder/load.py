"""Load: read a source (documents folder, network.json or beliefs.md) into decoded text.

Nothing here trusts the files: encoding and byte-level problems become diagnostics
(E101, E102, W103, E104, W606) and the file is left out; the rest goes on (spec §3.5).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePath, PurePosixPath
from typing import Callable, Iterable, Iterator

from .config import holds_surrogate
from .diagnostics import Diagnostic

DOCUMENTS = "documents"
NETWORK_JSON = "network.json"
BELIEFS_MD = "beliefs.md"
PROJECT_FILE = "_project.yaml"

# C0 controls except TAB and LF (CR is handled first: CRLF -> LF, a lone CR is E104): what no
# document may hold (E104), so what no writer may put in one.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
# The same class as bytes (UTF-8 writes these characters as themselves, and no other
# character uses their bytes), CR aside: each is mapped to _FLAGGED.
_FLAGGED = b"\x00"
_FLAG = bytes.maketrans(bytes([*range(0x09), *range(0x0b, 0x0d), *range(0x0e, 0x20), 0x7f]), _FLAGGED * 30)

SURROGATE_ESCAPE = re.compile(r"\\(?:u|U0000)[dD][89a-fA-F][0-9a-fA-F]{2}")
"""A JSON or YAML escape of a UTF-16 surrogate (`\\ud83d`): decoded text has none otherwise."""


def joined_surrogates(value):
    """`value` (decoded JSON or YAML) with escaped UTF-16 surrogate pairs joined into the
    characters they stand for (YAML leaves them apart); ValueError on a lone surrogate,
    which is no character and which no UTF-8 file can hold."""
    if isinstance(value, str):
        if not holds_surrogate(value):
            return value
        return value.encode("utf-16-le", "surrogatepass").decode("utf-16-le")  # lone: UnicodeDecodeError
    if isinstance(value, dict):
        return {joined_surrogates(k): joined_surrogates(v) for k, v in value.items()}
    if isinstance(value, list):
        return [joined_surrogates(v) for v in value]
    return value


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One decoded input file."""

    path: str
    """Path as shown in diagnostics."""
    relative: PurePosixPath
    """Path relative to the source root (documents) or the file name."""
    text: str
    """Strict UTF-8, BOM stripped, CRLF turned into LF."""
    had_bom: bool = False
    crlf: bool = False
    token: str = ""
    """Set, with `text` empty, for a document not read at all: the build's cache vouched for
    it by its file status (documents_cache.DocumentsCache.vouch) and has its facts."""


@dataclass(frozen=True, slots=True)
class Sources:
    """Everything read from one source, ready to parse."""

    root: str
    kind: str
    """`documents`, `network.json` or `beliefs.md`."""
    files: tuple[SourceFile, ...]
    project: SourceFile | None
    """`_project.yaml` of a documents folder."""
    diagnostics: tuple[Diagnostic, ...]


def source_kind(path: Path) -> str:
    """Which reader a source path needs."""
    if path.is_dir():
        return DOCUMENTS
    return BELIEFS_MD if path.suffix.lower() == ".md" else NETWORK_JSON


def decode(data: bytes, path: str) -> tuple[str | None, list[Diagnostic], bool, bool]:
    """Bytes -> (text or None when excluded, diagnostics, had_bom, mostly CRLF line ends)."""
    found: list[Diagnostic] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        found.append(Diagnostic(path, line, "E101",
                                f"bytes are not valid UTF-8 at byte offset {exc.start}",
                                "save the file as UTF-8"))
        return None, found, False, False
    bom = text.startswith("\ufeff")
    if bom:
        text = text[1:]
        found.append(Diagnostic(path, 1, "W103", "byte-order mark present (stripped)"))
    crlf = False
    if "\r" in text and "\r\n" in text:  # a search for one character is the quick one
        # Written back (fmt) with CRLF when most of its lines end so: one stray CRLF line
        # does not turn every other line end into CRLF.
        crlf = text.count("\r\n") * 2 > text.count("\n")
        text = text.replace("\r\n", "\n")
    # A lone CR is in the class (CRLF is gone); the regex runs only when the bytes hold a
    # control character or the text a CR: 7.5 MB took 16 ms to search, 4 ms to translate.
    flagged = "\r" in text or _FLAGGED in data.translate(_FLAG)
    match = CONTROL.search(text) if flagged else None
    if match:
        at, char = match.start(), match.group()
        line, column = text.count("\n", 0, at) + 1, at - text.rfind("\n", 0, at)
        what = "lone CR" if char == "\r" else f"control character U+{ord(char):04X}"
        found.append(Diagnostic(path, line, "E104", f"{what} at column {column}",
                                "remove the character; only TAB and line ends are allowed"))
        return None, found, bom, crlf
    if not text.strip():
        found.append(Diagnostic(path, 1, "E102", "empty or whitespace-only file"))
        return None, found, bom, crlf
    return text, found, bom, crlf


def read_source(read: Callable[[], bytes], shown: str, relative: PurePosixPath,
                found: list[Diagnostic]) -> SourceFile | None:
    """Read and decode one file; problems go to `found` and give None."""
    try:
        data = read()
    except OSError as exc:
        found.append(Diagnostic(shown, 0, "E101", f"cannot read file: {exc.strerror}"))
        return None
    text, problems, bom, crlf = decode(data, shown)
    found.extend(problems)
    return None if text is None else SourceFile(shown, relative, text, bom, crlf)


def hidden(relative: PurePath) -> bool:
    """True for a path under a dot-file or dot-folder of a documents folder: never read."""
    return any(part.startswith(".") for part in relative.parts)


def _walk(root: Path) -> Iterator[tuple[str, PurePosixPath, os.DirEntry]]:
    """Sorted (path, relative, entry) of the files under root, a folder's files before its
    folders (as os.walk with sorted names), skipping dot-files and dot-folders; a linked
    folder is not entered, nor one that cannot be listed (as os.walk). A stack, not
    recursion: a tree may be thousands of folders deep."""
    stack = [(str(root), "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as found:
                entries = sorted((e for e in found if not e.name.startswith(".")), key=lambda e: e.name)
        except OSError:
            continue
        folders = []
        for entry in entries:
            if _is_folder(entry):
                if not entry.is_symlink():
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
            else:
                yield entry.path, PurePosixPath(prefix + entry.name), entry
        stack.extend(reversed(folders))


def _is_folder(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _reader(path: str, entry: os.DirEntry, inside: str) -> Callable[[], bytes]:
    """How to read one file of a documents folder. Only regular files of the folder are read:
    a pipe or a device would block or never end (a link to /dev/zero), and a link to
    elsewhere, or to a hidden file of the folder (.env), would publish it (a key,
    /proc/self/environ) through a page or a diagnostic. Each is E101, with nothing read."""
    if entry.is_file(follow_symlinks=False):  # the usual case: no system call beyond the walk's
        return partial(_read_file, path)  # no Path per document: most are not read (a cache vouches for them)

    def checked() -> bytes:
        real = os.path.realpath(path)
        if entry.is_symlink():
            if not real.startswith(inside):
                raise OSError(errno.EACCES, "a link to a file outside the documents folder (not followed)")
            if hidden(PurePath(real[len(inside):])):
                raise OSError(errno.EACCES, "a link to a hidden file of the documents folder (not followed)")
        return _read_regular(real)
    return checked


def _read_file(path: str) -> bytes:
    with open(path, "rb") as opened:
        return opened.read()


def _read_regular(path: str) -> bytes:
    """The bytes of a regular file; a pipe, a device or a socket is refused before any read
    (the open does not wait for a pipe's writer)."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    handle = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a pipe, a device or a socket; not read)")
        with os.fdopen(handle, "rb", closefd=False) as opened:
            return opened.read()
    finally:
        os.close(handle)


Vouch = Callable[[str, str, PurePosixPath], "SourceFile | None"]
"""(displayed path, the file's path, relative path) -> an unread SourceFile for a document the
build's cache knows unchanged, or None: read it."""


def load(source: str | Path, vouched: Vouch | None = None) -> Sources:
    """Read a documents folder, a network.json or a beliefs.md; never raises on content.
    `vouched` may spare reading documents (a documents folder only)."""
    root = Path(source)
    shown_root = str(source).rstrip("/") or "."
    found: list[Diagnostic] = []
    if not root.exists():
        found.append(Diagnostic(shown_root, 0, "E802", "source not found",
                                "pass a documents folder or a network.json"))
        return Sources(shown_root, DOCUMENTS, (), None, tuple(found))
    kind = source_kind(root)
    if kind != DOCUMENTS:
        one = read_source(lambda: _read_regular(str(root)), shown_root, PurePosixPath(root.name), found)
        return Sources(shown_root, kind, (one,) if one else (), None, tuple(found))
    base = os.path.join(root, "")  # string joins: a Path per document took 0.03 s of 10,000
    spared = None if vouched is None else lambda shown, relative: vouched(shown, f"{base}{relative}", relative)
    inside = os.path.join(os.path.realpath(root), "")
    entries = ((rel, _reader(full, entry, inside)) for full, rel, entry in _walk(root))
    return documents_folder(shown_root, entries, found, spared)


def documents_folder(shown_root: str, entries: Iterable[tuple[PurePosixPath, Callable[[], bytes]]],
                     found: list[Diagnostic],
                     spared: Callable[[str, PurePosixPath], SourceFile | None] | None = None) -> Sources:
    """A folder's files, as (relative path, bytes reader) in sorted order -> Sources.

    Shared by the disk walk and the git reader (diff), so both say exactly the same things;
    `spared(shown, relative)` may give a document unread (load's `vouched`).
    """
    files, project = [], None
    for relative, read in entries:
        shown = f"{shown_root}/{relative}"
        if str(relative) == PROJECT_FILE:
            project = read_source(read, shown, relative, found)
        elif relative.suffix == ".md":
            one = (spared and spared(shown, relative)) or read_source(read, shown, relative, found)
            if one:
                files.append(one)
        else:
            found.append(Diagnostic(shown, 0, "W606", "stray file in the beliefs folder (ignored)",
                                    "belief documents end in .md; move other files elsewhere"))
    return Sources(shown_root, DOCUMENTS, tuple(files), project, tuple(found))
