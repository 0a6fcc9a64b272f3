"""Packaging: the wheel ships the theme and the schema, and an installed copy builds a site.

The default theme lives at the top of the repository (`templates/`) and is mapped into the
package as `site_builder.templates` by `[tool.setuptools] package-dir`; `templates_dir()`
finds it inside the package when installed, beside the package in a checkout. These tests
build a real wheel from a clean copy of the checkout, install it into a fresh virtualenv
(dependencies come from the configured package index) and build the example site with the
installed `belief-site` script, away from the checkout.
"""

from __future__ import annotations

import configparser
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest

from .conftest import EXAMPLE, ROOT, SEED

# Never copied into the build snapshot (top level only): VCS, environments, build leftovers,
# caches, output. A stale build/lib in the checkout could otherwise leak deleted files into
# the wheel, and building in place would write build/ and *.egg-info into the checkout.
_TOP_IGNORE = {".git", ".venv", "venv", "build", "dist", "site", ".pytest_cache", ".hypothesis",
               ".import_linter_cache", ".belief-site-cache"}


def _snapshot_ignore(folder: str, names: list[str]) -> set[str]:
    ignored = {n for n in names if n == "__pycache__" or n.endswith((".pyc", ".egg-info"))}
    if Path(folder).resolve() == ROOT.resolve():
        ignored |= _TOP_IGNORE & set(names)
    return ignored


THEME_FILES = ["base.html", "belief.html", "index.html", "assets/style.css", "assets/site.js"]
SCHEMA = "site_builder/render/beliefs.schema.json"


