"""The only module that writes files: new files refuse to replace existing ones unless forced."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from functools import partial
from typing import Callable, Collection, Iterable, Iterator

from .diagnostics import Diagnostic
from .processes import detached, owned_prefix, remove_left_by_dead
from .render import PAGES_DONE

__all__ = ["safe_relative", "all_safe_relative", "write_files", "replace_file", "write_site", "update_site", "store_all", "UnsafePath",
           "MARKER", "remove_tree"]

OVERLAPPED = 8
"""Files (or folders of files) removed or renamed at once. Freeing a file that is on disk
can wait on the device: ext4 without a journal, mounted with `discard` (the benchmark VM),
trims each file's blocks as it is freed. Overlapping the waits removed a 10,000-belief site
(50,000 entries, written to disk, page cache dropped) in 2.3-2.6 s instead of 4.7-5.4 s
(8 threads; 4 gave 2.8 s, 16 gave 3.1 s). The calls release the GIL."""


def write_files(files: Iterable[tuple[Path, bytes]], force: bool = False) -> list[Diagnostic]:
    """Write every file, or none when one exists and force is off (E801 per file)."""
    files = list(files)
    seen: set[Path] = set()
    problems = []
    for path, _ in files:
        if path in seen:
            problems.append(Diagnostic(str(path), 0, "E801", "two outputs for one path"))
        seen.add(path)
        if path.exists() and not force:
            problems.append(Diagnostic(str(path), 0, "E801", "file exists; not overwritten",
                                       "pass --force to replace existing files"))
    if problems:
        return problems
    for path, data in files:
        replace_file(path, data)
    return []


def replace_file(path: Path, data: bytes) -> None:
    """Write atomically: a temporary file beside the target, then rename over it. A failure
    names the target, not the temporary file. A device or a pipe (`-o /dev/null`,
    `/dev/stdout`) is written into, never replaced: a rename would put a file in its place."""
    try:
        mode = os.stat(path).st_mode
        special = not stat.S_ISREG(mode) and not stat.S_ISDIR(mode)
    except OSError:  # not there (or not reachable: mkstemp below says why)
        special = False
    if special:
        with _naming(path), open(path, "wb") as out:
            out.write(data)
        return
    with _naming(path):
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


MARKER = ".belief-site"
UPDATING = ".belief-site.updating"
"""The marker while an incremental build renames its files into the site."""
_MARKER_TEXT = b"This folder is written by belief-site build; each build replaces or updates all of it.\n"


def _refusal(out: Path) -> Diagnostic | None:
    """Why `out` must not be replaced: a file, or a non-empty folder we did not create."""
    if out.exists() and not out.is_dir():
        return Diagnostic(str(out), 0, "E801", "output path is a file, not a folder")
    if out.is_dir() and any(out.iterdir()) and not ((out / MARKER).is_file() or (out / UPDATING).is_file()):
        return Diagnostic(str(out), 0, "E801",
                          "output folder is not empty and was not written by belief-site",
                          f"choose another -o folder, or empty it (belief-site marks its output with {MARKER})")
    return None


def safe_relative(path: str) -> bool:
    """A clean relative POSIX path inside the site (no `..`, no empty part)."""
    parts = path.split("/")
    return bool(path) and not path.startswith("/") and ".." not in parts and "" not in parts[:-1]


def all_safe_relative(paths: Collection[str]) -> bool:
    """`safe_relative` of every path at once (a manifest lists 40,000 paths: one by one took
    20 ms): searched in one text, NUL between paths (no file name can hold one)."""
    joined = "\0".join(paths)
    if not joined:
        return not paths
    if joined.startswith(("/", "\0")) or joined.endswith("\0") or "\0\0" in joined or "\0/" in joined \
            or "//" in joined:
        return False  # an empty path, an absolute one, an empty part
    at = joined.find("..")
    while at >= 0:  # rare: `..` as a whole part
        if (at == 0 or joined[at - 1] in "/\0") and joined[at + 2:at + 3] in ("", "/", "\0"):
            return False
        at = joined.find("..", at + 1)
    return True


Files = Iterable | Callable[[Callable], Iterable]
"""OutputFiles, or a function of a sink (`store_all` bound to the temporary folder, for worker
processes and the render's threads to write files themselves; they pass them on with
`written=True`) returning them."""


REMOVING = "remove the previous site"
"""The stage of a build that replaced a site (`write_site`): handing the old site to a
process of its own (`_discard`), or removing it where that cannot be."""


def write_site(files: Files, out: Path, stage: Callable[[str], AbstractContextManager] = lambda _: nullcontext()
               ) -> tuple[set[str], list[Diagnostic]]:
    """Write a whole site into a temporary folder beside `out`, then swap it in; the old
    site goes in the background (`_discard`, timed as the stage REMOVING: `stage` is
    progress.Stages.stage).

    Files are consumed as they come (a site is never held in memory whole). A failure at any
    point leaves the previous site untouched. Returns (paths written, problems).
    """
    refusal = _refusal(out)
    if refusal:
        return set(), [refusal]
    temp = _staging(out)
    try:
        written, _, problems = _fill_from(temp, files)
        if problems:
            shutil.rmtree(temp)
            return set(), problems
        (temp / MARKER).write_bytes(_MARKER_TEXT)
        old = _swap(temp, out)
    except BaseException:
        shutil.rmtree(temp, ignore_errors=True)
        raise
    if old is not None:
        with stage(REMOVING):
            _discard(old, out)
    _remove_left_behind(out)
    return written, []


def _discard(old: Path, out: Path) -> None:
    """Remove the replaced site (the folder `_swap` moved it into) in a process of its own,
    after which the folder is named (before this returns), so that a build started meanwhile
    leaves it to that process (`_remove_left_behind`): the build ends once the new site is in
    place. Removing a 10,000-belief site took 2.4 s of a 10.6 s build (page cache dropped).
    Where no process can be started, here."""
    def owned_by(pid: int) -> Path:
        return old.with_name(owned_prefix(_old_prefix(out), pid) + old.name[-8:])

    def hand_over(pid: int) -> None:
        os.rename(old, owned_by(pid))

    def remove() -> None:
        mine = owned_by(os.getpid())
        remove_tree(mine if mine.exists() else old)  # not renamed: under its first name

    if not detached(remove, hand_over):
        remove_tree(old)


@contextmanager
def _naming(path: Path) -> Iterator[None]:
    """An OSError inside names `path` (what the user chose), not a temporary file beside it."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror or str(exc), str(path)) from exc


