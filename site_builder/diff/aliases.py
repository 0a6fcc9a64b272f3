"""Aliases (spec §3.3): old ids that keep published links working after a rename.

- `redirects(network)`: alias -> current id, for the redirect pages a build writes;
- `alias_problems(network)`: E411 for aliases that cannot redirect;
- `vanished(base, head)`: E410 for each base id gone from the head with no alias, and each
  base alias gone (`check --base REV`): a published `belief/<id>/` link would break.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from ..diagnostics import Diagnostic
from ..ids import document_path, id_problem
from ..model import Belief, Network
from .fields import aliases_of

if TYPE_CHECKING:
    from .sides import Side

__all__ = ["redirects", "alias_problems", "vanished", "CODES"]

#: Diagnostic codes of this module (to merge into diagnostics.CODES).
CODES = {
    "E410": "a belief id or alias of the base revision is gone and no belief lists it in `aliases`",
    "E411": "alias is not a valid id, is a live belief's id, or is listed by two beliefs",
}


def _claims(beliefs: Mapping[str, Belief]) -> dict[str, list[str]]:
    """alias -> ids listing it, in id order."""
    claims: dict[str, list[str]] = {}
    # Few beliefs list aliases: sort only those (three times a build, over every belief)
    for belief_id in sorted(i for i, b in beliefs.items() if b.metadata.get("aliases")):
        for alias in aliases_of(beliefs[belief_id]):
            if belief_id not in claims.setdefault(alias, []):
                claims[alias].append(belief_id)
    return claims


def redirects(network: Network) -> dict[str, str]:
    """alias -> id for every alias that can have a redirect page (valid, not a live id;
    the first belief by id wins a contested alias)."""
    beliefs = network.beliefs
    return {alias: owners[0] for alias, owners in sorted(_claims(beliefs).items())
            if alias not in beliefs and id_problem(alias) is None}


def alias_problems(network: Network) -> list[Diagnostic]:
    """E411 for each alias that is invalid, live, or contested."""
    beliefs, found = network.beliefs, []
    for alias, owners in sorted(_claims(beliefs).items()):
        first = beliefs[owners[0]]
        problem = id_problem(alias)
        if problem:
            found.append(_at(first, f"alias {alias!r} of {first.id!r} is not a valid id: {problem}"))
        elif alias in beliefs:
            found.append(_at(first, f"alias {alias!r} of {first.id!r} is the id of an existing "
                                    "belief: no redirect is written",
                             "remove the alias, or rename or delete the other belief"))
        for other in owners[1:]:
            found.append(_at(beliefs[other], f"alias {alias!r} is also listed by {first.id!r}: "
                                             f"the redirect goes to {first.id!r}"))
    return found


def _unreadable(side: Side, ids) -> set[str]:
    """Of `ids`, those whose document the side holds but could not read (an error at
    `.../<id path>.md`): not gone, and its own errors say what is wrong."""
    failed = [d.path for d in side.diagnostics if d.severity == "error" and d.path.endswith(".md")]
    found = set()
    for belief_id in ids:
        where = str(document_path(belief_id))
        if any(path == where or path.endswith("/" + where) for path in failed):
            found.add(belief_id)
    return found


def _at(belief: Belief, message: str, hint: str = "") -> Diagnostic:
    return Diagnostic(belief.path, belief.line, "E411", message, hint)


def vanished(base: Side, head: Side) -> list[Diagnostic]:
    """E410 for every base id missing from the head that no head belief lists as an alias, and
    for every alias of the base (a redirect page) the head neither keeps nor uses as an id."""
    from .compare import ALIAS, find_renames  # here: builds need the aliases, not the comparison

    renames = find_renames(base, head)
    gone = sorted(i for i in base.beliefs if i not in head.beliefs)
    unreadable = _unreadable(head, gone) if gone else set()
    found = []
    for old in gone:
        new, via = renames.get(old, (None, None))
        if via == ALIAS or old in unreadable:  # its file is there: its own errors say what is wrong
            continue
        if new is not None:
            belief = head.beliefs[new]
            found.append(Diagnostic(
                belief.path, belief.line, "E410",
                f"{new!r} looks like {old!r} of {base.label} renamed (same claim) but lists no "
                f"alias: links to {old!r} break",
                f"add `aliases: [{old}]` to its front matter (network.json: metadata.aliases)"))
            continue
        gone = base.beliefs[old]
        found.append(Diagnostic(
            gone.path or base.label, gone.line, "E410",
            f"{old!r} of {base.label} is gone and no belief lists it in `aliases`: "
            "published links to it break",
            "retract it instead of deleting it, or add it to the `aliases` of the belief "
            "that replaces it"))
    # The base's redirect pages are published links too: an alias dropped breaks one.
    kept = set(head.beliefs) | set(redirects(head.evaluation.network))
    for alias, owner in sorted(redirects(base.evaluation.network).items()):
        if alias in kept:
            continue
        now = owner if owner in head.beliefs else renames.get(owner, (None, None))[0]
        where = head.beliefs[now] if now is not None else base.beliefs[owner]
        found.append(Diagnostic(
            where.path or base.label, where.line, "E410",
            f"alias {alias!r} of {owner!r} in {base.label} is gone: its redirect page goes, and "
            "published links to it break", f"keep {alias!r} in the `aliases` of "
            f"{now!r}" if now is not None else "keep it in the `aliases` of the belief that replaces it"))
    return found
