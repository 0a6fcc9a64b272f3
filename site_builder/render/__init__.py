"""Render: an Evaluation and a SiteConfig -> output files, through emitters listed as data.

Each emitter module exposes `emit(ctx) -> Iterator[OutputFile]`; adding an output is one
module plus one line in `emitters()`. Render is pure: no clock, no randomness, no absolute
paths, collections sorted, so the same input gives byte-identical output.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..config import SiteConfig
from ..evaluate import Evaluation
from ..model import Belief
from .. import urls

__all__ = ["OutputFile", "RenderContext", "render"]


@dataclass(frozen=True, slots=True)
class OutputFile:
    """One file of the site: a POSIX path relative to the site root, and its bytes."""

    path: str
    data: bytes


@dataclass(frozen=True, slots=True)
class RenderContext:
    """Everything an emitter may read; built once per build."""

    evaluation: Evaluation
    config: SiteConfig
    visible: frozenset[str]
    """Ids that may appear anywhere in the output (all of them without `visible_to`)."""
    documents: Mapping[str, str] = field(default_factory=dict)
    """id -> document path relative to the repository (for "edit this belief")."""
    diagrams: Mapping[str, str] = field(default_factory=dict)
    """id -> inline SVG of its dependency diagram (links relative from its page)."""
    panels: Mapping[str, Any] = field(default_factory=dict)
    """id -> its explain, trace and impact panels (render.panels.Panels), computed once."""
    diff: Any = None
    """The diff.NetworkDiff of `build --diff-base` (the changes page), or None."""
    marks: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """id -> change labels (`edited`, `IN→OUT`...) from the diff, computed once per build."""

    @property
    def beliefs(self) -> Mapping[str, Belief]:
        """Every belief of the network (visible or not: statuses use them all)."""
        return self.evaluation.network.beliefs

    def is_visible(self, belief_id: str) -> bool:
        """True when the id may be shown, linked or counted."""
        return belief_id in self.visible

    def shown(self) -> list[Belief]:
        """Visible beliefs, sorted by id."""
        return [b for i, b in sorted(self.beliefs.items()) if i in self.visible]

    def panels_of(self, belief_id: str):
        """The belief's panels (computed on demand when the build did not precompute them)."""
        found = self.panels.get(belief_id)
        if found is None:
            from .panels import panels_for
            found = panels_for(self.evaluation, belief_id, self.config.panel_max_items, self.is_visible)
        return found

    def page(self, belief_id: str) -> str:
        """Output path of a belief page."""
        return urls.page_path(belief_id, self.config.prefix)

    def href(self, from_file: str, to_file: str) -> str:
        """Relative link honouring `use_directory_urls`."""
        return urls.relative_href(from_file, to_file, self.config.use_directory_urls)


Emitter = Callable[[RenderContext], Iterable[OutputFile]]


def emitters() -> tuple[Emitter, ...]:
    """The outputs of a site, in order."""
    from . import assets, badges, changes, exports, graph, pages, search

    return (pages.emit, badges.emit, exports.emit, assets.emit, graph.emit, search.emit,
            changes.emit, changes.emit_redirects)


def render(ctx: RenderContext) -> Iterator[OutputFile]:
    """All output files of the site."""
    for emit in emitters():
        yield from emit(ctx)
