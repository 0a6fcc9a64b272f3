"""Diagnostics: every problem as `path:line: CODE message` (spec §3.5).

The core only collects these; hosts decide how to print them and which exit code follows.
"""

from __future__ import annotations

import errno
import json
import os
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable

ERROR = "error"
WARNING = "warning"

#: code -> one-line meaning (spec §3.5); the first letter gives the severity.
CODES = {
    "E101": "bytes are not valid UTF-8",
    "E102": "empty or whitespace-only file",
    "W103": "byte-order mark present (stripped)",
    "E104": "NUL, lone CR or other control character",
    "E105": "front matter unterminated, invalid, not a map, or duplicate key",
    "E106": "unknown front matter key",
    "E107": "a field given twice with different values (front matter and body, or two places in the body)",
    "E201": "no title line",
    "E202": "id violates the id rules (spec §3.1)",
    "E203": "id does not match the file path",
    "E204": "same id in two files",
    "E205": "malformed status line",
    "W206": "missing status line (IN assumed)",
    "W207": "STALE status (read as OUT, retracted)",
    "W208": "timestamp is not ISO-8601",
    "E209": "no claim text",
    "E301": "unknown section heading",
    "E302": "section repeated",
    "E303": "unknown justification type",
    "E304": "unparseable line in Justifications",
    "E305": "item outside an Antecedents or Unless block",
    "W306": "justification with no antecedents and no outlist (always valid)",
    "W307": "id repeated in one list",
    "W308": "same id in antecedents and outlist (never valid)",
    "W309": "empty Antecedents or Unless block",
    "W310": "unrecognised line in a derived section",
    "W401": "antecedent or outlist id not in the network",
    "W402": "dependent or challenge id not in the network",
    "W403": "self-antecedent (ignored)",
    "E404": "belief in its own outlist (never valid)",
    "W405": "positive cycle (least fixpoint)",
    "W406": "cycle through an outlist (declared values kept)",
    "E410": "a belief id of the base revision is gone and no belief lists it in `aliases`",
    "E411": "alias is not a valid id, is a live belief's id, or is listed by two beliefs",
    "W501": "declared status differs from computed",
    "W502": "OUT with a valid justification and no retraction marker (pinned)",
    "W503": "stale derived content",
    "W504": "inconsistent metadata cross-references",
    "W505": "retraction residue on an IN belief",
    "W506": "nogood with all its beliefs IN",
    "E507": "metadata access_tags is not a string or a list of strings",
    "E601": "network.json not parseable",
    "E602": "bad id, truth value or field type in network.json",
    "W603": "meta.node_count mismatch",
    "W604": "unknown key (kept verbatim)",
    "W605": "nogood names a missing belief",
    "W606": "stray file in the beliefs folder",
    "W607": "the source holds no beliefs",
    "W701": "beliefs.md is a lossy format: this information was not recorded",
    "E702": "beliefs.md line not understood",
    "E801": "output file exists (use --force)",
    "E802": "configuration problem",
    "E803": "search index could not be built (use --no-search)",
    "W804": "cache folder unusable (the build went on without it)",
    "E805": "template error (the theme, or a template of the `templates` folder)",
    "E806": "a file of the build cannot be read or written (the output folder is missing, read-only or full), or a render worker died",
    "W901": "diagram engine failed for one diagram (built-in layout used)",
}


