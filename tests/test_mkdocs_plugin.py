"""The `beliefs` plugin: real `mkdocs build`, `mkdocs serve` and `properdocs build` runs.

Each build is a subprocess of the host's own command line on a project folder written here
(mkdocs.yml, a docs/ page, the belief source outside docs_dir), the way a user runs it:

- every belief page exists, every link resolves and every belief is reachable from the home
  page, with the mkdocs theme, Material and ProperDocs, on the example and a shared network;
- the nav stays small: the part of a belief page that is not the belief (theme, nav, table
  of contents) is as large on a 1,296-belief network as on a 5-belief one;
- a belief page's body is byte for byte the `<main>` of `belief-site build`'s page, and the
  badges and exports are the same files;
- the injection corpus of test_security stays inert in bodies, titles, the nav and the
  search index; nothing on a page loads from another host;
- diagnostics are MkDocs warnings (`--strict` fails), `mkdocs serve` rebuilds when a belief
  changes, objects.inv is merged into an existing inventory.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import html
import json
import os
import posixpath
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
import zlib
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from site_builder.cli import main as belief_site

from .conftest import EXAMPLE, ROOT, SEED, require_shared, stale_echoes
from .test_security import Page, active_content, write_network

PLUGIN = "site_builder.hosts.mkdocs_plugin:BeliefsPlugin"
LARGEST = "system-design-eem.json"
HOSTS = ("mkdocs", "material", "properdocs")
#: theme settings that keep every request on the site (no CDN script, no web fonts)
THEMES = {"mkdocs": "theme:\n  name: mkdocs\n  highlightjs: false\n",
          "material": "theme:\n  name: material\n  font: false\n",
          "properdocs": "theme:\n  name: mkdocs\n  highlightjs: false\n"}
NEEDS = {"material": ("material",), "properdocs": ("properdocs", "properdocs_theme_mkdocs")}


# -- running the hosts -----------------------------------------------------------------------------

def _require(host: str) -> None:
    """Material and ProperDocs are optional extras: skip without them, except under CI=true."""
    missing = [m for m in NEEDS.get(host, ()) if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{', '.join(missing)} missing under CI=true (install '.[test]')")
        pytest.skip(f"{', '.join(missing)} not installed")


def _registered(group: str) -> bool:
    return any(ep.value == PLUGIN for ep in importlib.metadata.entry_points(group=group, name="beliefs"))


@pytest.fixture(scope="module")
def host_env(tmp_path_factory) -> dict[str, str]:
    """The environment of a host subprocess. Until the package declares its entry points, a
    throwaway dist-info on PYTHONPATH registers `beliefs` for both hosts."""
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", DISABLE_MKDOCS_2_WARNING="true")
    if not (_registered("mkdocs.plugins") and _registered("properdocs.plugins")):
        folder = tmp_path_factory.mktemp("entry-points")
        info = folder / "belief_site_plugin_ep-0.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: belief-site-plugin-ep\nVersion: 0.0\n")
        (info / "entry_points.txt").write_text(
            f"[mkdocs.plugins]\nbeliefs = {PLUGIN}\n\n[properdocs.plugins]\nbeliefs = {PLUGIN}\n")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, (str(folder), env.get("PYTHONPATH"))))
    return env


def run_host(env, host: str, config: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`mkdocs ARGS -f CONFIG` (or `properdocs ...`) as a user runs it."""
    program = "properdocs" if host == "properdocs" else "mkdocs"
    done = subprocess.run([sys.executable, "-m", program, *args, "-f", str(config)], env=env,
                          capture_output=True, text=True, timeout=300)
    if check:
        assert done.returncode == 0, done.stderr
    return done


def write_project(folder: Path, host: str, source: Path, options: str = "", extra: str = "") -> Path:
    """mkdocs.yml and one docs page; the belief source stays outside docs_dir."""
    (folder / "docs").mkdir(parents=True, exist_ok=True)
    (folder / "docs" / "index.md").write_text("# Home\n\nOur documentation.\n", encoding="utf-8")
    config = folder / "mkdocs.yml"
    config.write_text(f"site_name: beliefs test\n{THEMES[host]}{extra}plugins:\n  - search\n"
                      f"  - beliefs:\n      source: {json.dumps(str(source))}\n{options}", encoding="utf-8")
    return config


_BUILDS: dict[tuple, Path] = {}


def build(env, tmp_path_factory, host: str, source: Path, extra: str = "") -> Path:
    """The site of `source` built by `host` (once per module for the same arguments)."""
    key = (host, str(source), extra)
    if key not in _BUILDS:
        _require(host)
        folder = tmp_path_factory.mktemp(f"{host}-{source.stem}")
        config = write_project(folder, host, source, extra=extra)
        done = run_host(env, host, config, "build", "-d", str(folder / "site"))
        # The shared networks carry real warnings (W307, W403): those are the only ones.
        others = [line for line in done.stderr.splitlines()
                  if re.match(r"(WARNING|ERROR)\b", line) and not re.search(r"-\s+beliefs: ", line)]
        assert others == [], done.stderr
        _BUILDS[key] = folder / "site"
    return _BUILDS[key]


