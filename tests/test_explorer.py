"""The graph explorer: `graph/graph.json` (every published belief, placed) and its page."""

from __future__ import annotations

import json
import posixpath
from pathlib import Path

from site_builder.config import SiteConfig
from site_builder.model import Belief, Justification, Network
from site_builder.evaluate import evaluate
from site_builder.pipeline import _context, check
from site_builder.render import RenderContext, graph

from .conftest import EXAMPLE, SEED

FIELDS = {"id", "status", "kind", "depth", "dependents", "url", "claim", "x", "y"}


def context(source: Path, **options) -> RenderContext:
    return _context(check(source), SiteConfig(source=str(source), **options), source)


def network_context(beliefs: list[Belief]) -> RenderContext:
    evaluation = evaluate(Network(beliefs={b.id: b for b in beliefs}))
    return RenderContext(evaluation, SiteConfig(), frozenset(b.id for b in beliefs))


def test_every_published_belief_is_a_node_with_its_facts_and_a_link_from_the_graph_page():
    ctx = context(EXAMPLE)
    data = graph.graph_data(ctx)
    assert [n["id"] for n in data["nodes"]] == sorted(ctx.visible)
    for node in data["nodes"]:
        assert set(node) == FIELDS
        assert node["status"] == ctx.evaluation.value(node["id"])
        assert node["depth"] == ctx.evaluation.depth[node["id"]]
        target = posixpath.normpath(posixpath.join("graph", node["url"]))
        assert target == f"belief/{node['id']}"
    seed = next(n for n in data["nodes"] if n["id"] == SEED)
    assert seed["kind"] == "derived" and seed["dependents"] == 1


def test_edges_run_from_antecedent_to_dependent_and_mark_outlists(tmp_path):
    from .test_search import write_documents
    ctx = context(write_documents(tmp_path / "b"))
    edges = {(e["source"], e["target"]): e["outlist"] for e in graph.graph_data(ctx)["edges"]}
    assert edges == {("public", "blocked"): False, ("secret", "blocked"): True,
                     ("public", "from-secret"): False, ("secret", "from-secret"): False}


def test_hidden_beliefs_appear_nowhere_in_the_data(tmp_path):
    from .test_search import write_documents
    ctx = context(write_documents(tmp_path / "b"), visible_to=("public",))
    (output,) = list(graph.emit(ctx))
    assert output.path == "graph/graph.json"
    data = json.loads(output.data)
    assert [n["id"] for n in data["nodes"]] == ["blocked", "public"]
    assert data["edges"] == [{"source": "public", "target": "blocked", "outlist": False}]
    assert b"secret" not in output.data.lower()


def test_links_follow_use_directory_urls():
    data = graph.graph_data(context(EXAMPLE, use_directory_urls=False))
    assert all(n["url"] == f"../belief/{n['id']}/index.html" for n in data["nodes"])


def test_antecedents_are_drawn_above_their_dependents():
    ctx = context(EXAMPLE)
    data = graph.graph_data(ctx)
    where = {n["id"]: (n["x"], n["y"]) for n in data["nodes"]}
    for edge in data["edges"]:
        if not edge["outlist"]:
            assert where[edge["source"]][1] < where[edge["target"]][1], edge
    assert len(set(where.values())) == len(where)  # no two beliefs on one spot


def test_wide_rows_fold_and_the_whole_stays_landscape():
    """One premise with 2,000 dependents: the dependents' row folds instead of running 2,000 wide."""
    hub = Belief("hub", "The hub.")
    fan = [Belief(f"d{i:04}", "Rests on the hub.", justifications=(Justification("SL", ("hub",)),))
           for i in range(2000)]
    loners = [Belief(f"p{i:04}", "Alone.") for i in range(500)]
    data = graph.graph_data(network_context([hub, *fan, *loners]))
    xs = [n["x"] for n in data["nodes"]]
    ys = [n["y"] for n in data["nodes"]]
    width, height = max(xs) - min(xs), max(ys) - min(ys)
    assert width < 200 and 0.5 < width / height < 4
    assert len({(n["x"], n["y"]) for n in data["nodes"]}) == len(data["nodes"])


def test_the_same_network_gives_the_same_bytes():
    ctx = context(EXAMPLE)
    assert list(graph.emit(ctx)) == list(graph.emit(ctx))


def test_shared_network_data_is_complete(shared):
    ctx = context(shared / "networks" / "system-design-eem.json")
    data = graph.graph_data(ctx)
    assert len(data["nodes"]) == len(ctx.visible) == 1296
    ids = {n["id"] for n in data["nodes"]}
    assert all(e["source"] in ids and e["target"] in ids and e["source"] != e["target"] for e in data["edges"])
    assert len({(n["x"], n["y"]) for n in data["nodes"]}) == len(ids)


def test_the_page_loads_the_vendored_renderer_and_no_other_page_does(tmp_path, cli):
    out = tmp_path / "site"
    assert cli("build", EXAMPLE, "-o", out)[0] == 0
    page = (out / "graph" / "index.html").read_text(encoding="utf-8")
    for script in ("../assets/vendor/graphology/graphology.umd.min.js", "../assets/vendor/sigma/sigma.min.js",
                   "../assets/graph.js"):
        assert f'src="{script}"' in page
        assert (out / "graph" / script).resolve().is_file()
    assert 'data-graph="graph.json"' in page and (out / "graph" / "graph.json").is_file()
    for other in [out / "index.html", *(out / "belief").rglob("index.html"), out / "premises" / "index.html"]:
        html = other.read_text(encoding="utf-8")
        assert "vendor/" not in html and "graph.js" not in html, other
        assert 'href="' in html and ("graph/" in html)  # the nav links to the explorer
    for licence in ("sigma/LICENSE.txt", "sigma/LICENSE-bundled.txt", "graphology/LICENSE.txt"):
        assert "MIT" in (out / "assets" / "vendor" / licence).read_text(encoding="utf-8")
