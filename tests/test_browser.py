"""What a reader sees, in a real browser: Debian's Chromium driven by Playwright on localhost."""

from __future__ import annotations

import functools
import http.server
import os
import shutil
import threading
from pathlib import Path

import pytest

from .conftest import EXAMPLE, SEED

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]


def _require_browser():
    if not Path(CHROMIUM).exists():
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is missing under CI=true (.ci/run installs it)")
        pytest.skip("no /usr/bin/chromium (apt-get install chromium)")
    return pytest.importorskip("playwright.sync_api")


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # keep test output clean
        pass


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """The example site built and served on 127.0.0.1 (an ephemeral port)."""
    from site_builder.cli import main
    site = tmp_path_factory.mktemp("site") / "site"
    assert main(["build", str(EXAMPLE), "-o", str(site), "-q"]) == 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.fixture(scope="module")
def browser():
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, served):
    """A fresh page that records console errors, failed requests and every request's host."""
    context = browser.new_context()
    tab = _record_problems(context.new_page(), lambda url: url.startswith(served))
    yield tab
    context.close()


def _record_problems(tab, local):
    """Console errors, failed requests and error responses, and requests leaving the site
    (`local(url)` false), collected in `tab.problems`. A request aborted because the test
    navigated on (net::ERR_ABORTED, under load) is not a problem: a missing file is a 404."""
    tab.problems = []
    tab.on("console", lambda m: m.type == "error" and tab.problems.append(f"console: {m.text}"))
    tab.on("pageerror", lambda e: tab.problems.append(f"page error: {e}"))
    tab.on("requestfailed", lambda r: None if r.failure == "net::ERR_ABORTED"
           else tab.problems.append(f"failed: {r.url} ({r.failure})"))
    tab.on("response", lambda r: r.status >= 400 and tab.problems.append(f"HTTP {r.status}: {r.url}"))
    tab.on("request", lambda r: None if local(r.url) else tab.problems.append(f"left: {r.url}"))
    return tab


def test_pages_load_cleanly(page, served):
    for path in ("", f"belief/{SEED}/", "premises/", "out/", "nogoods/"):
        page.goto(served + path)
        page.wait_for_load_state("networkidle")
    assert page.problems == []


def test_index_sorts_and_filters(page, served):
    page.goto(served)
    ids = lambda: page.locator("table.beliefs tbody tr:visible td:first-child code").all_inner_texts()  # noqa: E731
    assert len(ids()) == 5
    page.click("th:has-text('Depth')")
    page.click("th:has-text('Depth')")  # descending
    assert ids()[0] == "attention-universality-grounded-in-structural-richness"
    page.fill("[data-filter-text]", "weight matrices")
    assert ids() == ["attention-is-non-symmetric"]
    page.fill("[data-filter-text]", "")
    page.select_option("[data-filter-kind]", "derived")
    assert sorted(ids()) == ["attention-is-structured-directed-computation",
                             "attention-universality-grounded-in-structural-richness"]


def test_dark_mode_follows_the_system_and_the_toggle(browser, served):
    context = browser.new_context(color_scheme="dark")
    tab = context.new_page()
    tab.goto(served + f"belief/{SEED}/")
    background = lambda: tab.evaluate("getComputedStyle(document.body).backgroundColor")  # noqa: E731
    assert background() == "rgb(18, 18, 18)"
    tab.click("[data-theme-toggle]")
    assert background() == "rgb(255, 255, 255)"
    tab.reload()  # the choice is remembered
    assert background() == "rgb(255, 255, 255)"
    context.close()


def test_nothing_overflows_on_a_375px_phone(browser, served):
    context = browser.new_context(viewport={"width": 375, "height": 800})
    tab = context.new_page()
    for path in ("", f"belief/{SEED}/", "premises/"):
        tab.goto(served + path)
        assert tab.evaluate("document.documentElement.scrollWidth") <= 375, path
    context.close()


def test_clicking_a_diagram_node_opens_that_belief(page, served):
    page.goto(served + f"belief/{SEED}/")
    page.locator("#diagram svg a", has_text="attention-is-non-symmetric").first.click()
    page.wait_for_url("**/belief/attention-is-non-symmetric/")
    assert page.locator("h1").inner_text() == "attention-is-non-symmetric"


