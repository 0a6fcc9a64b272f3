"""Belief files rendered by a pool of worker processes (`--jobs`), in the same order as serially.

Workers are forked: they inherit the build's context (network, evaluation, templates)
without pickling it, render chunks of beliefs and write their files into the site folder
(through the writer's sink: file creation is slow on some disks, and the bytes need not
cross a pipe); results are taken in submission order, so the output is byte-identical to
a single-process build. The site's own files (listings, exports) are made meanwhile, by
the pool or, when few pages are rendered, a thread of this process (`Workers.site`), for
which the pool then leaves a core when the pages are fewer still (`core_for_site_files`). With
one job, fewer than SERIAL_BELOW published beliefs, or where fork is unavailable,
everything renders in this process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import signal
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from typing import Iterator, Sequence

import jinja2

from ..model import Belief
from . import Emitter, OutputFile, RenderContext, Sink, stored
from .belief import Outputs, belief_outputs

__all__ = ["default_jobs", "renderer", "Serial", "Workers"]

CHUNK = 32
"""Beliefs per task: big enough to amortise a round trip, small enough to balance the cores."""

SERIAL_BELOW = 200
"""Smaller sites render in this process: starting workers would cost more than it saves."""

SITE_FILES_HERE = (1 / 200, 1 / 2)
"""Shares of the published beliefs rendered from which and below which the site's own files
are made in this process, not in the pool (`site_files_here`)."""

PAGES_PER_EMITTERS = 1 / 100
"""Belief pages whose rendering costs what the site's own files cost per published belief
(30 us of emitters per belief at 10k, 3 ms per page in a worker): `core_for_site_files`."""

PARENT_POLL = 0.5
"""Seconds between a worker's looks at whether the build that forked it still runs."""

WORKER_GC = (50_000, 20, 100)
"""A worker's collector thresholds. Rendering makes short-lived containers by the million; at
Python's default (700) the collector ran 1,900 times in a 10k build and took 0.4 of the
workers' 12 CPU seconds, against 9 times and 0.07 s with these (measured with gc.callbacks);
the few cycles left wait a little longer for their collection."""

_worker: tuple[RenderContext, jinja2.Environment, Counter | None, "Sink | None"] | None = None
"""The context a forked worker renders with (set once per worker by `_start`)."""


def default_jobs() -> int:
    """One worker per usable core."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _start(ctx: RenderContext, env: jinja2.Environment, counts: Counter | None, sink: Sink | None,
           parent: int) -> None:
    global _worker
    _worker = (ctx, env, counts, sink)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # not the build's unwinding (cli): a worker just ends
    gc.enable()  # the build pauses it (pipeline); rendering makes cycles, and the inherited objects are frozen
    gc.set_threshold(*WORKER_GC)
    threading.Thread(target=_end_with, args=(parent,), name="end with the build", daemon=True).start()


def _end_with(parent: int) -> None:
    """End this worker once the build that forked it is gone (killed): forked workers hold
    both ends of the task pipe, so they would wait for tasks forever."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL)
    os._exit(1)


def _chunk(ids: list[str]) -> list[Outputs]:
    ctx, env, counts, sink = _worker  # type: ignore[misc]
    beliefs = ctx.beliefs  # inherited: ids cross the pipe, not Beliefs (pickled, 0.16 s CPU at 10k)
    done = [belief_outputs(ctx, env, counts, beliefs[i]) for i in ids]
    return [replace(o, files=tuple(stored(o.files, sink))) for o in done]


class Serial:
    """Everything rendered here, when asked for (the same interface as `Workers`)."""

    def __init__(self, ctx: RenderContext, env: jinja2.Environment, counts: Counter | None) -> None:
        self._ctx, self._env, self._counts = ctx, env, counts

    def beliefs(self, beliefs: Sequence[Belief]) -> Iterator[Outputs]:
        return (belief_outputs(self._ctx, self._env, self._counts, b) for b in beliefs)

    def site(self, emitters: Sequence[Emitter], here: bool = False) -> Iterator[OutputFile]:
        return (f for emit in emitters for f in emit(self._ctx))


