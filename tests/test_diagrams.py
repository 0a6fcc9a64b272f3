"""Dependency diagrams: neighbourhood rows, caps, visibility, SVG markup, links, engines."""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from site_builder.config import SiteConfig
from site_builder.evaluate import evaluate
from site_builder.model import OUT, Belief, Justification, Network
from site_builder.render import RenderContext
from site_builder.render.diagrams import neighbourhoods, render_diagrams
from site_builder.render.diagrams import graphviz as gv
from site_builder.render.diagrams import layout as layout_module
from site_builder.render.diagrams.crossings import count_crossings
from site_builder.render.diagrams.geometry import Box, Drawing, Route, box_widths
from site_builder.render.diagrams.layout import (_count, _Layered, _positions, _sift, _transpose,
                                                bilayer_crossings, layout, order_layers)
from site_builder.render.diagrams.neighbourhood import Edge, Neighbourhood, Node

ROOT = Path(__file__).resolve().parent.parent
SVG = "{http://www.w3.org/2000/svg}"
HREF = "{http://www.w3.org/1999/xlink}href"  # links are xlink:href (svg.XLINK)


# --- building networks by hand -------------------------------------------------------------

def sl(*antecedents: str, unless: tuple[str, ...] = ()) -> Justification:
    return Justification("SL", tuple(antecedents), tuple(unless))


def belief(belief_id: str, *justs: Justification, text: str = "", declared: str = "IN") -> Belief:
    return Belief(belief_id, text or f"claim {belief_id}", declared, justifications=justs)


def context(*beliefs: Belief, visible: set[str] | None = None, **config) -> RenderContext:
    ev = evaluate(Network({b.id: b for b in beliefs}))
    shown = frozenset(ev.network.beliefs if visible is None else visible)
    return RenderContext(ev, SiteConfig(**config), shown)


def chain_with_sides() -> list[Belief]:
    """p -> a -> c -> d -> e -> f, plus q -> c (an antecedent at distance 1)."""
    return [belief("p"), belief("q"), belief("a", sl("p")), belief("c", sl("a", "q")),
            belief("d", sl("c")), belief("e", sl("d")), belief("f", sl("e"))]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def nodes_of(svg: str) -> dict[str, dict]:
    """Belief id (from the tooltip) -> href, classes, rect and text of its node."""
    found = {}
    for link in parse(svg).iter(f"{SVG}a"):
        group = link.find(f"{SVG}g")
        tooltip = group.find(f"{SVG}title").text
        key = tooltip.split(" ", 1)[0]
        rect = group.find(f"{SVG}rect")
        found[key] = {"href": link.get(HREF), "class": group.get("class").split(),
                      "y": float(rect.get("y")), "x": float(rect.get("x")),
                      "width": float(rect.get("width")), "text": group.find(f"{SVG}text").text,
                      "tooltip": tooltip, "aria-current": link.get("aria-current"),
                      "stroke-width": rect.get("stroke-width")}
    return found


def edges_of(svg: str) -> list[ET.Element]:
    """The edge paths of the drawing (not the legend's samples)."""
    return list(parse(svg).find(f"{SVG}g[@class='edges']"))


# --- rows -------------------------------------------------------------------------------

def test_antecedents_sit_above_by_distance_and_dependents_below():
    ctx = context(*chain_with_sides())
    nb = neighbourhoods(ctx)["c"]
    assert {n.key: n.row for n in nb.nodes} == {"p": -2, "a": -1, "q": -1, "c": 0, "d": 1, "e": 2}
    ys = {k: v["y"] for k, v in nodes_of(render_diagrams(ctx).svg["c"]).items()}
    assert ys["p"] < ys["a"] == ys["q"] < ys["c"] < ys["d"] < ys["e"]
    assert "f" not in ys  # three steps away: beyond diagram_depth 2


def test_diagram_depth_limits_the_rows():
    nb = neighbourhoods(context(*chain_with_sides(), diagram_depth=1))["c"]
    assert sorted(n.key for n in nb.nodes) == ["a", "c", "d", "q"]


