"""Machine-readable exports: beliefs.json (+ schema), belief/<id>/index.json, objects.inv,
sitemap.xml, robots.txt and llms.txt (DESIGN "URLs", "cross-references", "partial publishing")."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time
import xml.etree.ElementTree as ET
import zlib
from pathlib import Path

import jsonschema
import pytest
import sphobjinv
from hypothesis import given
from hypothesis import strategies as st

from site_builder import __version__
from site_builder.config import SiteConfig
from site_builder.evaluate import evaluate
from site_builder.model import IN, OUT, Belief, Justification, Network
from site_builder.render import RenderContext
from site_builder.render.exports import emit
from site_builder.render.exports.json_exports import belief_json
from site_builder.render.exports.inventory import dispname
from site_builder.render.exports.json_exports import dumps, schema_bytes

PAYLOAD = "</script><script>alert(1)</script> ]]> & \"double\" 'single' <b>x</b>"
HIDDEN = "zz-hidden"
HIDDEN_CLAIM = "CLASSIFIED-CLAIM-TEXT"
HIDDEN_CHILD = "zz-hidden-child"
SITE = "https://example.org/beliefs/"


def sl(*antecedents: str, unless: tuple[str, ...] = (), label: str = "") -> Justification:
    return Justification("SL", tuple(antecedents), tuple(unless), label)


def belief(belief_id: str, *justs: Justification, text: str | None = None, **kw) -> Belief:
    return Belief(belief_id, f"claim {belief_id}" if text is None else text, justifications=justs, **kw)


def network(*beliefs: Belief, **kw) -> Network:
    return Network({b.id: b for b in beliefs}, **kw)


def context(net: Network, visible=None, limit: int = 100, **config) -> RenderContext:
    ev = evaluate(net, limit)
    config.setdefault("panel_max_items", limit)
    shown = frozenset(net.beliefs) if visible is None else frozenset(visible)
    return RenderContext(ev, SiteConfig(**config), visible=shown)


def exports(ctx: RenderContext) -> list:
    """Every export: the site's, then each belief's index.json (written with its page)."""
    return [*emit(ctx), *(belief_json(ctx, b) for b in ctx.shown())]


def outputs(ctx: RenderContext) -> dict[str, bytes]:
    files = {}
    for f in exports(ctx):
        assert f.path not in files, f"two files at {f.path}"
        files[f.path] = f.data
    return files


def readable(path: str, data: bytes) -> bytes:
    """The bytes a reader sees (objects.inv is zlib after its header)."""
    if path == "objects.inv":
        header, body = data.split(b"zlib.\n", 1)
        return header + zlib.decompress(body)
    return data


def example() -> Network:
    """a, b (retracted), c <- a unless HIDDEN, d <- c, ns:local <- a; HIDDEN and its child."""
    return network(
        belief("a", source="paper", source_url="https://example.org/paper?x=1&y=2",
               created_at="2026-01-02", summary="Summary of a."),
        Belief("b", "claim b", OUT, metadata={"retract_reason": "superseded",
                                              "private_note": "PRIVATE-METADATA"}),
        belief("c", sl("a", unless=(HIDDEN,), label="unless the secret holds")),
        belief("d", sl("c", label="from c"), sl("a", "b", label="from a and b")),
        belief("ns:local", sl("a"), source_url="javascript:alert(1)"),
        belief(HIDDEN, text=HIDDEN_CLAIM, declared=OUT),
        belief(HIDDEN_CHILD, sl(HIDDEN, "a"), text="child of the hidden one"),
        repos={"main": "/home/alice/private-repo"},
    )


VISIBLE = {"a", "b", "c", "d", "ns:local"}


def validator(schema: dict, definition: str | None = None) -> jsonschema.Draft202012Validator:
    if definition:
        schema = {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}
    return jsonschema.Draft202012Validator(schema)


# --- beliefs.json, its schema, index.json ---------------------------------------------------

def test_beliefs_json_and_every_index_json_validate_against_the_published_schema():
    files = outputs(context(example(), VISIBLE, site_url=SITE))
    schema = json.loads(files["beliefs.schema.json"])
    assert files["beliefs.schema.json"] == schema_bytes()
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator(schema).validate(json.loads(files["beliefs.json"]))
    pages = [p for p in files if p.endswith("/index.json")]
    assert len(pages) == len(VISIBLE)
    for path in pages:
        validator(schema, "page").validate(json.loads(files[path]))


def test_schema_rejects_unpublishable_fields_and_wrong_types():
    files = outputs(context(example(), VISIBLE))
    schema, data = json.loads(files["beliefs.schema.json"]), json.loads(files["beliefs.json"])
    check = validator(schema)
    for bad in ({"repos": {}}, {"metadata": {}}):
        assert not check.is_valid({**data, "beliefs": [{**data["beliefs"][0], **bad}]})
    assert not check.is_valid({**data, "beliefs": [{**data["beliefs"][0], "status": "MAYBE"}]})
    assert not check.is_valid({**data, "repos": {}})


def test_beliefs_json_holds_the_evaluated_visible_network():
    data = json.loads(outputs(context(example(), VISIBLE))["beliefs.json"])
    assert list(data) == ["schema_version", "generator", "site_name", "counts", "beliefs"]
    assert data["schema_version"] == "1.0"
    assert data["generator"] == f"belief-site/{__version__}"
    assert data["site_name"] == "Beliefs"
    assert data["counts"] == {"beliefs": 5, "IN": 4, "OUT": 1, "premises": 2, "derived": 3}
    records = {r["id"]: r for r in data["beliefs"]}
    assert [r["id"] for r in data["beliefs"]] == ["a", "b", "c", "d", "ns:local"]
    a, b, c, d = records["a"], records["b"], records["c"], records["d"]
    assert (a["status"], a["kind"], a["depth"], a["pinned"]) == (IN, "premise", 0, False)
    assert (a["source"], a["source_url"], a["created_at"]) == ("paper", "https://example.org/paper?x=1&y=2", "2026-01-02")
    assert a["summary"] == "Summary of a."
    assert (b["status"], b["pinned"], b["retract_reason"]) == (OUT, True, "superseded")
    assert records["ns:local"]["source_url"] == ""  # javascript: is never published
    # c: the hidden outlist member is OUT, so c is IN; d: the newest valid justification supports.
    assert c["status"] == IN and c["supporting_justification"] == 0
    assert c["justifications"] == [{"type": "SL", "label": "unless the secret holds", "antecedents": ["a"],
                                     "outlist": [], "valid": True}]
    assert "hidden_references" not in c  # hidden beliefs are not even counted (DESIGN)
    assert [j["valid"] for j in d["justifications"]] == [True, False]
    assert d["supporting_justification"] == 0 and d["depth"] == 2
    assert a["dependents"] == [
        {"id": "c", "justification": 0, "label": "unless the secret holds", "role": "antecedent"},
        {"id": "d", "justification": 1, "label": "from a and b", "role": "antecedent"},
        {"id": "ns:local", "justification": 0, "label": "", "role": "antecedent"}]
    assert (a["url"], a["json"], a["badge"]) == ("belief/a/", "belief/a/index.json", "belief/a/badge.svg")
    assert records["ns:local"]["url"] == "belief/ns/local/"


def test_record_paths_follow_prefix_and_directory_urls():
    files = outputs(context(example(), VISIBLE, prefix="claims", use_directory_urls=False))
    records = {r["id"]: r for r in json.loads(files["beliefs.json"])["beliefs"]}
    assert records["ns:local"]["url"] == "claims/ns/local/index.html"
    assert records["ns:local"]["json"] == "claims/ns/local/index.json"
    page = json.loads(files["claims/ns/local/index.json"])
    assert page["site_root"] == "../../../"


def test_private_data_is_never_published():
    files = outputs(context(example(), VISIBLE))
    for path, data in files.items():
        assert b"/home/alice" not in data, path
        assert b"PRIVATE-METADATA" not in data, path
        assert b"private_note" not in data, path


def test_index_json_is_the_beliefs_json_record_plus_panels():
    files = outputs(context(example(), VISIBLE))
    records = {r["id"]: r for r in json.loads(files["beliefs.json"])["beliefs"]}
    page = json.loads(files["belief/d/index.json"])
    assert {k: v for k, v in page.items() if k in records["d"]} == records["d"]
    assert set(page) - set(records["d"]) == {"schema_version", "generator", "site_root",
                                              "explain", "trace", "impact"}
    assert page["site_root"] == "../../"
    assert [s["id"] for s in page["explain"]["items"]] == ["d", "c", "a"]
    assert page["explain"]["items"][0]["reason"] == "SL justification 1 valid"
    # trace: premises over every justification (spec §1.6), not only the supporting one.
    assert page["trace"] == {"items": ["a", "b"], "count": 2, "complete": True}
    impact_a = json.loads(files["belief/a/index.json"])["impact"]
    assert impact_a == {"items": [{"id": "c", "value": OUT}, {"id": "d", "value": OUT},
                                  {"id": "ns:local", "value": OUT}], "count": 3, "complete": True}


# --- partial publishing ---------------------------------------------------------------------

@pytest.mark.parametrize("site_url", [None, SITE])
def test_hidden_beliefs_appear_in_no_output(site_url):
    files = outputs(context(example(), VISIBLE, site_url=site_url))
    assert not any(HIDDEN in path for path in files)
    for path, data in files.items():
        if path == "beliefs.schema.json":
            continue
        seen = readable(path, data)
        assert HIDDEN.encode() not in seen, path
        assert HIDDEN_CLAIM.encode() not in seen, path
        assert b"child of the hidden one" not in seen, path
    # Control: published, the same beliefs do appear in every per-site output (so the check can fail).
    everything = outputs(context(example(), None, site_url=site_url))
    for path in ("beliefs.json", "objects.inv", "llms.txt", "belief/a/index.json") + (
            ("sitemap.xml",) if site_url else ()):
        assert HIDDEN.encode() in readable(path, everything[path]), path


def test_panels_never_name_hidden_beliefs_and_explain_does_not_walk_through_them():
    # c is OUT because the hidden h (derived from the visible premise p) is IN.
    net = network(belief("p"), belief("a"), belief("h", sl("p"), text=HIDDEN_CLAIM),
                  belief("c", sl("a", unless=("h",))))
    hidden = json.loads(outputs(context(net, {"p", "a", "c"}))["belief/c/index.json"])
    assert hidden["status"] == OUT
    (step,) = hidden["explain"]["items"]
    assert step["id"] == "c" and step["justifications"][0]["violated"] == []
    assert hidden["explain"]["count"] == 1 and hidden["explain"]["complete"]
    impact_p = json.loads(outputs(context(net, {"p", "a", "c"}))["belief/p/index.json"])["impact"]
    assert impact_p == {"items": [{"id": "c", "value": IN}], "count": 1, "complete": True}
    # Control: all published, the explanation goes through h to p, and p's impact names h.
    full = outputs(context(net))
    assert [s["id"] for s in json.loads(full["belief/c/index.json"])["explain"]["items"]] == ["c", "h", "p"]
    assert json.loads(full["belief/p/index.json"])["impact"]["count"] == 2


def test_panels_are_bounded_with_count_and_complete_flag():
    premises = [belief(f"p{i:03d}") for i in range(300)]
    fan = [belief(f"f{i:03d}", sl("root")) for i in range(300)]
    net = network(*premises, belief("big", sl(*(p.id for p in premises))), belief("root"), *fan)
    files = outputs(context(net, limit=50))
    big = json.loads(files["belief/big/index.json"])
    for name in ("explain", "trace"):
        assert len(big[name]["items"]) == 50, name
        assert big[name]["count"] == 50 and big[name]["complete"] is False, name
    assert big["trace"]["items"] == [f"p{i:03d}" for i in range(50)]
    root = json.loads(files["belief/root/index.json"])
    assert len(root["impact"]["items"]) == 50 and root["impact"]["complete"] is False
    assert len(root["dependents"]) == 300  # the export's record is the whole data
    small = json.loads(outputs(context(net, limit=400))["belief/big/index.json"])
    assert small["trace"]["count"] == 300 and small["trace"]["complete"] is True
    assert len(small["explain"]["items"]) == 301 and small["explain"]["complete"] is True
    # An evaluation limit above the panel's: the exact count, and still at most 50 items.
    wide = json.loads(outputs(context(net, limit=400, panel_max_items=50))["belief/big/index.json"])
    assert len(wide["trace"]["items"]) == 50
    assert wide["trace"]["count"] == 300 and wide["trace"]["complete"] is True


# --- untrusted text stays data --------------------------------------------------------------

def injection_network() -> Network:
    return network(
        belief("a", text=f"{PAYLOAD}\n## Injected heading\n- [x](javascript:alert(1))",
               summary=PAYLOAD, source=PAYLOAD, source_url=f"https://example.org/?q={PAYLOAD}"),
        belief("b", sl("a", label=PAYLOAD), text="x" * 200),
        Belief("c", "premise c", OUT, metadata={"retract_reason": PAYLOAD}),
    )


def test_injection_text_round_trips_through_json():
    files = outputs(context(injection_network(), site_name=f"Site {PAYLOAD}"))
    data = json.loads(files["beliefs.json"].decode("utf-8"))
    a, b, c = data["beliefs"]
    assert a["text"].startswith(PAYLOAD) and a["summary"] == PAYLOAD and a["source"] == PAYLOAD
    assert a["source_url"] == f"https://example.org/?q={PAYLOAD}"
    assert b["justifications"][0]["label"] == PAYLOAD and c["retract_reason"] == PAYLOAD
    assert data["site_name"] == f"Site {PAYLOAD}"
    page = json.loads(files["belief/a/index.json"])
    assert page["text"] == injection_network().beliefs["a"].text
    # Readable text: the export is UTF-8 JSON, not ASCII escapes (json.dumps ensure_ascii=False).
    assert "é".encode() in outputs(context(network(belief("e", text="é"))))["beliefs.json"]


def test_beliefs_json_is_the_one_encoding_of_its_data():
    """Records are encoded one by one (kept by the build cache) and joined: the file must be
    exactly what encoding the whole document at once gives."""
    for ctx in (context(injection_network(), site_name=f"Site {PAYLOAD}"), context(network()),
                context(network(belief("e", text="Grüße, λ-calculus → ≤ 𝄞")), site_name="Café")):
        data = outputs(ctx)["beliefs.json"]
        whole = json.dumps(json.loads(data), ensure_ascii=False, separators=(",", ":")) + "\n"
        assert data == dumps(json.loads(data)) == whole.encode("utf-8")


def test_injection_text_keeps_llms_txt_and_inventory_lines_intact():
    files = outputs(context(injection_network(), site_name="Name\n## Not a heading"))
    llms = files["llms.txt"].decode("utf-8").splitlines()
    assert llms[0] == "# Name ## Not a heading"
    assert sum(1 for line in llms if line.startswith("## ")) == 1
    assert f"- [a](belief/a/index.json): {PAYLOAD}" in llms
    header, body = files["objects.inv"].split(b"zlib.\n", 1)
    assert header.decode().splitlines()[1] == "# Project: Name ## Not a heading"
    lines = zlib.decompress(body).decode("utf-8").splitlines()
    assert [line.split()[0] for line in lines] == ["a", "b", "c"]


@pytest.mark.parametrize("site_url", [
    "https://example.org/a&b/", "https://example.org/x]]></loc><evil>/", "https://example.org/'\"/"])
def test_sitemap_escapes_urls_and_parses(site_url):
    files = outputs(context(example(), VISIBLE, site_url=site_url))
    root = ET.fromstring(files["sitemap.xml"])
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    assert root.tag == f"{ns}urlset"
    assert [u.tag for u in root] == [f"{ns}url"] * 6
    locs = [loc.text for loc in root.iter(f"{ns}loc")]
    base = site_url.rstrip("/")
    assert locs == [f"{base}/"] + [f"{base}/belief/{p}/" for p in ("a", "b", "c", "d", "ns/local")]


# --- sitemap.xml and robots.txt -------------------------------------------------------------

def test_a_site_past_the_sitemap_limit_gets_a_sitemap_index(monkeypatch):
    """sitemaps.org allows 50,000 URLs per file: a 50,000-belief site wrote 50,001 in one
    (found by an exports audit). Here the limit is 2, for 6 pages."""
    from site_builder.render.exports import sitemap
    monkeypatch.setattr(sitemap, "MAX_URLS", 2)
    files = outputs(context(example(), VISIBLE, site_url="https://example.org/docs/"))
    ns = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
    index = ET.fromstring(files["sitemap.xml"])
    assert index.tag == f"{ns}sitemapindex"
    parts = [loc.text for loc in index.iter(f"{ns}loc")]
    assert parts == [f"https://example.org/docs/sitemap-{k}.xml" for k in (1, 2, 3)]
    locs = [loc.text for k in (1, 2, 3) for loc in ET.fromstring(files[f"sitemap-{k}.xml"]).iter(f"{ns}loc")]
    assert locs == ["https://example.org/docs/"] + [f"https://example.org/docs/belief/{p}/"
                                                    for p in ("a", "b", "c", "d", "ns/local")]
    assert files["robots.txt"].endswith(b"Sitemap: https://example.org/docs/sitemap.xml\n")


def test_sitemap_and_robots_only_with_site_url():
    without = outputs(context(example(), VISIBLE))
    assert "sitemap.xml" not in without and "robots.txt" not in without
    files = outputs(context(example(), VISIBLE, site_url="https://example.org/docs"))
    assert files["robots.txt"] == b"User-agent: *\nAllow: /\nSitemap: https://example.org/docs/sitemap.xml\n"
    assert b"lastmod" not in files["sitemap.xml"]
    assert files["sitemap.xml"].startswith(b'<?xml version="1.0" encoding="UTF-8"?>\n')


def test_sitemap_without_directory_urls_names_the_html_files():
    files = outputs(context(example(), VISIBLE, site_url=SITE, use_directory_urls=False))
    locs = [e.text for e in ET.fromstring(files["sitemap.xml"]).iter()
            if e.tag.endswith("loc")]
    assert locs[:2] == [f"{SITE}index.html", f"{SITE}belief/a/index.html"]


# --- llms.txt -------------------------------------------------------------------------------

def test_llms_txt_follows_the_llmstxt_format():
    net = network(belief("a", text="First line of a\nsecond line"), belief("b", sl("a")),
                  Belief("z", "retracted", OUT), belief(HIDDEN))
    text = outputs(context(net, {"a", "b", "z"}, site_name="My beliefs"))["llms.txt"].decode()
    assert text == textwrap.dedent("""\
        # My beliefs

        > A belief network of 3 beliefs: 2 IN, 1 OUT (2 premises, 1 derived).

        The whole network is in [beliefs.json](beliefs.json) (schema: [beliefs.schema.json](beliefs.schema.json)); each belief below links to its own JSON record with why it is IN or OUT, the premises it rests on and its impact.

        ## Beliefs

        - [a](belief/a/index.json): First line of a
        - [b](belief/b/index.json): claim b
        - [z](belief/z/index.json): retracted
        """)


def test_llms_txt_links_are_absolute_under_a_site_url():
    """An LLM given the file alone cannot resolve relative links (found by an exports audit)."""
    text = outputs(context(example(), VISIBLE, site_url="https://example.org/kb/"))["llms.txt"].decode()
    assert "[beliefs.json](https://example.org/kb/beliefs.json)" in text
    assert "- [ns:local](https://example.org/kb/belief/ns/local/index.json)" in text
    assert "](belief/" not in text


# --- objects.inv ----------------------------------------------------------------------------

def test_objects_inv_header_and_lines():
    data = outputs(context(example(), VISIBLE, site_name="Team beliefs"))["objects.inv"]
    header, body = data.split(b"zlib.\n", 1)
    assert header + b"zlib.\n" == (b"# Sphinx inventory version 2\n# Project: Team beliefs\n"
                                   b"# Version: \n# The remainder of this file is compressed using zlib.\n")
    assert zlib.decompress(body).decode().splitlines() == [
        "a std:label -1 belief/a/ claim a",
        "b std:label -1 belief/b/ claim b",
        "c std:label -1 belief/c/ claim c",
        "d std:label -1 belief/d/ claim d",
        "ns:local std:label -1 belief/ns/local/ claim ns:local",
    ]


def test_dispname_is_one_short_line_or_dash():
    assert dispname("") == "-" and dispname(" \n\t") == "-"
    assert dispname("a\nb\r\nc\u2028d\x00e") == "a b c d e"
    long = dispname("word " * 40)
    assert len(long) <= 80 and long.endswith("…") and "\n" not in long
    assert len(dispname("x" * 500)) == 80


def test_objects_inv_reads_back_with_sphobjinv(tmp_path):
    net = network(*example().beliefs.values(), belief("long", text="A long claim " * 20))
    path = tmp_path / "objects.inv"
    path.write_bytes(outputs(context(net, VISIBLE | {"long"}, site_name="Team"))["objects.inv"])
    inv = sphobjinv.Inventory(fname_zlib=str(path))
    assert inv.project == "Team" and inv.version == ""
    assert [o.name for o in inv.objects] == ["a", "b", "c", "d", "long", "ns:local"]
    assert {(o.domain, o.role, o.priority) for o in inv.objects} == {("std", "label", "-1")}
    by_name = {o.name: o for o in inv.objects}
    assert by_name["ns:local"].uri == "belief/ns/local/"
    assert by_name["c"].dispname == "claim c"
    assert len(by_name["long"].dispname) <= 80 and by_name["long"].dispname.endswith("…")
    plain = tmp_path / "file.inv"
    plain.write_bytes(outputs(context(net, VISIBLE, use_directory_urls=False))["objects.inv"])
    assert sphobjinv.Inventory(fname_zlib=str(plain)).objects[0].uri == "belief/a/index.html"


def test_sphinx_intersphinx_links_beliefs_by_id(tmp_path):
    """Aliases too (found by an exports audit): a document that referenced a belief by its
    old id must keep resolving after a rename, as the old URL does; never a hidden one's."""
    from dataclasses import replace
    beliefs = dict(example().beliefs)
    beliefs["c"] = replace(beliefs["c"], metadata={"aliases": ["old-c"]})
    beliefs[HIDDEN] = replace(beliefs[HIDDEN], metadata={"aliases": ["old-hidden"]})
    inventory = tmp_path / "objects.inv"
    inventory.write_bytes(outputs(context(Network(beliefs), VISIBLE, site_url=SITE))["objects.inv"])
    src, out = tmp_path / "src", tmp_path / "out"
    src.mkdir()
    (src / "conf.py").write_text(textwrap.dedent(f"""\
        project = "consumer"
        extensions = ["sphinx.ext.intersphinx"]
        intersphinx_mapping = {{"beliefs": ({SITE!r}, {str(inventory)!r})}}
        """))
    (src / "index.rst").write_text(textwrap.dedent(f"""\
        Consumer
        ========

        See :ref:`beliefs:c`, :external+beliefs:ref:`d`, :ref:`beliefs:ns:local`
        and :ref:`beliefs:{HIDDEN}`. Renamed: :ref:`old <beliefs:old-c>`, :ref:`beliefs:old-hidden`.
        """))
    started = time.perf_counter()
    run = subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", "-E",
                          "-d", str(tmp_path / "doctrees"), str(src), str(out)],
                         capture_output=True, text=True, timeout=300)
    print(f"sphinx build: {time.perf_counter() - started:.2f} s")
    assert run.returncode == 0, run.stderr
    html = (out / "index.html").read_text(encoding="utf-8")
    assert f'href="{SITE}belief/c/"' in html
    assert f'href="{SITE}belief/d/"' in html
    assert f'href="{SITE}belief/ns/local/"' in html
    assert "claim c" in html  # the dispname is the link text
    # The hidden belief is not in the inventory: Sphinx cannot resolve it.
    assert f"{SITE}belief/{HIDDEN}/" not in html
    assert HIDDEN in run.stderr and "undefined label" in run.stderr
    assert f'href="{SITE}belief/c/" title="(in Beliefs)"><span class="xref std std-ref">old</span>' in html  # the alias
    assert "old-hidden" in run.stderr and f"{SITE}belief/old-hidden/" not in html


# --- determinism ----------------------------------------------------------------------------

def test_output_is_deterministic_and_independent_of_input_order():
    first = exports(context(example(), VISIBLE, site_url=SITE))
    second = exports(context(example(), VISIBLE, site_url=SITE))
    assert first == second
    reordered = Network(dict(reversed(list(example().beliefs.items()))), repos=example().repos)
    assert exports(context(reordered, VISIBLE, site_url=SITE)) == first
    assert all(f.data.endswith(b"\n") or f.path == "objects.inv" for f in first)


@given(st.text(alphabet=st.sampled_from("ab é→\t\n\r\x00\x01\x1c\x1f\x7f\x85\x9f\xa0\u2028\u200b\u3000"), max_size=30))
def test_one_line_turns_each_run_of_whitespace_or_control_characters_into_one_space(text):
    from itertools import groupby
    import unicodedata
    from site_builder.render.exports.records import one_line

    blank = lambda c: c.isspace() or unicodedata.category(c) == "Cc"  # noqa: E731
    expected = "".join(" " if is_blank else "".join(run) for is_blank, run in groupby(text, blank)).strip(" ")
    assert one_line(text) == expected
