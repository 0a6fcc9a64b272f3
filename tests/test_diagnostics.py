"""Every diagnostic code a source can trigger, one fixture folder per code (spec §3.5).

`tests/fixtures/invalid/<CODE>/` holds a minimal source (a `beliefs/` folder or a
`network.json`), optionally a `make.py` whose `FILES` dict gives raw bytes the fixture
cannot hold as text (bad UTF-8, BOM, control characters), and `expected.txt`: the exact
`path:line: CODE message` lines `belief-site check` prints for it, with paths relative
to the fixture folder. Each fixture is copied to a temporary folder and checked from
there, so nothing in the repository is touched.
"""

from __future__ import annotations

import json
import re
import runpy
import shutil
from pathlib import Path

import pytest

from site_builder.diagnostics import CODES
from .conftest import stale_echoes

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "invalid"
CASES = sorted(p.name for p in FIXTURES.iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))

#: Codes no source can trigger: beliefs.md import (tested with the importer) and CLI-level
#: codes (E801: import refusing to overwrite, E802: configuration; both tested below).
NOT_FROM_SOURCES = {"W701", "E702", "E801", "E802", "E803", "W804", "E805", "E806", "W901", "E410"}  # W901: tests/test_diagrams.py, W804: tests/test_scale.py, E805: tests/test_theme.py

#: `path:line: CODE message` or, for whole-file problems, `path: CODE message`.
DIAGNOSTIC = re.compile(r"(?P<path>[^\s:][^:]*?)(?::(?P<line>\d+))?: (?P<code>[EW]\d{3}) (?P<message>.+)")


def materialize(code: str, dest_root: Path) -> Path:
    """Copy fixture `code` to dest_root/code, writing the raw files of its make.py."""
    source = FIXTURES / code
    dest = dest_root / code
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("expected.txt", "make.py", "__pycache__"))
    make = source / "make.py"
    if make.exists():
        for relative, data in runpy.run_path(str(make))["FILES"].items():
            target = dest / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    return dest


def source_of(folder: Path) -> str:
    """The fixture's source, relative to its folder."""
    return "network.json" if (folder / "network.json").exists() else "beliefs"


def expected_lines(code: str) -> list[str]:
    text = (FIXTURES / code / "expected.txt").read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip()]


def diagnostic_lines(stream: str) -> list[str]:
    """The `path:line: CODE message` lines of a text report (hints and summary dropped)."""
    return [line for line in stream.splitlines() if DIAGNOSTIC.fullmatch(line)]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def run_fixture(code: str, tmp_path: Path, monkeypatch, cli, *flags: str):
    folder = materialize(code, tmp_path)
    monkeypatch.chdir(folder)
    before = snapshot(folder)
    result = cli("check", source_of(folder), *flags)
    assert snapshot(folder) == before, "check must never change its input"
    return result


# -- the fixtures themselves --------------------------------------------------------------

def test_every_code_has_a_fixture():
    """A code in CODES without a fixture folder (documented exceptions aside) fails here."""
    missing = sorted(set(CODES) - NOT_FROM_SOURCES - set(CASES))
    assert missing == [], f"no tests/fixtures/invalid/<CODE>/ for {missing}"


def test_every_fixture_is_a_known_code():
    assert sorted(set(CASES) - set(CODES)) == []
    assert not set(CASES) & NOT_FROM_SOURCES


@pytest.mark.parametrize("code", CASES)
def test_fixture_is_well_formed(code):
    folder = FIXTURES / code
    assert (folder / "expected.txt").is_file()
    has_docs = (folder / "beliefs").is_dir() or (folder / "make.py").is_file()
    assert has_docs != (folder / "network.json").is_file(), "exactly one kind of source per fixture"
    lines = expected_lines(code)
    assert lines, "expected.txt lists at least one diagnostic"
    for line in lines:
        match = DIAGNOSTIC.fullmatch(line)
        assert match, f"not a `path:line: CODE message` line: {line!r}"
        assert not Path(match["path"]).is_absolute()
        assert match["code"] in CODES
    assert any(DIAGNOSTIC.fullmatch(line)["code"] == code for line in lines)


