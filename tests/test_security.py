"""Untrusted text never becomes active content (DESIGN "Reliability and security").

A network whose claims, summaries, justification labels, sources, source links, dates,
retraction reasons and nogood strings carry an injection corpus is built through the
command line (with a site URL, so the sitemap and robots.txt are written too). Then every
output file is read back with a real parser for its format and checked:

- HTML (html.parser, inline SVG included): no script but the theme's own
  `<script src=".../assets/*.js">`, no `on*` or `style` attribute, no URL attribute with a
  javascript:, vbscript:, data:, protocol-relative or other non-http(s)/mailto target, no
  iframe/object/embed/base/form/style/... element, `<meta>`/`<link>` only the theme's in
  `<head>`, `<img>` only from the site itself; every inline SVG is well-formed XML.
- SVG and XML (ElementTree): well-formed, nothing active.
- JSON: parses, and carries each payload verbatim as data where it was given.
- objects.inv, llms.txt, robots.txt: one line per entry (no line injection).

And nothing is silently dropped: each payload is found (escaped) on the page of the belief
that carries it, in the place it was given; `{{ 7*7 }}` stays literal (no template injection).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pytest

from site_builder.diagnostics import short
from site_builder.render.views import CLAIM_ECHO

BASE_URL = "https://example.org/kb/"


@dataclass(frozen=True)
class Payload:
    text: str
    markdown: str | None = None
    """What a reader sees of `text` rendered as Markdown, when it is not `text` itself."""

    @property
    def visible(self) -> str:
        return self.text if self.markdown is None else self.markdown


#: Carried by claims, summaries, labels, sources, source links, dates, reasons and nogoods.
PAYLOADS = (
    Payload("<script>alert(1)</script>"),
    Payload("<img src=x onerror=alert(1)>"),
    Payload("<svg onload=alert(1)>"),
    Payload("[x](javascript:alert(1))"),
    Payload("[x](JAVASCRIPT:alert(1))"),
    # Markdown decodes the entity (a reader sees `j`); the link is still refused.
    Payload("[x](&#106;avascript:alert(1))", "[x](javascript:alert(1))"),
    Payload("[x](<javascript:alert(1)>)"),
    Payload("<javascript:alert(1)>"),
    Payload("[x](vbscript:msgbox(1))"),
    Payload("[x](data:text/html,<script>alert(1)</script>)"),
    # Images are not rendered (belief text must not load anything): the text stays, the
    # bracket part may become an ordinary http(s) link.
    Payload("![x](https://evil.example/p.png)", "!x"),
    Payload('"><script>alert(1)</script>'),
    Payload("'onmouseover='alert(1)"),
    Payload('" onmouseover="alert(1)" x="'),
    Payload("</title><script>alert(1)</script>"),
    Payload("]]><script>alert(1)</script>"),
    Payload("</svg><script>alert(1)</script>"),
    Payload("<svg><a xlink:href=\"javascript:alert(1)\"><text>x</text></a></svg>"),
    Payload("</textarea></noscript></style><script>alert(1)</script>"),
    Payload("<!--"),
    Payload("<![CDATA[<script>alert(1)</script>]]>"),
    Payload("<style>body{display:none}</style>"),
    Payload("<iframe src=//evil.example>"),
    Payload('<a href="//evil.example">x</a>'),
    Payload('<a href="javascript:alert(1)" onclick="alert(1)">x</a>'),
    Payload("[x](//evil.example)"),
    # Markdown percent-encodes the backslash (`/%5Cevil.example`): it stays on the site.
    Payload("[x](/\\evil.example)", "x"),
    # A safe link whose title tries to break out of its attribute.
    Payload('[x](https://example.org/ok "t\\" onmouseover=\\"alert(1)")', "x"),
    Payload("<form action=//evil.example><button>x</button></form>"),
    Payload("{{ 7*7 }}"),
    Payload("{% raw %}"),
    # Emphasis may eat the asterisks; nothing is evaluated (no 49 anywhere).
    Payload("${7*7} #{7*7} <%= 7*7 %>", "${77} #{77} <%= 7*7 %>"),
    Payload("&lt;script&gt;alert(1)&lt;/script&gt;", "<script>alert(1)</script>"),
    Payload("&#x3C;img src=x onerror=alert(1)&#x3E;", "<img src=x onerror=alert(1)>"),
    Payload("line\u2028separator\u2029paragraph"),
    Payload("<base href=//evil.example>"),
    Payload("<meta http-equiv=refresh content=0;url=//evil.example>"),
    Payload("<object data=x>"),
    Payload("<embed src=x>"),
    Payload("<link rel=stylesheet href=//evil.example/x.css>"),
    Payload("<math><mtext><table><mglyph><style><img src=x onerror=alert(1)>"),
    Payload("<<script>script>alert(1)<</script>/script>"),
)

#: Only for `source_url` (front matter): what a link target may try. All must be refused
#: (no link), except the last, which is harmless as written: the page's href is the literal
#: text `&#106;avascript:...` (a relative URL), never decoded to `javascript:`.
URL_PAYLOADS = (
    "javascript:alert(1)",
    "JAVASCRIPT:alert(1)",
    " javascript:alert(1)",
    "java\tscript:alert(1)",
    "java\nscript:alert(1)",
    "javascript://%0aalert(1)",
    "vbscript:msgbox(1)",
    "data:text/html,<script>alert(1)</script>",
    "//evil.example",
    " //evil.example",
    "\\\\evil.example",
    "/\\evil.example",
    "file:///etc/passwd",
    "&#106;avascript:alert(1)",
)
SAFE_SOURCE_URL = 'https://example.com/paper?a=1&b="><script>alert(1)</script>'

PAYLOAD_COUNT = len(PAYLOADS) + len(URL_PAYLOADS) + 1


def test_the_corpus_is_large_enough():
    assert PAYLOAD_COUNT >= 25
    assert len({p.text for p in PAYLOADS}) == len(PAYLOADS)


# -- the network ------------------------------------------------------------------------------

def _yaml(value: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(value)


def claim_of(n: int, p: Payload) -> str:
    return f"{p.text}\n\nClaim {n} carries {p.text} inline."


def summary_of(n: int, p: Payload) -> str:
    return f"Summary {n}: {p.text}"


def label_of(n: int, p: Payload) -> str:
    return f"Label {n}: {p.text}"


def echo(text: str) -> str:
    """A claim on one line, as echoed after a reference (checks.echo_of)."""
    return " ".join(line.strip() for line in text.split("\n") if line.strip())


def write_network(folder: Path) -> None:
    """For payload n: premise p-NN (IN; claim, summary, source, source_url, updated_at),
    premises q-NN (OUT, `Reason OUT:` line) and r-NN (OUT, front-matter retract_reason),
    derived d-NN (label; SL on p-NN unless q-NN or r-NN; odd n pinned OUT with a reason),
    nogood-NNN (discovered, resolution); u-NN premises carry URL_PAYLOADS as source_url."""
    folder.mkdir(parents=True)
    nogoods = []
    for n, p in enumerate(PAYLOADS, 1):
        (folder / f"p-{n:02}.md").write_text(
            f"---\nsource_url: {_yaml(p.text)}\nupdated_at: {_yaml(p.text)}\n---\n"
            f"# p-{n:02}\n\n**IN** · premise — {p.text}\n\n{claim_of(n, p)}\n\n"
            f"## Summary\n\n{summary_of(n, p)}\n", encoding="utf-8")
        (folder / f"q-{n:02}.md").write_text(
            f"# q-{n:02}\n\n**OUT** · premise\n\nReason OUT: {p.text}\n\n"
            f"Premise q-{n:02} is retracted.\n", encoding="utf-8")
        (folder / f"r-{n:02}.md").write_text(
            f"---\nmetadata:\n  retract_reason: {_yaml(p.text)}\n---\n"
            f"# r-{n:02}\n\n**OUT** · premise\n\nPremise r-{n:02} is retracted.\n", encoding="utf-8")
        pinned = n % 2 == 1
        head = (f"**OUT** · derived (depth 1)\n\nReason OUT: {p.text}" if pinned
                else "**IN** · derived (depth 1)")
        (folder / f"d-{n:02}.md").write_text(
            f"# d-{n:02}\n\n{head}\n\n{claim_of(n, p)}\n\n## Summary\n\n{summary_of(n, p)}\n\n"
            f"## Justifications\n\n### SL — {label_of(n, p)}\n\nAntecedents (all must be IN):\n\n"
            f"- p-{n:02}\n\nUnless (all must be OUT):\n\n- q-{n:02}\n- r-{n:02}\n", encoding="utf-8")
        nogoods.append(f"- id: nogood-{n:03}\n  nodes: [p-{n:02}, q-{n:02}]\n"
                       f"  discovered: {_yaml(p.text)}\n  resolution: {_yaml(p.text)}\n")
    nogoods.append(f"- id: {_yaml('<img src=x onerror=alert(1)>')}\n  nodes: [p-01, r-01]\n")
    for n, url in enumerate((*URL_PAYLOADS, SAFE_SOURCE_URL), 1):
        (folder / f"u-{n:02}.md").write_text(
            f"---\nsource_url: {_yaml(url)}\n---\n# u-{n:02}\n\n**IN** · premise\n\n"
            f"Source link {n}.\n", encoding="utf-8")
    (folder / "_project.yaml").write_text("nogoods:\n" + "".join(nogoods), encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The injection network built once for the module, through the command line."""
    from site_builder.cli import main

    root = tmp_path_factory.mktemp("injection")
    source, out = root / "beliefs", root / "site"
    write_network(source)
    (root / "mkdocs.yml").write_text("site_name: injection\n", encoding="utf-8")
    code = main(["build", str(source), "-o", str(out), "--base-url", BASE_URL,
                 "--config", str(root / "mkdocs.yml"), "--quiet"])
    assert code == 0
    return out


