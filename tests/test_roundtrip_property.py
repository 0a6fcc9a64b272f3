"""parse(write(belief)) == belief for random beliefs with hostile content (spec §3.2, §3.3).

The writer puts in the body what the body can say exactly and everything else in front
matter; whatever it chooses, reading the document back from its bytes (as a build reads a
file) must give the same Belief and no error diagnostic.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from site_builder.checks import echo_of
from site_builder.evaluate import evaluate
from site_builder.evaluate.truth import is_retracted
from site_builder.ids import document_path, is_valid_id
from site_builder.load import CONTROL, SourceFile, decode
from site_builder.model import IN, NODE_FIELDS, OUT, Belief, Justification, Network
from site_builder.parse.document import parse_document
from site_builder.serialize import write_document

# -- ids ------------------------------------------------------------------------------------

_SEG = r"[a-z0-9](?:[a-z0-9.-]{0,24}[a-z0-9])?"
segments = st.from_regex(rf"\A{_SEG}\Z", fullmatch=True)
ids = st.one_of(segments, st.builds(lambda a, b: f"{a}:{b}", segments, segments)).filter(is_valid_id)

# -- hostile text ---------------------------------------------------------------------------

TRICKY_LINES = [
    "---", "...", "1. x", "## Summary", "## Justifications", "Summary", "Summary:", "Dependents",
    "> quoted", ">", "**", "**IN** · derived (depth 2)", "IN premise", "OUT derived — src",
    "Created 2026-06-21T11:23:58+00:00", "Reason OUT: because", "### SL — label",
    "Antecedents (all must be IN):", "- IN some-id — echo", "<script>alert(1)</script>",
    "a — b — c", "em—dash", " -- ", "# not-a-title", "|a|b|", "```", "\tTabbed", "   indented",
    "trailing   ", "x: y", "- [ ] item", "É ∀x→y ½ σ² \u00adsoft (U+00AD)", "key: [1, 2]", "'quoted'", '"dq"',
    "null", "true", "~", "&anchor", "*alias", "!tag", "%YAML 1.2", "#", "# ", "",
]
# Every character a value may hold, C0 controls and CR included (a document may not hold
# them, E104: the writer escapes them in front matter), no surrogates (no UTF-8 file holds
# them). NEL, LS and PS (YAML line breaks) are left to test_yaml_line_break_characters_round_trip.
YAML_BREAKS = "\x85\u2028\u2029"
chars = st.characters(exclude_categories=("Cs",), exclude_characters=YAML_BREAKS)
words = st.text(chars, min_size=1, max_size=12)
lines = st.one_of(st.sampled_from(TRICKY_LINES), words,
                  st.lists(st.one_of(words, st.sampled_from(["—", " — ", "**", "IN", "OUT", "-"])),
                           min_size=1, max_size=5).map(" ".join))


def _block(parts: list[str], pad: tuple[str, str]) -> str:
    return pad[0] + "\n".join(parts) + pad[1]


pads = st.sampled_from([("", ""), ("", ""), ("", ""), (" ", ""), ("", " "), ("\n", ""), ("", "\n"), ("  ", "  ")])
texts = st.builds(_block, st.lists(lines, min_size=1, max_size=4), pads).filter(lambda t: t.strip())
one_line = st.one_of(words, st.sampled_from(TRICKY_LINES[:20]), lines)
labels = st.one_of(st.just(""), one_line, st.builds(lambda a, b: f"{a} — {b}", words, words),
                   st.builds(_block, st.lists(lines, min_size=2, max_size=3), pads))
summaries = st.one_of(st.just(""), texts)
stamps = st.one_of(st.just(""), st.sampled_from(["2026-06-21T11:23:58+00:00", "2026-05-01T10:00:00",
                                                 "2026-05-01", "yesterday", "2026-05-01 10:00"]), words)
sources = st.one_of(st.just(""), st.sampled_from(["entries/2026/06/19/wiki-ACID.md", "repo:beliefs-pi/CLAUDE.md",
                                                  "a — b", " lead", "two\nlines"]), one_line)

json_scalars = st.one_of(st.text(chars, max_size=20), st.integers(-10**12, 10**12), st.booleans(), st.none(),
                         st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(TRICKY_LINES))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(chars, min_size=1, max_size=8), inner, max_size=3)),
    max_leaves=6)
# `retract_reason` is drawn separately, always a string (see test_non_string_retract_reason_*).
meta_keys = st.one_of(st.sampled_from(["review_result", "example", "aliases", "source_type", "defeats_justification",
                                       "access_tags", "stale_reason"]),
                      st.text(chars, min_size=1, max_size=10).filter(lambda k: k != "retract_reason"))
metadata = st.dictionaries(meta_keys, json_values, max_size=4)
extras = st.dictionaries(st.sampled_from(["text_hash", "supporting_justification", "custom"]), json_values, max_size=2)
json_fields = st.one_of(st.none(), st.lists(st.sampled_from(NODE_FIELDS), unique=True).map(
    lambda keys: tuple(k for k in NODE_FIELDS if k in keys)))


@st.composite
def justifications(draw, refs) -> Justification:
    extra = draw(st.one_of(st.just({}), st.dictionaries(st.sampled_from(["content_hash", "note"]),
                                                        json_scalars, max_size=2)))
    return Justification(draw(st.sampled_from(["SL", "CP"])), tuple(draw(refs)), tuple(draw(refs)),
                         draw(labels), extra)


@st.composite
def networks(draw) -> tuple[Network, str]:
    """A small network (1-4 beliefs citing each other and external ids) and the id under test."""
    belief_ids = draw(st.lists(ids, min_size=1, max_size=4, unique=True))
    externals = draw(st.lists(ids.filter(lambda i: i not in belief_ids), max_size=2))
    refs = st.lists(st.sampled_from(belief_ids + externals), max_size=3)
    beliefs = {}
    for bid in belief_ids:
        justs = tuple(draw(justifications(refs)) for _ in range(draw(st.integers(0, 3))))
        meta = draw(metadata)
        if draw(st.booleans()):
            meta = {**meta, "retract_reason": draw(st.one_of(st.just(""), one_line, texts))}
        beliefs[bid] = Belief(
            bid, draw(texts), draw(st.sampled_from([IN, OUT])), draw(st.booleans()), justs,
            source=draw(sources), source_url=draw(st.one_of(st.just(""), st.just("https://en.wikipedia.org/wiki/ACID"), words)),
            source_hash=draw(st.one_of(st.just(""), words)), date=draw(stamps), created_at=draw(stamps),
            updated_at=draw(stamps), reviewed_at=draw(stamps), verified_at=draw(stamps),
            retracted_at=draw(stamps), metadata=meta, summary=draw(summaries), extra=draw(extras),
            json_fields=draw(json_fields))
    network = _canonical(Network(dict(sorted(beliefs.items()))))
    return network, draw(st.sampled_from(belief_ids))


def _canonical(network: Network) -> Network:
    """Derived beliefs state their computed value (the cache is what `fmt` writes, §3.4)."""
    ev = evaluate(network)
    beliefs = {i: b if b.is_premise else replace(b, declared=ev.value(i)) for i, b in network.beliefs.items()}
    return replace(network, beliefs=beliefs)


def _retracted_flag_matters(belief: Belief) -> bool:
    """`retracted` changes the meaning only for a derived belief declared OUT without a
    reason or retracted_at (§3.4); elsewhere the writer may omit the redundant flag."""
    return not belief.is_premise and belief.declared == OUT and not (belief.retract_reason or belief.retracted_at)


def assert_round_trip(network: Network, belief_id: str) -> None:
    ev = evaluate(network)
    belief = network.beliefs[belief_id]
    text = write_document(belief, ev)
    relative = document_path(belief_id)
    read, problems, _, _ = decode(text.encode("utf-8"), str(relative))
    assert read is not None, (problems, text)
    doc = parse_document(SourceFile(str(relative), relative, read))
    errors = [f"{d.code} {d.message}" for d in [*problems, *doc.diagnostics] if d.severity == "error"]
    assert errors == [], text
    parsed = doc.belief
    assert parsed is not None, text
    assert is_retracted(parsed) == is_retracted(belief), text
    if _retracted_flag_matters(belief):
        assert parsed.retracted == belief.retracted, text
    assert replace(parsed, retracted=belief.retracted) == belief, text


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(networks())
@example((Network({"a": Belief("a", "x\n\n## Summary\ny", summary="---\n1. x")}), "a"))
@example((Network({"a": Belief("a", " lead — trail ", OUT, metadata={"retract_reason": "r"},
                               justifications=(Justification("SL", ("ghost",), (), "l — m\nn"),))}), "a"))
def test_parse_write_round_trip(case):
    network, belief_id = case
    assert_round_trip(network, belief_id)


# -- found by the property: kept as plain regression tests ----------------------------------

def test_text_that_is_exactly_a_marker_word_round_trips():
    """Spec §3.2: a text paragraph that is exactly a marker word is read as a marker, so the
    writer must move such text into front matter. `write_document` must not raise."""
    for word in ("Summary", "Justifications", "Dependents:", "details"):
        assert_round_trip(Network({"a": Belief("a", word)}), "a")


def test_document_without_claim_text_is_e209_not_a_crash():
    """A document whose text is missing must give E209 (spec §3.5), not raise."""
    relative = document_path("a")
    doc = parse_document(SourceFile(str(relative), relative, "# a\n\n**IN** · premise\n\nSummary\n"))
    assert [d.code for d in doc.diagnostics if d.severity == "error"] == ["E209"]


def test_non_string_retract_reason_round_trips():
    """Metadata is verbatim (spec §3.3), `retract_reason` included, even when it is not a string."""
    for reason in ([], None, 5, ["a", "b"], {"why": "x"}):
        belief = Belief("a", "claim", OUT, justifications=(Justification("SL", (), ("ghost",)),),
                        metadata={"retract_reason": reason})
        assert_round_trip(Network({"a": belief}), "a")


def test_yaml_line_break_characters_round_trip():
    """NEL, LS and PS are ordinary text characters in a document, but YAML treats them as line
    breaks: wherever the writer puts such a string in front matter it must come back intact.
    Today `dump_yaml({"k": "x\x85y"})` writes `k: 'x<NEL>  y'`, which loads back as 'x y'."""
    for char in YAML_BREAKS:
        for belief in (Belief("a", f"---\nx{char}y"),                          # text in front matter
                       Belief("a", "claim", extra={"text_hash": f"x{char}y"}),
                       Belief("a", "claim", metadata={"example": f"x{char}y"}),
                       Belief("a", f"claim {char} end")):                       # text in the body
            assert_round_trip(Network({"a": belief}), "a")


def test_front_matter_string_ending_in_a_newline_round_trips():
    """A literal block that is the last value of the front matter keeps its final newline
    (multi-line `example` code in metadata is real data, spec §4)."""
    for belief in (Belief("a", "claim", metadata={"example": "def f():\n    pass\n"}),
                   Belief("a", "x\n"),
                   Belief("a", "claim", summary="One line.\n")):
        assert_round_trip(Network({"a": belief}), "a")


def test_front_matter_string_ending_in_blank_lines_round_trips():
    """PyYAML ends a `|+` block at the end of a document with a `...` line; the document must
    still parse (today `...` closes the front matter and `---` becomes the title: E202)."""
    for belief in (Belief("a", "claim", metadata={"example": "def f():\n    pass\n\n"}),
                   Belief("a", "claim", summary="Two paragraphs.\n\n"),
                   Belief("a", "x\n\n")):
        assert_round_trip(Network({"a": belief}), "a")


@settings(max_examples=300, derandomize=True)
@given(st.text(st.sampled_from(" \t\r\n\x1b\x1f\u00a0\u2028ab→")))
def test_a_claim_is_echoed_on_one_line_its_lines_stripped_and_joined(text):
    """checks.echo_of takes a claim without a newline as it is, stripped: the same as joining
    its stripped, non-empty lines; a control character (E104 in a document) becomes U+FFFD."""
    belief = Belief("a", text)
    shown = CONTROL.sub("\ufffd", text)
    assert echo_of(belief) == " ".join(line.strip() for line in shown.split("\n") if line.strip())
    assert not CONTROL.search(echo_of(belief))


def test_an_empty_or_blank_claim_round_trips_through_front_matter():
    """network.json may hold `"text": ""`; the body cannot (E209 there), so `text: ''` says it."""
    for text in ("", "  ", "\n\n"):
        network = Network({"a": Belief("a", text), "b": Belief("b", "Rests on a.", justifications=(
            Justification("SL", ("a",), ()),))})
        assert_round_trip(network, "a")
        assert_round_trip(network, "b")
