"""What an edit changed, word by word: for the changes page and the pull-request comment
(difflib does the matching).

A text diff is a list of lines, each a list of segments `(kind, text)`, kind `same`, `del`
or `ins`, not escaped (their readers escape them). Lines that stayed are kept, a changed
line is matched word by word, removed and added lines are whole.
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from typing import Iterator

__all__ = ["Segment", "Line", "words", "lines"]

Segment = tuple[str, str]
Line = list[Segment]

_TOKENS = re.compile(r"\s+|\w+|[^\w\s]")
"""Words, runs of spaces and single punctuation marks: an edit of one word marks that word."""

MAX_CHARS = 3000
"""Past this many characters, old and new together, both are shown whole: matching is
quadratic in the worst case (texts are untrusted: 0.08 s for the worst 3,000 characters),
and claims run to about 1,100 characters."""


def words(old: str, new: str) -> Line:
    """One line's changes: the words removed from `old` and added in `new`, in place. A
    space alone between two changes joins them ("to stabilize" -> "so that" reads as one
    change, not two), as a reader would mark it."""
    if len(old) + len(new) > MAX_CHARS:
        return _merged([("del", old), ("ins", new)])
    a, b = _TOKENS.findall(old), _TOKENS.findall(new)
    runs = [("".join(a[i1:i2]), "".join(b[j1:j2]), op == "equal")
            for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes()]
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
    """Line by line: unchanged lines as they are, changed ones word by word (paired in
    order), the rest removed or added whole."""
    return list(_lines(old, new))


def _lines(old: list[str], new: list[str]) -> Iterator[Line]:
    if sum(map(len, old)) + sum(map(len, new)) > MAX_CHARS:
        yield from ([("del", line)] for line in old)
        yield from ([("ins", line)] for line in new)
        return
    for op, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op == "equal":
            yield from ([("same", line)] for line in old[i1:i2])
            continue
        paired = min(i2 - i1, j2 - j1) if op == "replace" else 0
        for k in range(paired):
            yield words(old[i1 + k], new[j1 + k])
        yield from ([("del", line)] for line in old[i1 + paired:i2])
        yield from ([("ins", line)] for line in new[j1 + paired:j2])


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
