"""Issue 7: parallel rendering, incremental builds, progress and --profile.

Parallel and incremental builds must write exactly the site a cold single-process build
writes: every test compares whole output trees byte for byte (tests/test_build.tree_digest).
The network is a seeded generated one (bench/generate.py), large enough for the worker pool.
"""

from __future__ import annotations

import io
import json
from array import array
import marshal
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import zlib
from pathlib import Path

import pytest

from site_builder import cache as cache_module
from site_builder import documents_cache
from site_builder import pipeline
from site_builder.cache import SEARCH_BUNDLE
from site_builder.config import SiteConfig
from site_builder.evaluate.queries import explain_step
from site_builder.pipeline import check
from site_builder.progress import START, Progress, Stages
from site_builder.render import OutputFile, parallel
from site_builder.render import pages as pages_module, rows as rows_module
from site_builder.render.views import CLAIM_ECHO

from .conftest import BAD_CODE, EXAMPLE, ROOT
from .test_build import tree_digest

SIZE = 600  # > parallel.SERIAL_BELOW: the pool is used


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gen") / "network.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), str(SIZE), "-o", str(path)],
                   check=True, capture_output=True)
    return path


def _build(cli, source: Path, out: Path, *extra: str) -> str:
    code, _, err = cli("build", source, "-o", out, "--no-search", *extra)
    assert code == 0, err
    return err


def _cold(cli, source: Path, out: Path, *extra: str) -> dict[str, str]:
    shutil.rmtree(out, ignore_errors=True)
    _build(cli, source, out, "--no-cache", "-j", "1", *extra)
    return tree_digest(out)


# --- parallel -----------------------------------------------------------------------------

def test_parallel_build_writes_the_serial_site_from_worker_processes(cli, generated, tmp_path, monkeypatch):
    pids = tmp_path / "pids"
    real = parallel.belief_outputs

    def noting(ctx, env, counts, belief):  # forked workers inherit this patch
        with open(pids, "a") as f:
            f.write(f"{os.getpid()}\n")
        return real(ctx, env, counts, belief)

    monkeypatch.setattr(parallel, "belief_outputs", noting)
    serial = _cold(cli, generated, tmp_path / "serial")
    pids.unlink()
    _build(cli, generated, tmp_path / "parallel", "--no-cache", "-j", "2")
    assert tree_digest(tmp_path / "parallel") == serial
    workers = set(pids.read_text().split())
    assert len(workers) == 2 and str(os.getpid()) not in workers


_MADE_BY: list[Path] = []
"""Where `_noting_emitter` notes the process that made the site's files, its parent, and
whether it was that process's main thread."""


def _noting_emitter(ctx):  # module level: the pool takes emitters by name
    with open(_MADE_BY[0], "a") as f:
        f.write(f"{os.getpid()} {os.getppid()} {threading.current_thread() is threading.main_thread()}\n")
    return iter(())


def test_an_incremental_build_makes_the_sites_own_files_in_the_build_process(cli, generated, tmp_path, monkeypatch):
    """The listings and exports read every belief: in a forked worker that copies most of the
    inherited heap, which is most of an incremental build's worker time. When the build
    renders some pages but keeps most (parallel.site_files_here), a thread of the build
    process makes them while the workers render those pages. A cold build leaves them to the
    pool (they would raise the build process's peak memory), and so does one that renders
    too few pages to keep the workers busy meanwhile (an edit past a claim's echo: one page).
    The site is the cold one either way."""
    from site_builder import render as render_module
    real = render_module.emitters
    monkeypatch.setattr(render_module, "emitters", lambda: (*real(), _noting_emitter))
    made_by = tmp_path / "made by"
    monkeypatch.setattr(sys.modules[__name__], "_MADE_BY", [made_by])
    rendered_by = _noted_in_workers(monkeypatch, tmp_path / "pids", os.getpid)
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    least, most = parallel.SITE_FILES_HERE
    for edit, here in ((None, False), (_claim, True), (_claim_tail, False)):
        if edit is not None:
            _edit(source, edit)
        made_by.write_text("")
        rendered_by.write_text("")
        report = _build(cli, source, tmp_path / "site", "--cache-dir", tmp_path / "cache", "-j", "2")
        workers = set(rendered_by.read_text().split())
        assert workers and str(os.getpid()) not in workers  # the pool rendered the belief pages
        rendered = SIZE - (_kept(report) if edit is not None else 0)
        assert (SIZE * least <= rendered < SIZE * most) == here
        made = made_by.read_text().split()
        if here:  # a thread beside the one that takes the workers' pages
            assert made == [str(os.getpid()), str(os.getppid()), "False"]
        else:  # one of the workers (forked by this build), not always one that rendered a page
            assert made[0] != str(os.getpid()) and made[1:] == [str(os.getpid()), "True"]
    assert tree_digest(tmp_path / "site") == _cold(cli, source, tmp_path / "cold")


def test_an_edit_that_renders_few_pages_leaves_a_core_to_the_sites_own_files(cli, generated, tmp_path, monkeypatch):
    """When the build process's thread makes the site's own files and the pages are few
    (parallel.core_for_site_files), the pool has one worker fewer than --jobs: two workers
    and that thread on two cores finished a 10k claim edit later than one worker beside it.
    A cold build, and an edit that renders more pages, get every core; the site is the cold one."""
    pools: list[int] = []

    class Recorded(parallel.ProcessPoolExecutor):
        def __init__(self, workers, **options):
            pools.append(workers)
            super().__init__(workers, **options)

    monkeypatch.setattr(parallel, "ProcessPoolExecutor", Recorded)
    source, edited = tmp_path / "network.json", tmp_path / "edited.json"
    site, cache = tmp_path / "site", tmp_path / "cache"
    shutil.copy(generated, edited)
    _edit(edited, _claim)
    shutil.copy(generated, source)
    _build(cli, source, site, "--cache-dir", cache, "-j", "2")
    assert pools == [2]  # cold
    # The claim edited, then put back (the same pages again): their pages few, or too many to leave a core.
    for share, workers, state in ((1.0, 1, edited), (0.0, 2, generated)):
        monkeypatch.setattr(parallel, "PAGES_PER_EMITTERS", share)
        shutil.copy(state, source)
        pools.clear()
        rendered = SIZE - _kept(_build(cli, source, site, "--cache-dir", cache, "-j", "2"))
        assert parallel.site_files_here(rendered, SIZE)
        assert pools == [workers]
        assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def test_a_core_is_left_to_the_sites_own_files_while_the_pages_take_less_than_they_do():
    few = round(10_000 * parallel.PAGES_PER_EMITTERS)  # 100 pages at 10k beliefs
    assert parallel.core_for_site_files(few, 10_000, 2)
    assert not parallel.core_for_site_files(few + 1, 10_000, 2)
    assert parallel.core_for_site_files(2 * few, 10_000, 3)  # the other workers take twice as many
    assert not parallel.core_for_site_files(1, 10_000, 1)  # one job: no pool to take a worker from


def _noted_in_workers(monkeypatch, path: Path, value) -> Path:
    """`value()` written to `path` by the process rendering each belief (a worker's view)."""
    real = parallel.belief_outputs

    def noting(ctx, env, counts, belief):
        with open(path, "a") as f:
            f.write(f"{value()}\n")
        return real(ctx, env, counts, belief)

    monkeypatch.setattr(parallel, "belief_outputs", noting)
    return path


def test_workers_leave_the_inherited_objects_out_of_their_collections(cli, generated, tmp_path, monkeypatch):
    """gc.freeze before the fork: a worker's collections skip the build's objects (walking
    them would copy their pages); the build unfreezes them when the pool ends."""
    import gc
    counts = _noted_in_workers(monkeypatch, tmp_path / "frozen", gc.get_freeze_count)
    before = gc.get_freeze_count()
    _build(cli, generated, tmp_path / "site", "--no-cache", "-j", "2")
    assert min(map(int, counts.read_text().split())) > 10_000  # the network and more, in every worker
    assert gc.get_freeze_count() == before  # the parent collects them again



def test_workers_collect_their_garbage_seldom(cli, generated, tmp_path, monkeypatch):
    """Python's default thresholds ran the collector 1,900 times in a 10k build (0.4 of the
    workers' 12 CPU seconds); the workers use parallel.WORKER_GC, the build process keeps its own."""
    import gc
    before = gc.get_threshold()
    seen = _noted_in_workers(monkeypatch, tmp_path / "thresholds", gc.get_threshold)
    _build(cli, generated, tmp_path / "site", "--no-cache", "-j", "2")
    assert set(seen.read_text().splitlines()) == {str(parallel.WORKER_GC)}
    assert gc.get_threshold() == before != parallel.WORKER_GC


def test_serves_build_process_renders_with_the_jobs_it_is_asked_for(generated, tmp_path, monkeypatch):
    """`serve --jobs N` as `build --jobs N`: the request carries it to the build process
    (run here, in this process, so that the workers' pids can be seen)."""
    from site_builder import rebuild, serve
    from site_builder.cli import _parser
    pids = _noted_in_workers(monkeypatch, tmp_path / "pids", os.getpid)
    for jobs, rendered_by in ((1, {os.getpid()}), (2, None)):
        request = {"source": str(generated), "config": None, "out": str(tmp_path / f"site{jobs}"),
                   "cache": str(tmp_path / f"cache{jobs}"), "overrides": {"search": False}, "jobs": jobs}
        replies = io.StringIO()
        rebuild.serve_requests(io.StringIO(json.dumps(request) + "\n"), replies)
        assert json.loads(replies.getvalue())["written"], replies.getvalue()
        found = set(map(int, pids.read_text().split()))
        pids.unlink()
        assert found == rendered_by if rendered_by else (len(found) == 2 and os.getpid() not in found)
    asked = []
    monkeypatch.setattr(rebuild.Rebuilder, "build", lambda self, *a, **k: asked.append(a[-1]) or rebuild.Reply())
    args = _parser().parse_args(["serve", str(generated), "-j", "3"])
    serve._Builder(args, serve._State(), tmp_path)()
    assert asked == [3]


def test_a_build_explains_each_belief_once_for_all_its_pages(cli, generated, tmp_path, monkeypatch):
    """The explanations of deep beliefs repeat their ancestors' steps: one memo per build."""
    from collections import Counter
    from site_builder.evaluate import queries
    explained: Counter = Counter()
    real = queries.explain_step
    monkeypatch.setattr(queries, "explain_step", lambda ev, i: explained.update([i]) or real(ev, i))
    _build(cli, generated, tmp_path / "site", "--no-cache", "-j", "1")
    assert len(explained) > SIZE // 2 and max(explained.values()) == 1

def test_parallel_build_with_search_equals_serial(cli, generated, tmp_path):
    one = tmp_path / "one"
    cli("build", generated, "-o", one, "--no-cache", "-j", "1")
    two = tmp_path / "two"
    code, _, err = cli("build", generated, "-o", two, "--no-cache", "-j", "2")
    assert code == 0, err
    assert (two / "pagefind").is_dir() and tree_digest(two) == tree_digest(one)


# --- incremental --------------------------------------------------------------------------

def _edit(path: Path, change) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    change(data["nodes"])
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def _busy_premise(nodes: dict) -> str:
    counts = {i: 0 for i in nodes}
    for node in nodes.values():
        for j in node.get("justifications", ()):
            for a in j.get("antecedents", ()):
                counts[a] = counts.get(a, 0) + 1
    return max((i for i, n in nodes.items() if not n.get("justifications") and n.get("truth_value") == "IN"),
               key=lambda i: (counts[i], i))


