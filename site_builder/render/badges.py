"""Status badges: `belief/<id>/badge.svg`, `belief/<id>/badge.json` and a site `badge.svg`.

The SVG copies the layout of shields.io's flat badge (badge-maker) so it looks the same in a
README, but is drawn here with no font library: widths come from a committed table
(`charwidths`, anafanafo's Verdana 11px, the one shields measures with). Text is drawn at
font-size 110 inside `scale(.1)` with `textLength` = 10 x width, so whatever font the viewer
substitutes is stretched to the measured box instead of overflowing it.

The JSON is a shields.io endpoint response; shields rejects unknown keys, so only schema keys
are written. Hidden beliefs get no badge and are not counted (they may not appear anywhere).
"""

from __future__ import annotations

import re
from typing import Iterator
from html import escape

from .. import urls
from ..model import IN, OUT
from . import OutputFile, RenderContext
from .charwidths import CONTROL, FALLBACK, WIDTHS
from .exports.records import compact

__all__ = ["emit", "belief_badges", "badge_svg", "text_width", "endpoint_json", "COLORS", "SITE_BADGE"]

# White text on each fill has a WCAG contrast of at least 4.5:1 (AA for small text):
# #2e7d32 5.1, #c62828 5.6, #555 7.5, #1565c0 5.8. shields' own "brightgreen" is only 2.4.
COLORS = {IN: "2e7d32", OUT: "c62828"}
LABEL_COLOR = "555"
SITE_COLOR = "1565c0"  # neutral blue: OUT beliefs are normal, not a failing build
LABEL = "belief"  # short, so the badge stays small; the id goes in <title> and aria-label
SITE_LABEL = "beliefs"
SITE_BADGE = "badge.svg"

HEIGHT = 20
PADDING = 5  # px each side of a text, as in shields
FONT_FAMILY = "Verdana,Geneva,DejaVu Sans,sans-serif"

# Characters XML 1.0 forbids even as references (C0 controls but tab/LF/CR, surrogates,
# U+FFFE/U+FFFF): escaping cannot save them, so they become U+FFFD and the file still parses.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def _xml(text: str) -> str:
    """Text safe in XML content and in double- or single-quoted attributes."""
    # html's escape, not xml.sax.saxutils' (which loads urllib, http and ssl: 8 ms per run).
    return escape(_NOT_XML.sub("\ufffd", text), quote=False).replace('"', "&quot;").replace("'", "&apos;")


def _char_width(char: str) -> int:
    """Width of one character in hundredths of a pixel."""
    if char in WIDTHS:
        return WIDTHS[char]
    return CONTROL if ord(char) < 32 or ord(char) == 127 else FALLBACK


def text_width(text: str) -> int:
    """Width in px of `text` in Verdana 11px, rounded up to an odd number (0 for "").

    Rounded up, not truncated as shields does, so the measured box never clips the text; odd
    because the 5 px paddings then make an odd part whose centre lies on a half pixel, which
    `scale(.1)` turns into whole units (shields' "pixel grid alignment").
    """
    total = sum(_char_width(c) for c in text)
    if not total:
        return 0
    pixels = -(-total // 100)  # ceiling division: integers, no float rounding
    return pixels if pixels % 2 else pixels + 1


def _texts(content: str, left: int, width: int, part: int) -> str:
    """Shadow and text of one part of the badge, centred in [left, left + part)."""
    x = 10 * left + 5 * part  # centre, in the x10 coordinates of scale(.1)
    body = _xml(content)
    return (f'<text aria-hidden="true" x="{x}" y="150" fill="#010101" fill-opacity=".3" '
            f'transform="scale(.1)" textLength="{10 * width}">{body}</text>'
            f'<text x="{x}" y="140" transform="scale(.1)" fill="#fff" '
            f'textLength="{10 * width}">{body}</text>')


def badge_svg(label: str, message: str, color: str, title: str) -> str:
    """A flat shields-style badge; `color` is a CSS colour or bare hex ("2e7d32")."""
    if re.fullmatch(r"[0-9a-fA-F]{3}|[0-9a-fA-F]{6}", color):
        color = "#" + color  # shields' endpoint form, bare hex, made valid CSS
    label_w, message_w = text_width(label), text_width(message)
    left = label_w + 2 * PADDING if label else 0  # an empty label draws no grey part
    right = message_w + 2 * PADDING
    width = left + right
    name = _xml(title)
    label_texts = _texts(label, 0, label_w, left) if label else ""
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{HEIGHT}" '
        f'role="img" aria-label="{name}"><title>{name}</title>'
        '<linearGradient id="s" x2="0" y2="100%"><stop offset="0" stop-color="#bbb" '
        'stop-opacity=".1"/><stop offset="1" stop-opacity=".1"/></linearGradient>'
        f'<clipPath id="r"><rect width="{width}" height="{HEIGHT}" rx="3" fill="#fff"/></clipPath>'
        f'<g clip-path="url(#r)"><rect width="{left}" height="{HEIGHT}" fill="#{LABEL_COLOR}"/>'
        f'<rect x="{left}" width="{right}" height="{HEIGHT}" fill="{_xml(color)}"/>'
        f'<rect width="{width}" height="{HEIGHT}" fill="url(#s)"/></g>'
        f'<g fill="#fff" text-anchor="middle" font-family="{FONT_FAMILY}" '
        'text-rendering="geometricPrecision" font-size="110">'
        f'{label_texts}{_texts(message, left, message_w, right)}</g></svg>\n'
    )


def endpoint_json(message: str, color: str, label: str = LABEL) -> str:
    """A shields.io endpoint response (schema keys only: shields rejects any other)."""
    data = {"schemaVersion": 1, "label": label, "message": message, "color": color}
    return compact(data) + "\n"


def belief_badges(ctx: RenderContext, belief_id: str) -> list[OutputFile]:
    """The SVG badge and the shields.io endpoint JSON of one belief."""
    prefix, status = ctx.config.prefix, ctx.evaluation.value(belief_id)
    svg = badge_svg(LABEL, status, COLORS[status], f"{belief_id}: {status}")
    return [OutputFile(urls.badge_path(belief_id, prefix, "svg"), svg.encode("utf-8")),
            OutputFile(urls.badge_path(belief_id, prefix, "json"),
                       endpoint_json(status, COLORS[status]).encode("utf-8"))]


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """The site badge (visible beliefs only); belief badges come with their pages (render.belief)."""
    counts = {IN: 0, OUT: 0}
    for belief in ctx.shown():
        counts[ctx.evaluation.value(belief.id)] += 1
    message = f"{counts[IN]} IN \u00b7 {counts[OUT]} OUT"
    svg = badge_svg(SITE_LABEL, message, SITE_COLOR, f"{ctx.config.site_name}: {message}")
    yield OutputFile(SITE_BADGE, svg.encode("utf-8"))