def test_shortest_distance_wins_and_ties_go_above():
    # p is cited directly and through a: distance 1. x and c cite each other: both ways at
    # distance 1, so above.
    ctx = context(belief("p"), belief("a", sl("p")), belief("x", sl("c")),
                  belief("c", sl("a", "p"), sl("x")))
    rows = {n.key: n.row for n in neighbourhoods(ctx)["c"].nodes}
    assert rows == {"p": -1, "a": -1, "x": -1, "c": 0}


def test_edges_follow_the_network_between_drawn_beliefs():
    ctx = context(belief("p"), belief("a", sl("p")), belief("c", sl("a", "p")))
    nb = neighbourhoods(ctx)["c"]
    keys = [n.key for n in nb.nodes]
    pairs = sorted((keys[e.source], keys[e.target]) for e in nb.edges)
    assert pairs == [("a", "c"), ("p", "a"), ("p", "c")]
    assert len(edges_of(render_diagrams(ctx).svg["c"])) == 3


# --- caps -------------------------------------------------------------------------------

def test_node_cap_adds_a_more_node_linking_to_the_dependents_list():
    deps = [belief(f"d{i:02}", sl("c")) for i in range(10)]
    ctx = context(belief("p"), belief("c", sl("p")), *deps, diagram_max_nodes=5)
    svg = render_diagrams(ctx).svg["c"]
    links = [a for a in parse(svg).iter(f"{SVG}a") if a.get(HREF) == "#dependents"]
    assert len(links) == 1
    group = links[0].find(f"{SVG}g")
    assert "more" in group.get("class").split()
    # 5 nodes: c, p and three dependents; seven dependents left out.
    assert group.find(f"{SVG}text").text == "+7 more"
    drawn = nodes_of(svg)
    assert sorted(k for k in drawn if k.startswith("d")) == ["d00", "d01", "d02"]
    assert "7 more dependents not shown" in parse(svg).find(f"{SVG}desc").text


def test_more_node_above_links_to_the_justifications():
    ctx = context(*(belief(f"p{i}") for i in range(6)), belief("c", sl(*(f"p{i}" for i in range(6)))),
                  diagram_max_nodes=3)
    svg = render_diagrams(ctx).svg["c"]
    hrefs = [a.get(HREF) for a in parse(svg).iter(f"{SVG}a")]
    assert "#justifications" in hrefs and "#dependents" not in hrefs


def test_counting_left_out_beliefs_is_bounded():
    # A premise with 3,000 dependents: its diagram stops counting ("N+"), the dependents'
    # diagrams stay small.
    fan = [belief("p")] + [belief(f"d{i:04}", sl("p")) for i in range(3000)]
    ctx = context(*fan, diagram_max_nodes=10)
    hoods = neighbourhoods(ctx)
    more = hoods["p"].more("below")
    assert more is not None and not more.complete and 0 < more.more < 3000
    assert len(hoods["p"].nodes) == 11  # ten beliefs and the "+N more" node
    assert {n.key for n in hoods["d0007"].nodes} == {"p", "d0007"}
    assert "+ more</text>" in render_diagrams(ctx).svg["p"]


# --- visibility -------------------------------------------------------------------------

def test_hidden_beliefs_never_appear_nor_count_nor_lead_anywhere():
    # h and s are hidden: h a dependent, s in c's outlist; k is reachable only through h.
    ctx = context(belief("p"), belief("s", declared=OUT), belief("c", sl("p", unless=("s",))),
                  belief("h", sl("c")), belief("k", sl("h")), belief("d", sl("c")),
                  visible={"p", "c", "d", "k"})
    diagrams = render_diagrams(ctx).svg
    assert set(diagrams) == {"p", "c", "d", "k"}
    svg = diagrams["c"]
    assert set(nodes_of(svg)) == {"p", "c", "d"}
    assert "h" not in {n.key for n in neighbourhoods(ctx)["c"].nodes}
    assert "../h/" not in svg and "claim h" not in svg and "../s/" not in svg
    assert "1 antecedent above" in parse(svg).find(f"{SVG}desc").text
    assert "1 dependent below" in parse(svg).find(f"{SVG}desc").text