# -- reading HTML back --------------------------------------------------------------------------

URL_ATTRS = {"href", "src", "action", "formaction", "data", "xlink:href", "poster", "background",
             "cite", "codebase", "srcset", "ping", "lowsrc", "dynsrc", "manifest", "longdesc",
             "usemap", "icon", "profile", "archive", "classid"}
#: Never allowed anywhere in a page (SVG's animation elements can rewrite an href).
FORBIDDEN = {"iframe", "frame", "frameset", "object", "embed", "applet", "base", "form", "style",
             "foreignobject", "animate", "set", "animatemotion", "animatetransform", "handler",
             "listener", "image", "use", "audio", "video", "source", "track", "portal", "template",
             "noscript", "xmp", "plaintext", "textarea", "math", "mglyph", "malignmark", "mtext",
             "isindex", "keygen", "param"}
ASSET_SCRIPT = re.compile(r"(?:\./|(?:\.\./)*|/kb/)assets/(?:vendor/[a-z0-9_.-]+/)?[A-Za-z0-9_.-]+\.js")
ASSET_LINK = re.compile(r"(?:\./|(?:\.\./)*|/kb/)assets/[A-Za-z0-9_.-]+\.(?:css|svg|png|ico)")
SCHEME = re.compile(r"([a-z][a-z0-9+.-]*):")


