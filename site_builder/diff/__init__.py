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

from importlib import import_module

_MODULES = {
    "aliases": ("CODES", "alias_problems", "redirects", "vanished"),
    "compare": ("compare", "find_renames"),
    "records": ("Edited", "Entry", "FieldChange", "Flip", "NetworkDiff", "Renamed", "to_json"),
    "report": ("FORMATS", "render", "summary_line"),
    "sides": ("Side", "read_side", "side_of"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = sorted(_HOME)


def __getattr__(name: str):
    """Each name from its module when first asked for: a build needs the aliases alone, and
    comparing two sides (git, flips) is some 0.02 s of imports it would not use."""
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value
