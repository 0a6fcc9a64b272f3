"""The one place the stages are chained: load -> parse -> evaluate -> (check | fmt | export)."""

from __future__ import annotations

import gc
import os
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterator, Mapping

from .checks import at_status_lines, check_documents
from .diff.aliases import alias_problems
from .diagnostics import Diagnostic, os_problem
from .evaluate import DEFAULT_LIMIT, Evaluation, evaluate
from .fmt import encode, format_document
from .ids import document_path
from .load import load
from .load import SourceFile, Vouch, hidden
from .model import Belief
from .parse import Facts, Parsed, parse
from .parse.network_json import NodesRead
from .serialize import write_document, write_network_json, write_project
from .config import SiteConfig
from .evaluate.visibility import visible_ids
from .cache import Cache, Reuse, Rows, Saved, keep_evaluation, kept_evaluation, locked
from .documents_cache import DocumentsCache
from .progress import Stages
from .render import OutputFile, RenderContext, render
from .render.pages import raised_by_template, template_problem
from .render.search import SearchError
from .write import REMOVING, update_site, write_site

__all__ = ["Checked", "Built", "check", "build", "formatted", "imported", "exported"]


@dataclass(frozen=True, slots=True)
class Checked:
    """A source read and evaluated, with every diagnostic."""

    parsed: Parsed
    evaluation: Evaluation
    diagnostics: tuple[Diagnostic, ...]
    evaluated: bool = False
    """Whether the whole network was evaluated here: a build cache then keeps the evaluation
    (cache.keep_evaluation); False when one was taken from memory or the cache."""


@dataclass
class Memory:
    """What a process that builds again and again (serve's build process) keeps from one
    build to the next: the last evaluation (taken when nothing it reads changed:
    evaluate.evaluate), the nodes of the last network.json read (parse.network_json.NodesRead),
    the facts of the last documents read (documents_cache), the content hashes of its beliefs
    (cache.texts) and the manifest it saved (cache.Saved)."""

    evaluation: Evaluation | None = None
    nodes: NodesRead = field(default_factory=NodesRead)
    facts: dict[str, Facts] = field(default_factory=dict)
    """key -> the facts of a document the last build's cache held (DocumentsCache.kept): the
    same objects, so their beliefs' content hashes are taken too."""
    texts: dict[str, tuple[Belief, str]] = field(default_factory=dict)
    """id -> (Belief, its content hash) of the last build with a cache (cache.texts)."""
    manifest: Saved | None = None
    """The manifest the last build saved (cache.Saved): not read nor checked again."""


def check(source: str | Path, limit: int = DEFAULT_LIMIT,
          known: Callable[[SourceFile], Facts | None] | None = None, vouched: Vouch | None = None,
          memory: Memory | None = None, cache: Path | None = None) -> Checked:
    """Read and evaluate a source; collect all diagnostics (never raises on content).
    `known(file)` may give a document's facts from the build's cache (parse.parse),
    `vouched` spare reading the documents it knows unchanged (load.load), `memory`
    what the last check in this process found (left holding this one's), and `cache` a
    build cache folder whose kept evaluation is taken when nothing it read changed."""
    with _collector_paused():
        sources = load(source, vouched)
        parsed = parse(sources, known, memory.nodes if memory is not None else None)
        previous = memory.evaluation if memory is not None else None
        found = kept_evaluation(cache, parsed.network, limit) if cache is not None and previous is None else None
        evaluation = found or evaluate(parsed.network, limit, previous)
        if memory is not None:
            memory.evaluation = evaluation
    found_problems = (*parsed.diagnostics, *at_status_lines(evaluation.diagnostics, parsed.facts),
                      *check_documents(parsed.facts, evaluation), *alias_problems(parsed.network))
    if not parsed.network.beliefs and not any(d.severity == "error" for d in found_problems):
        found_problems += (Diagnostic(str(source), 0, "W607", "holds no beliefs",
                                      "a site built from it has no belief pages: is this the source meant?"),)
    # evaluate hands back the previous one's very results when nothing it reads changed
    taken = found is not None or previous is not None and evaluation.status is previous.status
    return Checked(parsed, evaluation, tuple(sorted(set(found_problems), key=Diagnostic.sort_key)),
                   evaluated=not taken)


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Reading builds a large acyclic structure that reference counting frees on its own; the
    cycle collector would walk it again and again as it grows (0.7 of 3.5 s at 50,000 beliefs),
    and again after rendering (0.1 of 1.45 s in a 10k claim edit). Worker processes collect
    their own garbage (render.parallel). Only on the main thread: the collector's switch is
    the process's, and two threads pausing it at once could leave it off."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    was = gc.isenabled()
    try:
        gc.disable()
        yield
    finally:
        if was:
            gc.enable()