def standalone(tmp_path_factory, source: Path, extra: str = "") -> Path:
    """The same source built by `belief-site build` with the same site settings."""
    key = ("belief-site", str(source), extra)
    if key not in _BUILDS:
        folder = tmp_path_factory.mktemp(f"standalone-{source.stem}")
        config = folder / "mkdocs.yml"
        config.write_text(f"site_name: beliefs test\n{extra}", encoding="utf-8")
        assert belief_site(["build", str(source), "-o", str(folder / "site"), "--config", str(config), "-q"]) == 0
        _BUILDS[key] = folder / "site"
    return _BUILDS[key]


def shared_network(name: str = LARGEST) -> Path:
    return require_shared() / "networks" / name


# -- reading pages back ----------------------------------------------------------------------------------

WRAPPER = '<div class="belief-site">\n'
_DIV = re.compile(r"<div\b|</div>")


def fragment(html_text: str) -> str:
    """The body the plugin put in (inside its wrapper), found by counting nested divs."""
    start = html_text.index(WRAPPER) + len(WRAPPER)
    depth = 1
    for match in _DIV.finditer(html_text, start):
        depth += 1 if match.group() == "<div" else -1
        if depth == 0:
            return html_text[start:match.start()]
    raise AssertionError("unclosed wrapper")


def main_of(html_text: str) -> str:
    """The `<main>` content of a standalone page."""
    return html_text.split('<main id="main">\n', 1)[1].rsplit("</main>", 1)[0]


def belief_pages(site: Path, prefix: str = "belief") -> dict[str, Path]:
    """Belief id -> its page (listing pages under `_...` left out)."""
    base = site / prefix
    return {p.parent.relative_to(base).as_posix().replace("/", ":"): p
            for p in base.rglob("index.html") if p.parent != base and not p.parent.name.startswith("_")}


def ids_of(source: Path) -> set[str]:
    if source.is_dir():
        return {p.stem for p in source.glob("*.md")}
    return set(json.loads(source.read_text(encoding="utf-8"))["nodes"])


class _Requests(HTMLParser):
    """URLs a browser fetches on its own (not links a reader follows)."""

    FETCHING = {"script": "src", "img": "src", "iframe": "src", "source": "src", "audio": "src",
                "video": "src", "embed": "src", "object": "data"}

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag in self.FETCHING and values.get(self.FETCHING[tag]):
            self.urls.append(values[self.FETCHING[tag]])
        if tag == "link" and values.get("href") and set((values.get("rel") or "").split()) & {
                "stylesheet", "icon", "preload", "preconnect", "prefetch", "modulepreload", "manifest",
                "dns-prefetch"}:
            self.urls.append(values["href"])


_URL_ATTR = re.compile(r'\s(?:href|src)="([^"]*)"')
_FETCHING = re.compile(r"<(?:script|img|iframe|source|audio|video|embed|object|link)\b[^>]*>", re.I)


def link_graph(site: Path) -> tuple[dict[str, list[str]], list[str]]:
    """Page -> the pages it links to, and every internal link that resolves to no file.

    (test_build's helpers resolve each link on disk; this one works on the file list, which
    a 1,296-belief MkDocs site, every page linking ~100 times through its nav, needs.)"""
    files = {p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()}
    graph, broken = {}, []
    for page in sorted(f for f in files if f.endswith(".html") and f != "404.html"):
        targets = []
        # Theme and core templates quote every attribute with ": a pattern finds them all.
        for link in map(html.unescape, _URL_ATTR.findall((site / page).read_text(encoding="utf-8"))):
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = posixpath.normpath(posixpath.join(posixpath.dirname(page), unquote(parts.path)))
            if target not in files:
                target = posixpath.join(target, "index.html") if target != "." else "index.html"
            if target in files:
                targets.append(target)
            else:
                broken.append(f"{page} -> {link}")
        graph[page] = targets
    return graph, broken


def broken_links(site: Path) -> list[str]:
    return link_graph(site)[1]


def other_hosts(site: Path) -> list[str]:
    """Every request to another host that a page or stylesheet of the site would make."""
    found = []
    for path in site.rglob("*.html"):
        parser = _Requests()
        for tag in _FETCHING.findall(path.read_text(encoding="utf-8")):
            parser.feed(tag)
        found += [f"{path.relative_to(site)}: {u}" for u in parser.urls if re.match(r"(?i)([a-z]+:)?//", u)]
    for path in site.rglob("*.css"):
        text = path.read_text(encoding="utf-8", errors="replace")
        found += [f"{path.relative_to(site)}: {u}" for u in re.findall(r"""url\(\s*['"]?((?:https?:)?//[^)'"]+)""", text)]
        found += [f"{path.relative_to(site)}: @import" for _ in re.findall(r"@import\s+(?:url\()?['\"]?(?:https?:)?//", text)]
    return found


# -- every page, every link, every host ------------------------------------------------------------------

SOURCES = {"example": lambda: EXAMPLE, "shared": shared_network}


