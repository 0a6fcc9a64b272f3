"""The line-based document grammar (spec §3.2), in both spellings."""

from __future__ import annotations

from pathlib import PurePosixPath

import pytest

from site_builder.load import SourceFile
from site_builder.model import IN, OUT
from site_builder.parse.document import parse_document

from .conftest import EXAMPLE, SEED


def doc(text: str, name: str = "b"):
    relative = PurePosixPath(name.replace(":", "/") + ".md")
    return parse_document(SourceFile(f"beliefs/{relative}", relative, text))


def codes(document) -> list[str]:
    return [d.code for d in document.diagnostics]


PLAIN = """b

OUT derived (depth 3) — repo:notes/x.md

Created 2026-01-01T00:00:00+00:00 · Reviewed 2026-01-02T00:00:00+00:00

Reason OUT: superseded by newer data

A claim — with an em dash.
Second line of the claim.

Summary

Why it matters.

Justifications

This belief has 2 justifications — it is IN if any one holds.

SL — first — label with a dash

Antecedents (all must be IN):

IN a — claim a
OUT c

Unless (any of these IN defeats this justification):

? x — claim x

CP

Antecedents:

a

Dependents

These beliefs depend on this one:

IN d — claim d
"""

MARKDOWN = """# b

**OUT** · derived (depth 3) — repo:notes/x.md

Created 2026-01-01T00:00:00+00:00 · Reviewed 2026-01-02T00:00:00+00:00

**Reason OUT:** superseded by newer data

A claim — with an em dash.
Second line of the claim.

## Summary

Why it matters.

## Justifications

This belief has 2 justifications — it is IN if any one holds.

### SL — first — label with a dash

**Antecedents** (all must be IN):

- IN [a](../a/) — claim a
- OUT c

**Unless** (all must be OUT):

- ? x — claim x

### CP

Antecedents:

* a

## Dependents

These beliefs depend on this one:

- IN d — claim d
"""


@pytest.mark.parametrize("text", [PLAIN, MARKDOWN], ids=["plain", "markdown"])
def test_both_spellings_read_the_same_belief(text):
    belief = doc(text).belief
    assert belief.id == "b"
    assert belief.declared == OUT
    assert belief.source == "repo:notes/x.md"
    assert belief.created_at == "2026-01-01T00:00:00+00:00"
    assert belief.reviewed_at == "2026-01-02T00:00:00+00:00"
    assert belief.metadata == {"retract_reason": "superseded by newer data"}
    assert belief.text == "A claim — with an em dash.\nSecond line of the claim."
    assert belief.summary == "Why it matters."
    first, second = belief.justifications
    assert (first.type, first.label) == ("SL", "first — label with a dash")
    assert first.antecedents == ("a", "c") and first.outlist == ("x",)
    assert first.ante_tags == (IN, OUT) and first.out_tags == ("?",)
    assert (second.type, second.label, second.antecedents) == ("CP", "", ("a",))


@pytest.mark.parametrize("text", [PLAIN, MARKDOWN], ids=["plain", "markdown"])
def test_derived_content_is_recorded_not_read_as_data(text):
    document = doc(text)
    assert document.stated.kind == "derived" and document.stated.depth == 3
    assert document.stated.count == 2
    assert [(i.ref, i.tag, i.echo) for i in document.stated.dependents] == [("d", IN, "claim d")]
    assert document.markdown == text.startswith("# ")


def test_the_seed_parses_verbatim():
    document = doc((EXAMPLE / f"{SEED}.md").read_text(encoding="utf-8"), SEED)
    belief = document.belief
    assert codes(document) == []
    assert belief.declared == IN and belief.created_at.startswith("2026-06-21T11:23:58")
    assert belief.text.startswith("Transformer attention is a structured directed computation")
    assert belief.summary.startswith("Attention in a transformer is a one-way")
    (j,) = belief.justifications
    assert j.label.startswith("Three independent mechanical properties")
    assert j.antecedents == ("attention-is-non-symmetric",
                             "self-attention-permutation-invariant-needs-positional-encoding",
                             "attention-scaled-by-sqrt-dk")
    assert [i.ref for i in document.stated.dependents] == [
        "attention-universality-grounded-in-structural-richness"]


@pytest.mark.parametrize("line", ["---", "1. first", "# not a title", "    indented", "* star"])
def test_markdown_looking_text_lines_stay_text(line):
    belief = doc(f"# b\n\nIN premise\n\nClaim starts.\n{line}\nClaim ends.\n").belief
    assert belief.text == f"Claim starts.\n{line.rstrip()}\nClaim ends."