def formatted(checked: Checked) -> list[tuple[Path, bytes, bytes]]:
    """(path, old bytes, new bytes) for every document whose derived content is stale."""
    if len(checked.parsed.documents) != len(checked.parsed.facts):  # read through a cache
        raise ValueError("fmt needs every document parsed (check without `known`)")
    changes = []
    for doc in checked.parsed.documents:
        old = encode(doc, doc.source.text)
        new = encode(doc, format_document(doc, checked.evaluation))
        if new != old:  # then as the file is: with mixed line ends, the new one has the file's main kind
            changes.append((Path(doc.source.path), _bytes_of(Path(doc.source.path), old), new))
    return changes


def _bytes_of(path: Path, read: bytes) -> bytes:
    try:
        return path.read_bytes()
    except OSError:  # gone since: as it was read
        return read


def imported(checked: Checked, out_dir: Path, summaries: Mapping[str, str] | None = None) -> list[tuple[Path, bytes]]:
    """Documents (and `_project.yaml`) for every belief of a network.json or beliefs.md;
    `summaries`: id -> summary (belief-summaries.json beside a network.json)."""
    ev, network = checked.evaluation, checked.parsed.network
    files = [(out_dir / "_project.yaml", write_project(network).encode("utf-8"))]
    for belief in network.beliefs.values():
        if summaries and belief.id in summaries:
            belief = replace(belief, summary=summaries[belief.id])
        text = write_document(belief, ev)
        files.append((out_dir / document_path(belief.id), text.encode("utf-8")))
    return files


def exported(checked: Checked) -> tuple[bytes, dict[str, str]]:
    """The evaluated network as network.json bytes, and its summaries (id -> text), which
    network.json has no field for (belief-summaries.json)."""
    network = checked.parsed.network
    summaries = {i: b.summary for i, b in network.beliefs.items() if b.summary}
    return write_network_json(network, checked.evaluation).encode("utf-8"), summaries


def read_back_otherwise(checked: Checked) -> list[tuple[str, str, str]]:
    """(id, value, value read back) of each belief network.json computes otherwise: a
    document's tag on a belief outside the network (W401: its assumed value) has no field
    there, so read back that belief counts as missing."""
    network, now = checked.parsed.network, checked.evaluation
    beliefs = network.beliefs
    if not any(ref not in beliefs and tag for b in beliefs.values() for j in b.justifications
               for ref, tag in zip((*j.antecedents, *j.outlist), (*j.ante_tags, *j.out_tags))):
        return []
    untagged = {i: replace(b, justifications=tuple(replace(j, ante_tags=(), out_tags=()) for j in b.justifications))
                for i, b in beliefs.items()}
    then = evaluate(replace(network, beliefs=untagged, pins_lost=True), now.limit)  # as read from network.json
    return [(i, now.value(i), then.value(i)) for i in network.beliefs if now.value(i) != then.value(i)]



@dataclass(frozen=True, slots=True)
class Built:
    """The outcome of a build: what was written (or why not)."""

    checked: Checked
    diagnostics: tuple[Diagnostic, ...]
    files: int
    written: bool
    reused: int = 0
    """Beliefs whose files were kept from the previous build (incremental builds)."""
    unparsed: int = 0
    """Documents whose facts the cache held: not parsed again."""
    unread: int = 0
    """Of those, the documents not even read (their files' status unchanged)."""
    published: int | None = None
    """Beliefs with a page, when visible_to left some out (None: all of them)."""


