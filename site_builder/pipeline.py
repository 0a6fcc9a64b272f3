"""The one place the stages are chained: load -> parse -> evaluate -> (check | fmt | export)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .checks import check_documents
from .diagnostics import Diagnostic
from .evaluate import DEFAULT_LIMIT, Evaluation, evaluate
from .fmt import encode, format_document
from .ids import document_path
from .load import load
from .parse import Parsed, parse
from .serialize import write_document, write_network_json, write_project

__all__ = ["Checked", "check", "formatted", "imported", "exported"]


@dataclass(frozen=True, slots=True)
class Checked:
    """A source read and evaluated, with every diagnostic."""

    parsed: Parsed
    evaluation: Evaluation
    diagnostics: tuple[Diagnostic, ...]


def check(source: str | Path, limit: int = DEFAULT_LIMIT) -> Checked:
    """Read and evaluate a source; collect all diagnostics (never raises on content)."""
    sources = load(source)
    parsed = parse(sources)
    evaluation = evaluate(parsed.network, limit)
    found = (*parsed.diagnostics, *evaluation.diagnostics,
             *check_documents(parsed.documents, evaluation))
    return Checked(parsed, evaluation, tuple(sorted(set(found), key=Diagnostic.sort_key)))


def formatted(checked: Checked) -> list[tuple[Path, bytes, bytes]]:
    """(path, old bytes, new bytes) for every document whose derived content is stale."""
    changes = []
    for doc in checked.parsed.documents:
        old = encode(doc, doc.source.text)
        new = encode(doc, format_document(doc, checked.evaluation))
        if new != old:
            changes.append((Path(doc.source.path), old, new))
    return changes


def imported(checked: Checked, out_dir: Path) -> list[tuple[Path, bytes]]:
    """Documents (and `_project.yaml`) for every belief of a network.json or beliefs.md."""
    ev, network = checked.evaluation, checked.parsed.network
    files = [(out_dir / "_project.yaml", write_project(network).encode("utf-8"))]
    for belief in network.beliefs.values():
        text = write_document(belief, ev)
        files.append((out_dir / document_path(belief.id), text.encode("utf-8")))
    return files


def exported(checked: Checked) -> bytes:
    """The evaluated network as network.json bytes."""
    return write_network_json(checked.parsed.network, checked.evaluation).encode("utf-8")

