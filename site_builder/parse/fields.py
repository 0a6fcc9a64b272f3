"""Front matter keys <-> Belief fields, and the merge with the body (spec §3.3)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..model import IN, NODE_FIELDS, OUT, STRING_FIELDS, Justification
from .grammar import ACCEPTED_TYPES

if TYPE_CHECKING:
    from .document import _Reader

FRONT_KEYS = (
    "id", "status", "retracted", "text", "summary", *STRING_FIELDS, "aliases",
    "justifications", "metadata", "extra", "justification_extra", "json_fields",
)
_JUST_KEYS = ("type", "antecedents", "outlist", "label")


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def justification_from_json(data: Any) -> tuple[Justification | None, str | None]:
    """A network.json-shaped justification -> (Justification, None) or (None, problem)."""
    if not isinstance(data, dict):
        return None, "a justification must be a map"
    if not isinstance(data.get("type"), str):
        return None, "justification 'type' must be a string"
    for key in ("antecedents", "outlist"):
        if key in data and not _str_list(data[key]):
            return None, f"justification {key!r} must be a list of ids"
    if "label" in data and not isinstance(data["label"], str):
        return None, "justification 'label' must be a string"
    extra = {k: v for k, v in data.items() if k not in _JUST_KEYS}
    return Justification(data["type"], tuple(data.get("antecedents", ())),
                         tuple(data.get("outlist", ())), data.get("label", ""), extra), None


def unknown_types(justifications: tuple[Justification, ...]) -> list[str]:
    """E303 messages for the justifications of a type other than SL or CP (never valid)."""
    return [f"justification {k + 1} has the unknown type {j.type!r}" for k, j in enumerate(justifications)
            if j.type not in ACCEPTED_TYPES]


UNKNOWN_TYPE_HINT = "use SL (or CP); it is evaluated as never valid"


def front_to_fields(front: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """Validated front matter -> (Belief fields, [(key, problem)])."""
    fields: dict[str, Any] = {}
    problems: list[tuple[str, str]] = []
    for key, value in front.items():
        problem = _take(key, value, fields)
        if problem:
            problems.append((key, problem))
    return fields, problems


def _take(key: str, value: Any, fields: dict[str, Any]) -> str | None:
    """Store one front matter key into fields; return a problem or None."""
    if key in ("id", "text", "summary", *STRING_FIELDS):
        if not isinstance(value, str):
            return "must be a string"
        fields[key] = value
    elif key == "status":
        if value not in (IN, OUT):
            return "must be IN or OUT"
        fields["declared"] = value
    elif key == "retracted":
        if not isinstance(value, bool):
            return "must be true or false"
        fields["retracted"] = value
    elif key == "aliases":
        if not _str_list(value):
            return "must be a list of ids"
        fields["aliases"] = value
    elif key in ("metadata", "extra"):
        if not isinstance(value, dict):
            return "must be a map"
        fields[key] = value
    elif key == "json_fields":
        if not _str_list(value) or not set(value) <= set(NODE_FIELDS):
            return "must be a list of network.json node keys: " + ", ".join(NODE_FIELDS)
        fields["json_fields"] = tuple(value)
    elif key == "justification_extra":
        if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
            return "must be a list of maps"
        fields["justification_extra"] = value
    elif key == "justifications":
        if not isinstance(value, list):
            return "must be a list"
        justs = [justification_from_json(j) for j in value]
        bad = next((p for _, p in justs if p), None)
        if bad:
            return bad
        fields["justifications"] = tuple(j for j, _ in justs)
    return None


def merge_front(r: _Reader, body: dict[str, Any], front: dict[str, Any]) -> dict[str, Any]:
    """Body fields + front matter fields -> Belief kwargs; conflicts are E107 (body wins)."""
    merged = dict(front)
    metadata = dict(merged.pop("metadata", {}))
    aliases = merged.pop("aliases", None)
    jextra = merged.pop("justification_extra", None)
    for key, value in body.items():
        if key == "retract_reason":
            _merge_meta(r, metadata, key, value)
        elif key in merged and merged[key] != value and not _same_justifications(key, merged[key], value):
            r.diag(r._key_line(_front_name(key), len(r.raw)), "E107",
                   f"front matter {_front_name(key)!r} conflicts with the body (body used)")
            merged[key] = value
        else:
            merged[key] = value
    if aliases is not None:
        _merge_meta(r, metadata, "aliases", aliases)
    if jextra is not None:
        merged["justifications"] = _with_extra(merged.get("justifications", ()), jextra)
    merged["metadata"] = metadata
    return merged


def _front_name(key: str) -> str:
    return "status" if key == "declared" else key


def _same_justifications(key: str, a: Any, b: Any) -> bool:
    return key == "justifications" and tuple(a) == tuple(b)


def _merge_meta(r: _Reader, metadata: dict[str, Any], key: str, value: Any) -> None:
    if key in metadata and metadata[key] != value:
        r.diag(r._key_line("metadata" if key == "retract_reason" else key, len(r.raw)), "E107",
               f"metadata {key!r} in front matter conflicts with the body (body used)")
    metadata[key] = value


def _with_extra(justs: tuple[Justification, ...], extra: list[dict]) -> tuple[Justification, ...]:
    out = []
    for index, j in enumerate(justs):
        more = extra[index] if index < len(extra) else {}
        out.append(Justification(j.type, j.antecedents, j.outlist, j.label, {**j.extra, **more},
                                 j.line, j.ante_lines, j.out_lines, j.ante_tags, j.out_tags))
    return tuple(out)
