"""Folders named after the build process that made them (`<prefix><pid>-<random>`): those of a
build that was killed before it could remove them are found by the next one."""

from __future__ import annotations

import os
import re
import shutil
import signal
from functools import partial
from typing import Callable, Iterable

__all__ = ["owned_prefix", "remove_left_by_dead", "detached"]


def owned_prefix(prefix: str) -> str:
    """`prefix` followed by this process's id (mkdtemp adds the random part)."""
    return f"{prefix}{os.getpid()}-"


def _left_by_dead(names: Iterable[str], prefix: str) -> list[str]:
    """The names made by `owned_prefix(prefix)` (then mkdtemp's 8 characters) in a process
    that no longer runs; exactly that shape, so another output's folders whose names merely
    start alike never match. None where os.kill cannot ask (not POSIX)."""
    if os.name != "posix":
        return []
    shape = re.compile(re.escape(prefix) + r"([0-9]{1,9})-[a-z0-9_]{8}", re.ASCII)
    found = []
    for name in names:
        matched = shape.fullmatch(name)
        if matched and not _alive(int(matched.group(1))):
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


def detached(action: Callable[[], None]) -> bool:
    """Run `action` in a process of its own that this one does not wait for (POSIX: forked
    twice, in a session of its own, its standard streams on /dev/null and no other file of
    ours open, so that whoever reads our output sees its end when we end); False where that
    cannot be, and nothing ran. Whatever `action` raises is dropped with its process."""
    if os.name != "posix" or not hasattr(os, "fork"):
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child:
        os.waitpid(child, 0)  # it ends at once: no zombie is left behind
        return True
    try:
        os.setsid()
        try:
            if os.fork():
                os._exit(0)
        except OSError:
            pass  # no second process: this one runs the action, and the caller waits for it
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the build's unwinding (cli)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.closerange(3, os.sysconf("SC_OPEN_MAX"))
        action()
    finally:
        os._exit(0)
