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
         "--shared", "eem-expert", "--out", str(tmp_path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stdout + done.stderr

    lines = done.stdout.splitlines()
    header = next(line for line in lines if line.startswith("input"))
    for column in ("wall s", "ms/belief", "peak RSS MB", "indexer RSS MB", "indexer CPU s",
                   "mkdocs/ours", "full/floor"):
        assert column in header
    assert "CPUs" in lines[0] and "Python" in lines[0]

    report = json.loads((tmp_path / "bench.json").read_text())
    assert report["machine"]["cpus"] and report["machine"]["python"]
    runs = {(r["input"], r["run"]): r for r in report["rows"]}
    name = f"gen-{SIZE}"
    expected = {(name, "full"), (name, "floor"), (name, "mkdocs"), (name, "rebuild: 1 claim edited"),
                (name, "rebuild: premise retracted")}
    if shared is not None:
        expected |= {("eem-expert", "full"), ("eem-expert", "floor"), ("eem-expert", "mkdocs")}
    assert set(runs) == expected
    for row in runs.values():
        assert row["exit_code"] == 0 and row["wall_s"] > 0 and row["rss_mb"] > 0
        assert f"{row['wall_s']:.2f}" in done.stdout
    full = runs[(name, "full")]
    assert full["indexer_rss_mb"] > 0  # Pagefind ran as a child of the build and was measured
    assert full["vs_mkdocs"] > 0 and full["vs_floor"] > 0
    assert "full rebuild (no cache yet)" in runs[(name, "rebuild: premise retracted")]["note"]
    assert (tmp_path / "bench.txt").read_text().strip() in done.stdout
