"""Word-by-word differences for the changes page and the pull-request comment (diff/textdiff.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from site_builder.diff import textdiff
from site_builder.diff.textdiff import lines, words


def test_an_edited_word_is_marked_in_place():
    assert words("a b c", "a x c") == [("same", "a "), ("del", "b"), ("ins", "x"), ("same", " c")]
    assert words("same", "same") == [("same", "same")]
    assert words("", "new text") == [("ins", "new text")]


def test_a_space_between_two_changed_words_joins_them_into_one_change():
    assert words("divides to stabilize gradients", "divides so that gradients") == [
        ("same", "divides "), ("del", "to stabilize"), ("ins", "so that"), ("same", " gradients")]


def test_changed_lines_are_compared_word_by_word_and_the_rest_whole():
    assert lines(["one", "two words", "three"], ["one", "two others", "three", "four"]) == [
        [("same", "one")], [("same", "two "), ("del", "words"), ("ins", "others")], [("same", "three")],
        [("ins", "four")]]
    assert lines(["gone", "kept"], ["kept"]) == [[("del", "gone")], [("same", "kept")]]


def test_a_very_long_rewrite_is_shown_whole(monkeypatch):
    """The matching keeps a bit per pair of tokens: past a bound, old and new are shown whole."""
    monkeypatch.setattr(textdiff, "MAX_TOKENS", 20)
    old, new = "a b c d e f", "a b c d e g"
    assert words(old, new) == [("del", old), ("ins", new)]
    assert lines(["a"] * 10, ["a"] * 11) == [[("del", "a")]] * 10 + [[("ins", "a")]] * 11


def test_hostile_texts_are_compared_whole_and_right():
    """difflib's matching took 9 s on the first pair (claims that share only their spaces)
    and 28 s on the second: 200 such edits held a preview build for half an hour. Indel's
    time is bounded by the lengths alone (performance is never asserted by a timed test);
    these must still come back exact."""
    cases = [("a " * 1500, "b " * 1500), ("." * 1500, ".," * 750), ("a " * 750, "a b " * 375)]
    for old, new in cases:
        diffed = words(old, new)
        assert "".join(t for k, t in diffed if k != "ins") == old and "".join(t for k, t in diffed if k != "del") == new


def test_a_changed_line_is_paired_with_the_old_line_it_edits_not_a_blank_one():
    """Lines were paired by position: a blank line removed above an edited one paired with
    it, so the edit showed as a line added, then the old one removed, and the blank line's
    removal vanished."""
    assert lines(["Line one.", "", "Line three to stabilize things."], ["Line one.", "Line three so that things."]) == [
        [("same", "Line one.")], [("del", "")],
        [("same", "Line three "), ("del", "to stabilize"), ("ins", "so that"), ("same", " things.")]]
    assert lines(["a", "a"], ["a", ""]) in ([[("same", "a")], [("del", "a")], [("ins", "")]],
                                            [[("same", "a")], [("ins", "")], [("del", "a")]])


def test_an_empty_line_and_a_nul_one_are_different_lines():
    """rapidfuzz compares a one-character string by its code point and a longer one by its
    hash: "" (hash 0) matched "\\x00", so an edit between them read as no change (found by the
    property test below)."""
    assert lines([""], ["\x00"]) == [[("del", "")], [("ins", "\x00")]]
    assert lines(["a", "\x00"], ["a", ""]) == [[("same", "a")], [("del", "\x00")], [("ins", "")]]


@given(st.lists(st.text(max_size=30), max_size=5), st.lists(st.text(max_size=30), max_size=5))
def test_the_old_and_new_texts_are_read_back_from_the_diff(old, new):
    """Nothing is lost, blank lines included: the kept and removed segments spell the old
    lines, the kept and added ones the new (a claim is split on newlines)."""
    old = [line.replace("\n", " ") for line in old]
    new = [line.replace("\n", " ") for line in new]
    diffed = lines(old, new)
    assert all(line for line in diffed)  # a line has a segment, a blank one an empty one
    before = ["".join(t for kind, t in line if kind != "ins") for line in diffed if any(k != "ins" for k, _ in line)]
    after = ["".join(t for kind, t in line if kind != "del") for line in diffed if any(k != "del" for k, _ in line)]
    assert before == old and after == new
