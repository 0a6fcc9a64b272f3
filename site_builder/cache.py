"""Incremental builds: reuse the files of beliefs whose pages cannot have changed.

The cache folder (`--cache-dir`, default `.belief-site-cache/` beside mkdocs.yml) holds one
manifest of the last successful build:

- `salt`: a hash of everything that may change any page: the code and templates, the
  configuration, which beliefs are published, the network's structure (ids, justifications,
  nogoods) and every computed status (a flip changes the site's IN/OUT counts, which every
  page shows). When it differs, every belief is rendered (a cold build).
- `texts`: a hash of each belief's own content (claim, summary, metadata...).
- `beliefs`: for each belief, the files it wrote and the beliefs whose content they read
  (render.belief records the lookups).

With an equal salt, a belief is rendered again only when a belief it read changed its
content; otherwise its files are kept: left in place when the build writes into the folder
the last one wrote (write.update_site), hard-linked from it otherwise (`serve`, which
builds each time into a new folder). Listings, exports and the search bundle are always rebuilt. The result is
the same site a cold build writes (tests/test_incremental.py).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Iterable

from . import __version__
from .config import SiteConfig
from .render import RenderContext
from .render.belief import Outputs
from .render.pages import templates_dir
from .write import MARKER, replace_file

__all__ = ["Cache", "Reuse", "DEFAULT_FOLDER", "MANIFEST", "cache_folder"]

DEFAULT_FOLDER = ".belief-site-cache"
MANIFEST = "manifest.json"
FORMAT = 1


def cache_folder(config: SiteConfig, explicit: str | None = None) -> Path:
    """`--cache-dir`, else `.belief-site-cache/` beside the config file (or here without one)."""
    if explicit:
        return Path(explicit)
    return (Path(config.config_path).parent if config.config_path else Path(".")) / DEFAULT_FOLDER


def _digest(*parts: str | bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _folder_digest(folders: Iterable[Path]) -> str:
    """Every file under the folders, by relative path and content."""
    h = hashlib.blake2b(digest_size=16)
    for folder in folders:
        if not folder.is_dir():
            continue
        for path in sorted(folder.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()


def salt(ctx: RenderContext) -> str:
    """What every page may depend on (see the module docstring)."""
    config, ev = ctx.config, ctx.evaluation
    templates = [templates_dir()]
    if config.templates:
        base = Path(config.config_path).parent if config.config_path else Path(".")
        templates.insert(0, base / config.templates)
    network = ev.network
    structure = [(b.id, repr(b.justifications), b.declared, b.retracted, ev.value(b.id))
                 for b in network.beliefs.values()]
    return _digest(str(FORMAT), __version__, _folder_digest([Path(__file__).parent, *templates]),
                   repr(config), repr(sorted(ctx.visible)), repr(sorted(ctx.documents.items())),
                   repr(sorted(ctx.marks.items())), repr(ctx.diff is not None),
                   repr(structure), repr(network.nogoods), repr(network.meta), repr(network.repos))


def texts(ctx: RenderContext) -> dict[str, str]:
    """id -> hash of the belief's own content (not where it was read: no page shows the
    line, and an edit above it in a network.json moves every later line)."""
    return {i: _digest(repr(replace(b, path="", line=0))) for i, b in ctx.evaluation.network.beliefs.items()}


@dataclass(frozen=True)
class Reuse:
    """What a build may take from the previous site."""

    origin: Path
    """The previous site's folder (the output folder, or `serve`'s previous build)."""
    files: dict[str, list[str]]
    """id -> the paths of its files, for every belief whose files are unchanged."""
    previous: frozenset[str]
    """Every file the previous build wrote (to remove what this one no longer writes)."""


@dataclass
class Cache:
    """The manifest of the last build in `folder`, and what this build adds to the next one.

    The manifest lists ids once (`ids`); each belief's reads are indexes into that list,
    which keeps it small and quick to load (about 4 MB for 10,000 beliefs)."""

    folder: Path
    previous: dict = field(default_factory=dict)
    salt: str = ""
    texts: dict[str, str] = field(default_factory=dict)
    beliefs: dict[str, tuple[list[str], frozenset[str]]] = field(default_factory=dict)
    """id -> (its files, the ids its files read), for this build."""

    @classmethod
    def open(cls, folder: Path) -> "Cache":
        """The cache in `folder` (empty when missing or unreadable: a cold build)."""
        try:
            previous = json.loads((folder / MANIFEST).read_text("utf-8"))
        except (OSError, ValueError):
            previous = {}
        if not isinstance(previous, dict) or previous.get("format") != FORMAT:
            previous = {}
        return cls(folder, previous)

    def reusable(self, ctx: RenderContext) -> Reuse | None:
        """What the previous site offers this build (None: render everything)."""
        self.salt, self.texts = salt(ctx), texts(ctx)
        old = self.previous
        origin = Path(old.get("out") or "/nonexistent")
        if old.get("salt") != self.salt or not (origin / MARKER).is_file():
            return None
        try:
            ids, before = old["ids"], dict(zip(old["ids"], old["texts"]))
            changed = {k for k, i in enumerate(ids) if self.texts.get(i) != before[i]}
            files: dict[str, list[str]] = {}
            for k, belief_id in enumerate(ids):
                reads = old["reads"][k]
                if reads is None or belief_id not in ctx.visible or not changed.isdisjoint(reads):
                    continue
                files[belief_id] = old["files"][k]
                self.beliefs[belief_id] = (old["files"][k], frozenset(ids[r] for r in reads))
            previous = frozenset(old["site"]).union(*(f for f in old["files"] if f))
        except (KeyError, IndexError, TypeError):  # a manifest from elsewhere: start again
            self.beliefs.clear()
            return None
        return Reuse(origin, files, previous)

    def rendered(self, belief_id: str, outputs: Outputs | None) -> None:
        """Note what a rendered belief's files read (None: reused, already noted)."""
        if outputs is not None:
            self.beliefs[belief_id] = ([f.path for f in outputs.files], outputs.reads)

    def save(self, out: Path, paths: Iterable[str]) -> None:
        """Keep this build's manifest (after the site in `out`, of these files, was written)."""
        ids = sorted(self.texts)
        index = {i: k for k, i in enumerate(ids)}
        entries = [self.beliefs.get(i) for i in ids]
        belief_files = {p for e in entries if e for p in e[0]}
        manifest = {
            "format": FORMAT, "salt": self.salt, "out": os.path.abspath(out), "ids": ids,
            "texts": [self.texts[i] for i in ids],
            "reads": [sorted(index[r] for r in e[1] if r in index) if e else None for e in entries],
            "files": [e[0] if e else None for e in entries],
            "site": sorted(set(paths) - belief_files)}
        data = json.dumps(manifest, ensure_ascii=False, separators=(",", ":"))
        replace_file(self.folder / MANIFEST, data.encode("utf-8"))