# -- check against the fixtures ------------------------------------------------------------

@pytest.mark.parametrize("code", CASES)
def test_check_reports_expected_lines(code, tmp_path, monkeypatch, cli):
    exit_code, out, err = run_fixture(code, tmp_path, monkeypatch, cli)
    assert "Traceback" not in out + err
    printed = diagnostic_lines(err)
    expected = expected_lines(code)
    for line in expected:
        assert line in printed, f"missing {line!r}; printed:\n" + "\n".join(printed)
    codes = {DIAGNOSTIC.fullmatch(line)["code"] for line in printed}
    assert code in codes
    # Every diagnostic of this fixture's own code is listed in expected.txt (no extras).
    own = [line for line in printed if DIAGNOSTIC.fullmatch(line)["code"] == code]
    assert sorted(own) == sorted(line for line in expected if DIAGNOSTIC.fullmatch(line)["code"] == code)
    errors = sum(c.startswith("E") for c in (DIAGNOSTIC.fullmatch(line)["code"] for line in printed))
    warnings = len(printed) - errors
    assert exit_code == (1 if errors else 0)
    plural = {n: "" if n == 1 else "s" for n in (errors, warnings)}
    assert re.search(rf"^\d+ beliefs?, {errors} error{plural[errors]}, {warnings} warning{plural[warnings]}$",
                     err, re.M)


@pytest.mark.parametrize("code", CASES)
def test_strict_fails_on_every_fixture(code, tmp_path, monkeypatch, cli):
    exit_code, out, err = run_fixture(code, tmp_path, monkeypatch, cli, "--strict")
    assert "Traceback" not in out + err
    assert exit_code == 1
    for line in expected_lines(code):
        assert line in diagnostic_lines(err)


@pytest.mark.parametrize("code", CASES)
def test_json_format_matches_text(code, tmp_path, monkeypatch, cli):
    """`--format json` carries the same diagnostics as the text report, on stdout."""
    exit_code, out, _ = run_fixture(code, tmp_path, monkeypatch, cli, "--format", "json")
    items = json.loads(out)
    assert {"path", "line", "code", "severity", "message", "hint"} <= set(items[0])
    as_text = [f"{d['path']}:{d['line']}: {d['code']} {d['message']}" if d["line"]
               else f"{d['path']}: {d['code']} {d['message']}" for d in items]
    for line in expected_lines(code):
        assert line in as_text
    for d in items:
        assert d["severity"] == ("error" if d["code"].startswith("E") else "warning")
    assert exit_code == (1 if any(d["code"].startswith("E") for d in items) else 0)


# -- codes raised by the command line itself -------------------------------------------------

NETWORK = {"nodes": {
    "a": {"text": "Claim a.", "truth_value": "IN", "justifications": []},
    "b": {"text": "Claim b.", "truth_value": "IN",
          "justifications": [{"type": "SL", "antecedents": ["a"], "outlist": [], "label": "because"}]},
}}