# Control characters (C0, DEL, C1) and the bidirectional formatting ones: a file name (git
# allows a newline or ESC in one) or a network.json text may hold them, and shown as they are
# they would start a line of their own (a GitHub workflow command such as `::add-mask::`),
# drive the terminal, or reorder what a reviewer reads.
UNSHOWABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def shown_path(path: str | os.PathLike) -> str:
    """A file's path as printed for people: each control or bidi character as a Python
    escape (`\\n`, `\\x1b`, `\\u202e`), the rest as it is."""
    return UNSHOWABLE.sub(lambda m: repr(m[0])[1:-1], os.fspath(path))


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem in the input, located at `path:line`."""

    path: str
    line: int
    code: str
    message: str
    hint: str = ""

    @property
    def severity(self) -> str:
        """`error` for E codes, `warning` for W codes."""
        return ERROR if self.code.startswith("E") else WARNING

    def sort_key(self) -> tuple:
        """Order by file, then line, then code."""
        return (self.path, self.line, self.code, self.message)

    def text(self) -> str:
        """`path:line: CODE message` (plus an indented hint)."""
        path = shown_path(self.path)
        where = f"{path}:{self.line}" if self.line else path
        out = f"{where}: {self.code} {self.message}"
        return out + (f"\n    hint: {self.hint}" if self.hint else "")


QUOTED_AT_MOST = 120
"""Characters of a line a message quotes (a 100,000-character line was repeated whole)."""


def short(text: str, limit: int) -> str:
    """`text` cut at `limit` characters with an ellipsis."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def quoted(text: str) -> str:
    """`text` as a message quotes it: repr, cut to QUOTED_AT_MOST characters."""
    return repr(short(text, QUOTED_AT_MOST))


def counted(n: int, word: str, plural: str | None = None) -> str:
    """`1 error`, `2 errors` (`plural` where an s will not do): a count as messages print it."""
    return f"{n} {word if n == 1 else plural or word + 's'}"


def os_problem(exc: OSError) -> str:
    """An OSError as a message: its reason and file; where the path runs through a file
    (`-o notes.txt/site`), that file is named (mkdir says "File exists", open "Not a
    directory", neither says which part)."""
    where = f": {exc.filename}" if exc.filename is not None else ""
    if exc.filename is not None and exc.errno in (errno.EEXIST, errno.ENOTDIR):
        path = Path(os.fsdecode(exc.filename))
        for part in [*reversed(path.parents), *((path,) if exc.errno == errno.ENOTDIR else ())]:
            if part.exists() and not part.is_dir():
                return f"{part} is a file, not a folder{where}"
    return f"{exc.strerror or exc}{where}"


def has_errors(diagnostics: Iterable[Diagnostic], strict: bool = False) -> bool:
    """True when any error (or, with strict, any warning) is present."""
    return any(strict or d.severity == ERROR for d in diagnostics)


def _github_escape(value: str, prop: bool = False) -> str:
    # Workflow-command escaping rules (actions/toolkit `command.ts`).
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def format_github(d: Diagnostic) -> str:
    """A GitHub Actions annotation: `::error file=…,line=…::…`."""
    props = f"file={_github_escape(shown_path(d.path), True)}"
    if d.line:
        props += f",line={d.line}"
    props += f",title={d.code}"
    message = d.message + (f" (hint: {d.hint})" if d.hint else "")
    return f"::{d.severity} {props}::{_github_escape(d.code + ' ' + message)}"


def format_all(diagnostics: Iterable[Diagnostic], fmt: str) -> str:
    """Render diagnostics as `text`, `json` or `github`."""
    items = sorted(diagnostics, key=Diagnostic.sort_key)
    if fmt == "json":
        return json.dumps(
            [{"path": d.path, "line": d.line, "code": d.code, "severity": d.severity,
              "message": d.message, "hint": d.hint} for d in items],
            indent=2, ensure_ascii=False)
    if fmt == "github":
        return "\n".join(format_github(d) for d in items)
    return "\n".join(d.text() for d in folded(items))


def folded(items: Iterable[Diagnostic]) -> list[Diagnostic]:
    """The diagnostics in their order, a hint that several of one code share kept on the first
    of them only, with how many more it is for (one claim edit gave 71 stale echoes, each with
    the same `fmt` hint): for text read top to bottom, not for JSON or annotations."""
    items = list(items)
    sharing = Counter((d.code, d.hint) for d in items if d.hint)
    out, printed = [], set()
    for d in items:
        many = sharing[d.code, d.hint]
        if d.hint and many > 1:
            first = (d.code, d.hint) not in printed
            printed.add((d.code, d.hint))
            d = replace(d, hint=f"{d.hint} (and for the {many - 1} other {d.code} below)" if first else "")
        out.append(d)
    return out
