"""YAML front matter and `_project.yaml`: JSON-compatible YAML only (spec §3.3).

Timestamps stay strings, duplicate keys and tags/anchors are errors, so what comes in
is exactly what network.json would carry.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from ..load import SURROGATE_ESCAPE, joined_surrogates


@cache
def _strict_loader() -> type:
    """SafeLoader without implicit timestamps, refusing duplicate keys, tags and aliases.
    Made on first use: PyYAML is imported only when there is YAML to read (a network.json
    build has none; importing it took 16-20 ms of an incremental build's start)."""
    import yaml

    def construct_mapping(loader: yaml.SafeLoader, node: yaml.MappingNode, deep: bool = False):
        seen: set = set()
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=True)
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark)
            seen.add(key)
        return loader.construct_mapping(node, deep=deep)

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
        if tag and tag not in ("!", "tag:yaml.org,2002:str") and not tag.startswith("tag:yaml.org,2002:"):
            raise yaml.composer.ComposerError(None, None, f"tag {tag} is not allowed", event.start_mark)
        return yaml.composer.Composer.compose_node(self, parent, index)

    loader = type("_StrictLoader", (yaml.SafeLoader,), {"compose_node": compose_node})
    loader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, construct_mapping)
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
    escape = SURROGATE_ESCAPE.search(text)
    if escape is None:
        return data
    try:
        return joined_surrogates(data)
    except ValueError:
        raise YamlProblem("a lone UTF-16 surrogate escape (such as \\ud800): no character, and no "
                          "UTF-8 file can hold it", text.count("\n", 0, escape.start()) + 1) from None


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
