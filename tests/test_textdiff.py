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
    """Matching is quadratic in the worst case, and the texts are untrusted."""
    monkeypatch.setattr(textdiff, "MAX_CHARS", 15)
    old, new = "a b c d e f", "a b c d e g"
    assert words(old, new) == [("del", old), ("ins", new)]
    assert lines(["a b", "c d e"], ["a b", "c d e", "f g"]) == [
        [("del", "a b")], [("del", "c d e")], [("ins", "a b")], [("ins", "c d e")], [("ins", "f g")]]


@given(st.lists(st.text(max_size=30), max_size=5), st.lists(st.text(max_size=30), max_size=5))
def test_the_old_and_new_texts_are_read_back_from_the_diff(old, new):
    """Nothing is lost: the kept and removed segments spell the old text, the kept and
    added ones the new (lines split on newlines, as the changes page splits a claim)."""
    old = [line.replace("\n", " ") for line in old]
    new = [line.replace("\n", " ") for line in new]
    diffed = lines(old, new)
    before = ["".join(t for kind, t in line if kind != "ins") for line in diffed if any(k != "ins" for k, _ in line)]
    after = ["".join(t for kind, t in line if kind != "del") for line in diffed if any(k != "del" for k, _ in line)]
    assert [x for x in before if x] == [x for x in old if x] and [x for x in after if x] == [x for x in new if x]