def _derived(nodes: dict) -> str:
    return sorted(i for i, n in nodes.items() if n.get("justifications"))[len(nodes) // 3]


def _leaf_premise(nodes: dict) -> str:
    cited = {a for n in nodes.values() for j in n.get("justifications", ()) for a in
             (*j.get("antecedents", ()), *j.get("outlist", ()))}
    return sorted(i for i, n in nodes.items() if not n.get("justifications") and i not in cited)[0]


def _claim(nodes):
    target = nodes[_derived(nodes)]
    target["text"] = "Edited: ünïcode & <b>markup</b>. " + target["text"]


def _claim_tail(nodes):
    """An edit past what other pages show of the claim (render.views.CLAIM_ECHO characters),
    of the belief with the most dependents among those whose claims are that long."""
    cited: dict[str, int] = {}
    for node in nodes.values():
        for j in node.get("justifications", ()):
            for a in (*j.get("antecedents", ()), *j.get("outlist", ())):
                cited[a] = cited.get(a, 0) + 1
    target = max((i for i, n in nodes.items() if len(n["text"]) > CLAIM_ECHO + 50), key=lambda i: (cited.get(i, 0), i))
    assert cited.get(target, 0) >= 3
    nodes[target]["text"] += " Edited past the echo: ünïcode & <b>markup</b>."


def _premise_claim(nodes):
    nodes[_busy_premise(nodes)]["text"] = "A rewritten claim of a busy premise."


def _retract(nodes):
    nodes[_busy_premise(nodes)]["truth_value"] = "OUT"


def _justify(nodes):
    target = _derived(nodes)
    nodes[target]["justifications"][0]["antecedents"].append(_busy_premise(nodes))


def _add(nodes):
    nodes["zz-new-belief"] = {"text": "A new premise.", "truth_value": "IN", "justifications": []}


def _remove(nodes):
    del nodes[_leaf_premise(nodes)]


def _metadata(nodes):
    first, other = _derived(nodes), _leaf_premise(nodes)
    nodes[other].setdefault("metadata", {})["challenges"] = [first]
    nodes[first].setdefault("metadata", {})["note"] = "metadata only"


def _nothing(nodes):
    pass


def _pin(nodes):
    """A retract_reason on a belief that is OUT already: no status changes, one pin appears
    (impact panels upstream change without reading this belief)."""
    target = sorted(i for i, n in nodes.items() if n.get("justifications") and n.get("truth_value") == "OUT")[0]
    nodes[target].setdefault("metadata", {})["retract_reason"] = "withdrawn"


EDITS = {"claim": _claim, "claim past its echo": _claim_tail, "busy premise claim": _premise_claim, "retract premise": _retract,
         "justification": _justify, "add belief": _add, "remove belief": _remove,
         "metadata and challenges": _metadata, "no-op": _nothing, "pin": _pin}


def _changed(value):
    """Another value of the same kind (every field of a belief or justification)."""
    if isinstance(value, bool):
        return not value
    if isinstance(value, (str, int)):
        return value + ("x" if isinstance(value, str) else 1)
    if isinstance(value, dict):
        return {**value, "added": 1}
    if value is None:
        return ("text",)
    return (*value, value[0]) if value else ("x",)


def test_every_content_field_changes_a_beliefs_digest_and_no_location_does():
    """A belief's pages are kept while its digest (cache.texts) is unchanged: an edit of any
    field a page may show must change it; where the belief was read must not (an edit above
    it moves every later line)."""
    from dataclasses import fields, replace
    from types import SimpleNamespace

    from site_builder.model import Belief, Justification

    def digest_of(belief):
        ctx = SimpleNamespace(evaluation=SimpleNamespace(network=SimpleNamespace(beliefs={"a": belief})))
        return cache_module.texts(ctx)["a"]

    just = Justification("SL", ("p",), ("q",), "label", {"k": 1}, line=3, ante_lines=(4,), out_lines=(5,),
                         ante_tags=("IN",), out_tags=("OUT",))
    belief = Belief("a", "claim", justifications=(just,), metadata={"m": 1}, summary="s", extra={"e": 1},
                    json_fields=("text",), path="x.md", line=7)
    base = digest_of(belief)
    location = {"path", "line", "ante_lines", "out_lines"}
    for f in fields(Belief):
        if f.name != "justifications":
            moved = digest_of(replace(belief, **{f.name: _changed(getattr(belief, f.name))}))
            assert (moved == base) == (f.name in location), f.name
    for f in fields(Justification):
        edited = replace(just, **{f.name: _changed(getattr(just, f.name))})
        moved = digest_of(replace(belief, justifications=(edited,)))
        assert (moved == base) == (f.name in location), f"justification {f.name}"
    assert digest_of(replace(belief, justifications=(just, just))) != base


def test_what_other_pages_show_of_a_belief_changes_with_every_field_but_its_own_and_the_claim_past_its_echo():
    """cache.shown: the pages of other beliefs are made again only when it changes. Every
    field but the claim and those only its own files show (summary, source, dates) counts
    whole (an impact panel re-evaluates with statuses, tags and metadata); of the claim,
    what `ref` and the diagrams show of it."""
    from dataclasses import replace
    from types import SimpleNamespace

    from site_builder.model import Belief

    def shown_of(*beliefs, old=None, salt="s"):
        network = {b.id: b for b in beliefs}
        ctx = SimpleNamespace(evaluation=SimpleNamespace(network=SimpleNamespace(beliefs=network)))
        return cache_module.shown(ctx, cache_module.texts(ctx), old or {}, salt)

    claim = "A claim\n  over two lines, " + "long enough to be cut where other pages echo it. " * 6
    belief = Belief("a", claim, summary="s", metadata={"m": 1})
    base = shown_of(belief)["a"]
    assert shown_of(replace(belief, text=claim + " An edit at its end."))["a"] == base
    assert shown_of(replace(belief, text=claim.replace("\n  ", " ")))["a"] == base  # shown on one line
    assert shown_of(replace(belief, summary="t"))["a"] == shown_of(replace(belief, summary=""))["a"] == base
    for name in ("source", "source_url", "source_hash", "date", "created_at", "updated_at", "reviewed_at",
                 "verified_at"):
        assert shown_of(replace(belief, **{name: "2026-12-04"}))["a"] == base, name
    for edited in (replace(belief, text="Edited: " + claim), replace(belief, text=claim[:150]),
                   replace(belief, metadata={"m": 2}), replace(belief, retracted=True),
                   replace(belief, retracted_at="2026-12-04"), replace(belief, declared="OUT"),
                   replace(belief, extra={"e": 1})):
        assert shown_of(edited)["a"] != base, edited

    # Taken from the last manifest for a belief whose content hash it holds, made by this salt.
    other = Belief("b", "Another claim.")
    fresh = shown_of(belief, other)
    contents = cache_module.texts(SimpleNamespace(evaluation=SimpleNamespace(network=SimpleNamespace(
        beliefs={"a": belief, "b": other}))))
    old = {"salt": "s", "ids": ["a", "b"], "texts": [f"{contents['a']}:IN::", "changed since:IN::"],
           "shown": ["kept a", "kept b"]}
    assert shown_of(belief, other, old=old) == {"a": "kept a", "b": fresh["b"]}
    assert shown_of(belief, other, old=old, salt="another code or configuration") == fresh
    assert shown_of(belief, other, old={**old, "shown": ["kept a"]}) == fresh  # not one per id: not used


def test_content_fingerprints_are_equal_for_equal_values_only():
    """Content hashes come from marshal's bytes (cache._fingerprint): equal values built apart,
    one string interned and one not, must give the same bytes, or every build would make
    again the pages of beliefs that did not change; values == cannot tell apart must differ."""
    import datetime

    fingerprint = cache_module._fingerprint
    value = {"k": [sys.intern("claim"), 1, True, 1.0, -0.0, None, ("t",)], "é": {"n": "ü\ud800"}}
    built_apart = {"k": ["".join(["cla", "im"]), 1, True, 1.0, -0.0, None, ("t",)], "é": {"n": "ü\ud800"}}
    assert fingerprint(value) == fingerprint(built_apart)
    shared = "shared value"
    assert fingerprint((shared, shared)) == fingerprint((shared, "".join(["shared ", "value"])))
    for other in ({"k": ["claim", True, True, 1.0, -0.0, None, ("t",)], "é": {"n": "ü\ud800"}},
                  {"k": ["claim", 1, True, 1, -0.0, None, ("t",)], "é": {"n": "ü\ud800"}},
                  {"k": ["claim", 1, True, 1.0, 0.0, None, ("t",)], "é": {"n": "ü\ud800"}},
                  {"k": ["claim", 1, True, 1.0, -0.0, None, ["t"]], "é": {"n": "ü\ud800"}},
                  {"é": {"n": "ü\ud800"}, "k": ["claim", 1, True, 1.0, -0.0, None, ("t",)]}):
        assert fingerprint(other) != fingerprint(value), other
    dated = {"when": datetime.date(2026, 12, 4)}  # YAML dates: marshal cannot write them
    assert fingerprint(dated) == fingerprint({"when": datetime.date(2026, 12, 4)})
    assert fingerprint(dated) != fingerprint({"when": datetime.date(2026, 12, 5)})


@pytest.mark.parametrize("edit", list(EDITS))
def test_incremental_build_equals_a_cold_build_after_each_kind_of_edit(cli, generated, tmp_path, edit,
                                                                       monkeypatch):
    # Updates in place however few pages they keep (a busy retraction would link them into a new folder).
    monkeypatch.setattr(pipeline, "KEPT_AT_LEAST", 0)
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    before = tree_digest(site)
    _edit(source, EDITS[edit])
    report = _build(cli, source, site, "--cache-dir", cache)
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
    kept = int(report.split(" unchanged belief page")[0].rsplit(",", 1)[1]) if "kept" in report else 0
    if edit in ("claim", "metadata and challenges", "no-op"):
        assert kept > SIZE // 2  # only the pages that show the edited beliefs were rendered
    if edit == "no-op":
        assert kept == SIZE and tree_digest(site) == before
    if edit == "claim past its echo":
        assert kept == SIZE - 1  # no other page shows the edited part: only its own is rendered
    if edit in ("retract premise", "pin"):
        assert 0 < kept < SIZE  # only the pages that show or compute from a flipped or pinned belief
    if edit in ("justification", "add belief", "remove belief"):
        assert kept == 0  # the structure changed: every page may show it


def _text(belief_id: str, value: str):
    def change(nodes):
        nodes[belief_id]["text"] = value
    return change


def _edit_sequence(nodes: dict) -> list:
    """Edits in a row, each on the network the last one left. Two return to an earlier state
    (a claim put back, a premise restored): no page, row or kept evaluation of another state
    may be taken for them."""
    derived, premise = _derived(nodes), _busy_premise(nodes)
    neighbour = nodes[derived]["justifications"][0]["antecedents"][0]
    claim, other = nodes[derived]["text"], nodes[neighbour]["text"]

    def claims_and_a_date(n):
        n[derived]["text"], n[neighbour]["text"] = "Edited: " + claim, other + " More."
        n[premise]["updated_at"] = "2026-12-05T08:00:00+00:00"

    def structure_and_a_claim(n):
        _justify(n)
        n[derived]["text"] = "Edited again: " + claim

    return [claims_and_a_date, _set(premise, "OUT"), _text(derived, claim), _set(premise, "IN"),
            structure_and_a_claim]


def _by_serve_and_command_line(cli, source: Path, tmp_path: Path, memory) -> tuple[str, "pipeline.Built"]:
    """One build of `source` by serve's build process (`memory` kept between its builds, into
    tmp_path/served) and one by the command line (into tmp_path/site), each on its own cache:
    the command line's report and serve's Built."""
    from site_builder.config import with_overrides
    from site_builder.rebuild import settings
    config = with_overrides(settings(str(source), None)[0], search=False)
    built = pipeline.build(config, tmp_path / "served", jobs=2, cache=tmp_path / "served-cache", memory=memory)
    assert built.written
    return _build(cli, source, tmp_path / "site", "--cache-dir", tmp_path / "cache"), built


def test_edits_in_a_row_on_one_cache_equal_a_cold_build_after_each(cli, generated, tmp_path):
    """Each build takes the last one's cache: a command-line build, and serve's build process,
    which also takes what its last build found (pipeline.Memory). Every other edit rewrites
    the file with another indent, so that every node's line moves."""
    from site_builder.pipeline import Memory

    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    memory = Memory()

    def both() -> tuple[int, int]:
        report, built = _by_serve_and_command_line(cli, source, tmp_path, memory)
        return _kept(report), built.reused

    both()
    kept = []
    for step, change in enumerate(_edit_sequence(json.loads(source.read_text("utf-8"))["nodes"])):
        data = json.loads(source.read_text("utf-8"))
        change(data["nodes"])
        source.write_text(json.dumps(data, ensure_ascii=False, indent=2 if step % 2 else 1), encoding="utf-8")
        kept.append(both())
        cold = _cold(cli, source, tmp_path / "cold")
        assert tree_digest(tmp_path / "site") == cold and tree_digest(tmp_path / "served") == cold, step
    assert all(a == b for a, b in kept), kept
    counts = [a for a, _ in kept]
    assert counts[0] > SIZE // 2 and 0 < counts[1] < SIZE and counts[2] > SIZE // 2 and counts[-1] == 0, counts


def _document_edits(folder: Path, nodes: dict) -> list:
    """Edits of a documents folder in a row (as _edit_sequence): a claim edit that keeps the
    file's size, a premise's status line, both put back, a document removed and one added."""
    derived, premise = folder / f"{_derived(nodes)}.md", folder / f"{_busy_premise(nodes)}.md"
    claim = nodes[_derived(nodes)]["text"]
    assert claim.endswith(".") and claim in derived.read_text("utf-8")

    def replace(path: Path, old: str, new: str):
        def change():
            text = path.read_text("utf-8")
            assert old in text
            path.write_text(text.replace(old, new, 1), encoding="utf-8")
        return change

    def put_back():
        replace(derived, claim[:-1] + "!", claim)()
        replace(premise, "**OUT** · premise", "**IN** · premise")()

    def remove_and_add():
        (folder / f"{_leaf_premise(nodes)}.md").unlink()
        (folder / "zz-new-belief.md").write_text("# zz-new-belief\n\n**IN** · premise\n\nA new premise.\n",
                                                  encoding="utf-8")

    return [replace(derived, claim, claim[:-1] + "!"), replace(premise, "**IN** · premise", "**OUT** · premise"),
            put_back, remove_and_add]


def test_document_edits_in_a_row_on_one_cache_equal_a_cold_build_after_each(cli, generated, tmp_path):
    """The documents folder's cache (documents_cache.py) takes the facts of unchanged files,
    unread: every file but the edited ones was written more than its racy window before the
    first build. Built by the command line and by serve's build process, which also holds the
    last build's facts (pipeline.Memory)."""
    from site_builder.pipeline import Memory

    folder = tmp_path / "beliefs"
    code, _, err = cli("import", generated, "-o", folder)
    assert code == 0, err
    edits = _document_edits(folder, json.loads(generated.read_text("utf-8"))["nodes"])
    memory = Memory()

    def both() -> tuple[int, int]:
        report, built = _by_serve_and_command_line(cli, folder, tmp_path, memory)
        unread = re.search(r"\((\d+) not read\)", report)
        return int(unread.group(1)) if unread else 0, built.unread

    time.sleep(documents_cache.RACY_NS / 1e9 + 0.2)
    both()
    for step, change in enumerate(edits):
        change()
        unread = both()
        # All but the files edited since; the two may differ by the files of the last edit,
        # which one of them reads again when it ran within their racy window (a loaded machine).
        assert min(unread) >= SIZE - 3, (step, unread)
        cold = _cold(cli, folder, tmp_path / "cold")
        assert tree_digest(tmp_path / "site") == cold and tree_digest(tmp_path / "served") == cold, step


def test_a_flip_that_reaches_most_pages_links_the_kept_ones_into_a_new_folder(cli, generated, tmp_path):
    """Updating the last build's folder renames every rendered file into it; when fewer than
    half the pages are kept, linking those into a new folder swapped in is quicker
    (pipeline._swap_is_quicker). Either way the kept files are the same files (inodes)."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    nodes = json.loads(source.read_text("utf-8"))["nodes"]
    untouched = site / "belief" / _leaf_premise(nodes) / "index.html"
    folder, page = site.stat().st_ino, untouched.stat().st_ino
    _edit(source, _set(_quiet_premise(nodes), "OUT"))
    assert _kept(_build(cli, source, site, "--cache-dir", cache)) > SIZE * 3 // 4
    assert (site.stat().st_ino, untouched.stat().st_ino) == (folder, page)  # updated in place
    _edit(source, _retract)
    kept = _kept(_build(cli, source, site, "--cache-dir", cache))
    assert 0 < kept < SIZE // 2
    assert site.stat().st_ino != folder and untouched.stat().st_ino == page  # a new folder, the page linked
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
    _edit(source, _claim)  # the cache the swap saved still vouches for the site
    assert _kept(_build(cli, source, site, "--cache-dir", cache)) > SIZE // 2
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def _kept(report: str) -> int:
    """The pages a build's last line says it kept (0 when it says nothing of them)."""
    return int(report.split(" unchanged belief page")[0].rsplit(",", 1)[1]) if "kept" in report else 0


def _cited(nodes: dict) -> dict[str, int]:
    """id -> how many justifications cite it (antecedents and outlists)."""
    counts = {i: 0 for i in nodes}
    for node in nodes.values():
        for j in node.get("justifications", ()):
            for a in (*j.get("antecedents", ()), *j.get("outlist", ())):
                counts[a] = counts.get(a, 0) + 1
    return counts


def _quiet_premise(nodes: dict) -> str:
    """An IN premise that a few justifications cite (its flip reaches a few pages)."""
    cited = _cited(nodes)
    return min((i for i, n in nodes.items() if not n.get("justifications") and n.get("truth_value") == "IN"
                and 1 <= cited[i] <= 3), key=lambda i: (cited[i], i))


def _set(belief_id: str, value: str):
    def change(nodes):
        nodes[belief_id]["truth_value"] = value
    return change


def _outlisted_premise(nodes: dict) -> str:
    """A premise that sits in some outlist (its flip turns a dependent the other way)."""
    return sorted({o for n in nodes.values() for j in n.get("justifications", ()) for o in j.get("outlist", ())
                   if o in nodes and not nodes[o].get("justifications")})[0]


def _retract_derived(nodes):
    """A derived IN belief stored OUT while its justification holds: pinned OUT (W502)."""
    target = sorted(i for i, n in nodes.items() if n.get("justifications") and n.get("truth_value") == "IN")[5]
    nodes[target]["truth_value"] = "OUT"


def _many_premises(nodes):
    import random
    premises = sorted(i for i, n in nodes.items() if not n.get("justifications"))
    for i in random.Random(7).sample(premises, 5):
        nodes[i]["truth_value"] = "OUT" if nodes[i].get("truth_value") == "IN" else "IN"


def test_status_flips_render_only_the_pages_that_show_or_compute_from_them(cli, generated, tmp_path):
    """Flips one after another (a premise retracted and asserted again, an outlist member,
    a derived belief retracted, several premises at once): each incremental build writes the
    cold build's site, and a flip that reaches few beliefs keeps most pages. A belief page
    reads statuses through its explain and impact panels beyond the beliefs it links
    (render.belief records those reads), so any unrecorded read shows up as a stale page."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    nodes = json.loads(source.read_text(encoding="utf-8"))["nodes"]
    quiet, outlisted = _quiet_premise(nodes), _outlisted_premise(nodes)
    flips = [("quiet premise retracted", _set(quiet, "OUT")), ("asserted again", _set(quiet, "IN")),
             ("outlist member", _set(outlisted, "OUT" if nodes[outlisted].get("truth_value") == "IN" else "IN")),
             ("derived retracted", _retract_derived), ("five premises", _many_premises)]
    kept = {}
    for name, flip in flips:
        _edit(source, flip)
        report = _build(cli, source, site, "--cache-dir", cache)
        kept[name] = int(report.split(" unchanged belief page")[0].rsplit(",", 1)[1])
        assert tree_digest(site) == _cold(cli, source, tmp_path / "cold"), name
    assert kept["quiet premise retracted"] > SIZE * 3 // 4 and kept["asserted again"] > SIZE * 3 // 4, kept
    assert all(0 < k < SIZE for k in kept.values()), kept


def _network(tmp_path: Path, nodes: dict) -> Path:
    path = tmp_path / "network.json"
    path.write_text(json.dumps({"nodes": {i: {"text": f"Claim of {i}.", "truth_value": value,
                                              "justifications": [{"type": "SL", "antecedents": list(ante)}
                                                                 for ante in justs]}
                                          for i, (value, justs) in nodes.items()}}), encoding="utf-8")
    return path


def test_an_explanation_taken_from_another_pages_memo_still_records_what_it_read(cli, tmp_path):
    """m-middle is OUT (b-out is OUT) though a-in is IN; t-top, OUT through it, explains
    m-middle with the step m-middle's own page computed first (one build explains each belief
    once). When a-in goes OUT, m-middle stays OUT and its step now names a-in as a cause:
    t-top's page must be rendered again though it read a-in only through that step."""
    source = _network(tmp_path, {"a-in": ("IN", []), "b-out": ("OUT", []), "m-middle": ("OUT", [["a-in", "b-out"]]),
                                 "t-top": ("OUT", [["m-middle"]])})
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    _edit(source, _set("a-in", "OUT"))
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
    top = json.loads((site / "belief" / "t-top" / "index.json").read_text(encoding="utf-8"))
    assert [s["justifications"][0]["failed"] for s in top["explain"]["items"][1:2]] == [["a-in", "b-out"]]


def test_reading_a_status_pin_or_support_records_the_belief():
    """render.belief's evaluation notes every belief whose state a page reads, and so does a
    step of explain's memo taken for another page (index.json's explain panel names every
    belief the step read as well, so the build test above cannot tell); cache.state (a
    belief's part of the cache's texts) changes with each of them."""
    from dataclasses import replace

    from site_builder.cache import state
    from site_builder.render.belief import _SeenSteps, _recording

    ev = check(EXAMPLE).evaluation
    a, b, c = sorted(ev.status)[:3]
    seen: set[str] = set()
    recording = _recording(ev, seen)
    recording.value(a)
    assert seen == {a}
    recording.is_pinned(b)
    assert seen == {a, b}
    recording.supporting.get(c)
    assert seen == {a, b, c}
    for every in (recording.status, recording.pinned):  # a page that read them all would never be kept
        with pytest.raises(TypeError):
            sorted(every)
    derived = next(i for i in sorted(ev.status) if ev.network.beliefs[i].justifications)
    cited = {r for j in ev.network.beliefs[derived].justifications for r in (*j.antecedents, *j.outlist)}
    seen.clear()
    steps = _SeenSteps({derived: "its step"}, ev.network.beliefs, seen)
    assert steps.get(a if a != derived else b) is None and not seen
    assert steps.get(derived) == "its step" and seen == {derived, *cited} and len(seen) > 1
    before = state(ev, a)
    other = "OUT" if ev.value(a) == "IN" else "IN"
    assert state(replace(ev, status={**ev.status, a: other}), a) != before
    assert state(replace(ev, pinned=ev.pinned ^ {a}), a) != before
    assert state(replace(ev, supporting={**ev.supporting, a: 7}), a) != before


def test_only_a_build_with_a_cache_records_what_each_belief_read(cli, tmp_path, monkeypatch):
    """The recording wrappers cost 5% of a page; without a cache nothing keeps the reads."""
    from site_builder.render import belief

    calls = []
    real = belief._recording
    monkeypatch.setattr(belief, "_recording", lambda ev, seen: calls.append(1) or real(ev, seen))
    site = tmp_path / "site"
    _build(cli, EXAMPLE, site, "--no-cache", "-j", "1")
    assert not calls
    _build(cli, EXAMPLE, site, "--cache-dir", tmp_path / "cache", "-j", "1")
    reads = _manifest(tmp_path / "cache")["reads"]
    assert len(calls) == len(reads) and all(reads)  # every belief read at least itself


