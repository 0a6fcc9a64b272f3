"""The SVG writer both engines share: boxes as links, curved edges, a legend.

Styling: CSS classes for the theme (`.status-in`, `.status-out`, `.current`, `.edge`,
`.outlist`, `.more`) plus the same colours as presentation attributes, which any CSS rule
overrides, so the markup also reads standalone, in print and in feed readers. There is no
`style` attribute and no `<style>` element: a strict Content-Security-Policy (DESIGN
"output") would drop both. The size is intrinsic (`width`/`height` from the viewBox); the
theme's `.diagram svg { max-width: 100%; height: auto }` scales it down on a phone.
Every piece of text goes through `_text`/`_attr`, which escape markup and drop the
characters XML 1.0 cannot carry.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import NamedTuple, Sequence

from .geometry import FONT_FAMILY, FONT_SIZE, Drawing, Route, text_width

__all__ = ["NodeInfo", "write_svg", "TITLE_ID", "DESC_ID", "ARROW_ID"]

TITLE_ID = "belief-diagram-title"
DESC_ID = "belief-diagram-desc"
ARROW_ID = "belief-diagram-arrow"
MARGIN = 8.0

_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")

#: Presentation colours by node kind: fill, stroke, text.
COLOURS = {
    "in": ("#e6f4ea", "#1e7b34", "#0d3b1a"),
    "out": ("#fdecea", "#b3261e", "#5c1410"),
    "more": ("#ffffff", "#757575", "#333333"),
}
XLINK = "http://www.w3.org/1999/xlink"
"""Links are `xlink:href`: an SVG `<a href>` has a read-only `href` property, and Material for
MkDocs' instant navigation assigns `el.href = el.href` to every `[href]` of the new page, which
then threw and left the old page on screen."""
EDGE_COLOUR = "#5f6368"
OUTLIST_DASH = "5 3"


def _clean(text: str) -> str:
    # Every character XML cannot carry is unprintable (a control, a surrogate, a noncharacter):
    # most texts need no search.
    return text if text.isprintable() else _INVALID_XML.sub("\ufffd", text)


@lru_cache(maxsize=1 << 16)  # the same ids and tooltips appear in many diagrams
def _text(text: str) -> str:
    return _clean(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


@lru_cache(maxsize=1 << 16)
def _attr(text: str) -> str:
    return _text(text).replace('"', "&quot;").replace("\n", "&#10;").replace("\t", "&#9;").replace("\r", "&#13;")


@lru_cache(maxsize=1 << 16)  # coordinates repeat across diagrams: a hit is 4x cheaper than formatting
def _f(value: float) -> str:
    """A coordinate with at most one decimal (stable bytes, small pages)."""
    s = f"{value:.1f}"
    if s.endswith(".0"):
        s = s[:-2]
    return "0" if s == "-0" else s


class NodeInfo(NamedTuple):
    """What the writer needs to know about a node besides its box."""

    label: str
    href: str
    kind: str
    """`in`, `out` or `more`."""
    current: bool
    tooltip: str


def _path(route: Route, dx: float, dy: float) -> str:
    f = _f  # 1.1 million coordinates at 10k beliefs: pieces, one join
    sx, sy = route.start
    out = ["M", f(sx + dx), ",", f(sy + dy)]
    for seg in route.segments:
        if len(seg) == 3:
            (ax, ay), (bx, by), (cx, cy) = seg
            out += ("C", f(ax + dx), ",", f(ay + dy), " ", f(bx + dx), ",", f(by + dy), " ",
                    f(cx + dx), ",", f(cy + dy))
        else:
            out.append("L" if len(seg) == 1 else "C")
            for k, (px, py) in enumerate(seg):
                out += (" ", f(px + dx), ",", f(py + dy)) if k else (f(px + dx), ",", f(py + dy))
    return "".join(out)


@lru_cache(maxsize=256)  # the same for every diagram of a given height
def _legend(y: float, x0: float) -> tuple[tuple[str, ...], float, float]:
    """The legend row at `y`: returns its markup, width and height."""
    parts = ['<g class="legend" font-size="11">']
    x = x0
    h = 16.0
    for kind, text, current in (("in", "IN", False), ("out", "OUT", False), ("in", "current", True)):
        fill, stroke, ink = COLOURS[kind]
        cls = f"status-{kind}" + (" current" if current else "")
        width = "2.5" if current else "1"
        parts.append(f'<rect class="{cls}" x="{_f(x)}" y="{_f(y)}" width="18" height="{_f(h)}" rx="3" '
                     f'fill="{fill}" stroke="{stroke}" stroke-width="{width}"/>')
        x += 22
        parts.append(f'<text x="{_f(x)}" y="{_f(y + 12)}" fill="#333333">{text}</text>')
        x += text_width(text, 11) * 1.15 + 16
    for cls, text, dash in (("edge", "antecedent", ""), ("edge outlist", "outlist", OUTLIST_DASH)):
        extra = f' stroke-dasharray="{dash}"' if dash else ""
        parts.append(f'<path class="{cls}" d="M{_f(x)},{_f(y + h / 2)}h26" fill="none" '
                     f'stroke="{EDGE_COLOUR}" stroke-width="1.3"{extra} marker-end="url(#{ARROW_ID})"/>')
        x += 32
        parts.append(f'<text x="{_f(x)}" y="{_f(y + 12)}" fill="#333333">{text} edge</text>')
        x += text_width(text + " edge", 11) * 1.15 + 16
    parts.append("</g>")
    return tuple(parts), x - x0 - 16, h


@lru_cache(maxsize=8)
def _node_style(kind: str, current: bool) -> tuple[str, str, str]:
    """A node's markup around its tooltip and coordinates, by its kind and whether it is the
    page's own belief: from its link to its tooltip, after its box's height up to its label's
    x, after that label's y up to the label."""
    fill, stroke, ink = COLOURS[kind]
    cls = "node more" if kind == "more" else f"node status-{kind}"
    extra_rect = ' stroke-dasharray="3 2"' if kind == "more" else ""
    if current:
        cls += " current"
        extra_rect += ' stroke-width="3"'
    weight = ' font-weight="bold"' if current else ""
    aria = ' aria-current="page"' if current else ""
    return (f'{aria}><g class="{cls}"><title>', f'" rx="4" fill="{fill}" stroke="{stroke}"{extra_rect}/><text x="',
            f'" text-anchor="middle" fill="{ink}"{weight}>')


