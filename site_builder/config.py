"""Site configuration from `mkdocs.yml` (DESIGN "config"): one file read by both hosts.

The standalone commands read it with a YAML loader that tolerates MkDocs tags such as
`!ENV` and `!!python/name:` (their values are not needed here).
"""

from __future__ import annotations

import argparse
import os
import re
from dataclasses import dataclass, field, fields, replace
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from .diagnostics import Diagnostic

CONFIG_FILE = "mkdocs.yml"


@dataclass(frozen=True, slots=True)
class SiteConfig:
    """Settings of a belief site; every option has a default (DESIGN options table)."""

    source: str = "beliefs"
    """Documents folder or network.json, relative to the config file."""
    prefix: str = "belief"
    """URL folder for belief pages."""
    diagram_engine: str = "builtin"
    """`builtin`, `graphviz` or a path to `dot`."""
    diagram_depth: int = 2
    """Rows of antecedents and of dependents in a diagram."""
    diagram_max_nodes: int = 40
    """Beyond it, "+N more" nodes link to the full lists."""
    panel_max_items: int = 100
    """Longest list in explain, trace and impact panels."""
    search: bool = True
    """Build the search index."""
    visible_to: tuple[str, ...] | None = None
    """Tags allowed on a partially published site."""
    templates: str | None = None
    """Folder of templates overriding the default theme."""
    edit_links: bool = True
    """"Edit this belief" links from repo_url + edit_uri."""
    site_name: str = "Beliefs"
    site_url: str | None = None
    repo_url: str | None = None
    edit_uri: str | None = None
    """As in MkDocs: relative to repo_url, usually pointing at docs_dir (`edit/main/docs/`)."""
    docs_dir: str = "docs"
    """MkDocs' docs_dir, relative to the config file (to read edit_uri the MkDocs way)."""
    use_directory_urls: bool = True
    config_path: str | None = field(default=None, compare=False)
    """The mkdocs.yml these settings came from, if any."""

    def source_path(self) -> Path:
        """The source, resolved against the config file's folder."""
        base = Path(self.config_path).parent if self.config_path else Path(".")
        return base / self.source


_OPTION_TYPES = {f.name: f.type for f in fields(SiteConfig)}
PLUGIN_OPTIONS = ("source", "prefix", "diagram_engine", "diagram_depth", "diagram_max_nodes",
                  "panel_max_items", "search", "visible_to", "templates", "edit_links")
HOST_OPTIONS = ("nav",)
"""Options read by the MkDocs plugin only."""
SITE_KEYS = ("site_name", "site_url", "repo_url", "edit_uri", "use_directory_urls", "docs_dir")


@cache
def _tolerant_loader() -> type:
    """SafeLoader that reads any unknown tag as a plain value instead of failing (made on
    first use: PyYAML is imported only when there is a configuration file to read)."""
    import yaml

    def any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.ScalarNode):
            return loader.construct_scalar(node)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node)
        return loader.construct_mapping(node)

    from yaml_env_tag import construct_env_tag  # MkDocs' own `!ENV` (pyyaml-env-tag)

    loader = type("_TolerantLoader", (yaml.SafeLoader,), {})
    loader.add_multi_constructor("", any_tag)
    loader.add_constructor("!ENV", construct_env_tag)
    loader.add_constructor("!relative", lambda loader, node: _Relative(loader.construct_scalar(node)))
    return loader


class _Relative:
    """MkDocs' `!relative $config_dir/sub` (or `$docs_dir/sub`), resolved once docs_dir is read."""

    def __init__(self, value: str) -> None:
        self.value = value

    def resolved(self, config: Path, docs_dir: str) -> str:
        prefix, _, sub = self.value.partition("/")
        folders = {"$config_dir": config.parent, "$docs_dir": config.parent / docs_dir}
        if prefix not in folders:  # a bare !relative: the folder of the Markdown page being rendered
            raise ValueError(f"!relative {self.value!r}: write '!relative $config_dir/<path>' "
                             "(or $docs_dir/): a bare !relative names the folder of a Markdown page")
        return os.path.join(folders[prefix], sub)


