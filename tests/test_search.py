"""Search: a Pagefind index of records (id, claim, summary) with status and kind filters."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from site_builder.config import SiteConfig
from site_builder.pipeline import _context, check
from site_builder.render import search

from .conftest import EXAMPLE

pytest.importorskip("pagefind.service")

RECORD_KEYS = {"title", "status", "kind", "claim"}


def context(source: Path, **options):
    checked = check(source)
    return _context(checked, SiteConfig(source=str(source), **options), source)


def fragments(files) -> list[dict]:
    """The records stored in the bundle, as the browser reads them."""
    found = []
    for f in files:
        if f.path.startswith("pagefind/fragment/"):
            raw = gzip.decompress(f.data)
            assert raw.startswith(b"pagefind_dcd")
            found.append(json.loads(raw[len(b"pagefind_dcd"):]))
    return sorted(found, key=lambda r: r["url"])


def write_documents(folder: Path) -> Path:
    folder.mkdir()
    (folder / "public.md").write_text(
        "# public\n\n**IN** · premise\n\nA **public** claim with [a link](https://example.org/hidden-target).\n\n"
        "## Summary\n\nThe summary mentions `zebra` stripes.\n", encoding="utf-8")
    (folder / "secret.md").write_text("---\nmetadata:\n  access_tags: [internal]\n---\n# secret\n\n"
                                      "**IN** · premise\n\nSecret claim.\n", encoding="utf-8")
    (folder / "from-secret.md").write_text(
        "# from-secret\n\n**IN** · derived (depth 1)\n\nLeaks?\n\n## Justifications\n\n### SL\n\n"
        "Antecedents:\n\n- public\n- secret\n", encoding="utf-8")
    (folder / "blocked.md").write_text(
        "# blocked\n\n**OUT** · derived (depth 1)\n\nBlocked claim.\n\n## Justifications\n\n### SL — labelled justification\n\n"
        "Antecedents:\n\n- public\n\nUnless:\n\n- secret\n", encoding="utf-8")
    return folder


def test_each_visible_belief_is_one_record_of_its_id_claim_and_summary():
    ctx = context(EXAMPLE)
    found = search.records(ctx)
    assert [r.meta["title"] for r in found] == sorted(ctx.visible)
    for record in found:
        belief = ctx.beliefs[record.meta["title"]]
        parts = [belief.id, search.plain_text(belief.text)] + ([search.plain_text(belief.summary)] if belief.summary else [])
        assert record.content == "\n".join(parts)
        assert set(record.meta) == RECORD_KEYS
        assert record.filters == {"status": [ctx.evaluation.value(belief.id)],
                                  "kind": ["premise" if belief.is_premise else "derived"]}
        assert record.url == f"belief/{belief.id}/"


def test_records_hold_plain_text_and_nothing_else_of_the_page(tmp_path):
    ctx = context(write_documents(tmp_path / "b"))
    public = next(r for r in search.records(ctx) if r.meta["title"] == "public")
    assert public.content == "public\nA public claim with a link.\nThe summary mentions zebra stripes."
    assert "example.org" not in public.content  # link targets are not words of the claim
    blocked = next(r for r in search.records(ctx) if r.meta["title"] == "blocked")
    assert "labelled" not in blocked.content  # justification labels are on the page, not in the index
    assert blocked.filters == {"status": ["OUT"], "kind": ["derived"]}


def test_hidden_beliefs_are_not_indexed(tmp_path):
    ctx = context(write_documents(tmp_path / "b"), visible_to=("public",))
    files = list(search.emit(ctx))
    stored = fragments(files)
    assert [r["meta"]["title"] for r in stored] == ["blocked", "public"]
    everything = b"".join(gzip.decompress(f.data) if f.path.endswith(("pf_fragment", "pf_index", "pf_filter", "pf_meta"))
                          else f.data for f in files)
    assert b"secret" not in everything.lower() and b"leaks" not in everything.lower()


def test_the_bundle_holds_exactly_the_records_with_their_filters():
    ctx = context(EXAMPLE)
    files = list(search.emit(ctx))
    names = {f.path for f in files}
    assert {"pagefind/pagefind.js", "pagefind/pagefind-worker.js", "pagefind/pagefind-entry.json",
            "pagefind/wasm.en.pagefind"} <= names
    assert not [n for n in names if "-ui." in n or "highlight" in n]  # the theme has its own result list
    stored = fragments(files)
    expected = sorted(search.records(ctx), key=lambda r: r.url)
    assert [set(s) for s in stored] == [{"url", "content", "word_count", "filters", "meta", "anchors"}] * len(expected)
    assert [(s["url"], s["content"], s["filters"], s["meta"]) for s in stored] == [  # the browser joins
        ("/" + r.url, " ".join(r.content.split()), dict(r.filters), dict(r.meta)) for r in expected]  # "/" to its base
    entry = json.loads(next(f.data for f in files if f.path == "pagefind/pagefind-entry.json"))
    assert entry["languages"]["en"]["page_count"] == len(ctx.visible)
    assert f"pagefind/pagefind.{entry['languages']['en']['hash']}.pf_meta" in names


def test_result_urls_follow_use_directory_urls():
    ctx = context(EXAMPLE, use_directory_urls=False)
    assert all(r.url.endswith("/index.html") and r.url.startswith("belief/") for r in search.records(ctx))


def test_without_search_nothing_is_indexed(tmp_path, cli):
    assert list(search.emit(context(EXAMPLE, search=False))) == []
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: s\nplugins:\n  - beliefs:\n      source: {EXAMPLE}\n      search: false\n",
                      encoding="utf-8")
    out = tmp_path / "site"
    assert cli("build", "--config", config, "-o", out)[0] == 0
    assert not (out / "pagefind").exists()
    index = (out / "index.html").read_text(encoding="utf-8")
    assert "data-search" not in index  # no search box that could never answer


def test_the_search_box_is_on_every_page_and_hidden_until_scripts_run(tmp_path, cli):
    out = tmp_path / "site"
    assert cli("build", EXAMPLE, "-o", out)[0] == 0
    for page in [out / "index.html", *(out / "belief").rglob("index.html"), out / "graph" / "index.html"]:
        html = page.read_text(encoding="utf-8")
        depth = len(page.relative_to(out).parts) - 1
        assert f'data-search="{"../" * depth}pagefind/pagefind.js" hidden' in html, page
        assert 'aria-keyshortcuts="/"' in html
    assert 'data-search="/pagefind/pagefind.js"' in (out / "404.html").read_text(encoding="utf-8")
    assert (out / "pagefind" / "pagefind.js").is_file()


def test_two_indexings_are_byte_identical():
    """Pagefind orders filters by hash map; `canonical` sorts them (DESIGN "output": deterministic)."""
    ctx = context(EXAMPLE)
    first = {f.path: f.data for f in search.emit(ctx)}
    for _ in range(3):
        assert {f.path: f.data for f in search.emit(ctx)} == first


def test_shared_networks_index_deterministically(shared):
    ctx = context(shared / "networks" / "system-design-eem.json")
    first = {f.path: f.data for f in search.emit(ctx)}
    assert len([p for p in first if p.startswith("pagefind/fragment/")]) == len(ctx.visible)
    assert {f.path: f.data for f in search.emit(ctx)} == first


def test_canonical_sorts_filter_values_and_renames_by_content():
    values_a = ["kind", [["premise", [0, 2]], ["derived", [1]]]]
    values_b = ["kind", [["derived", [1]], ["premise", [0, 2]]]]

    def bundle(values, meta_filters):
        data, _ = search._pack(values)
        meta, _ = search._pack(["1.5.2", [["p1", 3]], [["a", "z", "en_idx"]], meta_filters, []])
        return {"filter/en_aaaaaaa.pf_filter": data, "pagefind.en_0000000000.pf_meta": meta,
                "pagefind-entry.json": b'{"version":"1.5.2","languages":{"en":{"hash":"en_0000000000","wasm":"en","page_count":3}}}'}

    one = search.canonical(bundle(values_a, [["kind", "en_aaaaaaa"], ["status", "en_bbbbbbb"]]))
    two = search.canonical(bundle(values_b, [["status", "en_bbbbbbb"], ["kind", "en_aaaaaaa"]]))
    assert one == two
    (name,) = [n for n in one if n.startswith("filter/")]
    assert search._unpack(one[name]) == ["kind", [["derived", [1]], ["premise", [0, 2]]]]
    entry = json.loads(one["pagefind-entry.json"])
    meta = search._unpack(one[f"pagefind.{entry['languages']['en']['hash']}.pf_meta"])
    assert meta[3] == [["kind", name[len("filter/"):-len(".pf_filter")]], ["status", "en_bbbbbbb"]]


def test_a_missing_indexer_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(tmp_path / "no-such-pagefind"))
    with pytest.raises(search.SearchError) as caught:
        list(search.emit(context(EXAMPLE)))
    assert "--no-search" in caught.value.hint


@pytest.mark.parametrize("own", [None, "narenas:2"])
def test_the_indexer_asks_its_allocator_for_huge_pages_unless_told_otherwise(monkeypatch, tmp_path, own):
    """Pagefind's jemalloc reads _RJEM_MALLOC_CONF: huge pages cut its system time (search._ALLOCATOR);
    a setting of the user's own stands."""
    from pagefind.service import get_executable
    real, seen = get_executable(), tmp_path / "seen"
    wrapper = tmp_path / "pagefind"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s" "$_RJEM_MALLOC_CONF" > "{seen}"\nexec "{real}" "$@"\n')
    wrapper.chmod(0o755)
    configured = os.environ.get("PAGEFIND_BINARY_PATH")  # a CI's own
    monkeypatch.setenv("PAGEFIND_BINARY_PATH", str(wrapper))
    if own is None:
        monkeypatch.delenv("_RJEM_MALLOC_CONF", raising=False)
    else:
        monkeypatch.setenv("_RJEM_MALLOC_CONF", own)
    files = {f.path: f.data for f in search.emit(context(EXAMPLE))}
    assert seen.read_text() == (own or "thp:always,metadata_thp:always")
    if configured is None:
        monkeypatch.delenv("PAGEFIND_BINARY_PATH")
    else:
        monkeypatch.setenv("PAGEFIND_BINARY_PATH", configured)
    assert {f.path: f.data for f in search.emit(context(EXAMPLE))} == files  # the same bundle


