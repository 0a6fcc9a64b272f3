"""The GitHub workflows in .github/workflows: valid, least-privileged, and their steps run.

Each `run:` step is executed locally with bash as GitHub runs it (`bash -eo pipefail`), with
the same commands, in a temporary repository with a constructed pull request. Nothing touches
the network: the `uses:` actions are simulated (checkout and setup are no-ops, artifacts are
copied into a folder), `python -m pip` is recorded instead of run, and `gh api` is a fake
GitHub that keeps its pull requests and comments in a JSON file.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from .conftest import ROOT
from .test_diff import BASE, History, edited, git, premise

WORKFLOWS = ROOT / ".github" / "workflows"
BIN = Path(sys.executable).parent
REQUIREMENT = "belief-site @ git+https://example.invalid/belief-site@v0.1.0"
PR, REPO_NAME, RUN_URL = "7", "owner/beliefs", "https://github.com/owner/beliefs/actions/runs/1"


def workflow(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    data["on"] = data.pop(True)  # YAML 1.1 reads the key `on` as true
    return data


# ----------------------------------------------------------------------------------------
# Static checks
# ----------------------------------------------------------------------------------------

def test_workflows_match_the_github_schema():
    files = sorted(WORKFLOWS.glob("*.yml"))
    assert [f.name for f in files] == ["pages.yml", "preview-comment.yml", "preview.yml"]
    try:
        from importlib.resources import files as resources
        schema = json.loads(resources("check_jsonschema.builtin_schemas.vendor")
                            .joinpath("github-workflows.json").read_text(encoding="utf-8"))
    except ModuleNotFoundError:
        if os.environ.get("CI") == "true":
            pytest.fail("check-jsonschema (test extra) is missing under CI=true")
        pytest.skip("check-jsonschema not installed")
    import jsonschema
    for f in files:
        jsonschema.validate(workflow(f.name), schema)


def _steps(data: dict):
    for job in data["jobs"].values():
        yield from job["steps"]


def test_actions_are_pinned_and_permissions_are_least():
    for name in ("pages.yml", "preview.yml", "preview-comment.yml"):
        for step in _steps(workflow(name)):
            if "uses" in step:
                assert "@v" in step["uses"], step
    preview, comment = workflow("preview.yml"), workflow("preview-comment.yml")
    assert preview["permissions"] == {"contents": "read"}  # fork PRs: read-only anyway
    assert comment["permissions"] == {"actions": "read", "contents": "read", "pull-requests": "write"}
    # The privileged workflow never runs the pull request's code nor posts what it wrote: it
    # checks out the default branch (no ref), fetches the pull request's commits as data only
    # and writes the comment with belief-site diff from git revisions.
    checkouts = [s for s in _steps(comment) if "checkout" in s.get("uses", "")]
    assert len(checkouts) == 1 and not {"ref", "repository"} & set(checkouts[0]["with"])
    assert checkouts[0]["with"]["persist-credentials"] is False  # the token goes to one fetch only
    assert "GH_TOKEN" not in comment["jobs"]["comment"].get("env", {})  # nor to what is installed
    [post] = [s for s in _steps(comment) if "GH_TOKEN" in s.get("env", {})]
    assert post["shell"] == "bash" and "extraheader" in post["run"]
    scripts = "\n".join(s.get("run", "") for s in _steps(comment))
    assert not re.search(r"\bgit(\s+-C\s+\S+)?\s+(checkout|switch|merge|worktree|reset|pull|restore)(?![\w-])", scripts)
    assert re.findall(r"pip install\s+\S+", scripts) == ["pip install .", 'pip install "$BELIEF_SITE"']
    assert re.findall(r"belief-site\s+([a-z]+)", scripts) == ["diff"]  # the one command it runs
    assert re.findall(r"summary/[\w.-]+", scripts) == ["summary/pr-number"]  # never the artifact's comment.md
    assert comment["on"]["workflow_run"]["workflows"] == [preview["name"]]
    uploaded = {s["with"]["name"] for s in _steps(preview) if "upload-artifact" in s.get("uses", "")}
    downloaded = {s["with"]["name"] for s in _steps(comment) if "download-artifact" in s.get("uses", "")}
    assert downloaded <= uploaded == {"belief-site-preview", "belief-summary"}
    pages = workflow("pages.yml")
    assert pages["on"]["push"]["branches"] == ["main"] and "pull_request" in preview["on"]


# ----------------------------------------------------------------------------------------
# Running the steps
# ----------------------------------------------------------------------------------------

FAKE_GH = r'''#!{python}
"""gh api against a JSON file: {"pulls": {n: sha}, "comments": {n: [comment]}, "next": id}."""
import json, os, re, subprocess, sys
args, state_file = sys.argv[1:], os.environ["FAKE_GH_STATE"]
state = json.load(open(state_file))
assert args[0] == "api" and os.environ.get("GH_TOKEN"), args
method, jq, body, path = "GET", None, None, None
i = 1
while i < len(args):
    a = args[i]
    if a == "-X": method = args[i + 1]; i += 2; continue
    if a == "--jq": jq = args[i + 1]; i += 2; continue
    if a == "-F": body = open(args[i + 1].split("=@", 1)[1]).read(); i += 2; continue
    if a == "--paginate": i += 1; continue
    path = a; i += 1
m = re.fullmatch(r"repos/[^/]+/[^/]+/(pulls|issues)/(\d+)(/comments)?|repos/[^/]+/[^/]+/issues/comments/(\d+)", path)
assert m, path
if m.group(1) == "pulls":
    out = {"number": int(m.group(2)), "head": {"sha": state["pulls"][m.group(2)]}, "base": {"ref": "main"}}
elif m.group(4):
    assert method == "PATCH"
    for c in (c for cs in state["comments"].values() for c in cs):
        if c["id"] == int(m.group(4)): c["body"] = body; out = c
elif method == "POST":
    out = {"id": state["next"], "user": {"login": "github-actions[bot]"}, "body": body}
    state["next"] += 1
    state["comments"].setdefault(m.group(2), []).append(out)
else:
    out = state["comments"].get(m.group(2), [])
json.dump(state, open(state_file, "w"))
text = json.dumps(out)
if jq:
    text = subprocess.run(["jq", "-r", jq], input=text, capture_output=True, text=True, check=True).stdout
sys.stdout.write(text if text.endswith("\n") else text + "\n")
'''

FAKE_PYTHON = '''#!/bin/sh
# `python -m pip ...` is recorded, not run (no network); anything else is the real Python.
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$*" >> "$PIP_LOG"; exit 0; fi
exec {python} "$@"
'''


class Runner:
    """Runs a job's steps as GitHub Actions would, locally and offline."""

    def __init__(self, tmp: Path, expressions: dict):
        self.tmp, self.expressions = tmp, expressions
        self.bin, self.artifacts = tmp / "bin", tmp / "artifacts"
        self.bin.mkdir(exist_ok=True)
        self.artifacts.mkdir(exist_ok=True)
        for name, text in (("gh", FAKE_GH), ("python", FAKE_PYTHON)):
            (self.bin / name).write_text(text.replace("{python}", sys.executable), encoding="utf-8")
            (self.bin / name).chmod(0o755 | stat.S_IXUSR)
        self.summary, self.pip_log = tmp / "step-summary.md", tmp / "pip.log"

    def expand(self, value):
        """`${{ expr }}` -> its value; every expression must be known to the test."""
        if not isinstance(value, str):
            return value
        while "${{" in value:
            start = value.index("${{")
            end = value.index("}}", start)
            expr = value[start + 3:end].strip()
            value = value[:start] + str(self.expressions[expr]) + value[end + 2:]
        return value

    def condition(self, step: dict, failed: bool) -> bool:
        expr = step.get("if")
        if expr is None:
            return not failed  # success()
        expr = expr.strip()
        if expr.startswith("${{"):
            expr = expr[3:-2].strip()
        value = self.expressions[expr]
        return bool(value(failed) if callable(value) else value)

    def run_job(self, data: dict, job: str, cwd: Path) -> list[tuple[str, int, str]]:
        """(step name, exit code, output) for every step that ran."""
        spec = data["jobs"][job]
        if "if" in spec and not self.condition(spec, False):
            return []
        env = {**{k: self.expand(v) for k, v in data.get("env", {}).items()},
               **{k: self.expand(v) for k, v in spec.get("env", {}).items()}}
        results, failed = [], False
        for step in spec["steps"]:
            if not self.condition(step, failed):
                continue
            name = step.get("name", step.get("uses", "run"))
            if "uses" in step:
                code, output = self.action(step, cwd), ""
            else:
                code, output = self.shell(step, cwd / step.get("working-directory", "."),
                                          {**env, **{k: self.expand(v) for k, v in step.get("env", {}).items()}})
            results.append((name, code, output))
            failed |= code != 0
        return results

    def shell(self, step: dict, cwd: Path, env: dict) -> tuple[int, str]:
        script = self.tmp / "step.sh"
        script.write_text(self.expand(step["run"]), encoding="utf-8")
        full = {**os.environ, "PATH": f"{self.bin}:{BIN}:{os.environ['PATH']}", "HOME": str(self.tmp),
                "GITHUB_STEP_SUMMARY": str(self.summary), "PIP_LOG": str(self.pip_log),
                "GITHUB_OUTPUT": str(self.tmp / "output"), "GITHUB_WORKSPACE": str(cwd),
                "FAKE_GH_STATE": str(self.tmp / "github.json"), "GIT_CONFIG_GLOBAL": os.devnull,
                **env}
        done = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                              cwd=cwd, env=full, capture_output=True, text=True, timeout=600)
        return done.returncode, done.stdout + done.stderr

    def action(self, step: dict, cwd: Path) -> int:
        """The actions the workflows use, simulated."""
        uses, args = step["uses"].split("@")[0], {k: self.expand(v) for k, v in step.get("with", {}).items()}
        if uses in ("actions/checkout", "actions/setup-python", "actions/configure-pages",
                    "actions/deploy-pages"):
            return 0
        if uses == "actions/upload-pages-artifact":
            return 0 if (cwd / args["path"] / "index.html").is_file() else 1
        if uses == "actions/upload-artifact":
            source = cwd / args["path"]
            if source.is_dir():
                shutil.copytree(source, self.artifacts / args["name"], dirs_exist_ok=True)
            return 0  # if-no-files-found: warn
        if uses == "actions/download-artifact":
            shutil.copytree(self.artifacts / args["name"], cwd / args["path"], dirs_exist_ok=True)
            return 0
        raise AssertionError(f"unknown action {uses}")