def test_a_build_imports_no_library_it_does_not_use(tmp_path):
    """rapidfuzz is 48 modules, markdown-it 62: with the page cache dropped, reading each set
    cost a 10k claim edit 50-60 ms of its 0.9 s (interleaved A/B). Only a changes page or a
    PR comment diffs words; only rendering a page (here, in the workers) parses Markdown."""
    script = ("import sys; from site_builder.cli import main; code = main(sys.argv[1:]); "
              "print(code, 'rapidfuzz' in sys.modules, 'markdown_it' in sys.modules)")
    command = [sys.executable, "-c", script, "build", str(EXAMPLE), "-o", str(tmp_path / "site"),
               "--no-search", "--cache-dir", str(tmp_path / "cache"), "-q"]
    first = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert first.stdout.split() == ["0", "False", "True"], first.stdout + first.stderr  # rendered here (serial)
    again = subprocess.run(command, capture_output=True, text=True, timeout=120)  # nothing to render
    assert again.stdout.split() == ["0", "False", "False"], again.stdout + again.stderr


def test_a_build_with_a_cache_compiles_no_template_the_last_one_compiled(cli, tmp_path, monkeypatch):
    """Each worker compiled every template again (35 ms of a 10k claim edit); the cache keeps them."""
    import jinja2

    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile", lambda self, *a, **k: compiled.append(a) or real(self, *a, **k))
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache, "-j", "1")
    assert compiled and any((cache / "templates").iterdir())
    first = tree_digest(site)
    compiled.clear()
    _build(cli, EXAMPLE, tmp_path / "again", "--cache-dir", cache, "-j", "1")
    assert not compiled and tree_digest(tmp_path / "again") == first
    _build(cli, EXAMPLE, tmp_path / "cold", "--no-cache", "-j", "1")
    assert compiled  # without a cache every template is compiled


def test_compiled_templates_serve_one_code_and_a_damaged_one_is_compiled_again(cli, tmp_path, monkeypatch):
    """Jinja checks a compiled template's source, not its own version nor the environment's
    options: the folder is the code's (cache.code_digest). A cut file costs a compile."""
    import jinja2

    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache, "-j", "1")
    first = tree_digest(site)
    (kept,) = (cache / "templates").iterdir()
    for compiled_file in kept.iterdir():
        compiled_file.write_bytes(compiled_file.read_bytes()[:40])  # the magic, then a cut pickle
    compiled = []
    real = jinja2.Environment.compile
    monkeypatch.setattr(jinja2.Environment, "compile", lambda self, *a, **k: compiled.append(a) or real(self, *a, **k))
    _build(cli, EXAMPLE, tmp_path / "again", "--cache-dir", cache, "-j", "1")
    assert compiled and tree_digest(tmp_path / "again") == first
    compiled.clear()
    monkeypatch.setattr(cache_module, "code_digest", lambda: "another version of belief-site")
    _build(cli, EXAMPLE, tmp_path / "upgraded", "--cache-dir", cache, "-j", "1")
    assert compiled and [f.name for f in (cache / "templates").iterdir()] != [kept.name]
    assert len(list((cache / "templates").iterdir())) == 1  # the other code's folder is gone

def test_a_compiled_template_damaged_in_a_way_that_still_loads_is_compiled_again(cli, tmp_path):
    """Jinja checks the template's source, not the code it loads: a flipped byte inside a
    string ran as a wrong page (and inside a name, as a build that failed every time)."""
    cache = tmp_path / "cache"
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache, "-j", "1", "--no-search")
    (kept,) = (cache / "templates").iterdir()
    (index,) = [f for f in kept.iterdir() if b"<h1>All beliefs</h1>" in f.read_bytes()]
    index.write_bytes(index.read_bytes().replace(b"All beliefs", b"All bXliefs"))
    _build(cli, EXAMPLE, tmp_path / "again", "--cache-dir", cache, "-j", "1", "--no-search")
    _build(cli, EXAMPLE, tmp_path / "cold", "--no-cache", "-j", "1", "--no-search")
    assert "All beliefs" in (tmp_path / "again" / "index.html").read_text(encoding="utf-8")
    assert tree_digest(tmp_path / "again") == tree_digest(tmp_path / "cold")


def _forge_compiled_template(cache: Path, old: bytes, new: bytes) -> None:
    """Edit the compiled template holding `old` and seal it again, as someone who means it would."""
    (kept,) = (cache / "templates").iterdir()
    (compiled,) = [f for f in kept.iterdir() if old in f.read_bytes()]
    data = compiled.read_bytes()
    rest = data[data.index(b"\n") + 1:].replace(old, new)
    compiled.write_bytes(b"%d\n" % zlib.crc32(rest) + rest)


def test_a_cache_folder_copied_from_elsewhere_is_not_trusted(cli, tmp_path):
    """A CRC tells damage only: a cache folder committed to a repository, copied or restored
    could hold compiled templates (code) and rows that decide pages. Its owner file names its
    own inode, which no copy keeps, so what it holds on trust is dropped; the rest stays."""
    cache, copied = tmp_path / "cache", tmp_path / "copied"
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache, "-j", "1")
    assert cache_module.vouched(cache)
    shutil.copytree(cache, copied)
    assert not cache_module.vouched(copied)
    _forge_compiled_template(copied, b"<h1>All beliefs</h1>", b"<h1>All bXliefs</h1>")
    (copied / "notes.txt").write_text("not belief-site's", encoding="utf-8")  # a --cache-dir given by mistake
    limit = SiteConfig().panel_max_items
    assert check(EXAMPLE, limit, cache=cache).evaluated is False  # the evaluation kept in a vouched folder
    assert check(EXAMPLE, limit, cache=copied).evaluated is True
    _build(cli, EXAMPLE, tmp_path / "again", "--cache-dir", copied, "-j", "1")
    _build(cli, EXAMPLE, tmp_path / "cold", "--no-cache", "-j", "1")
    assert tree_digest(tmp_path / "again") == tree_digest(tmp_path / "cold")
    assert cache_module.vouched(copied) and (copied / "notes.txt").is_file()


def test_an_owner_file_linked_to_a_trusted_caches_vouches_for_nothing(cli, tmp_path):
    cache, planted = tmp_path / "cache", tmp_path / "planted"
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache, "-j", "1")
    planted.mkdir()
    (planted / cache_module.OWNER).symlink_to(cache / cache_module.OWNER)
    shutil.copy(cache / cache_module.OWNER_ID, planted / cache_module.OWNER_ID)
    assert cache_module.vouched(cache) and not cache_module.vouched(planted)
    os.link(cache / cache_module.OWNER, tmp_path / "second name")  # a hard link changes the change time too
    assert not cache_module.vouched(cache)


def test_a_cache_dir_holding_other_files_is_left_alone_and_the_build_goes_on(cli, tmp_path):
    """`--cache-dir .` in a project, say: its templates/ and manifest.json are not the cache's."""
    folder = tmp_path / "project"
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "belief.html").write_text("mine", encoding="utf-8")
    (folder / "manifest.json").write_text("{}", encoding="utf-8")
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--cache-dir", folder, "--no-search")
    assert code == 0 and "W804" in err and "no belief-site cache" in err, err
    assert (folder / "templates" / "belief.html").read_text(encoding="utf-8") == "mine"
    assert (folder / "manifest.json").is_file() and not (folder / cache_module.OWNER).exists()


def test_a_cache_whose_trusted_files_cannot_be_removed_is_not_used(cli, tmp_path, monkeypatch):
    """A restored folder whose files stay (read-only folders, for another user than root)."""
    cache = tmp_path / "cache"
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache, "-j", "1")
    copied = tmp_path / "copied"
    shutil.copytree(cache, copied)
    monkeypatch.setattr(cache_module, "remove_tree", lambda path: None)
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "again", "--cache-dir", copied, "--no-search")
    assert code == 0 and "W804" in err and "cannot be removed" in err, err
    assert not cache_module.vouched(copied)


def test_a_cache_folder_moved_in_place_stays_trusted(cli, generated, tmp_path):
    source, cache, moved = tmp_path / "network.json", tmp_path / "cache", tmp_path / "moved"
    shutil.copy(generated, source)
    site = tmp_path / "site"
    _build(cli, source, site, "--cache-dir", cache)
    cache.rename(moved)
    assert "unchanged belief page" in _build(cli, source, site, "--cache-dir", moved)


def test_a_claim_edit_rerenders_its_neighbours_and_links_the_rest(cli, generated, tmp_path):
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    nodes = json.loads(source.read_text())["nodes"]
    edited = _derived(nodes)
    antecedent = nodes[edited]["justifications"][0]["antecedents"][0]
    untouched = _leaf_premise(nodes)
    inode = {i: (site / "belief" / i / "index.html").stat().st_ino for i in (edited, antecedent, untouched)}
    same = [site / "belief" / antecedent / name for name in ("badge.svg", "badge.json", "index.json")]
    same_inodes = [path.stat().st_ino for path in same]
    _edit(source, _claim)
    _build(cli, source, site, "--cache-dir", cache, "-j", "2")
    after = {i: (site / "belief" / i / "index.html").stat().st_ino for i in inode}
    assert after[untouched] == inode[untouched]  # left in place, not written
    assert after[edited] != inode[edited] and after[antecedent] != inode[antecedent]
    # The rendered neighbour's other files have the bytes they had: the worker leaves them.
    assert [path.stat().st_ino for path in same] == same_inodes
    assert "Edited: ünïcode &amp; &lt;b&gt;markup&lt;/b&gt;." in (site / "belief" / antecedent / "index.html").read_text()


def _made_rows(monkeypatch) -> dict[str, set[str]]:
    """part -> the ids whose rows were made (not kept), recorded in this process (-j 1)."""
    made: dict[str, set[str]] = {}
    made_now = cache_module._RowPart._made_now

    def counting(self, belief_id, make):
        made.setdefault(self._path.stem, set()).add(belief_id)
        return made_now(self, belief_id, make)

    monkeypatch.setattr(cache_module._RowPart, "_made_now", counting)
    return made


def test_a_claim_edit_makes_again_only_the_listing_rows_and_records_that_show_it(cli, generated, tmp_path,
                                                                                   monkeypatch):
    """Also the explorer's node and the inventory's and llms.txt's lines; the explorer's layout
    is not computed at all (no position is made again: a claim does not move a belief)."""
    from site_builder.render import graph as graph_module

    laid, structure = [], []
    monkeypatch.setattr(graph_module, "layout", lambda *a, layout=graph_module.layout: laid.append(1) or layout(*a))
    monkeypatch.setattr(graph_module, "_edges", lambda *a, real=graph_module._edges: structure.append("edges") or real(*a))
    monkeypatch.setattr(pages_module, "_ranking", lambda *a, real=pages_module._ranking: structure.append("ranking") or real(*a))
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    made = _made_rows(monkeypatch)
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    assert {part: len(ids) for part, ids in made.items()} == {
        "index_row": SIZE, "records": SIZE, "premise_row": len(_premises(source)), "out_row": len(_causes(source)),
        "graph_node": SIZE, "inventory": SIZE, "llms": SIZE}
    assert laid == [1] and sorted(structure) == ["edges", "ranking"]
    # The edited belief is the cause of some OUT belief: those rows show its claim; the rows of
    # OUT beliefs citing it are made again (its state may change their causes), and only they
    # work out an explanation.
    edited = sorted({c for causes in _causes(source).values() for c in causes} & set(_premises(source)))[0]
    showing = {i for i, causes in _causes(source).items() if edited in causes or i == edited}
    beliefs = check(source).evaluation.network.beliefs
    citing = {i for i in _causes(source) if i == edited or edited in rows_module.cited(beliefs[i])}
    assert showing and showing <= citing
    explained = []
    monkeypatch.setattr(pages_module, "explain_step", lambda ev, i, real=pages_module.explain_step:
                        explained.append(i) or real(ev, i))
    stepped: set[str] = set()  # parts that looked at each kept row on its own
    take = cache_module._RowPart._take
    monkeypatch.setattr(cache_module._RowPart, "_take",
                        lambda self, *a: stepped.add(self._path.stem) or take(self, *a))
    made.clear()
    _edit(source, lambda nodes: nodes[edited].update(text="A new claim & <b>markup</b>."))
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    assert made == {"index_row": {edited}, "records": {edited}, "premise_row": {edited}, "out_row": citing,
                    "graph_node": {edited}, "inventory": {edited}, "llms": {edited}}
    assert sorted(explained) == sorted(citing)
    # The listings' and exports' text is the last build's, cut where the edited belief's rows go
    # (the few OUT rows of this small network: one by one, when more than one in 64 is made).
    spliced_out = len(citing) * cache_module._RowPart.REWRITE_SHARE <= len(_causes(source))
    assert stepped == (set() if spliced_out else {"out_row"})
    assert laid == [1] and sorted(structure) == ["edges", "ranking"]  # the salt alone decides them: kept
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
    assert "A new claim &amp; &lt;b&gt;markup&lt;/b&gt;." in (site / "out" / "index.html").read_text()


def test_a_status_flip_makes_again_only_the_rows_of_the_flipped_beliefs_and_of_those_citing_them(
        cli, generated, tmp_path, monkeypatch):
    """A record shows whether each of its justifications is valid, and an OUT belief's row
    why it is OUT: both compute from the states of the beliefs it cites (rows.cited); every
    other row shows its own belief's state only, and is kept."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    before = check(source).evaluation
    made = _made_rows(monkeypatch)
    nodes = json.loads(source.read_text(encoding="utf-8"))["nodes"]
    outlisted = _outlisted_premise(nodes)  # its flip turns a dependent the other way
    _edit(source, _set(outlisted, "OUT" if nodes[outlisted].get("truth_value") == "IN" else "IN"))
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    after = check(source).evaluation
    flipped = {i for i in after.status if cache_module.state(after, i) != cache_module.state(before, i)}
    citing = {i for i, b in after.network.beliefs.items()
              if any(c in flipped for j in b.justifications for c in (*j.antecedents, *j.outlist))}
    assert 1 < len(flipped) < SIZE // 10 and citing - flipped, flipped
    out = {i for i in after.status if after.value(i) == "OUT"}
    # An OUT row shows its causes; a citing belief pinned OUT has none, and its row is kept.
    assert flipped & out <= made.pop("out_row", set()) <= (flipped | citing) & out
    assert made == {"index_row": flipped, "records": flipped | citing, "premise_row": flipped & set(_premises(source)),
                    "graph_node": flipped, "inventory": flipped, "llms": flipped}  # own state: keyed with the content
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def _premises(source: Path) -> list[str]:
    return [i for i, n in json.loads(source.read_text())["nodes"].items() if not n.get("justifications")]


def _causes(source: Path) -> dict[str, tuple[str, ...]]:
    """OUT belief -> the beliefs its row on the OUT page names as causes."""
    ev = check(source).evaluation
    return {i: explain_step(ev, i)[1] for i in ev.network.beliefs if ev.value(i) == "OUT"}


def _salted(kind: str, source: Path, tmp_path: Path) -> tuple[str, ...]:
    """Flags for a build that changes what only the salt covers: marks of a diff, a
    configuration value, a template; every row shows it."""
    if kind == "diff marks":
        base = tmp_path / "base.json"
        shutil.copy(source, base)
        _edit(base, _claim)
        return ("--diff-base", str(base))
    config = tmp_path / "mkdocs.yml"
    options = f"      source: {source}\n"
    if kind == "template":
        (tmp_path / "theme").mkdir()
        macros = (ROOT / "templates" / "_macros.html").read_text(encoding="utf-8")
        (tmp_path / "theme" / "_macros.html").write_text(macros.replace("<td>{{ r.depth }}</td>", "<td>d{{ r.depth }}</td>"))
        options += "      templates: theme\n"
    extra = "use_directory_urls: false\n" if kind == "configuration" else ""
    config.write_text(f"site_name: t\n{extra}plugins:\n  - beliefs:\n{options}", encoding="utf-8")
    return ("--config", str(config))


@pytest.mark.parametrize("kind", ["diff marks", "configuration", "template"])
def test_a_change_only_the_salt_covers_makes_every_row_again(cli, generated, tmp_path, monkeypatch, kind):
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache, "-j", "1")
    flags = _salted(kind, source, tmp_path)
    made = _made_rows(monkeypatch)
    code, _, err = cli("build", *(() if "--config" in flags else (source,)), "-o", site, "--no-search",
                       "--cache-dir", cache, "-j", "1", *flags)
    assert code == 0, err
    assert len(made["index_row"]) == SIZE and len(made["records"]) == SIZE
    cold = tmp_path / "cold"
    assert cli("build", *(() if "--config" in flags else (source,)), "-o", cold, "--no-search", "--no-cache",
               *flags)[0] == 0
    assert tree_digest(site) == tree_digest(cold)


def test_rows_are_written_back_only_when_many_were_made(tmp_path):
    """Encoding every row again after one claim edit cost more than making that row again in
    the next build; many made rows (a new salt, a large edit) are written back."""
    texts = {f"b{i:03d}": f"t{i}" for i in range(200)}
    made: list[str] = []

    def build(texts: dict[str, str]) -> bytes:
        part = cache_module.Rows(tmp_path, "salt", texts).part("index_row")
        for i in sorted(texts):
            assert part.row(i, lambda i=i: made.append(i) or f"<tr>{i} {texts[i]}</tr>") == f"<tr>{i} {texts[i]}</tr>"
        part.done()
        return (tmp_path / "rows" / "index_row.rows").read_bytes()

    first = build(texts)
    assert len(made) == 200
    made.clear()
    edited = {**texts, "b007": "edited"}
    assert build(edited) == first and made == ["b007"]  # not written back...
    made.clear()
    assert build(edited) == first and made == ["b007"]  # ...so made again, and right
    made.clear()
    many = {**edited, **{f"b{i:03d}": "edited" for i in range(10, 20)}}
    assert build(many) != first and len(made) == 11  # more than one in 64: written back
    made.clear()
    build(many)
    assert made == []


def _sealed(rest: bytes) -> bytes:
    """A rows file holding `rest` after its first line, the CRC-32 of `rest`: damage the
    checks after the CRC must find."""
    return b"%d\n" % zlib.crc32(rest) + rest


def _rows_file(head: dict, rows: bytes) -> bytes:
    return _sealed(json.dumps(head).encode() + b"\n" + rows)


def _head(**changes):
    """A damage of the rows file's line of JSON."""
    return lambda head, rows: _rows_file({**head, **changes}, rows)


