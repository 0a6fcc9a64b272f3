"""The optional Graphviz engine: the same neighbourhood laid out by `dot`.

The executable is the `graphviz-pure` command of the `graphviz-pure` wheel (a static
build of a Graphviz 16.1.0 port that installs no `dot`), or a `dot` the site configures.
Many digraphs go to ONE process on stdin (DESIGN "Never O(n^2)": no per-page
subprocess) and come back as `-Tjson0`: a JSON object per graph, named, so a graph that
Graphviz skips or dies on is found by name and never shifts the others. Only positions are
taken from Graphviz: boxes (fixed size, empty labels) and edge splines are drawn by our
writer, so both engines look alike, and no Graphviz-made markup reaches the page.
No belief text ever goes into the DOT: nodes are `n0`, `n1`, ... (nothing to escape).

Results are cached by the SHA-256 of the DOT text, per runner (one build).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

from .geometry import BOX_H, Box, Drawing, Route
from .layout import GAP, ROW_GAP
from .neighbourhood import Neighbourhood

__all__ = ["GraphvizRunner", "find_executable", "to_dot", "EXECUTABLE"]

EXECUTABLE = "graphviz-pure"
BATCH = 200
"""Graphs per process: bounded memory, and batches run on all cores."""
RETRIES = 6
"""Processes re-run after a crash, per batch, before the rest of the batch is given up."""


def find_executable(engine: str) -> tuple[str | None, str]:
    """The executable for `diagram_engine` -> (path or None, why not)."""
    if engine == "graphviz":
        name = EXECUTABLE + (".exe" if sys.platform == "win32" else "")
        # The wheel puts it beside the interpreter's scripts (a venv's bin/), which may not be on PATH.
        for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
            candidate = Path(folder) / name
            if candidate.is_file():
                return str(candidate), ""
        found = shutil.which(EXECUTABLE)
        if found:
            return found, ""
        return None, "graphviz-pure is not installed (pip install 'belief-site[graphviz]')"
    if os.sep in engine or (os.altsep and os.altsep in engine):
        return engine, ""
    return shutil.which(engine) or engine, ""


def _inches(px: float) -> str:
    return f"{px / 72:.4f}"


def to_dot(nb: Neighbourhood, widths: Sequence[float]) -> tuple[str, list[bool]]:
    """DOT body (after `digraph NAME`) and, per edge, whether it was written reversed.

    Same nodes, same rows (`rank=same` per row), same edges; an edge pointing up (a
    cycle) is written downwards with its route reversed on reading, so rows stay in order.
    """
    lines = ["{",
             f"graph [rankdir=TB, nodesep={_inches(GAP)}, ranksep={_inches(ROW_GAP)}];",
             f'node [shape=box, fixedsize=true, label="", height={_inches(BOX_H)}];',
             "edge [dir=none];"]
    rows: dict[int, list[str]] = {}
    for i, (node, w) in enumerate(zip(nb.nodes, widths)):
        lines.append(f"n{i} [width={_inches(w)}];")
        rows.setdefault(node.row, []).append(f"n{i};")
    for row in sorted(rows):
        lines.append("{rank=same; " + " ".join(rows[row]) + "}")
    reversed_ = []
    for k, e in enumerate(nb.edges):
        up = nb.nodes[e.source].row > nb.nodes[e.target].row
        a, b = (e.target, e.source) if up else (e.source, e.target)
        lines.append(f'n{a} -> n{b} [id="e{k}"];')
        reversed_.append(up)
    lines.append("}")
    return "\n".join(lines) + "\n", reversed_


def _floats(text: str) -> tuple[float, float]:
    x, y = text.split(",")[:2]
    return float(x), float(y)


def _parse(graph: dict, nb: Neighbourhood, widths: Sequence[float], reversed_: list[bool]) -> Drawing:
    """A Graphviz JSON graph -> Drawing (y flipped: Graphviz's y grows upwards)."""
    top = float(graph["bb"].split(",")[3])
    pos: dict[str, tuple[float, float]] = {}
    for obj in graph.get("objects", ()):
        if "pos" in obj and "name" in obj:
            pos[obj["name"]] = _floats(obj["pos"])
    boxes = []
    for i in range(len(nb.nodes)):
        x, y = pos[f"n{i}"]
        boxes.append(Box(x, top - y, widths[i], BOX_H))
    splines: dict[str, list[tuple[float, float]]] = {}
    for edge in graph.get("edges", ()):
        points = [_floats(p) for p in edge["pos"].split() if not p.startswith(("e,", "s,"))]
        splines[edge["id"]] = [(x, top - y) for x, y in points]
    routes = []
    for k in range(len(nb.edges)):
        points = splines[f"e{k}"]
        if len(points) < 4 or (len(points) - 1) % 3:
            raise ValueError(f"edge e{k}: {len(points)} spline points")
        if reversed_[k]:
            points = points[::-1]
        segments = tuple(tuple(points[i:i + 3]) for i in range(1, len(points), 3))
        routes.append(Route(points[0], segments))
    return Drawing(tuple(boxes), tuple(routes), "graphviz")


def _short(text: str) -> str:
    first = " ".join(text.strip().splitlines()[:1]).strip()
    return first[:200] or "no output"


class GraphvizRunner:
    """Lays out many neighbourhoods with one executable; remembers results by DOT hash."""

    def __init__(self, executable: str | None, why_not: str = "", batch: int = BATCH,
                 timeout: float = 60.0, workers: int | None = None) -> None:
        self.executable = executable
        self.why_not = why_not
        self.batch = batch
        self.timeout = timeout
        self.workers = workers or min(4, os.cpu_count() or 1)
        self.cache: dict[str, dict | str] = {}
        """DOT hash -> Graphviz's JSON for that graph, or why it failed."""

    @classmethod
    def for_engine(cls, engine: str, **kw) -> "GraphvizRunner":
        path, why = find_executable(engine)
        return cls(path, why, **kw)

    def layout_many(self, items: Sequence[tuple[Neighbourhood, Sequence[float]]]) -> list[Drawing | str]:
        """A Drawing, or the reason Graphviz failed, for each (neighbourhood, widths)."""
        prepared = []
        todo: dict[str, str] = {}
        for nb, widths in items:
            body, reversed_ = to_dot(nb, widths)
            key = hashlib.sha256(body.encode("utf-8")).hexdigest()[:24]
            prepared.append((key, reversed_))
            if key not in self.cache and key not in todo:
                todo[key] = body
        if todo:
            self._run_all(todo)
        out: list[Drawing | str] = []
        for (key, reversed_), (nb, widths) in zip(prepared, items):
            result = self.cache[key]
            if isinstance(result, str):
                out.append(result)
                continue
            try:
                out.append(_parse(result, nb, widths, reversed_))
            except (KeyError, ValueError, IndexError, TypeError, AttributeError) as exc:
                out.append(f"unreadable Graphviz output ({type(exc).__name__}: {exc})")
        return out

    def _run_all(self, todo: dict[str, str]) -> None:
        if self.executable is None:
            for key in todo:
                self.cache[key] = self.why_not
            return
        keys = list(todo)
        batches = [keys[i:i + self.batch] for i in range(0, len(keys), self.batch)]
        if len(batches) == 1 or self.workers == 1:
            results = [self._run_batch(b, todo) for b in batches]
        else:
            with ThreadPoolExecutor(self.workers) as pool:  # each batch is its own process
                results = list(pool.map(lambda b: self._run_batch(b, todo), batches))
        for result in results:
            self.cache.update(result)

    def _run_batch(self, keys: list[str], todo: dict[str, str]) -> dict[str, dict | str]:
        """One batch; after a crash the graph it died on fails and the rest is run again."""
        done: dict[str, dict | str] = {}
        pending = list(keys)
        problem = "not run"
        for _ in range(RETRIES + 1):
            got, problem, fatal = self._run_once(pending, todo)
            done.update(got)
            if fatal:
                break
            place = {k: i for i, k in enumerate(pending)}
            missing = [k for k in pending if k not in got]
            last_found = max((place[k] for k in got), default=-1)
            # Graphs skipped before the last output failed; the first one after it is the
            # one the process died on; the others never ran and go to the next process.
            for k in missing:
                if place[k] <= last_found + 1:
                    done[k] = problem
            pending = [k for k in missing if k not in done]
            if not pending:
                break
        for k in pending:
            done.setdefault(k, problem)
        return done

    def _run_once(self, keys: list[str], todo: dict[str, str]) -> tuple[dict[str, dict], str, bool]:
        """Run one process on `keys` -> (JSON per key found, the problem if any, fatal)."""
        data = "".join(f'digraph "g{k}" {todo[k]}' for k in keys).encode("utf-8")
        try:
            proc = subprocess.run([self.executable, "-Tjson0"], input=data, capture_output=True,
                                  timeout=self.timeout + 0.5 * len(keys), check=False)
        except subprocess.TimeoutExpired:
            return {}, f"{Path(self.executable).name} timed out", True
        except OSError as exc:
            return {}, f"cannot run {self.executable}: {exc.strerror or exc}", True
        got: dict[str, dict] = {}
        text = proc.stdout.decode("utf-8", "replace")
        decoder = json.JSONDecoder()
        at = 0
        wanted = set(keys)
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at >= len(text):
                break
            try:
                graph, at = decoder.raw_decode(text, at)
            except json.JSONDecodeError:
                break
            name = graph.get("name") if isinstance(graph, dict) else None
            if isinstance(name, str) and name[1:] in wanted:
                got[name[1:]] = graph
        stderr = _short(proc.stderr.decode("utf-8", "replace"))
        if proc.returncode != 0:
            problem = f"{Path(self.executable).name} exited with status {proc.returncode}: {stderr}"
        else:
            problem = f"{Path(self.executable).name} gave no layout: {stderr}"
        return got, problem, False
