"""Status badges: paths, SVG structure and widths, shields endpoint JSON, visibility, escaping."""

from __future__ import annotations

import json
import math
import xml.etree.ElementTree as ET

import pytest

from site_builder.config import SiteConfig
from site_builder.evaluate import evaluate
from site_builder.model import IN, OUT, Belief, Justification, Network
from site_builder.render import RenderContext
from site_builder.render import badges
from site_builder.render.badges import badge_svg, belief_badges, emit, text_width

SVG = "{http://www.w3.org/2000/svg}"
# Keys shields' endpoint schema accepts (services/endpoint-common.js); anything else is rejected.
ENDPOINT_KEYS = {"schemaVersion", "label", "message", "color", "labelColor", "isError",
                 "namedLogo", "logoSvg", "logoColor", "logoWidth", "style", "cacheSeconds"}


def network(*beliefs: Belief) -> Network:
    return Network({b.id: b for b in beliefs})


def sample() -> Network:
    """a IN, b OUT, c IN from a, stale derived from b: states IN but computes OUT."""
    return network(
        Belief("a", "premise a"),
        Belief("b", "premise b", OUT),
        Belief("c", "derived c", justifications=(Justification("SL", ("a",)),)),
        Belief("ns:stale", "derived", IN, justifications=(Justification("SL", ("b",)),)),
        Belief("secret-plan", "hidden premise"),
    )


def context(net: Network, visible=None, **config) -> RenderContext:
    ids = net.beliefs if visible is None else visible
    return RenderContext(evaluate(net), SiteConfig(**config), visible=frozenset(ids))


def all_badges(ctx: RenderContext) -> list:
    """Each belief's badges (written with its page), then the site badge."""
    return [*(f for b in ctx.shown() for f in belief_badges(ctx, b.id)), *emit(ctx)]


def files(ctx: RenderContext) -> dict[str, bytes]:
    return {f.path: f.data for f in all_badges(ctx)}


def texts(root: ET.Element) -> list[ET.Element]:
    """The visible <text> elements (shadows are aria-hidden copies)."""
    return [t for t in root.iter(f"{SVG}text") if t.get("aria-hidden") != "true"]


def test_paths_cover_every_visible_belief_and_the_site_badge():
    out = files(context(sample(), prefix="claims"))
    expected = {f"claims/{d}/badge.{ext}" for d in ("a", "b", "c", "ns/stale", "secret-plan")
                for ext in ("svg", "json")}
    assert set(out) == expected | {"badge.svg"}


def test_belief_svg_is_an_accessible_flat_badge_measured_with_the_table():
    root = ET.fromstring(files(context(sample()))["belief/ns/stale/badge.svg"])
    assert root.tag == f"{SVG}svg"
    assert root.get("role") == "img" and root.get("height") == "20"
    assert root.get("aria-label") == "ns:stale: OUT"
    assert root.find(f"{SVG}title").text == "ns:stale: OUT"
    label, message = texts(root)
    assert (label.text, message.text) == ("belief", "OUT")
    assert label.get("textLength") == str(10 * text_width("belief"))
    assert message.get("textLength") == str(10 * text_width("OUT"))
    # 5 px padding on each side of each text, as shields draws it.
    assert root.get("width") == str(text_width("belief") + text_width("OUT") + 20)
    group = root.find(f"{SVG}g[@font-size]")
    assert group.get("font-size") == "110"
    assert group.get("font-family") == "Verdana,Geneva,DejaVu Sans,sans-serif"
    assert all(t.get("transform") == "scale(.1)" for t in root.iter(f"{SVG}text"))


def test_text_width_follows_anafanafo_verdana_and_rounds_up_to_odd():
    # anafanafo verdana-11px: I 4.63 + N 8.23 = 12.86 -> 13; O 8.66 + U 8.05 + T 6.78 = 23.49 -> 25.
    assert text_width("IN") == 13
    assert text_width("OUT") == 25
    assert text_width("") == 0
    assert text_width("WWWW") > text_width("iiii")
    assert text_width("belief b00010") > text_width("belief")
    assert all(text_width(s) % 2 == 1 for s in ("a", "ab", "abc", "WWWW", "iiii", "12 IN · 3 OUT"))