def url_problem(value: str) -> str | None:
    """Why a URL attribute value is unsafe, as a browser would read it, or None."""
    v = value.strip("".join(map(chr, range(33))))  # browsers strip C0 controls and spaces
    v = re.sub(r"[\t\n\r]", "", v).replace("\\", "/").lower()  # ...drop tab/LF/CR, read \ as /
    if v.startswith(("javascript:", "vbscript:", "data:")):
        return "script or data scheme"
    if v.startswith("//"):
        return "protocol-relative (another host)"
    scheme = SCHEME.match(v)
    if scheme and scheme.group(1) not in ("http", "https", "mailto"):
        return f"scheme {scheme.group(1)}:"
    return None


def site_relative(value: str) -> bool:
    v = value.strip().replace("\\", "/")
    return not SCHEME.match(v.lower()) and not v.startswith("//")


class Page(HTMLParser):
    """Every start tag with its attributes, where it is, and the text of each element."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.script_data: list[tuple[dict, str]] = []
        self._open: list[tuple[int, list[str], str, dict]] = []  # (depth, text parts, tag, attrs)
        self.captured: list[tuple[str, dict, str]] = []
        self.feed(text)
        self.close()

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param",
            "source", "track", "wbr", "path", "rect", "stop", "circle", "line", "polygon", "ellipse"}

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        self.tags.append((tag, values, tuple(self.stack)))
        self._open.append((len(self.stack), [], tag, values))
        if tag not in self.VOID:
            self.stack.append(tag)
        else:
            self._finish(len(self.stack))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), tuple(self.stack)))
        self.captured.append((tag, dict(attrs), ""))

    def handle_endtag(self, tag):
        if tag in self.stack:
            while self.stack:
                top = self.stack.pop()
                self._finish(len(self.stack))
                if top == tag:
                    break
        elif tag not in self.VOID:
            self.problems.append(f"end tag </{tag}> without a start tag")

    def _finish(self, depth: int) -> None:
        while self._open and self._open[-1][0] >= depth:
            _, parts, tag, values = self._open.pop()
            self.captured.append((tag, values, "".join(parts)))
            if self._open:
                self._open[-1][1].extend(parts)

    def handle_data(self, data):
        if self.stack and self.stack[-1] == "script":
            self.script_data.append((self._open[-1][3] if self._open else {}, data))
        if self._open:
            self._open[-1][1].append(data)

    def elements(self, tag: str, **attrs: str) -> list[tuple[dict, str]]:
        """(attributes, text) of each `tag` element whose attributes include `attrs`."""
        return [(v, t) for g, v, t in self.captured
                if g == tag and all(v.get(k.rstrip("_")) == a for k, a in attrs.items())]

    def facts(self) -> dict[str, list[str]]:
        """The page's `<dl class="facts">` as {dt text: [dd texts]}."""
        out: dict[str, list[str]] = {}
        dts = [t for v, t in self.elements("dt")]
        dds = [t for v, t in self.elements("dd")]
        for dt, dd in zip(dts, dds):
            out.setdefault(dt, []).append(dd)
        return out


