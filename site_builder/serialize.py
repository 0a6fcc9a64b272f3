"""Write a network back out: Markdown belief documents, `_project.yaml`, network.json.

Inverse of parse: parse(write(belief)) == belief for every belief. The body says what it
can say exactly; the rest goes to front matter (spec §3.3), checked by re-reading.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import PurePosixPath
from typing import Any

from . import __version__
from .checks import echo_of, kind_of
from .evaluate import Evaluation
from .evaluate.truth import supporting
from .ids import is_valid_id
from .load import CONTROL, SourceFile
from .model import DEFAULT_NODE_FIELDS, IN, NODE_FIELDS, OUT, Belief, Justification, Network
from .parse import grammar as g
from .parse.document import parse_document
from .parse.frontmatter import dump_yaml

__all__ = ["write_document", "write_project", "write_network_json"]

_DATE_ORDER = ("Created", "Updated", "Reviewed", "Verified", "Retracted")


def _one_line(value: str) -> bool:
    """Can stand in a body line as it is: one line, no outer space, no control character (E104)."""
    return bool(value) and "\n" not in value and value == value.strip() and not CONTROL.search(value)


def _bare(stamp: str) -> bool:
    """A stamp the dates line holds: no space, no control character, and a digit first (any
    other goes in front matter: the body would say W208 of it)."""
    return stamp[:1].isdigit() and not any(c.isspace() for c in stamp) and not CONTROL.search(stamp)


def _status_line(belief: Belief, ev: Evaluation) -> str:
    value = belief.declared if belief.is_premise else ev.value(belief.id)
    line = f"**{value}** · {kind_of(belief)}"
    if not belief.is_premise:
        line += f" (depth {ev.depth[belief.id]})"
    if _one_line(belief.source):
        line += f" — {belief.source}"
    return line


def _dates_line(belief: Belief) -> str:
    parts = []
    for word in _DATE_ORDER:
        stamp = getattr(belief, g.DATE_FIELDS[word])
        if stamp and _bare(stamp):
            parts.append(f"{word} {stamp}")
    return " · ".join(parts)


def _item(ref: str, ev: Evaluation, tag: str | None = None) -> str:
    target = ev.network.beliefs.get(ref)
    if target is None:
        return f"- {tag or '?'} {ref}"
    return f"- {ev.value(ref)} {ref} — {echo_of(target)}"


def _body_justifications(belief: Belief, ev: Evaluation) -> list[str]:
    lines = ["## Justifications", ""]
    if len(belief.justifications) > 1:
        lines += [f"This belief has {len(belief.justifications)} justifications — it is IN if "
                  "any one holds.", ""]
    for j in belief.justifications:
        lines += [f"### {j.type}" + (f" — {j.label}" if j.label else ""), ""]
        for header, ids, tags in (("Antecedents (all must be IN):", j.antecedents, j.ante_tags),
                                  ("Unless (all must be OUT):", j.outlist, j.out_tags)):
            if ids:
                lines += [header, ""]
                lines += [_item(r, ev, tags[k] if k < len(tags) else None) for k, r in enumerate(ids)]
                lines.append("")
    return lines


def _justifications_fit_body(justs: tuple[Justification, ...]) -> bool:
    return all(
        g.JHEADER.fullmatch(j.type) and not j.extra and (_one_line(j.label) or not j.label)
        and all(is_valid_id(r) for r in j.antecedents + j.outlist)
        for j in justs)


def _front(belief: Belief, ev: Evaluation, body_text: bool) -> dict[str, Any]:
    """What the body cannot carry, in front matter key order."""
    front: dict[str, Any] = {}
    if not belief.is_premise and ev.is_pinned(belief.id) and not (
            belief.retract_reason or belief.retracted_at):
        front["retracted"] = True
    if not body_text:
        front["text"] = belief.text
        if belief.summary:
            front["summary"] = belief.summary
    if belief.source and not _one_line(belief.source):
        front["source"] = belief.source
    for key in ("source_url", "source_hash", "date"):
        if getattr(belief, key):
            front[key] = getattr(belief, key)
    for word in _DATE_ORDER:
        key = g.DATE_FIELDS[word]
        stamp = getattr(belief, key)
        if stamp and not _bare(stamp):
            front[key] = stamp
    if belief.json_fields is not None:
        front["json_fields"] = list(belief.json_fields)
    if belief.justifications and not (body_text and _justifications_fit_body(belief.justifications)):
        front["justifications"] = [_justification_json(j) for j in belief.justifications]
    metadata = dict(belief.metadata)
    if _reason_in_body(belief, ev) and list(metadata) == ["retract_reason"]:
        metadata = {}
    if metadata:
        front["metadata"] = metadata
    if belief.extra:
        front["extra"] = dict(belief.extra)
    return front


def _reason_in_body(belief: Belief, ev: Evaluation) -> bool:
    reason = belief.metadata.get("retract_reason")
    return ev.value(belief.id) == OUT and isinstance(reason, str) and _one_line(reason) and bool(g.REASON.fullmatch(
        f"**Reason OUT:** {reason}"))


def _compose(belief: Belief, ev: Evaluation, body_text: bool) -> str:
    front = _front(belief, ev, body_text)
    lines: list[str] = []
    if front:
        lines += ["---", *dump_yaml(front)[:-1].split("\n"), "---"]  # drop only the final LF
    lines += [f"# {belief.id}", "", _status_line(belief, ev), ""]
    if _dates_line(belief):
        lines += [_dates_line(belief), ""]
    if _reason_in_body(belief, ev):
        lines += [f"**Reason OUT:** {belief.retract_reason}", ""]
    if body_text:
        lines += [belief.text, ""]
        if belief.summary:
            lines += ["## Summary", "", belief.summary, ""]
        if belief.justifications and "justifications" not in front:
            lines += _body_justifications(belief, ev)
    dependents = sorted({d.id for d in ev.dependents.get(belief.id, ())})
    if dependents:
        lines += ["## Dependents", "", g.DEPENDENTS_SENTENCE, "", *(_item(d, ev) for d in dependents), ""]
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n"


def _same(a: Belief | None, b: Belief) -> bool:
    if a is None:
        return False
    keep = dict(path="", line=0)
    return replace(a, **keep) == replace(b, **keep, retracted=a.retracted)


def write_document(belief: Belief, ev: Evaluation) -> str:
    """A new Markdown document for `belief`, lossless (front matter where needed)."""
    relative = PurePosixPath(belief.id.replace(":", "/") + ".md")
    for body_text in (True, False):
        text = _compose(belief, ev, body_text)
        if body_text and (CONTROL.search(text) or not belief.text.strip()):
            continue  # front matter escapes a control character and states an empty claim
        doc = parse_document(SourceFile(str(relative), relative, text))
        if _same(doc.belief, belief) and not any(d.severity == "error" for d in doc.diagnostics):
            return text  # (a claim such as "IN premise" reads back the same, yet is E205 there)
    return text  # the front-matter form carries every field verbatim


def _justification_json(j: Justification) -> dict[str, Any]:
    return {"type": j.type, "antecedents": list(j.antecedents), "outlist": list(j.outlist),
            "label": j.label, **j.extra}


def write_project(network: Network) -> str:
    """`_project.yaml`: meta, repos, nogoods and the network.json field set."""
    data: dict[str, Any] = {}
    if network.meta is not None:
        data["meta"] = dict(network.meta)
    data["repos"] = dict(network.repos)
    data["nogoods"] = [_nogood_json(n) for n in network.nogoods]
    data["node_fields"] = list(network.node_fields)
    if network.extra:
        data["extra"] = dict(network.extra)
    return dump_yaml(data)


def _nogood_json(nogood) -> dict[str, Any]:
    return {"id": nogood.id, "nodes": list(nogood.nodes), "discovered": nogood.discovered,
            "resolution": nogood.resolution, **nogood.extra}


def _node_json(belief: Belief, ev: Evaluation, default: tuple[str, ...]) -> dict[str, Any]:
    keys = belief.json_fields if belief.json_fields is not None else default
    values = {
        "text": belief.text, "truth_value": ev.value(belief.id),
        "justifications": [_justification_json(j) for j in belief.justifications],
        "metadata": _exported_metadata(belief, ev),
        **{k: getattr(belief, k) for k in NODE_FIELDS if k not in
           ("text", "truth_value", "justifications", "metadata")},
    }
    node = {k: values[k] for k in NODE_FIELDS if k in keys}
    node.update(belief.extra)
    return node


def _exported_metadata(belief: Belief, ev: Evaluation) -> dict[str, Any]:
    """Verbatim metadata; a pin that the export would lose becomes a `retract_reason`.

    A belief stored OUT while a justification holds re-pins itself on import (§3.4), so
    only a pinned belief with no valid justification and no marker needs one.
    """
    metadata = dict(belief.metadata)
    if (not belief.is_premise and ev.is_pinned(belief.id) and not belief.retract_reason
            and not belief.retracted_at
            and supporting(belief, ev.value, ev.network.beliefs) is None):
        metadata["retract_reason"] = "retracted"
    return metadata


def write_network_json(network: Network, ev: Evaluation) -> str:
    """The evaluated network as ftl-reasons network.json (sorted ids, 2-space indent)."""
    data: dict[str, Any] = {}
    if network.meta is not None:
        meta = dict(network.meta) or {"schema_version": "1.0", "node_count": 0, "generator": ""}
        if "node_count" in meta:
            meta["node_count"] = len(network.beliefs)
        if "generator" in meta:
            meta["generator"] = f"belief-site/{__version__}"
        data["meta"] = meta
    default = network.node_fields or DEFAULT_NODE_FIELDS
    data["nodes"] = {i: _node_json(b, ev, default) for i, b in sorted(network.beliefs.items())}
    data["nogoods"] = [_nogood_json(n) for n in network.nogoods]
    data["repos"] = dict(network.repos)
    data.update(network.extra)
    return json.dumps(data, indent=2)
