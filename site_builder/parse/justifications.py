"""The Justifications section: JBLOCKs with Antecedents and Unless items (spec §3.2)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..diagnostics import quoted
from ..ids import id_problem
from ..model import Justification
from . import grammar as g
from .fields import UNKNOWN_TYPE_HINT

if TYPE_CHECKING:
    from .document import _Reader


class _Block:
    """A justification being read."""

    def __init__(self, line: int, jtype: str, label: str):
        self.line, self.type, self.label = line, jtype, label
        self.lists: dict[str, list] = {"ante": [], "out": []}
        self.current: str | None = None
        self.headers: dict[str, int] = {}
        self.refused: set[str] = set()
        """Lists with an item that was an error: not "empty" (W309) for want of it."""

    def build(self) -> Justification:
        ante, out = self.lists["ante"], self.lists["out"]
        return Justification(
            self.type, tuple(i for i, _, _ in ante), tuple(i for i, _, _ in out), self.label,
            line=self.line, ante_lines=tuple(n for _, n, _ in ante),
            out_lines=tuple(n for _, n, _ in out), ante_tags=tuple(t for _, _, t in ante),
            out_tags=tuple(t for _, _, t in out))


def read_justifications(r: _Reader, start: int, end: int):
    """Lines [start, end) -> (justifications, (count, line) or None)."""
    from .document import COUNT, ITEM

    blocks: list[_Block] = []
    count = None
    for k in range(start, end):
        line = r.body(k)
        if not line:
            continue
        block = blocks[-1] if blocks else None
        if g.COUNT.fullmatch(line) and not blocks:
            r.mark(k, COUNT, g.COUNT.fullmatch(line))
            count = (int(g.COUNT.fullmatch(line).group("n")), k + 1)
        elif block and g.ANTE_HEADER.fullmatch(line):
            _open_list(r, block, "ante", k)
        elif block and g.UNLESS_HEADER.fullmatch(line):
            _open_list(r, block, "out", k)
        elif (item := g.ITEM.fullmatch(line)) and block and block.current and \
                not id_problem(g.item_id(item)):
            r.mark(k, ITEM, item)
            block.lists[block.current].append((g.item_id(item), k + 1, item.group("tag")))
        elif header := g.JHEADER.fullmatch(line):
            blocks.append(_new_block(r, k, header))
        elif header := g.JHEADER_DASH_TYPO.fullmatch(line):  # read on, so its lists are not errors too
            r.diag(k, "E304", f"justification header {quoted(line)}: the label follows ' — ' (an em dash) or ' -- '",
                   f"write '### {header.group('type')} — {header.group('label')}'")
            blocks.append(_new_block(r, k, header))
        elif item and not id_problem(g.item_id(item)):
            r.diag(k, "E305", f"item {quoted(line)} is outside an Antecedents or Unless block",
                   "put 'Antecedents (all must be IN):' or 'Unless (all must be OUT):' before it")
        elif item and item.group("prefix") and block and block.current:
            block.refused.add(block.current)
            r.diag(k, "E304", f"item {quoted(line)}: {id_problem(g.item_id(item))}",
                   "write the id as its file is named")
        else:
            r.diag(k, "E304", f"unparseable line in Justifications: {quoted(line)}",
                   "expected a 'SL — label' header, an Antecedents/Unless line or an item")
    for block in blocks:
        _check_block(r, block)
    return tuple(b.build() for b in blocks), count


def _new_block(r: _Reader, k: int, header) -> _Block:
    jtype = header.group("type")
    if jtype not in g.ACCEPTED_TYPES:
        r.diag(k, "E303", f"unknown justification type {jtype!r}", UNKNOWN_TYPE_HINT)
    return _Block(k + 1, jtype, header.group("label") or "")


def _open_list(r: _Reader, block: _Block, which: str, k: int) -> None:
    if which in block.headers:
        r.diag(k, "E304", "second " + ("Antecedents" if which == "ante" else "Unless")
               + " block in one justification", "merge the two lists")
    block.headers[which] = k
    block.current = which


def _check_block(r: _Reader, block: _Block) -> None:
    """W309 for one justification (W306-W308 are network checks, evaluate)."""
    for which, k in block.headers.items():
        if not block.lists[which] and which not in block.refused:
            r.diag(k, "W309", "empty " + ("Antecedents" if which == "ante" else "Unless") + " block",
                   "delete the line or add items")