# --- markup -----------------------------------------------------------------------------

def test_outlist_edges_are_dashed():
    ctx = context(belief("x", declared=OUT), belief("p"), belief("c", sl("p", unless=("x",))))
    edges = edges_of(render_diagrams(ctx).svg["c"])
    dashed = [e for e in edges if "outlist" in e.get("class").split()]
    solid = [e for e in edges if "outlist" not in e.get("class").split()]
    assert len(dashed) == 1 and dashed[0].get("stroke-dasharray")
    assert len(solid) == 1 and solid[0].get("stroke-dasharray") is None
    assert all(e.get("marker-end", "").startswith("url(#") for e in edges)
    assert all("C" in e.get("d") for e in edges)  # cubic Béziers


def test_the_current_belief_is_highlighted_and_statuses_are_classes():
    ctx = context(belief("x", declared=OUT), belief("c", sl("x")), belief("d", sl("c")))
    drawn = nodes_of(render_diagrams(ctx).svg["c"])
    assert "current" in drawn["c"]["class"] and drawn["c"]["aria-current"] == "page"
    assert drawn["c"]["stroke-width"] == "3"
    assert not any("current" in drawn[k]["class"] for k in ("x", "d"))
    assert "status-out" in drawn["x"]["class"] and "status-out" in drawn["c"]["class"]


def test_links_are_relative_to_the_belief_page():
    beliefs = (belief("a"), belief("ns:x"), belief("c", sl("a", "ns:x")))
    drawn = nodes_of(render_diagrams(context(*beliefs)).svg["c"])
    assert drawn["a"]["href"] == "../a/"
    assert drawn["ns:x"]["href"] == "../ns/x/"
    assert drawn["c"]["href"] == "./"
    flat = nodes_of(render_diagrams(context(*beliefs, use_directory_urls=False)).svg["c"])
    assert flat["a"]["href"] == "../a/index.html"
    assert flat["c"]["href"] == "index.html"
    nested = nodes_of(render_diagrams(context(*beliefs)).svg["ns:x"])
    assert nested["c"]["href"] == "../../c/"


def test_svg_is_well_formed_with_title_desc_legend_and_viewbox():
    svg = render_diagrams(context(*chain_with_sides())).svg["c"]
    root = parse(svg)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img"
    title_id, desc_id = root.get("aria-labelledby").split()
    assert root.find(f"{SVG}title").get("id") == title_id
    assert root.find(f"{SVG}desc").get("id") == desc_id
    assert root.find(f"{SVG}title").text == "Dependency diagram of c"
    assert root.find(f"{SVG}desc").text.startswith("c is IN; 3 antecedents above and 2 dependents below")
    x0, y0, w, h = map(float, root.get("viewBox").split())
    assert (x0, y0) == (0, 0) and float(root.get("width")) == w and float(root.get("height")) == h
    legend = root.find(f"{SVG}g[@class='legend']")
    assert [t.text for t in legend.iter(f"{SVG}text")] == ["IN", "OUT", "current", "antecedent edge",
                                                          "outlist edge"]
    # Every box is inside the view box.
    for node in nodes_of(svg).values():
        assert 0 <= node["x"] and node["x"] + node["width"] <= w and 0 <= node["y"] <= h


def test_text_is_escaped_everywhere():
    evil = '<script>alert(1)</script> & "quoted" \x01 </title><g onload="x">'
    ctx = context(belief("p", text=evil), belief("c", sl("p"), text="]]> <![CDATA[ &amp;"))
    svg = render_diagrams(ctx).svg["c"]
    assert "<script" not in svg and "<g onload" not in svg
    drawn = nodes_of(svg)  # parses: well-formed
    assert drawn["p"]["tooltip"] == "p (IN): " + " ".join(evil.replace("\x01", "\ufffd").split())
    assert drawn["c"]["tooltip"] == "c (IN): ]]> <![CDATA[ &amp;"


