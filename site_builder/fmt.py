"""`fmt`: rewrite only the derived content a document already has (spec §3.5 writer).

Status line, count sentence, item tags and echoed claims, and the Dependents list are
recomputed; every other line is kept byte for byte, as are the file's spelling, line
ends, BOM and final newline. Running it twice changes nothing the second time.
"""

from __future__ import annotations

import re

from .checks import echo_of, kind_of
from .evaluate import Evaluation
from .model import Belief
from .parse.document import CHALLENGE, COUNT, DEPENDENT, ITEM, STATUS, Document

__all__ = ["format_document"]


def _status(match: re.Match, belief: Belief, ev: Evaluation, stated_kind: str | None) -> str:
    tv = match.group("tv")
    if tv != "STALE":  # STALE is data: a retraction mark
        tv = belief.declared if belief.is_premise else ev.value(belief.id)
    kind = kind_of(belief)
    line = f"{match.group('b1') or ''}{tv}{match.group('b2') or ''}{match.group('dot') or ''} {kind}"
    if kind == "derived" and (match.group("depth") is not None or stated_kind != kind):
        line += f" (depth {ev.depth[belief.id]})"
    if match.group("source") is not None:
        before = match.end("depth") + 1 if match.group("depth") else match.end("kind")
        line += match.string[before: match.start("source")] + match.group("source")
    return line


def _item(match: re.Match, ev: Evaluation) -> str:
    ref = match.group("lid") or match.group("bid")
    target = ev.network.beliefs.get(ref)
    if target is None:  # external: its tag is an assumption, not derived content
        return match.string
    line = match.group("prefix") or ""
    if match.group("tag"):
        line += ev.value(ref) + " "
    line += match.group("ref")
    if match.group("rest") is not None:
        line += " — " + echo_of(target)
    return line + match.string[match.end():]


def _new_dependent(ref: str, ev: Evaluation, style: re.Match | None, markdown: bool) -> str:
    prefix = (style.group("prefix") or "") if style else ("- " if markdown else "")
    tagged = bool(style.group("tag")) if style else True
    echoed = style.group("rest") is not None if style else True
    line = prefix + (ev.value(ref) + " " if tagged else "") + ref
    return line + (" — " + echo_of(ev.network.beliefs[ref]) if echoed else "")


def _dependents_block(doc: Document, ev: Evaluation) -> tuple[int, int, list[str]] | None:
    """(first, last, new lines) replacing lines[first:last] with the computed list."""
    if doc.stated.dependents is None or doc.belief is None:
        return None
    indexes = [k for k, line in enumerate(doc.lines) if line.role == DEPENDENT]
    style = doc.lines[indexes[0]].match if indexes else None
    beliefs = ev.network.beliefs
    computed = sorted({d.id for d in ev.dependents[doc.belief.id]})
    external = [doc.lines[k].text.rstrip() for k in indexes
                if (doc.lines[k].match.group("lid") or doc.lines[k].match.group("bid")) not in beliefs]
    new = [_new_dependent(ref, ev, style, doc.markdown) for ref in computed] + external
    if indexes:
        return indexes[0], indexes[-1] + 1, new
    if not new:
        return None
    anchor = doc.dependents_anchor + 1
    return anchor, anchor, ["", *new]


def format_document(doc: Document, ev: Evaluation) -> str:
    """The document's text with its derived content refreshed."""
    belief = doc.belief
    if belief is None or ev.network.beliefs.get(belief.id) is not belief:
        return doc.source.text
    out: list[str] = []
    dropped = False  # the count sentence, which a single justification has none of (spec §2.3)
    for line in doc.lines:
        if dropped and not line.text.strip() and out and not out[-1].strip():
            dropped = False  # its blank line too: one blank stays between the parts
            continue
        dropped = False
        if line.role == STATUS:
            out.append(_status(line.match, belief, ev, doc.stated.kind))
        elif line.role == COUNT and len(belief.justifications) <= 1:
            dropped = True
        elif line.role == COUNT:
            out.append(re.sub(r"\d+", str(len(belief.justifications)), line.text, count=1))
        elif line.role in (ITEM, CHALLENGE, DEPENDENT):
            # A challenge's " — defeated by X" tail lies outside the item match.
            out.append(_item(line.match, ev) + line.text.rstrip()[len(line.match.string):])
        else:
            out.append(line.text)
    block = _dependents_block(doc, ev)
    if block:
        first, last, new = block
        out[first:last] = new
    return "\n".join(out)


def encode(doc: Document, text: str) -> bytes:
    """Text -> bytes in the document's own line ends and BOM."""
    if doc.source.crlf:
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if doc.source.had_bom else "") + text).encode("utf-8")
