"""Render: an Evaluation and a SiteConfig -> output files, through emitters listed as data.

Each visible belief's files (page, index.json, badges) come first (render.belief, in
parallel with `jobs`); then each emitter module exposes `emit(ctx) -> Iterator[OutputFile]`
(exports: one per file, `exports.PARTS`); adding an output is one module plus one line in
`emitters()`. Render is pure: no clock, no randomness, no absolute
paths, collections sorted, so the same input gives byte-identical output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

from ..config import SiteConfig
from ..evaluate import Evaluation
from ..model import Belief
from .. import urls

__all__ = ["OutputFile", "RenderContext", "Sink", "render", "stored", "PAGES_DONE"]


@dataclass(frozen=True, slots=True)
class OutputFile:
    """One file of the site: a POSIX path relative to the site root, and its bytes (or
    `origin`: an identical file of the previous build, linked rather than written)."""

    path: str
    data: bytes
    origin: str | None = None
    written: bool = False
    """Already written into the site folder by a worker process, the site files' thread
    (render.parallel) or the search thread through the writer's sink (data left out)."""
    same: bool = False
    """With `written`: not written, as the writer found the last build's file with these bytes."""


class _PagesDone:
    """`PAGES_DONE`'s type: not a file, so no writer can take it for one."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "PAGES_DONE"


PAGES_DONE = _PagesDone()
"""In `render(..., pages_first=True)`'s stream: every file but the search bundle came before
it; a writer may publish them now (write.update_site), while Pagefind indexes."""


@dataclass(frozen=True, slots=True)
class RenderContext:
    """Everything an emitter may read; built once per build."""

    evaluation: Evaluation
    config: SiteConfig
    visible: frozenset[str]
    """Ids that may appear anywhere in the output (all of them without `visible_to`)."""
    documents: Mapping[str, str] = field(default_factory=dict)
    """id -> document path relative to the repository (for "edit this belief")."""
    diagrams: Mapping[str, str] = field(default_factory=dict)
    """id -> inline SVG of its dependency diagram (links relative from its page)."""
    panels: Mapping[str, Any] = field(default_factory=dict)
    """id -> its explain, trace and impact panels (render.panels.Panels), computed once."""
    diff: Any = None
    """The diff.NetworkDiff of `build --diff-base` (the changes page), or None."""
    marks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """id -> change labels (`edited`, `IN→OUT`...) from the diff, computed once per build."""
    rows: Any = None
    """The rows of the site's own files kept by the build cache (cache.Rows), or None (rows.py)."""
    texts: Mapping[str, Belief] | None = None
    """The beliefs as read by one belief's files (render.belief records the lookups), or None."""
    memo: dict = field(default_factory=dict, compare=False, repr=False)
    """Per-build memo of values every page repeats (views.ref); never read across builds."""

    @property
    def beliefs(self) -> Mapping[str, Belief]:
        """Every belief of the network (visible or not: statuses use them all)."""
        return self.evaluation.network.beliefs if self.texts is None else self.texts

    @property
    def recording(self) -> bool:
        """Whether each belief's files note the beliefs they read (render.belief): only a
        build with a cache, which also keeps the rows (`rows`), keeps the reads."""
        return self.rows is not None

    def is_visible(self, belief_id: str) -> bool:
        """True when the id may be shown, linked or counted."""
        return belief_id in self.visible

    def shown(self) -> list[Belief]:
        """Visible beliefs, sorted by id (sorted once per build: every listing and export asks;
        never memoised through `texts`, whose lookups one belief's files record)."""
        if self.texts is not None:
            return [b for i, b in sorted(self.beliefs.items()) if i in self.visible]
        found = self.memo.get("shown")
        if found is None:
            found = self.memo["shown"] = [b for i, b in sorted(self.beliefs.items()) if i in self.visible]
        return list(found)

    def panels_of(self, belief_id: str):
        """The belief's panels (computed on demand when the build did not precompute them)."""
        found = self.panels.get(belief_id)
        if found is None:
            from .panels import panels_for
            found = panels_for(self.evaluation, belief_id, self.config.panel_max_items, self.is_visible,
                               self.explain_steps())
        return found

    def explain_steps(self) -> dict:
        """queries.explain's memo of steps, shared by every explanation of this build."""
        return self.memo.setdefault("explain steps", {})

    def page(self, belief_id: str) -> str:
        """Output path of a belief page."""
        found = self.memo.get(("page", belief_id))
        if found is None:
            found = self.memo[("page", belief_id)] = urls.page_path(belief_id, self.config.prefix)
        return found

    def href(self, from_file: str, to_file: str) -> str:
        """Relative link honouring `use_directory_urls`."""
        here = from_file.rpartition("/")[0]
        if not here or to_file.startswith(here + "/"):
            return urls.relative_href(from_file, to_file, self.config.use_directory_urls)
        # Outside the page's own folder, the link depends only on the folder above it: every
        # belief page shares one (tens of thousands of links per build).
        key = ("href", here.rpartition("/")[0], to_file)
        found = self.memo.get(key)
        if found is None:
            found = self.memo[key] = urls.relative_href(from_file, to_file, self.config.use_directory_urls)
        return found