def expressions(head_sha: str = "") -> dict:
    return {
        "vars.BELIEF_SITE": REQUIREMENT, "github.base_ref": "main",
        "github.event.pull_request.number": PR, "github.token": "token",
        "github.repository": REPO_NAME, "github.event.workflow_run.head_sha": head_sha,
        "github.event.workflow_run.html_url": RUN_URL, "github.event.workflow_run.id": "1",
        "steps.pages.outputs.base_url": "https://owner.github.io/beliefs",
        "steps.deployment.outputs.page_url": "https://owner.github.io/beliefs/",
        "!cancelled()": True,
        "github.event.workflow_run.event == 'pull_request' && "
        "github.event.workflow_run.conclusion != 'cancelled'": True,
    }


def _cli_supports(command: str, flag: str) -> bool:
    """Whether the installed command line has `flag` yet (integrated by the lead)."""
    from site_builder.cli import _parser
    sub = next(a for a in _parser()._actions if a.dest == "command").choices[command]
    return any(flag in a.option_strings for a in sub._actions)


def pull_request(tmp_path: Path, head: dict) -> History:
    """A repository whose origin/main has BASE and whose HEAD is the pull request."""
    repo = History(tmp_path / "repo")
    (repo.root / "mkdocs.yml").write_text("site_name: Beliefs\nplugins:\n  - beliefs:\n"
                                          "      source: beliefs\n      search: false\n")
    base = repo.commit(BASE, "base")
    git(repo.root, "update-ref", "refs/remotes/origin/main", base)
    repo.commit(head, "pull request")
    return repo