@pytest.mark.parametrize("host", HOSTS)
@pytest.mark.parametrize("network", list(SOURCES))
def test_every_belief_page_exists_and_every_link_resolves(host_env, tmp_path_factory, host, network):
    source = SOURCES[network]()
    site = build(host_env, tmp_path_factory, host, source)
    pages = belief_pages(site)
    assert set(pages) == ids_of(source)
    for listing in ("", "_premises/", "_out/", "_nogoods/"):
        assert (site / "belief" / listing / "index.html").is_file(), listing
    for belief_id, page in pages.items():
        assert (page.parent / "index.json").is_file() and (page.parent / "badge.svg").is_file(), belief_id
        assert f"<title>{belief_id} - beliefs test</title>" in page.read_text(encoding="utf-8")
    for name in ("beliefs.json", "beliefs.schema.json", "badge.svg", "llms.txt", "objects.inv",
                 "assets/belief-site/fragments.css", "assets/belief-site/site.js"):
        assert (site / name).is_file(), name
    graph, broken = link_graph(site)
    assert broken == []
    seen, todo = set(), ["index.html"]
    while todo:
        page = todo.pop()
        if page not in seen:
            seen.add(page)
            todo += graph.get(page, [])
    unreached = {p.relative_to(site).as_posix() for p in pages.values()} - seen
    assert unreached == set(), "belief pages not linked from the site"
    assert other_hosts(site) == []


@pytest.mark.parametrize("host", ("mkdocs", "material"))
def test_the_nav_stays_small(host_env, tmp_path_factory, host):
    """Beliefs never enter the nav: what surrounds a belief's body does not grow with the network."""
    def chrome(site: Path) -> list[int]:
        sizes = []
        for page in belief_pages(site).values():
            text = page.read_text(encoding="utf-8")
            sizes.append(len(text) - len(fragment(text)))
        return sizes

    small = chrome(build(host_env, tmp_path_factory, host, EXAMPLE))
    large_site = build(host_env, tmp_path_factory, host, shared_network())
    large = chrome(large_site)
    assert len(large) > 1000
    # Page titles, edit links and tables of contents differ a little from page to page.
    assert max(large) < max(small) + 2000, (max(small), max(large))
    nav_text = (large_site / "index.html").read_text(encoding="utf-8")
    assert len(nav_text) < 40_000 and "All beliefs" in nav_text


# -- the same content as `belief-site build` ----------------------------------------------------------------

@pytest.mark.parametrize("host", ("mkdocs", "material"))
def test_bodies_badges_and_exports_equal_the_standalone_build(host_env, tmp_path_factory, host):
    source = shared_network()
    site = build(host_env, tmp_path_factory, host, source)
    alone = standalone(tmp_path_factory, source)
    ours, theirs = belief_pages(site), belief_pages(alone)
    assert set(ours) == set(theirs)
    for belief_id, page in ours.items():
        body = fragment(page.read_text(encoding="utf-8"))
        assert body == main_of(theirs[belief_id].read_text(encoding="utf-8")), belief_id
        for name in ("index.json", "badge.svg", "badge.json"):
            assert (page.parent / name).read_bytes() == (theirs[belief_id].parent / name).read_bytes()
    for name in ("beliefs.json", "beliefs.schema.json", "badge.svg", "llms.txt", "objects.inv"):
        assert (site / name).read_bytes() == (alone / name).read_bytes(), name
    # Listing pages: the same rows (their links are relative to where each host puts them).
    row = re.compile(r'<tr data-status="(IN|OUT)" data-kind="(\w+)"><td><a href="[^"]*"[^>]*><code>([^<]+)</code>')
    assert (row.findall(fragment((site / "belief" / "index.html").read_text(encoding="utf-8")))
            == row.findall(main_of((alone / "index.html").read_text(encoding="utf-8"))))


# -- untrusted text --------------------------------------------------------------------------------------

SITE_URL = 'site_url: "https://example.org/kb/"\n'
MARKERS = ("alert(", "evil.example", "onerror", "onload", "onmouseover", "msgbox", "7*7")


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("corpus") / "beliefs"
    write_network(source)
    return source


