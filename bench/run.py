"""Build benchmark (issue 7): belief-site against `mkdocs build` on the same beliefs, in one run.

    python bench/run.py [--sizes 1000,5000,10000,50000] [--quick] [--out DIR] [--skip-mkdocs]
                        [--chain N] [--fan N] [--rebuild-size N] [--shared NAMES] [--seed S] [--keep]
                        [--no-drop-caches] [--rounds N]

Inputs: seeded generated networks of each size (bench/generate.py), the shared real networks
($BELIEF_SHARED/networks or ../shared/networks), a chain and a fan. For each input:

- full:    `belief-site build NETWORK -o DIR --no-cache` (diagrams, search, exports: the whole
           site), cold, into a fresh folder, in its own process. At the rebuild size it also
           runs with `--profile`; its seconds per stage are printed below the table.
- floor:   the least a site needs, with the build's own machinery: check -> context -> the
           belief files (page, index.json, badges: render.belief through parallel.renderer,
           default_jobs() workers writing through write_site's sink), with no diagrams
           (ctx.diagrams holds "" for every id), no search, no listings, exports or assets.
- mkdocs:  `mkdocs build` on a temporary MkDocs project holding the same beliefs as one Markdown
           page each (title = id, status, claim, antecedent links), theme `mkdocs`, default search
           plugin, `nav: [index.md]` (belief pages not in the nav), no diagrams. Writing the
           Markdown files is not timed.
- rebuilds (one size, default 10k), all but the last without search: a base build filling
           a cache (`--cache-dir`, row "rebuild base"); a cold build (`--no-search --no-cache`,
           row "full, no search") and, in turn with it, into the base's site with its cache, an
           incremental build after editing one belief's claim; the cold build again with the
           page cache as the last edit left it (the baseline of the warm edit below); that
           edit again with the page cache as that build left it (every other run starts with it dropped: see
           below; an edit-and-build loop finds modules, cache and site in memory), the same edit built by
           serve's build process, warm, after it built the network once: only that request is
           timed, as serve's rebuild after a save), then one after also retracting a quiet
           premise (the fewest direct dependents from QUIET up), and one after also retracting
           the premise with the most dependents (truth_value OUT). Their notes give the cold /
           incremental ratio (target: at least 10x) and the belief pages kept (from the build's
           last line). The busy retraction keeps few pages (under 70%: the kept files are linked
           into a new folder swapped in, pipeline._swap_is_quicker), so it is also compared with a cold
           build of the retracted network into the same site (which replaces the old tree as
           well; the first cold build wrote into an empty folder). The search re-index is measured apart:
           a base build with search and its own cache, then the claim edit with search; that
           row's indexer CPU is the re-index. The same network is also imported as a documents
           folder (one Markdown file per belief, not timed), and built cold, as a base filling a
           cache, and after editing one document's claim ("documents:" rows): the cache keeps
           parsed documents, which network.json, one file, cannot use, and unchanged documents
           are not even read (their note says how many).

Rounds: at sizes up to 10k (ROUNDS_UP_TO), full, floor and mkdocs run 3 times in turn
(`--rounds N`; `--quick`: once), and so do the rebuilds' cold build without search and the
claim edit, also in turn (each round edits the claim again; the edit's note gives each
round's ratio); each row is the median round by wall time, and its note gives the range.
Single runs swung the ratios by 5-15% on this shared VM.

Linear growth compares the 50k build with the 5k one, which runs twice: in size order, and
again right after the 50k runs ("gen-5k again"); each size's wall is the mean of its runs.
The benchmark VM is shared and drifts over a run (one run here: MkDocs alone took 11.6x as
long at 50k as at 5k, 10.1x in another), and the 50k runs come minutes after the first 5k.

How it measures: every measured run is a separate process started from here; wall time is
taken around it (interpreter start and imports included, as for mkdocs). Peak memory is each
process's own VmHWM (/proc/self/status), read by a small wrapper that runs the CLI (or mkdocs)
in-process. Not ru_maxrss: Linux carries the parent's high-water mark into a child across exec,
so wait4/getrusage figures of a process spawned from a big parent are at least that parent's
peak (the first version of this script reported the build's own RSS for Pagefind that way).
The search indexer (Pagefind, a child of the build) is started through a proxy (named by
PAGEFIND_BINARY_PATH, so the measured process imports nothing the build would not), a fresh small
Python process that os.wait4s it: its ru_maxrss is Pagefind's own peak (floor ~10 MB, the
proxy) and its utime+stime Pagefind's CPU. The build and Pagefind overlap in time, so the peak
of the whole tree is at most their sum.

Before every measured run (ours and mkdocs alike) the last run's files are written back
(`sync`: no run pays for another's writes, the "page cache warm" ones included), and the page
cache is dropped (3 into /proc/sys/vm/drop_caches) when that file is writable, i.e. as root
(`--no-drop-caches` turns that off), except in the "page cache warm" runs. Why: the
benchmark VM's disk is ext4 without a journal, where creating a file skips every inode freed
in the last minute or more whose inode-table block is still cached (the kernel's
`recently_deleted` check, one buffer lookup per skipped inode: perf shows it). Right after a
large site was removed, creating 40,000 small files took 10-12 s of system time, against
0.6-0.8 s on a clean disk or after `sync` and dropping the cache, which evicts those blocks.
Without it, runs that follow a removal look several times slower. The same disk is mounted
with `discard`: removing files that are already on disk waits on the device, which is why the
build removes an old site's folders 8 at a time (write.remove_tree). The header line says
whether caches were dropped.

Dropping the cache is not enough: a run's own writes read those inode-table blocks back (and
dirty them, which stretches "recent" to 6 minutes), so a build that follows a removal still
pays for it, unevenly (10k beliefs, no search, into an empty folder, caches dropped: 7.6 s
with nothing removed in the last 6 minutes, 7.9 s and 10.1 s right after a 40,000-file site
was removed). So the benchmark removes nothing while it measures: a finished run's folders
are moved aside (renamed into OUT/work/.removed) and removed after the last run, unless the
disk's free space falls under RESERVE_GB, when they are removed at once (the header line says
how often). Rebuilds into the same site keep their own removals: the build makes them, as it
would for a user. A benchmark started within minutes of a large removal (the end of another
run of it, say) still pays for that one in its first runs (10k full: 11.9 s against 9.4 s).

belief-site's own modules are compiled to bytecode before the first run, as pip does when it
installs a package (MkDocs and every library were compiled that way). An editable install in an
environment with PYTHONDONTWRITEBYTECODE set, as on the benchmark VM, would otherwise compile
them again in every measured process (about 0.08 s each).

`--quick` runs the first size only (1k unless --sizes says otherwise, the rebuilds and the
profile at that size too) and the real networks, without chain and fan: the smoke test and CI
use it. The table is printed and written, with the raw figures, to OUT/bench.txt and
OUT/bench.json.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from functools import cache
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import generate as gen  # noqa: E402
from site_builder.processes import held_by_running  # noqa: E402

TIMEOUT = 3600
"""Seconds one measured process may take before it is killed (and reported as such)."""

DROP_CACHES = Path("/proc/sys/vm/drop_caches")
drop_caches = False
"""Drop the page cache before each measured run (set by main: root, and no --no-drop-caches)."""

RESERVE_GB = 20
"""Free space (GB) under which folders moved aside are removed at once (see "Dropping the cache")."""


class Aside:
    """Folders a run is done with, moved aside to be removed after the last run."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder
        self.count = 0
        self.early = 0  # times the disk ran short and they were removed at once

    def remove(self, path: Path) -> None:
        if not path.is_dir():
            path.unlink(missing_ok=True)
            return
        if self.folder is None:
            shutil.rmtree(path, ignore_errors=True)
            return
        if shutil.disk_usage(path).free < RESERVE_GB * 10**9:
            self.early += 1
            self.empty()
        self.folder.mkdir(exist_ok=True)
        self.count += 1
        path.rename(self.folder / str(self.count))

    def empty(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


aside = Aside()
"""Set by main to move folders into OUT/work/.removed."""

# Peak RSS of the current process: VmHWM of its own address space. Not getrusage(RUSAGE_SELF):
# on Linux exec keeps the parent's high-water mark in ru_maxrss (the signal struct's maxrss is
# raised to the old mm's hiwater at exec), so a process spawned from a big parent reports at
# least the parent's peak. VmHWM belongs to the new mm and starts at zero.
_HWM = """\
def _hwm_kb():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
"""

# Pagefind runs through this proxy (a small fresh Python process), which waits for it with
# os.wait4: ru_maxrss of that child is Pagefind's own peak (at least the proxy's ~10 MB). The
# build finds it through PAGEFIND_BINARY_PATH (pagefind.service.get_executable honours it), so
# the measured process imports nothing the build would not: importing pagefind.service to patch
# it cost every run 60-70 ms with the page cache dropped, builds without search included.
_PROXY = """\
import json, os, subprocess, sys
proc = subprocess.Popen([{real!r}, *sys.argv[1:]])
_, status, usage = os.wait4(proc.pid, 0)
with open(os.environ["BELIEF_BENCH_INDEXER"], "a") as out:
    out.write(json.dumps({{"rss_kb": usage.ru_maxrss, "cpu_s": usage.ru_utime + usage.ru_stime}}) + "\\n")
sys.exit(os.waitstatus_to_exitcode(status))
"""

# Runs the CLI in this process, then records its peak and the indexer's (written by the proxy).
_BUILD = _HWM + """\
import json, os, sys
stats = sys.argv[1]
sys.argv = ["belief-site", *sys.argv[2:]]
indexer = os.environ["BELIEF_BENCH_INDEXER"]
if os.path.exists(indexer):
    os.remove(indexer)
from site_builder.cli import leave, main
from site_builder.progress import process_started
code = main(started=process_started())  # as the console script: --profile shows the start
runs = [json.loads(l) for l in open(indexer)] if os.path.exists(indexer) else []
with open(stats, "w") as out:
    json.dump({"self_rss_kb": _hwm_kb(), "child_rss_kb": max([r["rss_kb"] for r in runs] or [0]),
               "child_cpu_s": sum(r["cpu_s"] for r in runs), "indexer_runs": len(runs)}, out)
leave(code)  # as the console script ends
"""

# mkdocs build in this process (as its console script does), then its own peak.
_MKDOCS = _HWM + """\
import atexit, json, runpy, sys
stats = sys.argv[1]
sys.argv = ["mkdocs", *sys.argv[2:]]
def record():
    with open(stats, "w") as out:
        json.dump({"self_rss_kb": _hwm_kb()}, out)
atexit.register(record)
runpy.run_module("mkdocs", run_name="__main__", alter_sys=True)
"""

# The floor: the full build's worker pool and writer, only the belief files, no diagrams
# (an empty diagram per id: belief_outputs then draws none) and no search.
_FLOOR = _HWM + """\
import json, sys
from dataclasses import replace
from pathlib import Path
stats, source, out = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
from site_builder.config import SiteConfig
from site_builder.pipeline import check, _context
from site_builder.render import pages, parallel
from site_builder.write import write_site
config = SiteConfig(source=str(source), search=False)
checked = check(source, config.panel_max_items)
ctx = _context(checked, config, source)
ctx = replace(ctx, diagrams={i: "" for i in ctx.visible})
env, counts = pages.environment(ctx), pages.site_counts(ctx)
def belief_files(sink):
    with parallel.renderer(ctx, env, counts, parallel.default_jobs(), sink) as workers:
        for outputs in workers.beliefs(ctx.shown()):
            yield from outputs.files
written, problems = write_site(belief_files, out)
count = len(written)
with open(stats, "w") as f:
    json.dump({"self_rss_kb": _hwm_kb(), "child_rss_kb": 0, "child_cpu_s": 0.0, "files": count}, f)
sys.exit(1 if problems else 0)
"""


# serve's rebuild: its build process (site_builder.rebuild, warm: it stays up between builds)
# builds the network once, filling its cache; then the edited network is copied over the
# source and built again by the same process. Only that request is timed: until its pages
# are in place (with search, the early reply: Pagefind indexes after it) and until its
# reply; peak RSS is the build process's VmHWM.
_SERVE = """\
import json, os, shutil, sys, time
from pathlib import Path
stats, source, edited, out, cache, drop, search = sys.argv[1:8]
from site_builder.rebuild import Rebuilder
config = Path(stats).with_suffix(".yml")
config.write_text(f"plugins:\\n  - beliefs:\\n      search: {search}\\n")
builds = Rebuilder()
first = builds.build(source, str(config), Path(out), Path(cache))
shutil.copyfile(edited, source)
os.sync()
if drop == "1":
    Path("/proc/sys/vm/drop_caches").write_text("3\\n")
pages = []
started = time.perf_counter()
again = builds.build(source, str(config), Path(out), Path(cache),
                     lambda early: pages.append(time.perf_counter() - started))
wall = time.perf_counter() - started
hwm = [int(l.split()[1]) for l in open(f"/proc/{builds.pid}/status") if l.startswith("VmHWM:")]
builds.stop()
print(again.crash or "", file=sys.stderr)
with open(stats, "w") as f:
    json.dump({"rebuild_wall_s": wall, "pages_s": pages[0] if pages else wall, "self_rss_kb": hwm[0] if hwm else 0,
               "kept": again.reused}, f)
sys.exit(0 if first.written and again.written else 1)
"""


@dataclass
class Row:
    input: str
    run: str
    beliefs: int
    wall_s: float | None = None
    rss_mb: float | None = None
    """Peak RSS of the measured process itself (the Python build, or mkdocs)."""
    indexer_rss_mb: float | None = None
    """Peak RSS of the search indexer (Pagefind, a child of the build), when there is one."""
    indexer_cpu_s: float | None = None
    cpu_s: float | None = None
    """User + system seconds of the measured process and of those it waited for (its workers,
    Pagefind): against wall, how many cores the run had; None for serve's rows, whose
    process also ran the base build."""
    sys_s: float | None = None
    """The system part of cpu_s (file creation, page faults): what a slow disk adds shows here,
    not in the code's own time."""
    exit_code: int | None = None
    note: str = ""
    vs_mkdocs: float | None = None
    """mkdocs wall / this wall (above 1: faster than mkdocs)."""
    vs_floor: float | None = None
    """this wall / floor wall."""
    extra: dict = field(default_factory=dict)

    @property
    def ms_per_belief(self) -> float | None:
        return None if self.wall_s is None or not self.beliefs else self.wall_s * 1000 / self.beliefs


def _measure(cmd: list[str], cwd: Path, log: Path, stats: Path | None = None, drop: bool = True,
             extra_env: Mapping[str, str] | None = None) -> dict:
    """Run cmd; wall seconds, exit code and wait4 rusage, plus the wrapper's stats when given;
    `drop=False`: with the page cache as the last run left it."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           **(extra_env or {})}
    if stats is not None:
        stats.unlink(missing_ok=True)
    # No run pays for writing back the last one's files (a warm run, whose page cache stays as
    # the last run left it, too). Dropping the cache evicts the cached inode-table blocks of
    # recently freed inodes, which file creation would otherwise step over one by one (see
    # "Before every measured run" above); a full page cache as such did not slow it (2 GB
    # read into it, then 20,000 files created: as fast as with it empty).
    os.sync()
    if drop_caches and drop:
        DROP_CACHES.write_text("3\n")
    with open(log, "wb") as out:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            proc.kill()

        timer = threading.Timer(TIMEOUT, kill)
        timer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    # wait4's ru_maxrss is kept only as raw data: it includes this process's high-water mark
    # (inherited through exec), so the wrappers' VmHWM figures are the ones reported.
    found = {"wall_s": wall, "exit_code": proc.returncode, "wait4_rss_kb": usage.ru_maxrss,
             "killed": killed.is_set(), "cpu_s": usage.ru_utime + usage.ru_stime, "sys_s": usage.ru_stime}
    if stats is not None and stats.is_file():
        try:
            found.update(json.loads(stats.read_text()))
        except ValueError:  # the wrapper died writing it: the row shows the exit code
            pass
    return found


def _row(name: str, run: str, n: int, m: dict, indexer: bool = False) -> Row:
    row = Row(name, run, n, wall_s=m["wall_s"], exit_code=m["exit_code"], extra=m)
    self_kb = m.get("self_rss_kb", m["wait4_rss_kb"])
    row.rss_mb = self_kb / 1024
    row.cpu_s, row.sys_s = m.get("cpu_s"), m.get("sys_s")
    if indexer and m.get("child_rss_kb"):
        row.indexer_rss_mb = m["child_rss_kb"] / 1024
        row.indexer_cpu_s = m["child_cpu_s"]
    notes = []
    if m["killed"]:
        notes.append(f"killed after {TIMEOUT} s")
    elif m["exit_code"] != 0:
        notes.append(f"FAILED (exit {m['exit_code']}, see log)")
    if "self_rss_kb" not in m:
        notes.append("RSS from wait4 (no VmHWM)")
    row.note = "; ".join(notes)
    return row


@cache
def _proxy(work: Path) -> Path | None:
    """The proxy that runs Pagefind (written once per benchmark), or None when Pagefind is not
    installed (the build then says so)."""
    try:
        from pagefind.service import get_executable
    except ImportError:
        return None
    real = get_executable()
    if real is None:
        return None
    proxy = work / "pagefind-proxy.py"
    proxy.write_text(f"#!{sys.executable}\n" + _PROXY.format(real=str(real)))
    proxy.chmod(0o755)
    return proxy


def _indexer_env(work: Path, stats: Path) -> dict[str, str]:
    """The environment that makes the build run Pagefind through the proxy, which adds its
    peak and CPU to `stats`.indexer."""
    proxy = _proxy(work)
    return {"BELIEF_BENCH_INDEXER": f"{stats}.indexer", **({"PAGEFIND_BINARY_PATH": str(proxy)} if proxy else {})}


def build(network: Path, out: Path, work: Path, tag: str, *flags: str, drop: bool = True) -> dict:
    """One `belief-site build` (not -q: its last line counts the pages an incremental build kept)."""
    stats, log = work / f"{tag}.stats.json", work / f"{tag}.log"
    cmd = [sys.executable, "-c", _BUILD, str(stats), "build", str(network), "-o", str(out), *flags]
    found = _measure(cmd, work, log, stats, drop, _indexer_env(work, stats))
    _removed(out)
    return {**found, **from_log(log.read_text(encoding="utf-8", errors="replace"), "--profile" in flags)}


def _removed(out: Path, limit: float = 600) -> None:
    """Wait until the sites a build replaced at `out` are gone: a build leaves that to a
    process of its own (write._discard: the folder is named after it), which must not run
    into the next measurement. A folder whose process has ended is left for the next build."""
    deadline = time.monotonic() + limit
    while held_by_running(out.parent, f".{out.name}.old-"):
        if time.monotonic() > deadline:
            _log(f"{out}: the replaced site is still being removed after {limit:.0f} s; going on")
            return
        time.sleep(0.1)


_KEPT = re.compile(r"(\d+) unchanged belief pages? kept")
_UNPARSED = re.compile(r"(\d+) unchanged documents not parsed again")
_UNREAD = re.compile(r"\((\d+) not read\)")
_STAGE = re.compile(r"^(\S.*?)\s+(\d+\.\d+) s(?:\s+\d+\.\d%)?$")  # progress.Stages.report lines


def from_log(text: str, profile: bool) -> dict:
    """Pages kept from the previous site (0 for a cold build) and, with --profile, the stages."""
    kept, unparsed, unread = _KEPT.search(text), _UNPARSED.search(text), _UNREAD.search(text)
    found: dict = {"kept": int(kept.group(1)) if kept else 0,
                   "unparsed": int(unparsed.group(1)) if unparsed else 0,
                   "unread": int(unread.group(1)) if unread else 0}
    if profile:
        lines = [line for line in text.splitlines() if _STAGE.match(line)]
        found["profile"] = lines
        found["stages"] = {m[1]: float(m[2]) for m in map(_STAGE.match, lines)}
    return found


def floor(network: Path, out: Path, work: Path, tag: str) -> dict:
    stats = work / f"{tag}.stats.json"
    cmd = [sys.executable, "-c", _FLOOR, str(stats), str(network), str(out)]
    return _measure(cmd, work, work / f"{tag}.log", stats)


# --- the MkDocs baseline ---------------------------------------------------------------------

def _md_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


def mkdocs_project(network: Path, folder: Path) -> int:
    """A MkDocs project with one page per belief (not in the nav); returns the belief count."""
    data = json.loads(network.read_text(encoding="utf-8"))
    nodes = data["nodes"]
    docs = folder / "docs"
    (docs / "belief").mkdir(parents=True)
    (folder / "mkdocs.yml").write_text(
        "site_name: baseline\nuse_directory_urls: true\n"
        "theme:\n  name: mkdocs\n  highlightjs: false\n"
        "plugins:\n  - search\nnav:\n  - index.md\n", encoding="utf-8")
    (docs / "index.md").write_text(f"# Beliefs\n\n{len(nodes)} beliefs.\n", encoding="utf-8")
    for belief_id, node in nodes.items():
        lines = [f"# {belief_id}", "", f"**Status:** {node.get('truth_value', 'IN')}", "",
                 node.get("text", ""), ""]
        for just in node.get("justifications", ()):
            ants = ", ".join(f"[{a}]({a}.md)" for a in just.get("antecedents", ()))
            outs = ", ".join(f"[{a}]({a}.md)" for a in just.get("outlist", ()))
            lines.append(f"- {just.get('type', 'SL')}: {ants or '(none)'}"
                         + (f"; unless {outs}" if outs else ""))
        (docs / "belief" / f"{belief_id}.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(nodes)


def mkdocs_build(network: Path, work: Path, tag: str) -> dict:
    project = work / f"{tag}-mkdocs"
    aside.remove(project)
    mkdocs_project(network, project)  # not timed
    stats = work / f"{tag}.stats.json"
    cmd = [sys.executable, "-c", _MKDOCS, str(stats), "build", "-q", "-f", str(project / "mkdocs.yml"),
           "-d", str(project / "site")]
    found = _measure(cmd, project, work / f"{tag}.log", stats)
    aside.remove(project)
    return found


# --- inputs and edits -------------------------------------------------------------------------

def shared_folder() -> Path:
    """Where the shared real networks are: $BELIEF_SHARED/networks, else ../shared/networks
    beside the repository (not there for a clone made elsewhere: set BELIEF_SHARED)."""
    return Path(os.environ.get("BELIEF_SHARED", ROOT.parent / "shared")) / "networks"


def shared_networks() -> list[Path]:
    base = shared_folder()
    return sorted(base.glob("*.json")) if base.is_dir() else []


def missing_shared(shared: list[Path]) -> list[str]:
    """The report's word on the shared networks when none was found (a clone made away from
    ../shared): a table without them must not pass for a whole run."""
    if shared:
        return []
    return [f"no shared real networks: none in {shared_folder()} (set BELIEF_SHARED to the folder holding networks/)"]


def _label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 and n >= 1000 else str(n)


EDIT = "Edited for the rebuild benchmark."


def edited_claim(network: Path, target: Path, tail: bool = False) -> str:
    """Edit the claim of the middle belief: at its start, which the pages of its neighbours
    show beside their links to it and in their diagrams, so those pages are rendered again;
    or (`tail`) at its end, past the 200 characters they show (render.views.CLAIM_ECHO), so
    only its own page is: then the middle one of the beliefs with longer claims."""
    data = json.loads(network.read_text(encoding="utf-8"))
    ids = sorted(i for i, n in data["nodes"].items() if not tail or len(n["text"]) > 250) or sorted(data["nodes"])
    belief_id = ids[len(ids) // 2]
    node = data["nodes"][belief_id]
    node["text"] = f"{node['text']} {EDIT}" if tail else f"{EDIT} {node['text']}"
    target.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return belief_id


QUIET = 3
"""Direct dependents of the premise the quiet retraction takes (the fewest from this many up)."""


def retracted_premise(network: Path, target: Path, quiet: bool = False) -> tuple[str, int]:
    """Set the premise with the most (direct) dependents OUT, or (`quiet`) one with few, the
    fewest from QUIET up; (its id, that count)."""
    data = json.loads(network.read_text(encoding="utf-8"))
    nodes = data["nodes"]
    cited: dict[str, int] = {}
    for node in nodes.values():
        for ant in {a for j in node.get("justifications", ()) for a in j.get("antecedents", ())}:
            cited[ant] = cited.get(ant, 0) + 1
    premises = [i for i, n in nodes.items() if not n.get("justifications") and n.get("truth_value") == "IN"]
    if quiet:
        chosen = min((i for i in premises if cited.get(i, 0) >= QUIET), key=lambda i: (cited[i], i))
    else:
        chosen = max(premises, key=lambda i: (cited.get(i, 0), i))
    nodes[chosen]["truth_value"] = "OUT"
    target.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")
    return chosen, cited.get(chosen, 0)


# --- the run ----------------------------------------------------------------------------------

def _log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


ROUNDS = 3
"""Rounds of each timed comparison at sizes up to ROUNDS_UP_TO (see "Rounds" above)."""
ROUNDS_UP_TO = 10_000


def median_run(runs: list[dict]) -> dict:
    """The round to report: the median by wall time (the first failed round, if any: it must
    show), with every round's wall in `walls`, which round it is (`round`, from 1) and the
    first round's --profile stages."""
    failed = [k for k, m in enumerate(runs) if m["exit_code"] != 0]
    k = failed[0] if failed else sorted(range(len(runs)), key=lambda i: runs[i]["wall_s"])[len(runs) // 2]
    profiled = {key: runs[0][key] for key in ("profile", "stages") if key in runs[0]}
    return {**runs[k], **profiled, "walls": [m["wall_s"] for m in runs], "round": k + 1}


def rounds_note(row: Row) -> None:
    walls = row.extra.get("walls", [])
    if len(walls) < 2:
        return
    if row.exit_code != 0:
        _note(row, f"round {row.extra['round']} of {len(walls)}")
    else:
        _note(row, f"median of {len(walls)} rounds ({min(walls):.2f}-{max(walls):.2f} s)")


def _rounds(n: int, rounds: int) -> int:
    return rounds if n <= ROUNDS_UP_TO else 1


def _tag(tag: str, k: int) -> str:
    """Round k's name for its log, stats and folders (the first round's as before)."""
    return tag if k == 0 else f"{tag}-round{k + 1}"


def run_input(name: str, network: Path, n: int, work: Path, rows: list[Row], skip_mkdocs: bool,
              with_floor: bool = True, with_mkdocs: bool = True, keep: bool = False,
              profile: bool = False, rounds: int = 1) -> None:
    """full, floor and mkdocs on one input: `rounds` times in turn (at sizes up to
    ROUNDS_UP_TO), each row the median round."""
    runs: dict[str, list[dict]] = {"full": [], "floor": [], "mkdocs": []}
    for k in range(_rounds(n, rounds)):
        site = work / f"{_tag(name, k)}-site"
        _log(f"{name}: full build ({n} beliefs), round {k + 1}")
        flags = ("--no-cache", "--profile") if profile and k == 0 else ("--no-cache",)
        runs["full"].append(build(network, site, work, _tag(f"{name}-full", k), *flags))
        if not keep:
            aside.remove(site)
        if with_floor:
            _log(f"{name}: floor, round {k + 1}")
            folder = work / _tag(f"{name}-floor", k)
            runs["floor"].append(floor(network, folder, work, _tag(f"{name}-floor", k)))
            aside.remove(folder)
        if with_mkdocs and not skip_mkdocs:
            _log(f"{name}: mkdocs build, round {k + 1}")
            runs["mkdocs"].append(mkdocs_build(network, work, _tag(f"{name}-mkdocs", k)))
    found = {run: _row(name, run, n, median_run(ms), indexer=run == "full") for run, ms in runs.items() if ms}
    for row in found.values():
        rounds_note(row)
        rows.append(row)
    full, fl, mk = found["full"], found.get("floor"), found.get("mkdocs")
    if fl is not None and fl.exit_code == 0 and full.exit_code == 0:
        full.vs_floor = full.wall_s / fl.wall_s
    if mk is not None and mk.exit_code == 0:
        for r in (full, fl):
            if r is not None and r.exit_code == 0:
                r.vs_mkdocs = mk.wall_s / r.wall_s


EDITED = "rebuild: 1 claim edited (incremental, no search)"
COLD_WARM = "full, no search, page cache warm"
EDITED_WARM = "rebuild: 1 claim edited, page cache warm (incremental, no search)"
EDITED_TAIL = "rebuild: 1 claim edited past what other pages show (incremental, no search)"
SERVED = "rebuild in serve's build process: 1 claim edited (no search)"
SERVED_SEARCH = "rebuild in serve's build process: 1 claim edited (with search), pages in place"
QUIETLY_RETRACTED = "rebuild: quiet premise retracted (incremental, no search)"
RETRACTED = "rebuild: premise retracted (incremental, no search)"
RETRACTED_COLD = "rebuild: premise retracted (cold, same site, no search)"
REINDEXED = "rebuild: 1 claim edited (incremental, with search)"
DOCS_COLD = "documents: full, no search"
DOCS_BASE = "documents: rebuild base"
DOCS_EDITED = "documents: 1 claim edited (incremental, no search)"


def _note(row: Row, *parts: str) -> None:
    row.note = "; ".join(filter(None, [*parts, row.note]))


def _speedup(cold: Row, row: Row) -> float | None:
    return cold.wall_s / row.wall_s if cold.exit_code == 0 and row.exit_code == 0 else None


def _incremental(rows: list[Row], cold: Row, run: str, m: dict, indexer: bool = False,
                 baseline: str = "cold no search") -> Row:
    """A row of an incremental build, noting its speed-up over the cold one (`baseline`) and the pages kept."""
    row = _row(cold.input, run, cold.beliefs, m, indexer)
    ratio = _speedup(cold, row)
    _note(row, "" if ratio is None else f"{baseline} / this = {ratio:.1f}x", f"{m['kept']}/{cold.beliefs} pages kept")
    rows.append(row)
    return row


def run_rebuilds(name: str, network: Path, n: int, work: Path, rows: list[Row], rounds: int = 1) -> dict:
    """Cold and incremental rebuilds at one size; returns their summary for the report. The
    cold build without search and the claim edit, whose ratio is a target, run `rounds`
    times (at sizes up to ROUNDS_UP_TO; each round edits the claim again), rows the median.

    Each cache's network is edited in place: the cache's salt holds the config, source path
    included, so a copy under another name would be a cold build."""
    source, searched = work / f"{name}-rebuild.json", work / f"{name}-rebuild-search.json"
    site, search_site = work / f"{name}-rebuild-site", work / f"{name}-rebuild-search-site"
    cache, search_cache = work / f"{name}-cache", work / f"{name}-search-cache"
    for path in (site, search_site, cache, search_cache):
        aside.remove(path)
    shutil.copyfile(network, source)
    shutil.copyfile(network, searched)
    cached = ("--no-search", "--cache-dir", str(cache))
    _log(f"{name}: base build filling the cache")
    base = _row(name, "rebuild base", n, build(source, site, work, f"{name}-rebuild-base", *cached))
    _note(base, "cold, fills the cache of the rebuilds below")
    # The claim edit's ratio is a target: each round runs the cold build and the edit side by
    # side, so that a drift of the VM's speed (a fifth within minutes, see "Rounds") falls on
    # both (when all colds ran first, one run's colds met a slow spell that its edits did not:
    # 15.9 s, against 10.4 s in the run before).
    colds, edits, count = [], [], _rounds(n, rounds)
    for k in range(count):
        _log(f"{name}: cold build without search, round {k + 1}")
        colds.append(build(network, work / f"{name}-nosearch-site", work, _tag(f"{name}-nosearch", k), "--no-search",
                           "--no-cache"))
        if k + 1 < count:  # the last one stays: the warm cold build below writes beside it
            aside.remove(work / f"{name}-nosearch-site")
        belief_id = edited_claim(source, source)
        _log(f"{name}: incremental rebuild after editing {belief_id}, round {k + 1}")
        edits.append(build(source, site, work, _tag(f"{name}-rebuild-edit", k), *cached))
    cold = _row(name, "full, no search", n, median_run(colds))
    rounds_note(cold)
    rows.append(cold)
    # The same cold build with the page cache as the runs above left it: the baseline of the
    # warm claim edit below, so that each ratio compares builds under the same conditions.
    # Into another empty folder, the first one still there: nothing was removed since the
    # cache was dropped but an edit's few replaced pages, so file creation is not slowed
    # (see "page cache" above).
    _log(f"{name}: cold build without search, page cache warm")
    cold_warm = _row(name, COLD_WARM, n, build(network, work / f"{name}-nosearch-warm-site", work,
                                               f"{name}-nosearch-warm", "--no-search", "--no-cache", drop=False))
    rows += [cold_warm, base]
    for folder in ("nosearch", "nosearch-warm"):
        aside.remove(work / f"{name}-{folder}-site")
    edit = _incremental(rows, cold, EDITED, median_run(edits))
    rounds_note(edit)
    paired = [c["wall_s"] / e["wall_s"] for c, e in zip(colds, edits) if c["exit_code"] == 0 == e["exit_code"]]
    if len(paired) > 1:
        _note(edit, f"per round {', '.join(f'{r:.1f}x' for r in paired)}")
    # Every run starts with the page cache dropped, this one too: modules, cache and site are
    # read from disk. An edit-and-build loop (or a CI job that has just restored its cache)
    # finds them in memory: the same edit again, the cache as the last build left it.
    edited_claim(source, source)
    _log(f"{name}: incremental rebuild after editing {belief_id} again, page cache warm")
    warm = _incremental(rows, cold_warm, EDITED_WARM, build(source, site, work, f"{name}-rebuild-edit-warm",
                                                             *cached, drop=False), baseline="cold no search, warm")
    tail_id = edited_claim(source, source, tail=True)
    _log(f"{name}: incremental rebuild after editing the end of {tail_id}'s claim")
    tail = _incremental(rows, cold, EDITED_TAIL, build(source, site, work, f"{name}-rebuild-edit-tail", *cached))
    _note(tail, f"{tail_id}: past the 200 characters of its claim that other pages show")
    served = _incremental(rows, cold, SERVED, serve_rebuild(network, source, work, name))
    _note(served, "the request only: the process is up and has built the network once; "
                  "peak RSS: the build process's, base build included")
    served_search = _incremental(rows, cold, SERVED_SEARCH, serve_rebuild(network, source, work, name, search=True))
    _note(served_search, "until the pages are in place (what serve reloads open pages at); "
                         f"the search bundle followed at {served_search.extra['search_s']:.2f} s")
    premise, dependents = retracted_premise(source, source, quiet=True)  # on top of the edit: one change
    _log(f"{name}: incremental rebuild after retracting {premise} ({dependents} direct dependents)")
    quiet = _incremental(rows, cold, QUIETLY_RETRACTED, build(source, site, work, f"{name}-rebuild-quiet", *cached))
    _note(quiet, f"{premise}: {dependents} direct dependents")
    premise, dependents = retracted_premise(source, source)
    _log(f"{name}: incremental rebuild after retracting {premise} ({dependents} direct dependents)")
    retract = _incremental(rows, cold, RETRACTED, build(source, site, work, f"{name}-rebuild-retract", *cached))
    _note(retract, f"{premise}: {dependents} direct dependents")
    # Most pages show or compute from that flip: compare with a cold build of the same network
    # into the same folder, which pays for replacing the old tree too (the cold row above had none).
    _log(f"{name}: cold build of the retracted network into the same site")
    retract_cold = _row(name, RETRACTED_COLD, n, build(source, site, work, f"{name}-rebuild-retract-cold",
                                                       "--no-search", "--no-cache"))
    rows.append(retract_cold)
    if _speedup(retract_cold, retract) is not None:
        _note(retract, f"cold into the same site / this = {_speedup(retract_cold, retract):.1f}x")
    # The search index is rebuilt whole on every build: its cost, apart, after the same edit.
    with_search = ("--cache-dir", str(search_cache))
    _log(f"{name}: base build with search, then the claim edit again")
    build(searched, search_site, work, f"{name}-rebuild-search-base", *with_search)
    edited_claim(searched, searched)
    reindex = _incremental(rows, cold, REINDEXED,
                           build(searched, search_site, work, f"{name}-rebuild-search-edit", *with_search), True)
    _note(reindex, "indexer CPU = the search re-index")
    for path in (site, search_site, cache, search_cache):
        aside.remove(path)
    documents = run_document_rebuilds(name, network, n, work, rows)
    return {**documents, "input": name, "beliefs": n, "cold_no_search_s": cold.wall_s,
            "claim_edited_s": edit.wall_s, "claim_edited_speedup": _speedup(cold, edit),
            "claim_edited_kept": edit.extra["kept"], "claim_edited_warm_s": warm.wall_s,
            "cold_no_search_warm_s": cold_warm.wall_s, "claim_edited_warm_speedup": _speedup(cold_warm, warm), "claim_tail_edited_s": tail.wall_s,
            "claim_tail_edited_speedup": _speedup(cold, tail), "claim_tail_edited_kept": tail.extra["kept"],
            "serve_claim_edited_s": served.wall_s,
            "serve_claim_edited_speedup": _speedup(cold, served), "serve_search_pages_s": served_search.wall_s,
            "serve_search_done_s": served_search.extra["search_s"], "quiet_retracted_s": quiet.wall_s,
            "quiet_retracted_speedup": _speedup(cold, quiet), "quiet_retracted_kept": quiet.extra["kept"],
            "premise_retracted_s": retract.wall_s,
            "premise_retracted_speedup": _speedup(cold, retract), "premise_retracted_kept": retract.extra["kept"],
            "premise_retracted_cold_same_site_s": retract_cold.wall_s,
            "reindex_cpu_s": reindex.indexer_cpu_s}


def serve_rebuild(network: Path, edited: Path, work: Path, name: str, search: bool = False) -> dict:
    """serve's build process: the network, then (timed) the `edited` network at the same path.
    With `search`, wall_s is the time until the pages were in place, search_s until the reply."""
    tag = f"{name}-serve{'-search' if search else ''}"
    source, site, cache = work / f"{tag}.json", work / f"{tag}-site", work / f"{tag}-cache"
    for path in (site, cache):
        aside.remove(path)
    shutil.copyfile(network, source)
    stats = work / f"{tag}.stats.json"
    _log(f"{name}: serve's build process{' with search' if search else ''}, base build, then the claim edit")
    cmd = [sys.executable, "-c", _SERVE, str(stats), str(source), str(edited), str(site), str(cache),
           "1" if drop_caches else "0", "true" if search else "false"]
    found = _measure(cmd, work, work / f"{tag}.log", stats)
    for path in (site, cache, source):
        aside.remove(path)
    reply = found.get("rebuild_wall_s", found["wall_s"])
    return {**found, "process_wall_s": found["wall_s"], "wall_s": found.get("pages_s", reply) if search else reply,
            "search_s": reply, "kept": found.get("kept", 0),
            "cpu_s": None, "sys_s": None}  # the process's CPU covers the base build too


def edited_document(network: Path, folder: Path) -> str:
    """Put a sentence before the claim of the middle belief's document; its id."""
    nodes = json.loads(network.read_text(encoding="utf-8"))["nodes"]
    belief_id = sorted(nodes)[len(nodes) // 2]
    document = folder / f"{belief_id}.md"
    claim, text = nodes[belief_id]["text"], document.read_text(encoding="utf-8")
    if claim not in text:
        raise SystemExit(f"bench: the claim of {belief_id} is not in {document} as it is; cannot edit it")
    document.write_text(text.replace(claim, f"{EDIT} {claim}", 1), encoding="utf-8")  # as edited_claim
    return belief_id


def run_document_rebuilds(name: str, network: Path, n: int, work: Path, rows: list[Row]) -> dict:
    """The claim edit again, with the network as a documents folder (the cache's parsed documents)."""
    folder, site, cache = work / f"{name}-documents", work / f"{name}-documents-site", work / f"{name}-documents-cache"
    for path in (folder, site, cache):
        aside.remove(path)
    subprocess.run([sys.executable, "-m", "site_builder.cli", "import", str(network), "-o", str(folder)],
                   check=True, capture_output=True, cwd=ROOT)  # not timed
    imported = time.monotonic()
    _log(f"{name}: documents folder, cold build without search")
    cold = _row(name, DOCS_COLD, n, build(folder, site, work, f"{name}-documents-cold", "--no-search", "--no-cache"))
    rows.append(cold)
    aside.remove(site)
    _log(f"{name}: documents folder, base build filling the cache")
    cached = ("--no-search", "--cache-dir", str(cache))
    # A build lists a file's status (to skip reading it next time) only once the file has not
    # changed for documents_cache.RACY_NS (2 s): small networks' cold builds take less.
    time.sleep(max(0.0, imported + 2.5 - time.monotonic()))
    base = _row(name, DOCS_BASE, n, build(folder, site, work, f"{name}-documents-base", *cached))
    _note(base, "cold, fills the cache of the rebuild below")
    rows.append(base)
    belief_id = edited_document(network, folder)
    _log(f"{name}: documents folder, incremental rebuild after editing {belief_id}")
    edit = _incremental(rows, cold, DOCS_EDITED, build(folder, site, work, f"{name}-documents-edit", *cached))
    _note(edit, f"{edit.extra['unparsed']}/{n} documents not parsed again ({edit.extra['unread']} not read)")
    for path in (folder, site, cache):
        aside.remove(path)
    return {"documents_cold_s": cold.wall_s, "documents_edited_s": edit.wall_s,
            "documents_edited_speedup": _speedup(cold, edit), "documents_unparsed": edit.extra["unparsed"],
            "documents_unread": edit.extra["unread"]}


def incremental_summary(found: dict) -> str:
    def x(value: float | None) -> str:
        return "-" if value is None else f"{value:.1f}x"
    return (f"incremental rebuild at {found['input']} (no search): cold {found['cold_no_search_s']:.2f} s / "
            f"1 claim edited {found['claim_edited_s']:.2f} s = {x(found['claim_edited_speedup'])} "
            f"(target >= 10x), {found['claim_edited_kept']}/{found['beliefs']} pages kept; page cache warm: "
            f"cold {found['cold_no_search_warm_s']:.2f} s / 1 claim edited {found['claim_edited_warm_s']:.2f} s = "
            f"{x(found['claim_edited_warm_speedup'])}; edited past what "
            f"other pages show {found['claim_tail_edited_s']:.2f} s = {x(found['claim_tail_edited_speedup'])}, "
            f"{found['claim_tail_edited_kept']} kept; in serve's build "
            f"process {found['serve_claim_edited_s']:.2f} s = {x(found['serve_claim_edited_speedup'])} (with search: pages "
            f"in place {found['serve_search_pages_s']:.2f} s, search bundle {found['serve_search_done_s']:.2f} s); a quiet "
            f"premise retracted {found['quiet_retracted_s']:.2f} s = {x(found['quiet_retracted_speedup'])}, "
            f"{found['quiet_retracted_kept']} kept; the busiest premise retracted "
            f"{found['premise_retracted_s']:.2f} s = {x(found['premise_retracted_speedup'])}, "
            f"{found['premise_retracted_kept']} kept (a cold build into that site: "
            f"{found['premise_retracted_cold_same_site_s']:.2f} s); search re-index "
            f"{_fmt(found['reindex_cpu_s'], '.2f')} s CPU; as a documents folder: cold "
            f"{found['documents_cold_s']:.2f} s / 1 claim edited {found['documents_edited_s']:.2f} s = "
            f"{x(found['documents_edited_speedup'])}, {found['documents_unparsed']} documents not parsed again "
            f"({found['documents_unread']} not read)")


def machine() -> dict:
    info = {"cpus": os.cpu_count(), "python": platform.python_version(),
            "platform": platform.platform(), "processor": platform.processor() or platform.machine()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["processor"] = line.split(":", 1)[1].strip()
                break
        mem = Path("/proc/meminfo").read_text().split()[1]
        info["memory_gb"] = round(int(mem) / 1024 / 1024, 1)
    except OSError:
        pass
    try:
        import mkdocs
        info["mkdocs"] = mkdocs.__version__
    except ImportError:
        info["mkdocs"] = None
    return info


def _fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


COLUMNS = ("input", "run", "beliefs", "wall s", "ms/belief", "CPU s", "sys s", "peak RSS MB", "indexer RSS MB",
           "indexer CPU s", "mkdocs/ours", "full/floor", "note")


def table(rows: list[Row]) -> list[str]:
    cells = [COLUMNS] + [(r.input, r.run, str(r.beliefs), _fmt(r.wall_s, ".2f"), _fmt(r.ms_per_belief, ".2f"),
                          _fmt(r.cpu_s, ".2f"), _fmt(r.sys_s, ".2f"), _fmt(r.rss_mb, ".0f"), _fmt(r.indexer_rss_mb, ".0f"), _fmt(r.indexer_cpu_s, ".2f"),
                          _fmt(r.vs_mkdocs, ".2f"), _fmt(r.vs_floor, ".2f"), r.note) for r in rows]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    right = set(range(2, len(COLUMNS) - 1))  # all but input, run and note
    lines = []
    for k, c in enumerate(cells):
        lines.append("  ".join(v.rjust(w) if i in right else v.ljust(w)
                               for i, (v, w) in enumerate(zip(c, widths))).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


GROWTH = (50_000, 5_000)
"""The linear-growth target compares these sizes (the big build at most 11x the small one)."""


def growth(rows: list[Row], big: int, small: int) -> dict:
    """Wall of `big` over wall of `small`, each the mean of its runs (the small size runs
    before and after the big one), for full, floor and mkdocs."""
    found = {}
    for run in ("full", "floor", "mkdocs"):
        walls: dict[int, list[float]] = {}
        for r in rows:
            if r.run == run and r.input.startswith("gen-") and r.exit_code == 0:
                walls.setdefault(r.beliefs, []).append(r.wall_s)
        if big in walls and small in walls:
            found[run] = statistics.mean(walls[big]) / statistics.mean(walls[small])
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default=None, help="generated network sizes (default 1000,5000,10000,50000; "
                        "--quick: 1000)")
    parser.add_argument("--quick", action="store_true", help="first size and the real networks only")
    parser.add_argument("--out", default="bench-out", help="folder for bench.txt, bench.json, logs (default bench-out)")
    parser.add_argument("--skip-mkdocs", action="store_true", help="no MkDocs baseline")
    parser.add_argument("--chain", type=int, default=100_000, help="chain length (0: none; default 100000)")
    parser.add_argument("--fan", type=int, default=50_000, help="fan size (0: none; default 50000)")
    parser.add_argument("--rebuild-size", type=int, default=None,
                        help="generated size for the rebuild timings (default 10000, or the largest size below it)")
    parser.add_argument("--shared", default=None, metavar="NAMES",
                        help="comma-separated shared networks to run, by file stem (default: all; 'none': none)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=None,
                        help=f"rounds of each comparison at sizes up to {ROUNDS_UP_TO}, rows the median "
                             f"(default {ROUNDS}; --quick: 1)")
    parser.add_argument("--keep", action="store_true", help="keep the built sites under OUT/work")
    parser.add_argument("--no-drop-caches", dest="drop_caches", action="store_false",
                        help="do not drop the page cache before each run (it is dropped when writable)")
    args = parser.parse_args(argv)
    global drop_caches
    drop_caches = args.drop_caches and os.access(DROP_CACHES, os.W_OK)

    sizes = [int(s) for s in (args.sizes or ("1000" if args.quick else "1000,5000,10000,50000")).split(",") if s]
    if args.quick:
        sizes, args.chain, args.fan = sizes[:1], 0, 0
    args.rounds = max(1, args.rounds if args.rounds is not None else 1 if args.quick else ROUNDS)
    rebuild = args.rebuild_size or max([s for s in sizes if s <= 10_000] or sizes[:1])
    out = Path(args.out).resolve()
    work = out / "work"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    aside.folder = work / ".removed"
    info = machine()
    compileall.compile_dir(str(ROOT / "site_builder"), quiet=1)  # see the docstring
    started = time.perf_counter()
    rows: list[Row] = []
    incremental = None

    for n in sizes:
        name = f"gen-{_label(n)}"
        network = work / f"{name}.json"
        network.write_text(gen.with_stored_values(gen.generate(n, args.seed)), encoding="utf-8")
        run_input(name, network, n, work, rows, args.skip_mkdocs, keep=args.keep, profile=n == rebuild,
                  rounds=args.rounds)
        if n == rebuild:
            incremental = run_rebuilds(name, network, n, work, rows, args.rounds)
    if GROWTH[0] in sizes and GROWTH[1] in sizes:  # the small size again, after the big one (see above)
        name = f"gen-{_label(GROWTH[1])}"
        run_input(f"{name} again", work / f"{name}.json", GROWTH[1], work, rows, args.skip_mkdocs, keep=args.keep,
                  rounds=args.rounds)
    wanted = None if args.shared is None else set(args.shared.split(","))
    shared = shared_networks()
    for line in missing_shared(shared):  # and in the report
        _log(line)
    for path in shared:
        if wanted is not None and path.stem not in wanted:
            continue
        n = len(json.loads(path.read_text(encoding="utf-8"))["nodes"])
        run_input(path.stem, path, n, work, rows, args.skip_mkdocs, keep=args.keep, rounds=args.rounds)
    for shape, n in (("chain", args.chain), ("fan", args.fan)):
        if n:
            network = work / f"{shape}-{_label(n)}.json"
            network.write_text(gen.with_stored_values(getattr(gen, shape)(n)), encoding="utf-8")
            run_input(f"{shape}-{_label(n)}", network, n, work, rows, args.skip_mkdocs,
                      with_floor=False, with_mkdocs=False, keep=args.keep)

    ratios = {}
    if GROWTH[0] in sizes and GROWTH[1] in sizes:
        ratios[f"{_label(GROWTH[0])}/{_label(GROWTH[1])}"] = growth(rows, *GROWTH)
    lines = [f"belief-site build benchmark: {info['cpus']} CPUs ({info['processor']}), "
             f"{info.get('memory_gb', '?')} GB, Python {info['python']}, mkdocs {info['mkdocs']}, {info['platform']}, "
             f"page cache {'dropped before each run' if drop_caches else 'not dropped'}, "
             + ("finished runs' folders removed after the last run" if not aside.early else
                f"finished runs' folders removed after the last run, but {aside.early} times at once "
                f"(under {RESERVE_GB} GB free)"),
             "full = cold belief-site build --no-cache (diagrams + Pagefind search); floor = the same worker "
             "pool and writer, belief files only (page, index.json, badges; no diagrams, no search, no "
             "listings/exports); mkdocs = mkdocs build, same beliefs as pages, theme mkdocs + search, not in nav",
             "peak RSS = the process's own VmHWM; indexer = Pagefind (a child of the build, overlapping it: "
             "ru_maxrss and CPU via os.wait4 in a proxy); mkdocs/ours > 1 means belief-site is faster",
             "CPU s = user + system seconds of the run and of the processes it waited for (workers, Pagefind; "
             "CPU s / wall s = cores used); sys s = the system part (file creation, page faults: where a slow "
             "disk shows); serve's rows show none (their process ran the base build too)", ""]
    lines += table(rows)
    lines.append("")
    if not shared:
        lines += [*missing_shared(shared), ""]
    for key, found in ratios.items():
        lines.append(f"growth {key} wall (linear = 10.0; {key.split('/')[1]}: the mean of its runs before and "
                     "after the big one): " + ", ".join(f"{k} {v:.2f}" for k, v in found.items()))
    if incremental is not None:
        lines.append(incremental_summary(incremental))
    for r in rows:
        if r.run == "full" and r.extra.get("profile"):
            lines += ["", f"stages of the {r.input} full build (--profile):",
                      *(f"  {line}" for line in r.extra["profile"])]
    lines.append("")
    lines.append(f"benchmark wall time: {time.perf_counter() - started:.0f} s; logs in {work}")
    text = "\n".join(lines)
    print(text)
    (out / "bench.txt").write_text(text + "\n", encoding="utf-8")
    report = {"machine": info, "page_cache_dropped": drop_caches, "removed_at_once": aside.early, "columns": list(COLUMNS), "ratios": ratios,
              "incremental": incremental,
              "rows": [{**{k: v for k, v in asdict(r).items() if k != "extra"},
                        "ms_per_belief": r.ms_per_belief, "raw": r.extra} for r in rows]}
    (out / "bench.json").write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    _log("removing the folders set aside")
    aside.empty()
    return 1 if any(r.exit_code for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