Emitter = Callable[[RenderContext], Iterable[OutputFile]]

Sink = Callable[[Iterable[OutputFile]], set[str]]
"""Writes files into the site folder (write.store_all bound to it); returns the paths of those
it left as the last build wrote them."""


def stored(files: Sequence[OutputFile], sink: Sink | None) -> list[OutputFile]:
    """The files, written by the sink (a worker's or a render thread's) and passed on
    without their bytes; as they are without one."""
    if sink is None:
        return list(files)
    same = sink(files)
    return [OutputFile(f.path, b"", written=True, same=f.path in same) for f in files]


def emitters() -> tuple[Emitter, ...]:
    """The site's own outputs, after the belief files (render.belief), in order."""
    from . import assets, badges, changes, exports, graph, pages

    return (pages.emit, *exports.PARTS, graph.emit, badges.emit, assets.emit,
            changes.emit, changes.emit_redirects)


def render(ctx: RenderContext, jobs: int = 1, reuse: Mapping[str, Sequence[OutputFile]] | None = None,
           done: Callable[[str, Any], None] | None = None, stages: Any = None,
           sink: Sink | None = None,
           saved: Any = None, pages_first: bool = False) -> Iterator[OutputFile]:
    """All output files of the site: every visible belief's files (rendered by `jobs`
    processes, or taken from `reuse`, id -> files of the previous build), the site's own
    files, then the search bundle, which Pagefind builds while the pages render. With
    `pages_first` (serve), `PAGES_DONE` follows the site's files and Pagefind starts only
    then: the pages, which a reader waits for, get every core; the index follows.

    `done(id, outputs)` is called for each belief in id order (outputs: render.belief.Outputs,
    None when reused); `stages` (progress.Stages) gets the time spent producing each part;
    `sink` lets worker processes write belief files themselves (write.store_all), and the
    search thread its bundle, as soon as Pagefind gives it; `saved`
    (search.SavedBundles: the build's cache) keeps the search bundle for unchanged records."""
    from ..progress import Stages
    from . import pages, parallel, search

    stages = stages or Stages()
    reuse = reuse or {}
    env, counts = pages.environment(ctx), pages.belief_page_counts(ctx)
    shown = ctx.shown()
    rendered = [b for b in shown if b.id not in reuse]
    here = parallel.site_files_here(len(rendered), len(shown))
    spare = here and parallel.core_for_site_files(len(rendered), len(shown), jobs)
    with parallel.renderer(ctx, env, counts, jobs, sink, spare) as workers:
        indexing = None
        try:
            # With a pool these start now, beside the beliefs (in this process, for some incremental builds).
            site = workers.site(emitters(), here=here)
            fresh = workers.beliefs(rendered)  # with a pool: submitted now
            # After the fork (workers must not inherit its threads), and once they have work:
            # the records take 0.2 s of a 10k build.
            indexing = None if pages_first else search.start(ctx, saved, sink)
            yield from stages.timed("belief files", _belief_files(shown, fresh, reuse, done))
            yield from stages.timed("site files", site)
        except BaseException:
            if indexing is not None:
                indexing.abandon()
            raise
    if pages_first and search.enabled(ctx):
        yield PAGES_DONE
        indexing = search.start(ctx, saved, sink)
    if indexing is not None:
        try:
            yield from stages.timed("search (waiting for Pagefind)", indexing.files())
        except BaseException:  # Ctrl+C while waiting: no Pagefind outlives its build
            indexing.abandon()
            raise


def _belief_files(shown: list[Belief], fresh: Iterator, reuse, done) -> Iterator[OutputFile]:
    """Each published belief's files, in id order: kept (`reuse`) or the next of `fresh`."""
    for belief in shown:
        outputs = None if belief.id in reuse else next(fresh)
        if done is not None:
            done(belief.id, outputs)
        yield from reuse[belief.id] if outputs is None else outputs.files
