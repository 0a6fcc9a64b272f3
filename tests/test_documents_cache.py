"""Issue 7, point 4: the cache keeps parsed documents (site_builder/documents_cache.py).

A build with a cache folder parses only the documents whose files changed; what it takes
from the cache must be exactly what parsing gives (every field, locations included), and
a cache it did not write itself in place (committed, copied, damaged) is never read.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import site_builder.parse as parse_module
from site_builder import documents_cache, load
from site_builder.documents_cache import DOCUMENTS, STAMP, DocumentsCache, decode, encode
from site_builder.pipeline import check

from .conftest import EXAMPLE, ROOT
from .test_build import tree_digest

FIXTURES = ROOT / "tests" / "fixtures" / "invalid"


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    """A generated network of 300 beliefs as a documents folder."""
    base = tmp_path_factory.mktemp("docs")
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), "300", "-o", str(base / "n.json")],
                   check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "site_builder.cli", "import", str(base / "n.json"), "-o",
                    str(base / "beliefs")], check=True, capture_output=True, cwd=ROOT)
    return base / "beliefs"


def _parsed(monkeypatch) -> list[str]:
    """Records the path of every document parsed from now on."""
    seen: list[str] = []
    real = parse_module.parse_document

    def noting(source):
        seen.append(source.path)
        return real(source)
    monkeypatch.setattr(parse_module, "parse_document", noting)
    return seen


def _build(cli, source: Path, out: Path, *extra) -> str:
    code, _, err = cli("build", source, "-o", out, "--no-search", *extra)
    assert code == 0, err
    return err


def _checked_twice(source: Path, cache: Path):
    """check() parsing everything, then again with the facts a first pass kept."""
    first = DocumentsCache.open(cache)
    plain = check(source, known=first.facts)
    first.save(plain.parsed.facts)
    second = DocumentsCache.open(cache)
    return plain, check(source, known=second.facts), second


@pytest.mark.parametrize("case", sorted(p.name for p in FIXTURES.iterdir() if p.is_dir()) + ["example"])
def test_kept_facts_are_exactly_what_parsing_gives(case, tmp_path):
    """Every diagnostic fixture (and the example): the same network, facts and diagnostics,
    compared by repr, which shows the fields equality skips (paths, lines, tags)."""
    source = EXAMPLE if case == "example" else FIXTURES / case
    plain, cached, store = _checked_twice(source, tmp_path / "cache")
    assert repr(cached.parsed.network) == repr(plain.parsed.network)
    assert repr(cached.parsed.facts) == repr(plain.parsed.facts)
    assert cached.diagnostics == plain.diagnostics
    assert store.hits == len(plain.parsed.facts)  # every document was kept


def test_the_codec_gives_back_every_kind_of_value():
    from site_builder.model import Belief, Justification
    belief = Belief("x", "tëxt\n\ud7ff", justifications=(Justification("SL", ("a",), label="l", line=3,
                                                                          ante_lines=(4,), ante_tags=(None,)),),
                    metadata={"n": 1, "f": 0.5, "b": True, "none": None, "list": [1, [2, "T"]],
                              "nested": {"M": ["L"]}, "T": "T"}, path="p.md", line=2)
    back = decode(json.loads(json.dumps(encode(belief))))
    assert repr(back) == repr(belief) and type(back.metadata["list"]) is list
    with pytest.raises(TypeError):
        encode({"when": __import__("datetime").date(2026, 1, 1)})


def test_the_codec_gives_back_empty_containers_and_refuses_tags_it_never_writes():
    value = {"t": (), "l": [], "m": {}, "nested": [(), [], {}]}
    back = decode(json.loads(json.dumps(encode(value))))
    assert back == value and [type(v) for v in back["nested"]] == [tuple, list, dict]
    for damaged in ([True, "x"], [1.0, "x"], [9], ["X"], [None], [], "T", ["M", "odd"]):
        with pytest.raises(ValueError):
            decode(damaged)


def test_a_rebuild_parses_only_the_edited_document(cli, folder, tmp_path, monkeypatch):
    source = tmp_path / "beliefs"
    shutil.copytree(folder, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    seen = _parsed(monkeypatch)
    _build(cli, source, site, "--cache-dir", cache)
    assert len(seen) == 300 and (cache / DOCUMENTS).is_file()
    edited = sorted(source.glob("*.md"))[150]
    claim = json.loads((folder.parent / "n.json").read_text(encoding="utf-8"))["nodes"][edited.stem]["text"]
    text = edited.read_text(encoding="utf-8")
    assert text.count(claim) == 1
    edited.write_text(text.replace(claim, claim + " Edited."), encoding="utf-8")
    seen.clear()
    _build(cli, source, site, "--cache-dir", cache)
    assert seen == [str(edited)]
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")
    seen.clear()
    _build(cli, source, site, "--cache-dir", cache)  # nothing changed: nothing parsed
    assert seen == []


def _cold(cli, source: Path, out: Path) -> dict:
    _build(cli, source, out, "--no-cache", "-j", "1")
    return tree_digest(out)


def test_a_copied_or_committed_cache_is_not_read(cli, tmp_path, monkeypatch):
    """The stamp names the file's inode and time: a copy (or a checkout) has others, so its
    facts are not trusted, however plausible."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    shutil.copytree(cache, tmp_path / "copy")  # copy2: times kept, not the inode
    seen = _parsed(monkeypatch)
    _build(cli, EXAMPLE, tmp_path / "site2", "--cache-dir", tmp_path / "copy")
    assert len(seen) == len(list(EXAMPLE.glob("*.md"))) > 0
    seen.clear()
    _build(cli, EXAMPLE, tmp_path / "site2", "--cache-dir", tmp_path / "copy")  # now written in place
    assert seen == []


