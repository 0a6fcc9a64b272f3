"""The example network's site, byte for byte, and what a reader finds on its pages.

The golden files under tests/golden/example/ are the example (beliefs/) as built now: every
HTML page, every badge.svg, beliefs.json and llms.txt. After an intended change of the
output, review the diff and accept it with

    UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden.py

which rewrites tests/golden/example/ instead of comparing.
"""

from __future__ import annotations

import difflib
import os
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest

from .conftest import EXAMPLE, SEED

GOLDEN = Path(__file__).resolve().parent / "golden" / "example"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
HOW_TO_UPDATE = ("if the change is intended, review it and run "
                 "`UPDATE_GOLDEN=1 .venv/bin/python -m pytest -q tests/test_golden.py` "
                 "to rewrite tests/golden/example/")

PREMISES = ("attention-is-non-symmetric", "self-attention-permutation-invariant-needs-positional-encoding",
            "attention-scaled-by-sqrt-dk")
DEPENDENT = "attention-universality-grounded-in-structural-richness"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The example built through the command line with a fixed configuration (independent
    of the working folder and of the repository's mkdocs.yml)."""
    from site_builder.cli import main

    root = tmp_path_factory.mktemp("golden")
    config = root / "mkdocs.yml"
    config.write_text(f"site_name: belief-site example\nplugins:\n  - beliefs:\n      source: {EXAMPLE}\n",
                      encoding="utf-8")
    out = root / "site"
    assert main(["build", "--config", str(config), "-o", str(out), "--quiet"]) == 0
    return out


def golden_set(site: Path) -> dict[str, bytes]:
    """The files kept as golden: HTML pages, badge.svg files, beliefs.json, llms.txt."""
    chosen = {}
    for path in sorted(site.rglob("*")):
        name = path.relative_to(site).as_posix()
        if path.is_file() and (path.suffix == ".html" or path.name == "badge.svg"
                               or name in ("beliefs.json", "llms.txt")):
            chosen[name] = path.read_bytes()
    return chosen


def _stored() -> dict[str, bytes]:
    if not GOLDEN.is_dir():
        return {}
    return {p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in sorted(GOLDEN.rglob("*")) if p.is_file()}


def _diff(name: str, old: bytes, new: bytes) -> str:
    lines = difflib.unified_diff(old.decode("utf-8", "replace").splitlines(),
                                 new.decode("utf-8", "replace").splitlines(),
                                 f"golden/{name}", f"built/{name}", lineterm="", n=1)
    return "\n".join(list(lines)[:40])


def test_the_example_site_matches_the_golden_files(site):
    built = golden_set(site)
    assert len([n for n in built if n.startswith("belief/") and n.endswith("index.html")]) == 5
    if UPDATE:
        if GOLDEN.exists():
            shutil.rmtree(GOLDEN)
        for name, data in built.items():
            target = GOLDEN / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        print(f"UPDATE_GOLDEN=1: rewrote {len(built)} files in {GOLDEN}")
    stored = _stored()
    assert stored, f"no golden files in {GOLDEN}; {HOW_TO_UPDATE}"
    missing = sorted(set(built) - set(stored))
    extra = sorted(set(stored) - set(built))
    changed = sorted(n for n in set(built) & set(stored) if built[n] != stored[n])
    problems = [f"new output files without a golden copy: {missing}"] if missing else []
    problems += [f"golden files the build no longer writes: {extra}"] if extra else []
    problems += [_diff(n, stored[n], built[n]) for n in changed[:3]]
    if len(changed) > 3:
        problems.append(f"... and {len(changed) - 3} more changed files: {changed[3:]}")
    assert not problems, "the built site differs from tests/golden/example/ " \
        f"({len(changed)} changed):\n" + "\n\n".join(problems) + f"\n\n{HOW_TO_UPDATE}"


def test_the_golden_files_cover_every_page(site):
    stored = _stored()
    pages = {p.relative_to(site).as_posix() for p in site.rglob("*.html")}
    assert pages and pages <= set(stored)
    assert {"badge.svg", "beliefs.json", "llms.txt"} <= set(stored)
    assert {f"belief/{p.stem}/badge.svg" for p in EXAMPLE.glob("*.md")} <= set(stored)


# -- a small DOM over html.parser -------------------------------------------------------------------

class Element:
    def __init__(self, tag: str, attrs: dict[str, str | None], parent: Element | None):
        self.tag, self.attrs, self.parent = tag, attrs, parent
        self.children: list[Element | str] = []

    @property
    def text(self) -> str:
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def words(self) -> str:
        return " ".join(self.text.split())

    def all(self, tag: str, **attrs: str) -> list[Element]:
        """Descendants with this tag whose attributes match (`class_` matches one class)."""
        found = []
        for child in self.children:
            if isinstance(child, Element):
                if child.tag == tag and child._matches(attrs):
                    found.append(child)
                found.extend(child.all(tag, **attrs))
        return found

    def one(self, tag: str, **attrs: str) -> Element:
        found = self.all(tag, **attrs)
        assert len(found) == 1, f"expected one <{tag} {attrs}>, found {len(found)}"
        return found[0]

    def _matches(self, attrs: dict[str, str]) -> bool:
        for key, value in attrs.items():
            if key == "class_":
                if value not in (self.attrs.get("class") or "").split():
                    return False
            elif self.attrs.get(key) != value:
                return False
        return True


class _Builder(HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
            "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.current = Element("#document", {}, None)

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in self.VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        assert node is not None and node.parent is not None, f"stray </{tag}>"
        self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse(path: Path) -> Element:
    builder = _Builder()
    builder.feed(path.read_text(encoding="utf-8"))
    builder.close()
    assert builder.current is builder.root, f"unclosed <{builder.current.tag}> in {path}"
    return builder.root


def _ref(li: Element) -> tuple[str, str, str]:
    """(status shown, linked id, href) of a reference item."""
    link = li.all("a")[0]
    return li.one("span", class_="status").text, link.one("code").text, link.attrs["href"]


# -- the seed's page, element by element ---------------------------------------------------------

@pytest.fixture(scope="module")
def seed(site) -> Element:
    return parse(site / "belief" / SEED / "index.html")


def test_seed_page_heading_status_kind_and_depth(seed):
    assert seed.one("head").one("title").text == f"{SEED} · belief-site example"
    article = seed.one("article", class_="belief")
    assert article.attrs["data-status"] == "IN"
    assert article.one("h1").one("code").text == SEED
    assert article.one("p", class_="badges").one("span", class_="status").text == "IN"
    assert article.one("p", class_="kind").words() == "derived · depth 1"


def test_seed_page_dates_and_summary(seed):
    facts = seed.one("dl", class_="facts")
    pairs = [(d.one("dt").text, d.one("dd").one("time").text) for d in facts.all("div")]
    assert pairs == [("Created", "2026-06-21T11:23:58+00:00"), ("Reviewed", "2026-06-21T14:41:08+00:00")]
    summary = seed.one("section", id="summary")
    assert summary.one("h2").text == "Summary"
    assert summary.one("p").text.startswith(
        'Attention in a transformer is a one-way, order-sensitive lookup operation, not a simple '
        '"how alike are these two tokens" score')
    assert summary.one("p").text.endswith("how changes to one token ripple through the sequence.")
    claim = seed.one("section", class_="claim")
    assert claim.one("p").text.startswith("Transformer attention is a structured directed computation")


def test_seed_page_justification_with_linked_antecedents(seed):
    section = seed.one("section", id="justifications")
    block = section.one("div", class_="justification")
    assert "supporting" in block.attrs["class"].split()
    heading = block.one("h3")
    assert heading.words() == ("SL 1 — Three independent mechanical properties of attention collectively "
                               "define it as a directed graph computation rather than pairwise similarity"
                               " supports this belief")
    assert heading.one("span", class_="tag").text == "supports this belief"
    items = block.one("ul", class_="refs").all("li")
    assert [_ref(li) for li in items] == [("IN", p, f"../{p}/") for p in PREMISES]
    for li, premise in zip(items, PREMISES):
        assert li.all("a")[0].attrs["data-status"] == "IN"
        assert li.one("span", class_="claim-echo").text.startswith("— ")


def test_seed_page_dependent_with_role_and_label(seed):
    section = seed.one("section", id="dependents")
    assert section.one("h2").text == "Dependents (1)"
    [item] = section.one("ul", class_="refs").all("li")
    assert _ref(item) == ("IN", DEPENDENT, f"../{DEPENDENT}/")
    assert item.one("span", class_="role").text == (
        "as antecedent of justification 1 “Universality follows from structural richness rather than "
        "from similarity matching”")


def test_seed_page_inline_diagram(seed):
    svg = seed.one("section", id="diagram").one("svg")
    assert svg.attrs["role"] == "img"
    assert svg.attrs["aria-labelledby"] == "belief-diagram-title belief-diagram-desc"
    assert svg.all("title", id="belief-diagram-title")[0].text == f"Dependency diagram of {SEED}"
    assert svg.one("desc").text.startswith(f"{SEED} is IN; 3 antecedents above and 1 dependent below")
    links = {a.attrs["xlink:href"]: a for a in svg.all("a")}
    assert set(links) == {"./", *(f"../{p}/" for p in PREMISES), f"../{DEPENDENT}/"}
    assert links["./"].attrs.get("aria-current") == "page"
    for target in (*PREMISES, DEPENDENT):
        tooltip = links[f"../{target}/"].one("title").text
        assert tooltip.startswith(f"{target} (IN): ")


def test_seed_page_explains_why_it_is_in(seed):
    section = seed.one("section", id="why")
    assert section.one("h2").text == "Why IN"
    steps = section.one("ol", class_="explain").all("li")
    assert [(_ref(li)[1], li.words().split(": ", 1)[1]) for li in steps] == [
        (SEED, "SL justification 1 valid"), *((p, "premise") for p in PREMISES)]


def test_seed_page_traces_three_premises(seed):
    section = seed.one("section", id="trace")
    assert section.one("h2").text == "Rests on 3 premises"
    items = section.one("ul", class_="refs").all("li")
    assert [_ref(li) for li in items] == [("IN", p, f"../{p}/") for p in PREMISES]


def test_seed_page_impact_names_the_dependent_going_out(seed):
    section = seed.one("section", id="impact")
    assert section.one("h2").text == "If this belief were retracted"
    assert section.one("p").text == "1 belief would change:"
    [item] = section.one("ul", class_="refs").all("li")
    statuses = [s.text for s in item.all("span", class_="status")]
    assert statuses == ["IN", "OUT"]  # now IN, would go OUT
    assert item.all("a")[0].one("code").text == DEPENDENT
    assert "→" in item.text


def test_seed_page_embed_snippets_and_links(site, seed):
    section = seed.one("section", id="embed")
    snippets = {d.one("summary").text: d.one("pre").one("code").text for d in section.all("details")}
    alt = f"belief {SEED}"
    assert snippets == {
        "Markdown": f"[![{alt}](badge.svg)](./)",
        "HTML": f'<a href="./"><img src="badge.svg" alt="{alt}"></a>',
        "reStructuredText": f".. image:: badge.svg\n   :target: ./\n   :alt: {alt}",
    }
    assert section.one("img").attrs["src"] == "badge.svg"
    links = {a.text: a.attrs["href"] for a in section.one("p", class_="links").all("a")}
    assert links == {"JSON": "index.json", "badge": "badge.svg"}
    for href in links.values():
        assert (site / "belief" / SEED / href).is_file()


# -- the index --------------------------------------------------------------------------------

def test_index_lists_every_belief_without_javascript(site):
    page = parse(site / "index.html")
    assert page.one("p", class_="counts").words() == "5 beliefs: 5 IN, 0 OUT; 3 premises, 2 derived."
    table = page.one("table", class_="beliefs")
    assert "hidden" not in table.attrs
    headers = [th.text for th in table.one("thead").all("th")]
    assert headers == ["Belief", "Status", "Kind", "Depth", "Dependents"]
    rows = []
    for tr in table.one("tbody").all("tr"):
        cells = tr.all("td")
        link = cells[0].all("a")[0]
        assert link.attrs["href"] == f"belief/{link.one('code').text}/"
        assert (site / link.attrs["href"] / "index.html").is_file()
        rows.append((link.one("code").text, *(c.words() for c in cells[1:])))
        assert tr.attrs["data-status"] == cells[1].words() and tr.attrs["data-kind"] == cells[2].words()
    assert rows == [
        ("attention-is-non-symmetric", "IN", "premise", "0", "1"),
        (SEED, "IN", "derived", "1", "1"),
        ("attention-scaled-by-sqrt-dk", "IN", "premise", "0", "1"),
        (DEPENDENT, "IN", "derived", "2", "0"),
        ("self-attention-permutation-invariant-needs-positional-encoding", "IN", "premise", "0", "1"),
    ]
    # The filters need JavaScript: hidden until the script reveals them, so without it the
    # reader gets the plain, complete table and no dead controls.
    assert "hidden" in page.one("div", class_="filters").attrs