def active_content(page: Page) -> list[str]:
    """Everything in a parsed page that could run script, load from elsewhere or leave the site."""
    found = []
    for tag, attrs, where in page.tags:
        in_head = "head" in where
        for name, value in attrs.items():
            if name.startswith("on"):
                found.append(f"<{tag} {name}=...>: event handler attribute")
            if name == "style":
                found.append(f"<{tag} style=...>: inline style")
            if (name in URL_ATTRS or name.endswith(":href")) and value is not None:
                problem = url_problem(value)
                if problem:
                    found.append(f"<{tag} {name}={value!r}>: {problem}")
            if name == "srcdoc":
                found.append(f"<{tag} srcdoc>")
        if tag in FORBIDDEN:
            found.append(f"<{tag}> element")
        elif tag == "script":
            src = attrs.get("src")
            json_block = attrs.get("type") in ("application/json", "application/ld+json")
            if not (in_head and src and ASSET_SCRIPT.fullmatch(src)) and not (json_block and not src):
                found.append(f"<script {attrs}> is not one of the theme's scripts")
        elif tag == "meta":
            if not in_head or "http-equiv" in attrs or set(attrs) - {"charset", "name", "content"}:
                found.append(f"<meta {attrs}> is not one of the theme's")
        elif tag == "link":
            if not (in_head and attrs.get("rel") in ("stylesheet", "icon")
                    and ASSET_LINK.fullmatch(attrs.get("href") or "")):
                found.append(f"<link {attrs}> is not one of the theme's")
        elif tag == "img":
            if not site_relative(attrs.get("src") or "x:"):
                found.append(f"<img src={attrs.get('src')!r}> loads from another host")
        elif tag == "title" and not in_head and "svg" not in where:
            found.append("<title> outside <head> and SVG")
        elif tag == "button" and not {"data-theme-toggle", "data-graph-zoom"} & set(attrs):
            found.append(f"<button {attrs}> is not the theme toggle")
        elif tag in ("input", "select", "option") and not (
                any(a.startswith(("data-filter", "data-search", "data-graph")) for a in attrs) or "select" in where):
            found.append(f"<{tag} {attrs}> is not one of the index filters")
    for attrs, data in page.script_data:  # JSON data blocks must not be able to end early
        if attrs.get("type") not in ("application/json", "application/ld+json"):
            continue  # any other script with content is already reported above
        lowered = data.lower()
        if "</script" in lowered or "<!--" in lowered:
            found.append("a JSON block that can close its <script>")
        try:
            json.loads(data)
        except ValueError as exc:
            found.append(f"a JSON block that does not parse: {exc}")
    return found + page.problems