def _new_prefix(out: Path) -> str:
    """Names of the folders a new site is written into, beside `out` (then a pid: owned_prefix)."""
    return f".{out.name}.new-"


def _old_prefix(out: Path) -> str:
    """Names of the folders a replaced site waits in to be removed, beside `out`."""
    return f".{out.name}.old-"


def _staging(out: Path) -> Path:
    """A new temporary folder beside `out`."""
    with _naming(out):
        out.parent.mkdir(parents=True, exist_ok=True)
        return Path(tempfile.mkdtemp(dir=out.parent, prefix=owned_prefix(_new_prefix(out))))


def _remove_left_behind(out: Path) -> None:
    """The temporary folders beside `out` of builds killed before they could remove them (a
    whole site each: the new one being written, or the old one being removed)."""
    remove_left_by_dead(out.parent, (_new_prefix(out), _old_prefix(out)), lambda path: remove_tree(Path(path)))


def update_site(files: Files, out: Path, keep: set[str], previous: frozenset[str],
                published: Callable[[int], None] | None = None) -> tuple[set[str], list[Diagnostic]]:
    """An incremental build: every new or changed file is written into a temporary folder
    first; only when all are written do they replace their old versions in `out` (each
    with one rename). Files in `keep` stay as they are, and so does a file of the previous
    build (`previous`) that is given again with the bytes it has (the search bundle: Pagefind
    names most of its files by content, so a claim edit changes a few of 10,000; writing and
    renaming them all took 3.8 s at 10k beliefs). Files of the previous build that this one
    neither kept nor gave are removed. Returns (paths, problems).

    A failure while rendering leaves `out` untouched, as `write_site` does; a crash during
    the renames (a short window) leaves a mixed site marked `.belief-site.updating`, which
    the next build replaces whole (no cache trusts it).

    With `published`, the files given before render.PAGES_DONE are renamed in as soon as it
    comes (if any of them changed), and `published(files in the site)` is called: serve's
    readers get the pages while Pagefind indexes. The site is then mid-update until the end,
    and a failure after that point (Pagefind's) leaves it so: new pages, the old search
    bundle, no marker.
    """
    refusal = _refusal(out)
    if refusal:
        return set(), [refusal]
    temp = _staging(out)
    moved: set[str] = set()  # renamed in at PAGES_DONE (then the marker is gone already)

    def pages_done(written: set[str], same: set[str]) -> None:
        # nothing new to show, or written twice (reported at the end): all at the end
        if published is None or written <= same or written & keep:
            return
        moved.update(_rename_in(temp, out, written - same, first=True))
        published(len(written | keep))

    try:
        written, same, problems = _fill_from(temp, files, partial(_unchanged, str(out), previous), pages_done)
        if not problems and written & keep:
            problems = [Diagnostic(sorted(written & keep)[0], 0, "E801", "output path written twice")]
        if problems:
            return set(), problems
        _rename_in(temp, out, written - same - moved, first=not moved)
        removed = sorted(previous - keep - written, reverse=True)
        _overlapped(lambda path: (out / path).unlink(missing_ok=True), removed)
        for path in removed:
            _prune(out, path)
        (temp / MARKER).write_bytes(_MARKER_TEXT)
        os.replace(temp / MARKER, out / MARKER)  # a new file: a new identity for the cache
        (out / UPDATING).unlink()
    finally:
        shutil.rmtree(temp, ignore_errors=True)
    _remove_left_behind(out)
    return written | keep, []