class _Unreadable(Exception):
    """An INHERIT that names no file or no map, or goes round in a loop; `path`: the file whose
    INHERIT it is."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


def _inherits(data: Any, path: Path) -> Path | None:
    """The file `path`'s configuration INHERITs (taken out of `data`), or None."""
    parent = data.pop("INHERIT", None) if isinstance(data, dict) else None
    return None if parent is None else Path(os.path.normpath(path.parent / str(parent)))


def _read_yaml(path: Path, inheriting: tuple[Path, ...] = ()) -> tuple[Any, tuple[Path, ...]]:
    """mkdocs.yml as MkDocs reads it: `!ENV`, `!relative` and `INHERIT` (its settings over the
    parent's, maps merged key by key); any other tag as a plain value (a Material extension
    need not be installed). Read from the file: a YAML error's mark names it. Returns the
    settings and the files read, this one first."""
    import yaml

    with open(path, "rb") as stream:
        data = yaml.load(stream, Loader=_tolerant_loader())
    if data is None:  # an empty file: no settings
        data = {}
    base = _inherits(data, path)
    if base is None:
        return data, (path,)
    if base in inheriting or base == path:
        raise _Unreadable(path, f"INHERIT {base.name!r} goes round in a loop")
    if not base.is_file():
        raise _Unreadable(path, f"INHERIT names {base.name!r}, which is not a file ({base})")
    parent, files = _read_yaml(base, (*inheriting, path))
    if not isinstance(parent, dict):
        raise _Unreadable(path, f"INHERIT names {base.name!r}, whose configuration is not a map")
    return _merged(parent, data), (path, *files)


def _merged(base: dict, over: dict) -> dict:
    """`over` on top of `base`: maps merged key by key, anything else replaced (as MkDocs)."""
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _plugin_options(plugins: Any) -> dict[str, Any] | None:
    """The `beliefs` entry of `plugins:` (list or map form), or None."""
    if isinstance(plugins, dict):
        plugins = [{k: v} for k, v in plugins.items()]
    for entry in plugins or ():
        if entry == "beliefs":
            return {}
        if isinstance(entry, dict) and "beliefs" in entry:
            return entry["beliefs"] or {}
    return None


_SURROGATE = re.compile("[\ud800-\udfff]")
"""Only a YAML escape makes one (`"\\udcff"`); a page written with it would fail to encode."""


def utf8_text(text: str) -> str:
    """argparse type: text that lands in pages. The shell passes bytes that are not UTF-8
    as lone surrogates (surrogateescape), which no page can hold."""
    if holds_surrogate(text):
        raise argparse.ArgumentTypeError("not valid UTF-8")
    return text


def site_url_problem(url: str) -> str | None:
    """Why `url` cannot be a site's address (sitemap, robots.txt, embed snippets and
    redirects need an absolute http(s) URL), or None."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return f"must be an absolute http(s) URL, such as https://example.org/kb/, not {url!r}"
    if any(c.isspace() for c in url):
        return f"must not hold spaces (write %20), not {url!r}"
    return None


def url_text(text: str) -> str:
    """argparse type of --base-url and --site-url: an absolute http(s) URL, as UTF-8."""
    problem = site_url_problem(utf8_text(text))
    if problem:
        raise argparse.ArgumentTypeError(problem)
    return text


def printable(text: str) -> str:
    """Text to show in a page or report: a lone surrogate (a file name's byte that is not
    UTF-8, as the shell or the file system passes it) becomes U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


SITE_NAMES = frozenset((
    "index.html", "404.html", "assets", "badge.svg", "beliefs.json", "beliefs.schema.json", "graph",
    "llms.txt", "nogoods", "objects.inv", "out", "premises", "changes", "pagefind", "search",
    "sitemap.xml", "robots.txt"))
"""What a site (or a MkDocs site: search/) holds at its top: belief pages go elsewhere (README
"What a build writes")."""
_MINIMUM = {"diagram_depth": 0, "diagram_max_nodes": 1, "panel_max_items": 1}
_PREFIX = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*(?:/[A-Za-z0-9][A-Za-z0-9._-]*)*")
"""A folder inside the site: no `..`, no absolute path, nothing a URL would need to escape."""


