"""Parse: decoded sources -> one Network plus the per-document layouts fmt needs."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

from ..diagnostics import Diagnostic
from ..load import BELIEFS_MD, NETWORK_JSON, SourceFile, Sources
from ..model import NODE_FIELDS, Network, Nogood
from .document import Document, Facts, parse_document
from .frontmatter import YamlProblem, load_yaml

if TYPE_CHECKING:
    from .network_json import NodesRead

__all__ = ["Parsed", "parse", "Facts"]


@dataclass(frozen=True, slots=True)
class Parsed:
    """The network read from a source, with every diagnostic found on the way."""

    network: Network
    documents: tuple[Document, ...]
    """Documents parsed by this call, by sorted path, with the line layout fmt rewrites:
    all of them unless `known` facts were given (empty for network.json and beliefs.md)."""
    diagnostics: tuple[Diagnostic, ...]
    facts: tuple[Facts, ...] = ()
    """What checks and builds read of every document, by sorted path."""


def parse(sources: Sources, known: Callable[[SourceFile], Facts | None] | None = None,
          nodes: NodesRead | None = None) -> Parsed:
    """Sources -> Parsed; never raises on content. `known(file)` may give the facts of a
    document read before (the build's cache), which is then not parsed again; `nodes`, the
    nodes of the last network.json read (network_json.NodesRead)."""
    found = list(sources.diagnostics)
    if sources.kind == NETWORK_JSON:
        from .network_json import parse_network_json
        network, problems = _single(sources, partial(parse_network_json, last=nodes))
        return Parsed(network, (), tuple(found + problems))
    if sources.kind == BELIEFS_MD:
        from .beliefs_md import parse_beliefs_md
        network, problems = _single(sources, parse_beliefs_md)
        return Parsed(network, (), tuple(found + problems))
    documents, facts = [], []
    for file in sources.files:
        read = known(file) if known is not None else None
        if read is None:
            documents.append(parse_document(file))
            read = documents[-1].facts()
        facts.append(read)
    beliefs: dict[str, Any] = {}
    for doc in facts:
        found.extend(doc.diagnostics)
        belief = doc.belief
        if belief is None:
            continue
        if belief.id in beliefs:
            first = beliefs[belief.id]
            found.append(Diagnostic(belief.path, belief.line, "E204",
                                    f"id {belief.id!r} is also defined in {first.path}",
                                    f"{first.path} is used; rename or delete one of them"))
            found.append(Diagnostic(first.path, first.line, "E204",
                                    f"id {belief.id!r} is also defined in {belief.path}"))
            continue
        beliefs[belief.id] = belief
    project = _project(sources.project, found)
    origin = sources.project.path if sources.project else sources.root
    network = Network(dict(sorted(beliefs.items())), origin=origin, **project)
    return Parsed(network, tuple(documents), tuple(found), tuple(facts))


def _single(sources: Sources, reader) -> tuple[Network, list[Diagnostic]]:
    if not sources.files:
        return Network({}), []
    network, problems = reader(sources.files[0])
    return network or Network({}), problems


def _project(source: SourceFile | None, found: list[Diagnostic]) -> dict[str, Any]:
    """`_project.yaml` -> Network keyword arguments (meta, repos, nogoods, node_fields)."""
    if source is None:
        return {"meta": {}}  # no project file: export writes a fresh meta
    try:
        data = load_yaml(source.text)
    except YamlProblem as exc:
        found.append(Diagnostic(source.path, exc.line, "E105", f"invalid YAML: {exc}"))
        return {}
    if not isinstance(data, dict):
        found.append(Diagnostic(source.path, 1, "E105", "_project.yaml must be a map"))
        return {}
    out: dict[str, Any] = {}
    for key, value in data.items():
        problem = _project_key(key, value, out, source.text)
        if problem:
            found.append(Diagnostic(source.path, _line_of(source.text, key), "E106", problem))
    return out


def _project_key(key: str, value: Any, out: dict[str, Any], text: str) -> str | None:
    if key == "meta" and isinstance(value, dict):
        out["meta"] = value
    elif key == "repos" and isinstance(value, dict):
        out["repos"] = value
    elif key == "extra" and isinstance(value, dict):
        out["extra"] = value
    elif key == "node_fields" and isinstance(value, list) and set(value) <= set(NODE_FIELDS):
        out["node_fields"] = tuple(value)
    elif key == "nogoods" and isinstance(value, list) and all(
            isinstance(n, dict) and isinstance(n.get("id"), str) for n in value):
        out["nogoods"] = tuple(
            Nogood(n["id"], tuple(n.get("nodes", ())), n.get("discovered", ""),
                   n.get("resolution", ""),
                   {k: v for k, v in n.items() if k not in ("id", "nodes", "discovered", "resolution")},
                   _nogood_line(text, n["id"]))
            for n in value)
    else:
        return (f"unknown or malformed key {key!r} in _project.yaml "
                "(expected meta: map, repos: map, nogoods: list, node_fields: list)")
    return None


def _nogood_line(text: str, nogood_id: str) -> int:
    for number, line in enumerate(text.split("\n"), 1):
        if line.strip().lstrip("- ").startswith("id:") and nogood_id in line:
            return number
    return 0


def _line_of(text: str, key: str) -> int:
    for number, line in enumerate(text.split("\n"), 1):
        if line.startswith(f"{key}:"):
            return number
    return 1