def _rename_in(temp: Path, out: Path, paths: set[str], first: bool) -> set[str]:
    """Rename staged files over their old versions in `out`. The first time, the marker
    goes: until the new one is in, the site is mid-update, and a crash leaves a folder that
    is still ours (`_refusal`) but that no cache trusts."""
    if first:
        os.replace(out / MARKER, out / UPDATING)
    made: set[str] = set()
    renamed = sorted(paths)
    for path in renamed:
        _folder_for(out, path, made)
    _overlapped(lambda path: os.replace(temp / path, out / path), renamed)
    return paths


def _overlapped(action: Callable, items: list) -> None:
    """action(item) for every item, OVERLAPPED at a time. The first error (in item order) is
    raised once the running calls end; a few items after it may already be done."""
    if len(items) < OVERLAPPED:
        for item in items:
            action(item)
        return
    with ThreadPoolExecutor(OVERLAPPED) as pool:
        for _ in pool.map(action, items):
            pass


def remove_tree(path: Path) -> None:
    """Remove a folder and everything in it, as far as possible, never following links.
    Folders are opened level by level until there are enough to share out (a site's
    belief folders); those are then removed OVERLAPPED at a time, each by one thread.
    Elsewhere than POSIX, shutil.rmtree alone (it knows Windows junctions)."""
    if os.path.islink(path):  # the link goes, never what it points to
        os.unlink(path)
        return
    if os.name != "posix":
        shutil.rmtree(path, ignore_errors=True)
        return
    files, level = [], [str(path)]
    while level and len(level) < 8 * OVERLAPPED:
        deeper: list[str] = []
        for folder in level:
            try:
                with os.scandir(folder) as found:
                    for entry in found:
                        (deeper if entry.is_dir(follow_symlinks=False) else files).append(entry.path)
            except OSError:  # unreadable, or gone: what can go goes
                pass
        level = deeper
    _overlapped(_quietly(os.unlink), files)
    _overlapped(partial(shutil.rmtree, ignore_errors=True), level)
    shutil.rmtree(path, ignore_errors=True)  # the folders above


def _quietly(action: Callable[[str], None]) -> Callable[[str], None]:
    def run(path: str) -> None:
        try:
            action(path)
        except OSError:  # as shutil.rmtree(ignore_errors=True): the old site is not worth a failure
            pass
    return run


def _prune(out: Path, path: str) -> None:
    """Remove the folders of a removed file that are now empty (a removed belief's folder)."""
    parent = path.rpartition("/")[0]
    while parent:
        try:
            (out / parent).rmdir()
        except OSError:  # not empty
            return
        parent = parent.rpartition("/")[0]


def _fill_from(temp: Path, files: Files, unchanged: Callable[[object], bool] | None = None,
               pages_done: Callable[[set[str], set[str]], None] | None = None
               ) -> tuple[set[str], set[str], list[Diagnostic]]:
    stream = files(partial(store_all, temp, unchanged=unchanged)) if callable(files) else files
    try:
        return _fill(temp, stream, unchanged, pages_done)
    except UnsafePath as exc:  # from a worker's or a render thread's store_all
        return set(), set(), [Diagnostic(str(exc), 0, "E801", "output path outside the site")]
    finally:  # stopped early (a problem, an error here): the renderer stops its workers and
        # the search thread, and waits for the site files' thread, now, before the caller
        # removes the folder they write into
        close = getattr(stream, "close", None)
        if close is not None:
            close()