def _kept(checked: Checked, source: Path, keep_going: bool, strict: bool) -> Checked | None:
    """The network to publish: as checked, or without the files that have errors (--keep-going)."""
    # E204: parse already kept only the first file by sorted path (spec §3.5); keep it.
    failing = {d.path for d in checked.diagnostics
               if (d.severity == "error" or strict) and d.code != "E204"}
    if not failing:
        return checked
    if not keep_going:
        return None
    network = checked.parsed.network
    beliefs = {i: b for i, b in network.beliefs.items() if b.path not in failing}
    parsed = replace(checked.parsed, network=replace(network, beliefs=beliefs))
    evaluation = evaluate(parsed.network, checked.evaluation.limit)
    return Checked(parsed, evaluation, checked.diagnostics)


def build(config: SiteConfig, out: Path, keep_going: bool = False, strict: bool = False,
          diff_base: str | None = None, jobs: int = 1, cache: Path | None = None,
          stages: Stages | None = None, progress: Callable[[int, int], None] | None = None,
          waiting: Callable[[str], None] | None = None, memory: Memory | None = None,
          published: Callable[[Built], None] | None = None) -> Built:
    """Check the configured source and write the site into `out` (atomically), with the
    cycle collector paused (`_collector_paused`).

    `diff_base` (a git revision, git:REV[:PATH], a folder or a network.json) adds the changes
    page and marks changed beliefs; `jobs` processes render the belief files; with a `cache`
    folder, beliefs whose files cannot have changed since the last build there are kept,
    not rendered (cache.py), and documents whose files are unchanged are not parsed again
    (documents_cache.py); `stages` collects seconds per stage; `progress(done, total)`
    is called as belief files are written; `waiting(pid)` when another build holds the
    cache folder (this one waits for it); `memory`: what the last build in this process
    found (`Memory`: serve's build process keeps one); `published(built so far)`: a
    build with search has put its pages in place and is waiting for Pagefind
    (write.update_site; serve reloads its readers' pages then)."""
    with _collector_paused():
        return _build(config, out, keep_going, strict, diff_base, jobs, cache, stages, progress, waiting,
                      memory, published)


def _build(config: SiteConfig, out: Path, keep_going: bool, strict: bool, diff_base: str | None, jobs: int,
           cache: Path | None, stages: Stages | None, progress, waiting, memory: Memory | None,
           published: Callable[[Built], None] | None) -> Built:
    stages = stages or Stages()
    source = config.source_path()
    misplaced = _misplaced(out, cache, source)
    with stages.stage("read and evaluate"):
        documents = None
        if cache is not None and misplaced is None:
            documents = DocumentsCache.open(cache, memory.facts if memory is not None else None)
        checked = check(source, config.panel_max_items, documents.facts if documents else None,
                        documents.vouch if documents else None, memory, cache if misplaced is None else None)
        if memory is not None:
            memory.facts = documents.kept(checked.parsed.facts) if documents is not None else {}
        kept = _kept(checked, source, keep_going, strict)
    if kept is None:  # nothing is written; the documents' facts are kept all the same
        unsaved = _save_documents(documents, checked.parsed.facts, cache, waiting)
        return Built(checked, (*checked.diagnostics, *unsaved), 0, False,
                     unparsed=documents.hits if documents else 0, unread=documents.unread if documents else 0)
    ctx = _context(kept, config, source, checked)
    diagnostics = list(checked.diagnostics)
    if config.diagram_engine != "builtin":  # Graphviz lays out every diagram in one batch
        with stages.stage("diagrams (graphviz)"):
            from .render.diagrams import render_diagrams
            diagrams = render_diagrams(ctx)
        ctx = replace(ctx, diagrams=diagrams.svg)
        diagnostics += diagrams.diagnostics
    if diff_base:
        with stages.stage("diff"):
            from .diff import compare, read_side, side_of  # here: only builds given a base compare
            base = read_side(diff_base, source, limit=config.panel_max_items)
            unreadable = [d for d in base.diagnostics if d.code == "E802"]
            if unreadable:
                return Built(kept, (*checked.diagnostics, *unreadable), 0, False)
            diff = compare(base, side_of(config.source, kept.evaluation), config.panel_max_items)
        ctx = replace(ctx, diff=diff, marks=diff.marks())
    if misplaced is not None:
        return Built(kept, (*diagnostics, misplaced), 0, False)
    with ExitStack() as held:
        if cache is not None:
            try:
                held.enter_context(locked(cache, waiting))
            except OSError as exc:  # read-only checkout, say: the cache only saves time
                diagnostics.append(_no_cache(cache, exc))
                cache = None
        return _produce(kept, ctx, out, jobs, cache, stages, progress, diagnostics, documents, memory, published)


