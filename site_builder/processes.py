"""Folders named after the build process that made them (`<prefix><pid>-<random>`): those of a
build that was killed before it could remove them are found by the next one."""

from __future__ import annotations

import os
import re
import shutil
import signal
from functools import partial
from typing import Callable, Iterable

__all__ = ["owned_prefix", "remove_left_by_dead", "held_by_running", "detached"]


def owned_prefix(prefix: str, pid: int | None = None) -> str:
    """`prefix` followed by the id of this process, or of process `pid` (mkdtemp adds the
    random part)."""
    return f"{prefix}{os.getpid() if pid is None else pid}-"


def _owners(names: Iterable[str], prefix: str) -> list[tuple[str, int]]:
    """(name, pid) of the names made by `owned_prefix(prefix)` (then mkdtemp's 8 characters);
    exactly that shape, so another output's folders whose names merely start alike never match."""
    shape = re.compile(re.escape(prefix) + r"([0-9]{1,9})-[a-z0-9_]{8}", re.ASCII)
    return [(name, int(matched.group(1))) for name in names if (matched := shape.fullmatch(name))]


def _left_by_dead(names: Iterable[str], prefix: str) -> list[str]:
    """The names made by `owned_prefix(prefix)` in a process that no longer runs. None where
    os.kill cannot ask (not POSIX)."""
    if os.name != "posix":
        return []
    return [name for name, pid in _owners(names, prefix) if not _alive(pid)]


def held_by_running(parent: str | os.PathLike, prefix: str) -> list[str]:
    """The names in `parent` made by `owned_prefix(prefix)` in a process that still runs."""
    try:
        names = os.listdir(parent)
    except OSError:
        return []
    return [name for name, pid in _owners(names, prefix) if _alive(pid)]


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


_HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Signals the build handles (cli): blocked across a fork, so that a child never runs the
parent's handler and unwinds into the parent's code."""


def detached(action: Callable[[], None], handover: Callable[[int], None] = lambda pid: None) -> bool:
    """Run `action` in a process of its own that this one does not wait for (POSIX: forked
    twice, in a session of its own, its standard streams on /dev/null and no other file of
    ours open, so that whoever reads our output sees its end when we end); False where that
    cannot be, and nothing ran. `handover(pid)` runs, with that process's pid, before this
    returns and before `action` starts. Whatever either raises is dropped with its process."""
    if os.name != "posix" or not hasattr(os, "fork"):
        return False
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, _HANDLED)
    try:
        child = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return False
    if child:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        try:
            os.waitpid(child, 0)  # it ends at once: no zombie is left behind
        except ChildProcessError:  # SIGCHLD ignored: the kernel reaped it
            pass
        return True
    try:
        for number in _HANDLED:  # not the build's unwinding (cli)
            signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.setsid()
        _run_apart(action, handover)
    finally:
        os._exit(0)


def _run_apart(action: Callable[[], None], handover: Callable[[int], None]) -> None:
    """In the first child: fork the process that runs `action`, hand it over, and end; the
    second child starts once the first has ended (the end of a pipe tells it)."""
    ended, told = os.pipe()
    try:
        grandchild = os.fork()
    except OSError:
        grandchild = None  # this process runs it, and the caller waits for it
    if grandchild:
        os.close(ended)
        try:
            handover(grandchild)
        finally:
            os._exit(0)
    os.close(told)
    if grandchild is None:
        handover(os.getpid())
    else:
        os.read(ended, 1)  # b"": the first child has ended, its handover done
    os.close(ended)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    _close_from(3)
    action()


def _close_from(lowest: int) -> None:
    """Close every open descriptor from `lowest` on (those listed, not every possible number:
    the limit can be a billion)."""
    for listing in ("/proc/self/fd", "/dev/fd"):
        try:
            open_now = [int(name) for name in os.listdir(listing)]
        except (OSError, ValueError):
            continue
        for fd in open_now:
            if fd >= lowest:
                try:
                    os.close(fd)
                except OSError:  # the listing's own descriptor, closed already
                    pass
        return
    os.closerange(lowest, 4096)