def test_unknown_characters_take_the_fallback_and_controls_take_none():
    em = math.ceil(badges.FALLBACK / 100)  # width of "m"
    assert text_width("\u6f22") in (em, em + 1)
    assert text_width("\u6f22\u6f22") > text_width("\u6f22")
    assert text_width("ab\x01") == text_width("ab")


def test_wider_message_makes_a_wider_badge():
    def width(message: str) -> int:
        return int(ET.fromstring(badge_svg("belief", message, "2e7d32", "t")).get("width"))
    assert width("WWWW") > width("iiii")


def test_endpoint_json_uses_only_shields_keys_and_the_computed_status():
    ctx = context(sample())
    out = files(ctx)
    for belief_id, folder in (("a", "a"), ("b", "b"), ("c", "c"), ("ns:stale", "ns/stale")):
        data = json.loads(out[f"belief/{folder}/badge.json"])
        assert set(data) <= ENDPOINT_KEYS
        assert data["schemaVersion"] == 1 and data["label"] == "belief"
        assert data["message"] == ctx.evaluation.status[belief_id]
        assert data["color"] == badges.COLORS[data["message"]]
    # The stale belief states IN; the badge shows what evaluation computed.
    assert json.loads(out["belief/ns/stale/badge.json"])["message"] == OUT


def test_colours_give_white_text_wcag_aa_contrast():
    def luminance(hex_colour: str) -> float:
        if len(hex_colour) == 3:
            hex_colour = "".join(c * 2 for c in hex_colour)
        channels = [int(hex_colour[i:i + 2], 16) / 255 for i in (0, 2, 4)]
        lin = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    for colour in (*badges.COLORS.values(), badges.LABEL_COLOR, badges.SITE_COLOR):
        assert 1.05 / (luminance(colour) + 0.05) >= 4.5, colour


def test_hidden_beliefs_get_no_badge_and_are_not_counted():
    net = sample()
    everything = files(context(net))
    assert ET.fromstring(everything["badge.svg"]).get("aria-label") == "Beliefs: 3 IN · 2 OUT"
    out = files(context(net, visible={"a", "b", "c", "ns:stale"}, site_name="Site"))
    assert not any("secret-plan" in path for path in out)
    assert not any(b"secret-plan" in data for data in out.values())
    site = ET.fromstring(out["badge.svg"])
    assert [t.text for t in texts(site)] == ["beliefs", "2 IN · 2 OUT"]
    assert site.get("aria-label") == site.find(f"{SVG}title").text == "Site: 2 IN · 2 OUT"


@pytest.mark.parametrize("hostile", ['<script>&"\'', "a\x00b\udc80</title><script>x</script>"])
def test_hostile_strings_are_escaped(hostile):
    svg = badge_svg(hostile, hostile, 'red"/><script>alert(1)</script><x a="', hostile)
    root = ET.fromstring(svg.encode("utf-8"))
    assert not [e for e in root.iter() if e.tag.endswith("script")]
    shown = hostile.replace("\x00", "\ufffd").replace("\udc80", "\ufffd")
    assert root.get("aria-label") == shown
    assert root.find(f"{SVG}title").text == shown
    assert [t.text for t in texts(root)] == [shown, shown]


def test_output_is_deterministic_whatever_the_insertion_order():
    net = sample()
    reordered = Network(dict(reversed(list(net.beliefs.items()))))
    first = all_badges(context(net))
    assert first == all_badges(context(net))
    assert first == all_badges(context(reordered))


def test_badge_text_is_escaped_as_xml_escapes_it():
    """html.escape plus the two quote entities (xml.sax.saxutils would load urllib and ssl
    at every start): the same text for any input, control characters replaced first."""
    from xml.sax.saxutils import escape

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from site_builder.render.badges import _NOT_XML, _xml

    @settings(max_examples=500, deadline=None)
    @given(st.text())
    def check(text):
        assert _xml(text) == escape(_NOT_XML.sub("\ufffd", text), {'"': "&quot;", "'": "&apos;"})
    check()
