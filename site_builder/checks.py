"""Checks of what documents state against what evaluation computes (W402, W503, W504), and of
metadata that publishing reads (E507)."""

from __future__ import annotations

from dataclasses import replace
from typing import Iterable

from .diagnostics import Diagnostic
from .evaluate import Evaluation
from .evaluate.visibility import own_tags
from .load import CONTROL
from .model import Belief
from .parse.document import Facts

__all__ = ["at_status_lines", "check_documents", "echo_of", "kind_of"]


def kind_of(belief: Belief) -> str:
    """`premise` or `derived` (§1.1)."""
    return "premise" if belief.is_premise else "derived"


def echo_of(belief: Belief) -> str:
    """The claim as echoed after an item: one line, each control character (which no document
    may hold: E104) as U+FFFD."""
    text = belief.text
    if CONTROL.search(text):
        text = CONTROL.sub("\ufffd", text)
    if "\n" not in text:  # most claims: the same as the join below
        return text.strip()
    return " ".join(line.strip() for line in text.split("\n") if line.strip())


def check_documents(documents: Iterable[Facts], ev: Evaluation) -> list[Diagnostic]:
    """Stale derived content (W503), unverified dependents (W402), metadata refs (W504),
    malformed access tags (E507)."""
    found: list[Diagnostic] = []
    beliefs = ev.network.beliefs
    echoes: dict[str, str] = {}  # id -> echo_of: each belief is cited by several documents
    for doc in documents:
        belief = doc.belief
        if belief is None or beliefs.get(belief.id) is not belief:
            continue
        found += _status(doc, belief, ev)
        found += _items(doc, belief, ev, echoes)
        found += _listed(doc, belief, ev, echoes)
    for belief in beliefs.values():
        if not belief.metadata:  # most beliefs: nothing to cross-check, no access tags
            continue
        found += _metadata_refs(belief, beliefs)
        if own_tags(belief) is None:
            found.append(Diagnostic(
                belief.path, belief.line, "E507",
                f"{belief.id!r}: metadata access_tags is {type(belief.metadata['access_tags']).__name__}, "
                "not a list of strings", "a site built with visible_to leaves this belief, and "
                "every belief resting on it, out"))
    return found


STATUS_CODES = ("W501", "W502")
"""The evaluation's diagnostics of a belief's stated status against its computed one."""


def at_status_lines(diagnostics: Iterable[Diagnostic], documents: Iterable[Facts]) -> list[Diagnostic]:
    """W501 and W502 at the document's status line rather than its title: the line they are
    about, which fmt rewrites, and where a pull request's annotation should point."""
    lines = {(d.belief.path, d.belief.line): d.stated.status_line
             for d in documents if d.belief is not None and d.stated.status_line}
    return [replace(x, line=lines.get((x.path, x.line), x.line)) if x.code in STATUS_CODES else x
            for x in diagnostics]


def _stale(doc: Facts, line: int, message: str) -> Diagnostic:
    return Diagnostic(doc.path, line, "W503", f"stale derived content: {message}",
                      "run `belief-site fmt` to refresh it")


def _status(doc: Facts, belief: Belief, ev: Evaluation) -> list[Diagnostic]:
    stated, out = doc.stated, []
    if stated.kind and stated.kind != kind_of(belief):
        out.append(_stale(doc, stated.status_line, f"says {stated.kind}, is {kind_of(belief)}"))
    depth = ev.depth[belief.id]
    if stated.depth is not None and stated.depth != depth:
        out.append(_stale(doc, stated.status_line, f"says depth {stated.depth}, is {depth}"))
    if stated.count is not None and stated.count != len(belief.justifications):
        out.append(_stale(doc, stated.count_line, f"says {stated.count} justifications, "
                          f"has {len(belief.justifications)}"))
    return out


def _item_problems(doc: Facts, ref: str, tag: str | None, echo: str | None, line: int, ev: Evaluation,
                   echoes: dict[str, str]) -> list[Diagnostic]:
    """An item citing `ref` on `line`, with the tag and claim echo it states (None: none)."""
    target = ev.network.beliefs.get(ref)
    if target is None:
        return []
    out = []
    if tag is not None and tag != ev.value(ref):
        out.append(_stale(doc, line, f"{ref} is tagged {tag}, is {ev.value(ref)}"))
    if echo is not None:
        expected = echoes.get(ref)
        if expected is None:
            expected = echoes[ref] = echo_of(target)
        if echo.strip() != expected:
            out.append(_stale(doc, line, f"the claim echoed for {ref} differs from its text"))
    return out


def _items(doc: Facts, belief: Belief, ev: Evaluation, echoes: dict[str, str]) -> list[Diagnostic]:
    out = []
    stated = doc.echoes
    for j in belief.justifications:
        pairs = zip(j.antecedents + j.outlist, j.ante_lines + j.out_lines, j.ante_tags + j.out_tags)
        for ref, line, tag in pairs:
            out += _item_problems(doc, ref, tag, stated.get(line), line, ev, echoes)
    return out


def _listed(doc: Facts, belief: Belief, ev: Evaluation, echoes: dict[str, str]) -> list[Diagnostic]:
    """Dependents and Challenges sections against the computed dependents."""
    out = []
    beliefs = ev.network.beliefs
    for name, items in (("Dependents", doc.stated.dependents), ("Challenges", doc.stated.challenges)):
        for item in items or ():
            if item.ref not in beliefs:
                out.append(Diagnostic(doc.path, item.line, "W402",
                                      f"{name} lists {item.ref!r}, which is not in the network "
                                      "(kept as an unverified entry)"))
            else:
                out += _item_problems(doc, item.ref, item.tag, item.echo, item.line, ev, echoes)
    if doc.stated.dependents is not None:
        stated = {i.ref for i in doc.stated.dependents if i.ref in beliefs}
        computed = {d.id for d in ev.dependents[belief.id]}
        line = doc.stated.dependents[0].line if doc.stated.dependents else (doc.dependents_anchor or 0) + 1
        for missing in sorted(computed - stated):
            out.append(_stale(doc, line, f"Dependents lacks {missing}"))
        for extra in sorted(stated - computed):
            out.append(_stale(doc, line, f"Dependents lists {extra}, which does not depend on it"))
    return out


_PAIRS = (("superseded_by", "supersedes"), ("summarized_by", "summarizes"),
          ("challenge_target", "challenges"))


def _metadata_refs(belief: Belief, beliefs) -> list[Diagnostic]:
    """W504: metadata cross-references that the other side does not confirm (§1.3)."""
    out, meta = [], belief.metadata

    def problem(message: str) -> None:
        out.append(Diagnostic(belief.path, belief.line, "W504", f"{belief.id!r}: {message}"))

    for key, back in _PAIRS:
        target = meta.get(key)
        for ref in target if isinstance(target, list) else [target] if target else []:
            other = beliefs.get(ref) if isinstance(ref, str) else None
            if other is None:
                problem(f"metadata {key} names {ref!r}, which is not in the network")
                continue
            listed = other.metadata.get(back)
            if belief.id not in (listed if isinstance(listed, list) else [listed]):
                problem(f"metadata {key} names {ref!r}, whose {back} does not name it back")
    node, index = meta.get("defeats_node"), meta.get("defeats_justification")
    if node is not None:
        target = beliefs.get(node) if isinstance(node, str) else None
        if target is None or not isinstance(index, int) or not 0 <= index < len(target.justifications):
            problem(f"defeats_node/defeats_justification ({node!r}, {index!r}) name no justification")
        elif belief.id not in target.justifications[index].outlist:
            problem(f"defeats {node!r} justification {index} but is not in its outlist")
    return out