def test_e801_import_refuses_to_overwrite(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    Path("network.json").write_text(json.dumps(NETWORK, indent=2), encoding="utf-8")
    code, _, err = cli("import", "network.json", "-o", "out")
    assert code == 0, err
    assert sorted(p.name for p in Path("out").iterdir()) == ["_project.yaml", "a.md", "b.md"]
    Path("out/a.md").write_text("# a\n\nIN premise\n\nEdited by hand.\n", encoding="utf-8")
    before = snapshot(Path("out"))

    code, _, err = cli("import", "network.json", "-o", "out")
    assert code == 1
    printed = diagnostic_lines(err)
    for name in ("_project.yaml", "a.md", "b.md"):
        assert f"out/{name}: E801 file exists; not overwritten" in printed
    assert "hint: pass --force to replace existing files" in err
    assert "Traceback" not in err
    assert snapshot(Path("out")) == before, "nothing may be written when one file exists"

    code, _, err = cli("import", "network.json", "-o", "out", "--force")
    assert code == 0, err
    assert "Claim a." in Path("out/a.md").read_text(encoding="utf-8")


def test_e801_a_second_import_of_a_large_network_lists_a_few_files_and_counts_the_rest(tmp_path, monkeypatch, cli):
    """It printed two lines per file: 1,546 for a 770-belief network."""
    monkeypatch.chdir(tmp_path)
    nodes = {f"b{i:03d}": {"text": f"Claim {i}.", "truth_value": "IN", "justifications": []} for i in range(40)}
    Path("network.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    assert cli("import", "network.json", "-o", "out")[0] == 0
    before = snapshot(Path("out"))
    code, _, err = cli("import", "network.json", "-o", "out")
    assert code == 1 and snapshot(Path("out")) == before
    assert diagnostic_lines(err) == [f"out/{name}: E801 file exists; not overwritten"
                                     for name in ("_project.yaml", "b000.md", "b001.md", "b002.md")]
    assert err.count("hint: pass --force to replace existing files") == 1
    assert "belief-site: 41 of the 41 files to write are in the way (37 not listed)" in err
    assert "belief-site: nothing written to out" in err and len(err.splitlines()) == 7, err


def test_e801_refuses_even_when_only_one_file_exists(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    Path("network.json").write_text(json.dumps(NETWORK, indent=2), encoding="utf-8")
    Path("out").mkdir()
    Path("out/b.md").write_text("mine\n", encoding="utf-8")
    code, _, err = cli("import", "network.json", "-o", "out")
    assert code == 1
    assert diagnostic_lines(err) == ["out/b.md: E801 file exists; not overwritten"]
    assert sorted(p.name for p in Path("out").iterdir()) == ["b.md"]
    assert Path("out/b.md").read_text(encoding="utf-8") == "mine\n"


def test_e802_bad_mkdocs_option(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    Path("beliefs").mkdir()
    Path("beliefs/a.md").write_text("# a\n\n**IN** · premise\n\nClaim a.\n", encoding="utf-8")
    Path("mkdocs.yml").write_text(
        "site_name: x\nplugins:\n  - beliefs:\n      diagram_depth: deep\n      colour: red\n",
        encoding="utf-8")
    code, _, err = cli("check")
    assert code == 1
    printed = diagnostic_lines(err)
    # The configuration problems are reported; the (clean) default source is still checked.
    assert any(re.fullmatch(r"mkdocs\.yml(:\d+)?: E802 option 'diagram_depth' must be an integer", p)
               for p in printed), printed
    assert any(re.fullmatch(r"mkdocs\.yml(:\d+)?: E802 unknown beliefs option 'colour'", p)
               for p in printed), printed
    assert "1 belief, 2 errors, 0 warnings" in err
    assert "Traceback" not in err


def test_e802_missing_config_file(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    Path("beliefs").mkdir()
    Path("beliefs/a.md").write_text("# a\n\n**IN** · premise\n\nClaim a.\n", encoding="utf-8")
    code, _, err = cli("check", "--config", "nowhere.yml")
    assert code == 1
    assert "nowhere.yml: E802 configuration file not found" in diagnostic_lines(err)


@pytest.mark.parametrize("option, message", [
    ("diagram_depth: -5", "option 'diagram_depth' must be 0 or more, not -5"),
    ("diagram_max_nodes: 0", "option 'diagram_max_nodes' must be 1 or more, not 0"),
    ("panel_max_items: -1", "option 'panel_max_items' must be 1 or more, not -1"),
    ("prefix: ../../etc", "option 'prefix' must be a folder inside the site, such as 'belief' (letters, digits, "
                          "'.', '_' and '-', '/' between folders)"),
    ("templates: my-theme", "option 'templates' names no folder: my-theme not found"),
    ("templates: mkdocs.yml", "option 'templates' names a file, not a folder: mkdocs.yml"),
    ("prefix: graph/b", "option 'prefix' must not start with 'graph': the site writes its own files there"),
    ("colour: red", "unknown beliefs option 'colour'")])
def test_e802_values_no_build_could_use_are_reported_by_check_at_their_line(tmp_path, monkeypatch, cli,
                                                                             option, message):
    """Each was taken (a negative depth, a prefix leaving the site only `build` refused) or
    quietly ignored (a templates folder that is not there)."""
    monkeypatch.chdir(tmp_path)
    Path("beliefs").mkdir()
    Path("beliefs/a.md").write_text("# a\n\n**IN** · premise\n\nClaim a.\n", encoding="utf-8")
    Path("mkdocs.yml").write_text(f"site_name: x\nplugins:\n  - beliefs:\n      {option}\n", encoding="utf-8")
    code, _, err = cli("check")
    assert code == 1 and diagnostic_lines(err) == [f"mkdocs.yml:4: E802 {message}"], err
    code, _, err = cli("build")
    assert code == 1 and not Path("site").exists()


def test_e802_unreadable_config(tmp_path, monkeypatch, cli):
    monkeypatch.chdir(tmp_path)
    Path("beliefs").mkdir()
    Path("beliefs/a.md").write_text("# a\n\n**IN** · premise\n\nClaim a.\n", encoding="utf-8")
    Path("mkdocs.yml").write_text("site_name: x\nplugins: [beliefs\n", encoding="utf-8")
    code, _, err = cli("check")
    assert code == 1
    assert any(re.fullmatch(r"mkdocs\.yml:\d+: E802 cannot read the configuration: .+", p)
               for p in diagnostic_lines(err))
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["check", "build", "export", "fmt", "serve"])
@pytest.mark.parametrize("config, expected", [("nowhere.yml", "nowhere.yml: E802 configuration file not found"),
                                              ("broken.yml", "broken.yml:3: E802 cannot read the configuration")])
def test_a_configuration_that_names_no_source_is_reported_before_the_missing_source(tmp_path, monkeypatch, cli,
                                                                                    command, config, expected):
    """No ./beliefs here: the configuration that could not be read is why no source was found."""
    monkeypatch.chdir(tmp_path)
    Path("broken.yml").write_text("site_name: x\nplugins: [beliefs\n", encoding="utf-8")
    code, _, err = cli(command, "--config", config, *(("-o", "out.json") if command == "export" else ()))
    assert code == 2 and "Traceback" not in err
    assert err.index(expected) < err.index("belief-site: source beliefs not found"), err


@pytest.mark.parametrize("where", ["start", "middle", "after CRLF"])
def test_every_control_character_is_found_whatever_its_place(where):
    """decode searches the text only when a quick pass over the bytes (or a CR) says it holds
    a control character: for every character below U+0080 (and a few above) and at any
    place, the result must be what the full search finds."""
    from site_builder.load import CONTROL, decode

    for code in [*range(0x80), 0x85, 0x9F, 0xFEFF]:  # C1 controls are text (no E104)
        char = chr(code)
        data = {"start": f"{char}é text\n", "middle": f"é text {char} more\n",
                "after CRLF": f"é\r\n{char}\r\n"}[where].encode("utf-8")
        text, found, _, _ = decode(data, "x")
        stray = CONTROL.search(data.decode("utf-8").replace("\r\n", "\n"))
        assert (text is None) == (stray is not None), (code, where)
        assert [d.code for d in found if d.code != "W103"] == (["E104"] if stray else []), (code, where)  # W103: a BOM


def test_a_hint_many_warnings_share_is_printed_once(tmp_path, monkeypatch, cli):
    """One claim edit makes every document that echoes the claim stale (W503): the same
    `fmt` hint under each of them (71 at 10k) drowned the warnings. Text prints it once,
    under the first, saying how many more it is for; JSON keeps it on every item."""
    monkeypatch.chdir(tmp_path)
    stale_echoes(tmp_path)

    code, _, err = cli("check", "beliefs")
    assert code == 0, err
    stale = [line for line in diagnostic_lines(err) if " W503 " in line]
    assert [line.split(":")[0] for line in stale] == ["beliefs/b.md", "beliefs/c.md", "beliefs/d.md"]
    lines = err.splitlines()
    assert lines[lines.index(stale[0]) + 1] == \
        "    hint: run `belief-site fmt` to refresh it (and for the 2 other W503 below)"
    assert err.count("hint:") == 1, err

    code, out, _ = cli("check", "beliefs", "--format", "json")
    hints = [item["hint"] for item in json.loads(out) if item["code"] == "W503"]
    assert hints == ["run `belief-site fmt` to refresh it"] * 3