def _restamp(cache: Path) -> None:
    """Stamp the file as if a build had written it (to test what damage inside does)."""
    (cache / STAMP).write_text(documents_cache._stamp(cache))


def _damaged_build(cli, tmp_path, monkeypatch, damage) -> list[str]:
    """Build, replace the first entry's JSON by damage(JSON) in a file stamped as the build's
    own, build again: the documents parsed by that build (the site must be the cold one)."""
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    cold = _cold(cli, EXAMPLE, tmp_path / "cold")
    lines = (cache / DOCUMENTS).read_text().splitlines()
    key, data = lines[0].split("\t", 1)
    lines[0] = f"{key}\t{damage(data)}"
    (cache / DOCUMENTS).write_text("\n".join(lines) + "\n")
    _restamp(cache)
    seen = _parsed(monkeypatch)
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    assert tree_digest(site) == cold
    return seen


@pytest.mark.parametrize("damage", ["not json", "[99, 1]", "[0]", '["M", 1]', "[[[[", "truncated", "{}",
                                    '{"0": 1}', "[]", "[" * 100_000 + "]" * 100_000])
def test_a_damaged_entry_is_parsed_again(cli, tmp_path, monkeypatch, damage):
    seen = _damaged_build(cli, tmp_path, monkeypatch,
                          lambda data: data[:len(data) // 2] if damage == "truncated" else damage)
    assert len(seen) == 1
    seen.clear()
    _build(cli, EXAMPLE, tmp_path / "site", "--cache-dir", tmp_path / "cache")  # the entry was written again
    assert seen == []


@pytest.mark.parametrize("field, value", [(1, "elsewhere.md"), (3, "not a belief"), (4, "not stated"),
                                          (5, ["T", "not a diagnostic"]), (5, ["L"]), (6, ["T"])])
def test_facts_of_the_wrong_kind_are_parsed_again(cli, tmp_path, monkeypatch, field, value):
    """Well-formed JSON, wrong kinds of values inside (a damaged entry): parsed again."""
    def damage(data: str) -> str:
        entry = json.loads(data)
        entry[field] = value
        return json.dumps(entry)
    assert len(_damaged_build(cli, tmp_path, monkeypatch, damage)) == 1


def test_a_damaged_file_or_stamp_gives_a_full_parse(cli, tmp_path, monkeypatch):
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    seen = _parsed(monkeypatch)
    for stamp in ("{", "[]", '{"format": 1, "file": null}', "[" * 100_000):
        (cache / STAMP).write_text(stamp)
        seen.clear()
        _build(cli, EXAMPLE, site, "--cache-dir", cache)
        assert len(seen) == len(list(EXAMPLE.glob("*.md")))
    (cache / DOCUMENTS).write_bytes(b"\xff\xfe no tab, not ascii\n")
    _restamp(cache)
    seen.clear()
    _build(cli, EXAMPLE, site, "--cache-dir", cache)
    assert len(seen) == len(list(EXAMPLE.glob("*.md")))
    assert tree_digest(site) == _cold(cli, EXAMPLE, tmp_path / "cold")


def test_unusual_yaml_values_are_kept_exactly(cli, tmp_path, monkeypatch):
    """Front matter may hold huge and negative-zero floats, keys that look like numbers or
    null, an empty key: the cached facts give the same site; a document whose facts cannot be
    encoded is parsed on every build."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (source / "odd.md").write_text("---\nmetadata:\n  big: 1.0e+300\n  zero: -0.0\n  '1': one\n  '~': null key\n"
                                   "  '': empty\n  '2.5': [1, {a: [b, null, true]}]\n---\n# odd\n\n**IN** · premise\n\n"
                                   "A premise with odd metadata.\n", encoding="utf-8")
    site, cache = tmp_path / "site", tmp_path / "cache"
    real = documents_cache.encode
    monkeypatch.setattr(documents_cache, "encode",
                        lambda v: real(v) if not getattr(v, "path", "").endswith("odd.md") else real(object()))
    _build(cli, source, site, "--cache-dir", cache)
    seen = _parsed(monkeypatch)
    _build(cli, source, site, "--cache-dir", cache)
    assert seen == [str(source / "odd.md")]  # not encodable: parsed again
    monkeypatch.setattr(documents_cache, "encode", real)
    _build(cli, source, site, "--cache-dir", cache)
    seen.clear()
    _build(cli, source, site, "--cache-dir", cache)
    assert seen == []  # kept, and the site is the same
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def test_other_code_parses_again(tmp_path, monkeypatch):
    """The key holds a hash of the parsing code: an upgrade never reads old facts."""
    _checked_twice(EXAMPLE, tmp_path / "cache")
    monkeypatch.setattr(documents_cache, "code_digest", lambda: "another")
    store = DocumentsCache.open(tmp_path / "cache")
    check(EXAMPLE, known=store.facts)
    assert store.hits == 0


def test_only_this_builds_documents_are_kept(cli, tmp_path):
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    cache = tmp_path / "cache"
    _build(cli, source, tmp_path / "site", "--cache-dir", cache)
    before = len((cache / DOCUMENTS).read_text().splitlines())
    os.remove(sorted(source.glob("*.md"))[0])
    _build(cli, source, tmp_path / "site", "--cache-dir", cache)
    assert len((cache / DOCUMENTS).read_text().splitlines()) == before - 1


def test_fmt_refuses_documents_read_through_the_cache(tmp_path):
    """fmt rewrites line layouts, which the cache does not keep: it must see them all."""
    from site_builder.pipeline import formatted
    _, cached, store = _checked_twice(EXAMPLE, tmp_path / "cache")
    assert store.hits > 0
    with pytest.raises(ValueError, match="fmt needs every document"):
        formatted(cached)


# --- documents not even read: the index of file statuses ------------------------------------

def _read(monkeypatch, root: Path) -> list[str]:
    """Records the path of every document file under `root` read from now on."""
    seen: list[str] = []
    real = load._read_file

    def noting(path: str) -> bytes:
        if path.endswith(".md") and Path(path).is_relative_to(root):
            seen.append(path)
        return real(path)
    monkeypatch.setattr(load, "_read_file", noting)
    return seen


@pytest.fixture
def example(tmp_path) -> Path:
    """The example documents on the file system of tmp_path, where the tests keep their caches
    (statuses are listed only for files on the cache's file system)."""
    shutil.copytree(EXAMPLE, tmp_path / "example")
    return tmp_path / "example"


@pytest.fixture
def settled(monkeypatch):
    """Files count as settled as soon as they were written (a test cannot wait RACY_NS):
    even in the file system's current timestamp tick."""
    monkeypatch.setattr(documents_cache, "RACY_NS", -1_000_000_000)


def test_a_rebuild_reads_only_the_documents_whose_files_changed(cli, folder, tmp_path, monkeypatch, settled):
    source = tmp_path / "beliefs"
    shutil.copytree(folder, source)
    site, cache = tmp_path / "site", tmp_path / "cache"
    seen = _read(monkeypatch, source)
    _build(cli, source, site, "--cache-dir", cache)
    assert len(seen) == 300
    seen.clear()
    err = _build(cli, source, site, "--cache-dir", cache)
    assert seen == [] and "300 unchanged documents not parsed again (300 not read)" in err
    # The same size, the modification time put back (as some tools do): the change time tells.
    edited, renamed = sorted(source.glob("*.md"))[150], sorted(source.glob("*.md"))[151]
    before = edited.stat()
    claim = json.loads((folder.parent / "n.json").read_text(encoding="utf-8"))["nodes"][edited.stem]["text"]
    text = edited.read_text(encoding="utf-8")
    edited.write_text(text.replace(claim, claim.replace(" ", "_", 1)), encoding="utf-8")
    os.utime(edited, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert edited.stat().st_size == before.st_size and edited.stat().st_mtime_ns == before.st_mtime_ns
    # Replaced by another file (an editor's safe save): a new inode, all else equal.
    twin = tmp_path / "twin.md"
    shutil.copy2(renamed, twin)
    os.replace(twin, renamed)
    seen.clear()
    err = _build(cli, source, site, "--cache-dir", cache)
    assert sorted(seen) == sorted([str(edited), str(renamed)])
    assert "(298 not read)" in err
    assert tree_digest(site) == _cold(cli, source, tmp_path / "cold")


def test_a_file_changed_just_before_a_build_is_read_by_the_next(cli, tmp_path, monkeypatch):
    """Within RACY_NS of a build's start, a later change could leave the status as it was."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)  # every file changed now
    cache = tmp_path / "cache"
    _build(cli, source, tmp_path / "site", "--cache-dir", cache)
    assert json.loads((cache / documents_cache.INDEX).read_text())["files"] == {}
    seen = _read(monkeypatch, source)
    err = _build(cli, source, tmp_path / "site", "--cache-dir", cache)
    assert len(seen) == len(list(EXAMPLE.glob("*.md"))) and "not read" not in err


def test_an_index_of_other_code_is_not_used(cli, tmp_path, monkeypatch, settled, example):
    _build(cli, example, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    monkeypatch.setattr(documents_cache, "code_digest", lambda: "another")
    seen = _read(monkeypatch, example)
    _build(cli, example, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert len(seen) == len(list(example.glob("*.md")))


@pytest.mark.parametrize("damage", ["not json", "[]", '{"code": 1}', '{"files": []}', "entry: 7",
                                    "entry: []", 'entry: [1, 2, 3, 4, 5, 6]', "entry: null", "key: other",
                                    "[" * 100_000])
def test_a_damaged_index_reads_the_documents_again(cli, tmp_path, monkeypatch, settled, damage, example):
    site, cache = tmp_path / "site", tmp_path / "cache"
    _build(cli, example, site, "--cache-dir", cache)
    index = json.loads((cache / documents_cache.INDEX).read_text())
    first = sorted(index["files"])[0]
    if damage.startswith("entry: "):
        index["files"][first] = json.loads(damage[len("entry: "):])
        text = json.dumps(index)
    elif damage == "key: other":  # another document's facts
        index["files"][first][-1] = index["files"][sorted(index["files"])[1]][-1]
        text = json.dumps(index)
    else:
        text = damage
    (cache / documents_cache.INDEX).write_text(text)
    _restamp(cache)
    seen = _read(monkeypatch, example)
    _build(cli, example, site, "--cache-dir", cache)
    assert seen == ([first] if damage.startswith(("entry", "key")) else sorted(index["files"]))
    assert tree_digest(site) == _cold(cli, example, tmp_path / "cold")


def test_a_document_with_a_byte_order_mark_is_always_read(cli, tmp_path, monkeypatch, settled):
    """Its W103 comes from reading it, so a rebuild must too."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    marked = sorted(source.glob("*.md"))[0]
    marked.write_bytes(b"\xef\xbb\xbf" + marked.read_bytes())
    _build(cli, source, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    seen = _read(monkeypatch, source)
    err = _build(cli, source, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    assert seen == [str(marked)] and "W103" in err


def test_a_build_stopped_by_errors_keeps_the_documents_facts(cli, tmp_path, monkeypatch):
    """Mid-edit, a document with an error fails every build (serve rebuilds on each save):
    each of them, and the one after the fix, parses only what changed."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    broken = sorted(source.glob("*.md"))[0]
    good = broken.read_text(encoding="utf-8")
    broken.write_text(good.replace("**IN**", "**MAYBE**", 1), encoding="utf-8")
    site, cache = tmp_path / "site", tmp_path / "cache"
    code, _, err = cli("build", source, "-o", site, "--no-search", "--cache-dir", cache)
    assert code == 1 and "error" in err and not site.exists()
    seen = _parsed(monkeypatch)
    assert cli("build", source, "-o", site, "--no-search", "--cache-dir", cache)[0] == 1
    assert seen == []
    broken.write_text(good, encoding="utf-8")
    _build(cli, source, site, "--cache-dir", cache)
    assert seen == [str(broken)]


def test_a_build_stopped_by_a_template_error_keeps_the_documents_facts(cli, tmp_path, monkeypatch):
    """A template that fails while rendering (E805) stops the build after reading: the
    documents' facts are kept all the same, and the build after the fix parses nothing."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "belief.html").write_text("{{ 1 // 0 }}\n", encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: t\nplugins:\n  - beliefs:\n      source: beliefs\n      templates: theme\n")
    site, cache = tmp_path / "site", tmp_path / "cache"
    code, _, err = cli("build", "--config", config, "-o", site, "--no-search", "--cache-dir", cache)
    assert code == 1 and "E805" in err and not site.exists(), err
    seen = _parsed(monkeypatch)
    (tmp_path / "theme" / "belief.html").unlink()
    code, _, err = cli("build", "--config", config, "-o", site, "--no-search", "--cache-dir", cache)
    assert code == 0 and seen == [], err


def test_the_same_displayed_path_under_another_root_is_read(cli, tmp_path, settled):
    """`docs` + `ns/a.md` and `docs/ns` + `a.md` show one path for one file, but the id it
    must hold differs (E203): the relative path is part of what the facts are for."""
    docs = tmp_path / "docs"
    (docs / "ns").mkdir(parents=True)
    (docs / "ns" / "a.md").write_text("# ns:a\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    cache = tmp_path / "cache"
    _build(cli, docs, tmp_path / "one", "--cache-dir", cache)
    code, _, err = cli("build", docs / "ns", "-o", tmp_path / "two", "--no-search", "--cache-dir", cache)
    assert code == 1 and "E203" in err


def test_the_same_displayed_path_under_another_root_is_read_in_one_build_process(tmp_path, settled):
    """serve's build process holds the last build's facts (pipeline.Memory) and rereads its
    configuration for every build: when its source moves from `docs` to `docs/ns`, the facts
    the index finds for `a.md` by its displayed path are not the file's, whichever way."""
    from site_builder.config import SiteConfig
    from site_builder.pipeline import Memory, build
    docs = tmp_path / "docs"
    (docs / "ns").mkdir(parents=True)
    (docs / "ns" / "a.md").write_text("# ns:a\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    cache, memory = tmp_path / "cache", Memory()
    assert build(SiteConfig(source=str(docs), search=False), tmp_path / "one", cache=cache, memory=memory).written
    moved = build(SiteConfig(source=str(docs / "ns"), search=False), tmp_path / "two", cache=cache, memory=memory)
    assert not moved.written and "E203" in {d.code for d in moved.diagnostics}
    back = build(SiteConfig(source=str(docs), search=False), tmp_path / "one", cache=cache, memory=memory)
    assert back.written and "E203" not in {d.code for d in back.diagnostics}


def test_statuses_follow_the_file_systems_clock_and_device(cli, tmp_path, monkeypatch, settled, example):
    """The racy rule reads "now" from the cache folder's file system, and lists only files
    there; where that clock cannot be read (not POSIX, a read-only folder), none."""
    _build(cli, example, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    listed = json.loads((tmp_path / "cache" / documents_cache.INDEX).read_text())["files"]
    assert len(listed) == len(list(example.glob("*.md")))
    assert documents_cache._clock(tmp_path / "cache")[0] == os.stat(example).st_dev
    real = documents_cache._clock
    for fake in (lambda folder: None, lambda folder: (real(folder)[0] + 1, real(folder)[1])):
        monkeypatch.setattr(documents_cache, "_clock", fake)
        shutil.rmtree(tmp_path / "cache")
        _build(cli, example, tmp_path / "site", "--cache-dir", tmp_path / "cache")
        assert json.loads((tmp_path / "cache" / documents_cache.INDEX).read_text())["files"] == {}
    monkeypatch.setattr(documents_cache.os, "name", "nt")
    assert real(tmp_path / "cache") is None


def test_a_document_this_user_cannot_read_is_not_taken_unread(cli, tmp_path, monkeypatch, settled):
    """A cold build says E101 for it; so must one whose cache another user filled. (Root
    reads any file, so the permission is played by patching `access` and the read.)"""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    _build(cli, source, tmp_path / "site", "--cache-dir", tmp_path / "cache")
    locked = sorted(source.glob("*.md"))[0]
    real_access, real_read = os.access, load._read_file

    def read(path):
        if Path(path) == locked:
            raise PermissionError(13, "Permission denied")
        return real_read(path)
    monkeypatch.setattr(documents_cache.os, "access", lambda p, mode: Path(p) != locked and real_access(p, mode))
    monkeypatch.setattr(load, "_read_file", read)
    code, _, err = cli("build", source, "-o", tmp_path / "site", "--no-search", "--cache-dir", tmp_path / "cache")
    assert code == 1 and f"{locked}: E101 cannot read file: Permission denied" in err