class _Markup(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


@pytest.mark.parametrize("host", ("mkdocs", "material"))
def test_the_injection_corpus_stays_inert(host_env, tmp_path_factory, corpus, host):
    site = build(host_env, tmp_path_factory, host, corpus, SITE_URL)
    alone = standalone(tmp_path_factory, corpus, SITE_URL)
    pages = belief_pages(site)
    assert len(pages) == len(ids_of(corpus))
    listings = [site / "belief" / f / "index.html" for f in ("", "_premises", "_out", "_nogoods")]
    for path in [*pages.values(), *listings]:
        text = path.read_text(encoding="utf-8")
        body = fragment(text)
        # The body: the standalone renderer's (checked payload by payload in test_security)
        # and, parsed on its own, nothing active.
        assert active_content(Page(body)) == [], path
        # Everything around it (head, title, nav, table of contents, footer): no belief text.
        chrome = text.replace(body, "")
        assert not [m for m in MARKERS if m in chrome], path
        titles = re.findall(r"<title>(.*?)</title>", chrome, re.S)
        assert len(titles) == 1 and re.fullmatch(r"[a-z0-9.:-]+ - beliefs test|[A-Za-z ]+ - beliefs test", titles[0])
    for belief_id, path in pages.items():
        assert fragment(path.read_text(encoding="utf-8")) == main_of(
            (alone / "belief" / belief_id / "index.html").read_text(encoding="utf-8"))
    # Search: belief pages are indexed by id, claim and summary, as text the theme escapes.
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    entries = {e["location"]: e for e in index["docs"]}
    first = entries["belief/p-01/"]
    assert first["title"] == "p-01"
    # Only the claim and the summary (DESIGN "search"), not the panels listing other beliefs.
    assert "Summary 1:" in first["text"] and "Dependency diagram" not in first["text"]
    assert not [loc for loc in entries if loc.startswith("belief/p-01/#")]
    if host == "mkdocs":
        # Plain text (entities decoded): the payload is there as data, not as markup...
        assert "<script>alert(1)</script>" in first["text"] and "Summary 1:" in first["text"]
        # ...and the theme's search page escapes titles and texts before showing them.
        script = (site / "search" / "main.js").read_text(encoding="utf-8")
        assert "escapeHtml(title)" in script and "escapeHtml(summary)" in script
    else:
        # Material keeps HTML in the index: only the markup markdown-it made, payloads escaped.
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in first["text"]
    for location, entry in entries.items():
        if location.startswith("belief/"):
            assert re.fullmatch(r"[a-z0-9.:-]+|All beliefs|Premises|OUT beliefs|Nogoods", entry["title"])
            parser = _Markup()
            parser.feed(entry["text"] if host == "material" else "")
            for tag, attrs in parser.tags:
                assert tag in {"p", "a", "code", "em", "strong", "ul", "ol", "li", "pre", "br", "blockquote",
                               "h1", "h2", "h3", "h4", "h5", "h6", "hr", "del", "s"}, (location, tag)
                assert not any(name.startswith("on") or name == "style" for name in attrs), (location, attrs)
    assert other_hosts(site) == []


# -- diagnostics, serve, inventories, options, the repository's own site ---------------------------------

def _broken_network(folder: Path) -> Path:
    """The example plus a belief resting on a missing one (W401) and a malformed one (E205)."""
    source = folder / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (source / "rests-on-nothing.md").write_text(
        "# rests-on-nothing\n\n**IN** · derived\n\nA claim.\n\n## Justifications\n\n### SL — why\n\n"
        "Antecedents (all must be IN):\n\n- no-such-belief\n", encoding="utf-8")
    (source / "broken.md").write_text("# broken\n\n**MAYBE** · premise\n\nA claim.\n", encoding="utf-8")
    return source


@pytest.mark.parametrize("host", ("mkdocs", "properdocs"))
def test_diagnostics_are_warnings_and_strict_fails_on_them(host_env, tmp_path, host):
    _require(host)
    config = write_project(tmp_path, host, _broken_network(tmp_path))
    strict = run_host(host_env, host, config, "build", "--strict", "-d", str(tmp_path / "strict"), check=False)
    assert strict.returncode != 0
    assert re.search(r"WARNING\s+-\s+beliefs: beliefs/rests-on-nothing\.md:\d+: W401", strict.stderr), strict.stderr
    assert re.search(r"ERROR\s+-\s+beliefs: beliefs/broken\.md:3: E205", strict.stderr), strict.stderr
    relaxed = run_host(host_env, host, config, "build", "-d", str(tmp_path / "site"))
    assert "W401" in relaxed.stderr
    pages = belief_pages(tmp_path / "site")
    assert "rests-on-nothing" in pages and "broken" not in pages  # a document with an error is left out


def test_a_hint_many_warnings_share_is_logged_once(host_env, tmp_path):
    """As in belief-site's own output: a claim echoed by three documents, then edited, gives
    three W503s and one `fmt` hint, under the first, with how many more it is for."""
    _require("mkdocs")
    config = write_project(tmp_path, "mkdocs", stale_echoes(tmp_path))
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"))
    assert len(re.findall(r"WARNING\s+-\s+beliefs: beliefs/[bcd]\.md:\d+: W503", done.stderr)) == 3, done.stderr
    assert done.stderr.count("hint:") == 1, done.stderr
    assert "hint: run `belief-site fmt` to refresh it (and for the 2 other W503 below)" in done.stderr


def test_path_options_may_be_relative_to_the_configuration(host_env, tmp_path):
    """Found by a plugin audit: `source: !relative $config_dir/...` (MkDocs' way to say "beside
    mkdocs.yml" wherever it is run from) was refused: "Expected type str"."""
    _require("mkdocs")
    shutil.copytree(EXAMPLE, tmp_path / "kb")
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "premises.html").write_text("<h1>Our own premises page</h1>\n", encoding="utf-8")
    config = write_project(tmp_path, "mkdocs", tmp_path / "unused")
    config.write_text(config.read_text(encoding="utf-8").split("      source:")[0]
                      + "      source: !relative $config_dir/kb\n      templates: !relative $config_dir/theme\n",
                      encoding="utf-8")
    run_host(host_env, "mkdocs", config, "build", "--strict", "-d", str(tmp_path / "site"))
    assert set(belief_pages(tmp_path / "site")) == ids_of(EXAMPLE)
    assert "Our own premises page" in (tmp_path / "site" / "belief" / "_premises" / "index.html").read_text(encoding="utf-8")
    config.write_text(config.read_text(encoding="utf-8").replace("!relative $config_dir/kb", "!relative"), encoding="utf-8")
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"), check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "beliefs: option 'source': The current file is not set" in done.stderr, done.stderr