INLINE_SVG = re.compile(r"<svg\b.*?</svg>", re.S)


def _files(site: Path, *suffixes: str) -> list[Path]:
    return sorted(p for p in site.rglob("*") if p.is_file() and p.suffix in suffixes)


# -- every file, with the parser of its format --------------------------------------------------

def test_the_build_writes_every_kind_of_output(site):
    for name in ("index.html", "404.html", "nogoods/index.html", "out/index.html", "premises/index.html",
                 "sitemap.xml", "robots.txt", "objects.inv", "llms.txt", "beliefs.json", "badge.svg"):
        assert (site / name).is_file(), name
    pages = list((site / "belief").glob("*/index.html"))
    assert len(pages) == 4 * len(PAYLOADS) + len(URL_PAYLOADS) + 1


def test_every_file_is_a_known_format(site):
    known = {".html", ".svg", ".xml", ".json", ".txt", ".inv", ".js", ".css"}
    unknown = [p.relative_to(site).as_posix() for p in site.rglob("*") if p.is_file()
               and p.suffix not in known and p.name != ".belief-site"
               and not p.relative_to(site).as_posix().startswith(("assets/", "pagefind/"))]
    assert unknown == [], "new output files: teach this test how to read them"


def test_no_page_has_active_content(site):
    pages = _files(site, ".html")
    assert len(pages) > 4 * len(PAYLOADS)
    found = {}
    for path in pages:
        problems = active_content(Page(path.read_text(encoding="utf-8")))
        if problems:
            found[path.relative_to(site).as_posix()] = problems
    assert found == {}


def test_inline_diagrams_are_well_formed_svg_with_only_site_links(site):
    checked = 0
    for path in _files(site, ".html"):
        for chunk in INLINE_SVG.findall(path.read_text(encoding="utf-8")):
            root = ET.fromstring(chunk)  # raises on a label that broke out of its element
            checked += 1
            for element in root.iter():
                tag = element.tag.rsplit("}", 1)[-1].lower()
                assert tag not in ("script", "foreignobject", "style", "image", "use", "animate", "set")
                for name, value in element.attrib.items():
                    local = name.rsplit("}", 1)[-1]
                    assert not local.startswith("on"), (path, name)
                    if local == "href":
                        assert site_relative(value) and url_problem(value) is None, (path, value)
    assert checked >= 4 * len(PAYLOADS)


def test_every_svg_and_xml_file_parses_and_is_inert(site):
    files = _files(site, ".svg", ".xml")
    assert any(p.name == "sitemap.xml" for p in files) and any(p.name == "badge.svg" for p in files)
    for path in files:
        root = ET.parse(path).getroot()
        for element in root.iter():
            tag = element.tag.rsplit("}", 1)[-1].lower()
            assert tag not in ("script", "foreignobject", "iframe", "image", "use"), path
            for name, value in element.attrib.items():
                local = name.rsplit("}", 1)[-1]
                assert not local.startswith("on"), (path, name)
                if local == "href":
                    assert url_problem(value) is None, (path, value)


def test_the_sitemap_lists_only_pages_of_the_site(site):
    ns = {"s": "http://www.sitemaps.org/schemas/sitemap/0.9"}
    locs = [e.text for e in ET.parse(site / "sitemap.xml").getroot().findall("s:url/s:loc", ns)]
    assert len(locs) == 1 + 4 * len(PAYLOADS) + len(URL_PAYLOADS) + 1
    assert all(re.fullmatch(r"https://example\.org/kb/(belief/[a-z]-\d\d/)?", loc) for loc in locs), locs
    robots = (site / "robots.txt").read_text(encoding="utf-8").splitlines()
    assert robots == ["User-agent: *", "Allow: /", "Sitemap: https://example.org/kb/sitemap.xml"]