def _misplaced(out: Path, cache: Path | None, source: Path) -> Diagnostic | None:
    """E801 for a cache folder inside the output folder (which is replaced), or an output or
    cache folder inside the documents folder, where the next build would read its files as
    documents (links followed; a dot-folder is never read)."""
    if cache is not None and Path(os.path.abspath(cache)).is_relative_to(os.path.abspath(out)):
        return Diagnostic(str(cache), 0, "E801", "the cache folder is inside the output folder",
                          "choose a --cache-dir outside -o (the output folder is replaced)")
    if not source.is_dir():
        return None
    home = Path(os.path.realpath(source))
    for folder, what, flag in ((out, "output", "-o"), (cache, "cache", "--cache-dir")):
        where = Path(os.path.realpath(folder)) if folder is not None else None
        if where is not None and where.is_relative_to(home) and not hidden(where.relative_to(home)):
            return Diagnostic(str(folder), 0, "E801", f"the {what} folder is inside the documents folder",
                              f"choose a {flag} folder outside it (or a dot-folder, which is never read): "
                              "the next build would read its files as belief documents")
    return None


def _save_documents(documents: DocumentsCache | None, facts: tuple[Facts, ...], cache: Path | None,
                    waiting: Callable[[str], None] | None) -> list[Diagnostic]:
    """Keep the documents' facts of a build stopped by errors: the build after the fix then
    reads and parses only the documents that changed (serve rebuilds on every save)."""
    if documents is None or cache is None:
        return []
    try:
        with locked(cache, waiting):
            return _keep_documents(documents, facts, cache)
    except OSError as exc:  # the lock itself
        return [_no_cache(cache, exc)]


def _no_cache(cache: Path, exc: OSError) -> Diagnostic:
    return Diagnostic(str(cache), 0, "W804", f"cannot use the cache folder: {os_problem(exc)}",
                      "the build went on without it; choose a writable --cache-dir, or --no-cache")


