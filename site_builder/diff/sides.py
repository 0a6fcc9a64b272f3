"""One side of a diff: a source named on the command line, read and evaluated.

A side is a documents folder, a network.json, or a git revision of the current repository:
`git:REV` (the configured source as it is in REV) or `git:REV:PATH`. A bare revision such
as `origin/main` is accepted where no file of that name exists, as `git diff` does.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..config import printable
from ..diagnostics import Diagnostic
from ..evaluate import Evaluation, evaluate
from ..load import DOCUMENTS, Sources, load
from ..model import Belief
from ..parse import parse
from .gitsource import GitProblem, NotInRevision, git_sources, is_revision, repository_path

__all__ = ["Side", "side_of", "read_side", "GIT_PREFIX"]

GIT_PREFIX = "git:"


@dataclass(frozen=True, slots=True)
class Side:
    """A network as evaluated, with the name it was given and its diagnostics."""

    label: str
    evaluation: Evaluation
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def beliefs(self) -> Mapping[str, Belief]:
        """Every belief of this side, by id."""
        return self.evaluation.network.beliefs

    def status(self, belief_id: str) -> str:
        """Computed IN/OUT."""
        return self.evaluation.value(belief_id)


def side_of(label: str, evaluation: Evaluation, diagnostics=()) -> Side:
    """A side from an evaluation the caller already has (the build's head network)."""
    return Side(label, evaluation, tuple(diagnostics))


def _split_git(spec: str) -> tuple[str, str | None]:
    """`git:REV[:PATH]` -> (REV, PATH or None). REV itself never contains ':' here."""
    rest = spec[len(GIT_PREFIX):]
    rev, colon, path = rest.partition(":")
    return rev, (path if colon else None)


def _git_path(path: str | None, default_source: Path, cwd: Path | None) -> str:
    """PATH as git reads it (from the repository root; `./` or `../` from the working folder)."""
    if path is None:
        return repository_path(default_source, cwd)
    if path.startswith(("./", "../")) or path in (".", ".."):
        return repository_path(Path(path), cwd)
    return path


def _sources(spec: str, default_source: Path, cwd: Path | None) -> Sources:
    if spec.startswith(GIT_PREFIX):
        rev, path = _split_git(spec)
        return git_sources(rev, _git_path(path, default_source, cwd), cwd)
    on_disk = Path(cwd or ".") / spec
    if on_disk.exists():
        return load(on_disk if cwd else spec)
    if is_revision(spec, cwd):
        return git_sources(spec, _git_path(None, default_source, cwd), cwd)
    raise GitProblem(f"{spec} is neither a documents folder, a network.json nor a git revision")


def read_side(spec: str, default_source: Path | str = "beliefs", cwd: Path | None = None,
              limit: int = 100) -> Side:
    """Read and evaluate one side; usage problems (no such path, revision or git) become an
    E802 diagnostic on an empty network, as `load` does for a missing folder; a revision
    without the path is an empty network with W607 (the change adds the first beliefs)."""
    try:
        sources = _sources(spec, Path(default_source), cwd)
    except NotInRevision as exc:  # compared as an empty network: everything is added
        problem = Diagnostic(spec, 0, "W607", f"holds no beliefs: {exc}",
                             "compared as an empty network (every belief of the other side is new)")
        sources = Sources(spec, DOCUMENTS, (), None, (problem,))
    except GitProblem as exc:
        problem = Diagnostic(spec, 0, "E802", str(exc),
                             "pass a documents folder, a network.json, or git:REV[:PATH]")
        sources = Sources(spec, DOCUMENTS, (), None, (problem,))
    parsed = parse(sources)
    evaluation = evaluate(parsed.network, limit)
    return Side(printable(spec), evaluation, (*parsed.diagnostics, *evaluation.diagnostics))