def test_every_json_file_parses(site):
    files = _files(site, ".json")
    assert len(files) >= 2 * (4 * len(PAYLOADS)) + 1
    for path in files:
        json.loads(path.read_text(encoding="utf-8"))


def test_the_inventory_has_one_line_per_belief(site):
    data = (site / "objects.inv").read_bytes()
    header, _, rest = data.partition(b"# The remainder of this file is compressed using zlib.\n")
    assert header.decode("utf-8").splitlines() == ["# Sphinx inventory version 2", "# Project: injection",
                                                  "# Version: "]
    lines = zlib.decompress(rest).decode("utf-8").split("\n")
    assert lines[-1] == ""
    ids = sorted(p.parent.name for p in (site / "belief").glob("*/index.html"))
    entry = re.compile(r"([a-z]-\d\d) std:label -1 belief/\1/ (.+)")
    assert [entry.fullmatch(line).group(1) for line in lines[:-1]] == ids  # AttributeError: injected line


def test_llms_txt_has_one_line_per_belief(site):
    lines = (site / "llms.txt").read_text(encoding="utf-8").split("\n")
    items = [line for line in lines if line.startswith("- ")]
    ids = sorted(p.parent.name for p in (site / "belief").glob("*/index.html"))
    link = re.escape(BASE_URL.rstrip("/")) + r"/belief/\1/index\.json"  # absolute under a site URL
    assert [re.match(rf"- \[([a-z]-\d\d)\]\({link}\)", line).group(1) for line in items] == ids
    assert "\u2028" not in "".join(lines) and "\u2029" not in "".join(lines)


# -- nothing dropped: each payload where it was given ----------------------------------------------

def _page(site: Path, belief_id: str) -> Page:
    return Page((site / "belief" / belief_id / "index.html").read_text(encoding="utf-8"))


def _section(page: Page, **attrs: str) -> str:
    found = page.elements("section", **attrs)
    assert len(found) == 1, attrs
    return found[0][1]


CASES = list(enumerate(PAYLOADS, 1))
IDS = [f"{n:02}" for n, _ in CASES]


@pytest.mark.parametrize(("n", "p"), CASES, ids=IDS)
def test_a_premise_page_shows_each_payload_as_text(site, n, p):
    page = _page(site, f"p-{n:02}")
    claim = _section(page, class_="claim")
    assert p.visible in claim and f"Claim {n} carries {p.visible} inline." in claim
    assert f"Summary {n}: {p.visible}" in _section(page, id="summary")
    facts = page.facts()
    assert facts["Source"] == [p.text]
    assert facts["Updated"] == [p.text]
    if "Source link" in facts:  # kept only as a relative link that stays on the site
        assert facts["Source link"] == [p.text]
        [(attrs, _)] = [e for e in page.elements("a") if e[1] == p.text and e[0].get("rel")]
        assert attrs["href"] == p.text and url_problem(p.text) is None
    roles = [t for a, t in page.elements("span", class_="role")]
    assert roles == [f"as antecedent of justification 1 “{label_of(n, p)}”"]