def test_a_site_with_nothing_published_offers_no_search(tmp_path, cli):
    """Pagefind's browser side fails on an index without records: build none, show no box."""
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "secret.md").write_text("---\nmetadata:\n  access_tags: [internal]\n---\n# secret\n\n"
                                      "**IN** · premise\n\nSecret claim.\n", encoding="utf-8")
    out = tmp_path / "site"
    assert cli("build", folder, "-o", out, "--visible-to", "public")[0] == 0
    assert not (out / "pagefind").exists()
    assert "data-search" not in (out / "index.html").read_text(encoding="utf-8")


# Pagefind numbers pages in the order records arrive. Records arrive as files in one `AddDir`
# (Pagefind's `AddRecord` looks each URL up in the list so far: quadratic), written so that
# its walk meets them sorted; where the scratch folder's listing order cannot be steered,
# one `AddRecord` each. Either way the bundle is the same, byte for byte.

def write_namespaced(folder: Path) -> Path:
    """Ids whose folders nest (`ns`, `ns:x`) beside ids that sort between them (`ns-a`)."""
    (folder / "ns").mkdir(parents=True)
    for name, belief_id in (("ns.md", "ns"), ("ns-a.md", "ns-a"), ("b.md", "b"), ("ns/x.md", "ns:x"),
                            ("ns/a.md", "ns:a")):
        (folder / name).write_text(f"# {belief_id}\n\n**IN** · premise\n\nClaim of {belief_id} & <b>.\n",
                                   encoding="utf-8")
    return folder