def test_text_that_merely_starts_like_a_status_is_text():
    belief = doc("b\n\nIN nodes are the believed ones.\n").belief
    assert belief.text == "IN nodes are the believed ones."
    assert codes(doc("b\n\nIN nodes are the believed ones.\n")) == ["W206"]


def test_quoted_text_is_unquoted_when_every_line_is_quoted():
    assert doc("b\n\nIN premise\n\n> one\n> two\n").belief.text == "one\ntwo"
    assert doc("b\n\nIN premise\n\n> one\ntwo\n").belief.text == "> one\ntwo"


def test_a_marker_word_needs_a_blank_line_before_it():
    belief = doc("b\n\nIN premise\n\nThe claim ends with the word\nSummary\n").belief
    assert belief.text == "The claim ends with the word\nSummary"
    assert belief.summary == ""


def test_stale_means_out_and_retracted():
    document = doc("b\n\nSTALE derived (depth 1)\n\nClaim.\n")
    assert document.belief.declared == OUT and document.belief.retracted
    assert "W207" in codes(document)


def test_front_matter_carries_what_the_body_cannot():
    text = ("---\nretracted: true\nsource_url: https://example.org/x\nmetadata:\n  review_result: pass\n"
            "  count: 3\ncreated_at: 2026-01-01T00:00:00+00:00\n---\n# b\n\nOUT derived (depth 1)\n\n"
            "Claim.\n\n## Justifications\n\n### SL\n\nAntecedents:\n\n- a\n")
    belief = doc(text).belief
    assert belief.retracted and belief.source_url == "https://example.org/x"
    assert belief.metadata == {"review_result": "pass", "count": 3}
    assert belief.created_at == "2026-01-01T00:00:00+00:00"  # timestamps stay strings


def test_front_matter_conflicting_with_the_body_is_e107():
    document = doc("---\ntext: Other claim.\n---\n# b\n\nIN premise\n\nClaim.\n")
    assert "E107" in codes(document)
    assert document.belief.text == "Claim."


def test_a_field_the_body_gives_twice_with_different_values_is_e107_at_each_later_place():
    """The status line, the dates line and Details may each give the source and the stamps:
    the last silently won."""
    document = doc("# b\n\n**IN** · premise — src-one\n\nCreated 2020-01-01 · Created 2020-01-02\n\nClaim.\n\n"
                   "## Details\n\n| Source | src-two |\n| Created | 2020-01-02 |\n| Updated | 2021-01-01 |\n"
                   "| Source | src-two |\n")
    assert [(d.line, d.code, d.message) for d in document.diagnostics] == [
        (5, "E107", "Created given twice with different values: '2020-01-01' (line 5) and '2020-01-02' (this one kept)"),
        (11, "E107", "Source given twice with different values: 'src-one' (line 3) and 'src-two' (this one kept)")]
    assert (document.belief.source, document.belief.created_at) == ("src-two", "2020-01-02")
    same = doc("# b\n\n**IN** · premise — src\n\nCreated 2020-01-01\n\nClaim.\n\n"
               "## Details\n\n| Source | src |\n| Created | 2020-01-01 |\n")
    assert same.diagnostics == ()


def test_front_matter_rejects_unknown_keys_and_duplicates():
    assert "E106" in codes(doc("---\nbogus: 1\n---\n# b\n\nIN premise\n\nClaim.\n"))
    duplicate = doc("---\nsource: a\nsource: b\n---\n# b\n\nIN premise\n\nClaim.\n")
    assert codes(duplicate) == ["E105"] and duplicate.belief is None


def test_namespaced_id_lives_in_a_folder():
    document = doc("# team:b\n\nIN premise\n\nClaim.\n", "team:b")
    assert document.belief.id == "team:b" and codes(document) == []


def test_unknown_heading_and_repeated_section():
    found = codes(doc("b\n\nIN premise\n\nClaim.\n\n## Notes\n\nx\n\n## Summary\n\ns\n\n## Summary\n\nt\n"))
    assert found == ["E301", "E302"]


def test_items_and_lines_in_justifications():
    document = doc("b\n\nIN derived\n\nClaim.\n\nJustifications\n\nSL\n\n- IN a\n\nAntecedents:\n\n"
                   "nonsense here\n- a\n")
    assert [(d.code, d.line) for d in document.diagnostics] == [("E305", 11), ("E304", 15)]


def test_trailing_spaces_are_not_content():
    assert doc("b   \n\nIN premise  \n\nClaim.   \n").belief.text == "Claim."