@pytest.mark.parametrize("doc, belief_id, options", [
    ("belief/data.json", "data.json", ""),  # a file of the docs
    (None, "base.css", "      prefix: css\n")])  # the mkdocs theme's css/base.css
def test_a_file_where_a_belief_needs_its_folder_stops_the_build(host_env, tmp_path, doc, belief_id, options):
    """Found by a plugin audit: the build moved such a file into the belief's folder without
    a word (with `prefix: css`, every page lost the theme's stylesheet)."""
    _require("mkdocs")
    source = tmp_path / "kb"
    source.mkdir()
    (source / f"{belief_id}.md").write_text(f"# {belief_id}\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    config = write_project(tmp_path, "mkdocs", source, options=options)
    if doc:
        (tmp_path / "docs" / doc).parent.mkdir(parents=True)
        (tmp_path / "docs" / doc).write_text("{}", encoding="utf-8")
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"), check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    taken = doc or "css/base.css"
    assert f"beliefs: {taken} is a file of the docs or the theme where the belief site needs a folder" in done.stderr


def test_a_source_of_which_nothing_can_be_read_stops_the_build(host_env, tmp_path):
    """Found by a plugin audit: a network.json that is not valid JSON was logged and the docs
    were built without a single belief page (exit 0: a deploy would have removed them all),
    while a missing source stopped the build. A broken document among good ones is still
    left out (above)."""
    _require("mkdocs")
    source = tmp_path / "network.json"
    source.write_text('{"nodes": {\n  oops\n', encoding="utf-8")
    config = write_project(tmp_path, "mkdocs", source)
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"), check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert re.search(r"beliefs: network\.json:2: E601 not valid JSON", done.stderr), done.stderr
    assert "beliefs: no belief could be read from" in done.stderr
    empty = tmp_path / "empty"
    empty.mkdir()  # nothing to read is no error: the docs build
    run_host(host_env, "mkdocs", write_project(tmp_path, "mkdocs", empty), "build", "-d", str(tmp_path / "site"))


@pytest.mark.parametrize("extra, options, key", [
    ('repo_url: "https://github.com/o/r\\udcff"\n', "", "repo_url"),
    ('site_name: "Mine \\ud800"\n', "", "site_name"),
    ("", '      visible_to: ["a\\udcff"]\n', "visible_to")])
def test_a_surrogate_escape_in_the_configuration_is_a_clean_error(host_env, tmp_path, extra, options, key):
    """MkDocs's own theme fails on such a value with a traceback: the plugin stops it first."""
    _require("mkdocs")
    config = write_project(tmp_path, "mkdocs", EXAMPLE, options=options, extra=extra)
    if key == "site_name":  # a second site_name: YAML keeps the last one
        config.write_text(config.read_text(encoding="utf-8").replace("site_name: beliefs test\n", ""),
                          encoding="utf-8")
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"), check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert f"beliefs: {key} holds a UTF-16 surrogate escape" in done.stderr


@pytest.mark.parametrize("expression, error", [("r.resting.x", "UndefinedError"), ("1 // 0", "ZeroDivisionError")])
def test_a_template_that_fails_is_a_clean_error_at_its_line(host_env, tmp_path, expression, error):
    _require("mkdocs")
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "premises.html").write_text(f"<h1>Premises</h1>\n{{% for r in rows %}}{{{{ {expression} }}}}{{% endfor %}}\n")
    config = write_project(tmp_path, "mkdocs", EXAMPLE, options="      templates: theme\n")
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"), check=False)
    assert done.returncode != 0 and "Traceback" not in done.stderr, done.stderr
    assert f"beliefs: {tmp_path / 'theme' / 'premises.html'}:2: E805 template error: {error}" in done.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _fetch(url: str) -> str:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.read().decode("utf-8")
    except OSError:
        return ""


def _until(predicate, timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def test_serve_rebuilds_when_a_belief_changes(host_env, tmp_path):
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    config = write_project(tmp_path, "mkdocs", source)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/belief/attention-is-non-symmetric/"
    log = (tmp_path / "serve.log").open("w")
    server = subprocess.Popen([sys.executable, "-m", "mkdocs", "serve", "-f", str(config), "-a", f"127.0.0.1:{port}"],
                              env=host_env, stdout=log, stderr=subprocess.STDOUT)
    try:
        assert _until(lambda: "weight matrices are different" in _fetch(url)), "the first build was not served"
        document = source / "attention-is-non-symmetric.md"
        document.write_text(document.read_text(encoding="utf-8").replace(
            "weight matrices are different", "weight matrices differ (edited)"), encoding="utf-8")
        assert _until(lambda: "weight matrices differ (edited)" in _fetch(url)), "no rebuild after the edit"
        # A dependent's page shows the new claim too: the whole network was evaluated again.
        assert "weight matrices differ (edited)" in _fetch(url.replace("attention-is-non-symmetric", SEED))
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


def _inventory(entries: list[str], project: str = "docs") -> bytes:
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: 1.0\n"
              "# The remainder of this file is compressed using zlib.\n")
    return header.encode() + zlib.compress("".join(e + "\n" for e in entries).encode())


