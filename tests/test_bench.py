"""Smoke test of the benchmark (bench/run.py): a small run prints and writes the whole table."""

from __future__ import annotations

import json
import subprocess
import sys

from .conftest import ROOT, shared_dir

SIZE = 600  # bench/generate.py needs about 600 beliefs to fill its 20 levels


def test_quick_benchmark_prints_every_figure(tmp_path):
    shared = shared_dir()
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "run.py"), "--quick", "--sizes", str(SIZE),
         "--shared", "eem-expert", "--out", str(tmp_path), "--rounds", "2"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr

    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("input"))
    for column in ("wall s", "ms/belief", "CPU s", "sys s", "peak RSS MB", "indexer RSS MB", "indexer CPU s",
                   "mkdocs/ours", "full/floor"):
        assert column in header
    assert "CPUs" in lines[0] and "Python" in lines[0] and "page cache" in lines[0]
    assert "folders removed after the last run" in lines[0]
    assert not (tmp_path / "work" / ".removed").exists()  # set aside while measuring, removed at the end

    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["machine"]["cpus"] and report["machine"]["python"]
    assert report["removed_at_once"] == 0
    runs = {(r["input"], r["run"]): r for r in report["rows"]}
    name = f"gen-{SIZE}"
    edited = "rebuild: 1 claim edited (incremental, no search)"
    warm = "rebuild: 1 claim edited, page cache warm (incremental, no search)"
    tail = "rebuild: 1 claim edited past what other pages show (incremental, no search)"
    served = "rebuild in serve's build process: 1 claim edited (no search)"
    served_search = "rebuild in serve's build process: 1 claim edited (with search), pages in place"
    reindexed = "rebuild: 1 claim edited (incremental, with search)"
    expected = {(name, run) for run in (
        "full", "floor", "mkdocs", "full, no search", "full, no search, page cache warm", "rebuild base", edited,
        warm, tail, served, served_search,
        "rebuild: quiet premise retracted (incremental, no search)",
        "rebuild: premise retracted (incremental, no search)", "rebuild: premise retracted (cold, same site, no search)",
        reindexed, "documents: full, no search", "documents: rebuild base",
        "documents: 1 claim edited (incremental, no search)")}
    if shared is not None:
        expected |= {("eem-expert", "full"), ("eem-expert", "floor"), ("eem-expert", "mkdocs")}
    assert set(runs) == expected
    for row in runs.values():
        assert row["exit_code"] == 0 and row["wall_s"] > 0 and row["rss_mb"] > 0
        assert f"{row['wall_s']:.2f}" in done.stdout
    full = runs[(name, "full")]
    assert full["indexer_rss_mb"] > 0  # Pagefind ran as a child of the build and was measured
    # CPU: the build's own, its workers' and Pagefind's (all waited for), so more than Pagefind's
    assert full["cpu_s"] > full["indexer_cpu_s"] > 0 and 0 < full["sys_s"] < full["cpu_s"]
    assert runs[(name, "mkdocs")]["cpu_s"] > 0
    assert runs[(name, served)]["cpu_s"] is None  # that process ran the base build too
    full_line = next(line for line in lines if line.startswith(f"{name} ") and "  full  " in line)
    assert f"{full['ms_per_belief']:.2f} {full['cpu_s']:.2f} {full['sys_s']:.2f}" in " ".join(full_line.split())
    assert full["vs_mkdocs"] > 0 and full["vs_floor"] > 0
    assert full["raw"]["kept"] == 0  # cold (--no-cache)
    # Each timed comparison ran twice (--rounds 2): its row is the median round, the range noted.
    for run in ("full", "floor", "mkdocs", "full, no search", edited):
        row = runs[(name, run)]
        walls = row["raw"]["walls"]
        assert len(walls) == 2 and row["wall_s"] == max(walls)  # the upper median of two
        assert f"median of 2 rounds ({min(walls):.2f}-{max(walls):.2f} s)" in row["note"]
    assert len(runs[(name, "rebuild base")]["raw"].get("walls", [0])) == 1  # the rest run once
    for tag in ("full", "floor", "mkdocs", "nosearch", "rebuild-edit"):  # each round keeps its log
        assert (tmp_path / "work" / f"{name}-{tag}.log").is_file()
        assert (tmp_path / "work" / f"{name}-{tag}-round2.log").is_file()
    if shared is not None:
        assert len(runs[("eem-expert", "full")]["raw"]["walls"]) == 2
    # The claim edit's target ratio: its rounds ran in turn with the cold build's, each
    # round's ratio noted (a drift of the VM falls on both).
    logs = [tmp_path / "work" / f"{name}-{tag}.log" for tag in
            ("nosearch", "rebuild-edit", "nosearch-round2", "rebuild-edit-round2")]
    assert [p.stat().st_mtime_ns for p in logs] == sorted(p.stat().st_mtime_ns for p in logs)
    cold_walls, edit_walls = runs[(name, "full, no search")]["raw"]["walls"], runs[(name, edited)]["raw"]["walls"]
    paired = ", ".join(f"{c / e:.1f}x" for c, e in zip(cold_walls, edit_walls))
    assert f"per round {paired}" in runs[(name, edited)]["note"]

    # With --quick the rebuilds run at the first size: incremental, most pages kept.
    edit = runs[(name, edited)]
    assert edit["raw"]["kept"] > SIZE // 2, edit["note"]  # most pages linked, not rendered
    assert f"{edit['raw']['kept']}/{SIZE} pages kept" in edit["note"] and "cold no search / this = " in edit["note"]
    assert runs[(name, reindexed)]["indexer_cpu_s"] > 0  # the search re-index, measured apart
    assert runs[(name, "full, no search")]["indexer_rss_mb"] is None
    assert report["incremental"]["claim_edited_kept"] == edit["raw"]["kept"]
    assert report["incremental"]["claim_edited_speedup"] > 0
    assert runs[(name, warm)]["raw"]["kept"] > SIZE // 2 and report["incremental"]["claim_edited_warm_speedup"] > 0
    # the warm edit is compared with the cold build run warm too
    cold_warm = runs[(name, "full, no search, page cache warm")]
    assert cold_warm["raw"]["kept"] == 0 and "cold no search, warm / this = " in runs[(name, warm)]["note"]
    assert report["incremental"]["claim_edited_warm_speedup"] == cold_warm["wall_s"] / runs[(name, warm)]["wall_s"]
    assert "page cache warm: cold" in done.stdout
    assert runs[(name, tail)]["raw"]["kept"] == SIZE - 1  # only the edited belief's own page
    assert report["incremental"]["claim_tail_edited_kept"] == SIZE - 1 and "edited past what other pages show" in done.stdout
    serve = runs[(name, served)]  # the warm process: most pages kept
    assert serve["raw"]["kept"] > SIZE // 2 and "base build included" in serve["note"]
    assert report["incremental"]["serve_claim_edited_speedup"] > 0 and "in serve's build process" in done.stdout
    # with search: the pages are in place before the search bundle, both timed
    pages = runs[(name, served_search)]
    assert pages["raw"]["kept"] > SIZE // 2 and pages["raw"]["pages_s"] < pages["raw"]["search_s"]
    assert f"the search bundle followed at {pages['raw']['search_s']:.2f} s" in pages["note"]
    assert report["incremental"]["serve_search_pages_s"] == pages["wall_s"]
    assert "incremental rebuild at" in done.stdout and "target >= 10x" in done.stdout
    quiet = runs[(name, "rebuild: quiet premise retracted (incremental, no search)")]
    assert quiet["raw"]["kept"] > SIZE // 2 and "direct dependents" in quiet["note"]  # a flip that reaches few pages
    assert report["incremental"]["quiet_retracted_kept"] == quiet["raw"]["kept"] and "a quiet premise retracted" in done.stdout
    retract = runs[(name, "rebuild: premise retracted (incremental, no search)")]
    assert retract["raw"]["kept"] < quiet["raw"]["kept"]  # the busiest premise reaches more
    assert "cold into the same site / this = " in retract["note"]  # the fair comparison when few are kept
    assert report["incremental"]["premise_retracted_cold_same_site_s"] > 0
    # The same edit in a documents folder: only the edited document is parsed again.
    documents = runs[(name, "documents: 1 claim edited (incremental, no search)")]
    assert documents["raw"]["unparsed"] == SIZE - 1 and f"{SIZE - 1}/{SIZE} documents not parsed again" in documents["note"]
    assert documents["raw"]["unread"] == SIZE - 1 and f"({SIZE - 1} not read)" in documents["note"]  # nor read
    assert documents["raw"]["kept"] > SIZE // 2 and report["incremental"]["documents_edited_speedup"] > 0
    assert "as a documents folder: cold" in done.stdout

    # The full build at the rebuild size is profiled: seconds per stage, and their total.
    assert f"stages of the {name} full build" in done.stdout
    profile = full["raw"]["profile"]
    assert any(line.startswith("belief files") for line in profile)
    assert profile[-1].startswith("total") and all(line in done.stdout for line in profile)
    assert (tmp_path / "bench.txt").read_text().strip() in done.stdout


