"""Shared fixtures: the shared real networks, and running the command line in-process."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from site_builder.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "beliefs"
SEED = "attention-is-structured-directed-computation"


def shared_dir() -> Path | None:
    """`$BELIEF_SHARED` or ../shared beside the checkout, when present."""
    candidate = Path(os.environ.get("BELIEF_SHARED", ROOT.parent / "shared"))
    return candidate if (candidate / "networks").is_dir() else None


def require_shared() -> Path:
    """The shared data folder; skip without it, but fail under CI=true (a missing data set)."""
    found = shared_dir()
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("shared data (../shared or $BELIEF_SHARED) is missing under CI=true")
        pytest.skip("shared data not present (set BELIEF_SHARED)")
    return found


def network_files() -> list[str]:
    """Names of the shared real networks (for parametrize; empty without shared data)."""
    found = shared_dir()
    return sorted(p.name for p in (found / "networks").glob("*.json")) if found else ["<absent>"]


@pytest.fixture
def shared() -> Path:
    return require_shared()


@pytest.fixture
def network_path(request, shared: Path) -> Path:
    """Path of the parametrized shared network."""
    return shared / "networks" / request.param


@pytest.fixture(autouse=True, scope="session")
def _checkout_cache_per_session(tmp_path_factory):
    """In-process builds run from the checkout (its mkdocs.yml) would share the checkout's
    default cache folder with every other test process (pytest -n): one would wait for
    another's lock, or link files of a site another test is changing. They get this
    session's own folder instead, under its temporary base (one per xdist worker)."""
    import site_builder.cli as cli_module

    default = cli_module.cache_folder

    def cache_folder(config, explicit=None):
        found = default(config, explicit)
        if explicit is None and found.resolve().is_relative_to(ROOT):
            return tmp_path_factory.getbasetemp() / "checkout-cache"
        return found

    with pytest.MonkeyPatch.context() as patch:  # session-wide: module fixtures build too
        patch.setattr(cli_module, "cache_folder", cache_folder)
        yield


@pytest.fixture
def cli(capsys):
    """Run `belief-site ARGS...` in-process -> (exit code, stdout, stderr)."""
    def run(*args: str) -> tuple[int, str, str]:
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = exc.code
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def stale_echoes(folder: Path) -> Path:
    """A documents folder `folder`/beliefs where b, c and d rest on a and echo its claim, and
    a's claim was edited since: three W503 (stale derived content) sharing one `fmt` hint."""
    nodes = {"a": {"text": "Claim a.", "truth_value": "IN", "justifications": []}}
    for name in "bcd":
        nodes[name] = {"text": f"Claim {name}.", "truth_value": "IN",
                       "justifications": [{"type": "SL", "antecedents": ["a"], "outlist": []}]}
    (folder / "network.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    beliefs = folder / "beliefs"
    assert main(["import", str(folder / "network.json"), "-o", str(beliefs), "-q"]) == 0
    document = beliefs / "a.md"
    document.write_text(document.read_text(encoding="utf-8").replace("Claim a.", "Claim a, edited."),
                        encoding="utf-8")
    return beliefs


def _bad_code() -> bytes:
    """Marshal bytes of a code object with a field of -1 (Python 3.11: its stack size), which
    marshal.loads refuses with SystemError: a sealed cache file that is not ours."""
    import marshal
    data = bytearray(marshal.dumps(compile("1", "f", "eval")))
    data[13:17] = b"\xff\xff\xff\xff"
    return bytes(data)


BAD_CODE = _bad_code()
