"""`belief-site diff` (issue 6): edits, renames and status flips with their causes.

Histories are built in a temporary git repository, one commit per version, and read back
with `git:REV` (no checkout). The real-network case retracts a premise with many
dependents and compares the flips with ftl-reasons' `what-if retract` (the oracle).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, fields
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from site_builder.config import SiteConfig
from site_builder.diff import (alias_problems, compare, read_side, redirects, render, side_of,
                               vanished)
from site_builder.diff.gitsource import git_sources
from site_builder.evaluate import evaluate
from site_builder.evaluate.queries import impact
from site_builder.evaluate.truth import references
from site_builder.load import load
from site_builder.model import Belief, Justification, Network
from site_builder.render import RenderContext, emitters, render as render_site
from site_builder.render import changes

from .conftest import EXAMPLE, network_files
from .test_build import broken_links

# ----------------------------------------------------------------------------------------
# Building histories
# ----------------------------------------------------------------------------------------


def premise(status: str = "IN", claim: str | None = None, **front) -> dict:
    return {"status": status, "claim": claim, "just": None, "front": front}


def derived(*antecedents: str, unless: tuple = (), claim: str | None = None, **front) -> dict:
    return {"status": "IN", "claim": claim, "just": [(antecedents, unless)], "front": front}


def document(bid: str, spec: dict) -> str:
    """A belief document in the Markdown spelling of spec §3.2."""
    lines = []
    if spec["front"]:
        lines += ["---", *(f"{k}: {json.dumps(v)}" for k, v in spec["front"].items()), "---"]
    kind = "premise" if spec["just"] is None else "derived"
    lines += [f"# {bid}", "", f"**{spec['status']}** · {kind}", "", spec["claim"] or f"Claim of {bid}."]
    if spec["just"]:
        lines += ["", "## Justifications"]
        for n, (ante, unless) in enumerate(spec["just"]):
            lines += ["", f"### SL — reason {n + 1}"]
            if ante:
                lines += ["Antecedents (all must be IN):", *(f"- {a}" for a in ante)]
            if unless:
                lines += ["Unless (all must be OUT):", *(f"- {o}" for o in unless)]
    return "\n".join(lines) + "\n"


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    done = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
                          cwd=repo, env=env, capture_output=True, text=True, check=True)
    return done.stdout.strip()


class History:
    """A temporary repository whose `beliefs/` folder gets one commit per version."""

    def __init__(self, root: Path):
        self.root = root
        root.mkdir(parents=True, exist_ok=True)
        git(root, "init", "-q", "-b", "main")

    def commit(self, network: dict[str, dict], message: str = "version", **other: str) -> str:
        folder = self.root / "beliefs"
        for old in folder.glob("*.md") if folder.exists() else ():
            old.unlink()
        folder.mkdir(exist_ok=True)
        for bid, spec in network.items():
            (folder / f"{bid}.md").write_text(document(bid, spec), encoding="utf-8")
        for name, text in other.items():
            (self.root / name).write_text(text, encoding="utf-8")
        git(self.root, "add", "-A")
        git(self.root, "commit", "-q", "--allow-empty", "-m", message)
        return git(self.root, "rev-parse", "HEAD")

    def diff(self, base: str = "git:HEAD~1", head: str = "git:HEAD"):
        return compare(read_side(base, cwd=self.root), read_side(head, cwd=self.root))


#: The base network of the constructed histories: two premises, a chain p -> a -> b -> c
#: (c also needs q), d from q, and x from q unless z (z, an OUT premise, is a defeater).
BASE = {
    "p": premise(), "q": premise(), "z": premise("OUT"),
    "a": derived("p"), "b": derived("a"), "c": derived("b", "q"), "d": derived("q"),
    "x": derived("q", unless=("z",)),
}


def edited(network: dict, **changes) -> dict:
    """A copy with some beliefs replaced (None removes one)."""
    out = {**network, **changes}
    return {k: v for k, v in out.items() if v is not None}


def renamed(network: dict, old: str, new: str, alias: bool, update_citations: bool = True) -> dict:
    out = {}
    for bid, spec in network.items():
        spec = {**spec, "claim": spec["claim"] or f"Claim of {bid}."}
        if update_citations and spec["just"]:
            spec["just"] = [(tuple(new if a == old else a for a in ante),
                             tuple(new if o == old else o for o in unless))
                            for ante, unless in spec["just"]]
        if bid == old:
            bid, spec = new, {**spec, "front": {"aliases": [old]} if alias else {}}
        out[bid] = spec
    return out


@pytest.fixture
def history(tmp_path) -> History:
    return History(tmp_path / "repo")


def summary(diff) -> dict:
    """The diff as plain data, for comparing with expectations."""
    return {
        "added": [e.id for e in diff.added], "removed": [e.id for e in diff.removed],
        "edited": {e.id: list(e.fields) for e in diff.edited},
        "renamed": [(r.source, r.target, r.via) for r in diff.renamed],
        "flips": {f.id: (f.before, f.after, list(f.causes), list(f.path)) for f in diff.flips},
    }


def expect(added=(), removed=(), edited=None, renamed=(), flips=None) -> dict:
    return {"added": list(added), "removed": list(removed), "edited": edited or {},
            "renamed": list(renamed), "flips": flips or {}}


OUT_ = ("IN", "OUT")
IN_ = ("OUT", "IN")

# ----------------------------------------------------------------------------------------
# Constructed histories: (name, base, head, expected diff)
# ----------------------------------------------------------------------------------------

CASES = [
    ("retract a premise: the whole cascade, each flip caused by the premise",
     BASE, edited(BASE, p=premise("OUT")),
     expect(edited={"p": ["status"]}, flips={
         "p": (*OUT_, ["p"], ["p"]), "a": (*OUT_, ["p"], ["p", "a"]),
         "b": (*OUT_, ["p"], ["p", "a", "b"]), "c": (*OUT_, ["p"], ["p", "a", "b", "c"])})),
    ("restore the premise: the beliefs come back IN",
     edited(BASE, p=premise("OUT")), BASE,
     expect(edited={"p": ["status"]}, flips={
         "p": (*IN_, ["p"], ["p"]), "a": (*IN_, ["p"], ["p", "a"]),
         "b": (*IN_, ["p"], ["p", "a", "b"]), "c": (*IN_, ["p"], ["p", "a", "b", "c"])})),
    ("add an outlist defeater: the defeated belief flips",
     BASE, edited(BASE, w=premise(), d=derived("q", unless=("w",))),
     expect(added=["w"], edited={"d": ["justifications"]},
            flips={"d": (*OUT_, ["d", "w"], ["d"])})),
    ("a defeater already in the outlist comes IN",
     BASE, edited(BASE, z=premise("IN")),
     expect(edited={"z": ["status"]}, flips={"z": (*IN_, ["z"], ["z"]),
                                             "x": (*OUT_, ["z"], ["z", "x"])})),
    ("retract a derived belief: it and what rests on it go OUT",
     BASE, edited(BASE, a=derived("p", retracted=True) | {"status": "OUT"}),
     expect(edited={"a": ["status"]}, flips={"a": (*OUT_, ["a"], ["a"]),
                                             "b": (*OUT_, ["a"], ["a", "b"]),
                                             "c": (*OUT_, ["a"], ["a", "b", "c"])})),
    ("rename with an alias: no flips, citations edited",
     BASE, renamed(BASE, "q", "q2", alias=True),
     expect(edited={"c": ["justifications"], "d": ["justifications"], "x": ["justifications"]},
            renamed=[("q", "q2", "alias")])),
    ("rename without an alias: detected by its identical claim",
     BASE, renamed(BASE, "q", "q2", alias=False),
     expect(edited={"c": ["justifications"], "d": ["justifications"], "x": ["justifications"]},
            renamed=[("q", "q2", "claim")])),
    ("rename without updating citations: the old id is the cause",
     BASE, renamed(BASE, "q", "q2", alias=True, update_citations=False),
     expect(renamed=[("q", "q2", "alias")], flips={
         "c": (*OUT_, ["q"], ["q", "c"]), "d": (*OUT_, ["q"], ["q", "d"]),
         "x": (*OUT_, ["q"], ["q", "x"])})),
    ("remove a premise: its dependents flip, caused by the removal",
     BASE, edited(BASE, q=None),
     expect(removed=["q"], flips={"c": (*OUT_, ["q"], ["q", "c"]), "d": (*OUT_, ["q"], ["q", "d"]),
                                  "x": (*OUT_, ["q"], ["q", "x"])})),
    ("edit only a claim: an edit, no flips",
     BASE, edited(BASE, a=derived("p", claim="A new wording of a.")),
     expect(edited={"a": ["claim"]})),
]


@pytest.mark.parametrize("name, base, head, expected", CASES, ids=[c[0] for c in CASES])
def test_constructed_history(history, name, base, head, expected):
    history.commit(base, "base")
    history.commit(head, "head")
    assert summary(history.diff()) == expected


def test_a_no_op_change_is_an_empty_diff(history):
    """Derived content refreshed (depth, dependents) and a file outside beliefs/: no change."""
    history.commit(BASE, "base")
    history.commit(BASE, "touch", **{"README.md": "notes\n"})
    folder = history.root / "beliefs"
    (folder / "a.md").write_text(document("a", BASE["a"]).replace("· derived", "· derived (depth 1)")
                                 + "\n## Dependents\n\n- IN b\n", encoding="utf-8")
    diff = history.diff("git:HEAD~1", str(folder))
    assert diff.is_empty and summary(diff) == expect()
    assert json.loads(render(diff, "json"))["flips"] == []
    assert "No belief changed." in render(diff, "markdown")


def test_label_edits_are_reported_but_cause_nothing(history):
    """A label is part of the justifications (an edit) but not of their structure."""
    history.commit(BASE, "base")
    folder = history.root / "beliefs"
    (folder / "d.md").write_text(document("d", BASE["d"]).replace("reason 1", "a new label"),
                                 encoding="utf-8")
    diff = history.diff("git:HEAD", str(folder))
    assert summary(diff) == expect(edited={"d": ["justifications"]})


def test_a_flip_with_two_causes_lists_both_and_the_nearest_path(history):
    history.commit(BASE, "base")
    history.commit(edited(BASE, p=premise("OUT"), q=premise("OUT")), "both")
    flips = {f.id: f for f in history.diff().flips}
    assert flips["c"].causes == ("p", "q") and flips["c"].path == ("q", "c")
    assert flips["b"].causes == ("p",)


def test_the_working_tree_and_explicit_paths_are_sides(history, tmp_path):
    history.commit(BASE, "base")
    history.commit(edited(BASE, p=premise("OUT")), "retract")
    by_default = compare(read_side("HEAD~1", cwd=history.root), read_side("beliefs", cwd=history.root))
    explicit = compare(read_side("git:HEAD~1:beliefs", cwd=history.root),
                       read_side("git:HEAD:./beliefs", cwd=history.root))
    assert summary(by_default) == summary(explicit) == summary(history.diff())
    assert by_default.base == "HEAD~1" and by_default.head == "beliefs"


def test_network_json_in_git(history):
    nodes = {"p": {"text": "P", "truth_value": "IN", "justifications": []},
             "a": {"text": "A", "truth_value": "IN",
                   "justifications": [{"type": "SL", "antecedents": ["p"], "outlist": [], "label": ""}]}}
    (history.root / "network.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    history.commit({}, "json")
    nodes["p"]["truth_value"] = "OUT"
    (history.root / "network.json").write_text(json.dumps({"nodes": nodes}), encoding="utf-8")
    diff = compare(read_side("git:HEAD:network.json", cwd=history.root),
                   read_side("network.json", cwd=history.root))
    assert summary(diff)["flips"] == {"a": (*OUT_, ["p"], ["p", "a"]), "p": (*OUT_, ["p"], ["p"])}


@pytest.mark.parametrize("spec, message", [
    ("git:no-such-rev", "unknown git revision"),
    ("nothing-here", "neither a documents folder"),
    ("git:-x", "not a git revision"),
])
def test_usage_problems_become_e802(history, spec, message):
    history.commit(BASE, "base")
    side = read_side(spec, cwd=history.root)
    assert [d.code for d in side.diagnostics] == ["E802"] and message in side.diagnostics[0].message
    assert side.beliefs == {}


def test_a_revision_without_the_source_is_an_empty_base_not_a_usage_error(history, cli, monkeypatch):
    """The pull request that adds a repository's first beliefs: its base has no beliefs/, and
    diff, check --base and build --diff-base all stopped with exit 2 (no preview at all)."""
    git(history.root, "commit", "-q", "--allow-empty", "-m", "before any belief")
    history.commit(BASE, "the first beliefs")
    side = read_side("git:HEAD~1:beliefs", cwd=history.root)
    assert [d.code for d in side.diagnostics] == ["W607"] and side.beliefs == {}
    assert "beliefs does not exist in revision 'HEAD~1'" in side.diagnostics[0].message
    monkeypatch.chdir(history.root)
    code, out, err = cli("diff", "git:HEAD~1:beliefs", "beliefs", "--format", "json")
    assert code == 0 and json.loads(out)["counts"]["added"] == len(BASE) and " W607 " in err
    assert cli("check", "beliefs", "--base", "HEAD~1")[0] == 0
    code, _, err = cli("build", "beliefs", "-o", "site", "--no-search", "--diff-base", "HEAD~1")
    assert code == 0 and (history.root / "site" / "changes" / "index.html").is_file(), err


def test_git_sources_equal_the_folder_read_from_disk(history):
    """Same files, texts and diagnostics as `load` (paths shown as REV:PATH)."""
    history.commit(BASE, "base")
    folder = history.root / "beliefs"
    (folder / "ns").mkdir()
    (folder / "ns" / "local.md").write_text(document("ns:local", premise()), encoding="utf-8")
    (folder / "bom.md").write_bytes("\ufeff".encode() + document("bom", premise()).encode())
    (folder / "crlf.md").write_bytes(document("crlf", premise()).replace("\n", "\r\n").encode())
    (folder / "latin.md").write_bytes("# latin\n\ncaf\xe9\n".encode("latin-1"))
    (folder / "notes.txt").write_text("stray\n", encoding="utf-8")
    (folder / ".hidden.md").write_text("ignored\n", encoding="utf-8")
    (folder / "_project.yaml").write_text("meta: {schema_version: '1.0'}\n", encoding="utf-8")
    git(history.root, "add", "-A")
    git(history.root, "commit", "-q", "-m", "odd files")
    disk, from_git = load(folder), git_sources("HEAD", "beliefs", history.root)
    strip = lambda path, root: path[len(root):]  # noqa: E731
    assert from_git.kind == disk.kind and from_git.root == "HEAD:beliefs"
    assert [(f.relative, f.text, f.had_bom, f.crlf, strip(f.path, from_git.root)) for f in from_git.files] \
        == [(f.relative, f.text, f.had_bom, f.crlf, strip(f.path, disk.root)) for f in disk.files]
    assert from_git.project.text == disk.project.text
    shown = lambda s: [(strip(d.path, s.root), d.line, d.code, d.message) for d in s.diagnostics]  # noqa: E731
    assert shown(from_git) == shown(disk) and {d.code for d in disk.diagnostics} == {"E101", "W103", "W606"}


# ----------------------------------------------------------------------------------------
# Renames and aliases: check --base, redirects
# ----------------------------------------------------------------------------------------

def test_a_vanished_id_without_alias_is_e410_and_with_alias_is_fine(history):
    history.commit(BASE, "base")
    history.commit(renamed(BASE, "q", "q2", alias=True), "alias")
    base = read_side("git:HEAD~1", cwd=history.root)
    assert vanished(base, read_side("git:HEAD", cwd=history.root)) == []
    history.commit(renamed(BASE, "q", "q2", alias=False), "no alias")
    found = vanished(base, read_side("git:HEAD", cwd=history.root))
    assert [(d.code, d.path) for d in found] == [("E410", "HEAD:beliefs/q2.md")]
    assert "aliases: [q]" in found[0].hint
    history.commit(edited(BASE, q=None), "removed")
    found = vanished(base, read_side("git:HEAD", cwd=history.root))
    assert [(d.code, d.path) for d in found] == [("E410", "HEAD~1:beliefs/q.md")]


def test_an_alias_dropped_by_a_second_rename_is_e410(history):
    """q -> q2 (alias q), then q2 -> q3 listing only q2: belief/q/ (a redirect page) went
    unreported."""
    history.commit(renamed(BASE, "q", "q2", alias=True), "first rename")
    again = renamed(renamed(BASE, "q", "q2", alias=True), "q2", "q3", alias=True)
    history.commit(again, "second rename, q dropped")
    found = vanished(read_side("git:HEAD~1", cwd=history.root), read_side("git:HEAD", cwd=history.root))
    assert [(d.code, d.path, d.message) for d in found] == [
        ("E410", "HEAD:beliefs/q3.md", "alias 'q' of 'q2' in git:HEAD~1 is gone: its redirect page goes, and "
                                       "published links to it break")]
    assert "keep 'q' in the `aliases` of 'q3'" in found[0].hint
    kept = {**again, "q3": {**again["q3"], "front": {"aliases": ["q2", "q"]}}}
    history.commit(kept, "both kept")
    assert vanished(read_side("git:HEAD~2", cwd=history.root), read_side("git:HEAD", cwd=history.root)) == []


def _network(**beliefs: Belief) -> Network:
    return Network(dict(sorted(beliefs.items())))


def test_alias_problems_and_redirects():
    net = _network(
        a=Belief("a", "A", metadata={"aliases": ["old-a", "b", "Bad Id"]}),
        b=Belief("b", "B", metadata={"aliases": ["old-a", "old-b"]}),
        c=Belief("c", "C", metadata={"aliases": "old-c"}))
    assert redirects(net) == {"old-a": "a", "old-b": "b", "old-c": "c"}
    messages = sorted((d.code, d.path, d.message.split(":")[0]) for d in alias_problems(net))
    assert [m[0] for m in messages] == ["E411"] * 3
    assert any("'b' of 'a' is the id of an existing belief" in d.message for d in alias_problems(net))
    assert any("'old-a' is also listed by 'a'" in d.message for d in alias_problems(net))


# ----------------------------------------------------------------------------------------
# Output formats and the command line
# ----------------------------------------------------------------------------------------

def test_json_form(history):
    history.commit(BASE, "base")
    history.commit(edited(renamed(BASE, "q", "q2", alias=True), p=premise("OUT")), "change")
    data = json.loads(render(history.diff(), "json"))
    assert {"added", "removed", "edited", "renamed", "flips", "counts", "schema_version"} <= set(data)
    assert data["renamed"] == [{"from": "q", "to": "q2", "via": "alias", "fields": [], "changes": {}}]
    edits = {e["id"]: e for e in data["edited"]}
    assert edits["p"] == {"id": "p", "fields": ["status"], "changes": {"status": {"from": "IN", "to": "OUT"}}}
    assert edits["c"]["changes"]["justifications"]["to"][0]["antecedents"] == ["b", "q2"]
    flip = next(f for f in data["flips"] if f["id"] == "b")
    assert flip == {"id": "b", "from": "IN", "to": "OUT", "cause": ["p"], "cause_complete": True,
                    "path": ["p", "a", "b"], "elided": 0}
    assert data["counts"]["flips"] == 4 and data["counts"]["in_to_out"] == 4


def test_markdown_is_short_on_top_and_inert(history):
    history.commit(BASE, "base")
    hostile = "<script>alert(1)</script> **bold** @octocat #12 [x](javascript:alert(1)) | pipe"
    history.commit(edited(BASE, p=premise("OUT"), evil=premise(claim=hostile)), "change")
    text = render(history.diff(), "markdown", site_url="https://example.org/pr-7/")
    first = text.splitlines()[:3]
    assert first[0] == "### Belief changes" and "**4 status flips**" in first[2]
    assert text.count("<details>") == 3 and "</details>" in text
    assert "<script>" not in text and "&lt;script&gt;" in text
    assert "@octocat" not in text and "#12" not in text and "\\[x\\]" in text and "\\|" in text
    assert "[`b`](https://example.org/pr-7/belief/b/)" in text


def test_markdown_shows_what_an_edit_of_a_claim_changed(history):
    """The comment named the changed field ("claim") only: now the words removed and added,
    a little context around them, inert (a claim is untrusted), the first few edits."""
    long_claim = "Words here and " + "filler " * 20 + "more old words at the end."
    history.commit(edited(BASE, q=premise(claim=long_claim), a=derived("p", claim="a b c d e f g h")), "base")
    history.commit(edited(BASE, p=premise(claim="Claim of p, now <b>bold</b> and @octocat."),
                          q=premise(claim=long_claim.replace("old", "new")),
                          a=derived("p", claim="A b C d E f G h")), "reword")
    text = render(history.diff(), "markdown")
    assert "- `p`: claim (Claim of p<ins>, now &lt;b&gt;bold&lt;/b&gt; and @\u200boctocat</ins>\\.)" in text, text
    assert "- `q`: claim (… filler filler filler more <del>old</del><ins>new</ins> words at the end\\.)" in text
    assert ("- `a`: claim (<del>a</del><ins>A</ins> b <del>c</del><ins>C</ins> d <del>e</del><ins>E</ins> f "
            "… (more on the changes page))") in text, text


def test_markdown_shows_no_control_or_bidi_character_and_links_no_gh_reference():
    """A network.json may hold control characters (documents cannot: E104): the word diff of
    an edited claim passed ESC sequences into the comment (added claims did not), bidi
    overrides reordered what a reviewer reads, and GH-12 cross-referenced issue 12."""
    hostile = "now \x1b]0;title\x07\x1b[2J\x9b31m \u202eDESREVER\u202c and \u2066x\u2069, see GH-12 and gh-3"
    base = Network({"p": Belief("p", "plain words")})
    head = Network({"p": Belief("p", f"plain words {hostile}"), "n": Belief("n", hostile)})
    text = render(compare(side_of("base", evaluate(base)), side_of("head", evaluate(head))), "markdown")
    assert "DESREVER" in text and "<ins>" in text and "`n`" in text  # both the edit and the added claim
    assert not re.search("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]", text), ascii(text)
    assert not re.search(r"(?i)\bGH\\?-\d", text) and "GH\u200b\\-12" in text

def test_markdown_never_links_a_belief_the_head_site_has_no_page_for(history):
    """Removing p flips a, b and c: the flips table linked p, a 404 on the preview site."""
    history.commit(BASE, "base")
    history.commit(edited(BASE, p=None), "p removed")
    text = render(history.diff(), "markdown", site_url="https://example.org/pr-7/")
    assert "belief/p/" not in text and "`p`" in text
    assert "[`a`](https://example.org/pr-7/belief/a/)" in text


def test_markdown_stays_under_the_comment_limit(tmp_path):
    ids = [f"b{i:05d}-" + "long" * 40 for i in range(3000)]
    beliefs = {i: Belief(i, "x" * 300) for i in ids}
    diff = compare(side_of("base", evaluate(Network({}))), side_of("head", evaluate(Network(beliefs))))
    text = render(diff, "markdown")
    assert len(text.encode("utf-8")) <= 60_000 and "more (see the JSON form" in text


def test_cli_diff(history, cli, monkeypatch):
    history.commit(BASE, "base")
    history.commit(edited(BASE, p=premise("OUT")), "retract")
    monkeypatch.chdir(history.root)
    code, out, _ = cli("diff", "git:HEAD~1", "git:HEAD")
    assert code == 0 and out.startswith("git:HEAD~1 .. git:HEAD: 4 status flips (4 IN->OUT")
    assert "cause: p; path: p -> a -> b -> c" in out
    code, out, _ = cli("diff", "HEAD~1", "--format", "json", "-o", "out/diff.json")
    assert code == 0 and out == ""
    assert len(json.loads((history.root / "out" / "diff.json").read_text())["flips"]) == 4
    assert cli("diff", "HEAD~1", "beliefs", "--exit-code")[0] == 1
    assert cli("diff", "HEAD", "beliefs", "--exit-code")[0] == 0
    code, _, err = cli("diff", "git:nope")
    assert code == 2 and "E802" in err


def test_output_is_deterministic(history):
    history.commit(BASE, "base")
    history.commit(edited(renamed(BASE, "q", "q2", alias=False), p=premise("OUT"), w=premise()), "x")
    outputs = {fmt: {render(history.diff(), fmt) for _ in range(3)} for fmt in ("text", "json", "markdown")}
    assert all(len(v) == 1 for v in outputs.values())


# ----------------------------------------------------------------------------------------
# Properties on random edits, and long chains
# ----------------------------------------------------------------------------------------

@st.composite
def edited_networks(draw):
    """(base, head): a random acyclic network and a random edit of it."""
    size = draw(st.integers(2, 12))
    specs = {}
    for k in range(size):
        earlier = [f"n{i}" for i in range(k)]
        if k == 0 or draw(st.integers(0, 3)) == 0:  # mostly derived: cascades need depth
            specs[f"n{k}"] = ("premise", draw(st.sampled_from(["IN", "IN", "OUT"])), (), ())
        else:
            specs[f"n{k}"] = ("derived", "IN",
                              tuple(draw(st.lists(st.sampled_from(earlier[-3:]), min_size=1, max_size=2))),
                              tuple(draw(st.lists(st.sampled_from(earlier), max_size=1))))
    head = dict(specs)
    for bid in draw(st.lists(st.sampled_from(sorted(specs)), min_size=1, max_size=3, unique=True)):
        kind, status, ante, out = specs[bid]
        actions = ["flip", "remove"] if kind == "premise" else ["remove", "drop-ante", "add-out"]
        action = draw(st.sampled_from(actions))
        if action == "flip":
            head[bid] = (kind, "OUT" if status == "IN" else "IN", ante, out)
        elif action == "remove":
            head.pop(bid)
        elif action == "drop-ante":
            head[bid] = (kind, status, ante[1:], out)
        else:
            head[bid] = (kind, status, ante, out + ("new",))
            head["new"] = ("premise", "IN", (), ())
    return specs, head


def _flip_stats(pair) -> Counter:
    diff = compare(side_of("b", evaluate(_built(pair[0]))), side_of("h", evaluate(_built(pair[1]))))
    return Counter({"flips": len(diff.flips), "out-to-in": sum(f.before == "OUT" for f in diff.flips),
                    "removal-caused": sum(bool(set(f.causes) & {e.id for e in diff.removed}) for f in diff.flips),
                    "two-causes": sum(len(f.causes) > 1 for f in diff.flips),
                    "long-path": sum(len(f.path) > 2 for f in diff.flips)})


def test_the_property_generator_reaches_the_interesting_cases():
    """Guard against a vacuous property: cascades, restorations, removals, several causes."""
    seen: Counter = Counter()

    @settings(max_examples=300, deadline=None, database=None, derandomize=True)  # a fixed sample: never flaky
    @given(edited_networks())
    def collect(pair):
        seen.update(_flip_stats(pair))

    collect()
    assert all(seen[k] >= 10 for k in ("flips", "out-to-in", "removal-caused", "two-causes", "long-path")), seen


def _built(specs: dict) -> Network:
    beliefs = {}
    for bid, (kind, status, ante, out) in specs.items():
        justs = () if kind == "premise" else (Justification("SL", ante, out),)
        beliefs[bid] = Belief(bid, f"claim {bid}", status, justifications=justs)
    return Network(dict(sorted(beliefs.items())))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(edited_networks())
def test_every_flip_is_a_status_change_with_a_cause_and_a_real_path(pair):
    base = side_of("base", evaluate(_built(pair[0])))
    head = side_of("head", evaluate(_built(pair[1])))
    diff = compare(base, head)
    changed = {i for i in head.beliefs if i in base.beliefs and base.status(i) != head.status(i)}
    assert {f.id for f in diff.flips} == changed
    edges = {(ref, b.id) for side in (base, head) for b in side.beliefs.values()
             for ref, _, _ in references(b)}
    for flip in diff.flips:
        assert flip.causes and flip.path[0] in flip.causes and flip.path[-1] == flip.id
        assert all(edge in edges for edge in zip(flip.path, flip.path[1:]))
        assert all(i in changed for i in flip.path[1:])


def test_a_long_chain_is_linear_and_its_paths_are_bounded():
    n = 20_000
    beliefs = {"c00000": Belief("c00000", "root")}
    for i in range(1, n):
        beliefs[f"c{i:05d}"] = Belief(f"c{i:05d}", "x", justifications=(Justification("SL", (f"c{i - 1:05d}",)),))
    head = dict(beliefs, c00000=Belief("c00000", "root", "OUT"))
    diff = compare(side_of("b", evaluate(Network(beliefs))), side_of("h", evaluate(Network(head))), limit=50)
    assert len(diff.flips) == n
    last = diff.flips[-1]
    assert last.id == f"c{n - 1:05d}" and last.causes == ("c00000",)
    assert len(last.path) == 50 and last.path[0] == "c00000" and last.elided == n - 50


# ----------------------------------------------------------------------------------------
# The changes page and redirect pages
# ----------------------------------------------------------------------------------------

def _with_diff():
    """RenderContext with a `diff` field (the pipeline adds it; a subclass until then)."""
    if "diff" in {f.name for f in fields(RenderContext)}:
        return RenderContext

    @dataclass(frozen=True, slots=True)
    class WithDiff(RenderContext):
        diff: object = None
    return WithDiff


def _site(tmp_path: Path, ctx) -> Path:
    out = tmp_path / "site"
    files = list(render_site(ctx))
    if changes.emit not in emitters():  # registered by the lead's integration
        files += [*changes.emit(ctx), *changes.emit_redirects(ctx)]
    for f in files:
        target = out / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        assert not target.exists(), f.path
        target.write_bytes(f.data)
    return out


def test_changes_page_lists_everything_with_working_links(history, tmp_path):
    history.commit(BASE, "base")
    head_net = edited(renamed(BASE, "q", "q2", alias=True), p=premise("OUT"),
                      w=premise(claim="<b>new</b>"), z=None)
    history.commit(head_net, "change")
    diff = history.diff()
    head = read_side("git:HEAD", cwd=history.root)
    ctx = _with_diff()(head.evaluation, SiteConfig(search=False), frozenset(head.beliefs), diff=diff)
    site = _site(tmp_path, ctx)
    page = (site / "changes" / "index.html").read_text(encoding="utf-8")
    assert broken_links(site) == []
    assert "4 status flips" in page and 'href="../belief/c/"' in page
    assert "&lt;b&gt;new&lt;/b&gt;" in page and "<b>new</b>" not in page
    assert "<code>z</code>" in page and "<code>q</code> →" in page
    redirect = (site / "belief" / "q" / "index.html").read_text(encoding="utf-8")
    assert 'url=../q2/' in redirect and (site / "belief" / "q" / "badge.svg").is_file()
    plain = RenderContext(head.evaluation, SiteConfig(), frozenset(head.beliefs))
    assert list(changes.emit(plain)) == []


def test_changes_page_hides_unpublished_beliefs(history):
    history.commit(BASE, "base")
    history.commit(edited(BASE, z=premise("IN", metadata={"access_tags": ["secret"]})),
                   "secret defeater")
    diff = history.diff()
    head = read_side("git:HEAD", cwd=history.root)
    visible = frozenset(i for i in head.beliefs if i != "z")
    ctx = _with_diff()(head.evaluation, SiteConfig(visible_to=()), visible, diff=diff)
    (page,) = changes.emit(ctx)
    html = page.data.decode()
    assert ">z<" not in html and "<code>z</code>" not in html
    assert "1 status flips" in html and "… → " in html  # x flips; its path starts hidden


def _changes_page(history, head_net: dict, config: SiteConfig = SiteConfig(search=False)) -> str:
    history.commit(BASE, "base")
    history.commit(head_net, "change")
    diff = history.diff()
    head = read_side("git:HEAD", cwd=history.root)
    ctx = RenderContext(head.evaluation, config, frozenset(head.beliefs), diff=diff, marks=diff.marks())
    (page,) = changes.emit(ctx)
    return page.data.decode()


def test_changes_page_shows_what_each_edit_changed_word_by_word(history):
    """The page named the changed fields ("claim") and nothing of what changed: a reviewer
    had to find the old text in the git diff. Now the claim shows word by word, escaped (a
    claim is untrusted), a justification's antecedents and a premise's stated status too."""
    page = _changes_page(history, edited(BASE, p=premise(claim="Claim of p, with <script>x()</script> added."),
                                         c=derived("b", "d"), z=premise("IN")))
    assert ('<li id="edited-p">' in page and "<dt>claim</dt>" in page
            and '<div class="diff-line">Claim of p<ins>, with &lt;script&gt;x()&lt;/script&gt; added</ins>.</div>'
            in page), page
    assert "<script>x()" not in page
    assert '<div class="diff-line">SL — reason 1: b, <del>q</del><ins>d</ins></div>' in page
    assert '<li id="edited-z">' in page and '<dt>status</dt>\n<dd><div class="diff-line"><del>OUT</del><ins>IN</ins>' in page
    assert '<tr id="flip-x"' in page  # z's flip turns x OUT: the belief page's tag links here


def test_changes_page_shows_bidi_controls_in_what_it_lists_as_marks(history):
    """A bidi override made an edit display other than it reads: "\u202eELBATS TON\u202c" reads
    "ELBATS TON" to search, exports and LLMs, yet a reviewer saw "NOT STABLE". The PR comment
    already replaced such characters; the changes page (a PR's preview) now shows each as a
    mark, in the word diff and in the claims it echoes."""
    hostile = "The cache is \u202eELBATS TON\u202c, \u2066isolated\u2069 \u200fhere."
    page = _changes_page(history, edited(BASE, p=premise(claim=hostile), w=premise(claim=hostile)))
    shown = _Text()
    shown.feed(page)
    text = "".join(shown.parts)
    assert "ELBATS TON" in text and "<ins>" in page and '<li id="added-w">' in page
    assert not re.search("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]", text), ascii(text)
    for point, name in (("202E", "right-to-left override"), ("202C", "pop directional formatting"),
                        ("2066", "left-to-right isolate"), ("2069", "pop directional isolate"),
                        ("200F", "right-to-left mark")):
        mark = f'<span class="hidden-char" title="{name}">U+{point}</span>'
        assert page.count(mark) == 2, point  # in p's word diff and in w's echoed claim


class _Text(HTMLParser):
    """The text a page displays (not its attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def test_changes_page_details_the_first_edits_and_names_the_fields_of_the_rest(history, monkeypatch):
    monkeypatch.setattr(changes, "DETAILED", 1)
    page = _changes_page(history, edited(BASE, p=premise(claim="New p."), q=premise(claim="New q.")))
    assert page.count('<dl class="field-diffs">') == 1 and "<del>Claim of</del><ins>New</ins> p." in page
    assert '<li id="edited-q">' in page and "— claim" in page
    assert "shown word by word for the first 1 renamed or edited beliefs; 1 more name their" in page


def test_the_note_on_edits_not_detailed_counts_renames_too(history, monkeypatch):
    """It sat in the Edited section: renames past the first, with no edit, went unsaid."""
    monkeypatch.setattr(changes, "DETAILED", 1)
    moved = renamed(renamed(BASE, "p", "p2", alias=True), "q", "q2", alias=True)
    moved = edited(moved, p2={**moved["p2"], "claim": "New p."}, q2={**moved["q2"], "claim": "New q."})
    page = _changes_page(history, moved)
    assert page.count('<dl class="field-diffs">') == 1 and page.count('<li id="renamed-') == 2
    assert page.count('<li id="edited-') == 4  # a, c, d and x cite them: their justifications changed
    assert "for the first 1 renamed or edited beliefs; 5 more name their changed fields only" in page


def test_a_removed_blank_line_shows(history):
    _changes_page(history, edited(BASE, p=premise(claim="First.\n\nSecond to stabilize it.")))
    history.commit(edited(BASE, p=premise(claim="First.\nSecond so that it holds.")), "joined")
    diff = history.diff()
    head = read_side("git:HEAD", cwd=history.root)
    (page,) = changes.emit(RenderContext(head.evaluation, SiteConfig(search=False), frozenset(head.beliefs),
                                         diff=diff, marks=diff.marks()))
    html = page.data.decode()
    assert ('<div class="diff-line">First.</div><div class="diff-line"><del class="blank">(blank line)</del></div>'
            '<div class="diff-line">Second <del>to stabilize</del><ins>so that</ins> it<ins> holds</ins>.</div>') in html


def test_a_partial_site_names_changed_fields_without_their_values(history):
    """An old value may cite or tag a belief the site must not show: fields only."""
    page = _changes_page(history, edited(BASE, p=premise(claim="New p.")), SiteConfig(visible_to=()))
    assert '<li id="edited-p">' in page and "— claim" in page
    assert "field-diffs" not in page and "Claim of p" not in page and "more name" not in page


def test_a_change_tag_links_to_its_entry_on_the_changes_page(history, cli, monkeypatch, tmp_path):
    history.commit(BASE, "base")
    history.commit(edited(BASE, q=premise(claim="Reworded q."), z=premise("IN")), "change")
    monkeypatch.chdir(history.root)
    code, _, err = cli("build", "beliefs", "-o", tmp_path / "site", "--no-search", "--no-cache",
                       "--diff-base", "HEAD~1", "-q")
    assert code == 0, err
    site = tmp_path / "site"
    page = (site / "changes" / "index.html").read_text(encoding="utf-8")
    index = (site / "index.html").read_text(encoding="utf-8")
    for belief, anchor in (("q", "edited-q"), ("z", "edited-z"), ("x", "flip-x")):
        html = (site / "belief" / belief / "index.html").read_text(encoding="utf-8")
        assert f'href="../../changes/#{anchor}"' in html and f'id="{anchor}"' in page, belief
        assert f'href="changes/#{anchor}"' in index, belief  # the index's marks link there too


# ----------------------------------------------------------------------------------------
# A shared real network: the flips of a retraction == ftl-reasons' what-if retract
# ----------------------------------------------------------------------------------------

@pytest.mark.parametrize("network_path", network_files(), indirect=True)
def test_retracting_a_premise_equals_the_library_what_if(network_path, tmp_path, cli):
    from .test_oracle import KNOWN_STALE, library_what_if
    ev = read_side(str(network_path)).evaluation
    premises = sorted(i for i, b in ev.network.beliefs.items() if b.is_premise and ev.status[i] == "IN")
    size = {p: impact(ev, p, limit=100_000, budget=10**9).count for p in premises}
    chosen = max(premises, key=lambda p: (size[p], p))
    assert size[chosen] >= 10, "a premise with many dependents"
    repo = History(tmp_path / "repo")
    assert cli("import", network_path, "-o", repo.root / "beliefs")[0] == 0
    git(repo.root, "add", "-A")
    git(repo.root, "commit", "-q", "-m", "import")
    doc = repo.root / "beliefs" / f"{chosen}.md"
    doc.write_text(doc.read_text(encoding="utf-8").replace("**IN** · premise", "**OUT** · premise", 1),
                   encoding="utf-8")
    git(repo.root, "commit", "-q", "-am", f"retract {chosen}")
    diff = repo.diff()
    lib = library_what_if(network_path, [chosen], tmp_path)["premises"][chosen]
    stale = set(KNOWN_STALE.get(network_path.name, {}).get(chosen, []))
    assert {f.id for f in diff.flips} - {chosen} == set(lib["whatif"]) - stale
    assert [e.id for e in diff.edited] == [chosen] and not (diff.added or diff.removed or diff.renamed)
    head = read_side("git:HEAD", cwd=repo.root)
    for flip in diff.flips:
        assert flip.causes == (chosen,) and flip.path[0] == chosen and flip.path[-1] == flip.id
        for parent, child in zip(flip.path, flip.path[1:]):
            assert parent in {r for r, _, _ in references(head.beliefs[child])}


def test_a_diff_base_that_names_nothing_is_a_usage_error_for_build_as_for_check(cli, tmp_path):
    """check --base exited 2 and build --diff-base 1 on the same missing base."""
    missing = tmp_path / "no-such-base"
    code, _, err = cli("check", EXAMPLE, "--base", missing)
    assert code == 2 and " E802 " in err
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--no-search", "--diff-base", missing)
    assert code == 2 and " E802 " in err and not (tmp_path / "site").exists()


def test_a_revision_read_from_a_sub_folder_of_the_repository_is_read_whole(history, cli, monkeypatch):
    """git ls-tree lists only what lies under the working folder: run from inside the
    repository's beliefs/ (a mkdocs.yml not at its root), the base came back empty, so a
    deleted belief passed check --base and diff called every belief added."""
    history.commit(BASE, "base")
    (history.root / "beliefs" / "d.md").unlink()
    monkeypatch.chdir(history.root / "beliefs")
    code, _, err = cli("check", ".", "--base", "HEAD")
    assert code == 1 and "E410 'd'" in err, err
    code, out, _ = cli("diff", "git:HEAD:beliefs", ".")
    assert code == 0 and "0 added, 1 removed" in out, out


def test_a_belief_whose_file_is_there_but_unreadable_is_not_e410(history, cli, monkeypatch):
    """Broken front matter made check --base say the belief was deleted ("retract it instead
    of deleting it") beside the E105 that says what is wrong."""
    history.commit(BASE, "base")
    doc = history.root / "beliefs" / "d.md"
    doc.write_text("---\nnot: [closed\n---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(history.root)
    code, _, err = cli("check", "beliefs", "--base", "HEAD")
    assert code == 1 and "beliefs/d.md:3: E105" in err and "E410" not in err, err
    doc.unlink()
    code, _, err = cli("check", "beliefs", "--base", "HEAD")
    assert code == 1 and "E410 'd'" in err, err


def test_a_side_with_errors_is_said_in_every_report(history, cli, monkeypatch):
    """A document that could not be read showed in the pull-request comment as removed, with
    nothing there (only stderr) saying the head had errors."""
    history.commit(BASE, "base")
    doc = history.root / "beliefs" / "d.md"
    doc.write_text("---\nnot: [closed\n---\n" + doc.read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(history.root)
    code, out, _ = cli("diff", "git:HEAD:beliefs", "beliefs", "--format", "markdown")
    assert code == 0 and "**Warning:** the head has 1 error: beliefs that could not be read are missing" in out
    code, out, _ = cli("diff", "git:HEAD:beliefs", "beliefs", "--format", "json")
    assert json.loads(out)["errors"] == {"base": 0, "head": 1}
    code, out, _ = cli("diff", "git:HEAD:beliefs", "beliefs")
    assert "warning: beliefs has 1 error: beliefs that could not be read are missing" in out
    code, out, _ = cli("diff", "git:HEAD:beliefs", "git:HEAD:beliefs", "--format", "json")
    assert json.loads(out)["errors"] == {"base": 0, "head": 0}


def test_a_build_does_not_import_the_comparison():
    """A build needs the diff package's aliases alone: comparing two sides (every record
    kind, git) is imported by `diff`, `check --base` and `build --diff-base` only."""
    code = ("import sys, site_builder.cli, site_builder.diff as d; "
            "print(sorted(m for m in sys.modules if m in ('site_builder.diff.compare', 'site_builder.diff.sides'))); "
            "d.compare; print(sorted(m for m in sys.modules if m == 'site_builder.diff.compare'))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == ["[]", "['site_builder.diff.compare']"]
