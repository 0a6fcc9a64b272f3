"""Line patterns of the belief document grammar (spec §3.2), shared by reader and writer."""

from __future__ import annotations

import datetime
import difflib
import re

DASH = r"(?:—|--)"
TVS = ("IN", "OUT", "STALE")
KINDS = ("premise", "derived")
DATE_WORDS = ("Created", "Updated", "Reviewed", "Verified", "Retracted")
DATE_FIELDS = dict(zip(DATE_WORDS, ("created_at", "updated_at", "reviewed_at", "verified_at",
                                    "retracted_at")))
SECTIONS = ("summary", "justifications", "challenges", "dependents", "details")
ACCEPTED_TYPES = ("SL", "CP")

STATUS = re.compile(
    rf"(?P<b1>\*\*)?(?P<tv>IN|OUT|STALE)(?P<b2>\*\*)?(?P<dot> ·)? (?P<kind>premise|derived)"
    rf"(?: \(depth (?P<depth>\d+)\))?(?: {DASH} (?P<source>.*))?")
_STATUS_WORDS = re.compile(
    r"\**\s*(?P<tv>[A-Za-z]{2,6})\s*\**\s*[·•:,\-\u2013\u2014]?\s*\**\s*(?P<kind>[A-Za-z]*)\s*\**(?P<rest>.*)")


def looks_like_status(line: str) -> bool:
    """A status line with a typo (§3.2: E205), not claim text such as "IN nodes are…" or
    "In premise logic, …". One of:
    - a truth value in capitals, then a near-miss of `premise`/`derived`, whatever follows
      (`**OUT** - premise`, `IN · premis`);
    - a truth value in other case, or alone, with nothing after but a depth or a source
      (`**In** · premise`, `In derived (depth 2)`, `**IN**`);
    - a near-miss of a truth value in capitals, then a real kind word (`INN premise`).
    """
    match = _STATUS_WORDS.fullmatch(line.strip())
    if not match:
        return False
    tv, kind, rest = match.group("tv"), match.group("kind").lower(), match.group("rest").strip()
    if tv.upper() in TVS:
        if not kind:
            return not rest
        if not difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.7):
            return False
        return tv in TVS or not rest or rest.startswith("(") or rest[:1] in "-\u2013\u2014"
    return tv.isupper() and kind in KINDS and bool(difflib.get_close_matches(tv, TVS, n=1, cutoff=0.4))


_DATES_WORDS = re.compile(rf"\**(?:{'|'.join(DATE_WORDS)})\**\s*:?\s*\**\s*\d{{4}}-\d{{2}}-\d{{2}}\S*.*", re.I)
_REASON_WORDS = re.compile(r"\**\s*reason\s*out\s*\**\s*[:\-\u2013\u2014].*", re.I)


def looks_like_dates(line: str) -> bool:
    """A dates line with a typo (`Created: 2024-01-01`, `created 2024-01-01, Reviewed …`),
    not claim text such as "Created in 2019, …": a date word, then an ISO date."""
    return bool(_DATES_WORDS.fullmatch(line.strip()))


def looks_like_reason(line: str) -> bool:
    """A `Reason OUT:` line with a typo (`Reason out: superseded`, `Reason OUT - x`)."""
    return bool(_REASON_WORDS.fullmatch(line.strip()))


def calendar_date(stamp: str) -> bool:
    """True when an ISO-8601 stamp's date exists (`2024-13-45` does not)."""
    try:
        datetime.date.fromisoformat(stamp[:10])
    except ValueError:
        return False
    return True


DATES = re.compile(
    rf"(?:{'|'.join(DATE_WORDS)}) \S+(?: · (?:{'|'.join(DATE_WORDS)}) \S+)*")
DATE_PART = re.compile(rf"(?P<word>{'|'.join(DATE_WORDS)}) (?P<stamp>\S+)")
REASON = re.compile(r"(?:\*\*)?Reason OUT:(?:\*\*)? (?P<reason>.*\S)")
ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")

HEADING = re.compile(r"## (?P<name>.+)")
BARE_MARKER = re.compile(r"(?P<name>[A-Za-z]+):?")

COUNT = re.compile(rf"This belief has (?P<n>\d+) justifications {DASH} it is IN if any one holds\.")
JHEADER = re.compile(rf"(?:### )?(?P<type>[A-Z][A-Z0-9_-]*)(?: {DASH}(?: (?P<label>.*))?)?")
"""A justification's header; the label is optional, and so is the dash before an empty one (`### SL —`)."""
JHEADER_DASH_TYPO = re.compile(r"(?:### )?(?P<type>[A-Z][A-Z0-9_]*) ?(?:-|\u2013|:) (?P<label>.*)")
"""A header whose label follows a hyphen, an en dash or a colon (`### SL - label`)."""
ANTE_HEADER = re.compile(
    r"(?:Antecedents \(all must be IN\):|\*\*Antecedents\*\* \(all must be IN\):|Antecedents:)")
UNLESS_HEADER = re.compile(
    r"(?:Unless \(all must be OUT\):|Unless \(any of these IN defeats this justification\):"
    r"|\*\*Unless\*\* \([^)]*\):|Unless:)")
ITEM = re.compile(
    rf"(?P<prefix>- |\* )?(?:(?P<tag>IN|OUT|\?) )?"
    rf"(?P<ref>\[(?P<lid>[^\]\s]+)\]\((?P<url>[^)\s]*)\)|(?P<bid>[^\s\[\]()]+))"
    rf"(?P<rest> {DASH}(?: (?P<echo>.*))?)?")
DEFEATED = re.compile(rf"(?P<head>.*?) {DASH} defeated by (?P<by>\[[^\]]+\]\([^)]*\)|\S+)")
DEPENDENTS_SENTENCE = "These beliefs depend on this one:"
CHALLENGES_SENTENCE = re.compile(r"This belief has \d+ challenges?\b.*")
DETAILS_ROW = re.compile(r"(?:\| *)?(?P<key>Source|Created|Updated|Reviewed|Verified|Retracted)"
                         r"(?: *\| *| )(?P<value>.*?)(?: *\|)?")


_HASHES = re.compile(r"(?P<marks>#{1,6}) ?(?P<name>[A-Za-z]+):?")
_BOLD = re.compile(r"\*\*(?P<name>[A-Za-z]+):?\*\*:?")
MISSPELT = "?"
"""Prefix of the name `marker_name` gives a misspelt heading of a section (E301 says how to write it)."""


def marker_name(line: str, after_blank: bool) -> str | None:
    """The lower-cased section name a line opens, or None (`## X` or bare `X` after a blank).
    A section's name in another heading's spelling (`### Justifications`, `**Summary**`, a
    bare `Justification` after a blank) opens one too, named MISSPELT + the section: a typo
    must not turn the justifications into claim text (§3.2)."""
    heading = HEADING.fullmatch(line)
    if heading:
        return heading.group("name").strip().rstrip(":").lower()
    bare = BARE_MARKER.fullmatch(line)
    if after_blank and bare and bare.group("name").lower() in SECTIONS:
        return bare.group("name").lower()
    near = _HASHES.fullmatch(line) or _BOLD.fullmatch(line) or (bare if after_blank else None)
    section = _section_named(near.group("name")) if near else None
    return MISSPELT + section if section else None


def _section_named(word: str) -> str | None:
    """The section a heading's word names, singular or plural (`Justification`)."""
    word = word.lower()
    return word if word in SECTIONS else word + "s" if word + "s" in SECTIONS else None


def item_id(match: re.Match) -> str:
    """The belief id an ITEM match refers to."""
    return match.group("lid") or match.group("bid")