@pytest.mark.parametrize(("n", "p"), CASES, ids=IDS)
def test_retraction_reasons_and_labels_show_each_payload_as_text(site, n, p):
    for prefix in ("q", "r"):
        page = _page(site, f"{prefix}-{n:02}")
        assert page.facts()["Reason OUT"] == [p.text], prefix
        roles = [t for a, t in page.elements("span", class_="role")]
        assert roles == [f"as outlist of justification 1 “{label_of(n, p)}”"], prefix
    page = _page(site, f"d-{n:02}")
    headings = [t for a, t in page.elements("h3")]
    assert len(headings) == 1 and headings[0].startswith(f"SL 1 — Label {n}: {p.visible}")
    assert f"Summary {n}: {p.visible}" in _section(page, id="summary")
    assert page.facts().get("Reason OUT") == ([p.text] if n % 2 else None)
    # Claims echoed in attributes and in diagram tooltips come back exactly.
    # (cut at CLAIM_ECHO characters: the whole claim is on its own page)
    # Links beside an echoed claim carry no preview copy of it.
    expected = short(echo(claim_of(n, p)), CLAIM_ECHO)
    links = [a for a, t in page.elements("a") if t == f"p-{n:02}"]
    assert links and all(a.get("data-claim", expected) == expected for a in links)
    assert f"— {expected}" in [t for a, t in page.elements("span", class_="claim-echo")]
    tooltips = [t for a, t in page.elements("title")]
    assert f"p-{n:02} (IN): {short(' '.join(claim_of(n, p).split()), CLAIM_ECHO)}" in tooltips


@pytest.fixture(scope="module")
def out_page(site) -> Page:
    return Page((site / "out" / "index.html").read_text(encoding="utf-8"))


@pytest.mark.parametrize(("n", "p"), CASES, ids=IDS)
def test_the_out_page_shows_each_reason_as_text(out_page, n, p):
    items = {t.split(" ", 2)[1]: t for a, t in out_page.elements("li") if t.startswith("OUT ")}
    for prefix in ("q", "r") + (("d",) if n % 2 else ()):
        assert f"{prefix}-{n:02} (" in items[f"{prefix}-{n:02}"]
        reason = "retracted" if prefix == "d" else "retracted premise"
        assert f" ({'derived' if prefix == 'd' else 'premise'}): {reason}: {p.text}" in items[f"{prefix}-{n:02}"]


@pytest.mark.parametrize(("n", "p"), CASES, ids=IDS)
def test_nogoods_show_each_payload_as_text(site, n, p):
    page = Page((site / "nogoods" / "index.html").read_text(encoding="utf-8"))
    [(_, item)] = [e for e in page.elements("li") if e[1].startswith(f"nogood-{n:03}")]
    assert f"discovered {p.text}" in item and f" · {p.text}" in item
    assert [t for a, t in page.elements("strong") if "onerror" in t] == ["<img src=x onerror=alert(1)>"]


def test_template_syntax_stays_literal(site):
    n = next(n for n, p in CASES if p.text == "{{ 7*7 }}")
    for belief_id in (f"p-{n:02}", f"d-{n:02}"):
        page = _page(site, belief_id)
        claim, summary = _section(page, class_="claim"), _section(page, id="summary")
        assert "{{ 7*7 }}" in claim and "{{ 7*7 }}" in summary
        assert "49" not in claim and "49" not in summary
    assert _page(site, f"p-{n:02}").facts()["Source"] == ["{{ 7*7 }}"]
    raw = (site / "belief" / f"p-{n:02}" / "index.html").read_text(encoding="utf-8")
    assert "{{ 7*7 }}" in raw


def test_markdown_links_keep_only_safe_targets(site):
    """The claim's links: an http(s) link survives as a link, the rest stay text."""
    n = next(n for n, p in CASES if p.text.startswith("[x](https://example.org/ok"))
    page = _page(site, f"p-{n:02}")
    links = [a for a, t in page.elements("a") if t == "x"]
    assert links and all(a["href"] == "https://example.org/ok" for a in links)
    assert all(a["title"] == 't" onmouseover="alert(1)' for a in links)
    n = next(n for n, p in CASES if p.text == "[x](/\\evil.example)")
    links = [a for a, t in _page(site, f"p-{n:02}").elements("a") if t == "x"]
    assert links and all(a["href"] == "/%5Cevil.example" for a in links)
    refused = [p for p in PAYLOADS if re.search(r"\]\((?!https://)", p.text) and p.markdown not in ("x", "!x")]
    assert len(refused) >= 7
    for n, p in CASES:
        if p in refused:
            for belief_id in (f"p-{n:02}", f"d-{n:02}"):  # claim, summary, label
                assert [a for a, t in _page(site, belief_id).elements("a") if t == "x"] == [], p.text


