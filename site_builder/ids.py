"""Belief ids and the only place they become file paths (spec §3.1).

ID := SEG [":" SEG]; SEG := [a-z0-9]([a-z0-9.-]*[a-z0-9])?; at most 200 characters;
no Windows device names. A namespaced id `ns:local` lives at `ns/local.md`. No id, nor the
local part of one, is the name of a file of a belief's own folder (`ns:badge.svg` would be the
folder `belief/ns/badge.svg/`, where belief `ns` writes its badge).
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

_SEG = r"[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?"
_ID = re.compile(rf"{_SEG}(?::{_SEG})?")
MAX_LEN = 200
FOLDER_FILES = frozenset(("index.html", "index.json", "badge.svg", "badge.json"))
"""The files of a belief's folder (urls.py)."""
_DEVICES = {"con", "prn", "aux", "nul", "conin$", "conout$"} | {
    f"{p}{n}" for p in ("com", "lpt") for n in "0123456789¹²³"}


def id_problem(belief_id: object) -> str | None:
    """Why `belief_id` is not a valid id, or None when it is."""
    if not isinstance(belief_id, str):
        return "id must be a string"
    if not belief_id:
        return "id is empty"
    if len(belief_id) > MAX_LEN:
        return f"id is {len(belief_id)} characters long (at most {MAX_LEN})"
    if not _ID.fullmatch(belief_id):
        return ("id must be lower-case letters, digits, '.' and '-' (starting and ending with "
                "a letter or digit), optionally 'namespace:local'")
    for seg in belief_id.split(":"):
        # Windows treats `con.md` and `con.txt.md` alike: compare the part before the first dot.
        if seg.split(".")[0] in _DEVICES:
            return f"'{seg}' is a reserved device name on Windows"
    local = belief_id.rpartition(":")[2]
    if local in FOLDER_FILES:  # plain too: MkDocs writes its listing at belief/index.html
        return f"'{local}' is the name of a file in every belief's folder: its page would take that file's place"
    return None


def is_valid_id(belief_id: object) -> bool:
    """True when `belief_id` follows the id rules."""
    return id_problem(belief_id) is None


def document_path(belief_id: str) -> PurePosixPath:
    """Relative path of the document for a valid id: `a.md` or `ns/local.md`."""
    problem = id_problem(belief_id)
    if problem:
        raise ValueError(f"invalid id {belief_id!r}: {problem}")
    parts = belief_id.split(":")
    parts[-1] += ".md"  # not with_suffix: ids may contain dots
    return PurePosixPath(*parts)


def id_from_document_path(relative: PurePosixPath) -> str:
    """The id a document path implies (`ns/local.md` -> `ns:local`), unvalidated."""
    parts = list(relative.parts)
    parts[-1] = parts[-1][:-3] if parts[-1].endswith(".md") else parts[-1]
    return ":".join(parts)