def _bench_module():
    import importlib.util
    sys.path.insert(0, str(ROOT / "bench"))  # for its own `import generate`
    try:
        spec = importlib.util.spec_from_file_location("belief_site_bench", ROOT / "bench" / "run.py")
        bench = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
        spec.loader.exec_module(bench)
    finally:
        sys.path.remove(str(ROOT / "bench"))
    return bench


def test_growth_takes_the_mean_of_the_small_size_run_before_and_after_the_big_one():
    """The VM drifts over a run: the 5k build runs again after the 50k one, and each size's
    wall is the mean of its runs."""
    bench = _bench_module()
    rows = [bench.Row("gen-5k", "full", 5000, 6.0, exit_code=0), bench.Row("gen-50k", "full", 50000, 70.0, exit_code=0),
            bench.Row("gen-5k again", "full", 5000, 8.0, exit_code=0),
            bench.Row("gen-5k", "mkdocs", 5000, 5.0, exit_code=0), bench.Row("gen-50k", "mkdocs", 50000, 55.0, exit_code=0),
            bench.Row("fan-50k", "full", 50000, 30.0, exit_code=0)]
    assert bench.growth(rows, 50000, 5000) == {"full": 10.0, "mkdocs": 11.0}


def test_a_run_without_the_shared_networks_says_so_and_where_it_looked(tmp_path, monkeypatch):
    """A clone made away from ../shared finds no shared networks: the report says where it
    looked and how to point it at them, rather than leave them out silently."""
    bench = _bench_module()
    monkeypatch.setenv("BELIEF_SHARED", str(tmp_path))
    assert bench.shared_networks() == []
    said = bench.missing_shared([])
    assert len(said) == 1 and str(tmp_path / "networks") in said[0] and "BELIEF_SHARED" in said[0]
    (tmp_path / "networks").mkdir()
    (tmp_path / "networks" / "team.json").write_text("{}")
    found = bench.shared_networks()
    assert found == [tmp_path / "networks" / "team.json"] and bench.missing_shared(found) == []