def page_urls(bundle: dict[str, bytes]) -> list[str]:
    """The bundle's pages in page-number order, by URL."""
    entry = json.loads(bundle["pagefind-entry.json"])
    meta = search._unpack(bundle[f"pagefind.{entry['languages']['en']['hash']}.pf_meta"])
    return [json.loads(gzip.decompress(bundle[f"fragment/{page[0]}.pf_fragment"])[12:])["url"] for page in meta[1]]


def sent(monkeypatch) -> list[str]:
    types: list[str] = []
    real = search._Service.exchange

    def noting(self, payloads):
        payloads = list(payloads)
        types.extend(p["type"] for p in payloads)
        return real(self, payloads)

    monkeypatch.setattr(search._Service, "exchange", noting)
    return types


def steerable() -> bool:
    with tempfile.TemporaryDirectory(dir=search._scratch_parent(["<html></html>"])) as scratch:
        return search._listing_direction(scratch) != 0


@pytest.mark.parametrize("directory_urls", [True, False])
def test_files_and_records_give_the_same_bundle_in_walk_order(tmp_path, monkeypatch, directory_urls):
    if not steerable():
        pytest.skip("the temporary folder's listing order cannot be steered here")
    ctx = context(write_namespaced(tmp_path / "b"), use_directory_urls=directory_urls)
    found = search.records(ctx)
    types = sent(monkeypatch)
    from_files = search.canonical(search.index_files(found))  # filters in hash-map order: sorted
    assert "AddDir" in types and "AddRecord" not in types
    monkeypatch.setattr(search, "_listing_direction", lambda folder: 0)  # a hash-ordered file system
    from_records = search.canonical(search.index_files(found))
    assert types.count("AddRecord") == len(found)
    assert from_files == from_records
    index = "" if directory_urls else "index.html"
    # folder by folder, entries sorted: "a" < "index.html" < "x"
    assert page_urls(from_files) == [f"/belief/{p}/{index}" for p in ("b", "ns/a", "ns", "ns/x", "ns-a")]


