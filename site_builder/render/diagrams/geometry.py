"""What both layout engines produce and the SVG writer draws: boxes and routed edges.

Box sizes come from a character-width table (Helvetica/Arial advance widths, the metrics
of the sans-serif fonts a browser picks for `font-family: Helvetica, Arial, sans-serif`),
so both engines lay out boxes of the same size and the text never depends on the host.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from .neighbourhood import Neighbourhood, Node

__all__ = ["Box", "Route", "Drawing", "label", "text_width", "box_widths", "FONT_SIZE",
           "FONT_FAMILY", "BOX_H", "LABEL_MAX"]

FONT_SIZE = 12
FONT_FAMILY = "Helvetica, Arial, 'Liberation Sans', sans-serif"
BOX_H = 24.0
PAD_X = 9.0
LABEL_MAX = 32
"""Longer ids are cut to LABEL_MAX - 1 characters and an ellipsis (full id in the tooltip)."""
_SAFETY = 1.08
"""Fallback fonts (DejaVu Sans) run up to a tenth wider than Helvetica."""
_BOLD = 1.15
"""The current belief's label is bold, wider still (DejaVu Sans Bold most of all)."""

# Helvetica advance widths in 1/1000 em (Adobe AFM), printable ASCII.
_ASCII = (
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  # space../
    556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  # 0..?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  # @..O
    667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  # P.._
    333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  # `..o
    556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584,  # p..~
)
_WIDTHS = {chr(32 + i): w for i, w in enumerate(_ASCII)}
_WIDTHS["\u2026"] = 1000  # ellipsis
_FALLBACK = 600


def _char_width(c: str) -> int:
    w = _WIDTHS.get(c)
    if w is not None:
        return w
    if unicodedata.combining(c):
        return 0
    return 1000 if unicodedata.east_asian_width(c) in ("W", "F") else _FALLBACK


def text_width(text: str, size: float = FONT_SIZE) -> float:
    """Estimated advance width of `text` in pixels at `size`."""
    return sum(_char_width(c) for c in text) * size / 1000.0


def label(node: Node) -> str:
    """The text in a node's box: the id (shortened), or "+N more" ("N+ more" when the count stopped)."""
    if node.is_more:
        return f"+{node.more} more" if node.complete else f"{node.more}+ more"
    key = node.key
    return key if len(key) <= LABEL_MAX else key[: LABEL_MAX - 1] + "\u2026"


@lru_cache(maxsize=65536)
def _box_width(text: str, bold: bool) -> float:
    return round(text_width(text) * _SAFETY * (_BOLD if bold else 1) + 2 * PAD_X, 1)


def box_widths(nb: Neighbourhood) -> list[float]:
    """Box width of every node: its label plus padding (the current belief's is bold)."""
    return [_box_width(label(n), n.row == 0) for n in nb.nodes]


Point = tuple[float, float]


class Box(NamedTuple):
    """A node's box, by its centre."""

    x: float
    y: float
    w: float
    h: float


class Route(NamedTuple):
    """An edge's path from its source to its target: a start point, then segments, each a
    line `(p,)` or a cubic Bézier `(c1, c2, p)`; the arrow is drawn at the end."""

    start: Point
    segments: tuple[tuple[Point, ...], ...]

    def points(self) -> list[Point]:
        """Start, control and end points (they bound the curve)."""
        out = [self.start]
        for seg in self.segments:
            out.extend(seg)
        return out


@dataclass(frozen=True, slots=True)
class Drawing:
    """One laid-out neighbourhood: a box per node, a route per edge (same order)."""

    boxes: tuple[Box, ...]
    routes: tuple[Route, ...]
    engine: str