def templates_problem(base: Path, templates: str) -> str | None:
    """Why the `templates` option (relative to the configuration's folder) names no folder."""
    folder = base / templates
    if folder.is_dir():
        return None
    return f"names a file, not a folder: {folder}" if folder.exists() else f"names no folder: {folder} not found"


def option_problem(key: str, value: Any) -> str | None:
    """What is wrong with the value of option `key` (both hosts), or None."""
    expected = _OPTION_TYPES[key]
    checks = {"int": int, "bool": bool, "str": str}
    for name, kind in checks.items():
        if expected == name and (not isinstance(value, kind) or (kind is int and isinstance(value, bool))):
            return f"must be {'an integer' if kind is int else 'true or false' if kind is bool else 'a string'}"
    if key in _MINIMUM and value < _MINIMUM[key]:
        return f"must be {_MINIMUM[key]} or more, not {value}"
    if key == "prefix" and not _PREFIX.fullmatch(value.strip("/")):
        return ("must be a folder inside the site, such as 'belief' (letters, digits, '.', '_' and '-', "
                "'/' between folders)")
    if key == "prefix" and (top := value.strip("/").split("/")[0]) in SITE_NAMES:
        return f"must not start with {top!r}: the site writes its own files there"
    if key == "visible_to" and not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        return "must be a list of tags"
    if key in ("templates", "site_url", "repo_url", "edit_uri", "docs_dir") and not isinstance(value, str):
        return "must be a string"
    if key == "site_url" and value:
        return site_url_problem(value)
    if holds_surrogate(value):
        return SURROGATE_PROBLEM
    return None


SURROGATE_PROBLEM = "holds a UTF-16 surrogate escape (such as \\udcff), which no UTF-8 page can hold"


def holds_surrogate(value: Any) -> bool:
    """True for text (or a list or tuple of texts) holding a lone surrogate."""
    values = value if isinstance(value, (list, tuple)) else [value]
    return any(isinstance(v, str) and _SURROGATE.search(v) for v in values)



def load_config(path: str | Path | None = None) -> tuple[SiteConfig, list[Diagnostic]]:
    """Read mkdocs.yml (default: ./mkdocs.yml if present) -> (SiteConfig, diagnostics)."""
    found: list[Diagnostic] = []
    candidate = Path(path) if path else Path(CONFIG_FILE)
    if not candidate.is_file():
        if path:
            found.append(Diagnostic(str(path), 0, "E802", "configuration file not found"))
        return SiteConfig(), found
    import yaml

    try:
        data, files = _read_yaml(candidate)
    except _Unreadable as exc:
        found.append(Diagnostic(str(exc.path), _key_line(_text(exc.path), "INHERIT"), "E802", str(exc)))
        return SiteConfig(config_path=str(candidate)), found
    except RecursionError:  # thousands of nested brackets
        found.append(Diagnostic(str(candidate), 1, "E802", "cannot read the configuration: nested too deeply"))
        return SiteConfig(config_path=str(candidate)), found
    except ValueError:  # PyYAML's only other: an integer of more than 4,300 digits
        found.append(Diagnostic(str(candidate), 1, "E802", "cannot read the configuration: a number of "
                                "thousands of digits (Python reads at most 4,300)"))
        return SiteConfig(config_path=str(candidate)), found
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        return SiteConfig(config_path=str(candidate)), [*found, _yaml_problem(candidate, exc)]
    if not isinstance(data, dict):
        found.append(Diagnostic(str(candidate), 1, "E802", "the configuration must be a map"))
        return SiteConfig(config_path=str(candidate)), found
    values: dict[str, Any] = {k: data[k] for k in SITE_KEYS if data.get(k) is not None}
    options = _plugin_options(data.get("plugins")) or {}
    if not isinstance(options, dict):
        found.append(Diagnostic(str(candidate), 0, "E802", "plugins: - beliefs: must be a map"))
        options = {}
    for key, value in options.items():
        if key in HOST_OPTIONS:
            continue
        if key not in PLUGIN_OPTIONS:
            found.append(Diagnostic(*_where(files, key), "E802",
                                    f"unknown beliefs option {key!r}",
                                    "options: " + ", ".join(PLUGIN_OPTIONS)))
        elif value is not None:
            values[key] = value
    for key, value in list(values.items()):
        if isinstance(value, _Relative):
            try:
                values[key] = value = value.resolved(candidate, _docs_dir(data, candidate))
            except ValueError as exc:
                found.append(Diagnostic(*_where(files, key), "E802", f"option {key!r}: {exc}"))
                del values[key]
                continue
        problem = option_problem(key, value)
        if problem is None and key == "templates":
            problem = templates_problem(candidate.parent, value)
        if problem:
            found.append(Diagnostic(*_where(files, key), "E802", f"option {key!r} {problem}"))
            del values[key]
    if "visible_to" in values:
        values["visible_to"] = tuple(values["visible_to"])
    if "prefix" in values:
        values["prefix"] = values["prefix"].strip("/")
    return SiteConfig(config_path=str(candidate), **values), found


