"""Hostile and broken input: every case gives a clear `path:line: CODE message`, the right
exit code, no traceback, and loses nothing (the input is never modified, the other
beliefs are still read). Spec §3.2 pre-processing, §3.4, §3.5, §1.7.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from site_builder.model import IN, OUT
from site_builder.pipeline import check

from .conftest import EXAMPLE, SEED

DIAGNOSTIC = re.compile(r"(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+))?: (?P<code>[EW]\d{3}) (?P<message>.+)")
ID_RULE = ("id must be lower-case letters, digits, '.' and '-' (starting and ending with "
           "a letter or digit), optionally 'namespace:local'")


# -- helpers -------------------------------------------------------------------------------

def write(root: Path, files: dict[str, str | bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_bytes(content.encode("utf-8"))


def snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def premise(belief_id: str, tv: str = IN, text: str | None = None) -> str:
    return f"# {belief_id}\n\n**{tv}** · premise\n\n{text or f'Claim {belief_id}.'}\n"


def derived(belief_id: str, tv: str, ante: list[str] = (), unless: list[str] = (),
            jtype: str = "SL", depth: int = 1) -> str:
    """A Markdown-spelled derived belief with one justification (items written as given)."""
    out = (f"# {belief_id}\n\n**{tv}** · derived (depth {depth})\n\nClaim {belief_id}.\n\n"
           f"## Justifications\n\n### {jtype} — because\n")
    if ante:
        out += "\nAntecedents (all must be IN):\n\n" + "".join(f"- {a}\n" for a in ante)
    if unless:
        out += "\nUnless (all must be OUT):\n\n" + "".join(f"- {u}\n" for u in unless)
    return out


class Run:
    """One `belief-site` run: exit code, streams, and the diagnostic lines printed."""

    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err
        assert "Traceback" not in out + err
        self.lines = [line for line in (err + "\n" + out).splitlines() if DIAGNOSTIC.fullmatch(line)]
        self.codes = [DIAGNOSTIC.fullmatch(line)["code"] for line in self.lines]


@pytest.fixture
def run(cli, tmp_path, monkeypatch):
    """Run the CLI with cwd = tmp_path; assert that the run changed no input file."""
    monkeypatch.chdir(tmp_path)

    def go(*args: str, writes: bool = False) -> Run:
        before = snapshot(tmp_path)
        result = Run(*cli(*args))
        if not writes:
            assert snapshot(tmp_path) == before, "the command changed its input"
        return result
    return go


@pytest.fixture
def checked(tmp_path, monkeypatch):
    """The pipeline's view of a source (relative to tmp_path)."""
    monkeypatch.chdir(tmp_path)
    return check


# -- encoding and bytes ------------------------------------------------------------------------

def test_non_utf8_bytes_excluded_with_byte_offset(tmp_path, run, checked):
    write(tmp_path, {
        "beliefs/a.md": b"# a\n\n**IN** \xc2\xb7 premise\n\nCaf\xe9 au lait.\n",
        "beliefs/b.md": derived("b", OUT, ["a"]),
        "beliefs/c.md": premise("c"),
    })
    r = run("check", "beliefs")
    assert r.code == 1
    assert "beliefs/a.md:5: E101 bytes are not valid UTF-8 at byte offset 27" in r.lines
    assert "hint: save the file as UTF-8" in r.err
    # Its id is unresolved elsewhere (W401), and the rest of the network is still read.
    assert ("beliefs/b.md:13: W401 antecedent 'a' of justification 1 is not in the network: "
            "treated as OUT") in r.lines
    assert sorted(r.codes) == ["E101", "W401"]
    assert "2 beliefs, 1 error, 1 warning" in r.err
    result = checked("beliefs")
    assert sorted(result.parsed.network.beliefs) == ["b", "c"]
    assert result.evaluation.status == {"b": OUT, "c": IN}


def test_non_utf8_network_json(tmp_path, run):
    data = json.dumps({"nodes": {"a": {"text": "Caf\u00e9.", "truth_value": "IN",
                                       "justifications": []}}}, indent=2, ensure_ascii=False)
    raw = data.encode("utf-8").replace("é".encode("utf-8"), b"\xe9")
    write(tmp_path, {"network.json": raw})
    r = run("check", "network.json")
    assert r.code == 1
    offset = raw.index(b"\xe9")
    assert r.lines == [f"network.json:4: E101 bytes are not valid UTF-8 at byte offset {offset}"]
    assert (tmp_path / "network.json").read_bytes() == raw


def test_a_lone_surrogate_escape_in_network_json_is_an_error_with_its_node(tmp_path, run):
    """json.loads turns "\\ud800" into a lone surrogate, which no UTF-8 page can hold."""
    nodes = {"a": {"text": "Fine \U0001F600.", "truth_value": "IN", "justifications": []},
             "b": {"text": "Broken \ud800 here.", "truth_value": "IN", "justifications": []}}
    write(tmp_path, {"network.json": json.dumps({"nodes": nodes}, indent=2)})  # escapes all
    r = run("check", "network.json")
    assert r.code == 1
    assert r.lines == ["network.json:8: E601 node 'b' holds a lone UTF-16 surrogate escape (such as \\ud800): "
                       "no character, and no UTF-8 file can hold it"]
    r = run("build", "network.json", "-o", "site", writes=True)
    assert r.code == 1 and not (tmp_path / "site").exists()


def test_surrogate_escapes_in_front_matter_pair_up_or_are_an_error(tmp_path, run, checked):
    front = '---\nmetadata:\n  note: "smile \\ud83d\\ude00"\n---\n'
    write(tmp_path, {"beliefs/a.md": front + premise("a"),
                     "beliefs/b.md": front.replace("\\ude00", "") + premise("b")})
    r = run("check", "beliefs")
    assert r.lines == ["beliefs/b.md:3: E105 invalid front matter: a lone UTF-16 surrogate escape (such as "
                       "\\ud800): no character, and no UTF-8 file can hold it"]
    assert checked("beliefs").parsed.network.beliefs["a"].metadata == {"note": "smile \U0001F600"}


def test_a_base_url_that_is_not_utf8_is_a_usage_error(tmp_path, run):
    """The shell passes undecodable bytes as lone surrogates (surrogateescape): not a traceback."""
    r = run("build", str(EXAMPLE), "-o", "site", "--base-url", "https://example.org/\udcff/", writes=True)
    assert r.code == 2 and "argument --base-url: not valid UTF-8" in r.err and "Traceback" not in r.err
    assert not (tmp_path / "site").exists()


@pytest.mark.parametrize("url, problem", [
    ("example.org/kb", "must be an absolute http(s) URL, such as https://example.org/kb/, not 'example.org/kb'"),
    ("file:///srv/kb/", "must be an absolute http(s) URL"),
    ("https://example.org/my kb/", "must not hold spaces (write %20)"),
])
def test_a_site_url_that_is_not_an_absolute_http_url_is_refused(tmp_path, run, url, problem):
    """Found by an exports audit: a base URL without its scheme made a sitemap of relative
    <loc>s, a robots.txt pointing nowhere and embed snippets that break where pasted."""
    r = run("build", str(EXAMPLE), "-o", "site", "--base-url", url, writes=True)
    assert r.code == 2 and f"argument --base-url: {problem}" in r.err and "Traceback" not in r.err
    r = run("diff", str(EXAMPLE), str(EXAMPLE), "--format", "markdown", "--site-url", url)
    assert r.code == 2 and f"argument --site-url: {problem}" in r.err
    write(tmp_path, {"mkdocs.yml": f"site_name: kb\nsite_url: {url}\n"})
    r = run("build", str(EXAMPLE), "-o", "site", "--no-search", writes=True)
    assert r.code == 1 and any(line.startswith(f"mkdocs.yml:2: E802 option 'site_url' {problem}") for line in r.lines), r.err
    assert not (tmp_path / "site").exists()


def test_a_surrogate_escape_in_the_configuration_is_an_error_and_nothing_is_built(tmp_path, run):
    write(tmp_path, {"mkdocs.yml": f'site_name: "Mine \\udcff"\nplugins:\n  - beliefs:\n'
                                   f'      source: {EXAMPLE}\n      visible_to: ["a\\ud800"]\n'})
    r = run("build", "-o", "site", "--no-search", writes=True)
    assert r.code == 1 and "Traceback" not in r.err
    assert ("mkdocs.yml:1: E802 option 'site_name' holds a UTF-16 surrogate escape (such as \\udcff), "
            "which no UTF-8 page can hold") in r.lines
    assert any("option 'visible_to' holds a UTF-16 surrogate escape" in line for line in r.lines)
    assert not (tmp_path / "site").exists()