def _produce(kept: Checked, ctx: RenderContext, out: Path, jobs: int, cache: Path | None,
             stages: Stages, progress, diagnostics: list[Diagnostic],
             documents: DocumentsCache | None = None, memory: Memory | None = None,
             published: Callable[[Built], None] | None = None) -> Built:
    """Render and write the site (with the cache folder held, when there is one); the
    documents' facts are kept even when rendering or writing failed (they stay true)."""
    store, reused = None, None
    if cache is not None:
        with stages.stage("cache"):
            store = Cache.open(cache, memory.manifest if memory is not None else None)
            reused = store.reusable(ctx, memory.texts if memory is not None else None)
            if memory is not None:
                beliefs = ctx.evaluation.network.beliefs
                memory.texts = {i: (beliefs[i], text) for i, text in store.contents.items()}
        ctx = replace(ctx, rows=Rows(store.folder, store.salt, store.texts, store.code))
    pages = None
    if published is not None:
        def pages(files: int) -> None:
            published(Built(kept, tuple(diagnostics), files, True, len(reused.files) if reused else 0,
                            documents.hits if documents is not None else 0,
                            documents.unread if documents is not None else 0))
    started = time.perf_counter()  # "write" is what the stages inside leave (not a stage: Progress.phase)
    try:
        done = _done(store, progress, len(ctx.visible))
        paths, problems = _write(ctx, out, jobs, reused, done, stages, store, pages)
    except Exception as exc:
        problem = _stopped(exc, ctx, out)
        if problem is None:  # a bug: its traceback is wanted
            raise
        unsaved = _keep_documents(documents, kept.parsed.facts, store.folder) if store is not None else []
        return Built(kept, (*diagnostics, problem, *unsaved), 0, False)
    inside = sum(v for k, v in stages.seconds.items() if k in _WRITE_STAGES)
    stages.add("write", time.perf_counter() - started - inside)
    if store is not None:
        with stages.stage("cache"):
            diagnostics += _keep_documents(documents, kept.parsed.facts, store.folder)
            try:
                if not problems:
                    store.save(out, paths)
            except OSError as exc:  # the site is written; the next build is a cold one
                diagnostics.append(_no_cache(store.folder, exc))
            try:
                if kept.evaluated:
                    keep_evaluation(store.folder, kept.evaluation)
            except (OSError, ValueError):  # it only saves time (ValueError: what marshal cannot write)
                pass
            if memory is not None:
                memory.manifest = store.saved if not problems else None
    return Built(kept, (*diagnostics, *problems), len(paths), not problems,
                 len(reused.files) if reused else 0, documents.hits if documents is not None else 0,
                 documents.unread if documents is not None else 0,
                 len(ctx.visible) if len(ctx.visible) < len(kept.parsed.network.beliefs) else None)


KEPT_AT_LEAST = 0.7
"""Share of the published beliefs whose pages an update of the last build's folder must keep
to be quicker than a new folder swapped in (`_swap_is_quicker`)."""
SWAP_FROM = 500
"""Published beliefs from which that choice is made: a smaller site updates in well under a
second either way, and is always updated (files added by hand stay, as after any update)."""


def _swap_is_quicker(reused: Reuse, ctx: RenderContext) -> bool:
    """Whether to link the kept files into a new folder and swap it in rather than rename the
    rendered ones into the last build's folder. Each rendered page of an update is renamed
    over its old version (4 files per belief: 4.5 s for 6,700 beliefs at 10k, page cache
    dropped), while a new folder costs about 2 s whatever changed. Measured at 10k beliefs
    (no search, page cache dropped), the swap against the update: 33% of pages kept, 10.3 s
    against 13.5 s; 50% kept, 9.7 against 11.0; 71% kept, 7.2 against 7.3. Files the
    previous build did not write go with the old folder, as after a cold build. Not for
    serve, whose updates put the pages in place before the search bundle."""
    shown = len(ctx.visible)
    return shown >= SWAP_FROM and len(reused.files) < KEPT_AT_LEAST * shown


def _stopped(exc: Exception, ctx: RenderContext, out: Path) -> Diagnostic | None:
    """The diagnostic of a build stopped while rendering or writing, never a traceback: no
    Pagefind, a template that fails, a place that cannot be written. None for anything else."""
    if isinstance(exc, SearchError):
        return Diagnostic(str(ctx.config.source_path()), 0, "E803", str(exc), exc.hint)
    if raised_by_template(exc):  # a `templates` override that does not fit, say
        return template_problem(exc)
    if isinstance(exc, BrokenProcessPool):  # a worker killed: the kernel's OOM killer, say
        return Diagnostic(str(out), 0, "E806", "a render worker ended abruptly (killed, or out of memory); "
                          "nothing was written", "build again; with little memory, use fewer --jobs")
    if isinstance(exc, OSError):  # a read-only or missing place, a full disk: the old site stays
        return Diagnostic(str(out), 0, "E806", f"cannot read or write a file of the build: {os_problem(exc)}",
                          "the output folder (-o) must be one this user can create and write; the "
                          "templates folder's files must be readable")
    return None