def _docs_dir(data: dict, config: Path) -> str:
    """docs_dir as written, for `!relative $docs_dir/...` (a `!relative` docs_dir resolved)."""
    docs = data.get("docs_dir") or "docs"
    try:
        return docs.resolved(config, "docs") if isinstance(docs, _Relative) else str(docs)
    except ValueError:  # reported as docs_dir's own problem
        return "docs"


def _text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def _where(files: tuple[Path, ...], key: str) -> tuple[str, int]:
    """(file, line) where `key` is set: the configuration's own file first, then those it
    INHERITs (for diagnostics: read again, only then)."""
    for path in files:
        line = _key_line(_text(path), key)
        if line:
            return str(path), line
    return str(files[0]), 0


def inherited(config: Path) -> list[Path]:
    """The files a configuration INHERITs, parent after parent (what `serve` watches beside
    it); as far as they can be read."""
    import yaml

    found: list[Path] = []
    while len(found) < 20:  # a loop of INHERITs ends MkDocs too
        try:
            config = _inherits(yaml.load(config.read_text(encoding="utf-8"), Loader=_tolerant_loader()), config)
        except (OSError, ValueError, RecursionError, yaml.YAMLError):
            break
        if config is None or config in found:
            break
        found.append(config)
    return found


def _yaml_problem(config: Path, exc: Exception) -> Diagnostic:
    """E802 at the line YAML points at, in the file it points into (an INHERITed one too)."""
    mark = getattr(exc, "problem_mark", None)
    problem, context = getattr(exc, "problem", None) or str(exc), getattr(exc, "context", None)
    where = mark.name if mark is not None and mark.name and not mark.name.startswith("<") else str(config)
    return Diagnostic(where, mark.line + 1 if mark else 0, "E802",
                      f"cannot read the configuration: {f'{context}: ' if context else ''}{problem}")


def _key_line(text: str, key: str) -> int:
    """The 1-based line where `key:` is first set in the YAML text (0 when not found as such):
    a plugin option's after the `beliefs` plugin's entry, a site key's at the top level."""
    entry = re.search(r"^[ \t]*(?:-[ \t]+)?['\"]?beliefs['\"]?[ \t]*:", text, re.M)
    if key in SITE_KEYS or key == "INHERIT":
        pattern, start = rf"^['\"]?{re.escape(key)}['\"]?[ \t]*:", 0
    else:
        pattern, start = rf"^[ \t]*(?:-[ \t]+)?['\"]?{re.escape(key)}['\"]?[ \t]*:", entry.end() if entry else 0
    found = re.compile(pattern, re.M).search(text, start)
    return text.count("\n", 0, found.start()) + 1 if found else 0


def flag_overrides(args: argparse.Namespace) -> dict[str, Any]:
    """What `--base-url`, `--visible-to` and `--no-search` set (build and serve), as JSON values."""
    visible = [t for t in args.visible_to.split(",") if t] if args.visible_to is not None else None
    return {"site_url": args.base_url, "visible_to": visible, "search": args.search}


def with_overrides(config: SiteConfig, **overrides: Any) -> SiteConfig:
    """A copy with the non-None overrides applied (command-line flags)."""
    if isinstance(overrides.get("visible_to"), list):  # as JSON carried it to serve's build process
        overrides["visible_to"] = tuple(overrides["visible_to"])
    return replace(config, **{k: v for k, v in overrides.items() if v is not None})