def write_svg(drawing: Drawing, nodes: Sequence[NodeInfo], outlist: Sequence[bool],
              title: str, desc: str) -> str:
    """Inline SVG markup of one drawing (`nodes` and `outlist` follow its boxes and routes)."""
    points = [r.start for r in drawing.routes]  # start, control and end points bound the curves
    for r in drawing.routes:
        for seg in r.segments:
            points += seg
    xs, ys = [x for x, _ in points], [y for _, y in points]
    for b in drawing.boxes:
        xs += (b.x - b.w / 2, b.x + b.w / 2)
        ys += (b.y - b.h / 2, b.y + b.h / 2)
    dx, dy = MARGIN - min(xs), MARGIN - min(ys)
    legend_y = max(ys) + dy + 14
    legend, legend_w, legend_h = _legend(legend_y, MARGIN)
    width = max(max(xs) + dx, legend_w + MARGIN) + MARGIN
    height = legend_y + legend_h + MARGIN
    w, h = _f(width), _f(height)
    out = [
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="{XLINK}" class="belief-diagram" role="img" '
        f'aria-labelledby="{TITLE_ID} {DESC_ID}" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
        f'font-family="{_attr(FONT_FAMILY)}" font-size="{FONT_SIZE}">',
        f'<title id="{TITLE_ID}">{_text(title)}</title>',
        f'<desc id="{DESC_ID}">{_text(desc)}</desc>',
        f'<defs><marker id="{ARROW_ID}" class="arrow" viewBox="0 0 10 10" refX="10" refY="5" '
        f'markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" '
        f'fill="{EDGE_COLOUR}"/></marker></defs>',
        '<g class="edges">',
    ]
    for route, dashed in zip(drawing.routes, outlist):
        cls, extra = ("edge outlist", f' stroke-dasharray="{OUTLIST_DASH}"') if dashed else ("edge", "")
        out.append(f'<path class="{cls}" d="{_path(route, dx, dy)}" fill="none" stroke="{EDGE_COLOUR}" '
                   f'stroke-width="1.3"{extra} marker-end="url(#{ARROW_ID})"/>')
    out.append('</g><g class="nodes">')
    for box, info in zip(drawing.boxes, nodes):
        opening, rect_end, text_end = _node_style(info.kind, info.current)
        x, y = box.x + dx, box.y + dy
        out.append(
            f'<a xlink:href="{_attr(info.href)}"{opening}{_text(info.tooltip)}</title>'
            f'<rect x="{_f(x - box.w / 2)}" y="{_f(y - box.h / 2)}" width="{_f(box.w)}" '
            f'height="{_f(box.h)}{rect_end}{_f(x)}" y="{_f(y + 4)}{text_end}{_text(info.label)}</text></g></a>')
    out.append("</g>")
    out.extend(legend)
    out.append("</svg>")
    return "\n".join(out)