def test_an_unwritable_scratch_folder_falls_back_to_records(monkeypatch):
    found = search.records(context(EXAMPLE))
    expected = search.canonical(search.index_files(found))
    types = sent(monkeypatch)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(search.tempfile, "mkdtemp", full)
    assert search.canonical(search.index_files(found)) == expected
    assert "AddDir" not in types and types.count("AddRecord") == len(found)


def test_files_listed_out_of_order_fall_back_to_records(tmp_path, monkeypatch):
    found = search.records(context(write_namespaced(tmp_path / "b")))
    expected = search.canonical(search.index_files(found))
    listdir = os.listdir
    monkeypatch.setattr(search, "_listing_direction", lambda folder: 1)  # the probe misleads:
    monkeypatch.setattr(search.os, "listdir", lambda folder: sorted(listdir(folder), reverse=True))
    types = sent(monkeypatch)
    assert search.canonical(search.index_files(found)) == expected
    assert "AddDir" not in types and types.count("AddRecord") == len(found)


def test_a_url_pagefind_would_rewrite_is_sent_as_a_record(tmp_path, monkeypatch):
    """Pagefind drops "index.html" wherever it stands in a file's path: `reindex.html/` would
    become `re/`."""
    folder = tmp_path / "b"
    folder.mkdir()
    for belief_id in ("reindex.html", "b"):
        (folder / f"{belief_id}.md").write_text(f"# {belief_id}\n\n**IN** · premise\n\nClaim.\n", encoding="utf-8")
    found = search.records(context(folder))
    types = sent(monkeypatch)
    stored = fragments(search.emit(context(folder)))
    assert [f["url"] for f in stored] == ["/belief/b/", "/belief/reindex.html/"]
    assert "AddDir" not in types and types.count("AddRecord") == len(found)