def test_long_ids_are_shortened_with_the_full_id_in_the_tooltip():
    long_id = "a-very-long-belief-identifier-that-goes-on-and-on"
    drawn = nodes_of(render_diagrams(context(belief(long_id), belief("c", sl(long_id)))).svg["c"])
    assert drawn[long_id]["text"] == long_id[:31] + "\u2026"
    assert drawn[long_id]["tooltip"].startswith(long_id + " (IN)")


def test_boxes_are_as_wide_as_their_labels():
    nb = Neighbourhood("c", 1, (Node("iiii", -1), Node("mmmm", -1), Node("c", 0)), ())
    narrow, wide, _ = box_widths(nb)
    assert wide - narrow == pytest.approx((833 - 222) * 4 * 12 / 1000 * 1.08, abs=0.2)


def test_output_is_deterministic_within_and_across_processes():
    ctx = context(*chain_with_sides(), belief("z", sl("p", "q")), belief("y", sl("c", "z")))
    first = render_diagrams(ctx).svg
    assert first == render_diagrams(ctx).svg
    script = (
        "import hashlib, sys; sys.path.insert(0, sys.argv[1]);"
        "from tests.test_diagrams import context, chain_with_sides, belief, sl;"
        "from site_builder.render.diagrams import render_diagrams;"
        "ctx = context(*chain_with_sides(), belief('z', sl('p', 'q')), belief('y', sl('c', 'z')));"
        "svg = render_diagrams(ctx).svg;"
        "print(hashlib.sha256(''.join(k + svg[k] for k in sorted(svg)).encode()).hexdigest())")
    digests = set()
    for seed in ("1", "2"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out = subprocess.run([sys.executable, "-c", script, str(ROOT)], capture_output=True,
                             text=True, env=env, check=True, cwd=ROOT)
        digests.add(out.stdout.strip())
    here = hashlib.sha256("".join(k + first[k] for k in sorted(first)).encode()).hexdigest()
    assert digests == {here}


# --- crossings --------------------------------------------------------------------------

def _line(a: tuple[float, float], b: tuple[float, float]) -> Route:
    return Route(a, ((b,),))


def test_crossing_counter_on_known_drawings():
    boxes = tuple(Box(x, y, 10, 10) for x, y in ((0, 0), (100, 0), (0, 100), (100, 100)))
    # K2,2 between two rows: a-d and b-c cross; the pairs sharing a node do not count.
    k22 = [Edge(0, 2, False), Edge(0, 3, False), Edge(1, 2, False), Edge(1, 3, False)]
    routes = tuple(_line((boxes[e.source].x, 5), (boxes[e.target].x, 95)) for e in k22)
    assert count_crossings(Drawing(boxes, routes, "test"), k22) == 1
    # A matching drawn crossed, then uncrossed.
    crossed = [Edge(0, 3, False), Edge(1, 2, False)]
    routes = tuple(_line((boxes[e.source].x, 5), (boxes[e.target].x, 95)) for e in crossed)
    assert count_crossings(Drawing(boxes, routes, "test"), crossed) == 1
    straight = [Edge(0, 2, False), Edge(1, 3, False)]
    routes = tuple(_line((boxes[e.source].x, 5), (boxes[e.target].x, 95)) for e in straight)
    assert count_crossings(Drawing(boxes, routes, "test"), straight) == 0
    # Curves are sampled: two Béziers that swap sides cross once.
    curves = (Route((0, 5), (((0, 50), (100, 50), (100, 95)),)),
              Route((100, 5), (((100, 50), (0, 50), (0, 95)),)))
    assert count_crossings(Drawing(boxes, curves, "test"), crossed) == 1
    assert bilayer_crossings([(0, 1), (1, 0)]) == 1 and bilayer_crossings([(0, 0), (1, 1)]) == 0


def test_barycenter_ordering_removes_a_bad_crossing():
    # Rows by id put a2 left of b2 and a left of b, while b2 -> a and a2 -> b: one crossing.
    nodes = (Node("a2", -2), Node("b2", -2), Node("a", -1), Node("b", -1), Node("c", 0))
    edges = (Edge(0, 3, False), Edge(1, 2, False), Edge(2, 4, False), Edge(3, 4, False))
    nb = Neighbourhood("c", 2, nodes, edges)
    g = _Layered(nb, box_widths(nb))
    assert bilayer_crossings([(0, 1), (1, 0)]) == 1  # the start order's top band
    layers, crossings = order_layers(g)
    assert crossings == 0
    drawing = layout(nb)
    assert count_crossings(drawing, edges) == 0
    # The drawn routes start at their sources and end at their targets.
    for e, route in zip(edges, drawing.routes):
        src, dst = drawing.boxes[e.source], drawing.boxes[e.target]
        assert abs(route.start[0] - src.x) <= src.w / 2 and route.start[1] == src.y + src.h / 2
        end = route.segments[-1][-1]
        assert abs(end[0] - dst.x) <= dst.w / 2 and end[1] == dst.y - dst.h / 2


def test_builtin_drawings_have_the_crossings_the_ordering_counted():
    # Several diagrams of a small tangled network: the geometric count equals the order's.
    beliefs = [belief(f"p{i}") for i in range(4)]
    beliefs += [belief("a", sl("p3", "p0")), belief("b", sl("p2", "p1")), belief("e", sl("p0", "p2")),
                belief("c", sl("a", "b", "e", "p1")), belief("d", sl("c", "p3")), belief("f", sl("c", "a")),
                belief("g", sl("d", "f", "b"))]
    for b, nb in neighbourhoods(context(*beliefs)).items():
        _, counted = order_layers(_Layered(nb, box_widths(nb)))
        assert count_crossings(layout(nb), nb.edges) == counted, b


def _tangle(rng: random.Random) -> Neighbourhood:
    """Random rows around a belief, with edges between rows and within them (flat arcs)."""
    rows = [0] + [rng.choice((-2, -1, -1, 1, 1, 2)) for _ in range(rng.randint(4, 11))]
    nodes = tuple(sorted((Node(f"n{k}", row) for k, row in enumerate(rows)), key=lambda n: (n.row, n.key)))
    pairs = {(s, t) for s in range(len(nodes)) for t in range(len(nodes))
             if s != t and nodes[s].row <= nodes[t].row and rng.random() < 0.3}
    return Neighbourhood(nodes[0].key, 2, nodes, tuple(Edge(s, t, False) for s, t in sorted(pairs)))


def test_local_moves_cost_arcs_with_their_rows_ends_up_to_date(monkeypatch):
    # Transposition and sifting keep each row's edge ends (under its flat arcs) up to date
    # move by move instead of counting them again: every cost of an arc must see the ends
    # of the order as it is then, and no move may raise the cost of the whole order.
    checked = []

    def fresh_ends(g, i, pos, ends, touching=None):
        row = sorted((v for v in range(len(g.layer_of)) if g.layer_of[v] == i), key=pos.__getitem__)
        assert ends == layout_module._band_ends(g, i, row, pos)
        checked.append(i)
        return flat_cost(g, i, pos, ends, touching)

    flat_cost = layout_module._flat_cost
    monkeypatch.setattr(layout_module, "_flat_cost", fresh_ends)
    rng = random.Random(20261206)
    for _ in range(300):
        g = _Layered(_tangle(rng), [30.0] * 12)
        for move in ("transpose", "sift"):
            layers = [rng.sample(layer, len(layer)) for layer in g.layers]
            pos = _positions(layers, len(g.layer_of))
            before = _count(g, layers, pos)
            if move == "transpose":
                _transpose(g, layers, pos)
            else:
                _sift(g, layers, pos, range(len(layers)), (g.up, g.down))
            assert pos == _positions(layers, len(g.layer_of))
            assert _count(g, layers, pos) <= before, move
    assert len(checked) > 1000  # the arcs within rows were exercised


# --- engines ----------------------------------------------------------------------------

def test_graphviz_engine_renders_when_the_executable_is_there():
    path, _ = gv.find_executable("graphviz")
    if path is None:
        pytest.skip("graphviz-pure is not installed (pip install 'belief-site[graphviz]')")
    ctx = context(*chain_with_sides(), diagram_engine="graphviz")
    result = render_diagrams(ctx)
    assert result.diagnostics == ()
    assert set(nodes_of(result.svg["c"])) == {"p", "q", "a", "c", "d", "e"}
    runner = gv.GraphvizRunner(path)
    hoods = neighbourhoods(ctx)
    items = [(nb, box_widths(nb)) for nb in hoods.values()]
    drawings = runner.layout_many(items)
    assert all(isinstance(d, Drawing) and d.engine == "graphviz" for d in drawings)
    c = drawings[list(hoods).index("c")]
    ys = [box.y for box in c.boxes]  # rows kept: p above a, q above c above d above e
    keys = [n.key for n in hoods["c"].nodes]
    assert ys[keys.index("p")] < ys[keys.index("a")] < ys[keys.index("c")] < ys[keys.index("e")]
    # Cached by DOT hash: a second round runs no process.
    runner.executable = "/nonexistent/graphviz"
    assert all(isinstance(d, Drawing) for d in runner.layout_many(items))


def test_a_bogus_dot_falls_back_to_builtin_with_one_warning_for_the_site():
    """Not one per diagram: 770 lines for a 770-belief network said the same thing."""
    ctx = context(*chain_with_sides(), diagram_engine="/nonexistent/dot")
    result = render_diagrams(ctx)
    assert set(result.svg) == {"p", "q", "a", "c", "d", "e", "f"}
    assert [(d.code, d.message, d.hint) for d in result.diagnostics] == [
        ("W901", "diagram_engine '/nonexistent/dot': cannot run /nonexistent/dot: No such file or directory",
         "the built-in layout was used for all 7 diagrams")]
    builtin = render_diagrams(context(*chain_with_sides())).svg
    assert result.svg == builtin


def test_graphs_graphviz_fails_on_for_different_reasons_get_a_warning_each(monkeypatch):
    ctx = context(*chain_with_sides(), diagram_engine="/nonexistent/dot")
    monkeypatch.setattr(gv.GraphvizRunner, "layout_many", lambda self, items: [f"problem {k % 2}" for k in range(len(items))])
    result = render_diagrams(ctx)
    assert [d.code for d in result.diagnostics] == ["W901"] * 7
    assert all(d.message.startswith(f"diagram for {b}: graphviz failed: problem ")
               for d, b in zip(result.diagnostics, sorted(result.svg)))


def test_a_crash_in_a_batch_fails_one_graph_and_reruns_the_rest(monkeypatch):
    runner = gv.GraphvizRunner("fake-dot")
    calls = []

    def run_once(keys, todo):
        calls.append(list(keys))
        if len(calls) == 1:  # dies on the third graph
            return {k: {"name": "g" + k} for k in keys[:2]}, "fake-dot exited with status 1: boom", False
        return {k: {"name": "g" + k} for k in keys}, "", False

    monkeypatch.setattr(runner, "_run_once", run_once)
    keys = [f"k{i}" for i in range(5)]
    done = runner._run_batch(keys, {k: "{}" for k in keys})
    assert done["k2"] == "fake-dot exited with status 1: boom"
    assert all(isinstance(done[k], dict) for k in ("k0", "k1", "k3", "k4"))
    assert calls == [keys, ["k3", "k4"]]


def test_dot_carries_no_belief_text():
    ctx = context(belief("p", text='"] ; evil -> x [label="'), belief("c", sl("p")))
    nb = neighbourhoods(ctx)["c"]
    body, reversed_ = gv.to_dot(nb, box_widths(nb))
    assert "evil" not in body and '"p"' not in body
    assert "n0 -> n1" in body and "rank=same" in body and reversed_ == [False]