def _keep_documents(documents: DocumentsCache | None, facts: tuple[Facts, ...], folder: Path) -> list[Diagnostic]:
    """Save the documents' facts (the cache folder held): they stay true whatever the build did."""
    try:
        if documents is not None:
            documents.save(facts)
    except OSError as exc:
        return [_no_cache(folder, exc)]
    return []


def _write(ctx: RenderContext, out: Path, jobs: int, reused: Reuse | None, done, stages: Stages,
           store: Cache | None = None, pages: Callable[[int], None] | None = None):
    """Render into `out`: a whole new site, or (incremental, into the last build's folder)
    only what changed; kept files are then left in place, or hard-linked from the previous
    folder into a new one when writing elsewhere or when few are kept (`_swap_is_quicker`).
    The cache also keeps the search bundle. `pages(files)`:
    the pages are in place, before the search bundle (write.update_site); with it, a build
    that renders everything updates the last build's folder the same way, when it is there."""
    elsewhere = reused is not None and os.path.abspath(reused.origin) != os.path.abspath(out)
    if reused is not None and (elsewhere or pages is None and _swap_is_quicker(reused, ctx)):
        # Links made before the swap survive the old folder's removal (origin may be `out`).
        origin = str(reused.origin)  # string joins: pathlib would take 0.2 s for 40,000 files
        links = {i: [OutputFile(p, b"", f"{origin}/{p}") for p in paths] for i, paths in reused.files.items()}
        return write_site(lambda sink: render(ctx, jobs, links, done, stages, sink, store), out, stages.stage)
    if reused is not None:
        skip, keep, previous = {i: () for i in reused.files}, {p for ps in reused.files.values() for p in ps}, \
            reused.previous
    else:
        previous = store.previous_files(out) if pages is not None and store is not None else None
        if previous is None:
            return write_site(lambda sink: render(ctx, jobs, None, done, stages, sink, store), out, stages.stage)
        skip, keep = None, set()  # serve: every page goes in over the last build's, then the search bundle
    return update_site(lambda sink: render(ctx, jobs, skip, done, stages, sink, store, pages is not None),
                       out, keep, previous, pages)


_WRITE_STAGES = ("belief files", "site files", "search (waiting for Pagefind)", REMOVING)
"""The stages timed inside writing the site (the rest of its time is "write")."""


def _done(store: Cache | None, progress: Callable[[int, int], None] | None, total: int):
    """The per-belief callback of render: the cache notes what was read; progress counts."""
    count = 0

    def done(belief_id: str, outputs) -> None:
        nonlocal count
        count += 1
        if store is not None:
            store.rendered(belief_id, outputs)
        if progress:
            progress(count, total)
    return done


def _context(checked: Checked, config: SiteConfig, source: Path, whole: Checked | None = None) -> RenderContext:
    """`whole`: the network as read, when --keep-going left files out of `checked`: a belief
    resting on a left-out one still carries that one's access tags, and one resting on a
    file that could not be read at all (its tags unknown) is left out too."""
    whole = whole if whole is not None else checked
    incomplete = any(d.severity == "error" for d in whole.diagnostics)
    visible = visible_ids(checked.evaluation, config.visible_to, incomplete)
    if whole is not checked and config.visible_to is not None:
        visible &= visible_ids(whole.evaluation, config.visible_to, incomplete)
    documents = {}
    if source.is_dir():
        base = Path(config.config_path).parent if config.config_path else Path(".")
        # abspath, not resolve: a symlinked beliefs/ is still beliefs/ in the repository
        root, home = Path(os.path.abspath(source)), Path(os.path.abspath(base))
        folder = root.relative_to(home).as_posix() if root.is_relative_to(home) else None
        for doc in checked.parsed.facts:
            if doc.belief is None:
                continue
            if folder is not None:  # the usual case, in string operations (10,000 documents)
                documents[doc.belief.id] = doc.relative if folder == "." else f"{folder}/{doc.relative}"
                continue
            where = root / doc.relative  # the source holds the configuration's folder
            if where.is_relative_to(home):  # else no edit link
                documents[doc.belief.id] = where.relative_to(home).as_posix()
    return RenderContext(checked.evaluation, config, visible, documents)
