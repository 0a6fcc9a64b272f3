"""Line patterns of the belief document grammar (spec §3.2), shared by reader and writer."""

from __future__ import annotations

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
_STATUS_WORDS = re.compile(r"\**(?P<tv>[A-Z]{2,6})\**\s*·?\s+(?P<kind>[A-Za-z]+)(?P<rest>.*)")


def looks_like_status(line: str) -> bool:
    """A status line with a typo (§3.2: E205), not claim text such as "IN nodes are…".

    Either a real truth value followed by a near-miss of `premise`/`derived`, or an
    upper-case near-miss of a truth value followed by a real kind word.
    """
    match = _STATUS_WORDS.match(line)
    if not match:
        return False
    tv, kind = match.group("tv"), match.group("kind").lower()
    if tv in TVS:
        return bool(difflib.get_close_matches(kind, KINDS, n=1, cutoff=0.7))
    return kind in KINDS and bool(difflib.get_close_matches(tv, TVS, n=1, cutoff=0.4))
DATES = re.compile(
    rf"(?:{'|'.join(DATE_WORDS)}) \S+(?: · (?:{'|'.join(DATE_WORDS)}) \S+)*")
DATE_PART = re.compile(rf"(?P<word>{'|'.join(DATE_WORDS)}) (?P<stamp>\S+)")
REASON = re.compile(r"(?:\*\*)?Reason OUT:(?:\*\*)? (?P<reason>.*\S)")
ISO = re.compile(
    r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?")

HEADING = re.compile(r"## (?P<name>.+)")
BARE_MARKER = re.compile(r"(?P<name>[A-Za-z]+):?")

COUNT = re.compile(rf"This belief has (?P<n>\d+) justifications {DASH} it is IN if any one holds\.")
JHEADER = re.compile(rf"(?:### )?(?P<type>[A-Z][A-Z0-9_-]*)(?: {DASH} (?P<label>.*))?")
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


def marker_name(line: str, after_blank: bool) -> str | None:
    """The lower-cased section name a line opens, or None (`## X` or bare `X` after a blank)."""
    heading = HEADING.fullmatch(line)
    if heading:
        return heading.group("name").strip().rstrip(":").lower()
    bare = BARE_MARKER.fullmatch(line)
    if after_blank and bare and bare.group("name").lower() in SECTIONS:
        return bare.group("name").lower()
    return None


def item_id(match: re.Match) -> str:
    """The belief id an ITEM match refers to."""
    return match.group("lid") or match.group("bid")