class Workers:
    """A fork pool for the belief chunks and the site's own files, or a thread of this
    process for the latter (`site`); both come back in submission order."""

    def __init__(self, pool: ProcessPoolExecutor, thread: ThreadPoolExecutor, jobs: int, ctx: RenderContext,
                 sink: Sink | None) -> None:
        self._pool, self._thread, self._jobs, self._ctx, self._sink = pool, thread, jobs, ctx, sink

    def beliefs(self, beliefs: Sequence[Belief]) -> Iterator[Outputs]:
        # A few beliefs (an incremental build) go out in smaller chunks, so the cores share them.
        size = max(1, min(CHUNK, len(beliefs) // (4 * self._jobs)))
        chunks = [[b.id for b in beliefs[k:k + size]] for k in range(0, len(beliefs), size)]
        return (o for done in self._pool.map(_chunk, chunks) for o in done)

    def site(self, emitters: Sequence[Emitter], here: bool = False) -> Iterator[OutputFile]:
        """Starts the emitters now: in the pool, one task each, or (`here`) one after another
        in a thread of this process. They read every belief, and in a forked worker that
        copies most of the inherited heap: in a 10k claim edit, 15,000 page faults in each
        worker, a third of the workers' time. The build process, which otherwise only waits
        on the workers, does that once; but it then holds what they use at their peak
        (50k beliefs: 217 -> 531 MB), so `here` is for builds that render few pages
        (`site_files_here`)."""
        if here:
            pending = [self._thread.submit(_emitted, emit, self._ctx, self._sink) for emit in emitters]
        else:
            pending = [self._pool.submit(_emit, emit) for emit in emitters]
        return (f for task in pending for f in task.result())


def site_files_here(rendered: int, published: int) -> bool:
    """Whether the site's own files are better made in this process (`Workers.site`) while the
    pool renders `rendered` of the `published` beliefs' pages. Not in a cold build (memory);
    nor when the workers would have too little to do meanwhile: made here, the files take one
    core for the emitters' time E (0.34 s at 10k beliefs, growing with the site), against
    about 1.35 E of worker time shared by both cores in the pool, so this wins only when the
    pages take more than about 0.65 E (some 55 pages of 3-6 ms at 10k: SITE_FILES_HERE)."""
    least, most = SITE_FILES_HERE
    return published * least <= rendered < published * most


def core_for_site_files(rendered: int, published: int, jobs: int) -> bool:
    """Whether the pool should leave one of the `jobs` cores to this process, whose thread makes
    the site's own files (`site_files_here`): `jobs` workers and that thread would share
    `jobs` cores while both have work. It pays while the pages' work, which one worker fewer
    takes on, is at most (jobs - 1) times the emitters' (about PAGES_PER_EMITTERS pages per
    published belief). A 10k claim edit renders 72 pages: with one worker the build took
    1.23 s, with two 1.43 s (medians of 8, side by side); at 156 pages two workers won."""
    return jobs > 1 and rendered <= (jobs - 1) * published * PAGES_PER_EMITTERS


def _emitted(emit: Emitter, ctx: RenderContext, sink: Sink | None) -> list[OutputFile]:
    return stored(list(emit(ctx)), sink)


def _emit(emit: Emitter) -> list[OutputFile]:
    ctx, _, _, sink = _worker  # type: ignore[misc]
    return _emitted(emit, ctx, sink)


@contextmanager
def renderer(ctx: RenderContext, env: jinja2.Environment, counts: Counter | None, jobs: int,
             sink: Sink | None = None, spare: bool = False) -> Iterator[Serial | Workers]:
    """Renders beliefs and the site's files, with `jobs` processes (one fewer in the pool when
    `spare`: this process's thread makes the site's files, `core_for_site_files`); with a
    `sink` (writing files into the site folder) the workers write the files themselves. Sites of fewer than
    SERIAL_BELOW published beliefs render here. A worker that dies (killed, out of memory)
    fails the build with BrokenProcessPool rather than hanging it."""
    if jobs <= 1 or len(ctx.visible) < SERIAL_BELOW or "fork" not in multiprocessing.get_all_start_methods():
        yield Serial(ctx, env, counts)
        return
    # Frozen, the inherited objects are left out of the workers' collections, which would
    # otherwise walk them and so copy the pages they sit on (0.25 of 2.2 s in a 10k claim edit).
    gc.freeze()
    workers = jobs - 1 if spare else jobs
    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("fork"),
                               initializer=_start, initargs=(ctx, env, counts, sink, os.getpid()))
    thread = ThreadPoolExecutor(1, thread_name_prefix="site files")  # its thread starts with its first task
    try:
        pool.submit(int).result()  # with fork every worker starts on the first task: now, before any thread
        yield Workers(pool, thread, workers, ctx, sink)
    finally:
        try:  # the thread's running emitter ends first (a signal here still ends the pool)
            thread.shutdown(wait=True, cancel_futures=True)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)
            gc.unfreeze()