def test_records_carry_no_control_characters_and_no_empty_meta(tmp_path):
    network = tmp_path / "network.json"
    network.write_text(json.dumps({"nodes": {
        "a": {"text": "bell\u0007 nul\u0000 c1\u0085\u009f end", "truth_value": "IN", "justifications": []},
        "b": {"text": "", "truth_value": "IN", "justifications": []}}}), encoding="utf-8")
    ctx = context(network)
    a, b = search.records(ctx)
    assert a.content == "a\nbell nul c1 end" and a.meta["claim"] == "bell nul c1 end"
    assert b.content == "b" and "claim" not in b.meta  # Pagefind keeps no empty meta read from a page
    stored = fragments(search.emit(ctx))
    assert [(f["content"], f["meta"]) for f in stored] == [
        ("a bell nul c1 end", dict(a.meta)), ("b", dict(b.meta))]


@pytest.mark.parametrize("direction", [1, -1, 0])
def test_the_scratch_folder_is_removed(tmp_path, monkeypatch, direction):
    monkeypatch.setattr(search, "_scratch_parent", lambda pages: str(tmp_path))
    monkeypatch.setattr(search, "_listing_direction", lambda folder: direction)
    search.index_files(search.records(context(EXAMPLE)))
    assert list(tmp_path.iterdir()) == []


def _scratch_in(tmp_path, monkeypatch, on_add_dir) -> None:
    """Scratch folders go in `tmp_path`, listed in walk order; `on_add_dir(payload)` runs
    when the pages are sent to Pagefind, before Pagefind reads them."""
    monkeypatch.setattr(search, "_scratch_parent", lambda pages: str(tmp_path))
    monkeypatch.setattr(search, "_listing_direction", lambda folder: 1)
    listdir = os.listdir
    monkeypatch.setattr(search.os, "listdir", lambda folder: sorted(listdir(folder)))  # as probed
    real = search._Service.exchange

    def exchange(self, payloads):
        payloads = list(payloads)
        if payloads[0]["type"] == "AddDir":
            on_add_dir(payloads[0])
        return real(self, payloads)

    monkeypatch.setattr(search._Service, "exchange", exchange)


def test_the_scratch_folder_is_removed_when_the_indexer_fails(tmp_path, monkeypatch):
    def failing(payload):
        assert list(tmp_path.iterdir())  # the files are there while Pagefind reads them
        raise search.SearchError("the search indexer failed: boom")

    _scratch_in(tmp_path, monkeypatch, failing)
    with pytest.raises(search.SearchError, match="boom"):
        search.index_files(search.records(context(EXAMPLE)))
    assert list(tmp_path.iterdir()) == []


def test_the_scratch_folder_goes_with_files_it_did_not_make(tmp_path, monkeypatch):
    # What the build made is removed file by file; anything else found there (say, a file the
    # indexer left) must not keep the folder alive.
    def leaving_a_file(payload):
        page = next(Path(payload["path"]).rglob("index.html"))
        (page.parent / "stray.log").write_text("left behind", encoding="utf-8")

    _scratch_in(tmp_path, monkeypatch, leaving_a_file)
    search.index_files(search.records(context(EXAMPLE)))
    assert list(tmp_path.iterdir()) == []


def test_scratch_folders_of_killed_builds_are_removed(tmp_path, monkeypatch):
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    stale = tmp_path / f"{search.SCRATCH_PREFIX}{dead.pid}-abcd_123"
    live = tmp_path / f"{search.SCRATCH_PREFIX}{os.getpid()}-defg_456"  # a build still running
    for folder in (stale, live):
        (folder / "belief" / "x").mkdir(parents=True)
    monkeypatch.setattr(search, "_scratch_parent", lambda pages: str(tmp_path))
    search.index_files(search.records(context(EXAMPLE)))
    assert sorted(tmp_path.iterdir()) == [live]