_READ_AS_IS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
"""A link at the path is not followed (what stays must be a file, not a link to one), and a
FIFO put there does not block the build."""


def _unchanged(out: str, previous: frozenset[str], item) -> bool:
    """Whether the previous build's file at the item's path is a plain file holding exactly
    its bytes (so it can stay)."""
    if item.path not in previous or item.origin is not None:
        return False
    try:
        handle = os.open(os.path.join(out, item.path), _READ_AS_IS)
    except OSError:
        return False
    with os.fdopen(handle, "rb") as found:
        info = os.fstat(handle)
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(item.data):
            return False  # another size: the bytes of a changed listing or export (megabytes) go unread
        return found.read(len(item.data) + 1) == item.data


class UnsafePath(ValueError):
    """An output path outside the site, or the marker's."""


def store_all(folder: Path, items: Iterable, unchanged: Callable[[object], bool] | None = None) -> set[str]:
    """Write files into a site folder (from worker processes, or the render's threads); those
    `unchanged` says the last build's folder holds as they are (an update: `_unchanged`) are
    not written, and their paths returned. A claim edit renders its neighbours' pages again,
    whose badges and index.json stay the same: 3 in 4 of the files, which would otherwise be
    renamed in too."""
    made: set[str] = set()
    same: set[str] = set()
    for item in items:
        if not safe_relative(item.path) or item.path == MARKER:
            raise UnsafePath(item.path)
        if unchanged is not None and unchanged(item):
            same.add(item.path)
        else:
            _store(folder, item, made)
    return same


def _folder_for(root: Path, path: str, made: set[str]) -> None:
    """The folder of `path` under `root`: one mkdir per folder, not per file."""
    parent = path.rpartition("/")[0]
    if parent not in made:
        os.makedirs(os.path.join(root, parent), exist_ok=True)
        made.add(parent)


def _store(folder: Path, item, made: set[str]) -> None:
    """One file (a link for a reused file). Paths as strings: a site has tens of thousands."""
    _folder_for(folder, item.path, made)
    target = os.path.join(folder, item.path)
    if item.origin is None:
        with open(target, "wb") as out:
            out.write(item.data)
    else:
        _link(item.origin, target)


def _fill(temp: Path, files: Iterable, unchanged: Callable[[object], bool] | None,
          pages_done: Callable[[set[str], set[str]], None] | None = None
          ) -> tuple[set[str], set[str], list[Diagnostic]]:
    """(every path given, those of them `unchanged` says need not be written, problems);
    `pages_done(written, same)` when render.PAGES_DONE comes (skipped without it)."""
    written: set[str] = set()
    same: set[str] = set()
    folders: set[str] = set()
    for item in files:
        if item is PAGES_DONE:
            if pages_done is not None:
                pages_done(written, same)
            continue
        if not safe_relative(item.path) or item.path in written or item.path == MARKER:
            why = "twice" if item.path in written else "outside the site"
            return set(), set(), [Diagnostic(item.path, 0, "E801", f"output path written {why}")]
        written.add(item.path)
        if item.written:  # a worker or the search thread wrote it (store_all), or found it as it is
            if item.same:
                same.add(item.path)
            continue
        if unchanged is not None and unchanged(item):
            same.add(item.path)
        else:
            _store(temp, item, folders)
    return written, same, []


_NOT_FOLLOWED = {"follow_symlinks": False} if os.link in os.supports_follow_symlinks else {}
"""A symbolic link put in the old site is linked as it is, never what it points to (Windows
has no such choice for hard links)."""


def _link(origin: str, target: str) -> None:
    """An unchanged file of the previous build: hard-linked (no bytes copied), else copied;
    what a link put there since points to stays out of the site."""
    try:
        os.link(origin, target, **_NOT_FOLLOWED)
    except OSError:  # another file system, or links not supported
        shutil.copyfile(origin, target, follow_symlinks=False)


def _swap(temp: Path, out: Path) -> Path | None:
    """The new site in `out`; the folder now holding the old one, to remove (None: none)."""
    with _naming(out):
        if not out.exists():
            os.replace(temp, out)
            return None
        old = Path(tempfile.mkdtemp(dir=out.parent, prefix=owned_prefix(_old_prefix(out))))
        os.replace(out, old / "site")
        os.replace(temp, out)
    return old