def comment_checkout(repo: History, cwd: Path, number: str = PR) -> str:
    """What the comment job finds: `cwd/base`, a clone of an origin whose main is the pull
    request's base and whose refs/pull/N/head is its head (as GitHub keeps it); the head sha."""
    origin = cwd.parent / f"{cwd.name}-origin.git"
    git(cwd.parent, "init", "-q", "--bare", "-b", "main", str(origin))
    head = git(repo.root, "rev-parse", "HEAD")
    git(repo.root, "push", "-q", str(origin), "refs/remotes/origin/main:refs/heads/main",
        f"HEAD:refs/pull/{number}/head")
    git(cwd.parent, "clone", "-q", str(origin), str(cwd / "base"))
    return head


@pytest.fixture
def runner(tmp_path) -> Runner:
    return Runner(tmp_path, expressions())


@pytest.fixture
def jq():
    """The fake `gh` applies `--jq` filters with jq, as gh does with its built-in one."""
    if shutil.which("jq") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("jq is missing under CI=true (.ci/run installs it)")
        pytest.skip("no jq (apt-get install jq)")


def _by_name(results) -> dict[str, tuple[int, str]]:
    return {name: (code, out) for name, code, out in results}


def test_install_step_uses_the_checkout_here_and_the_variable_elsewhere(runner, tmp_path):
    install = next(s for s in _steps(workflow("preview.yml")) if s.get("name") == "Install belief-site")
    env = {"BELIEF_SITE": REQUIREMENT}
    assert runner.shell(install, ROOT, env)[0] == 0
    other = tmp_path / "elsewhere"
    other.mkdir()
    assert runner.shell(install, other, env)[0] == 0
    assert runner.pip_log.read_text().splitlines() == ["-m pip install .", f"-m pip install {REQUIREMENT}"]
    code, out = runner.shell(install, other, {"BELIEF_SITE": ""})
    assert code == 1 and "::error::set the repository variable BELIEF_SITE" in out


