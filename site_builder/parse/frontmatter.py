"""YAML front matter and `_project.yaml`: JSON-compatible YAML only (spec §3.3).

What comes in is exactly what network.json would carry: strings, numbers, booleans, null,
lists and maps with string keys. Duplicate keys, tags (but `!!str`), anchors, aliases and
numbers JSON cannot hold (`.nan`, `.inf`) are errors. A plain scalar is a number, boolean or
null only where YAML 1.1 and 1.2 agree that it is (`12`, `-1.5`, `2.0e+3`, `true`, `null`);
everything else stays the string it reads as (`no`, `012`, `1:20`, `1_000`, `1e3`, a date),
so no hash, version or stamp is silently turned into another value.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..load import SURROGATE_ESCAPE, joined_surrogates

_PLAIN = (  # (tag, what a plain scalar must match to resolve to it, the characters it can start with)
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("int", r"[-+]?(?:0|[1-9][0-9]*)", "-+0123456789"),
    ("float", r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?|\.[0-9]+(?:[eE][-+][0-9]+)?"
              r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)", "-+.0123456789"),  # the last two: refused
    ("null", r"~|null|Null|NULL|", ("~", "n", "N", "")),  # "": an empty value
)
_TAGS = ("!", "tag:yaml.org,2002:str")
"""The explicit tags allowed: the non-specific one and `!!str` (`!!str 12` is the string)."""


@cache
def _strict_loader() -> type:
    """SafeLoader with JSON's values only (the module's docstring). Made on first use: PyYAML
    is imported only when there is YAML to read (a network.json build has none; importing it
    took 16-20 ms of an incremental build's start)."""
    import yaml

    def refuse(message: str, node) -> None:
        raise yaml.constructor.ConstructorError(None, None, message, node.start_mark)

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
        seen: set = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            if type(key) is not str:
                refuse(f"a map key must be a string (JSON-compatible YAML), not {type(key).__name__}: "
                       "quote it", key_node)
            if key in seen:
                refuse(f"duplicate key {key!r}", key_node)
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

    def construct_float(loader: yaml.SafeLoader, node: yaml.ScalarNode):
        value = loader.construct_yaml_float(node)
        if value != value or value in (float("inf"), float("-inf")):
            refuse(f"{node.value} is not a number JSON can hold: quote it to keep the text", node)
        return value

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            raise yaml.composer.ComposerError(
                None, None, "aliases are not allowed (JSON-compatible YAML only)",
                self.peek_event().start_mark)
        event = self.peek_event()
        anchor = getattr(event, "anchor", None)
        tag = getattr(event, "tag", None)
        if anchor:
            raise yaml.composer.ComposerError(None, None, "anchors are not allowed", event.start_mark)
        if tag and tag not in _TAGS:
            raise yaml.composer.ComposerError(None, None, f"tag {tag} is not allowed (JSON-compatible "
                                              "YAML only)", event.start_mark)
        return yaml.composer.Composer.compose_node(self, parent, index)

    loader = type("_StrictLoader", (yaml.SafeLoader,), {"compose_node": compose_node})
    loader.yaml_implicit_resolvers = {}
    for name, pattern, firsts in _PLAIN:
        loader.add_implicit_resolver(f"tag:yaml.org,2002:{name}", re.compile(f"^(?:{pattern})$"), list(firsts))
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
    loader.add_constructor("tag:yaml.org,2002:float", construct_float)
    return loader


class YamlProblem(Exception):
    """Invalid YAML, with the 1-based line inside the YAML text."""

    def __init__(self, message: str, line: int):
        super().__init__(message)
        self.line = line


def load_yaml(text: str) -> Any:
    """Parse JSON-compatible YAML; raise YamlProblem with a line number."""
    import yaml

    try:
        data = yaml.load(text, Loader=_strict_loader())  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = mark.line + 1 if mark else 1
        problem = getattr(exc, "problem", None) or str(exc)
        return_context = getattr(exc, "context", None)
        message = f"{return_context}: {problem}" if return_context else str(problem)
        raise YamlProblem(message, line) from None
    except RecursionError:  # thousands of nested brackets: PyYAML recurses per level
        raise YamlProblem("lists or maps nested too deeply to read", 1) from None
    except ValueError:  # the only one PyYAML lets through: an integer of more than 4,300 digits
        raise YamlProblem(_TOO_LONG, _line_of_long_number(text)) from None
    escape = SURROGATE_ESCAPE.search(text)
    if escape is None:
        return data
    try:
        return joined_surrogates(data)
    except ValueError:
        raise YamlProblem("a lone UTF-16 surrogate escape (such as \\ud800): no character, and no "
                          "UTF-8 file can hold it", text.count("\n", 0, escape.start()) + 1) from None


_TOO_LONG = "a number of thousands of digits (Python reads at most 4,300): quote it to keep it as text"


def _line_of_long_number(text: str) -> int:
    found = re.search(r"\d{4301}", text)
    return text.count("\n", 0, found.start()) + 1 if found else 1


@cache
def _dumper() -> type:
    """Block-style YAML with long lines kept whole and multi-line strings as literals."""
    import yaml

    def str_presenter(dumper: yaml.SafeDumper, value: str):
        # The emitter falls back to a quoted style when a literal block cannot hold the value.
        if "\x85" in value:  # NEL: YAML folds it into a space in plain, single-quoted and block styles
            return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    dumper = type("_Dumper", (yaml.SafeDumper,), {})
    dumper.add_representer(str, str_presenter)
    return dumper


def dump_yaml(data: Any) -> str:
    """Serialize to YAML that `load_yaml` reads back identically."""
    import yaml

    text = yaml.dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=True,
                     default_flow_style=False, width=1 << 30)
    # A `|+` block at the end makes PyYAML close the document with `...`, which the
    # document reader would take for the end of the front matter.
    return text[: -len("...\n")] if text.endswith("\n...\n") else text
