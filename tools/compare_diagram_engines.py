"""Compare the built-in diagram layout with Graphviz on every belief of the shared networks.

For each network in ../shared/networks/*.json (or the files given), the neighbourhood of
EVERY belief is laid out by both engines and the edge crossings of both drawings are
counted by the same routine (site_builder.render.diagrams.crossings). Printed per network:
diagrams, total crossings builtin vs graphviz, diagrams where builtin has more (and fewer),
and layout time per diagram for each engine (Graphviz: one batched process per 200 graphs,
timed end to end from DOT to parsed layout, cache empty; builtin: ordering, placement and
routing in this process). Neighbourhood extraction and SVG writing are shared by both
engines and not timed here.

    python tools/compare_diagram_engines.py [--engine graphviz|/path/to/dot] [--depth 2]
        [--max-nodes 40] [--worst 3] [--workers 1] [network.json ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from site_builder.config import SiteConfig  # noqa: E402
from site_builder.pipeline import check  # noqa: E402
from site_builder.render import RenderContext  # noqa: E402
from site_builder.render.diagrams import neighbourhoods  # noqa: E402
from site_builder.render.diagrams.crossings import count_crossings  # noqa: E402
from site_builder.render.diagrams.geometry import box_widths  # noqa: E402
from site_builder.render.diagrams.graphviz import GraphvizRunner  # noqa: E402
from site_builder.render.diagrams.layout import layout  # noqa: E402


def compare(path: Path, engine: str, depth: int, max_nodes: int, worst: int, workers: int) -> dict:
    ev = check(path).evaluation
    config = SiteConfig(diagram_depth=depth, diagram_max_nodes=max_nodes)
    ctx = RenderContext(ev, config, frozenset(ev.network.beliefs))
    hoods = neighbourhoods(ctx)
    ids = list(hoods)
    widths = {b: box_widths(hoods[b]) for b in ids}

    start = time.perf_counter()
    builtin = {b: layout(hoods[b], widths[b]) for b in ids}
    t_builtin = time.perf_counter() - start

    runner = GraphvizRunner.for_engine(engine, workers=workers)
    start = time.perf_counter()
    results = runner.layout_many([(hoods[b], widths[b]) for b in ids])
    t_graphviz = time.perf_counter() - start
    graphviz = dict(zip(ids, results))

    failed = [b for b in ids if isinstance(graphviz[b], str)]
    rows = []
    for b in ids:
        if b in failed:
            continue
        edges = hoods[b].edges
        rows.append((b, count_crossings(builtin[b], edges), count_crossings(graphviz[b], edges)))
    n = len(ids)
    out = {
        "network": path.name, "diagrams": n, "graphviz_failed": len(failed),
        "nodes": sum(len(h.nodes) for h in hoods.values()) / max(n, 1),
        "max_nodes": max((len(h.nodes) for h in hoods.values()), default=0),
        "builtin": sum(r[1] for r in rows), "graphviz": sum(r[2] for r in rows),
        "worse": sum(1 for r in rows if r[1] > r[2]), "better": sum(1 for r in rows if r[1] < r[2]),
        "with_crossings": (sum(1 for r in rows if r[1]), sum(1 for r in rows if r[2])),
        "ms_builtin": 1000 * t_builtin / max(n, 1), "ms_graphviz": 1000 * t_graphviz / max(n, 1),
        "worst": sorted((r for r in rows if r[1] > r[2]), key=lambda r: (r[2] - r[1], r[0]))[:worst],
        "first_failure": graphviz[failed[0]] if failed else "",
    }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("networks", nargs="*", type=Path)
    parser.add_argument("--engine", default="graphviz", help="graphviz (graphviz-pure) or a path to dot")
    parser.add_argument("--depth", type=int, default=SiteConfig().diagram_depth)
    parser.add_argument("--max-nodes", type=int, default=SiteConfig().diagram_max_nodes)
    parser.add_argument("--worst", type=int, default=3, help="list this many diagrams where builtin is worse")
    parser.add_argument("--workers", type=int, default=1,
                        help="Graphviz processes at once (a build uses up to 4; 1 compares CPU for CPU)")
    args = parser.parse_args(argv)
    networks = args.networks or sorted((ROOT.parent / "shared" / "networks").glob("*.json"))
    if not networks:
        print("no networks found (give network.json files)", file=sys.stderr)
        return 2
    print(f"engine: {args.engine}, diagram_depth {args.depth}, diagram_max_nodes {args.max_nodes}, "
          f"graphviz processes at once: {args.workers}")
    header = (f"{'network':<24} {'diagrams':>8} {'nodes avg/max':>13} {'crossings builtin':>17} "
              f"{'graphviz':>8} {'builtin worse':>13} {'better':>6} {'ms/diagram builtin':>18} {'graphviz':>8}")
    print(header)
    totals = [0, 0, 0, 0, 0]
    for path in networks:
        r = compare(path, args.engine, args.depth, args.max_nodes, args.worst, args.workers)
        print(f"{r['network']:<24} {r['diagrams']:>8} {r['nodes']:>7.1f}/{r['max_nodes']:<5} "
              f"{r['builtin']:>17} {r['graphviz']:>8} {r['worse']:>13} {r['better']:>6} "
              f"{r['ms_builtin']:>18.3f} {r['ms_graphviz']:>8.3f}")
        print(f"{'':<24} diagrams with any crossing: builtin {r['with_crossings'][0]}, "
              f"graphviz {r['with_crossings'][1]}")
        if r["graphviz_failed"]:
            print(f"{'':<24} graphviz failed on {r['graphviz_failed']} diagrams: {r['first_failure']}")
        for b, mine, theirs in r["worst"]:
            print(f"{'':<24} builtin worse: {b}: {mine} vs {theirs}")
        for k, key in enumerate(("diagrams", "builtin", "graphviz", "worse", "better")):
            totals[k] += r[key]
    print(f"{'total':<24} {totals[0]:>8} {'':>13} {totals[1]:>17} {totals[2]:>8} {totals[3]:>13} {totals[4]:>6}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
