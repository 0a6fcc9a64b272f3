"""`belief-summaries.json`: the summaries of a network.json's beliefs, in a file beside it.

network.json has no summary field (spec §2.1): the wiki keeps them in this sidecar, an object
of id -> summary text, and `export` writes it (spec §2.3 table). `import` reads it back, so
documents -> network.json -> documents keeps every Summary section.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..config import holds_surrogate
from ..diagnostics import Diagnostic

__all__ = ["SUMMARIES", "beside", "read_summaries", "write_summaries"]

SUMMARIES = "belief-summaries.json"


def beside(network_json: Path) -> Path:
    """Where a network.json's summaries are."""
    return network_json.with_name(SUMMARIES)


def read_summaries(path: Path, ids) -> tuple[dict[str, str], list[Diagnostic]]:
    """The summaries in `path` of beliefs among `ids` (none when there is no such file), and
    what is wrong: E601 not JSON, E602 not an object of texts, W604 an id not in the network."""
    shown = str(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [Diagnostic(shown, 0, "E601", f"cannot read the summaries: {exc}")]
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as exc:
        line = getattr(exc, "lineno", 1)
        return {}, [Diagnostic(shown, line, "E601", f"not valid JSON: {getattr(exc, 'msg', exc)}")]
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        return {}, [Diagnostic(shown, 1, "E602", "must be an object of belief id -> summary text")]
    if any(holds_surrogate(k) or holds_surrogate(v) for k, v in data.items()):
        return {}, [Diagnostic(shown, 1, "E602", "holds a lone UTF-16 surrogate escape (such as \\ud800), "
                                                 "which no UTF-8 document can hold")]
    found = [Diagnostic(shown, 1, "W604", f"{i!r} is not a belief of the network: its summary is not read")
             for i in sorted(data) if i not in ids]
    return {i: s for i, s in data.items() if i in ids}, found


def write_summaries(summaries: dict[str, str]) -> bytes:
    """The sidecar's bytes: ids sorted, two-space indent, as network.json is written."""
    return json.dumps(dict(sorted(summaries.items())), indent=2, ensure_ascii=False).encode("utf-8") + b"\n"