ROW_DAMAGE = {
    "not JSON": lambda head, rows: _sealed(b"{\n" + rows),
    "no CRC line": lambda head, rows: json.dumps(head).encode() + b"\n" + rows,
    "a wrong CRC": lambda head, rows: b"0" + _rows_file(head, rows),
    "a byte changed": lambda head, rows: _rows_file(head, rows).replace(b"<tr", b"<tR", 1),  # the CRC tells
    "not an object": lambda head, rows: _sealed(b"[]\n" + rows),
    "another salt": _head(salt="0" * 32),
    "another format": _head(format=0),
    "no ends": lambda head, rows: _rows_file({k: v for k, v in head.items() if k != "ends"}, rows),
    "ids not a list": _head(ids="x"),
    "a number for an id": lambda head, rows: _rows_file({**head, "ids": [1, *head["ids"][1:]]}, rows),
    "a list for a content": lambda head, rows: _rows_file({**head, "contents": [[], *head["contents"][1:]]}, rows),
    "ends a string": lambda head, rows: _rows_file({**head, "ends": [str(e) for e in head["ends"]]}, rows),
    "ends going back": lambda head, rows: _rows_file({**head, "ends": [*head["ends"][:-2], 0, head["ends"][-1]]}, rows),
    "one end fewer": lambda head, rows: _rows_file({**head, "ends": head["ends"][:-1]}, rows),
    "an end moved": lambda head, rows: _rows_file({**head, "ends": [head["ends"][0] - 1, *head["ends"][1:]]}, rows),
    "rows cut short": lambda head, rows: _rows_file(head, rows[:-10]),
    "rows not UTF-8": lambda head, rows: _rows_file(head, b"\xff" + rows),
    "nested too deep": lambda head, rows: _sealed(b"[" * 100_000 + b"]" * 100_000 + b"\n" + rows),
}


def _rows_parts(data: bytes) -> tuple[dict, bytes]:
    """A rows file's line of JSON and its rows (after the CRC line)."""
    head, _, rows = data.partition(b"\n")[2].partition(b"\n")
    return json.loads(head), rows


@pytest.mark.parametrize("damage", list(ROW_DAMAGE))
def test_damaged_rows_are_made_again(cli, tmp_path, monkeypatch, damage):
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    kept = cache / "rows" / "index_row.rows"
    kept.write_bytes(ROW_DAMAGE[damage](*_rows_parts(kept.read_bytes())))
    made = _made_rows(monkeypatch)
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    beliefs = json.loads((site / "beliefs.json").read_text())["beliefs"]
    assert len(made["index_row"]) == len(beliefs) and "records" not in made
    assert tree_digest(site) == _cold(cli, EXAMPLE, tmp_path / "cold")
    assert _rows_parts(kept.read_bytes())[0]["format"] == cache_module.FORMAT  # made again, kept


def test_rows_kept_before_format_2_are_removed_when_rows_are_written(cli, tmp_path):
    """The rows were JSON files (`<part>.json`) before the `.rows` files: several MB each at
    10,000 beliefs, never read again; so are the files of parts merged since (RETIRED_ROWS)."""
    cache = tmp_path / "cache"
    _build(cli, EXAMPLE, tmp_path / "first", "--cache-dir", cache)  # a cache folder of this machine's
    shutil.rmtree(cache / "rows")
    (cache / "rows").mkdir(parents=True)
    old = cache / "rows" / "index_row.json"
    old.write_text('{"format":1,"salt":"x","rows":{}}')
    retired = [cache / "rows" / name for name in cache_module.RETIRED_ROWS]
    for path in retired:
        path.write_bytes(b"kept by an earlier version")
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache)
    assert not old.exists() and (cache / "rows" / "index_row.rows").is_file()
    assert not any(path.exists() for path in retired) and (cache / "rows" / "graph_structure.whole").is_file()


@pytest.mark.parametrize("sep", ["", ",", "\n", "é|"])
def test_joined_rows_cut_the_last_text_only_where_rows_are_made_again(tmp_path, sep):
    """`joined` takes the last build's text whole but for the rows to make again (first,
    last, neighbours, empty ones); another order, another separator or many rows to make go
    row by row; what it gives is always `sep.join` of the rows, and what it keeps reads back."""
    ids = [f"b{i:03d}" for i in range(1000)]  # 4 rows to make are few (REWRITE_SHARE)
    texts = {i: f"t{i}" for i in ids}

    def row(i: str, texts: dict) -> str:
        return "" if i == "b005" else f"<{i} {texts[i]} ✓ \ud800>"

    def joined(order: list[str], texts: dict, sep: str = sep, states=None) -> tuple[bytes, list[str]]:
        made: list[str] = []
        part = cache_module.Rows(tmp_path, "salt", texts).part("records")
        text = part.joined(order, lambda k: made.append(order[k]) or row(order[k], texts), sep, states)
        part.done()
        assert text == sep.join(row(i, texts) for i in order).encode("utf-8", "surrogatepass")
        return text, made

    assert joined(ids, texts)[1] == ids  # nothing kept yet: every row made, then written
    assert joined(ids, texts)[1] == []
    edited = {**texts, "b000": "e0", "b001": "e1", "b005": "e5", "b999": "e999"}
    assert joined(ids, edited)[1] == ["b000", "b001", "b005", "b999"]
    assert joined(ids, edited)[1] == ["b000", "b001", "b005", "b999"]  # not written back: made again
    assert joined(ids[::-1], edited)[1] == ["b999", "b005", "b001", "b000"]  # row by row: the rest kept
    assert joined(ids, edited, sep + ";")[1] == ["b000", "b001", "b005", "b999"]
    states = [("b010",) if i == "b020" else () for i in ids]  # b020 computes from b010's state
    assert joined(ids, edited, states=states)[1] == ["b000", "b001", "b005", "b020", "b999"]
    flipped = {**edited, "b010": edited["b010"] + ":OUT"}  # "hash:state": b010's state changed
    assert joined(ids, flipped, states=states)[1] == ["b000", "b001", "b005", "b010", "b020", "b999"]
    assert joined([], {})[0] == b""


def test_a_structural_value_is_kept_for_its_salt_only_and_made_again_when_damaged(tmp_path):
    """`Rows.whole` (the premises' ranking, the explorer's edges): the last build's value while
    the salt is the same; another salt, a changed byte or a cut file make it again."""
    made: list[str] = []

    def whole(salt: str, value: bytes = b"[1,2]\n\xc3\xa9") -> bytes:
        return cache_module.Rows(tmp_path, salt, {}).whole("ranking", lambda: made.append(salt) or value)

    assert whole("a") == b"[1,2]\n\xc3\xa9" and made == ["a"]
    assert whole("a", b"other") == b"[1,2]\n\xc3\xa9" and made == ["a"]  # kept
    assert whole("b", b"new") == b"new" and made == ["a", "b"]
    kept = tmp_path / "rows" / "ranking.whole"
    kept.write_bytes(kept.read_bytes().replace(b"new", b"neW"))
    assert whole("b", b"new") == b"new" and made == ["a", "b", "b"]
    kept.write_bytes(kept.read_bytes()[:-1])
    assert whole("b", b"new") == b"new" and made == ["a", "b", "b", "b"]
    assert whole("b") == b"new" and made == ["a", "b", "b", "b"]


def test_rows_keep_any_text(tmp_path):
    """Rows hold claims as they are: newlines, quotes, non-ASCII, a lone surrogate (a bad
    claim's, never dropped), and empty rows."""
    texts = {"a": "1", "b": "2", "c": "3", "d": "4"}
    rows = {"a": "<td>\n\"é\" ✓</td>", "b": "", "c": "bad \ud800 claim", "d": "\r\n"}
    part = cache_module.Rows(tmp_path, "salt", texts).part("index_row")
    assert [part.row(i, lambda i=i: rows[i]) for i in sorted(rows)] == [rows[i] for i in sorted(rows)]
    part.done()
    again = cache_module.Rows(tmp_path, "salt", texts).part("index_row")
    assert [again.row(i, lambda: pytest.fail("made again")) for i in sorted(rows)] == [rows[i] for i in sorted(rows)]


def test_an_incremental_build_with_search_replaces_the_index_and_drops_stale_files(cli, generated, tmp_path):
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    old_index = {p.name for p in (site / "pagefind").rglob("*")}
    _edit(source, _claim)
    code, _, err = cli("build", source, "-o", site, "--cache-dir", cache)
    assert code == 0 and "kept" in err, err
    cold = tmp_path / "cold"
    assert cli("build", source, "-o", cold, "--no-cache")[0] == 0
    assert tree_digest(site) == tree_digest(cold)  # no file of the old index is left behind
    assert old_index != {p.name for p in (site / "pagefind").rglob("*")}


def _bundle_files(site: Path) -> dict[str, tuple[int, bytes]]:
    return {p.relative_to(site).as_posix(): (p.stat().st_ino, p.read_bytes())
            for p in (site / "pagefind").rglob("*") if p.is_file()}


def test_an_incremental_build_leaves_the_search_files_it_would_write_unchanged_in_place(cli, generated, tmp_path):
    """Pagefind names most files by content: after a claim edit, only the few that differ are
    written (and renamed in); a file changed by hand in between is written again."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache, cold = tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    before = _bundle_files(site)
    _edit(source, _claim)
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    after = _bundle_files(site)
    same = {p for p in before.keys() & after.keys() if before[p][1] == after[p][1]}
    assert len(same) > 0.9 * len(after) and len(same) < len(after)
    assert all(after[p][0] == before[p][0] for p in same)  # the very same files: not written again
    assert all(after[p][0] != before[p][0] for p in (after.keys() & before.keys()) - same)
    assert cli("build", source, "-o", cold, "--no-cache")[0] == 0
    assert tree_digest(site) == tree_digest(cold)

    meddled = site / sorted(same)[0]
    meddled.write_bytes(b"changed by hand")
    _edit(source, _metadata)  # the same records: the bundle is taken from the cache
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    shutil.rmtree(cold)
    assert cli("build", source, "-o", cold, "--no-cache")[0] == 0
    assert tree_digest(site) == tree_digest(cold)
    assert {p: f[0] for p, f in _bundle_files(site).items() if site / p != meddled} == \
        {p: f[0] for p, f in after.items() if site / p != meddled}  # the others stayed


def test_an_update_leaves_only_files_of_the_last_build_with_the_same_bytes(tmp_path):
    from site_builder import write
    out, elsewhere = tmp_path / "site", tmp_path / "elsewhere"
    assert write.write_site([OutputFile("a", b"A"), OutputFile("b", b"B"), OutputFile("c", b"C")], out)[1] == []
    elsewhere.write_bytes(b"B")
    (out / "b").unlink()
    (out / "b").symlink_to(elsewhere)  # the same bytes, through a link
    (out / "d").write_bytes(b"D")  # the same bytes, but not a file of the last build
    (out / "e").write_bytes(b"EE")  # the new bytes, and more
    os.mkfifo(out / "f")  # opening it to read would wait for a writer
    before = {name: (out / name).lstat().st_ino for name in "abcdef"}
    files = [OutputFile(name, name.upper().encode()) for name in "abdef"] + [OutputFile("c", b"new")]
    paths, problems = write.update_site(files, out, set(), frozenset("abcef"))
    assert problems == [] and paths == set("abcdef")
    assert {name: (out / name).read_bytes() for name in "abcdef"} == \
        {"a": b"A", "b": b"B", "c": b"new", "d": b"D", "e": b"E", "f": b"F"}
    after = {name: (out / name).lstat().st_ino for name in "abcdef"}
    assert after["a"] == before["a"] and not (out / "b").is_symlink()
    assert all(after[name] != before[name] for name in "cdef")


def test_an_update_reads_no_old_file_of_another_size(tmp_path, monkeypatch):
    """A changed listing or export (megabytes at 10k beliefs) usually changes size: the writer
    then takes it as changed without reading the old bytes; a file of the same size is read."""
    from site_builder import write
    out = tmp_path / "site"
    assert write.write_site([OutputFile("big", b"x" * 100_000), OutputFile("same", b"y" * 1000)], out)[1] == []
    read: list[int] = []
    opened = os.fdopen

    def counting(handle, *args, **kwargs):
        found = opened(handle, *args, **kwargs)
        whole = found.read

        def reading(size=-1):
            data = whole(size)
            read.append(len(data))
            return data
        found.read = reading
        return found
    monkeypatch.setattr(write.os, "fdopen", counting)
    files = [OutputFile("big", b"x" * 99_999 + b"!!"), OutputFile("same", b"y" * 999 + b"!")]
    paths, problems = write.update_site(files, out, set(), frozenset({"big", "same"}))
    assert problems == [] and paths == {"big", "same"}
    assert read == [1000]  # the file of the same size only
    assert (out / "big").read_bytes() == b"x" * 99_999 + b"!!"


def _pages_then_index(out: Path, seen: list):
    """An incremental build's stream: a changed page, PAGES_DONE, then (noting what the
    site holds by then) the new search bundle."""
    from site_builder.render import PAGES_DONE
    yield OutputFile("page", b"new page")
    yield PAGES_DONE
    seen.append(((out / "page").read_bytes(), (out / "pagefind" / "entry").read_bytes(),
                 (out / ".belief-site").exists()))
    yield OutputFile("pagefind/entry", b"new index")


@pytest.mark.parametrize("asked", [True, False])
def test_an_update_puts_the_pages_in_place_before_the_search_bundle_when_asked(tmp_path, asked):
    from site_builder import write
    out = tmp_path / "site"
    old = [OutputFile("page", b"old page"), OutputFile("pagefind/entry", b"old index"), OutputFile("gone", b"x")]
    assert write.write_site(old, out)[1] == []
    seen: list = []
    published: list[int] = []
    paths, problems = write.update_site(_pages_then_index(out, seen), out, set(),
                                        frozenset(f.path for f in old), published.append if asked else None)
    assert problems == [] and paths == {"page", "pagefind/entry"}
    # asked (serve): the page is in and the site marked mid-update while Pagefind indexes;
    # else (build) nothing moves before the end
    assert seen == ([(b"new page", b"old index", False)] if asked else [(b"old page", b"old index", True)])
    assert published == ([1] if asked else [])
    assert (out / "page").read_bytes() == b"new page" and (out / "pagefind" / "entry").read_bytes() == b"new index"
    assert not (out / "gone").exists() and (out / ".belief-site").is_file()
    assert not (out / ".belief-site.updating").exists()
    # a whole new site takes no notice of it
    seen.clear()
    assert write.write_site(_pages_then_index(out, seen), tmp_path / "other")[1] == []
    assert sorted(p.name for p in (tmp_path / "other").rglob("*")) == [".belief-site", "entry", "page", "pagefind"]


def test_a_search_failure_after_the_pages_were_put_in_place_leaves_a_site_no_cache_trusts(tmp_path):
    from site_builder import write
    from site_builder.cache import marker_identity
    from site_builder.render import PAGES_DONE
    out = tmp_path / "site"
    assert write.write_site([OutputFile("page", b"old page"), OutputFile("pagefind/entry", b"old")], out)[1] == []

    def failing():
        yield OutputFile("page", b"new page")
        yield PAGES_DONE
        raise RuntimeError("Pagefind failed")

    with pytest.raises(RuntimeError):
        write.update_site(failing(), out, set(), frozenset({"page", "pagefind/entry"}), lambda files: None)
    assert (out / "page").read_bytes() == b"new page" and (out / "pagefind" / "entry").read_bytes() == b"old"
    assert marker_identity(out) is None and (out / ".belief-site.updating").is_file()
    assert write.write_site([OutputFile("page", b"again")], out)[1] == []  # still ours: the next build replaces it
    assert marker_identity(out) is not None and not (out / ".belief-site.updating").exists()


def test_an_incremental_build_with_search_can_publish_its_pages_before_pagefind_starts(generated, tmp_path,
                                                                                       monkeypatch):
    """serve's build process: readers get the edited pages while Pagefind re-indexes."""
    from site_builder.config import SiteConfig
    from site_builder.pipeline import build
    source, site, cache, cold = tmp_path / "network.json", tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    shutil.copy(generated, source)
    config = SiteConfig(source=str(source))
    assert build(config, site, jobs=2, cache=cache).written
    old_index = _bundle_files(site)
    _edit(source, _claim)
    edited = _derived(json.loads(generated.read_text(encoding="utf-8"))["nodes"])
    started = _indexer_starts(monkeypatch)
    seen = []

    def published(early) -> None:
        page = (site / "belief" / edited / "index.html").read_text(encoding="utf-8")
        seen.append((early.written, early.reused, "Edited: ünïcode" in page, len(started),
                     {p: f[1] for p, f in _bundle_files(site).items()} == {p: f[1] for p, f in old_index.items()}))

    built = build(config, site, jobs=2, cache=cache, published=published)
    assert built.written and 0 < built.reused < SIZE
    # the edited page in place, the old search bundle as it was, Pagefind not yet started
    assert seen == [(True, built.reused, True, 0, True)]
    assert started == [1] and _bundle_files(site) != old_index
    assert build(config, cold, jobs=2).written
    assert tree_digest(site) == tree_digest(cold)
    # without search, pages are all there is: one reply
    from dataclasses import replace
    plain = replace(config, search=False)
    assert build(plain, cold, jobs=2, cache=tmp_path / "plain").written
    _edit(source, _claim)
    assert build(plain, cold, jobs=2, cache=tmp_path / "plain", published=published).reused > 0
    assert len(seen) == 1