def test_keyboard_reaches_the_table_headers_with_a_visible_focus(page, served):
    page.goto(served)
    for _ in range(30):
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.tagName") == "TH":
            break
    assert page.evaluate("document.activeElement.tagName") == "TH"
    outline = page.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline == "solid"
    page.keyboard.press("Enter")
    assert page.evaluate("document.activeElement.getAttribute('aria-sort')") == "ascending"


def test_screenshots_for_review(browser, served, tmp_path):
    out = Path(os.environ.get("BELIEF_SCREENSHOTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    for name, options in (("light", {}), ("dark", {"color_scheme": "dark"}),
                          ("phone", {"viewport": {"width": 375, "height": 800}})):
        context = browser.new_context(**options)
        tab = context.new_page()
        tab.goto(served + f"belief/{SEED}/")
        tab.screenshot(path=str(out / f"belief-{name}.png"), full_page=True)
        context.close()
        assert (out / f"belief-{name}.png").stat().st_size > 10_000
    shutil.rmtree(out) if out == tmp_path else None


# --- Search, hover previews and the graph explorer (issue #4) -------------------------------------

SHARED_NETWORK = "system-design-eem.json"


def _serve(folder: Path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def _watched(context, base: str):
    """A tab that records console errors, failed requests and any request outside `base`'s host."""
    host = base.split("/", 3)[2]
    return _record_problems(context.new_page(), lambda url: url.split("/", 3)[2] == host)


@pytest.fixture(scope="module")
def served_shared(tmp_path_factory):
    """A real network (1,296 beliefs) built and served on 127.0.0.1."""
    from site_builder.cli import main
    from .conftest import require_shared
    network = require_shared() / "networks" / SHARED_NETWORK
    site = tmp_path_factory.mktemp("shared-site") / "site"
    assert main(["build", str(network), "-o", str(site), "-q"]) == 0
    server, url = _serve(site)
    yield url
    server.shutdown()


@pytest.fixture(scope="module")
def served_under_a_sub_path(tmp_path_factory):
    """The example served at /preview/pr-4/, as a pull-request preview would be."""
    from site_builder.cli import main
    root = tmp_path_factory.mktemp("subpath")
    assert main(["build", str(EXAMPLE), "-o", str(root / "preview" / "pr-4"), "-q"]) == 0
    server, url = _serve(root)
    yield url + "preview/pr-4/"
    server.shutdown()


@pytest.fixture
def shared_page(browser, served_shared):
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    yield _watched(context, served_shared)
    context.close()


def _screenshots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("BELIEF_SCREENSHOTS", tmp_path))
    out.mkdir(parents=True, exist_ok=True)
    return out


def _search(tab, words: str) -> list[str]:
    """Type into the header search (focused with "/") and return the ids listed."""
    tab.keyboard.press("/")
    assert tab.evaluate("document.activeElement.id") == "site-search-input"
    tab.keyboard.type(words)
    tab.wait_for_function("document.querySelector('[data-search-count]').textContent.length > 0")
    return _result_ids(tab)


def _result_ids(tab) -> list[str]:
    return tab.locator(".search-result code").all_inner_texts()


def _count(tab) -> int:
    text = tab.locator("[data-search-count]").inner_text()
    return 0 if text.startswith("No belief") else int(text.split()[0])


def _refilter(tab, selector: str, value: str) -> None:
    """Choose a filter value and wait for the new answer."""
    tab.evaluate("document.querySelector('[data-search-count]').textContent = ''")
    tab.select_option(selector, value)
    tab.wait_for_function("document.querySelector('[data-search-count]').textContent.length > 0")


def _explorer_ready(tab) -> None:
    tab.wait_for_selector("[data-graph][data-ready]", timeout=30_000)


def _click_node(tab, node: str) -> None:
    """Fly to a node (as Find does), then click it where the renderer draws it."""
    tab.evaluate("id => window.beliefGraph.select(id, true)", node)
    tab.wait_for_timeout(700)  # the camera animation
    x, y = tab.evaluate("""id => { const r = window.beliefGraph.renderer;
        const at = r.framedGraphToViewport(r.getNodeDisplayData(id)); return [at.x, at.y]; }""", node)
    box = tab.locator("[data-graph-canvas]").bounding_box()
    tab.mouse.click(box["x"] + x, box["y"] + y)


def test_every_page_type_loads_cleanly_with_search_and_explorer(page, served):
    for path in ("", f"belief/{SEED}/", "premises/", "out/", "nogoods/", "graph/", "404.html"):
        page.goto(served + path)
        if path == "graph/":
            _explorer_ready(page)
        _search(page, "attention")  # loads the Pagefind bundle on every page type
        page.wait_for_load_state("networkidle")
    assert page.problems == []


def test_typing_a_word_of_a_claim_lists_that_belief(page, served):
    page.goto(served + "premises/")
    assert _search(page, "matrices") == ["attention-is-non-symmetric"]
    result = page.locator(".search-result").first
    assert result.locator(".status").inner_text() == "IN"
    assert result.locator("mark").first.inner_text().lower() == "matrices"
    assert "weight matrices are different" in result.inner_text()
    page.keyboard.press("ArrowDown")  # into the results, then open
    assert page.evaluate("document.activeElement.className") == "search-result"
    page.keyboard.press("Enter")
    page.wait_for_url("**/belief/attention-is-non-symmetric/")
    assert page.problems == []


def test_slash_does_not_steal_typing(page, served):
    page.goto(served)
    page.click("[data-filter-text]")
    page.keyboard.type("a/b")
    assert page.input_value("[data-filter-text]") == "a/b"
    assert page.evaluate("document.activeElement.id") != "site-search-input"


def test_the_status_filter_narrows_the_results(shared_page, served_shared):
    tab = shared_page
    tab.goto(served_shared)
    _search(tab, "consistency")
    everything = _count(tab)
    _refilter(tab, "[data-search-status]", "OUT")
    out = _count(tab)
    assert 0 < out < everything
    assert set(tab.locator(".search-result .status").all_inner_texts()) == {"OUT"}
    _refilter(tab, "[data-search-status]", "IN")
    assert _count(tab) + out == everything
    assert set(tab.locator(".search-result .status").all_inner_texts()) == {"IN"}
    _refilter(tab, "[data-search-kind]", "derived")
    assert set(tab.locator(".search-result .kind").all_inner_texts()) == {"derived"}
    assert tab.problems == []


def test_search_and_explorer_work_under_a_sub_path(browser, served_under_a_sub_path):
    context = browser.new_context()
    tab = _watched(context, served_under_a_sub_path)
    tab.goto(served_under_a_sub_path + "out/")
    assert _search(tab, "softmax") == ["attention-scaled-by-sqrt-dk"]
    assert tab.get_attribute(".search-result", "href") == "/preview/pr-4/belief/attention-scaled-by-sqrt-dk/"
    tab.goto(served_under_a_sub_path + "graph/")
    _explorer_ready(tab)
    _click_node(tab, SEED)
    tab.wait_for_url(f"**/preview/pr-4/belief/{SEED}/")
    assert tab.problems == []
    context.close()


def test_hovering_or_focusing_a_belief_link_previews_it(page, served):
    page.goto(served + f"belief/{SEED}/")
    link = page.locator("#why a[data-claim]").first
    claim, status = link.get_attribute("data-claim"), link.get_attribute("data-status")
    tip = page.locator(".hover-preview")
    link.hover()
    tip.wait_for(state="visible")
    assert claim in tip.inner_text() and status in tip.inner_text()
    assert tip.get_attribute("role") == "tooltip"
    assert link.get_attribute("aria-describedby") == tip.get_attribute("id")
    page.keyboard.press("Escape")
    tip.wait_for(state="hidden")
    page.mouse.move(0, 0)
    link.focus()
    tip.wait_for(state="visible")
    page.evaluate("document.activeElement.blur()")
    tip.wait_for(state="hidden")
    assert link.get_attribute("aria-describedby") is None
    assert page.problems == []


def test_the_explorer_renders_the_example_and_a_click_opens_the_belief(page, served, tmp_path):
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(served + "graph/")
    _explorer_ready(page)
    assert page.evaluate("window.beliefGraph.graph.order") == 5
    page.screenshot(path=str(_screenshots(tmp_path) / "explorer-example.png"))
    _click_node(page, "attention-is-non-symmetric")
    page.wait_for_url("**/belief/attention-is-non-symmetric/")
    assert page.problems == []


def test_the_explorer_renders_the_whole_shared_network(shared_page, served_shared, tmp_path):
    tab = shared_page
    tab.goto(served_shared + "graph/")
    _explorer_ready(tab)
    data = tab.evaluate("fetch('graph.json').then(r => r.json())")
    assert tab.evaluate("window.beliefGraph.graph.order") == len(data["nodes"]) == 1296
    # Every belief is drawn inside the canvas at the first view.
    outside = tab.evaluate("""() => { const r = window.beliefGraph.renderer, box = r.getDimensions();
        return window.beliefGraph.graph.filterNodes(n => { const d = r.getNodeDisplayData(n);
          const at = r.framedGraphToViewport(d); return d.hidden || at.x < 0 || at.y < 0 || at.x > box.width || at.y > box.height; }).length; }""")
    assert outside == 0
    shots = _screenshots(tmp_path)
    tab.screenshot(path=str(shots / "explorer-shared.png"))
    # Filters hide what does not match; highlighting keeps what the selected belief rests on.
    tab.select_option("[data-graph-status]", "OUT")
    out = sum(1 for n in data["nodes"] if n["status"] == "OUT")
    assert tab.locator("[data-graph-message]").inner_text() == f"Showing {out} of 1296 beliefs."
    hidden = tab.evaluate("window.beliefGraph.graph.filterNodes(n => window.beliefGraph.renderer.getNodeDisplayData(n).hidden).length")
    assert hidden == 1296 - out
    tab.select_option("[data-graph-status]", "")
    deepest = max(data["nodes"], key=lambda n: (n["depth"], n["id"]))["id"]
    tab.fill("[data-graph-find]", deepest)
    tab.keyboard.press("Enter")
    tab.check("input[name=graph-highlight][value=ancestors]")
    info = tab.locator("[data-graph-info]")
    assert deepest in info.inner_text() and "highlighted beliefs it rests on" in info.inner_text()
    tab.wait_for_timeout(500)
    tab.screenshot(path=str(shots / "explorer-shared-ancestors.png"))
    _click_node(tab, deepest)
    tab.wait_for_url(f"**/belief/{deepest}/")
    assert tab.locator("h1").inner_text() == deepest
    assert tab.problems == []
    for name in ("explorer-shared.png", "explorer-shared-ancestors.png"):
        assert (shots / name).stat().st_size > 20_000


def test_the_explorer_find_box_selects_and_links_by_keyboard(page, served):
    page.goto(served + "graph/")
    _explorer_ready(page)
    page.click("[data-graph-find]")
    page.keyboard.type("universality")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.dataset.node") == "attention-universality-grounded-in-structural-richness"
    page.keyboard.press("Enter")
    open_link = page.locator("[data-graph-info] a")
    assert open_link.get_attribute("href") == "../belief/attention-universality-grounded-in-structural-richness/"
    assert page.url.endswith("#attention-universality-grounded-in-structural-richness")
    assert page.problems == []


def test_keyboard_reaches_search_table_and_diagram_links_with_a_visible_focus(page, served):
    def tab_until(check: str, limit: int = 60) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate(check):
                return
        raise AssertionError(f"Tab never reached: {check}")

    page.goto(served)
    tab_until("document.activeElement.id === 'site-search-input'")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    tab_until("document.activeElement.tagName === 'TH'")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    tab_until("document.activeElement.closest('table.beliefs tbody') !== null")
    assert page.evaluate("getComputedStyle(document.activeElement).outlineStyle") == "solid"
    page.goto(served + f"belief/{SEED}/")
    tab_until("document.activeElement.closest('#diagram svg') !== null", limit=120)
    stroke = page.evaluate("getComputedStyle(document.activeElement.querySelector('rect')).strokeWidth")
    assert stroke == "3px"
    assert page.problems == []


@pytest.fixture(scope="module")
def served_long(tmp_path_factory):
    """A network whose claims hold a long unbroken word, built and served."""
    import json
    from site_builder.cli import main
    root = tmp_path_factory.mktemp("long")
    word = "Concurrent" + "SkipList" * 40
    nodes = {"p": {"text": f"A premise about {word}, which no line can hold.", "truth_value": "IN"},
             "d": {"text": "Rests on it.", "truth_value": "IN",
                   "justifications": [{"type": "SL", "antecedents": ["p"], "outlist": []}]}}
    (root / "network.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    site = root / "site"
    assert main(["build", str(root / "network.json"), "-o", str(site), "-q", "--no-search"]) == 0
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()


@pytest.mark.parametrize("path", ["belief/p/", "belief/d/", ""])
def test_a_long_unbroken_word_in_a_claim_wraps_on_a_phone(browser, served_long, path):
    """The claim and its echoes had no overflow-wrap: a 375 px page scrolled sideways, and
    the index's columns went out of view."""
    context = browser.new_context(viewport={"width": 375, "height": 700})
    tab = context.new_page()
    tab.goto(served_long + path)
    assert tab.evaluate("document.documentElement.scrollWidth") <= 375
    if path == "":
        status = tab.locator("tbody tr").first.locator(".status")
        box = status.bounding_box()
        assert box is not None and box["x"] + box["width"] <= tab.evaluate(
            "document.querySelector('table').parentElement.getBoundingClientRect().right") + 1
    context.close()


def test_without_javascript_the_index_shows_no_filters_that_do_nothing(browser, served):
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.goto(served)
    assert tab.locator("[data-filters]").count() == 1 and not tab.locator("[data-filters]").is_visible()
    assert tab.locator("tbody tr").count() == 5  # the rows are all there
    context.close()


def test_escape_closes_the_search_panel_and_keeps_it_closed(page, served):
    """Escape from a result closed the panel and focusing the box searched again, opening it;
    a third Escape (blur, focus) opened it once more."""
    page.goto(served + "premises/")
    _search(page, "matrices")
    box = page.locator("#site-search-input")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)  # anything a focus would search again has shown by then
    assert box.get_attribute("aria-expanded") == "false"
    assert page.evaluate("document.activeElement.id === 'site-search-input'")
    page.keyboard.press("Escape")  # on a closed panel: leaves the box, panel still closed
    page.wait_for_timeout(300)
    assert box.get_attribute("aria-expanded") == "false"
    assert not page.evaluate("document.activeElement.id === 'site-search-input'")
    page.keyboard.press("Escape")
    page.wait_for_timeout(300)
    assert box.get_attribute("aria-expanded") == "false"
    box.focus()
    box.fill("attention")  # typed, and Escape before the results arrive: they never show
    page.keyboard.press("Escape")
    page.wait_for_timeout(600)
    assert box.get_attribute("aria-expanded") == "false"
    assert page.problems == []


def test_the_explorer_survives_a_malformed_fragment_and_follows_a_changed_one(page, served):
    """`graph/#%E0%A4%A` threw in decodeURIComponent and the explorer said the network could
    not be loaded; a fragment changed on the open page selected nothing."""
    page.goto(served + "graph/#%E0%A4%A")
    _explorer_ready(page)
    assert page.locator("[data-graph-info]").is_hidden()
    page.evaluate(f"location.hash = '#{SEED}'")
    link = page.locator("[data-graph-info] a")
    link.wait_for(state="visible")
    assert link.get_attribute("href") == f"../belief/{SEED}/"
    assert page.problems == []


HEBREW = "העובדה הזאת נכונה!"
"""A claim in a right-to-left script, ending in a mark that has no direction of its own."""


@pytest.fixture(scope="module")
def served_changes(tmp_path_factory):
    """A site built with --diff-base: d's claim reworded (a long unbroken word added), p retracted,
    r's claim given a bidi override; h, which d also rests on, is a claim in Hebrew."""
    import json
    from site_builder.cli import main
    root = tmp_path_factory.mktemp("changes")
    word = "Concurrent" + "SkipList" * 40

    def network(p_status: str, d_claim: str, r_claim: str) -> dict:
        return {"nodes": {"p": {"text": "A premise.", "truth_value": p_status},
                          "h": {"text": HEBREW, "truth_value": "IN"},
                          "r": {"text": r_claim, "truth_value": "IN"},
                          "d": {"text": d_claim, "truth_value": "IN",
                                "justifications": [{"type": "SL", "antecedents": ["p", "h"], "outlist": []}]}}}
    (root / "base.json").write_text(json.dumps(network("IN", "It rests on the premise.", "The cache is stable.")),
                                    encoding="utf-8")
    (root / "head.json").write_text(json.dumps(network("OUT", f"It rests on the {word} premise.",
                                                       "The cache is \u202eELBATS TON\u202c today.")),
                                    encoding="utf-8")
    site = root / "site"
    assert main(["build", str(root / "head.json"), "-o", str(site), "-q", "--no-search", "--no-cache",
                 "--diff-base", str(root / "base.json")]) == 0
    server, url = _serve(site)
    yield url
    server.shutdown()


def test_a_change_tag_opens_what_changed_word_by_word(browser, served_changes):
    """A reviewer on a belief page follows its "edited" tag to the changes page, scrolled to
    that belief, where the removed and added words are marked (struck through, underlined,
    and said to screen readers), and a long word still fits a phone."""
    context = browser.new_context(viewport={"width": 375, "height": 700})
    tab = _watched(context, served_changes)
    tab.goto(served_changes + "belief/d/")
    tab.get_by_role("link", name="edited").click()
    tab.wait_for_url("**/changes/#edited-d")
    entry = tab.locator("li:target")
    assert entry.get_attribute("id") == "edited-d" and entry.is_visible()
    box = entry.bounding_box()
    assert box is not None and 0 <= box["y"] < 700  # scrolled into view
    added = entry.locator("ins")
    assert added.inner_text().startswith("Concurrent") and added.is_visible()
    said = tab.evaluate("[...document.querySelectorAll('li:target ins, #edited-p del')].map("
                        "e => getComputedStyle(e, '::before').content)")
    assert said == ['" [added: "', '" [removed: "'], said
    assert "line-through" in tab.evaluate("getComputedStyle(document.querySelector('#edited-p del')).textDecorationLine")
    assert tab.evaluate("document.documentElement.scrollWidth") <= 375
    assert tab.problems == []
    context.close()


_ENDS_LEFT = """e => {
  const node = [...e.querySelectorAll("*"), e].flatMap(n => [...n.childNodes])
                 .find(n => n.nodeType === 3 && n.data.includes("!"));
  const range = document.createRange();
  const left = i => { range.setStart(node, i); range.setEnd(node, i + 1); return range.getBoundingClientRect().left; };
  return left(node.data.indexOf("!")) < left(node.data.indexOf("ה"));
}"""
"""Whether the element's claim ends at the left: its "!" left of its first letter, as in a
right-to-left paragraph (in a left-to-right one a final "!" stands at the right)."""


def test_a_right_to_left_claim_reads_right_to_left_and_the_changes_page_shows_bidi_controls(browser, served_changes):
    """A Hebrew claim took the page's left-to-right direction, its closing "!" at the right
    where a reader of Hebrew looks for the start: claims and their echoes now take their
    direction from their own letters (a bidi control inside one stays inside). The changes
    page shows the bidi controls an edit added as marks: "\u202eELBATS TON\u202c" displays as
    "NOT STABLE" but reads "ELBATS TON" to search, exports and LLMs."""
    context = browser.new_context()
    page = _watched(context, served_changes)
    page.goto(served_changes + "belief/h/")
    assert page.locator("section.claim").evaluate(_ENDS_LEFT)
    page.goto(served_changes + "belief/d/")
    echo = page.locator(".claim-echo", has_text=HEBREW[:6]).first
    assert echo.is_visible() and echo.evaluate(_ENDS_LEFT)
    page.goto(served_changes + "changes/")
    marks = page.locator("#edited-r ins .hidden-char")
    assert marks.all_inner_texts() == ["U+202E", "U+202C"] and marks.first.is_visible()
    assert "ELBATS TON" in page.locator("#edited-r").inner_text()
    shown = page.evaluate("document.body.innerText")
    assert not any(c in shown for c in "\u202a\u202b\u202c\u202d\u202e"), ascii(shown)
    assert page.problems == []
    context.close()