def test_folder_names_that_are_not_utf8_never_give_a_traceback(tmp_path, run, capsys):
    """A file name's bytes that are not UTF-8 reach Python as lone surrogates: the build (with
    its cache, an edit link and a diff base), check's JSON and diff's report still work."""
    project = tmp_path / "project"
    project.mkdir()
    source = os.fsdecode(os.fsencode(project) + b"/b\xe9liefs")
    shutil.copytree(EXAMPLE, source)
    (project / "mkdocs.yml").write_text("repo_url: https://github.com/o/r\n", encoding="utf-8")
    site = os.fsdecode(os.fsencode(tmp_path) + b"/s\xff")
    r = run("build", source, "--config", str(project / "mkdocs.yml"), "-o", site, "--no-search",
            "--diff-base", source, writes=True)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    page = (Path(site) / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert "https://github.com/o/r/edit/main/b%E9liefs/" in page  # the name's own bytes
    assert "b\ufffdliefs" in (Path(site) / "changes" / "index.html").read_text(encoding="utf-8")
    r = run("build", source, "--config", str(project / "mkdocs.yml"), "-o", site, "--no-search",
            "--diff-base", source, writes=True)
    assert r.code == 0 and "unchanged belief page" in r.err  # the cache was saved and read
    r = run("check", "--format", "json", source)
    assert r.code == 0 and "Traceback" not in r.err
    r = run("diff", source, source, "--format", "markdown", "--site-url", "https://example.org/")
    assert r.code == 0 and "Traceback" not in r.err
    r = run("diff", source, source, "--site-url", "https://example.org/\udcff/")
    assert r.code == 2 and "argument --site-url: not valid UTF-8" in r.err


DEEP = 50_000  # nesting levels: deeper than any parser's recursion limit


@pytest.mark.parametrize("where, expected", [
    ("network.json", "network.json:1: E601 not a network export: arrays or objects nested too deeply to read"),
    ("_project.yaml", "beliefs/_project.yaml:1: E105 invalid YAML: lists or maps nested too deeply to read"),
    ("front matter", f"beliefs/{SEED}.md:2: E105 invalid front matter: lists or maps nested too deeply to read"),
    ("mkdocs.yml", "mkdocs.yml:1: E802 cannot read the configuration: nested too deeply"),
    ("mkdocs.yml digits", "mkdocs.yml:1: E802 cannot read the configuration: a number of thousands of digits "
                          "(Python reads at most 4,300)")])
def test_absurdly_nested_json_or_yaml_is_an_error_not_a_traceback(tmp_path, run, where, expected):
    shutil.copytree(EXAMPLE, tmp_path / "beliefs")
    deep = "[" * DEEP + "]" * DEEP
    source = "beliefs"
    if where == "network.json":
        (tmp_path / "network.json").write_text('{"nodes": ' + deep + "}", encoding="utf-8")
        source = "network.json"
    elif where == "_project.yaml":
        (tmp_path / "beliefs" / "_project.yaml").write_text(f"meta: {deep}\n", encoding="utf-8")
    elif where == "front matter":
        doc = tmp_path / "beliefs" / f"{SEED}.md"
        doc.write_text(f"---\nsummary: {deep}\n---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    elif where == "mkdocs.yml digits":
        (tmp_path / "mkdocs.yml").write_text(f"site_name: 1{'0' * 5000}\n", encoding="utf-8")
    else:
        (tmp_path / "mkdocs.yml").write_text(f"site_name: {deep}\n", encoding="utf-8")
    result = run("check", source)
    assert result.code == 1 and expected in result.lines, result.err


def test_nesting_that_json_reads_but_later_steps_cannot_is_an_error_not_a_traceback(tmp_path, run):
    """Hundreds of levels load, but joining surrogate escapes and writing YAML recurse per level."""
    def network(value: str, text: str = "x") -> str:
        return '{"nodes": {"a": {"text": "' + text + '", "truth_value": "IN", "metadata": {"deep": ' + value + "}}}}"
    (tmp_path / "escaped.json").write_text(network("[" * 600 + '"\\ud83d\\ude00"' + "]" * 600, "\\ud83d\\ude00"))
    (tmp_path / "deep.json").write_text(network("[" * 400 + "1" + "]" * 400))
    result = run("check", "escaped.json")
    assert result.code == 1 and "escaped.json:1: E601 not a network export: arrays or objects nested too deeply " \
                                "to read" in result.lines, result.err
    result = run("import", "deep.json", "-o", "documents", writes=True)
    assert result.code == 1 and "deep.json holds values nested too deeply to write as documents" in result.err
    assert not (tmp_path / "documents").exists()


SECRET = "TOP-SECRET-TOKEN-5f2c"


def _special_files(folder: Path, outside: Path) -> None:
    """A pipe, a link to an endless device and a link to a document outside the folder."""
    os.mkfifo(folder / "pipe.md")
    (folder / "zero.md").symlink_to("/dev/zero")
    (outside / "leak.md").write_text(f"# leak\n\n**IN** · premise\n\n{SECRET}\n", encoding="utf-8")
    (folder / "leak.md").symlink_to(outside / "leak.md")
    (folder / ".private").mkdir()
    (folder / ".private" / "env").write_text(f"API_KEY={SECRET}\n", encoding="utf-8")
    (folder / "env.md").symlink_to(".private/env")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX pipes")
def test_a_pipe_given_as_the_network_json_is_an_error_not_a_hang(tmp_path):
    os.mkfifo(tmp_path / "network.json")
    done = subprocess.run([sys.executable, "-m", "site_builder.cli", "check", "network.json"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert done.returncode == 1 and "network.json: E101 cannot read file: not a regular file" in done.stderr


def test_a_tree_thousands_of_folders_deep_is_read(tmp_path, checked):
    folder = where = tmp_path / "beliefs"
    folder.mkdir()
    made = []
    for _ in range(1100):  # one by one: os.makedirs itself recurses per folder
        where = where / "d"
        where.mkdir()
        made.append(where)
    (where / "x.md").write_text("# x\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    try:
        found = checked(folder)
        assert [d.code for d in found.diagnostics] == ["E203"]  # read: its id is not its path
    finally:  # bottom up: shutil.rmtree (pytest's clean-up of old runs) recurses per folder on 3.11
        (where / "x.md").unlink()
        for made_folder in reversed(made):
            made_folder.rmdir()


def test_an_unreadable_folder_is_skipped_and_the_rest_is_read(tmp_path, monkeypatch, checked):
    """As os.walk did: a folder that cannot be listed does not stop the walk (root reads any
    folder, so the refusal is simulated)."""
    from site_builder import load as load_module
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (source / "aa").mkdir()
    (source / "aa" / "x.md").write_text("# aa:x\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    (source / "zz").mkdir()
    (source / "zz" / "y.md").write_text("# zz:y\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    real = os.scandir

    def refusing(folder):
        if str(folder).endswith("aa"):
            raise PermissionError(13, "Permission denied", str(folder))
        return real(folder)

    monkeypatch.setattr(load_module.os, "scandir", refusing)
    ids = set(checked(source).parsed.network.beliefs)
    assert "zz:y" in ids and "aa:x" not in ids and SEED in ids


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="POSIX special files")
def test_pipes_devices_and_links_out_of_the_folder_are_not_read(tmp_path):
    """A repository (a pull request) can hold links: one to /dev/zero would never end, one to a
    file elsewhere (a key, /proc/self/environ) would publish it; a pipe would block. Each is
    E101 and the rest is built. In a subprocess: without the rule the build never ends."""
    source, outside = tmp_path / "beliefs", tmp_path / "elsewhere"
    shutil.copytree(EXAMPLE, source)
    outside.mkdir()
    _special_files(source, outside)
    (source / "sub").mkdir()
    (source / "sub" / "inner.md").symlink_to(source / f"{SEED}.md")  # a link inside the folder is read
    site = tmp_path / "site"
    done = subprocess.run([sys.executable, "-m", "site_builder.cli", "build", str(source), "-o", str(site),
                           "--keep-going", "--no-search", "--no-cache"],
                          capture_output=True, text=True, timeout=30, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert f"{source}/pipe.md: E101 cannot read file: not a regular file" in done.stderr
    for name in ("zero.md", "leak.md"):
        assert f"{source}/{name}: E101 cannot read file: a link to a file outside the documents folder" in done.stderr
    assert f"{source}/env.md: E101 cannot read file: a link to a hidden file of the documents folder" in done.stderr
    assert f"{source}/sub/inner.md:1: E203" in done.stderr  # read: its id is not its path
    assert SECRET not in done.stderr + done.stdout
    assert not any(SECRET.encode() in p.read_bytes() for p in site.rglob("*") if p.is_file())
    assert (site / "belief" / SEED / "index.html").is_file()


def test_bom_is_stripped_and_reported(tmp_path, run, checked):
    text = premise("a")
    write(tmp_path, {"with/a.md": b"\xef\xbb\xbf" + text.encode("utf-8"), "without/a.md": text})
    r = run("check", "with")
    assert r.code == 0
    assert r.lines == ["with/a.md:1: W103 byte-order mark present (stripped)"]
    assert run("check", "--strict", "with").code == 1
    # The BOM is not part of the id: the document parses exactly like the one without it.
    with_bom, without = checked("with"), checked("without")
    assert list(with_bom.parsed.network.beliefs.values()) == list(without.parsed.network.beliefs.values())
    assert with_bom.parsed.network.beliefs["a"].text == "Claim a."
    assert without.diagnostics == ()


def test_fmt_keeps_the_bom(tmp_path, run):
    stale = premise("b") + "\n## Dependents\n\n"
    write(tmp_path, {
        "beliefs/a.md": b"\xef\xbb\xbf" + derived("a", IN, ["OUT b — Claim b."], depth=4).encode("utf-8"),
        "beliefs/b.md": stale,
    })
    r = run("fmt", "beliefs", writes=True)
    assert r.code == 0
    data = (tmp_path / "beliefs/a.md").read_bytes()
    assert data.startswith(b"\xef\xbb\xbf# a\n")
    assert "**IN** · derived (depth 1)" in data.decode("utf-8")
    assert "- IN b — Claim b." in data.decode("utf-8")
    assert run("check", "beliefs").codes == ["W103"]


def _crlf_copy(tmp_path: Path) -> tuple[Path, Path]:
    lf, crlf = tmp_path / "lf", tmp_path / "crlf"
    shutil.copytree(EXAMPLE, lf)
    crlf.mkdir()
    for path in sorted(lf.glob("*.md")):
        (crlf / path.name).write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    return lf, crlf


def test_crlf_parses_exactly_like_lf(tmp_path, run, checked):
    lf, crlf = _crlf_copy(tmp_path)
    assert b"\r\n" in (crlf / "attention-is-non-symmetric.md").read_bytes()
    a, b = checked("lf"), checked("crlf")
    assert len(a.parsed.network.beliefs) == 5
    assert list(a.parsed.network.beliefs.values()) == list(b.parsed.network.beliefs.values())
    assert dict(a.evaluation.status) == dict(b.evaluation.status)
    assert dict(a.evaluation.depth) == dict(b.evaluation.depth)
    assert a.diagnostics == b.diagnostics == ()
    r = run("check", "--strict", "crlf")
    assert (r.code, r.lines) == (0, [])
    assert "5 beliefs, 0 errors, 0 warnings" in r.err
    r = run("fmt", "--check", "crlf")
    assert r.code == 0
    assert "0 of 5 documents would change" in r.err


def test_fmt_keeps_the_line_ends_most_lines_have(tmp_path, run):
    """One stray CRLF line in an LF file once turned every line end of it into CRLF."""
    write(tmp_path, {"beliefs/a.md": premise("a", OUT),
                     "beliefs/b.md": derived("b", OUT, ["OUT a — stale echo"], depth=7).replace(
                         "Claim b.\n", "Claim b.\r\n")})
    assert run("fmt", "beliefs", writes=True).code == 0
    data = (tmp_path / "beliefs/b.md").read_bytes()
    assert b"\r" not in data and b"- OUT a \xe2\x80\x94 Claim a.\n" in data
    assert run("fmt", "--check", "beliefs").code == 0


def test_fmt_keeps_crlf_line_ends(tmp_path, run):
    _, crlf = _crlf_copy(tmp_path)
    target = crlf / "attention-universality-grounded-in-structural-richness.md"
    original = target.read_bytes()
    target.write_bytes(original.replace(b"(depth 2)", b"(depth 7)"))
    assert run("check", "crlf").lines == [
        "crlf/attention-universality-grounded-in-structural-richness.md:3: W503 "
        "stale derived content: says depth 7, is 2"]
    assert run("fmt", "crlf", writes=True).code == 0
    assert target.read_bytes() == original


def test_empty_and_whitespace_only_files(tmp_path, run, checked):
    write(tmp_path, {
        "beliefs/a.md": b"",
        "beliefs/b.md": " \n\t\n   \n",
        "beliefs/c.md": premise("c"),
        "beliefs/d.md": derived("d", OUT, ["a"]),
    })
    r = run("check", "beliefs")
    assert r.code == 1
    assert "beliefs/a.md:1: E102 empty or whitespace-only file" in r.lines
    assert "beliefs/b.md:1: E102 empty or whitespace-only file" in r.lines
    assert ("beliefs/d.md:13: W401 antecedent 'a' of justification 1 is not in the network: "
            "treated as OUT") in r.lines
    assert sorted(r.codes) == ["E102", "E102", "W401"]
    assert sorted(checked("beliefs").parsed.network.beliefs) == ["c", "d"]


def test_ten_megabyte_document(tmp_path, run, checked):
    line = "Attention is a directed computation — i→j ≠ j→i, √d_k scaling, and more words here. "
    text = "\n".join(line.strip() for _ in range(20_000))  # ~2 MB claim over many lines
    summary = "\n".join((line * 5).rstrip() for _ in range(20_000))  # ~9 MB summary of long lines
    body = (f"# big\n\n**IN** · derived (depth 1)\n\n{text}\n\n## Summary\n\n{summary}\n\n"
            "## Justifications\n\n### SL — many\n\nAntecedents (all must be IN):\n\n"
            + "".join(f"- IN p{i} — Claim p{i}.\n" for i in range(2_000)))
    files = {"beliefs/big.md": body}
    files.update({f"beliefs/p{i}.md": premise(f"p{i}") for i in range(2_000)})
    write(tmp_path, files)
    assert (tmp_path / "beliefs/big.md").stat().st_size >= 10 * 1024 * 1024
    start = time.monotonic()
    r = run("check", "--strict", "beliefs")
    elapsed = time.monotonic() - start
    assert (r.code, r.lines) == (0, [])
    assert "2001 beliefs, 0 errors, 0 warnings" in r.err
    assert elapsed < 60, f"check took {elapsed:.1f} s"
    big = checked("beliefs").parsed.network.beliefs["big"]
    assert big.text == text
    assert big.summary == summary
    assert len(big.justifications[0].antecedents) == 2_000


# -- the head: status line ---------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["# a\n\nClaim a.\n", "a\n\nClaim a.\n\nSummary\n\nWhy.\n"],
                         ids=["markdown", "plain"])
def test_missing_status_line(tmp_path, run, checked, spelling):
    write(tmp_path, {"beliefs/a.md": spelling})
    r = run("check", "beliefs")
    assert r.code == 0
    assert r.lines == ["beliefs/a.md:1: W206 missing status line (IN assumed)"]
    assert "hint: add a line such as 'IN premise' after the title" in r.err
    assert run("check", "--strict", "beliefs").code == 1
    belief = checked("beliefs").parsed.network.beliefs["a"]
    assert (belief.declared, belief.text) == (IN, "Claim a.")


TYPOS = ["IM derived", "IN derivd", "**IN** · derivd (depth 1)", "OUT premis — a source", "INN premise",
         # Start with IN/OUT followed by premise/derived, yet no full match (spec §3.2: E205).
         "IN  premise", "IN premise.", "OUT derived (depth 2",
         # Found by an authoring audit: each was claim text, and `**OUT** - premise` lost its retraction.
         "**OUT** - premise", "**In** · premise", "In premise", "**IN**", "**IN ·** premise", "Out derived (depth 2)",
         "**IN** • premise"]  # a bullet for the middle dot (a data-loss audit)


@pytest.mark.parametrize("status", TYPOS)
def test_status_typo_is_an_error_not_text(tmp_path, run, checked, status):
    write(tmp_path, {"beliefs/a.md": f"# a\n\n{status}\n\nClaim a.\n"})
    r = run("check", "beliefs")
    assert r.lines == [f"beliefs/a.md:3: E205 malformed status line {status!r}"]
    assert r.code == 1
    # The typo did not turn into text, and the belief is still read.
    assert checked("beliefs").parsed.network.beliefs["a"].text == "Claim a."


@pytest.mark.parametrize("first_line", [
    "IN nodes — the believed ones — are drawn green.",
    "OUT beliefs are hidden",
    "CP systems favour consistency",
    "In premise logic, a rule is an axiom.",
    "OUT-of-band signalling works.",
    "Out of memory errors are rare.",
])
def test_text_that_only_looks_like_a_status_stays_text(tmp_path, run, checked, first_line):
    """Spec §3.2: real texts begin with "IN nodes…"; only IN|OUT|STALE + premise|derived is E205."""
    write(tmp_path, {"beliefs/a.md": f"# a\n\n{first_line}\n"})
    r = run("check", "beliefs")
    assert r.lines == ["beliefs/a.md:1: W206 missing status line (IN assumed)"]
    assert r.code == 0
    assert checked("beliefs").parsed.network.beliefs["a"].text == first_line


@pytest.mark.parametrize("line, code, message", [
    ("Created: 2024-01-01", "E205", "malformed dates line 'Created: 2024-01-01'"),
    ("Created 2024-01-01, Reviewed 2024-02-01", "E205", "malformed dates line 'Created 2024-01-01, Reviewed 2024-02-01'"),
    ("Reason out: superseded", "E205", "malformed reason line 'Reason out: superseded'"),
    ("Created 2024-13-45", "W208", "timestamp '2024-13-45' is not ISO-8601 (kept verbatim)"),
])
def test_a_dates_or_reason_typo_is_said_not_read_as_claim_text(tmp_path, run, checked, line, code, message):
    """Found by an authoring audit: each turned into the first line of the claim, silently."""
    write(tmp_path, {"beliefs/a.md": f"# a\n\n**OUT** · premise\n\n{line}\n\nClaim a.\n"})
    r = run("check", "beliefs")
    assert r.lines == [f"beliefs/a.md:5: {code} {message}"], r.err
    assert checked("beliefs").parsed.network.beliefs["a"].text == "Claim a."


@pytest.mark.parametrize("heading, section", [
    ("### Justifications", "Justifications"), ("# Summary", "Summary"), ("**Summary**", "Summary"),
    ("Justification", "Justifications"), ("##Justifications", "Justifications")])
def test_a_misspelt_section_heading_is_an_error_not_claim_text(tmp_path, run, heading, section):
    """Found by an authoring audit: `### Justifications` made the justifications claim text;
    the only message was W503 "says derived, is premise", whose `fmt` made it permanent."""
    write(tmp_path, {"beliefs/p.md": premise("p"),
                     "beliefs/a.md": f"# a\n\n**IN** · derived\n\nClaim a.\n\n{heading}\n\n"
                                     "### SL — from p\nAntecedents (all must be IN):\n- IN p — Claim p.\n"})
    r = run("check", "beliefs")
    assert r.code == 1 and f"beliefs/a.md:7: E301 {heading!r} is not a section heading" in r.lines, r.err
    assert f"hint: write '## {section}'" in r.err
    before = (tmp_path / "beliefs" / "a.md").read_bytes()
    assert run("fmt", "beliefs", writes=True).code == 1  # refused: the W503 beside it is no fmt's to fix
    assert (tmp_path / "beliefs" / "a.md").read_bytes() == before


def test_front_matter_after_a_blank_line_is_said_so(tmp_path, run):
    """It was `E202 invalid id '---'` (found by an authoring audit)."""
    write(tmp_path, {"beliefs/a.md": "\n---\nsource: x\n---\n# a\n\n**IN** · premise\n\nClaim a.\n"})
    r = run("check", "beliefs")
    assert r.lines == ["beliefs/a.md:2: E202 front matter ('---') must begin on the first line of the file"]


def test_document_without_claim_text(tmp_path, run, checked):
    write(tmp_path, {"beliefs/a.md": "# a\n\n**IN** · premise\n\n## Summary\n\nOnly a summary.\n",
                     "beliefs/b.md": premise("b")})
    r = run("check", "beliefs")
    assert r.code == 1
    assert r.lines == ["beliefs/a.md:1: E209 no claim text"]
    assert "b" in checked("beliefs").parsed.network.beliefs


# -- justifications ------------------------------------------------------------------------------


def test_a_header_with_a_hyphen_or_a_bad_item_id_is_one_error_not_a_cascade(tmp_path, run):
    """Found by an authoring audit: `### SL - label` made its correct Antecedents line an E304
    "expected an Antecedents/Unless line" and its items E305; an item `- Cache-Hit` was a
    generic E304 beside a W309 "empty Antecedents block: delete the line"."""
    write(tmp_path, {"beliefs/p.md": premise("p"),
                     "beliefs/a.md": "# a\n\n**IN** · derived\n\nClaim a.\n\n## Justifications\n\n"
                                     "### SL - from p\nAntecedents (all must be IN):\n- IN p — Claim p.\n",
                     "beliefs/b.md": "# b\n\n**IN** · derived\n\nClaim b.\n\n## Justifications\n\n"
                                     "### SL — from p\nAntecedents (all must be IN):\n- Cache-Hit\n"})
    r = run("check", "beliefs")
    assert [line for line in r.lines if "beliefs/a.md" in line] == [
        "beliefs/a.md:9: E304 justification header '### SL - from p': the label follows ' — ' (an em dash) or ' -- '"]
    assert "hint: write '### SL — from p'" in r.err
    b = [line for line in r.lines if "beliefs/b.md" in line and " W306 " not in line]
    assert b == ["beliefs/b.md:11: E304 item '- Cache-Hit': id must be lower-case letters, digits, '.' and '-' "
                 "(starting and ending with a letter or digit), optionally 'namespace:local'"], r.err

@pytest.mark.parametrize("jtype", ["XL", "ANY", "SLL"])
def test_unknown_justification_type(tmp_path, run, checked, jtype):
    write(tmp_path, {"beliefs/b.md": premise("b"),
                     "beliefs/a.md": derived("a", IN, ["IN b — Claim b."], jtype=jtype)})
    r = run("check", "beliefs")
    assert r.code == 1
    assert f"beliefs/a.md:9: E303 unknown justification type {jtype!r}" in r.lines
    assert "hint: use SL (or CP); it is evaluated as never valid" in r.err
    # Evaluated as never valid: declared IN, computed OUT; said at the status line (it was at the
    # title: a pull request's annotation pointed at the id, not at what fmt rewrites).
    assert "beliefs/a.md:3: W501 'a' is declared IN but computes OUT" in r.lines
    assert sorted(r.codes) == ["E303", "W501"]
    result = checked("beliefs")
    assert result.evaluation.status["a"] == OUT
    assert result.parsed.network.beliefs["a"].justifications[0].type == jtype


def test_an_unknown_justification_type_is_e303_in_network_json_and_front_matter_too(tmp_path, run, checked):
    """Found by a differential fuzz: in network.json (and front matter) a type other than SL
    or CP passed without a word, and `import` wrote documents that `check` then refused."""
    nodes = {"p": {"text": "P.", "truth_value": "IN", "justifications": []},
             "d": {"text": "D.", "truth_value": "IN", "justifications": [
                 {"type": "SL", "antecedents": ["p"], "outlist": [], "label": ""},
                 {"type": "sl", "antecedents": ["p"], "outlist": [], "label": ""}]}}
    (tmp_path / "network.json").write_text(json.dumps({"nodes": nodes}, indent=1), encoding="utf-8")
    r = run("check", "network.json")
    assert r.code == 1 and "network.json:8: E303 node 'd': justification 2 has the unknown type 'sl'" in r.lines, r.err
    assert checked("network.json").parsed.network.beliefs["d"].justifications[1].type == "sl"  # kept, never valid
    write(tmp_path, {"beliefs/p.md": premise("p"),
                     "beliefs/a.md": "---\njustifications:\n  - {type: XL, antecedents: [p]}\n---\n"
                                     "# a\n\n**OUT** · derived\n\nClaim a.\n"})
    r = run("check", "beliefs")
    assert r.code == 1 and "beliefs/a.md:2: E303 front matter justification 1 has the unknown type 'XL'" in r.lines, r.err


def test_a_long_line_is_quoted_cut_short(tmp_path, run):
    """Found by a data-loss audit: a 100,000-character line was repeated whole in its message."""
    long = "x" * 100_000
    write(tmp_path, {"beliefs/p.md": premise("p"),
                     "beliefs/a.md": f"# a\n\n**IN** · derived\n\nClaim a.\n\n## Justifications\n\n{long}\n",
                     "beliefs/b.md": f"# {long}\n\n**IN** · premise\n\nClaim b.\n"})
    r = run("check", "beliefs")
    assert r.code == 1 and len(r.err) < 2_000, len(r.err)
    assert f"beliefs/a.md:9: E304 unparseable line in Justifications: '{'x' * 119}…'" in r.lines, r.err
    assert f"beliefs/b.md:1: E202 invalid id '{'x' * 119}…': id is 100000 characters long (at most 200)" in r.lines
    # and a section heading, a network.json node's id (a review: those were still whole)
    write(tmp_path, {"beliefs/b.md": premise("b") + f"\n## {long}\n",
                     "network.json": json.dumps({"nodes": {long: {"text": "x", "truth_value": "IN"}}})})
    r = run("check", "beliefs")
    assert f"beliefs/b.md:7: E301 unknown section heading '## {'x' * 116}…'" in r.lines, r.err
    r = run("check", "network.json")
    assert r.code == 1 and len(r.err) < 2_000 and f"E602 node '{'x' * 119}…': invalid id" in r.err, r.err[:3000]


def test_a_head_line_repeated_or_out_of_order_is_an_error_not_claim_text(tmp_path, run, checked):
    """Found by a data-loss audit: a second status line, a dates line split in two, dates
    before the status, a reason line before the dates: each silently became claim text."""
    write(tmp_path, {
        "beliefs/a.md": "# a\n\nIN premise\n\nIN premise\n\nClaim A.\n",
        "beliefs/b.md": "# b\n\nIN premise\n\nCreated 2026-01-01\n\nReviewed 2026-01-02\n\nClaim B.\n",
        "beliefs/c.md": "# c\n\nCreated 2026-01-01\n\nIN premise\n\nClaim C.\n",
        "beliefs/d.md": "# d\n\nOUT premise\n\nReason OUT: x\n\nCreated 2026-01-01\n\nClaim D.\n",
        "beliefs/e.md": "# e\n\nIN premise\n\nIN premise logic is a claim that begins like one.\n"})
    r = run("check", "beliefs")
    assert r.code == 1
    assert [line for line in r.lines if " E205 " in line] == [
        "beliefs/a.md:5: E205 status line 'IN premise' in the claim: repeated, or out of order",
        "beliefs/b.md:7: E205 dates line 'Reviewed 2026-01-02' in the claim: repeated, or out of order",
        "beliefs/c.md:5: E205 status line 'IN premise' in the claim: repeated, or out of order",
        "beliefs/d.md:7: E205 dates line 'Created 2026-01-01' in the claim: repeated, or out of order"], r.err
    assert "hint: the head is the title, then one status line, one dates line and one 'Reason OUT:' line" in r.err
    assert run("check", "--strict", "beliefs/e.md")  # claim text that begins like a status line is claim text
    assert checked("beliefs").parsed.network.beliefs["e"].text == "IN premise logic is a claim that begins like one."


def test_a_header_with_a_dash_and_no_label_is_a_header(tmp_path, run, checked):
    """Found by a data-loss audit: `### SL —` (a label left empty) was 3 errors and two
    misleading W503s ("says derived, is premise") for one edit."""
    write(tmp_path, {"beliefs/a.md": premise("a"),
                     "beliefs/b.md": "# b\n\nIN derived (depth 1)\n\nClaim B.\n\n## Justifications\n\n### SL —\n\n"
                                     "Antecedents (all must be IN):\n\n- IN a — Claim a.\n"})
    r = run("check", "--strict", "beliefs")
    assert (r.code, r.lines) == (0, []), r.err
    [j] = checked("beliefs").parsed.network.beliefs["b"].justifications
    assert (j.type, j.label, j.antecedents) == ("SL", "", ("a",))


def test_front_matter_problems_point_at_their_key_and_ids_are_checked_there_too(tmp_path, run):
    """Found by a data-loss audit: a quoted key was reported at line 1, and an invalid id in
    front matter justifications got only W401 (in the body it is E304)."""
    write(tmp_path, {"beliefs/a.md": premise("a"),
                     "beliefs/x.md": '---\nmetadata:\n  a: 1\n"foo": 2\n---\n' + premise("x")[0:],
                     "beliefs/b.md": '---\njustifications:\n- type: SL\n  antecedents: [a, "Bad Id!"]\n---\n'
                                     "# b\n\n**OUT** · derived\n\nClaim b.\n"})
    r = run("check", "beliefs")
    assert r.code == 1
    assert "beliefs/x.md:4: E106 unknown front matter key 'foo'" in r.lines, r.err
    assert ("beliefs/b.md:2: E304 front matter justification 1: 'Bad Id!': id must be lower-case letters, digits, "
            "'.' and '-' (starting and ending with a letter or digit), optionally 'namespace:local'") in r.lines, r.err


def test_claims_that_begin_like_head_lines_stay_claims_and_import_writes_what_check_reads(tmp_path, run, checked, cli):
    """Found by a review: "Updated yearly." opening a claim was taken for a misplaced dates
    line (E205; one holds dates), and `import` wrote documents that `check` then refused (a
    claim "IN premise", or one such as "Updated yearly." right after the status line, where
    a dates line goes: front matter holds those)."""
    write(tmp_path, {"beliefs/b.md": "# b\n\n**IN** · premise\n\nCreated 2026-01-01\n\nUpdated yearly.\n\n"
                                     "The index is rebuilt in January.\n"})
    r = run("check", "--strict", "beliefs")
    assert (r.code, r.lines) == (0, []), r.err
    beliefs = checked("beliefs").parsed.network.beliefs
    assert beliefs["b"].text == "Updated yearly.\n\nThe index is rebuilt in January."
    nodes = {i: {"text": text, "truth_value": "IN", "justifications": [], "reviewed_at": "soon"}
             for i, text in (("c", "IN premise"), ("d", "Reviewed 2026-01-02"), ("e", "Updated yearly."))}
    (tmp_path / "net.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    assert cli("import", tmp_path / "net.json", "-o", tmp_path / "docs", "-q")[0] == 0
    r = run("check", "--strict", "docs")
    assert (r.code, r.lines) == (0, []), r.err
    read = checked("docs").parsed.network.beliefs
    assert {i: (b.text, b.reviewed_at) for i, b in read.items()} == {i: (n["text"], "soon") for i, n in nodes.items()}


def test_cp_is_accepted_and_checked_like_sl(tmp_path, run, checked):
    write(tmp_path, {"beliefs/b.md": premise("b"),
                     "beliefs/a.md": derived("a", IN, ["IN b — Claim b."], jtype="CP")})
    r = run("check", "--strict", "beliefs")
    assert (r.code, r.lines) == (0, [])
    assert checked("beliefs").evaluation.status["a"] == IN


# -- ids -------------------------------------------------------------------------------------------

def test_duplicate_id_in_two_files(tmp_path, run, checked):
    write(tmp_path, {"beliefs/a.md": premise("a", text="The first claim."),
                     "beliefs/b.md": premise("a", text="The second claim.")})
    r = run("check", "beliefs")
    assert r.code == 1
    assert "beliefs/a.md:1: E204 id 'a' is also defined in beliefs/b.md" in r.lines
    assert "beliefs/b.md:1: E204 id 'a' is also defined in beliefs/a.md" in r.lines
    assert "beliefs/b.md:1: E203 id 'a' does not match the file path (expected 'b')" in r.lines
    assert "hint: beliefs/a.md is used; rename or delete one of them" in r.err
    # First by sorted path is used; both files are still on disk (checked by `run`).
    belief = checked("beliefs").parsed.network.beliefs["a"]
    assert (belief.path, belief.text) == ("beliefs/a.md", "The first claim.")


def test_duplicate_id_in_network_json(tmp_path, run):
    write(tmp_path, {"network.json": '{\n  "nodes": {\n'
                     '    "a": {"text": "One.", "truth_value": "IN", "justifications": []},\n'
                     '    "a": {"text": "Two.", "truth_value": "IN", "justifications": []}\n'
                     "  }\n}\n"})
    r = run("check", "network.json")
    assert r.code == 1
    assert r.lines == ["network.json:3: E204 key 'a' appears twice in one object (last one kept by JSON)"]


def test_a_key_twice_inside_a_node_or_a_malformed_nogood_is_reported_at_its_node(tmp_path, run):
    """Each once came without a line (and the key without its node): in a one-line export, nothing to go by.
    A key twice inside a node is E602, not E204 (a belief defined twice; a differential fuzz)."""
    write(tmp_path, {"network.json": '{"nodes": {"x": {"text": "x: a", "truth_value": "IN"},\n'
                     '  "a": {"text": "One.", "text": "Two.", "truth_value": "IN", "metadata": {"k": 1, "k": 2}}},\n'
                     ' "nogoods": [\n  {"id": "x", "nodes": ["a"]},\n  {"id": "ng", "nodes": "a"},\n  7]}\n'})
    r = run("check", "network.json")
    assert r.code == 1 and sorted(r.lines) == [
        "network.json:2: E602 key 'k' appears twice in one object of node 'a' (last one kept by JSON)",
        "network.json:2: E602 key 'text' appears twice in one object of node 'a' (last one kept by JSON)",
        "network.json:3: E602 malformed nogood 7 (ignored)",
        "network.json:4: W506 nogood x: all of its beliefs are IN",  # its own line, not node x's
        "network.json:5: E602 malformed nogood {'id': 'ng', 'nodes': 'a'} (ignored)"], r.err


def test_a_node_that_is_no_object_is_reported_at_its_line(tmp_path, run):
    """Found by a differential fuzz: `"d": null` came without a line (`path: E602`)."""
    write(tmp_path, {"network.json": '{\n  "nodes": {\n    "p": {"text": "P.", "truth_value": "IN",\n'
                     '      "source": "x"},\n    "source": null,\n    "e": "text"\n  }\n}\n'})
    r = run("check", "network.json")
    # `source` at its own line, not at node p's field of that name (a review)
    assert r.code == 1 and r.lines == ["network.json:5: E602 node 'source': must be an object (node left out)",
                                       "network.json:6: E602 node 'e': must be an object (node left out)"], r.err


def test_a_node_without_truth_value_is_assumed_in_with_a_warning(tmp_path, run, checked):
    """Found by a differential fuzz: taken as IN without a word (a document without its status
    line says W206)."""
    write(tmp_path, {"network.json": '{\n  "nodes": {\n    "p": {"text": "P."}\n  }\n}\n'})
    r = run("check", "network.json")
    assert r.code == 0 and r.lines == ["network.json:3: W206 node 'p': no truth_value (IN assumed)"], r.err
    assert checked("network.json").evaluation.status["p"] == "IN"


def test_id_and_file_name_disagree(tmp_path, run, checked):
    write(tmp_path, {"beliefs/x.md": premise("y"), "beliefs/ns/a.md": premise("a")})
    r = run("check", "beliefs")
    assert r.code == 1
    assert sorted(r.lines) == [
        "beliefs/ns/a.md:1: E203 id 'a' does not match the file path (expected 'ns:a')",
        "beliefs/x.md:1: E203 id 'y' does not match the file path (expected 'x')",
    ]
    assert "hint: rename the file or change the title to 'x'" in r.err
    # The in-document id is used (spec §3.5, E203 with --keep-going).
    assert sorted(checked("beliefs").parsed.network.beliefs) == ["a", "y"]


ESCAPES = [
    ("../x", ID_RULE),
    ("/etc/passwd", ID_RULE),
    ("ns/../../x", ID_RULE),
    ("con", "'con' is a reserved device name on Windows"),
    ("nul.txt", "'nul.txt' is a reserved device name on Windows"),
    ("notes:com1", "'com1' is a reserved device name on Windows"),
    ("CON", ID_RULE),
    ("x:badge.svg", "'badge.svg' is the name of a file in every belief's folder: its page would take that file's place"),
    ("index.html", "'index.html' is the name of a file in every belief's folder: its page would take that file's place"),
]


@pytest.mark.parametrize(("bad", "why"), ESCAPES, ids=[b for b, _ in ESCAPES])
def test_id_that_escapes_the_folder_in_a_document(tmp_path, run, checked, bad, why):
    write(tmp_path, {"beliefs/x.md": premise(bad), "beliefs/ok.md": premise("ok")})
    r = run("check", "beliefs")
    assert r.code == 1
    assert r.lines == [f"beliefs/x.md:1: E202 invalid id {bad!r}: {why}"]
    assert sorted(checked("beliefs").parsed.network.beliefs) == ["ok"]


def test_id_that_escapes_the_folder_in_network_json(tmp_path, run):
    outside = str(tmp_path / "outside")
    bad = ["../x", "../../escaped", "con", outside]
    nodes = {b: {"text": "Bad.", "truth_value": "IN", "justifications": []} for b in bad}
    nodes["ok"] = {"text": "Fine.", "truth_value": "IN", "justifications": []}
    write(tmp_path / "in", {"network.json": json.dumps({"nodes": nodes}, indent=2)})
    r = run("check", "in/network.json")
    assert r.code == 1
    assert sorted(r.codes) == ["E602"] * 4
    assert (f"in/network.json:8: E602 node '../../escaped': invalid id: {ID_RULE} (node left out)"
            in r.lines)
    assert ("in/network.json:13: E602 node 'con': invalid id: 'con' is a reserved device name on "
            "Windows (node left out)") in r.lines
    assert "1 belief, 4 errors, 0 warnings" in r.err
    # import refuses: nothing is written, inside or outside the output folder.
    before = snapshot(tmp_path)
    r = run("import", "in/network.json", "-o", "out/beliefs")
    assert r.code == 1
    assert "nothing written" in r.err
    assert snapshot(tmp_path) == before
    assert not (tmp_path / "out").exists()
    assert not Path(outside + ".md").exists()


@pytest.mark.parametrize("local", ["index.html", "index.json", "badge.svg", "badge.json"])
def test_an_id_whose_page_would_take_a_file_of_another_beliefs_folder_is_refused(tmp_path, run, local):
    """`a:badge.svg` is the folder belief/a/badge.svg/, where belief `a` writes its badge: check
    passed and the build failed on a temporary path (a traceback in MkDocs)."""
    nodes = {"a": {"text": "A.", "truth_value": "IN", "justifications": []},
             f"a:{local}": {"text": "Clash.", "truth_value": "IN", "justifications": []},
             "b": {"text": "B.", "truth_value": "IN", "justifications": [], "metadata": {"aliases": [f"b:{local}"]}}}
    write(tmp_path, {"network.json": json.dumps({"nodes": nodes}, indent=2)})
    r = run("check", "network.json")
    why = f"'{local}' is the name of a file in every belief's folder: its page would take that file's place"
    assert r.code == 1 and sorted(r.codes) == ["E411", "E602"], r.err
    assert f"network.json:8: E602 node 'a:{local}': invalid id: {why} (node left out)" in r.lines
    line = (tmp_path / "network.json").read_text().splitlines().index('    "b": {') + 1
    assert f"network.json:{line}: E411 alias 'b:{local}' of 'b' is not a valid id: {why}" in r.lines
    write(tmp_path, {"beliefs/a.md": premise("a"), f"beliefs/a/{local}.md": premise(f"a:{local}")})
    r = run("build", "beliefs", "-o", "site", "--no-search", writes=True)
    assert r.code == 1 and any(line.endswith(f"a/{local}.md:1: E202 invalid id 'a:{local}': {why}")
                               for line in r.lines), r.err
    r = run("build", "beliefs", "-o", "site", "--keep-going", "--no-search", writes=True)
    assert r.code == 0 and (tmp_path / "site" / "belief" / "a" / local).is_file()


# -- references and cycles (spec §1.7) ---------------------------------------------------------------

def test_dangling_antecedent(tmp_path, run, checked):
    write(tmp_path, {
        "beliefs/a.md": derived("a", OUT, ["gone"]),
        "beliefs/b.md": derived("b", IN, ["IN gone — Held elsewhere."]),
        "beliefs/c.md": derived("c", OUT, ["? gone"]),
        "beliefs/d.md": derived("d", IN, unless=["gone"]),
        "beliefs/e.md": derived("e", OUT, unless=["IN gone"]),
    })
    r = run("check", "beliefs")
    assert r.code == 0
    assert sorted(r.lines) == [
        "beliefs/a.md:13: W401 antecedent 'gone' of justification 1 is not in the network: treated as OUT",
        "beliefs/b.md:13: W401 antecedent 'gone' of justification 1 is not in the network: assumed IN from its tag",
        "beliefs/c.md:13: W401 antecedent 'gone' of justification 1 is not in the network: treated as OUT",
        "beliefs/d.md:13: W401 outlist member 'gone' of justification 1 is not in the network: does not block",
        "beliefs/e.md:13: W401 outlist member 'gone' of justification 1 is not in the network: assumed IN from its tag",
    ]
    assert checked("beliefs").evaluation.status == {"a": OUT, "b": IN, "c": OUT, "d": IN, "e": OUT}
    assert run("check", "--strict", "beliefs").code == 1


def test_self_reference(tmp_path, run, checked):
    write(tmp_path, {
        "beliefs/p.md": premise("p"),
        "beliefs/a.md": derived("a", IN, ["IN p — Claim p.", "IN a — Claim a."]),
        "beliefs/b.md": derived("b", IN, ["IN b — Claim b."]),
        "beliefs/c.md": derived("c", OUT, ["IN p — Claim p."], unless=["OUT c — Claim c."]),
    })
    r = run("check", "beliefs")
    assert r.code == 1  # E404
    assert sorted(r.lines) == [
        "beliefs/a.md:14: W403 'a': self-antecedent (ignored)",
        "beliefs/b.md:13: W403 'b': self-antecedent (ignored)",
        "beliefs/c.md:17: E404 'c': belief in its own outlist: this justification is never valid",
    ]
    result = checked("beliefs")
    # Self-antecedents are dropped (b's list is then empty, so valid); self in outlist never valid.
    assert result.evaluation.status == {"a": IN, "b": IN, "c": OUT, "p": IN}
    assert result.evaluation.depth["a"] == 1 and result.evaluation.depth["b"] == 1


def test_positive_cycle_goes_out(tmp_path, run, checked):
    write(tmp_path, {"beliefs/a.md": derived("a", IN, ["IN b — Claim b."]),
                     "beliefs/b.md": derived("b", IN, ["IN a — Claim a."])})
    r = run("check", "beliefs")
    assert r.code == 0
    assert set(r.lines) == {
        "beliefs/a.md:1: W405 positive cycle among a, b: only what is supported from outside the "
        "cycle is IN (least fixpoint)",
        "beliefs/a.md:3: W501 'a' is declared IN but computes OUT",
        "beliefs/a.md:13: W503 stale derived content: b is tagged IN, is OUT",
        "beliefs/b.md:3: W501 'b' is declared IN but computes OUT",
        "beliefs/b.md:13: W503 stale derived content: a is tagged IN, is OUT",
    }
    assert checked("beliefs").evaluation.status == {"a": OUT, "b": OUT}
    assert run("check", "--strict", "beliefs").code == 1


def test_positive_cycle_supported_from_outside_stays_in(tmp_path, run, checked):
    b = derived("b", IN, ["IN a — Claim a."]) + "\n### SL — via c\n\nAntecedents (all must be IN):\n\n- IN c — Claim c.\n"
    b = b.replace("## Justifications\n\n", "## Justifications\n\n"
                  "This belief has 2 justifications — it is IN if any one holds.\n\n")
    write(tmp_path, {"beliefs/a.md": derived("a", IN, ["IN b — Claim b."]), "beliefs/b.md": b,
                     "beliefs/c.md": premise("c")})
    r = run("check", "beliefs")
    assert r.code == 0
    assert r.codes == ["W405"]
    assert checked("beliefs").evaluation.status == {"a": IN, "b": IN, "c": IN}


@pytest.mark.parametrize(("a_tv", "b_tv"), [(IN, OUT), (OUT, IN)])
def test_cycle_through_an_outlist_keeps_declared_values(tmp_path, run, checked, a_tv, b_tv):
    write(tmp_path, {
        "beliefs/c.md": premise("c"),
        "beliefs/a.md": derived("a", a_tv, [f"{b_tv} b — Claim b."]),
        "beliefs/b.md": derived("b", b_tv, ["IN c — Claim c."], unless=[f"{a_tv} a — Claim a."]),
    })
    r = run("check", "beliefs")
    assert r.code == 0
    assert r.lines == ["beliefs/a.md:1: W406 cycle through an outlist among a, b: declared values kept"]
    assert checked("beliefs").evaluation.status == {"a": a_tv, "b": b_tv, "c": IN}
    assert run("check", "--strict", "beliefs").code == 1


# -- network.json ----------------------------------------------------------------------------------

NETWORK = {"meta": {"schema_version": "1.0", "project_name": "reasons", "node_count": 2}, "nodes": {
    "a": {"text": "Claim a.", "truth_value": "IN", "justifications": []},
    "b": {"text": "Claim b.", "truth_value": "IN",
          "justifications": [{"type": "SL", "antecedents": ["a"], "outlist": [], "label": "because"}]},
}, "nogoods": [], "repos": {}}


def test_network_json_overwritten_by_status_line(tmp_path, run):
    """The real corrupt case (§4): a CLI status line overwrote the first 24 bytes."""
    path = tmp_path / "network.json"
    path.write_text(json.dumps(NETWORK, indent=2), encoding="utf-8")
    with path.open("r+b") as handle:
        handle.write(b"Written to network.json\n")
    corrupt = path.read_bytes()
    assert corrupt.startswith(b"Written to network.json\n") and len(corrupt) > 24

    r = run("check", "network.json")
    assert r.code == 1
    assert r.lines == ["network.json:1: E601 not valid JSON: Expecting value (line 1 column 1)"]
    hint = r.err.split("hint: ", 1)[1]
    assert "Written to network.json" in hint
    assert "does not repair" in hint and "git checkout" in hint
    assert path.read_bytes() == corrupt

    r = run("check", "--format", "json", "network.json")
    [item] = json.loads(r.out)
    assert (item["path"], item["line"], item["code"]) == ("network.json", 1, "E601")
    assert "Written to network.json" in item["hint"]

    r = run("import", "network.json", "-o", "beliefs")
    assert r.code == 1 and "nothing written" in r.err
    assert not (tmp_path / "beliefs").exists()
    r = run("export", "network.json", "-o", "copy.json")
    assert r.code == 1
    assert not (tmp_path / "copy.json").exists()
    assert run("fmt", "network.json").code == 2
    assert path.read_bytes() == corrupt, "no auto-repair"


def test_truncated_network_json(tmp_path, run):
    text = json.dumps(NETWORK, indent=2)
    cut = text[: text.index('"b"')]
    write(tmp_path, {"network.json": cut})
    r = run("check", "network.json")
    assert r.code == 1
    last = cut.count("\n") + 1
    assert len(r.lines) == 1
    assert re.fullmatch(rf"network\.json:{last}: E601 not valid JSON: .+ \(line {last} column \d+\)", r.lines[0])
    assert "hint: check that the file is a complete `reasons export`" in r.err


def test_a_number_too_long_for_python_is_an_error_not_a_traceback(tmp_path, run):
    write(tmp_path, {"network.json": '{"nodes": {"a": {"text": "x", "metadata": {"n": ' + "9" * 5000 + "}}}}"})
    r = run("check", "network.json")
    assert r.code == 1 and len(r.lines) == 1 and r.lines[0].startswith("network.json:1: E601 not valid JSON: ")
    assert "Traceback" not in r.err


@pytest.mark.parametrize("value, line", [("NaN", 2), ("-Infinity", 3), ("Infinity", 4)])
def test_nan_and_infinity_in_network_json_are_errors_with_their_line(tmp_path, run, value, line):
    """Python's json reads them; JSON has no such number, and an import would write YAML no reader takes."""
    values = ["1", "2", "3"]
    values[line - 2] = value
    write(tmp_path, {"network.json": '{"nodes": {"a": {"text": "NaN: Infinity, x", "truth_value": "IN",\n'
                                     + "".join(f'  "k{n}": {v},\n' for n, v in enumerate(values)) + '  "z": 0}}}'})
    r = run("check", "network.json")
    assert r.code == 1 and r.lines == [f"network.json:{line}: E601 not valid JSON: {value} is not a JSON number"]


# Front matter and _project.yaml read JSON's values only (spec §3.3): each of these once gave a
# traceback (an unhashable key), a value export could not write (bytes, a set, a date), or
# JSON that is not JSON (NaN) or that loses a key ("1" and 1).
NOT_JSON_YAML = [
    ("? [a, b]\n  : 1", 3, "a map key must be a string (JSON-compatible YAML), not list: quote it"),
    ("1: one\n  '1': two", 3, "a map key must be a string (JSON-compatible YAML), not int: quote it"),
    ("true: x", 3, "a map key must be a string (JSON-compatible YAML), not bool: quote it"),
    ("x: !!binary aGk=", 3, "tag tag:yaml.org,2002:binary is not allowed (JSON-compatible YAML only)"),
    ("x: !!set {a}", 3, "tag tag:yaml.org,2002:set is not allowed (JSON-compatible YAML only)"),
    ("x: !!timestamp 2020-01-01", 3, "tag tag:yaml.org,2002:timestamp is not allowed (JSON-compatible YAML only)"),
    ("x: !!int abc", 3, "tag tag:yaml.org,2002:int is not allowed (JSON-compatible YAML only)"),
    ("x: !!bool maybe", 3, "tag tag:yaml.org,2002:bool is not allowed (JSON-compatible YAML only)"),
    ("x: !!map [1]", 3, "tag tag:yaml.org,2002:map is not allowed (JSON-compatible YAML only)"),
    ("x: 1\n  y: .nan", 4, ".nan is not a number JSON can hold: quote it to keep the text"),
    ("x: -.inf", 3, "-.inf is not a number JSON can hold: quote it to keep the text"),
    ("x: 1\n  y: 1" + "0" * 5000, 4, "a number of thousands of digits (Python reads at most 4,300): quote it to "
                                   "keep it as text"),
]


@pytest.mark.parametrize("metadata, line, message", NOT_JSON_YAML, ids=[m[:24] for m, _, _ in NOT_JSON_YAML])
def test_front_matter_that_json_cannot_hold_is_an_error_with_its_line(tmp_path, run, metadata, line, message):
    shutil.copytree(EXAMPLE, tmp_path / "beliefs")
    doc = tmp_path / "beliefs" / f"{SEED}.md"
    doc.write_text(f"---\nmetadata:\n  {metadata}\n---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    for command in (("check", "beliefs"), ("export", "beliefs", "-o", "-"), ("build", "beliefs", "-o", "site")):
        r = run(*command, writes=True)
        assert r.code == 1, (command, r.err)
        expected = f"beliefs/{SEED}.md:{line}: E105 invalid front matter: {message}"
        assert any(found.endswith(expected) for found in r.lines), (command, r.err)
    (tmp_path / "beliefs" / "_project.yaml").write_text(f"meta:\n  {metadata}\n", encoding="utf-8")
    doc.write_text(doc.read_text(encoding="utf-8").split("---\n", 2)[2], encoding="utf-8")
    r = run("check", "beliefs")
    assert r.code == 1 and f"beliefs/_project.yaml:{line - 1}: E105 invalid YAML: {message}" in r.lines, r.err


def test_plain_front_matter_values_are_numbers_or_booleans_only_where_yaml_1_1_and_1_2_agree(tmp_path, run):
    """Else they stay the text they read as: no hash, version or stamp becomes another value
    (YAML 1.1 made `no` false, `012` 10, `1:20` 80; YAML 1.2 makes `1234e56` a float)."""
    plain = {"no": "no", "yes": "yes", "on": "on", "octal": "012", "clock": "1:20", "grouped": "1_000",
             "hash": "1234e56", "bare": "1e3", "hex": "0x1F", "binary": "0b11", "stamp": "2020-01-01",
             "int": 12, "negative": -3, "float": 1.5, "exp": 2000.0, "true": True, "false": False, "null": None,
             "merge": {"x": 1}}
    lines = "".join(f"  {k}: {v if not isinstance(v, (bool, type(None), dict)) else ''}\n" for k, v in plain.items()
                    if k not in ("exp", "true", "false", "null", "merge"))
    lines += "  exp: 2.0e+3\n  'true': True\n  'false': FALSE\n  'null': ~\n  merge: {<<: {x: 1}}\n"
    shutil.copytree(EXAMPLE, tmp_path / "beliefs")
    doc = tmp_path / "beliefs" / f"{SEED}.md"
    doc.write_text(f"---\nmetadata:\n{lines}---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    r = run("export", "beliefs", "-o", "-")
    assert r.code == 0, r.err
    metadata = json.loads(r.out)["nodes"][SEED]["metadata"]
    plain["merge"] = {"<<": {"x": 1}}  # no merge keys: a key like any other
    assert {k: metadata[k] for k in plain} == plain


@pytest.mark.parametrize("repos", ["[1, 2]", '"x"', "3"])
def test_repos_that_are_not_an_object_are_an_error_not_dropped_silently(tmp_path, run, repos):
    write(tmp_path, {"network.json": '{"nodes": {"a": {"text": "A.", "truth_value": "IN"}},\n "repos": ' + repos + "}"})
    r = run("check", "network.json")
    assert r.code == 1 and r.lines == ["network.json:2: E602 'repos' must be an object (ignored)"], r.err


def test_a_nogood_whose_nodes_are_not_a_list_is_dropped_with_a_diagnostic(tmp_path, run):
    write(tmp_path, {"network.json": json.dumps({**NETWORK, "nogoods": [{"id": "n", "nodes": 5}]})})
    r = run("check", "network.json")
    assert "E602 malformed nogood {'id': 'n', 'nodes': 5} (ignored)" in r.err and "Traceback" not in r.err


# -- output formats and the source argument --------------------------------------------------------

PROBLEMS = {"beliefs/a.md": premise("a"),
            "beliefs/b.md": "# b\n\nIN derivd\n\nClaim b.\n",
            "beliefs/c.md": "# c\n\nClaim c.\n"}


def test_format_json(tmp_path, run):
    write(tmp_path, PROBLEMS)
    r = run("check", "--format", "json", "beliefs")
    assert r.code == 1
    items = json.loads(r.out)
    assert [(d["path"], d["line"], d["code"], d["severity"]) for d in items] == [
        ("beliefs/b.md", 3, "E205", "error"), ("beliefs/c.md", 1, "W206", "warning")]
    assert items[0]["message"] == "malformed status line 'IN derivd'"
    assert items[0]["hint"] == "write e.g. 'IN premise' or 'OUT derived (depth 2)'"
    assert items[1]["message"] == "missing status line (IN assumed)"


def test_format_json_on_a_clean_network_is_still_json(tmp_path, run):
    write(tmp_path, {"beliefs/a.md": premise("a")})
    r = run("check", "--format", "json", "beliefs")
    assert r.code == 0
    assert json.loads(r.out) == []


def test_format_github(tmp_path, run):
    write(tmp_path, {**PROBLEMS, "beliefs/notes.txt": "stray\n"})
    r = run("check", "--format", "github", "beliefs")
    assert r.code == 1
    lines = r.out.splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"::error file=beliefs/b\.md,line=3(,[^:]*)?::E205 malformed status line "
                        r"'IN derivd'.*", lines[0]), lines[0]
    assert re.fullmatch(r"::warning file=beliefs/c\.md,line=1(,[^:]*)?::W206 missing status line "
                        r"\(IN assumed\).*", lines[1]), lines[1]
    assert re.fullmatch(r"::warning file=beliefs/notes\.txt(,title=W606)?::W606 stray file.*", lines[2])


def test_check_on_a_missing_source_is_a_usage_error(tmp_path, run):
    r = run("check", "nowhere")
    assert r.code == 2
    assert "belief-site: source nowhere not found" in r.err
    r = run("check")  # no mkdocs.yml, no ./beliefs
    assert r.code == 2
    assert "not found" in r.err


@pytest.mark.parametrize("plugins", ["plugins:\n  - search\n  - beliefs:\n      source: other\n",
                                     "plugins:\n  beliefs:\n    source: other\n"],
                         ids=["list", "map"])
def test_check_without_argument_uses_the_mkdocs_source(tmp_path, run, plugins):
    write(tmp_path, {"mkdocs.yml": "site_name: Test\n" + plugins,
                     "other/a.md": "# a\n\nClaim a.\n",
                     "beliefs/b.md": "# b\n\nIN derivd\n\nClaim b.\n"})
    r = run("check")
    assert r.code == 0
    assert r.lines == ["other/a.md:1: W206 missing status line (IN assumed)"]
    assert "1 belief, 0 errors, 1 warning" in r.err


def test_mkdocs_source_may_be_a_network_json(tmp_path, run):
    write(tmp_path, {"mkdocs.yml": "site_name: Test\nplugins:\n  - beliefs:\n      source: data/network.json\n",
                     "data/network.json": json.dumps(NETWORK, indent=2)})
    r = run("check", "--strict")
    assert (r.code, r.lines) == (0, [])
    assert "2 beliefs, 0 errors, 0 warnings" in r.err


def test_mkdocs_source_missing_is_a_usage_error(tmp_path, run):
    write(tmp_path, {"mkdocs.yml": "site_name: Test\nplugins:\n  - beliefs:\n      source: other\n"})
    r = run("check")
    assert r.code == 2
    assert "source other not found" in r.err


@pytest.mark.parametrize("command", [["export", str(EXAMPLE)], ["diff", str(EXAMPLE), str(EXAMPLE)]])
def test_an_output_that_is_a_pipe_or_a_device_is_written_into_not_replaced(tmp_path, cli, command):
    """`-o /dev/null` renamed a file over the device: run as root, /dev/null became a regular
    file, and every program writing to it afterwards wrote into that file."""
    import threading
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()), daemon=True)  # never left waiting
    reader.start()
    code, _, err = cli(*command, "-o", fifo)
    reader.join(timeout=10)
    assert code == 0, err
    assert stat.S_ISFIFO(os.stat(fifo).st_mode) and sorted(p.name for p in tmp_path.iterdir()) == ["out.fifo"]
    assert got and got[0].strip()