def _env() -> dict[str, str]:
    """The caller's environment without anything that would leak the test venv or checkout."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "PYTHONSTARTUP", "VIRTUAL_ENV", "__PYVENV_LAUNCHER__")}
    env["PYTHONNOUSERSITE"] = "1"
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


def _run(cmd: list[str], *, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess:
    done = subprocess.run([str(c) for c in cmd], cwd=cwd, env=_env(), capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, (
        f"{' '.join(map(str, cmd))} exited {done.returncode}\n"
        f"--- stdout ---\n{done.stdout[-4000:]}\n--- stderr ---\n{done.stderr[-4000:]}")
    return done


def _build_deps_present() -> bool:
    """True when this interpreter satisfies [build-system] requires and can make wheels.

    Then `--no-build-isolation` avoids downloading setuptools. Python 3.11's venvs ship
    setuptools 65.5 without `wheel`, which fails both checks (`invalid command
    'bdist_wheel'`), so the build falls back to an isolated environment.
    """
    try:
        from packaging.requirements import Requirement
    except ImportError:
        return False
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for spec in requires.get("build-system", {}).get("requires", []):
        req = Requirement(spec)
        try:
            installed = metadata.version(req.name)
        except metadata.PackageNotFoundError:
            return False
        if not req.specifier.contains(installed, prereleases=True):
            return False
    # setuptools >= 70.1 has bdist_wheel built in; older ones need the `wheel` package.
    return (importlib.util.find_spec("setuptools.command.bdist_wheel") is not None
            or importlib.util.find_spec("wheel") is not None)


def _bin(venv: Path, name: str) -> Path:
    if os.name == "nt":
        return venv / "Scripts" / (name + ".exe")
    return venv / "bin" / name


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory) -> Path:
    """A clean copy of the checkout (no build/ leftovers; nothing is written into the repo)."""
    dest = tmp_path_factory.mktemp("src") / "belief-site"
    shutil.copytree(ROOT, dest, ignore=_snapshot_ignore)
    return dest


@pytest.fixture(scope="module")
def wheel(snapshot, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    cmd = [sys.executable, "-m", "pip", "wheel", snapshot, "--no-deps", "-q", "-w", out]
    if _build_deps_present():
        cmd.append("--no-build-isolation")
    _run(cmd, cwd=out)
    wheels = sorted(out.glob("belief_site-*.whl"))
    assert len(wheels) == 1, f"expected one wheel, found {[w.name for w in out.iterdir()]}"
    return wheels[0]


def test_wheel_ships_theme_schema_and_script(wheel, snapshot):
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        assert len(dist_info) == 1, dist_info
        entry_points = zf.read(f"{dist_info.pop()}/entry_points.txt").decode("utf-8")

    for name in THEME_FILES:
        assert f"site_builder/templates/{name}" in names, f"theme file {name} missing from the wheel"
    assert SCHEMA in names
    assert "site_builder/hosts/fragments.css" in names  # the MkDocs plugin's stylesheet

    # Nothing but the package and its metadata at the top (no stray `templates`/`tests`).
    top = {n.split("/")[0] for n in names}
    assert {t for t in top if not t.endswith(".dist-info")} == {"site_builder"}, sorted(top)

    # Every module (the `packages` list is written out by hand) and every theme file ships.
    modules = {p.relative_to(snapshot).as_posix()
               for p in (snapshot / "site_builder").rglob("*.py")}
    assert not modules - names, f"modules missing from the wheel: {sorted(modules - names)}"
    theme = {"site_builder/templates/" + p.relative_to(snapshot / "templates").as_posix()
             for p in (snapshot / "templates").rglob("*")
             if p.is_file() and not any(part.startswith(".") for part in p.parts)}
    assert not theme - names, f"theme files missing from the wheel: {sorted(theme - names)}"

    parser = configparser.ConfigParser(delimiters=("=",))
    parser.read_string(entry_points)
    assert parser.get("console_scripts", "belief-site").strip() == "site_builder.cli:console"


def test_installed_wheel_builds_site_outside_checkout(wheel, tmp_path):
    venv = tmp_path / "venv"
    work = tmp_path / "work"  # cwd: neither the checkout nor anything beside it
    work.mkdir()
    _run([sys.executable, "-m", "venv", venv], cwd=work)
    python = _bin(venv, "python")
    _run([python, "-m", "pip", "install", "-q", wheel], cwd=work)

    probe = ("import json, sysconfig, site_builder\n"
             "from importlib import resources\n"
             "import site_builder.render.pages as p\n"
             "print(json.dumps({'purelib': sysconfig.get_paths()['purelib'],\n"
             "  'package': site_builder.__file__, 'templates': str(p.templates_dir()),\n"
             "  'schema': len(resources.files('site_builder.render')"
             ".joinpath('beliefs.schema.json').read_bytes())}))\n")
    found = json.loads(_run([python, "-c", probe], cwd=work).stdout)
    purelib = Path(found["purelib"]).resolve()
    templates = Path(found["templates"]).resolve()
    assert Path(found["package"]).resolve().is_relative_to(purelib), found
    assert templates == purelib / "site_builder" / "templates", found
    assert not templates.is_relative_to(ROOT.resolve()), found
    assert (templates / "base.html").is_file()
    assert found["schema"] > 0

    site = tmp_path / "site"
    _run([_bin(venv, "belief-site"), "build", EXAMPLE, "-o", site], cwd=work)

    index = site / "index.html"
    assert index.is_file()
    assert "assets/style.css" in index.read_text(encoding="utf-8")
    for name in ("style.css", "site.js"):
        assert (site / "assets" / name).is_file(), f"assets/{name} not written"
    assert (site / "beliefs.schema.json").read_bytes() == \
        (templates.parent / "render" / "beliefs.schema.json").read_bytes()

    records = json.loads((site / "beliefs.json").read_text(encoding="utf-8"))["beliefs"]
    assert records, "no beliefs published"
    for record in records:
        assert (site / record["url"] / "index.html").is_file(), f"no page for {record['id']}"
    assert (site / "belief" / SEED / "index.html").is_file()


def test_editable_install_finds_theme_in_checkout():
    import site_builder
    from site_builder.render.pages import templates_dir

    assert Path(site_builder.__file__).resolve().is_relative_to(ROOT.resolve()), (
        f"tests import {site_builder.__file__}, not the checkout (pip install -e .)")
    assert templates_dir().resolve() == (ROOT / "templates").resolve()
    assert (templates_dir() / "base.html").is_file()


def test_the_console_script_ends_with_its_output_delivered_and_its_exit_code(tmp_path):
    """The console script leaves with os._exit, skipping the heap's teardown (cli.leave): what
    it printed into a pipe, where stdout is block-buffered, must still arrive whole, and the
    process must end with the command's exit code."""
    (tmp_path / "network.json").write_text(json.dumps({"nodes": {
        "a": {"text": "A.", "truth_value": "MAYBE"}, "b": {"text": "B.", "truth_value": "IN"}}}), encoding="utf-8")
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    done = subprocess.run([sys.executable, "-m", "site_builder.cli", "check", "--format", "json", "network.json"],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path, env=buffered)
    assert done.returncode == 1, done.stderr
    found = json.loads(done.stdout)  # in the pipe's buffer until the script flushed it
    assert [d["code"] for d in found] == ["E602"], found
    clean = subprocess.run([sys.executable, "-m", "site_builder.cli", "build", str(EXAMPLE), "-o", "site",
                            "--no-search", "--no-cache"], capture_output=True, text=True, timeout=60, cwd=tmp_path,
                           env=buffered)
    assert clean.returncode == 0, clean.stderr
    assert clean.stderr.rstrip().splitlines()[-1].startswith("built "), clean.stderr