def test_a_lost_record_fails_the_index(monkeypatch):
    found = search.records(context(EXAMPLE))
    found[0] = search.SearchRecord(url=found[0].url, content="", meta=found[0].meta)  # Pagefind drops pages without words
    with pytest.raises(search.SearchError, match=f"indexed {len(found) - 1} of {len(found)} records"):
        search.index_files(found)
    monkeypatch.setattr(search, "_listing_direction", lambda folder: 0)  # sent as records
    with pytest.raises(search.SearchError, match=f"indexed {len(found) - 1} of {len(found)} records"):
        search.index_files(found)


def test_record_urls_must_be_relative_page_urls():
    for url in ("/belief/a/", "belief/../a/", "belief//a/", "./a/"):
        with pytest.raises(search.SearchError, match="not a relative page URL"):
            search._file_of(url)
    assert search._file_of("belief/a/") == "belief/a/index.html"
    assert search._file_of("belief/a/index.html") == "belief/a/index.html"


def test_dev_shm_is_used_only_with_room_to_spare(monkeypatch):
    class Room:
        f_frsize = 4096
        f_bavail = 1000  # 4 MB
        f_favail = 10_000

    monkeypatch.setattr(search.os, "statvfs", lambda path: Room())
    monkeypatch.setattr(search.os, "access", lambda path, mode: True)
    assert search._scratch_parent(["x" * 100] * 100) == "/dev/shm"
    assert search._scratch_parent(["x" * 100] * 1000) is None  # the system's temporary folder
    assert search._scratch_parent(["x" * 10_000] * 100) is None  # long pages take more than a page each
    Room.f_favail = 100
    assert search._scratch_parent(["x" * 100] * 100) is None  # files and folders need inodes

    def missing(path):
        raise FileNotFoundError(path)

    monkeypatch.setattr(search.os, "statvfs", missing)
    assert search._scratch_parent(["x"]) is None


TRICKY = ["a &amp; b", "x &#x41; y", "&lt;script&gt;", "AT&T <b>bold</b> </span>", "\"quoted\" 'single'", "&",
          "a&b;c", "&nbsp;z", "naïve café ß İ", "emoji 😀 and ZWJ 👩‍💻", "right-to-left עברית", "\ufeff\ufffe\uffff",
          "combining e\u0301", "<!-- comment --> <![CDATA[x]]>", "data-pagefind-ignore", "x" * 5000]


def test_tricky_text_gives_the_same_bundle_as_files_and_as_records(monkeypatch):
    if not steerable():
        pytest.skip("the temporary folder's listing order cannot be steered here")
    found = [search.SearchRecord(url=f"belief/b{i}/", content=f"b{i}\n{text}",
                                 meta={"title": f"b{i}", "claim": text}, filters={"status": ["IN"]})
             for i, text in enumerate(TRICKY)]
    types = sent(monkeypatch)
    from_files = search.canonical(search.index_files(found))
    monkeypatch.setattr(search, "_listing_direction", lambda folder: 0)
    assert search.canonical(search.index_files(found)) == from_files
    assert types.count("AddDir") == 1 and types.count("AddRecord") == len(found)


def test_the_bundle_is_written_while_the_site_still_renders(tmp_path, cli, monkeypatch):
    """The search thread writes the bundle into the new site's folder as soon as Pagefind
    gives it (render.search.Indexing with a sink), not after every page: a last emitter
    finds it there before it returns. Written last, the bundle took 0.4 s of a 10k build."""
    import time
    from site_builder import render

    seen = []

    def waits_for_the_bundle(ctx):
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not seen:
            seen.extend(tmp_path.glob(".site.new-*/pagefind/pagefind-entry.json"))
            time.sleep(0.02)
        return []

    real = render.emitters
    monkeypatch.setattr(render, "emitters", lambda: (*real(), waits_for_the_bundle))
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--no-cache", "-j", "1")
    assert code == 0, err
    assert seen, "the bundle came only after the site's own files"
    assert (tmp_path / "site" / "pagefind" / "pagefind-entry.json").is_file()
