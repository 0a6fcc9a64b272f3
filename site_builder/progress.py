"""Build feedback: seconds per stage (`--profile`) and a progress line on a terminal."""

from __future__ import annotations

import os
import time
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator, TextIO, TypeVar

T = TypeVar("T")

__all__ = ["Stages", "Progress", "START", "process_started"]

START = "start (interpreter, imports, settings)"
"""The console script's time before the build: about 0.3 s, a fifth of an incremental
build of 10,000 beliefs (not in its stages before, nor in the time it said it took)."""


def process_started() -> float | None:
    """When this process started, on the `time.perf_counter` clock (Linux: the start time
    in /proc, to a clock tick: a wrapper that execs the command counts too); None where that
    is not known, or when it is not a plausible start (a minute or more before now)."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            fields = stat.read().rpartition(b")")[2].split()  # after the command's name, which may hold spaces
        ticks = int(fields[19])  # field 22, starttime: clock ticks after boot
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):  # not Linux (no /proc, no CLOCK_BOOTTIME)
        return None
    return time.perf_counter() - age if 0.0 <= age < 60 else None


class Stages:
    """Wall seconds per named stage, in the order first met (a stage may be entered often);
    `entered(name)` is told each time the build moves on to another stage (Progress.phase)."""

    def __init__(self, entered: Callable[[str], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self._entered = entered
        self._current = ""

    def _enter(self, name: str) -> None:
        if name != self._current:
            self._current = name
            if self._entered is not None:
                self._entered(name)

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        self._enter(name)
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - start)

    def add(self, name: str, seconds: float) -> None:
        self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    def timed(self, name: str, items: Iterable[T]) -> Iterator[T]:
        """`items`, adding the time spent producing each one (not consuming it) to `name`."""
        iterator = iter(items)
        while True:
            self._enter(name)
            start = time.perf_counter()
            try:
                item = next(iterator)
            except StopIteration:
                self.add(name, time.perf_counter() - start)
                return
            self.add(name, time.perf_counter() - start)
            yield item

    def report(self) -> str:
        """One line per stage, and the total."""
        total = sum(self.seconds.values())
        width = max(len(n) for n in [*self.seconds, "total"])
        lines = [f"{name:<{width}}  {secs:7.2f} s  {100 * secs / total if total else 0:5.1f}%"
                 for name, secs in self.seconds.items()]
        return "\n".join([*lines, f"{'total':<{width}}  {total:7.2f} s"])


class Progress:
    """`label: done/total` rewritten in place, at most ten times a second, or the stage the
    build is in (`phase`: reading, waiting for the search index, removing the last site,
    which take seconds at 50,000 beliefs); silent unless the stream is a terminal (logs and
    CI stay clean). Call it with (done, total)."""

    def __init__(self, stream: TextIO, label: str) -> None:
        self._stream, self._label = stream, label
        self._on = stream.isatty()
        self._shown = 0.0
        self._drawn = False

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self._on and total and (now - self._shown >= 0.1 or done >= total):
            self._shown = now
            self._show(f"{self._label}: {done}/{total} ({100 * done // total}%)")

    def phase(self, name: str) -> None:
        """Show the stage the build has entered (the count replaces it while beliefs render)."""
        if self._on:
            self._show(f"{name}...")

    def _show(self, line: str) -> None:
        self._drawn = True
        self._stream.write(f"\r{line}\033[K")
        self._stream.flush()

    def close(self) -> None:
        """Erase the line (the build's own report follows)."""
        if self._drawn:
            self._stream.write("\r\033[K")
            self._stream.flush()