def test_preview_then_comment(runner, tmp_path, jq):
    repo = pull_request(tmp_path, edited(BASE, p=premise("OUT")))
    pending = [f for c, f in (("check", "--base"), ("build", "--diff-base")) if not _cli_supports(c, f)]
    results = _by_name(runner.run_job(workflow("preview.yml"), "preview", repo.root))
    summary = runner.artifacts / "belief-summary"
    assert results["Summarise what the change does to the network"][0] == 0
    assert (summary / "pr-number").read_text().strip() == PR
    assert "**4 status flips** (4 IN→OUT" in (summary / "comment.md").read_text()
    assert len(json.loads((summary / "diff.json").read_text())["flips"]) == 4
    assert "### Belief changes" in runner.summary.read_text()
    if not pending:
        assert all(code == 0 for code, _ in results.values()), results
        assert (runner.artifacts / "belief-site-preview" / "changes" / "index.html").is_file()

    comment_cwd = tmp_path / "comment-run"
    comment_cwd.mkdir()
    head_sha = comment_checkout(repo, comment_cwd)
    runner.expressions = expressions(head_sha)
    state = {"pulls": {PR: head_sha}, "next": 100,
             "comments": {PR: [{"id": 1, "user": {"login": "someone"}, "body": "<!-- belief-site-diff --> mine"}]}}
    (tmp_path / "github.json").write_text(json.dumps(state))
    for _ in range(2):  # the first run comments, the second updates that comment
        done = _by_name(runner.run_job(workflow("preview-comment.yml"), "comment", comment_cwd))
        assert done["Post or update the comment"][0] == 0, done
    comments = json.loads((tmp_path / "github.json").read_text())["comments"][PR]
    assert [c["id"] for c in comments] == [1, 100] and comments[0]["body"].endswith("mine")
    body = comments[1]["body"]
    assert body.startswith("<!-- belief-site-diff -->\n### Belief changes") and RUN_URL in body
    assert "**4 status flips** (4 IN→OUT" in body  # written here, from the pull request's commits
    assert "updated comment 100" in done["Post or update the comment"][1]
    if pending:
        pytest.skip(f"waiting for the command line to get {', '.join(pending)} (see the report)")


def test_comment_refuses_a_moved_or_forged_pull_request(runner, tmp_path, jq):
    (tmp_path / "summary").mkdir()
    (tmp_path / "summary" / "comment.md").write_text("### Belief changes\n")
    runner.expressions = expressions("abc")
    cases = [("7", "def", 0, "is not at abc"), ("7; touch pwned", "abc", 1, "names no pull request")]
    for number, sha, code, message in cases:
        (runner.artifacts / "belief-summary").mkdir(parents=True, exist_ok=True)
        (runner.artifacts / "belief-summary" / "pr-number").write_text(number)
        (runner.artifacts / "belief-summary" / "comment.md").write_text("### Belief changes\n")
        (tmp_path / "github.json").write_text(json.dumps({"pulls": {"7": sha}, "comments": {}, "next": 1}))
        cwd = tmp_path / f"run-{code}"
        (cwd / "base").mkdir(parents=True)
        result = _by_name(runner.run_job(workflow("preview-comment.yml"), "comment", cwd))
        assert result["Post or update the comment"][0] == code and message in result["Post or update the comment"][1]
        assert json.loads((tmp_path / "github.json").read_text())["comments"] == {}
        assert not (cwd / "pwned").exists()


