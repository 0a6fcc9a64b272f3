"""Folders named after the build process that made them (`<prefix><pid>-<random>`): those of a
build that was killed before it could remove them are found by the next one."""

from __future__ import annotations

import os
import shutil
from functools import partial
from typing import Callable, Iterable

__all__ = ["owned_prefix", "remove_left_by_dead"]


def owned_prefix(prefix: str) -> str:
    """`prefix` followed by this process's id (mkdtemp adds the random part)."""
    return f"{prefix}{os.getpid()}-"


def _left_by_dead(names: Iterable[str], prefix: str) -> list[str]:
    """The names made by `owned_prefix(prefix)` in a process that no longer runs (none where
    os.kill cannot ask: not POSIX)."""
    if os.name != "posix":
        return []
    found = []
    for name in names:
        pid = name[len(prefix):].partition("-")[0] if name.startswith(prefix) else ""
        if pid.isdigit() and not _alive(int(pid)):
            found.append(name)
    return found


def remove_left_by_dead(parent: str | os.PathLike, prefixes: Iterable[str],
                        remove: Callable[[str], None] = partial(shutil.rmtree, ignore_errors=True)) -> None:
    """Remove what processes that no longer run left in `parent` under these prefixes."""
    try:
        names = os.listdir(parent)
    except OSError:
        return
    for prefix in prefixes:
        for name in _left_by_dead(names, prefix):
            remove(os.path.join(parent, name))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's process
    return True