def _entries(data: bytes) -> list[str]:
    return zlib.decompress(data.split(b"\n", 4)[4]).decode().splitlines()


def test_objects_inv_is_merged_with_an_existing_inventory(host_env, tmp_path):
    config = write_project(tmp_path, "mkdocs", EXAMPLE)
    existing = "api.thing py:class 1 api/#thing -"
    (tmp_path / "docs" / "objects.inv").write_bytes(_inventory([existing]))
    run_host(host_env, "mkdocs", config, "build", "--strict", "-d", str(tmp_path / "site"))
    data = (tmp_path / "site" / "objects.inv").read_bytes()
    assert data.startswith(b"# Sphinx inventory version 2\n# Project: docs\n")
    entries = _entries(data)
    assert entries[0] == existing
    assert sorted(e.split()[0] for e in entries[1:]) == sorted(ids_of(EXAMPLE))
    assert all(re.fullmatch(r"[a-z0-9.:-]+ std:label -1 belief/[a-z0-9./-]+/ .+", e) for e in entries[1:])
    # Not an inventory: ours goes beside it, with links relative to its folder.
    (tmp_path / "docs" / "objects.inv").write_bytes(b"not an inventory\n")
    done = run_host(host_env, "mkdocs", config, "build", "-d", str(tmp_path / "site"))
    assert "not a Sphinx v2 inventory" in done.stderr
    assert (tmp_path / "site" / "objects.inv").read_bytes() == b"not an inventory\n"
    beside = _entries((tmp_path / "site" / "belief" / "objects.inv").read_bytes())
    assert f"{SEED} std:label -1 {SEED}/ " in "\n".join(beside)


def test_options_prefix_nav_search_and_file_urls(host_env, tmp_path):
    options = "      prefix: kb/b\n      nav: false\n      search: false\n"
    config = write_project(tmp_path, "mkdocs", EXAMPLE, options, extra="use_directory_urls: false\n")
    run_host(host_env, "mkdocs", config, "build", "--strict", "-d", str(tmp_path / "site"))
    site = tmp_path / "site"
    pages = belief_pages(site, "kb/b")
    assert set(pages) == ids_of(EXAMPLE)
    assert broken_links(site) == []
    home = (site / "index.html").read_text(encoding="utf-8")
    assert "All beliefs" not in home  # nav: false
    body = fragment(pages[SEED].read_text(encoding="utf-8"))
    assert 'href="../attention-is-non-symmetric/index.html"' in body  # file:// links
    entries = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))["docs"]
    assert [e["text"] for e in entries if e["location"].startswith("kb/b/")] == [""] * len(
        [e for e in entries if e["location"].startswith("kb/b/")])
    bad = run_host(host_env, "mkdocs", write_project(tmp_path / "bad", "mkdocs", EXAMPLE, "      prefix: ../up\n"),
                   "build", "-d", str(tmp_path / "bad" / "site"), check=False)
    assert bad.returncode != 0 and "beliefs: option 'prefix' must be a folder inside the site" in bad.stderr
    bad = run_host(host_env, "mkdocs", write_project(tmp_path / "neg", "mkdocs", EXAMPLE, "      diagram_depth: -1\n"),
                   "build", "-d", str(tmp_path / "neg" / "site"), check=False)
    assert bad.returncode != 0 and "beliefs: option 'diagram_depth' must be 0 or more, not -1" in bad.stderr
    bad = run_host(host_env, "mkdocs", write_project(tmp_path / "tpl", "mkdocs", EXAMPLE, "      templates: nowhere\n"),
                   "build", "-d", str(tmp_path / "tpl" / "site"), check=False)
    assert bad.returncode != 0 and "beliefs: option 'templates' names no folder: " in bad.stderr


def test_the_repository_site_builds_strict_with_its_own_pages(host_env, tmp_path):
    """mkdocs.yml at the top: docs/ as docs_dir, the example network's pages beside them."""
    done = run_host(host_env, "mkdocs", ROOT / "mkdocs.yml", "build", "--strict", "-d", str(tmp_path / "site"))
    site = tmp_path / "site"
    for page in ("index.html", "writing-a-belief/index.html", "belief-format/index.html", "options/index.html"):
        assert (site / page).is_file(), page
    assert set(belief_pages(site)) == ids_of(EXAMPLE)
    assert broken_links(site) == [] and other_hosts(site) == []
    assert "WARNING" not in done.stderr


# -- in a browser ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def chromium():
    from .test_browser import ARGS, CHROMIUM, _require_browser
    sync_api = _require_browser()
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _serve(site: Path):
    import functools
    import http.server
    import threading

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