def _cli(args: list[str], cwd: Path, **kwargs) -> subprocess.CompletedProcess:
    buffered = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60, cwd=cwd,
                          env=buffered, **kwargs)


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full")
def test_output_the_console_script_cannot_write_fails_it(tmp_path):
    """A full disk under the output (here /dev/full) is an error, not a silent success with
    a cut file, though the script leaves with os._exit."""
    (tmp_path / "network.json").write_text(json.dumps({"nodes": {"a": {"text": "A."}}}), encoding="utf-8")
    with open("/dev/full", "w") as full:
        done = subprocess.run([sys.executable, "-m", "site_builder.cli", "check", "--format", "json", "network.json"],
                              stdout=full, stderr=subprocess.PIPE, text=True, timeout=60, cwd=tmp_path,
                              env={k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"})
    assert done.returncode == 1
    assert "belief-site: cannot write the output: No space left on device" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_console_script_runs_with_its_output_closed_and_under_a_profiler(tmp_path):
    """Started with stdout closed (`>&-`), the script builds and exits 0; under cProfile
    (which writes its results at exit) it leaves as Python does, so the profile is written."""
    (tmp_path / "network.json").write_text(json.dumps({"nodes": {"a": {"text": "A."}}}), encoding="utf-8")
    closed = _cli(["-c", "import os, subprocess, sys; os.close(1); "
                         "sys.exit(subprocess.call([sys.executable, '-m', 'site_builder.cli', 'check', 'network.json']))"],
                  tmp_path)
    assert closed.returncode == 0 and "Traceback" not in closed.stderr, closed.stderr
    profiled = _cli(["-m", "cProfile", "-o", "build.prof", "-m", "site_builder.cli", "check", "network.json"], tmp_path)
    assert profiled.returncode == 0, profiled.stderr
    assert (tmp_path / "build.prof").stat().st_size > 0


def test_python_m_site_builder_is_the_command(tmp_path):
    done = _cli(["-m", "site_builder", "check", str(EXAMPLE)], tmp_path)
    assert done.returncode == 0 and "5 beliefs, 0 errors, 0 warnings" in done.stderr, done.stderr


@pytest.mark.parametrize("args, usage, error", [
    (["build", "--bogus"], "usage: belief-site build ", "belief-site build: error: unrecognized arguments: --bogus"),
    (["build", "-j", "abc"], "usage: belief-site build ", "argument --jobs/-j: must be a whole number, not 'abc'"),
    (["check", "x", "y"], "usage: belief-site check ", "belief-site check: error: unrecognized arguments: y"),
    (["--bogus", "check", "x"], "usage: belief-site [-h]", "belief-site: error: unrecognized arguments: --bogus")])
def test_a_usage_error_shows_the_commands_own_usage(cli, args, usage, error):
    """Not the top-level one (argparse's default for an option the subcommand does not know),
    nor argparse's internal name of a type ("invalid positive_integer value")."""
    code, _, err = cli(*args)
    assert code == 2 and err.startswith(usage) and error in err, err


@pytest.mark.parametrize("args", [["import", "network.json", "-o", "docs"], ["export", str(EXAMPLE), "-o", "out.json"],
                                  ["fmt", "docs"], ["build", str(EXAMPLE), "-o", "site", "--no-search"],
                                  ["check", str(EXAMPLE)]])
def test_quiet_prints_nothing_when_all_is_well(cli, tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    Path("network.json").write_text(json.dumps({"nodes": {"a": {"text": "A.", "truth_value": "IN"}}}),
                                    encoding="utf-8")
    if args[0] == "fmt":
        assert cli("import", "network.json", "-o", "docs")[0] == 0
    code, out, err = cli(*args, "-q")
    assert (code, out, err) == (0, "", ""), (out, err)
