"""What an edit changed, word by word: for the changes page and the pull-request comment.

A text diff is a list of lines, each a list of segments `(kind, text)`, kind `same`, `del`
or `ins`, not escaped (their readers escape them). Lines that stayed are kept, a changed
line is matched word by word with the old line most like it, other lines are removed or
added whole (a blank one as an empty segment).

The matching is rapidfuzz's Indel (longest common subsequence, bit-parallel): its time is
bounded by the lengths alone. difflib's, on untrusted text, was not: two 3,000-character
claims that share only spaces took it 9 s, and 200 such edits would hold a preview build
for half an hour.
"""

from __future__ import annotations

import re
from typing import Iterator


__all__ = ["Segment", "Line", "words", "lines"]

Segment = tuple[str, str]
Line = list[Segment]

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")
"""Words, runs of spaces and single punctuation marks: an edit of one word marks that word."""

MAX_TOKENS = 10_000
"""Past this many tokens (or lines), old and new together, both are shown whole (the
matching keeps a bit per pair of tokens: 1.5 MB here)."""

ALIKE = 0.5
"""How much of two lines must be common for one to read as an edit of the other."""

PAIRINGS = 10_000
"""Past this many pairs of old and new lines in one changed block, none is compared."""


def _indel():
    """rapidfuzz's Indel, imported on first use: 48 modules every build would otherwise read
    (a changes page or a PR comment uses it; most builds do not)."""
    from rapidfuzz.distance import Indel
    return Indel


def _numbered(a: list[str], b: list[str]) -> tuple[list[int], list[int]]:
    """Both sequences with each distinct string as a number: rapidfuzz compares a one-character
    string by its code point and a longer one by its hash, so "" (hash 0) and "\\x00" would
    match."""
    numbers: dict[str, int] = {}
    return [numbers.setdefault(x, len(numbers)) for x in a], [numbers.setdefault(x, len(numbers)) for x in b]


def words(old: str, new: str) -> Line:
    """One line's changes: the words removed from `old` and added in `new`, in place. A
    space alone between two changes joins them ("to stabilize" -> "so that" reads as one
    change, not two), as a reader would mark it."""
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    if len(a) + len(b) > MAX_TOKENS:
        return _merged([("del", old), ("ins", new)])
    runs = [("".join(a[op.src_start:op.src_end]), "".join(b[op.dest_start:op.dest_end]), op.tag == "equal")
            for op in _indel().opcodes(*_numbered(a, b))]
    found: Line = []
    pending: tuple[str, str] = ("", "")
    for k, (was, now, same) in enumerate(runs):
        if same and not (was.isspace() and 0 < k < len(runs) - 1):
            found += [("del", pending[0]), ("ins", pending[1]), ("same", was)]
            pending = ("", "")
        else:
            pending = (pending[0] + was, pending[1] + now)
    return _merged(found + [("del", pending[0]), ("ins", pending[1])])


def lines(old: list[str], new: list[str]) -> list[Line]:
    """Line by line: unchanged lines as they are, each changed one word by word with the
    next new line like it, the rest removed or added whole."""
    if len(old) + len(new) > MAX_TOKENS:
        return [*([("del", line)] for line in old), *([("ins", line)] for line in new)]
    found: list[Line] = []
    was: list[str] = []
    now: list[str] = []
    for op in _indel().opcodes(*_numbered(old, new)):  # a removal and an addition side by side: one changed block
        if op.tag != "equal":
            was += old[op.src_start:op.src_end]
            now += new[op.dest_start:op.dest_end]
            continue
        found += _replaced(was, now)
        found += ([("same", line)] for line in old[op.src_start:op.src_end])
        was, now = [], []
    return found + list(_replaced(was, now))


def _replaced(old: list[str], new: list[str]) -> Iterator[Line]:
    """A block of changed lines, in order: a line rewritten, or each old line paired with the
    first new line like it that follows the last pair (a blank line is like none)."""
    if len(old) * len(new) > PAIRINGS:
        yield from ([("del", line)] for line in old)
        yield from ([("ins", line)] for line in new)
        return
    if len(old) == len(new) == 1 and old[0].strip() and new[0].strip():  # one line rewritten
        yield words(old[0], new[0])
        return
    j = 0
    for line in old:
        k = next((k for k in range(j, len(new)) if _alike(line, new[k])), None)
        if k is None:
            yield [("del", line)]
            continue
        yield from ([("ins", added)] for added in new[j:k])
        yield words(line, new[k])
        j = k + 1
    yield from ([("ins", added)] for added in new[j:])


def _alike(a: str, b: str) -> bool:
    if not (a.strip() and b.strip()):
        return False
    x, y = _TOKENS.findall(a), _TOKENS.findall(b)
    return len(x) + len(y) <= MAX_TOKENS and _indel().normalized_similarity(*_numbered(x, y)) >= ALIKE


def _merged(segments: Line) -> Line:
    """Empty segments dropped, neighbours of one kind joined."""
    out: Line = []
    for kind, text in segments:
        if not text:
            continue
        if out and out[-1][0] == kind:
            out[-1] = (kind, out[-1][1] + text)
        else:
            out.append((kind, text))
    return out