def test_a_build_that_renders_everything_into_the_last_ones_folder_can_publish_its_pages_first(
        generated, tmp_path, monkeypatch):
    """A change of structure renders every page: serve's readers still get them before
    Pagefind is done, when the folder is as the last build left it."""
    from site_builder.config import SiteConfig
    from site_builder.pipeline import build
    source, site, cache, cold = tmp_path / "network.json", tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    shutil.copy(generated, source)
    config = SiteConfig(source=str(source))
    assert build(config, site, jobs=2, cache=cache).written
    premise = _busy_premise(json.loads(generated.read_text(encoding="utf-8"))["nodes"])
    page, old_index = site / "belief" / premise / "index.html", _bundle_files(site)
    old_page = page.read_bytes()
    _edit(source, _justify)  # the busy premise gets one more dependent
    started = _indexer_starts(monkeypatch)
    seen = []

    def published(early) -> None:
        seen.append((early.reused, page.read_bytes() != old_page, len(started),
                     {p: f[1] for p, f in _bundle_files(site).items()} == {p: f[1] for p, f in old_index.items()}))

    built = build(config, site, jobs=2, cache=cache, published=published)
    assert built.written and built.reused == 0  # everything rendered
    assert seen == [(0, True, 0, True)]  # every page in, the old search bundle as it was
    assert build(config, cold, jobs=2).written
    assert tree_digest(site) == tree_digest(cold)
    # beliefs removed and added: their files go and come, before the search bundle
    _edit(source, lambda nodes: (_remove(nodes), _add(nodes)))
    assert build(config, site, jobs=2, cache=cache, published=published).written and len(seen) == 2
    assert build(config, cold, jobs=2).written
    assert tree_digest(site) == tree_digest(cold)
    # a folder written since by something else (its marker replaced), or another folder than
    # the last build's, is replaced whole, at the end
    marker = site / ".belief-site"
    text = marker.read_bytes()
    marker.unlink()
    marker.write_bytes(text)
    shutil.copy(generated, source)
    assert build(config, site, jobs=2, cache=cache, published=published).written
    assert build(config, tmp_path / "other", jobs=2, cache=cache, published=published).written
    assert len(seen) == 2
    assert build(config, cold, jobs=2).written
    assert tree_digest(site) == tree_digest(cold) == tree_digest(tmp_path / "other")


def _indexer_starts(monkeypatch) -> list[int]:
    from site_builder.render import search
    started: list[int] = []
    real = search._Service.__init__

    def noting(self, executable):
        started.append(1)
        real(self, executable)

    monkeypatch.setattr(search._Service, "__init__", noting)
    return started


def test_unchanged_search_records_take_the_last_bundle(cli, generated, tmp_path, monkeypatch):
    """Pagefind is deterministic: the same records give the same bundle, kept in the cache."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache, cold = tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    started = _indexer_starts(monkeypatch)
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    assert started == [1] and (cache / SEARCH_BUNDLE).is_file()
    _edit(source, _metadata)  # no record changes: id, claim, summary, status and kind are the same
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    assert started == [1]  # no indexer ran
    assert cli("build", source, "-o", cold, "--no-cache")[0] == 0
    assert started == [1, 1] and tree_digest(site) == tree_digest(cold)
    _edit(source, _claim)  # a record changes: Pagefind indexes again
    assert cli("build", source, "-o", site, "--cache-dir", cache)[0] == 0
    shutil.rmtree(cold)
    assert cli("build", source, "-o", cold, "--no-cache")[0] == 0
    assert len(started) == 4 and tree_digest(site) == tree_digest(cold)


_CENTRAL_ENTRY = b"PK\x01\x02"
"""A zip member's central directory entry: its flags at +8, its compression method at +10."""


@pytest.mark.parametrize("damage", ["garbage", "other key", "unsafe name", "unknown method", "deflate",
                                    "encrypted"])
def test_a_damaged_saved_bundle_is_indexed_again(cli, tmp_path, monkeypatch, damage):
    import zipfile
    site, cache, cold = tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    assert cli("build", EXAMPLE, "-o", site, "--cache-dir", cache)[0] == 0
    saved = cache / SEARCH_BUNDLE
    with zipfile.ZipFile(saved) as z:
        members = {n: z.read(n) for n in z.namelist()}
    if damage == "garbage":
        saved.write_bytes(b"PK\x03\x04 not a zip")
    elif damage in ("unknown method", "deflate", "encrypted"):  # zipfile raises neither OSError nor ValueError
        data = bytearray(saved.read_bytes())
        entry = data.index(_CENTRAL_ENTRY)
        if damage == "encrypted":
            data[entry + 8] |= 1
        else:
            data[entry + 10:entry + 12] = (99 if damage == "unknown method" else zipfile.ZIP_DEFLATED).to_bytes(2, "little")
        saved.write_bytes(bytes(data))
    else:
        if damage == "other key":
            members["key"] = b"0" * 64
        else:
            members["pagefind/../escaped.js"] = b"alert(1)"
        with zipfile.ZipFile(saved, "w") as z:
            for name, data in members.items():
                z.writestr(name, data)
    started = _indexer_starts(monkeypatch)
    assert cli("build", EXAMPLE, "-o", site, "--cache-dir", cache)[0] == 0
    assert started == [1] and not (tmp_path / "escaped.js").exists()
    assert cli("build", EXAMPLE, "-o", cold, "--no-cache")[0] == 0
    assert tree_digest(site) == tree_digest(cold)


def test_a_build_into_another_folder_links_the_unchanged_files(cli, generated, tmp_path):
    """As `serve` does: each build in a new folder, hard links to the previous one's files."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    cache = tmp_path / "cache"
    _build(cli, source, tmp_path / "one", "--cache-dir", cache)
    _edit(source, _claim)
    report = _build(cli, source, tmp_path / "two", "--cache-dir", cache)
    assert "kept" in report
    assert tree_digest(tmp_path / "two") == _cold(cli, source, tmp_path / "cold")
    untouched = _leaf_premise(json.loads(source.read_text())["nodes"])
    page = Path("belief") / untouched / "index.html"
    assert (tmp_path / "two" / page).stat().st_ino == (tmp_path / "one" / page).stat().st_ino


def test_a_site_written_without_the_cache_is_not_trusted(cli, generated, tmp_path):
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    _edit(source, _claim)
    _build(cli, source, site, "--no-cache")  # the manifest now describes an older site
    _edit(source, _premise_claim)
    report = _build(cli, source, site, "--cache-dir", cache)
    assert "kept" not in report
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def _manifest(cache: Path) -> dict:
    """The manifest (marshal bytes after its seal and format lines)."""
    return marshal.loads((cache / cache_module.MANIFEST).read_bytes().split(b"\n", 2)[2])


def _rewrite_manifest(cache: Path, manifest: dict, sealed: bool = True) -> None:
    """An edited manifest, sealed again (its checks are then all that stands) or not."""
    path = cache / cache_module.MANIFEST
    rest = b"%d\n" % cache_module.FORMAT + marshal.dumps(manifest)
    seal = cache_module._sealed(rest) if sealed else path.read_bytes().partition(b"\n")[0] + b"\n" + rest
    path.write_bytes(seal)


def test_a_manifest_naming_paths_outside_the_site_gives_a_cold_build(cli, generated, tmp_path):
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    manifest = _manifest(cache)
    manifest["site"].append("../outside.txt")
    _rewrite_manifest(cache, manifest)
    _edit(source, _claim)
    report = _build(cli, source, site, "--cache-dir", cache)
    assert "kept" not in report and outside.read_text() == "keep me"


def test_a_manifest_without_a_marker_never_vouches_for_a_folder_mid_update(cli, generated, tmp_path):
    """A folder left mid-update (no marker) and a manifest that says `"marker": null`, sealed
    again: a cold build, not a failing update of a folder whose marker is gone."""
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, source, site, "--cache-dir", cache)
    (site / ".belief-site").rename(site / ".belief-site.updating")
    manifest = _manifest(cache)
    manifest["marker"] = None
    _rewrite_manifest(cache, manifest)
    _edit(source, _claim)
    report = _build(cli, source, site, "--cache-dir", cache)
    assert "kept" not in report
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def test_a_beliefs_reads_name_a_changed_belief_whatever_the_number_changed():
    """The manifest keeps each belief's reads as bytes (cache._reads): a search for the bytes
    of a few changed beliefs, each index for many; both must tell the same, and bytes that
    straddle two indexes are none of them."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=500, deadline=None)
    @given(st.sets(st.integers(0, 70_000), max_size=40), st.lists(st.integers(0, 70_000), unique=True))
    def check(changed, reads):
        kept = cache_module._reads(reads)
        assert cache_module._valid_reads([kept], 70_001)
        assert cache_module._reader_of(changed)(kept) == any(r in changed for r in reads)
    check()
    straddling = cache_module._reads([7 * 256, 8 * 256])  # 7's bytes from the second byte of 7 * 256 on
    assert array("I", [7]).tobytes() in straddling
    assert not cache_module._reader_of({7})(straddling) and cache_module._reader_of({8 * 256})(straddling)


def test_the_manifests_reads_are_whole_indexes_below_the_count():
    """cache._valid_reads: None or bytes of whole indexes, the last below the number of ids."""
    reads = cache_module._reads
    assert cache_module._valid_reads([None, b"", reads([0, 4, 9])], 10)
    assert not cache_module._valid_reads([reads([0, 10])], 10)  # an index past the ids (saved sorted: the last)
    assert not cache_module._valid_reads([reads([1])[:-1]], 10)  # cut
    for bad in ("0 1", [0, 1], 0, True):
        with pytest.raises(TypeError):
            cache_module._valid_reads([bad], 10)


def _damaged(key, value):
    def damage(manifest):
        manifest[key] = value(manifest)
    return damage


