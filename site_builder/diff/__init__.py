"""Diff: what a change does to a belief network (issue 6).

Two sides (folders, network.json files or git revisions) are read and evaluated, then
compared into frozen records: beliefs added, removed, edited and renamed, and every status
flip with its cause and the path of justifications that carries it.

    base = read_side("git:origin/main")            # or side_of(label, evaluation)
    diff = compare(base, read_side("beliefs"))
    render(diff, "markdown")

Hosts: `belief-site diff` (review.py), `build --diff-base` (the changes page),
`check --base` (`vanished`: published ids must not disappear without an alias).
"""

from __future__ import annotations

from .aliases import CODES, alias_problems, redirects, vanished
from .compare import compare, find_renames
from .records import Edited, Entry, FieldChange, Flip, NetworkDiff, Renamed, to_json
from .report import FORMATS, render, summary_line
from .sides import Side, read_side, side_of

__all__ = [
    "CODES", "FORMATS", "Edited", "Entry", "FieldChange", "Flip", "NetworkDiff", "Renamed",
    "Side", "alias_problems", "compare", "find_renames", "read_side", "redirects", "render",
    "side_of", "summary_line", "to_json", "vanished",
]