def test_a_failing_check_still_publishes_the_summary(runner, tmp_path):
    if not _cli_supports("check", "--base"):
        pytest.skip("waiting for `check --base` in the command line (see the report)")
    repo = pull_request(tmp_path, edited(BASE, q=None))  # q vanishes without an alias: E410
    results = _by_name(runner.run_job(workflow("preview.yml"), "preview", repo.root))
    code, out = results["Check (fails on errors and on published ids removed without an alias)"]
    assert code == 1 and "::error" in out and "E410" in out
    assert "1 removed" in (runner.artifacts / "belief-summary" / "comment.md").read_text()


def test_pages_build_job(runner, tmp_path):
    repo = pull_request(tmp_path, BASE)
    results = runner.run_job(workflow("pages.yml"), "build", repo.root)
    assert [(name, code) for name, code, _ in results] == [
        ("actions/checkout@v4", 0), ("actions/setup-python@v5", 0), ("Install belief-site", 0),
        ("Configure Pages", 0), ("Check the beliefs", 0), ("Build the site", 0),
        ("Upload the site for Pages", 0)], results
    assert "https://owner.github.io/beliefs/belief/p/" in (repo.root / "site" / "sitemap.xml").read_text()


def test_the_comment_is_written_here_never_taken_from_the_artifact(runner, tmp_path, jq):
    """A fork's run writes the artifact, so its comment.md may say anything (raw HTML, links, a
    fake approval, @-mentions): the comment is written by this repository's belief-site from
    the pull request's commits, whose claims cannot mention anyone nor link an issue either."""
    repo = pull_request(tmp_path, edited(BASE, p=premise(claim="Ping @octocat about #12 and GH-3 <img src=x>")))
    # The base branch moves on after the pull request branched: not the pull request's change.
    head_sha, branched = git(repo.root, "rev-parse", "HEAD"), git(repo.root, "rev-parse", "origin/main")
    git(repo.root, "checkout", "-q", "--detach", branched)
    git(repo.root, "update-ref", "refs/remotes/origin/main", repo.commit(edited(BASE, later=premise()), "main"))
    git(repo.root, "checkout", "-q", head_sha)
    cwd = tmp_path / "run"
    cwd.mkdir()
    assert comment_checkout(repo, cwd) == head_sha
    (runner.artifacts / "belief-summary").mkdir(parents=True, exist_ok=True)
    (runner.artifacts / "belief-summary" / "pr-number").write_text(PR)
    (runner.artifacts / "belief-summary" / "comment.md").write_text(
        "### Belief changes\n**Approved by the maintainers** <img src=https://evil.example/x.png> @octocat\n",
        encoding="utf-8")
    runner.expressions = expressions(head_sha)
    (tmp_path / "github.json").write_text(json.dumps({"pulls": {PR: head_sha}, "comments": {}, "next": 1}))
    result = _by_name(runner.run_job(workflow("preview-comment.yml"), "comment", cwd))
    assert result["Post or update the comment"][0] == 0, result
    body = json.loads((tmp_path / "github.json").read_text(encoding="utf-8"))["comments"][PR][0]["body"]
    assert "Approved" not in body and "evil.example" not in body
    assert "- `p`: claim (" in body and "@\u200boctocat" in body and "#\u200b12" in body and "GH\u200b" in body
    assert "@octocat" not in body and "<img" not in body
    assert "`later`" not in body and "0 removed" in body  # what the base gained since is no removal
    assert git(cwd / "base", "rev-parse", "HEAD") == git(repo.root, "rev-parse", "origin/main")  # not checked out


def test_the_comment_waits_for_a_pull_request_that_moved_after_its_run(runner, tmp_path, jq):
    """The head GitHub reports is the run's, but the fetched pull request ref is not (a push
    in between): no comment from commits nobody previewed."""
    repo = pull_request(tmp_path, edited(BASE, p=premise("OUT")))
    cwd = tmp_path / "run"
    cwd.mkdir()
    run_sha = git(repo.root, "rev-parse", "HEAD")
    repo.commit(edited(BASE, q=premise("OUT")), "pushed later")
    comment_checkout(repo, cwd)
    (runner.artifacts / "belief-summary").mkdir(parents=True, exist_ok=True)
    (runner.artifacts / "belief-summary" / "pr-number").write_text(PR)
    runner.expressions = expressions(run_sha)
    (tmp_path / "github.json").write_text(json.dumps({"pulls": {PR: run_sha}, "comments": {}, "next": 1}))
    code, out = _by_name(runner.run_job(workflow("preview-comment.yml"), "comment", cwd))["Post or update the comment"]
    assert code == 0 and "moved while this ran" in out
    assert json.loads((tmp_path / "github.json").read_text())["comments"] == {}