DAMAGE = {
    **{f"read {bad!r}": _damaged("reads", lambda m, bad=bad: [bad if r is not None else None for r in m["reads"]])
       for bad in (b"\x01", b"\x00" * 7, "0 1", 0, True, [0])},
    "read out of range": _damaged("reads", lambda m: [cache_module._reads([0, len(m["ids"]) + 5]) if r is not None
                                                      else None for r in m["reads"]]),
    "reads as lists": _damaged("reads", lambda m: [list(array("I", r)) if r is not None else None
                                                   for r in m["reads"]]),
    "files not lists": _damaged("files", lambda m: [0 if f is not None else None for f in m["files"]]),
    "files of strings": _damaged("files", lambda m: ["index.html" if f is not None else None for f in m["files"]]),
    "ids reordered": _damaged("ids", lambda m: m["ids"][::-1]),
    "ids duplicated": _damaged("ids", lambda m: [m["ids"][0]] * len(m["ids"])),
    "site not a list": _damaged("site", lambda m: "index.html"),
    "NUL in out": _damaged("out", lambda m: m["out"] + "\0"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_manifest_gives_a_cold_build(cli, tmp_path, damage):
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    manifest = _manifest(cache)
    DAMAGE[damage](manifest)
    _rewrite_manifest(cache, manifest)
    report = _build(cli, EXAMPLE, site, "--cache-dir", cache)
    assert "kept" not in report
    assert tree_digest(site) == _cold(cli, EXAMPLE, tmp_path / "cold")


def test_a_manifest_edited_without_its_seal_gives_a_cold_build(cli, tmp_path):
    """Reads that the checks let through (none at all) would keep pages that show a changed
    belief, and be saved again; the seal (a CRC-32 line) catches any edit."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    manifest = _manifest(cache)
    manifest["reads"] = [b"" if r is not None else None for r in manifest["reads"]]
    _rewrite_manifest(cache, manifest, sealed=False)
    report = _build(cli, EXAMPLE, site, "--cache-dir", cache)
    assert "kept" not in report
    assert _manifest(cache)["reads"] != manifest["reads"]


@pytest.mark.parametrize("rest", [
    pytest.param(b"[\x01\x00\x00\x00" * 100_000 + b"[\x00\x00\x00\x00", id="deeper than marshal reads"),
    pytest.param(b"[\x05\x00\x00\x00N", id="cut short"),
    pytest.param(b"\xff", id="no marshal code"),
    pytest.param(b"N", id="None"),
    pytest.param(BAD_CODE, id="a code object marshal refuses"),
])
def test_a_manifest_marshal_cannot_read_gives_a_cold_build(cli, tmp_path, rest):
    """Sealed (so past the CRC check) but not a manifest marshal reads: never a traceback."""
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / cache_module.MANIFEST).write_bytes(cache_module._sealed(b"%d\n" % cache_module.FORMAT + rest))
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", cache)
    assert _manifest(cache)["format"] == cache_module.FORMAT


def test_graphviz_diagrams_turn_reuse_off(cli, generated, tmp_path):
    from site_builder.render.diagrams import graphviz
    if graphviz.find_executable("graphviz")[0] is None:
        pytest.skip("graphviz-pure is not installed (pip install 'belief-site[graphviz]')")
    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(generated, project / "network.json")
    (project / "mkdocs.yml").write_text("site_name: G\nplugins:\n  - beliefs:\n      source: network.json\n"
                                        "      diagram_engine: graphviz\n", encoding="utf-8")
    site = project / "site"
    code, _, err = cli("build", "--config", project / "mkdocs.yml", "-o", site, "--no-search")
    assert code == 0, err
    _edit(project / "network.json", _claim)
    code, _, err = cli("build", "--config", project / "mkdocs.yml", "-o", site, "--no-search")
    assert code == 0 and "kept" not in err, err


def test_lines_added_above_a_network_jsons_nogoods_keep_every_page(cli, generated, tmp_path):
    """A nogood carries its line for diagnostics only, and no page shows it: lines added to
    the nodes before it (blank ones here; a node's metadata written out over more lines, say)
    must not count as a change of the network (every page rendered again)."""
    data = json.loads(generated.read_text(encoding="utf-8"))
    data["nogoods"] = [{"id": "nogood-1", "nodes": sorted(data["nodes"])[:2], "discovered": "2026-12-07",
                        "resolution": ""}]
    text = json.dumps(data, ensure_ascii=False, indent=2)
    source, site, cache = tmp_path / "network.json", tmp_path / "site", tmp_path / "cache"
    source.write_text(text, encoding="utf-8")
    _build(cli, source, site, "--cache-dir", cache)
    source.write_text(text.replace('"nodes": {', '"nodes": {\n\n', 1), encoding="utf-8")
    assert _kept(_build(cli, source, site, "--cache-dir", cache)) == SIZE
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


@pytest.mark.parametrize("kind", ["network.json", "documents"])
def test_a_source_spelled_otherwise_keeps_every_page(cli, generated, tmp_path, monkeypatch, kind):
    """No page shows how the source was spelled: given relative, absolute, with `./` and a
    trailing slash, or resolved as `serve` has it, the same source keeps every page."""
    name = "network.json" if kind == "network.json" else "beliefs"
    if kind == "network.json":
        shutil.copyfile(generated, tmp_path / name)
    else:
        shutil.copytree(EXAMPLE, tmp_path / name)
    count = SIZE if kind == "network.json" else len(list(EXAMPLE.glob("*.md")))
    monkeypatch.chdir(tmp_path)
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, Path(name), site, "--cache-dir", cache)
    for spelled in (str(tmp_path / name), f"./{name}/" if kind == "documents" else f"./{name}", name):
        assert _kept(_build(cli, spelled, site, "--cache-dir", cache)) == count, spelled
    cold = _cold(cli, Path(name), tmp_path / "cold")
    assert tree_digest(site) == cold == _cold(cli, tmp_path / name, tmp_path / "cold-absolute")


def test_a_claim_edit_that_moves_lines_in_a_document_stays_incremental(cli, tmp_path):
    """Justifications carry their line for diagnostics; a longer claim moves them, which
    must not count as a change of the network's structure (a cold build)."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project / "beliefs")
    (project / "beliefs" / "unrelated.md").write_text(
        "# unrelated\n\n**IN** · premise\n\nA premise no other belief cites.\n", encoding="utf-8")
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, project / "beliefs", site, "--cache-dir", cache)
    doc = project / "beliefs" / "attention-is-structured-directed-computation.md"
    text = doc.read_text(encoding="utf-8")
    claim = "Transformer attention is a structured directed computation"
    doc.write_text(text.replace(claim, "A second line of claim.\n" + claim, 1), encoding="utf-8")
    report = _build(cli, project / "beliefs", site, "--cache-dir", cache)
    assert "unchanged belief page" in report
    assert tree_digest(site) == _cold(cli, project / "beliefs", tmp_path / "cold")


@pytest.mark.parametrize("edit", ["edited", "removed", "reviewed date"])
def test_a_summary_or_date_edit_renders_only_its_beliefs_own_files(cli, tmp_path, edit):
    """No other belief's page shows a summary or a date (cache.shown): the belief cited by
    four others has its page alone rendered again, and the site is the cold build's."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project / "beliefs")
    count = len(list((project / "beliefs").glob("*.md")))
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, project / "beliefs", site, "--cache-dir", cache)
    doc = project / "beliefs" / "attention-is-structured-directed-computation.md"
    text = doc.read_text(encoding="utf-8")
    summary = "Attention in a transformer is a one-way, order-sensitive lookup operation"
    assert summary in text and sum(doc.name[:-3] in d.read_text(encoding="utf-8")
                                   for d in (project / "beliefs").glob("*.md")) >= 4
    reviewed = "Reviewed 2026-06-21T14:41:08+00:00"
    if edit == "reviewed date":
        assert reviewed in text
        text = text.replace(reviewed, "Reviewed 2026-12-04T09:00:00+00:00", 1)
    elif edit == "edited":
        text = text.replace(summary, "Edited: ünïcode & <b>markup</b>. " + summary, 1)
    else:
        start = text.index("\nSummary\n")
        text = text[:start] + text[text.index("\n\n", text.index(summary)):]
    doc.write_text(text, encoding="utf-8")
    report = _build(cli, project / "beliefs", site, "--cache-dir", cache)
    assert f"{count - 1} unchanged belief pages kept" in report
    page = (site / "belief" / doc.name[:-3] / "index.html").read_text(encoding="utf-8")
    assert ("Edited: ünïcode &amp; &lt;b&gt;markup" in page or "Edited: ünïcode &amp; <b>markup" in page) \
        == (edit == "edited")
    assert ("2026-12-04T09:00:00" in page) == (edit == "reviewed date")
    assert tree_digest(site) == _cold(cli, project / "beliefs", tmp_path / "cold")


DERIVED_WITH_EXTERNAL = """derived-one

IN derived (depth 1)

A derived belief with two justifications.

Justifications

SL — first

Antecedents (all must be IN):

IN unrelated — A premise no other belief cites.

SL — second

Antecedents (all must be IN):

{tag} external-thing — A belief outside this network.
"""


def test_a_tag_on_an_id_outside_the_network_is_structure(cli, tmp_path):
    """The IN/OUT tag written before an id the network lacks decides whether that
    justification holds (spec: external ids), so flipping it is a change of structure even
    when no status changes."""
    beliefs = tmp_path / "beliefs"
    beliefs.mkdir()
    (beliefs / "unrelated.md").write_text(
        "# unrelated\n\n**IN** · premise\n\nA premise no other belief cites.\n", encoding="utf-8")
    doc = beliefs / "derived-one.md"
    doc.write_text(DERIVED_WITH_EXTERNAL.format(tag="OUT"), encoding="utf-8")
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, beliefs, site, "--cache-dir", cache)
    page = (site / "belief" / "derived-one" / "index.html").read_text(encoding="utf-8")
    assert "does not hold" in page
    doc.write_text(DERIVED_WITH_EXTERNAL.format(tag="IN"), encoding="utf-8")
    _build(cli, beliefs, site, "--cache-dir", cache)
    assert tree_digest(site) == _cold(cli, beliefs, tmp_path / "cold")
    assert "does not hold" not in (site / "belief" / "derived-one" / "index.html").read_text(encoding="utf-8")


def test_a_template_or_config_change_rebuilds_everything(cli, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project / "beliefs")
    (project / "mkdocs.yml").write_text("site_name: One\n", encoding="utf-8")
    site = project / "site"
    code, _, err = cli("build", "--config", project / "mkdocs.yml", "-o", site, "--no-search")
    assert code == 0, err
    assert (project / ".belief-site-cache" / cache_module.MANIFEST).is_file()  # default: beside mkdocs.yml
    (project / "mkdocs.yml").write_text("site_name: Two\n", encoding="utf-8")
    code, _, err = cli("build", "--config", project / "mkdocs.yml", "-o", site, "--no-search")
    assert code == 0 and "kept" not in err
    assert "Two" in (site / "belief" / "attention-is-structured-directed-computation" / "index.html").read_text()


def test_a_template_in_a_linked_folder_of_the_templates_folder_is_part_of_the_salt(cli, tmp_path):
    """Jinja opens templates through linked folders; the salt read past them (Path.rglob does
    not follow links), so an edit of one left every belief page stale."""
    project = tmp_path / "project"
    shutil.copytree(EXAMPLE, project / "beliefs")
    (project / "mkdocs.yml").write_text("site_name: t\nplugins:\n  - beliefs:\n      templates: overrides\n",
                                        encoding="utf-8")
    (project / "overrides").mkdir()
    (project / "elsewhere").mkdir()
    (project / "overrides" / "partials").symlink_to(project / "elsewhere", target_is_directory=True)
    (project / "elsewhere" / "mark.html").write_text("<span>mark one</span>", encoding="utf-8")
    (project / "elsewhere" / "loop").symlink_to(project / "overrides", target_is_directory=True)  # ends
    theme = (ROOT / "templates" / "belief.html").read_text(encoding="utf-8")
    assert '<dl class="facts">' in theme
    (project / "overrides" / "belief.html").write_text(
        theme.replace('<dl class="facts">', '{% include "partials/mark.html" %}<dl class="facts">', 1), encoding="utf-8")
    page = project / "site" / "belief" / "attention-is-structured-directed-computation" / "index.html"
    build = ("build", "--config", project / "mkdocs.yml", "-o", project / "site", "--no-search")
    assert cli(*build)[0] == 0 and "mark one" in page.read_text(encoding="utf-8")
    (project / "elsewhere" / "mark.html").write_text("<span>mark two</span>", encoding="utf-8")
    assert cli(*build)[0] == 0 and "mark two" in page.read_text(encoding="utf-8")


def test_with_a_templates_folder_a_status_flip_renders_every_page(cli, tmp_path):
    """The default theme shows the site's IN/OUT counts on its own pages only; a templates
    folder may show them on every belief page (they are given `counts`), so a flip there
    renders them all again, as a cold build would."""
    project = tmp_path / "project"
    project.mkdir()
    network = _network(project, {"a-in": ("IN", []), "b-in": ("IN", []), "c-derived": ("IN", [["a-in"]])})
    (project / "theme").mkdir()
    base = (ROOT / "templates" / "base.html").read_text(encoding="utf-8")
    footer = 'alt="IN and OUT counts of the whole network"'
    assert footer in base
    (project / "theme" / "base.html").write_text(
        base.replace(footer, 'alt="{{ counts.IN or 0 }} IN, {{ counts.OUT or 0 }} OUT"'), encoding="utf-8")
    config = project / "mkdocs.yml"
    config.write_text(f"site_name: t\nplugins:\n  - beliefs:\n      source: {network}\n      templates: theme\n",
                      encoding="utf-8")
    site, cold = project / "site", tmp_path / "cold"
    _build(cli, network, site, "--config", config)
    untouched = site / "belief" / "b-in" / "index.html"
    assert 'alt="3 IN, 0 OUT"' in untouched.read_text(encoding="utf-8")
    _edit(network, _set("a-in", "OUT"))
    assert "kept" not in _build(cli, network, site, "--config", config)
    assert 'alt="1 IN, 2 OUT"' in untouched.read_text(encoding="utf-8")
    _build(cli, network, cold, "--config", config, "--no-cache")
    assert tree_digest(site) == tree_digest(cold)


def test_the_default_theme_cannot_show_the_site_counts_on_a_belief_page(cli, tmp_path, monkeypatch):
    """Belief pages of the default theme are not given the site's IN/OUT counts (no status
    flip would render them again): a theme that showed them there fails loudly (E805)."""
    from site_builder.render import pages

    theme = tmp_path / "theme"
    shutil.copytree(ROOT / "templates", theme)
    base = (theme / "base.html").read_text(encoding="utf-8")
    footer = 'alt="IN and OUT counts of the whole network"'
    (theme / "base.html").write_text(base.replace(footer, 'alt="{{ counts.IN or 0 }} IN"'), encoding="utf-8")
    monkeypatch.setattr(pages, "templates_dir", lambda: theme)
    network = _network(tmp_path, {"a-in": ("IN", [])})
    code, _, err = cli("build", network, "-o", tmp_path / "site", "--no-search", "-j", "1")
    assert code != 0 and "E805" in err and "base.html" in err


def test_the_cache_is_never_inside_the_output_folder(cli, tmp_path):
    site = tmp_path / "site"
    code, _, err = cli("build", EXAMPLE, "-o", site, "--cache-dir", site / "cache", "--no-search")
    assert code == 1 and "E801" in err and "cache" in err and not site.exists()


def _first_line(process, timeout: float = 60) -> str:
    """A child's first stderr line, or "" after `timeout` (a test must fail, not hang)."""
    ready, _, _ = select.select([process.stderr], [], [], timeout)
    return process.stderr.readline() if ready else ""


BUILD = [sys.executable, "-c", "import sys; from site_builder.cli import main; sys.exit(main())", "build"]


def test_a_second_build_sharing_the_cache_waits_for_the_first(tmp_path):
    from site_builder.cache import locked
    cache, site = tmp_path / "cache", tmp_path / "site"
    command = [*BUILD, str(EXAMPLE), "-o", str(site), "--cache-dir", str(cache), "--no-search"]
    second = None
    try:
        with locked(cache):  # another build holds it
            second = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
            first_line = _first_line(second)
            assert "waiting for another build using the cache folder" in first_line, first_line
            assert f"pid {os.getpid()}" in first_line
            time.sleep(0.5)
            assert second.poll() is None and not site.exists()  # still waiting
        assert second.wait(timeout=120) == 0, second.stderr.read()
    finally:
        if second is not None and second.poll() is None:
            second.kill()
    assert (site / "index.html").is_file() and (cache / cache_module.MANIFEST).is_file()


def test_the_cache_lock_ends_with_a_killed_build_not_with_its_workers(generated, tmp_path):
    """Render workers are forked while the lock is held; killing the build must free it."""
    cache, site = tmp_path / "cache", tmp_path / "site"
    command = [*BUILD, str(generated), "-o", str(site), "--cache-dir", str(cache), "--no-search", "-j", "2"]
    holder = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_children(holder.pid)) < 2 and holder.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        workers = _children(holder.pid)
        assert len(workers) >= 2, "the build never started its workers"
        holder.kill()
        holder.wait()
        second = subprocess.run([*BUILD, str(EXAMPLE), "-o", str(tmp_path / "other"), "--cache-dir", str(cache),
                                 "--no-search"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert second.returncode == 0 and "waiting" not in second.stderr, second.stderr
    finally:
        os.killpg(holder.pid, signal.SIGKILL) if holder.poll() is None else None
        for pid in _children(holder.pid):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_builds_workers_end_and_its_half_written_site_goes_with_the_next_build(generated, tmp_path):
    """Forked workers hold both ends of their task pipe: without a look at their parent they
    waited for tasks forever, and the killed build's staging folder (a site) stayed."""
    site = tmp_path / "site"
    command = [*BUILD, str(generated), "-o", str(site), "--no-cache", "--no-search", "-j", "2"]
    killed = subprocess.Popen(command, stderr=subprocess.DEVNULL, cwd=tmp_path, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while len(_children(killed.pid)) < 2 and killed.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        assert len(_children(killed.pid)) >= 2, "the build never started its workers"
        killed.kill()
        killed.wait()
        deadline = time.monotonic() + 10
        while _children(killed.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _children(killed.pid) == []
        assert [p.name for p in tmp_path.glob(".site.new-*")], "no staging folder to leave behind"
        done = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert not list(tmp_path.glob(".site.*"))
    finally:
        os.killpg(killed.pid, signal.SIGKILL) if killed.poll() is None else None
        for pid in _children(killed.pid):
            os.kill(pid, signal.SIGKILL)


def test_only_folders_of_the_exact_shape_of_a_dead_process_are_removed(tmp_path):
    from site_builder.processes import remove_left_by_dead
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    pid = int(dead.stdout)
    names = [f".site.new-{pid}-abcd_123",  # a killed build's: goes
             f".site.new-{os.getpid()}-abcd_123",  # a running one's
             ".site.new-\u00b2-abcd_123", ".site.new-99999999999999999999-abcd_123",  # not pids int() or kill take
             f".site.new-2024-01.new-{pid}-abcd_123"]  # output "site.new-2024-01"'s: another output
    for name in names:
        (tmp_path / name).mkdir()
    remove_left_by_dead(tmp_path, [".site.new-"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(names[1:])


def _children(pid: int) -> list[int]:
    """Processes whose parent is `pid`, or in its session (orphans keep it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "Z":  # ended, not yet reaped
                continue
            if int(fields[1]) == pid or int(fields[3]) == pid:  # ppid, or session id
                found.append(int(entry.name))
    return [p for p in found if p != pid]


def test_an_unusable_cache_folder_is_a_warning_and_the_build_goes_on(cli, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--cache-dir", blocker / "cache", "--no-search")
    assert code == 0 and "W804" in err and "Traceback" not in err, err
    assert (tmp_path / "site" / "index.html").is_file()


def test_a_cache_that_cannot_be_saved_is_a_warning_and_the_site_stays(cli, tmp_path, monkeypatch):
    from site_builder import cache as cache_module

    def full(self, out, paths):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(cache_module.Cache, "save", full)
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--cache-dir", tmp_path / "cache", "--no-search")
    assert code == 0 and "W804" in err and "No space left" in err and "build failed" not in err, err
    assert (tmp_path / "site" / "index.html").is_file()


def test_no_cache_neither_reads_nor_writes_a_cache(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--no-cache", "--no-search")
    assert code == 0, err
    assert not (tmp_path / ".belief-site-cache").exists()


def test_a_corrupt_cache_gives_a_cold_build(cli, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / cache_module.MANIFEST).write_bytes(b"{not a manifest")
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--cache-dir", cache, "--no-search")
    assert code == 0, err
    assert _manifest(cache)["format"] == cache_module.FORMAT


def test_the_code_digest_changes_when_a_library_is_installed_again(monkeypatch, tmp_path):
    """Pages depend on the libraries' versions (cache.code_digest): any install writes the
    package file anew (another size or time), and a missing library is named as missing."""
    package = tmp_path / "fakelib"
    package.mkdir()
    (package / "__init__.py").write_text("__version__ = '1.0'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(cache_module, "LIBRARIES", {"fakelib": "fakelib", "no_such_library_here": "none"})
    before = cache_module._libraries()
    assert before[1] == ("no_such_library_here",)
    (package / "__init__.py").write_text("__version__ = '1.1'\n")
    os.utime(package / "__init__.py", ns=(1, 1))
    after = cache_module._libraries()
    assert after[0][0] == "fakelib" and after != before


def test_a_manifest_marshal_cannot_write_leaves_no_manifest(tmp_path):
    """Ids of a str subclass (a caller of the API): no traceback after the site is written,
    and no manifest, so the next build is a cold one."""
    class Id(str):
        pass

    store = cache_module.Cache(tmp_path / "cache")
    store.folder.mkdir()
    (store.folder / cache_module.MANIFEST).write_bytes(b"the last build's")
    store.texts, store.shown = {Id("a"): "h:IN"}, {Id("a"): "s:IN"}
    store.save(tmp_path / "site", ["index.html"])
    assert not (store.folder / cache_module.MANIFEST).exists() and store.saved is None


@pytest.mark.parametrize("version", ["1.0", "2.0"])
def test_a_library_imported_from_a_zip_file_is_keyed_by_its_version(monkeypatch, tmp_path, version):
    """No package file to look at inside an archive: the code digest takes the version then."""
    import importlib
    import zipfile
    archive = tmp_path / "libs.zip"
    with zipfile.ZipFile(archive, "w") as out:
        out.writestr("zipped_lib/__init__.py", "")
        out.writestr(f"zipped_lib-{version}.dist-info/METADATA", f"Name: zipped-lib\nVersion: {version}\n")
    monkeypatch.syspath_prepend(str(archive))
    importlib.invalidate_caches()
    monkeypatch.setattr(cache_module, "LIBRARIES", {"zipped_lib": "zipped-lib"})
    assert cache_module._libraries() == [("zipped_lib", version)]


def test_the_manifest_of_an_earlier_version_is_removed_by_the_next_save(cli, tmp_path):
    """Versions before format 6 kept the manifest as JSON in manifest.json: never read again."""
    cache = tmp_path / "cache"
    _build(cli, EXAMPLE, tmp_path / "first", "--cache-dir", cache)  # a cache folder of this machine's
    (cache / cache_module.RETIRED_MANIFEST).write_text('0123\n{"format": 5}', encoding="utf-8")
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--cache-dir", cache, "--no-search")
    assert code == 0, err
    assert not (cache / cache_module.RETIRED_MANIFEST).exists()
    assert _manifest(cache)["format"] == cache_module.FORMAT


def test_removing_an_old_site_takes_everything_and_never_follows_links(tmp_path):
    """write.remove_tree (an old site after the swap): many folders, removed by threads."""
    from site_builder.write import OVERLAPPED, remove_tree
    outside = tmp_path / "outside"
    (outside / "deep").mkdir(parents=True)
    (outside / "deep" / "keep.txt").write_text("not the site's")
    site = tmp_path / "old" / "site"
    for k in range(10 * OVERLAPPED):  # enough folders to be shared out
        folder = site / "belief" / f"b{k:03d}"
        folder.mkdir(parents=True)
        (folder / "index.html").write_text("page")
    (site / "index.html").write_text("home")
    (site / "belief" / "b000" / "linked-folder").symlink_to(outside)
    (site / "linked-file").symlink_to(outside / "deep" / "keep.txt")
    (site / "dangling").symlink_to(tmp_path / "nowhere")
    remove_tree(tmp_path / "old")
    assert not (tmp_path / "old").exists()
    assert (outside / "deep" / "keep.txt").read_text() == "not the site's"
    remove_tree(tmp_path / "old")  # gone already: nothing to do, no error
    (tmp_path / "link").symlink_to(outside)
    remove_tree(tmp_path / "link")  # the link itself goes, not what it points to
    assert not (tmp_path / "link").is_symlink() and (outside / "deep" / "keep.txt").is_file()


def _old_sites_gone(folder: Path) -> bool:
    """Whether the sites replaced beside `folder` are gone within 30 s (write._discard removes
    them in processes of their own)."""
    for _ in range(300):
        if not list(folder.glob(".*.old-*")):
            return True
        time.sleep(0.1)
    return False


def test_a_cold_build_over_a_site_replaces_it_whole(cli, generated, tmp_path):
    site = tmp_path / "site"
    _build(cli, generated, site, "--no-cache")
    (site / "belief" / "stray.txt").write_text("from the old site")
    _build(cli, generated, site, "--no-cache")
    assert tree_digest(site) == _cold(cli, generated, tmp_path / "cold")
    assert _old_sites_gone(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cold", "site"]  # no old or new folder left


@pytest.mark.skipif(os.name != "posix", reason="the old site goes in a forked process on POSIX only")
def test_a_build_ends_once_the_new_site_is_in_place_and_the_old_one_goes_after(tmp_path, monkeypatch):
    """The replaced site is removed by a process of its own, named after it: the build does
    not wait for it, nor does a build started meanwhile take it over (it would wait)."""
    from site_builder import write
    from site_builder.cli import main
    released, real = tmp_path / "released", write.remove_tree

    def remove_once_released(path: Path) -> None:  # runs in the removing process (forked)
        for _ in range(300):  # a build waiting for this would end after 30 s, and fail below
            if released.exists():
                break
            time.sleep(0.1)
        real(path)

    monkeypatch.setattr(write, "remove_tree", remove_once_released)
    out = tmp_path / "site"
    for _ in range(3):
        assert main(["build", str(EXAMPLE), "-o", str(out), "-q", "--no-cache", "--no-search"]) == 0
    waiting = sorted(tmp_path.glob(".site.old-*"))
    assert len(waiting) == 2  # both replaced sites are still there: neither build waited
    owners = {int(p.name.split("-")[1]) for p in waiting}
    assert os.getpid() not in owners and len(owners) == 2  # each named after the process removing it
    assert (out / "index.html").is_file()
    released.touch()
    assert _old_sites_gone(tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["released", "site"]


_SLOW_REMOVAL = """\
import signal, sys, time
from site_builder import write
real = write.remove_tree
write.remove_tree = lambda path: (time.sleep(15), real(path))
if "--sigchld-ignored" in sys.argv:  # as some hosts start their children
    sys.argv.remove("--sigchld-ignored")
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
from site_builder.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _build_slowly_removing(site: Path, *extra: str, **options) -> subprocess.CompletedProcess:
    command = [sys.executable, "-c", _SLOW_REMOVAL, "build", str(EXAMPLE), "-o", str(site), "--no-cache",
               "--no-search", *extra]
    return subprocess.run(command, capture_output=True, text=True, timeout=10,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, **options)


@pytest.mark.skipif(os.name != "posix", reason="the old site goes in a forked process on POSIX only")
def test_a_build_read_through_a_pipe_ends_while_the_old_site_is_still_being_removed(tmp_path):
    """The removing process holds none of the build's files open: whoever reads the build's
    output through a pipe (CI logs, `| tee`) gets its end when the build ends."""
    for _ in range(2):  # the second replaces the first's site, whose removal takes 15 s
        done = _build_slowly_removing(tmp_path / "site")
        assert done.returncode == 0, done.stderr
    assert list(tmp_path.glob(".site.old-*"))  # still being removed


@pytest.mark.skipif(os.name != "posix", reason="the old site goes in a forked process on POSIX only")
def test_the_removing_process_keeps_no_descriptor_the_build_was_given(tmp_path):
    """Not only the standard streams: a pipe the build inherited (a CI runner's, say) is closed
    in the removing process, so its reader sees the end once the build has ended."""
    site = tmp_path / "site"
    assert _build_slowly_removing(site).returncode == 0
    ended, told = os.pipe()
    try:
        done = _build_slowly_removing(site, pass_fds=(told,))
        assert done.returncode == 0, done.stderr
        os.close(told)
        ready, _, _ = select.select([ended], [], [], 5)
        assert ready and os.read(ended, 1) == b""  # the end: nobody holds the write side
    finally:
        os.close(ended)


@pytest.mark.skipif(os.name != "posix", reason="the old site goes in a forked process on POSIX only")
def test_a_build_replacing_a_site_succeeds_with_child_signals_ignored(tmp_path):
    """With SIGCHLD ignored (as a host may start us), the kernel reaps the process that hands
    the removal over: waiting for it finds none, and the build still succeeded."""
    for _ in range(2):
        done = _build_slowly_removing(tmp_path / "site", "--sigchld-ignored")
        assert done.returncode == 0, done.stderr
    assert (tmp_path / "site" / "index.html").is_file()


# --- progress and profile ---------------------------------------------------------------------

class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_only_on_a_terminal():
    plain, terminal = io.StringIO(), _Terminal()
    for stream in (plain, terminal):
        progress = Progress(stream, "rendering beliefs")
        for done in range(1, 4):
            progress(done, 3)
        progress.close()
    assert plain.getvalue() == ""
    assert "\rrendering beliefs: 3/3 (100%)" in terminal.getvalue() and terminal.getvalue().endswith("\033[K")


def test_progress_shows_each_stage_on_a_terminal_and_the_count_while_beliefs_render():
    plain, terminal = io.StringIO(), _Terminal()
    for stream in (plain, terminal):
        progress = Progress(stream, "rendering beliefs")
        progress.phase("read and evaluate")
        progress(1, 2)
        progress.phase("remove the previous site")
        progress.close()
    assert plain.getvalue() == ""
    assert terminal.getvalue().split("\r") == ["", "read and evaluate...\033[K", "rendering beliefs: 1/2 (50%)\033[K",
                                                "remove the previous site...\033[K", "\033[K"]


def test_stages_tell_each_stage_entered_once_not_each_item():
    entered: list[str] = []
    stages = Stages(entered.append)
    with stages.stage("read"):
        pass
    assert list(stages.timed("pages", [1, 2, 3])) == [1, 2, 3]
    assert list(stages.timed("pages", [4])) == [4]
    with stages.stage("read"):
        pass
    assert entered == ["read", "pages", "read"]


def test_a_terminal_sees_the_build_read_render_and_remove_the_site_it_replaced(tmp_path, monkeypatch):
    from site_builder.cli import main
    out = tmp_path / "site"
    for _ in range(2):
        terminal = _Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        assert main(["build", str(EXAMPLE), "-o", str(out), "--no-cache", "--no-search"]) == 0
    shown = [line.removesuffix("\033[K") for line in terminal.getvalue().split("\r")]
    assert "read and evaluate..." in shown and "remove the previous site..." in shown
    assert shown.index("read and evaluate...") < shown.index("rendering beliefs: 5/5 (100%)") \
        < shown.index("remove the previous site...")
    assert _old_sites_gone(tmp_path)


def _profile(err: str) -> dict[str, float]:
    """--profile's rows (stage -> seconds, then "total"), in order."""
    return {found.group(1): float(found.group(2)) for found in
            (re.match(r"(\S.*?)\s+([\d.]+) s(?:\s+[\d.]+%)?$", line) for line in err.splitlines()) if found}


def test_profile_reports_removing_the_replaced_site_apart_from_writing(cli, tmp_path):
    out = tmp_path / "site"
    reports = []
    for _ in range(2):
        code, _, err = cli("build", EXAMPLE, "-o", out, "--profile", "--no-cache", "--no-search")
        assert code == 0, err
        reports.append(_profile(err))
    assert "remove the previous site" not in reports[0] and "remove the previous site" in reports[1]
    assert all(seconds >= 0 for report in reports for seconds in report.values())


def test_profile_reports_seconds_per_stage(cli, tmp_path):
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--profile", "--no-cache")
    assert code == 0, err
    for stage in ("read and evaluate", "belief files", "site files", "search (waiting for Pagefind)",
                  "write", "total"):
        assert any(line.startswith(stage) and line.rstrip().endswith(("%", " s")) for line in err.splitlines()), stage


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_the_console_scripts_profile_and_time_count_from_the_process_start(tmp_path):
    """Interpreter start, imports and settings took a fifth of a 10k incremental build and
    showed nowhere: the console script reports them as a stage, and its total and the time it
    says it took count them (a program calling main, as these tests do, has no such stage)."""
    done = subprocess.run([sys.executable, "-m", "site_builder", "build", str(EXAMPLE), "-o", str(tmp_path / "site"),
                           "--profile", "--no-cache", "--no-search"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = _profile(done.stderr)
    start, total = rows[START], rows["total"]
    assert list(rows)[0] == START and 0 < start < total
    said = float(re.search(r"into \S+ in ([\d.]+) s", done.stderr).group(1))
    assert said >= total - 0.06  # measured after the total, from the same start (two roundings)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_process_started_is_when_the_process_began():
    """A child that sleeps 0.5 s first is at least that old when it asks (and not much older)."""
    code = ("import time; time.sleep(0.5); from site_builder.progress import process_started; "
            "print(time.perf_counter() - process_started())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert 0.5 <= float(done.stdout) < 10


def test_stages_add_up():
    stages = Stages()
    stages.add("a", 1.0)
    stages.add("b", 3.0)
    stages.add("a", 1.0)
    assert stages.report().splitlines() == ["a         2.00 s   40.0%", "b         3.00 s   60.0%",
                                            "total     5.00 s"]


def test_memoised_links_equal_the_computed_ones():
    """RenderContext.href shares links between pages in sibling folders: never a wrong one."""
    import itertools
    import random

    from site_builder import urls
    from site_builder.config import SiteConfig
    from site_builder.render import RenderContext

    rng = random.Random(5)
    paths = set()
    for _ in range(600):
        folders = [rng.choice(["a", "b", "ns", "x", "belief"]) for _ in range(rng.randint(0, 3))]
        paths.add("/".join([*folders, rng.choice(["index.html", "badge.svg"])]))
    for directory_urls in (True, False):
        ctx = RenderContext(None, SiteConfig(use_directory_urls=directory_urls), frozenset())
        for here, target in itertools.product(sorted(paths), repeat=2):
            assert ctx.href(here, target) == urls.relative_href(here, target, directory_urls), (here, target)


def test_a_failed_render_stops_the_search_indexer(monkeypatch, tmp_path):
    import site_builder.render as render_module
    from site_builder.config import SiteConfig
    from site_builder.pipeline import build
    from site_builder.render import search

    started = []
    real = search.Indexing.__init__

    def noting(self, ctx, cache=None, sink=None):
        real(self, ctx, cache, sink)
        started.append(self)

    def broken(ctx):
        raise RuntimeError("a template failed")
        yield

    slow = search._Service.exchange

    def slowly(self, payloads):  # Pagefind still busy when the render fails
        time.sleep(1.0)
        return slow(self, payloads)

    monkeypatch.setattr(search.Indexing, "__init__", noting)
    monkeypatch.setattr(search._Service, "exchange", slowly)
    monkeypatch.setattr(render_module, "emitters", lambda: (broken,))
    with pytest.raises(RuntimeError):
        build(SiteConfig(source=str(EXAMPLE)), tmp_path / "site")
    assert started and started[0]._service._process.poll() is not None  # no Pagefind left running
    assert not (tmp_path / "site").exists()


def test_a_failed_write_stops_the_search_indexer_before_its_folder_goes(monkeypatch, tmp_path):
    """The writer fails in this process (a full disk, say): Pagefind and the thread that would
    write its bundle are stopped before the new site's folder is removed, so that nothing
    writes into it again (write._fill_from closes the renderer)."""
    import errno
    import shutil
    from site_builder import write
    from site_builder.config import SiteConfig
    from site_builder.pipeline import build
    from site_builder.render import search

    events = []
    abandon, rmtree = search.Indexing.abandon, shutil.rmtree
    monkeypatch.setattr(search.Indexing, "abandon", lambda self: (events.append("stop"), abandon(self))[1])
    monkeypatch.setattr(shutil, "rmtree", lambda path, *a, **k: (
        events.append("remove") if ".new-" in str(path) else None, rmtree(path, *a, **k))[1])

    def full(folder, item, made):
        raise OSError(errno.ENOSPC, "No space left on device", item.path)

    monkeypatch.setattr(write, "_store", full)
    built = build(SiteConfig(source=str(EXAMPLE)), tmp_path / "site", jobs=1)
    assert not built.written and "E806" in {d.code for d in built.diagnostics}
    assert events[:2] == ["stop", "remove"], events
    assert not list(tmp_path.glob(".site.new-*"))


def test_reading_pauses_the_cycle_collector_and_restores_its_state(monkeypatch):
    import gc
    from site_builder import pipeline
    seen = []
    real = pipeline.parse
    monkeypatch.setattr(pipeline, "parse", lambda sources, *rest: (seen.append(gc.isenabled()), real(sources, *rest))[1])
    assert gc.isenabled()
    pipeline.check(EXAMPLE)
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        pipeline.check(EXAMPLE)
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


def test_the_command_line_loads_no_http_or_graph_library_before_a_command_needs_it():
    """Every run pays its imports: the HTTP server (http.server, ssl, email parsing) is for
    `serve` only, networkx for cycles and `--diff-base` (0.13 s of a 1.7 s claim edit)."""
    code = ("import sys\n"
            "import site_builder.cli\n"
            "print(sorted(m for m in ('http.server', 'http.client', 'ssl', 'networkx') if m in sys.modules))\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_pyyaml_is_loaded_only_where_there_is_yaml_to_read(tmp_path):
    """A build with no YAML to read (no mkdocs.yml, `_project.yaml`, front matter or legacy
    beliefs.md) leaves PyYAML unloaded: importing it took 16-20 ms of a 10k claim edit's
    start. With mkdocs.yml it is read as before."""
    network = tmp_path / "network.json"
    network.write_text(json.dumps({"nodes": {"a": {"text": "A premise.", "truth_value": "IN"}}}), encoding="utf-8")
    code = ("import sys\n"
            "from site_builder.cli import main\n"
            "code = main(sys.argv[1:])\n"
            "print(code, 'yaml' in sys.modules)\n")
    for config, loaded in (False, "False"), (True, "True"):
        if config:
            (tmp_path / "mkdocs.yml").write_text("site_name: Configured\nplugins:\n  - beliefs\n", encoding="utf-8")
        done = subprocess.run([sys.executable, "-c", code, "build", str(network), "-o", str(tmp_path / "site"),
                               "--no-search", "--no-cache", "-q"], cwd=tmp_path, capture_output=True, text=True,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert done.returncode == 0, done.stderr
        assert done.stdout.split() == ["0", loaded], (config, done.stdout, done.stderr)
    assert "Configured" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_a_build_pauses_the_cycle_collector_while_its_workers_collect(cli, generated, tmp_path, monkeypatch):
    """Collecting after rendering walked the whole network again (0.1 s of a 10k claim edit);
    the workers' rendering makes cycles, so they collect (their inherited objects are frozen)."""
    import gc
    seen, states = [], tmp_path / "states"
    save = cache_module.Cache.save
    monkeypatch.setattr(cache_module.Cache, "save", lambda self, out, paths: (seen.append(gc.isenabled()),
                                                                              save(self, out, paths))[1])
    _noted_in_workers(monkeypatch, states, gc.isenabled)
    assert gc.isenabled()
    _build(cli, generated, tmp_path / "site", "--cache-dir", tmp_path / "cache", "-j", "2")
    assert seen == [False] and gc.isenabled()
    assert set(states.read_text().split()) == {"True"}


def test_reading_off_the_main_thread_leaves_the_cycle_collector_alone(monkeypatch):
    """The collector's switch is the process's: only the main thread may pause it."""
    import gc
    import threading
    from site_builder import pipeline
    seen = []
    real = pipeline.parse
    monkeypatch.setattr(pipeline, "parse", lambda sources, *rest: (seen.append(gc.isenabled()), real(sources, *rest))[1])
    worker = threading.Thread(target=pipeline.check, args=(EXAMPLE,))
    worker.start()
    worker.join()
    assert seen == [True] and gc.isenabled()


# --- serve's build process ------------------------------------------------------------------------

def test_serve_rebuilds_in_one_warm_process_of_its_own_into_one_folder(generated, tmp_path, monkeypatch):
    from site_builder.rebuild import Rebuilder
    monkeypatch.chdir(tmp_path)  # the build process reads ./mkdocs.yml, as `build` does: none here
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    site, cache, cold = tmp_path / "site", tmp_path / "cache", tmp_path / "cold"
    builds = Rebuilder()
    try:
        first = builds.build(str(source), None, site, cache)
        assert first.written and first.crash is None and first.beliefs == SIZE and first.reused == 0
        process = builds.pid
        assert process != os.getpid() and os.getsid(process) == process  # Ctrl+C reaches only the server
        _edit(source, _claim)
        edited = site / "belief" / _derived(json.loads(generated.read_text(encoding="utf-8"))["nodes"]) / "index.html"
        early = []
        again = builds.build(str(source), None, site, cache, lambda reply: early.append(
            (reply, "Edited: ünïcode" in edited.read_text(encoding="utf-8"))))
        assert again.written and 0 < again.reused < SIZE and builds.pid == process  # incremental, same process
        # with search, a first reply once the pages are in place, then the build's own
        assert [(r.partial, r.written, r.reused, r.beliefs, shown) for r, shown in early] == \
            [(True, True, again.reused, SIZE, True)] and not again.partial
        assert subprocess.run([*BUILD, str(source), "-o", str(cold), "--no-cache"], cwd=tmp_path).returncode == 0
        assert tree_digest(site) == tree_digest(cold)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["cache", "cold", "network.json", "site"]

        broken = tmp_path / "broken.json"
        broken.write_text("{", encoding="utf-8")
        failed = builds.build(str(broken), None, site, cache)
        assert not failed.written and [d.code for d in failed.diagnostics] == ["E601"]
        assert tree_digest(site) == tree_digest(cold)  # the last good site stays
    finally:
        assert builds.stop() == 0  # idle: it ends with its input
    assert builds.pid is None and not _children(process)


def test_a_build_process_killed_in_the_middle_of_a_build_is_reported_not_waited_for(generated, tmp_path):
    """Its render workers keep the reply pipe open: the server must not wait for it to close."""
    import threading

    from site_builder.rebuild import Rebuilder
    builds = Rebuilder()
    builds.build(str(EXAMPLE), None, tmp_path / "warm", tmp_path / "warm-cache")
    session = builds.pid

    def kill_once_rendering() -> None:
        deadline = time.monotonic() + 60
        while len(_children(session)) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(session, signal.SIGKILL)  # the build process only, as the OOM killer would

    killer = threading.Thread(target=kill_once_rendering, daemon=True)
    killer.start()
    replies = []
    waiting = threading.Thread(target=lambda: replies.append(
        builds.build(str(generated), None, tmp_path / "site", tmp_path / "cache")), daemon=True)
    waiting.start()
    waiting.join(30)
    try:
        assert replies and "the build process stopped (exit code -9)" in replies[0].crash
        deadline = time.monotonic() + 10
        while _children(session) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _children(session)  # its workers went with it
    finally:
        if waiting.is_alive():
            os.killpg(session, signal.SIGKILL)
        builds.stop()


def test_the_build_process_imports_nothing_from_the_working_folder_and_its_output_is_not_a_reply(
        tmp_path, monkeypatch):
    from site_builder.rebuild import Rebuilder
    (tmp_path / "json.py").write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n")  # a repository's file
    noisy = tmp_path / "noisy"
    noisy.mkdir()
    (noisy / "sitecustomize.py").write_text("print('not a reply')\n")  # printed as the process starts
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(noisy), os.environ.get("PYTHONPATH")])))
    monkeypatch.chdir(tmp_path)
    builds = Rebuilder()
    try:
        first = builds.build(str(EXAMPLE), None, tmp_path / "site", tmp_path / "cache")
        second = builds.build(str(tmp_path / "missing"), None, tmp_path / "site", tmp_path / "cache")
    finally:
        builds.stop()
    assert first.written and first.crash is None and not (tmp_path / "ran").exists()
    assert not second.written  # its own reply, not the first one's


def test_a_server_that_fails_on_the_early_reply_does_not_take_the_late_one_for_the_next_builds(tmp_path):
    """The early reply runs the server's code (printing, say, to a closed pipe) while the build
    goes on: if that fails, the build's own reply must not answer the next request."""
    from site_builder.rebuild import Rebuilder
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    document = next(source.glob("*.md"))
    builds = Rebuilder()

    def closed_pipe(reply) -> None:
        raise BrokenPipeError("stderr")
    try:
        assert builds.build(str(source), None, tmp_path / "site", tmp_path / "cache").written
        first = builds.pid
        document.write_text(document.read_text(encoding="utf-8").replace("\n\n", "\n\nEdited. ", 1), encoding="utf-8")
        with pytest.raises(BrokenPipeError):
            builds.build(str(source), None, tmp_path / "site", tmp_path / "cache", closed_pipe)
        assert builds.pid is None  # stopped, with its workers and Pagefind
        deadline = time.monotonic() + 10
        while _children(first) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _children(first)
        missing = builds.build(str(tmp_path / "missing"), None, tmp_path / "site", tmp_path / "cache")
        assert not missing.written and missing.crash is None  # its own reply
    finally:
        builds.stop()


def test_replies_that_arrive_together_are_taken_one_by_one():
    from dataclasses import asdict

    from site_builder.rebuild import Rebuilder, Reply
    read, write = os.pipe()
    builds = Rebuilder()
    builds._replies = read  # as if its build process had sent both before the server read any
    try:
        early, done = Reply(True, 5, 9, 4, partial=True), Reply(True, 5, 12, 4)
        os.write(write, "".join(json.dumps(asdict(r)) + "\n" for r in (early, done)).encode())
        assert builds._reply() == early and builds._reply() == done
    finally:
        os.close(write)
        os.close(read)


def test_a_build_process_that_dies_is_reported_and_started_again(tmp_path):
    """Killed in the middle of a build (here once its pages are in place, before its search
    bundle), the build's reply says so; the next build starts a new process. One found dead
    before a build (killed between builds) is started again for it."""
    from site_builder.rebuild import Rebuilder
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    builds = Rebuilder()
    build = lambda **kw: builds.build(str(source), None, tmp_path / "site", tmp_path / "cache", **kw)  # noqa: E731
    try:
        assert build().written
        page = source / "attention-is-non-symmetric.md"
        page.write_text(page.read_text(encoding="utf-8").replace("is non-symmetric:", "is asymmetric:"), encoding="utf-8")
        killed = []
        lost = build(published=lambda reply: killed.append(os.kill(builds.pid, signal.SIGKILL)))
        assert killed and not lost.written and "the build process stopped (exit code -9)" in lost.crash
        assert builds.pid is None
        assert build().written
        os.kill(builds.pid, signal.SIGKILL)
        builds._process.wait(timeout=10)  # dead before the next build asks
        assert build().written
    finally:
        builds.stop()


def test_stopping_serve_in_the_middle_of_a_build_kills_the_build_and_its_workers(generated, tmp_path):
    from site_builder.rebuild import Rebuilder

    class Interrupted(Exception):
        pass

    def interrupt(signum, frame):  # as Ctrl+C interrupts the server waiting for the build
        if len(_children(session)) >= 2:
            raise Interrupted
    builds, session = Rebuilder(), None
    builds.build(str(EXAMPLE), None, tmp_path / "warm", tmp_path / "warm-cache")
    session = builds.pid
    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.05, 0.05)
    try:
        with pytest.raises(Interrupted):  # interrupted once the build renders with its workers
            builds.build(str(generated), None, tmp_path / "site", tmp_path / "cache")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        code = builds.stop()
    assert code == -signal.SIGKILL
    deadline = time.monotonic() + 10  # killed workers are reaped by whoever adopted them
    while _children(session) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _children(session)


def test_the_build_process_hands_each_build_what_the_last_one_found(generated, tmp_path, monkeypatch):
    from site_builder import pipeline, rebuild
    from site_builder.parse import network_json
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    given, checked = [], []
    real, real_node = pipeline.evaluate, network_json._node

    def noting(network, limit, previous=None):
        found = real(network, limit, previous)
        given.append(previous is not None and found.status is previous.status)
        return found

    monkeypatch.setattr(pipeline, "evaluate", noting)
    monkeypatch.setattr(network_json, "_node", lambda *args: checked.append(args[0]) or real_node(*args))
    request = json.dumps({"source": str(source), "config": None, "out": str(tmp_path / "site"),
                          "cache": str(tmp_path / "cache")}) + "\n"
    replies = io.StringIO()
    rebuild.serve_requests(io.StringIO(request * 2), replies)
    # the second build (incremental, with search) changes no file: no page to put in place early
    assert [(r["written"], r["partial"]) for r in map(json.loads, replies.getvalue().splitlines())] == \
        [(True, False), (True, False)]
    assert given == [False, True]  # the second build took the first one's evaluation
    assert len(checked) == SIZE  # and its nodes: none was checked again


def test_content_hashes_are_taken_for_the_very_same_belief_objects(generated, tmp_path, monkeypatch):
    from site_builder import cache as cache_module
    from site_builder.config import SiteConfig
    from site_builder.model import Belief
    from site_builder.pipeline import Memory, build
    source = tmp_path / "network.json"
    shutil.copy(generated, source)
    _edit(source, lambda nodes: None)  # written as _edit writes it: the edit below moves no line
    config, memory = SiteConfig(source=str(source), search=False), Memory()
    assert build(config, tmp_path / "site", cache=tmp_path / "cache", memory=memory).written
    hashed = []
    real = cache_module._compared
    monkeypatch.setattr(cache_module, "_compared", lambda item: hashed.append(item) or real(item))
    _edit(source, _claim)
    assert build(config, tmp_path / "site", cache=tmp_path / "cache", memory=memory).written
    edited = _derived(json.loads(source.read_text(encoding="utf-8"))["nodes"])
    # only the edited one: its content, then what other beliefs' pages show of it (cache.shown)
    assert [b.id for b in hashed if isinstance(b, Belief)] == [edited, edited]
    one = next(iter(memory.texts.values()))[0]
    ctx = type("Ctx", (), {"evaluation": type("Ev", (), {"network": type("N", (), {"beliefs": {one.id: one}})})})
    assert cache_module.texts(ctx, {one.id: (one, "kept")}) == {one.id: "kept"}
    from dataclasses import replace
    assert cache_module.texts(ctx, {one.id: (replace(one), "kept")}) != {one.id: "kept"}  # equal is not enough


def test_a_process_building_again_takes_the_facts_of_unchanged_documents_it_holds(cli, generated, tmp_path,
                                                                                 monkeypatch):
    """serve's build process on a documents folder: the facts of the documents the last build
    read or parsed are neither decoded from the cache again (0.2 s at 10,000 documents) nor
    hashed again (they are the same objects); an edited document is parsed; the site is the
    one a cold build writes."""
    from site_builder import cache as cache_module
    from site_builder.config import with_overrides
    from site_builder.model import Belief
    from site_builder.pipeline import Memory, build
    from site_builder.rebuild import settings
    folder, site, cache = tmp_path / "beliefs", tmp_path / "site", tmp_path / "cache"
    assert cli("import", generated, "-o", folder)[0] == 0
    config, memory = with_overrides(settings(str(folder), None)[0], search=False), Memory()
    assert build(config, site, cache=cache, memory=memory).written  # parses every document
    decoded, hashed = [], []
    real_decode, real_compared = documents_cache.decode, cache_module._compared
    monkeypatch.setattr(documents_cache, "decode", lambda data: decoded.append(data) or real_decode(data))
    monkeypatch.setattr(cache_module, "_compared", lambda item: hashed.append(item) or real_compared(item))
    nodes = json.loads(generated.read_text("utf-8"))["nodes"]
    edited = folder / f"{_derived(nodes)}.md"
    claim = nodes[_derived(nodes)]["text"]
    edited.write_text(edited.read_text("utf-8").replace(claim, "Edited: " + claim, 1), encoding="utf-8")
    built = build(config, site, cache=cache, memory=memory)
    assert built.written and built.unparsed == SIZE - 1
    assert decoded == []
    assert [b.id for b in hashed if isinstance(b, Belief)] == [_derived(nodes)] * 2  # its content, what others show
    assert tree_digest(site) == _cold(cli, folder, tmp_path / "cold")
    assert build(config, site, cache=cache, memory=Memory()).written and decoded  # a new process decodes them


def test_a_process_building_again_takes_the_manifest_it_saved_while_the_file_is_the_one_it_wrote(
        generated, tmp_path, monkeypatch):
    """serve's build process: the manifest is neither read nor checked again; once another
    build has written the file, it is read (and checked) again. Each build is the cold one."""
    from site_builder.config import SiteConfig
    from site_builder.pipeline import Memory, build
    source, site, cache = tmp_path / "network.json", tmp_path / "site", tmp_path / "cache"
    shutil.copy(generated, source)
    config, memory = SiteConfig(source=str(source), search=False), Memory()
    assert build(config, site, cache=cache, memory=memory).written and memory.manifest is not None
    read, checked = [], []
    real_open, real_files = cache_module.Cache.open.__func__, cache_module._site_files

    def opened(cls, folder, saved=None):
        store = real_open(cls, folder, saved)
        read.append(store.saved is None)  # read from the file, not taken from memory
        return store

    monkeypatch.setattr(cache_module.Cache, "open", classmethod(opened))
    monkeypatch.setattr(cache_module, "_site_files", lambda old: checked.append(1) or real_files(old))
    def cold() -> dict[str, str]:
        shutil.rmtree(tmp_path / "cold", ignore_errors=True)
        assert build(config, tmp_path / "cold").written
        return tree_digest(tmp_path / "cold")

    for edit in (_claim, lambda nodes: nodes[sorted(nodes)[3]].update(text="Another claim.")):
        _edit(source, edit)
        built = build(config, site, cache=cache, memory=memory)
        assert built.written and built.reused > SIZE // 2
        assert tree_digest(site) == cold()
    assert read == [False, False] and checked == []
    _edit(source, lambda nodes: nodes[sorted(nodes)[4]].update(text="A third claim."))
    assert build(config, site, cache=cache).written  # another process: another Memory
    _edit(source, lambda nodes: nodes[sorted(nodes)[5]].update(text="A fourth claim."))
    built = build(config, site, cache=cache, memory=memory)
    assert built.written and built.reused > SIZE // 2
    assert read == [False, False, True, True] and checked == [1, 1]
    assert tree_digest(site) == cold()


def test_a_build_takes_the_evaluation_the_last_one_kept_while_nothing_it_reads_changed(
        cli, generated, tmp_path, monkeypatch):
    """A claim edit evaluates nothing (cache.kept_evaluation); a retraction evaluates again,
    and keeps that evaluation. Each build is the cold one."""
    source, site, cache = tmp_path / "network.json", tmp_path / "site", tmp_path / "cache"
    shutil.copy(generated, source)
    _build(cli, source, site, "--cache-dir", cache)
    assert (cache / cache_module.EVALUATION).is_file()
    evaluated = []
    monkeypatch.setattr(pipeline, "evaluate", lambda *a, real=pipeline.evaluate: evaluated.append(1) or real(*a))
    nodes = json.loads(source.read_text(encoding="utf-8"))["nodes"]
    busy = _busy_premise(nodes)
    for edit, count in ((_claim, 0), (_set(busy, "OUT"), 1), (_premise_claim, 0)):
        _edit(source, edit)
        _build(cli, source, site, "--cache-dir", cache)
        assert len(evaluated) == count
        assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
        evaluated.clear()
    # A process that keeps its last evaluation (serve's) keeps the one it made afresh on disk too.
    from site_builder.config import SiteConfig
    from site_builder.pipeline import Memory, build
    config, memory = SiteConfig(source=str(source), search=False), Memory()
    kept = (cache / cache_module.EVALUATION).read_bytes()
    for edit, again in ((_claim, False), (_set(busy, "IN"), True)):
        _edit(source, edit)
        assert build(config, site, cache=cache, memory=memory).written
        assert ((cache / cache_module.EVALUATION).read_bytes() != kept) == again


SAFE_CASES = ["a", "a/b", "a/b/", "belief/x/index.html", "a/.../b", "..a", "a..", "a/..b/c", "a/b..",
              ".", "./a", "a/./b", "", "/", "/a", "a//b", "a/../b", "..", "../a", "a/..", "a/../", "//",
              "a\nb", "a\n/b", "é/ü"]


def test_paths_checked_at_once_are_checked_as_one_by_one():
    """A manifest's 40,000 paths are checked in one text (write.all_safe_relative): each
    path, and every pair in either order, gets the answer `safe_relative` gives one by one."""
    from site_builder.write import all_safe_relative, safe_relative

    for path in SAFE_CASES:
        assert all_safe_relative([path]) == safe_relative(path), path
        for other in SAFE_CASES:
            assert all_safe_relative([path, other]) == (safe_relative(path) and safe_relative(other)), (path, other)
    assert all_safe_relative([])


def test_a_link_put_in_the_old_site_is_not_followed_into_the_new_one(tmp_path):
    """write._link (a kept file linked into a new folder): a symbolic link found in the old
    site is linked as a link, never what it points to (a file outside the site)."""
    from site_builder import write

    secret, old, new = tmp_path / "secret.txt", tmp_path / "old", tmp_path / "new"
    secret.write_text("outside")
    old.mkdir()
    new.mkdir()
    (old / "style.css").symlink_to(secret)
    write._link(str(old / "style.css"), str(new / "style.css"))
    assert (new / "style.css").is_symlink() and os.stat(new / "style.css", follow_symlinks=False).st_ino != secret.stat().st_ino


def _marked_processes(mark: str) -> list[int]:
    """Processes whose environment holds `mark` (a build and the workers it forked)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and mark.encode() in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:  # gone, or not ours to read
            continue
    return found


@pytest.fixture(scope="module")
def long_build(tmp_path_factory):
    """A network whose cold build takes seconds (time to stop it), its site built once, and
    a function starting that build again -> (process, the folder it renders into)."""
    root = tmp_path_factory.mktemp("long")
    network = root / "network.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), "3000", "-o", str(network)],
                   check=True, capture_output=True)
    site = root / "site"
    command = [sys.executable, "-m", "site_builder.cli", "build", str(network), "-o", str(site), "--no-search",
               "--no-cache", "-q"]
    subprocess.run(command, check=True, capture_output=True)

    def start(mark: str) -> tuple[subprocess.Popen, Path]:
        build = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env={**os.environ, "TEST_MARK": mark})
        deadline = time.monotonic() + 60
        while True:  # until it is rendering into its temporary folder
            rendering = [p for p in root.iterdir() if p.name.startswith(".site.new-") and any(p.glob("belief/*/index.html"))]
            if rendering:
                return build, rendering[0]
            assert build.poll() is None and time.monotonic() < deadline, "the build ended before it was stopped"
            time.sleep(0.005)
    return root, start


def _gone(mark: str) -> bool:
    deadline = time.monotonic() + 10
    while _marked_processes(mark) and time.monotonic() < deadline:  # workers end within parallel.PARENT_POLL
        time.sleep(0.05)
    return _marked_processes(mark) == []


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_sigterm_stops_a_build_like_ctrl_c_leaving_the_site_and_no_temporary_folder(long_build):
    """A cancelled CI job sends SIGTERM: the build exited 143 silently and left its
    `.site.new-*` folder beside the site."""
    root, start = long_build
    before = tree_digest(root / "site")
    mark = f"belief-site-test-{os.getpid()}-{time.monotonic_ns()}"
    build, _ = start(mark)
    build.send_signal(signal.SIGTERM)
    _, err = build.communicate(timeout=60)
    assert build.returncode == 143 and err.strip() == "belief-site: stopped (SIGTERM)", err
    assert sorted(p.name for p in root.iterdir()) == ["network.json", "site"]
    assert tree_digest(root / "site") == before and _gone(mark)


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="reads /proc")
def test_a_render_worker_killed_fails_the_build_with_a_diagnostic_not_a_traceback(long_build):
    """The kernel's OOM killer, say: BrokenProcessPool's traceback, and a worker sent SIGTERM
    made the build say it was stopped by SIGTERM."""
    root, start = long_build
    before = tree_digest(root / "site")
    mark = f"belief-site-test-{os.getpid()}-{time.monotonic_ns()}"
    build, _ = start(mark)
    workers = [p for p in _marked_processes(mark) if p != build.pid]
    assert workers, "no render worker"
    os.kill(workers[0], signal.SIGTERM)
    _, err = build.communicate(timeout=60)
    assert build.returncode == 1 and "Traceback" not in err, err
    assert "E806 a render worker ended abruptly (killed, or out of memory); nothing was written" in err
    assert sorted(p.name for p in root.iterdir()) == ["network.json", "site"]
    assert tree_digest(root / "site") == before and _gone(mark)
