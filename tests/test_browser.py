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
    tab = context.new_page()
    tab.problems = []
    tab.on("console", lambda m: m.type == "error" and tab.problems.append(f"console: {m.text}"))
    tab.on("requestfailed", lambda r: tab.problems.append(f"failed: {r.url}"))
    tab.on("request", lambda r: None if r.url.startswith(served) else tab.problems.append(f"left: {r.url}"))
    yield tab
    context.close()


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