@pytest.mark.parametrize("host", ("mkdocs", "material"))
def test_in_a_browser_nothing_runs_and_nothing_leaves_the_site(host_env, tmp_path_factory, corpus, chromium, host):
    """The corpus site in Chromium: pages and the theme's search show payloads as text; no
    dialog opens, no console error, no request to another host."""
    site = build(host_env, tmp_path_factory, host, corpus, SITE_URL)
    server, base = _serve(site)
    context = chromium.new_context()
    tab = context.new_page()
    problems = []
    tab.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
    tab.on("console", lambda m: m.type == "error" and problems.append(f"console: {m.text}"))
    tab.on("request", lambda r: None if r.url.startswith(base) else problems.append(f"left: {r.url}"))
    try:
        for path in ("belief/p-01/", "belief/_out/", "belief/"):
            tab.goto(base + path)
            tab.wait_for_load_state("networkidle")
        assert tab.locator("table.beliefs tbody tr").count() == len(ids_of(corpus))
        tab.locator("[data-filter-text]").fill("p-01")  # the index script runs inside the theme
        assert tab.locator("table.beliefs tbody tr:visible").count() == 1
        tab.goto(base + "belief/p-01/")
        tab.hover("section#why a[data-claim]")  # the hover preview shows the claim as text
        preview = tab.locator("#belief-preview")
        preview.wait_for(state="visible", timeout=5000)
        assert "<script>alert(1)</script>" in preview.inner_text()
        if host == "mkdocs":
            tab.goto(base + "?q=carries")
            results = tab.locator("#mkdocs-search-results article")
            results.first.wait_for(state="attached", timeout=10000)
        else:
            tab.goto(base + "belief/p-01/")
            tab.wait_for_load_state("networkidle")  # the search worker has its index
            results = tab.locator(".md-search-result__item")
            for _ in range(20):  # typed before the worker was ready, a query is dropped
                tab.locator("input.md-search__input").fill("")
                tab.locator("input.md-search__input").type("carries")
                if _until(lambda: results.count() > 0, timeout=1.0):
                    break
        assert results.count() > 0
        container = tab.locator("#mkdocs-search-results" if host == "mkdocs" else ".md-search-result")
        assert container.locator("script, img, svg, iframe, [onerror], [onload]").count() == 0
        assert "alert(1)" in container.inner_text()
        tab.wait_for_timeout(300)  # a payload that ran would have opened its dialog by now
    finally:
        context.close()
        server.shutdown()
    assert problems == []


def test_a_source_inside_docs_dir_is_read_as_beliefs_only(host_env, tmp_path):
    """Belief documents under docs/ never become Python-Markdown pages, nor is _project.yaml copied."""
    config = write_project(tmp_path, "mkdocs", tmp_path / "docs" / "beliefs")
    shutil.copytree(EXAMPLE, tmp_path / "docs" / "beliefs")
    (tmp_path / "docs" / "beliefs" / "_project.yaml").write_text("repos:\n  x: /home/someone/private\n")
    run_host(host_env, "mkdocs", config, "build", "--strict", "-d", str(tmp_path / "site"))
    site = tmp_path / "site"
    assert set(belief_pages(site)) == ids_of(EXAMPLE)
    assert not (site / "beliefs").exists()


