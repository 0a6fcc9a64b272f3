"""Load a source from a git revision (`git:REV[:PATH]`) without checking it out.

Produces the same `load.Sources` as reading the folder or network.json from disk, through
the same `load.decode`, so parse and its diagnostics cannot tell the difference. Paths in
diagnostics read `REV:PATH/file.md`, git's own notation. Two git processes per side,
whatever the number of files: `ls-tree` lists the tree, one `cat-file --batch` reads it.
"""

from __future__ import annotations

import functools
import subprocess
from pathlib import Path, PurePosixPath

from ..diagnostics import Diagnostic
from ..load import (BELIEFS_MD, NETWORK_JSON, PROJECT_FILE, Sources, documents_folder,
                    read_source)

__all__ = ["GitProblem", "git_sources", "is_revision", "repository_path"]

_SYMLINK, _SUBMODULE = "120000", "160000"


class GitProblem(Exception):
    """git is missing, the folder is no repository, or a revision or path does not exist."""


class NotInRevision(GitProblem):
    """The revision exists but holds no such path (a pull request adding the first beliefs)."""


def _git(cwd: Path | None, *args: str, data: bytes | None = None) -> bytes:
    try:
        done = subprocess.run(["git", *args], cwd=cwd, input=data, capture_output=True,
                              check=False)
    except OSError as exc:
        raise GitProblem(f"cannot run git: {exc.strerror}") from exc
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitProblem(message[-1] if message else f"git {args[0]} failed")
    return done.stdout


def _commit(rev: str, cwd: Path | None) -> str:
    # A revision starting with "-" would be read as an option by git.
    if not rev or rev.startswith("-"):
        raise GitProblem(f"not a git revision: {rev!r}")
    try:
        return _git(cwd, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").decode().strip()
    except GitProblem:
        raise GitProblem(f"unknown git revision {rev!r} (a shallow clone lacks other branches: "
                         "fetch them, e.g. actions/checkout with fetch-depth: 0)") from None


def is_revision(rev: str, cwd: Path | None = None) -> bool:
    """True when `rev` names a commit of the repository around `cwd`."""
    try:
        _commit(rev, cwd)
        return True
    except GitProblem:
        return False


def repository_path(path: Path, cwd: Path | None = None) -> str:
    """A filesystem path (relative to `cwd`) as a path inside the repository ("" = root)."""
    top = Path(_git(cwd, "rev-parse", "--show-toplevel").decode().strip())
    where = (Path(cwd or ".") / path).resolve()
    try:
        inside = where.relative_to(top.resolve())
    except ValueError:
        raise GitProblem(f"{path} is outside the git repository {top}") from None
    return "" if str(inside) == "." else inside.as_posix()


def _entries(commit: str, path: str, cwd: Path | None) -> list[tuple[str, str, str, str]]:
    """(mode, type, object, relative path) of every file under the tree, recursively."""
    # --full-tree: else, run from a sub-folder, ls-tree lists only what lies under it (nothing)
    listing = _git(cwd, "ls-tree", "-r", "-z", "--full-tree", f"{commit}:{path}")
    out = []
    for record in listing.split(b"\0"):
        if record:
            meta, _, name = record.partition(b"\t")
            mode, kind, obj = meta.decode().split()
            out.append((mode, kind, obj, name.decode("utf-8", "surrogateescape")))
    return sorted(out, key=lambda e: _walk_order(e[3]))


def _walk_order(relative: str) -> tuple:
    """The order of `load._walk` (os.walk with sorted names): a folder's files before its
    sub-folders, so documents come out in the same order as from disk."""
    parts = relative.split("/")
    return (*((1, d) for d in parts[:-1]), (0, parts[-1]))


def _blobs(objects: list[str], cwd: Path | None) -> dict[str, bytes]:
    """Contents of many blobs through one `git cat-file --batch`."""
    if not objects:
        return {}
    raw = _git(cwd, "cat-file", "--batch", data="".join(f"{o}\n" for o in objects).encode())
    found, at = {}, 0
    while at < len(raw):
        end = raw.index(b"\n", at)
        header = raw[at:end].decode().split()
        if len(header) != 3:  # "<object> missing": a shallow or partial clone
            raise GitProblem(f"git object {header[0]} is not in this clone (fetch its history)")
        obj, _, size = header
        start = end + 1
        found[obj] = raw[start:start + int(size)]
        at = start + int(size) + 1  # the content is followed by one LF
    return found


def _hidden(relative: str) -> bool:
    # load._walk skips dot-files and dot-folders at every level.
    return any(part.startswith(".") for part in relative.split("/"))


def _folder(commit: str, path: str, shown_root: str, cwd: Path | None) -> Sources:
    entries = [e for e in _entries(commit, path, cwd) if not _hidden(e[3])]
    wanted = [e for e in entries if e[0] not in (_SYMLINK, _SUBMODULE)
              and (e[3].endswith(".md") or e[3] == PROJECT_FILE)]
    blobs = _blobs([e[2] for e in wanted], cwd)
    found: list[Diagnostic] = []
    readable = []
    for mode, _, obj, name in entries:
        if mode in (_SYMLINK, _SUBMODULE):
            found.append(Diagnostic(f"{shown_root}/{name}", 0, "W606", "symbolic link or submodule "
                                    "in a git revision (not followed)"))
        else:
            # Strays are listed but never read: their blob was not fetched.
            readable.append((PurePosixPath(name), functools.partial(blobs.get, obj, b"")))
    return documents_folder(shown_root, readable, found)


def git_sources(rev: str, path: str, cwd: Path | None = None) -> Sources:
    """Read `path` (inside the repository, "" = root) as it is in revision `rev`.

    Raises GitProblem for a missing git, revision or path (a usage error, not content).
    """
    commit = _commit(rev, cwd)
    path = path.strip("/")
    shown_root = f"{rev}:{path}" if path else rev
    try:
        kind = _git(cwd, "cat-file", "-t", f"{commit}:{path}").decode().strip()
    except GitProblem:
        raise NotInRevision(f"{path or '.'} does not exist in revision {rev!r}") from None
    if kind == "tree":
        return _folder(commit, path, shown_root, cwd)
    obj = _git(cwd, "rev-parse", f"{commit}:{path}").decode().strip()
    name = PurePosixPath(path).name
    found: list[Diagnostic] = []
    data = _blobs([obj], cwd)[obj]
    one = read_source(lambda: data, shown_root, PurePosixPath(name), found)
    source_kind = BELIEFS_MD if name.lower().endswith(".md") else NETWORK_JSON
    return Sources(shown_root, source_kind, (one,) if one else (), None, tuple(found))