# -- source links ------------------------------------------------------------------------------

URL_CASES = list(enumerate((*URL_PAYLOADS, SAFE_SOURCE_URL), 1))


@pytest.mark.parametrize(("n", "url"), URL_CASES, ids=[f"u-{n:02}" for n, _ in URL_CASES])
def test_source_links_keep_only_safe_schemes(site, n, url):
    page = _page(site, f"u-{n:02}")
    links = [a for a, t in page.elements("a") if a.get("rel") == "nofollow noopener"]
    record = json.loads((site / "belief" / f"u-{n:02}" / "index.json").read_text(encoding="utf-8"))
    if url == SAFE_SOURCE_URL:
        assert [a["href"] for a in links] == [url]
        assert page.facts()["Source link"] == [url]
        assert record["source_url"] == url
    else:  # only absolute http(s) and mailto sources become links (markup.safe_source_url)
        assert links == [], f"unsafe source_url {url!r} became a link"
        assert "Source link" not in page.facts()
        assert record["source_url"] == ""


# -- JSON carries the payloads verbatim -----------------------------------------------------------

@pytest.fixture(scope="module")
def records(site) -> dict[str, dict]:
    data = json.loads((site / "beliefs.json").read_text(encoding="utf-8"))
    return {r["id"]: r for r in data["beliefs"]}


@pytest.mark.parametrize(("n", "p"), CASES, ids=IDS)
def test_json_exports_carry_each_payload_verbatim(site, records, n, p):
    premise, derived = records[f"p-{n:02}"], records[f"d-{n:02}"]
    assert premise["text"] == claim_of(n, p) and derived["text"] == claim_of(n, p)
    assert premise["summary"] == summary_of(n, p) and derived["summary"] == summary_of(n, p)
    assert premise["source"] == p.text and premise["updated_at"] == p.text
    assert premise["source_url"] in (p.text, "")
    assert premise["source_url"] == "" or url_problem(p.text) is None
    assert [d["label"] for d in premise["dependents"]] == [label_of(n, p)]
    assert [j["label"] for j in derived["justifications"]] == [label_of(n, p)]
    assert derived["retract_reason"] == (p.text if n % 2 else "")
    assert records[f"q-{n:02}"]["retract_reason"] == p.text
    assert records[f"r-{n:02}"]["retract_reason"] == p.text
    for belief_id in (f"p-{n:02}", f"d-{n:02}", f"q-{n:02}", f"r-{n:02}"):
        own = json.loads((site / "belief" / belief_id / "index.json").read_text(encoding="utf-8"))
        assert {k: own[k] for k in records[belief_id]} == records[belief_id]


# -- file names reach terminals and CI logs as text -----------------------------------------------

HOSTILE_NAME = "a\n::error file=README.md,line=1::forged\n::add-mask::claim\x1b]0;title\x07\u202e.md"


@pytest.mark.parametrize("command", [("check",), ("check", "--format", "github"), ("build", "-o", "out"),
                                     ("fmt",), ("fmt", "--diff")])
def test_a_file_name_cannot_start_a_line_or_drive_the_terminal(cli, tmp_path, monkeypatch, command):
    """git allows a newline or ESC in a file name: printed as they are, a pull request's document
    could issue GitHub workflow commands (a line starting with `::`) or terminal escapes."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / HOSTILE_NAME).write_text("# x\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    (folder / "ok.md").write_text("# ok\n\n**IN**  ·  premise\n\nA claim.\n", encoding="utf-8")
    code, out, err = cli(command[0], "beliefs", *command[1:])
    printed = out + err
    assert "forged" in printed and code != 0  # the document is reported...
    lines = printed.splitlines()
    if "github" in command:  # ...in annotations of its own
        assert all(line.startswith(("::error file=", "::warning file=")) for line in lines if line.startswith("::"))
        assert sum("forged" in line for line in lines) == 1
    else:
        assert not [line for line in lines if line.startswith("::")]
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f\u202e]", printed)
    assert "a\\n::error" in printed and "\\x1b]0;title\\x07\\u202e.md" in printed