@pytest.mark.parametrize("host", ("mkdocs", "properdocs"))
def test_pages_may_link_what_the_plugin_writes_and_keep_their_nav_titles(host_env, tmp_path, host):
    """Found by a plugin audit: a page embedding a belief's badge failed `--strict` (the
    badges, JSON and exports were written after the build, unknown to MkDocs); an alias got
    no redirect page, so the old URL broke; titles the user's `nav:` gives were replaced by
    the id; and every build printed a DeprecationWarning (edit_uri read through user_configs)."""
    _require(host)
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    doc = source / "attention-is-non-symmetric.md"
    doc.write_text("---\naliases: [old-symmetry]\n---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    config = write_project(tmp_path, host, source, extra=(
        "repo_url: https://github.com/team/kb\nedit_uri: edit/trunk/docs/\n"
        "nav:\n  - Home: index.md\n  - Every belief: belief/index.md\n"
        f"  - The seed: belief/{SEED}/index.md\n"))
    (tmp_path / "docs" / "index.md").write_text(
        f"# Home\n\n![status](belief/{SEED}/badge.svg) [record](belief/{SEED}/index.json) "
        "![all](badge.svg) [every belief](beliefs.json) [for LLMs](llms.txt)\n", encoding="utf-8")
    done = run_host(host_env, host, config, "build", "--strict", "-d", str(tmp_path / "site"))
    assert "WARNING" not in done.stderr and "DeprecationWarning" not in done.stderr, done.stderr
    site = tmp_path / "site"
    home = (site / "index.html").read_text(encoding="utf-8")
    assert f'src="belief/{SEED}/badge.svg"' in home and 'href="beliefs.json"' in home
    assert (site / "belief" / SEED / "badge.svg").read_bytes().startswith(b"<svg")
    redirect = (site / "belief" / "old-symmetry" / "index.html").read_text(encoding="utf-8")
    assert "url=../attention-is-non-symmetric/" in redirect and (site / "belief" / "old-symmetry" / "badge.svg").is_file()
    seed = (site / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert "<title>The seed - beliefs test</title>" in seed and ">Every belief<" in seed
    assert f'href="https://github.com/team/kb/edit/trunk/{source.name}/{SEED}.md"' in seed


def test_a_belief_page_the_users_nav_places_keeps_its_place(host_env, tmp_path):
    """Found by a plugin audit: every belief page was given the plugin's "Beliefs" section
    as parent, so one the user's `nav:` put under "Architecture" had the breadcrumb "Home >
    Beliefs" and the wrong section highlighted. The others still belong to "Beliefs"."""
    _require("material")
    config = write_project(tmp_path, "material", EXAMPLE, extra=(
        "  features: [navigation.path]\nnav:\n  - Home: index.md\n"
        "  - Architecture:\n      - Key belief: belief/attention-is-non-symmetric/index.md\n"))
    run_host(host_env, "material", config, "build", "--strict", "-d", str(tmp_path / "site"))

    def breadcrumb(belief_id: str) -> list[str]:
        page = (tmp_path / "site" / "belief" / belief_id / "index.html").read_text(encoding="utf-8")
        path = page[page.index('class="md-path"'):]
        return re.findall(r'class="md-path__link">\s*<span class="md-ellipsis">\s*([^<]*?)\s*<', path[:path.index("</nav>")])

    assert breadcrumb("attention-is-non-symmetric") == ["Home", "Architecture"]
    assert breadcrumb("attention-scaled-by-sqrt-dk") == ["Home", "Beliefs"]


def test_material_instant_navigation_starts_the_index_script(host_env, tmp_path, chromium):
    """Found by a plugin audit: with Material's navigation.instant, arriving at the index
    through a link swapped the page in without a load event, so its filters stayed hidden
    and its headers did not sort (site.js ran on DOMContentLoaded only)."""
    _require("material")
    site = tmp_path / "site"
    site.mkdir()
    server, base = _serve(site)  # first: site_url must be the address the pages are read at
    try:
        config = write_project(tmp_path, "material", EXAMPLE,
                               extra=f"  features: [navigation.instant]\nsite_url: {base}\n")
        (tmp_path / "docs" / "index.md").write_text("# Home\n\n[All beliefs](belief/index.md)\n", encoding="utf-8")
        run_host(host_env, "material", config, "build", "-d", str(site))
        context = chromium.new_context()
        tab = context.new_page()
        tab.goto(base)
        tab.wait_for_load_state("networkidle")
        tab.evaluate("window.notReloaded = true")
        tab.get_by_role("link", name="All beliefs").first.click()
        tab.wait_for_url(base + "belief/")
        tab.locator("[data-filters]").wait_for(state="visible", timeout=5000)
        assert tab.evaluate("window.notReloaded === true")  # an instant switch, not a page load
        assert tab.locator("table[data-sortable] th").first.get_attribute("tabindex") == "0"
        tab.locator("[data-filter-text]").fill("sqrt")
        assert tab.locator("table.beliefs tbody tr:visible").count() == 1
        context.close()
    finally:
        server.shutdown()


def test_material_instant_navigation_reaches_belief_pages_and_their_diagrams(host_env, tmp_path, chromium):
    """Found by a plugin audit: Material's instant navigation sets `el.href = el.href` on every
    `[href]` of the page it switches to; the diagram's SVG links (`<a href>`, a read-only
    property there) made that throw, and the old page stayed on screen under the new URL."""
    _require("material")
    from playwright.sync_api import expect
    site = tmp_path / "site"
    site.mkdir()
    server, base = _serve(site)
    try:
        config = write_project(tmp_path, "material", EXAMPLE,
                               extra=f"  features: [navigation.instant]\nsite_url: {base}\n")
        (tmp_path / "docs" / "index.md").write_text(f"# Home\n\n[The seed](belief/{SEED}/index.md)\n",
                                                    encoding="utf-8")
        run_host(host_env, "material", config, "build", "-d", str(site))
        context = chromium.new_context()
        tab = context.new_page()
        errors: list[str] = []
        tab.on("pageerror", lambda error: errors.append(str(error)))
        tab.goto(base)
        tab.wait_for_load_state("networkidle")
        tab.evaluate("window.notReloaded = true")
        tab.get_by_role("link", name="The seed").first.click()
        tab.wait_for_url(base + f"belief/{SEED}/")
        expect(tab.locator("article h1")).to_have_text(SEED)
        assert tab.evaluate("window.notReloaded === true")  # an instant switch, not a page load
        assert tab.locator("#diagram svg a").count() > 1
        # Material leaves SVG links to the browser (a page load): they lead on all the same
        tab.locator("#diagram svg a", has_text="attention-scaled-by-sqrt-dk").first.click()
        tab.wait_for_url(base + "belief/attention-scaled-by-sqrt-dk/")
        expect(tab.locator("article h1")).to_have_text("attention-scaled-by-sqrt-dk")
        assert errors == []
        context.close()
    finally:
        server.shutdown()