def test_a_row_is_the_median_round_and_a_failed_round_shows():
    bench = _bench_module()
    runs = [{"wall_s": w, "exit_code": 0, "kept": k} for w, k in ((9.0, 1), (7.0, 2), (8.0, 3))]
    runs[0]["profile"] = ["total 9.00 s"]
    chosen = bench.median_run(runs)
    assert chosen["wall_s"] == 8.0 and chosen["kept"] == 3 and chosen["walls"] == [9.0, 7.0, 8.0]
    assert chosen["profile"] == ["total 9.00 s"]  # the profiled round's stages are kept
    row = bench._row("gen-10k", "full", 10000, {**chosen, "killed": False, "wait4_rss_kb": 1, "self_rss_kb": 1})
    bench.rounds_note(row)
    assert row.note == "median of 3 rounds (7.00-9.00 s)"
    assert chosen["round"] == 3
    runs[2] = {"wall_s": 1.0, "exit_code": 1, "kept": 0}
    failed = bench.median_run(runs)
    assert failed["exit_code"] == 1 and failed["round"] == 3  # never hidden behind a median
    row = bench._row("gen-10k", "full", 10000, {**failed, "killed": False, "wait4_rss_kb": 1, "self_rss_kb": 1})
    bench.rounds_note(row)
    assert row.note == "round 3 of 3; FAILED (exit 1, see log)"  # whose log: each round keeps its own
    assert [bench._tag("gen-10k-full", k) for k in range(3)] == \
        ["gen-10k-full", "gen-10k-full-round2", "gen-10k-full-round3"]
    one = bench.median_run(runs[:1])
    row = bench._row("gen-50k", "full", 50000, {**one, "killed": False, "wait4_rss_kb": 1, "self_rss_kb": 1})
    bench.rounds_note(row)
    assert row.note == ""  # one round: no range


def _site(folder):
    (folder / "belief").mkdir(parents=True)
    (folder / "belief" / "index.html").write_text("x")
    return folder


def test_finished_runs_are_set_aside_and_removed_at_the_end_unless_the_disk_runs_short(tmp_path, monkeypatch):
    """Files freed on the benchmark disk slow the creation of files for minutes after: no run
    follows a removal (see "Dropping the cache" in bench/run.py)."""
    bench = _bench_module()
    aside = bench.Aside(tmp_path / ".removed")
    first, second = _site(tmp_path / "a-site"), _site(tmp_path / "b-site")
    (tmp_path / "a.log").write_text("log")
    aside.remove(first)
    aside.remove(tmp_path / "a.log")  # a file: removed at once
    aside.remove(tmp_path / "missing")  # nothing there: nothing to do
    assert not first.exists() and not (tmp_path / "a.log").exists()
    assert (tmp_path / ".removed" / "1" / "belief" / "index.html").is_file()  # moved, not removed
    monkeypatch.setattr(bench, "RESERVE_GB", 10**9)  # the disk runs short: empty what was set aside first
    aside.remove(second)
    assert aside.early == 1 and not (tmp_path / ".removed" / "1").exists()
    assert (tmp_path / ".removed" / "2" / "belief").is_dir()
    aside.empty()
    assert not (tmp_path / ".removed").exists()
