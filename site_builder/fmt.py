"""`fmt`: rewrite only the derived content a document already has (spec §3.5 writer).

Status line, count sentence, item tags and echoed claims, and the Dependents list are
recomputed; every other line is kept byte for byte, as are the file's spelling, line
ends, BOM and final newline. Running it twice changes nothing the second time.
"""

from __future__ import annotations

import posixpath
import re

from .checks import echo_of, kind_of
from .evaluate import Evaluation
from .ids import document_path
from .model import Belief
from .parse.document import CHALLENGE, COUNT, DATA, DEPENDENT, ITEM, STATUS, Document
from .parse.grammar import item_id, marker_name

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


def _new_dependent(doc: Document, ref: str, ev: Evaluation, style: re.Match | None) -> str:
    """A line for a dependent the document does not list yet, in the style of its first item
    (a Markdown link too: to the dependent's document, from this one's folder)."""
    prefix = (style.group("prefix") or "") if style else ("- " if doc.markdown else "")
    tagged = bool(style.group("tag")) if style else True
    echoed = style.group("rest") is not None if style else True
    shown = ref
    if style and style.group("lid"):
        folder = posixpath.dirname(doc.source.relative.as_posix()) or "."
        shown = f"[{ref}]({posixpath.relpath(document_path(ref).as_posix(), folder)})"
    line = prefix + (ev.value(ref) + " " if tagged else "") + shown
    return line + (" — " + echo_of(ev.network.beliefs[ref]) if echoed else "")


def _dependents_block(doc: Document, ev: Evaluation, out: list[str], at: list[int]) -> tuple[int, int, list[str]] | None:
    """(first, last, new lines) replacing out[first:last] with the computed list; `out` holds
    the document's lines refreshed one by one, line k of the document at out[at[k]]. Items
    listed already keep their spelling (a link's target too); lines a person wrote between
    items (W310) stay after the item above them, or go to the end when it went."""
    if doc.stated.dependents is None or doc.belief is None:
        return None
    indexes = [k for k, line in enumerate(doc.lines) if line.role == DEPENDENT]
    beliefs = ev.network.beliefs
    computed = sorted({d.id for d in ev.dependents[doc.belief.id]})
    if not indexes:
        if not computed:
            return None
        anchor = at[doc.dependents_anchor + 1]
        return anchor, anchor, ["", *(_new_dependent(doc, ref, ev, None) for ref in computed)]
    end = _notes_end(doc, indexes[-1] + 1)
    listed: dict[str, str] = {}
    notes: dict[str, list[str]] = {}
    external: list[str] = []
    for k, after in zip(indexes, [*indexes[1:], end]):
        ref = item_id(doc.lines[k].match)
        between = out[at[k] + 1:at[after]]
        if ref not in beliefs and ref not in listed:
            external.append(ref)
        listed.setdefault(ref, out[at[k]].rstrip())
        if any(line.strip() for line in between):
            notes.setdefault(ref, []).extend(between)
    style = doc.lines[indexes[0]].match
    new: list[str] = []
    for ref in [*computed, *external]:
        new.append(listed.get(ref) or _new_dependent(doc, ref, ev, style))
        new += notes.pop(ref, [])
    new += [line for lines in notes.values() for line in lines]  # after items no longer listed
    return at[indexes[0]], at[end], new


def _notes_end(doc: Document, k: int) -> int:
    """Past the lines written right below the last item, with no blank line between (a note
    on it): they move with it."""
    while k < len(doc.lines) and doc.lines[k].role == DATA and doc.lines[k].text.strip() \
            and not marker_name(doc.lines[k].text.rstrip(), False):
        k += 1
    return k


def format_document(doc: Document, ev: Evaluation) -> str:
    """The document's text with its derived content refreshed."""
    belief = doc.belief
    if belief is None or ev.network.beliefs.get(belief.id) is not belief:
        return doc.source.text
    out: list[str] = []
    at: list[int] = []  # where each line of the document went in `out`
    dropped = False  # the count sentence, which a single justification has none of (spec §2.3)
    for line in doc.lines:
        at.append(len(out))
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
    at.append(len(out))
    block = _dependents_block(doc, ev, out, at)
    if block:
        first, last, new = block
        out[first:last] = new
    return "\n".join(out)


def encode(doc: Document, text: str) -> bytes:
    """Text -> bytes in the document's own line ends and BOM."""
    if doc.source.crlf:
        text = text.replace("\n", "\r\n")
    return (("\ufeff" if doc.source.had_bom else "") + text).encode("utf-8")
