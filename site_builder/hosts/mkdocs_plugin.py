"""The `beliefs` plugin: a belief network inside an MkDocs or ProperDocs site (DESIGN "MkDocs").

An adapter over the same core and the same templates as `belief-site build`:

- `on_config`: the options (DESIGN's table, plus `nav`) and the MkDocs settings become one
  `SiteConfig`; the plugin's scoped stylesheet and the theme's script join `extra_css` and
  `extra_javascript`.
- `on_files`: load, parse, evaluate, diagrams and panels, once per build; every diagnostic is
  logged (warnings as warnings, errors as errors, so `--strict` fails on them; documents with
  errors are left out, the rest is built). Then one generated page per visible belief at
  `<prefix>/<id>/` (NOT_IN_NAV, titled by its id, empty Markdown) and four listing pages:
  `<prefix>/` (all beliefs), `<prefix>/_premises/`, `<prefix>/_out/`, `<prefix>/_nogoods/`
  (`_` cannot start a belief id, so they never collide with one).
- `on_nav` (option `nav`): the listing pages as one "Beliefs" section, also the parent of
  every belief page; the nav never lists beliefs, so a page does not grow with the network.
- `on_page_markdown` gives Python-Markdown nothing to read; `on_page_content` puts in the
  core-rendered body (the templates' `fragment` mode), so belief text only ever passes
  through markdown-it-py (`html=False`) and Jinja2 autoescaping.
- `on_page_context`: search plugins index the page in this event; just before them the page
  holds a short safe text (id, claim, summary, escaped), right after them its body again.
  Badges, JSON records, `beliefs.json`, `llms.txt` and the redirect pages of aliases are
  written then and registered as files of the build (so pages may link to them, `--strict`).
- `on_post_build`: `objects.inv` (merged into one another plugin wrote, else beside it under
  the prefix). MkDocs writes the sitemap.
- `on_serve`: `mkdocs serve` also watches the belief source (and a templates folder).
"""

from __future__ import annotations

import logging
import os
import posixpath
import re
import zlib
from collections import Counter
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import Any, Callable

import jinja2
from mkdocs.config import base
from mkdocs.config import config_options as c
from mkdocs.exceptions import ConfigurationError, PluginError
from mkdocs.plugins import BasePlugin, CombinedEvent, event_priority
from mkdocs.structure.files import File, Files, InclusionLevel
from mkdocs.structure.nav import Navigation, Section
from mkdocs.structure.pages import Page
from mkdocs.structure.toc import AnchorLink, TableOfContents
from mkdocs.utils.yaml import yaml_load

from ..config import SURROGATE_PROBLEM, SiteConfig, holds_surrogate, option_problem, templates_problem
from ..diagnostics import Diagnostic, folded
from ..model import Belief
from ..pipeline import Checked, _context, _kept, check
from ..render import RenderContext, badges, changes, exports
from ..render import pages as core_pages
from ..render.diagrams import render_diagrams
from ..render.exports import inventory as inventory_export, sitemap
from ..render.exports.inventory import INVENTORY, inventory
from ..render.exports.json_exports import belief_json
from ..render.panels import compute_panels
from ..render.views import belief_page, edit_link

__all__ = ["BeliefsPlugin", "BeliefsConfig"]

log = logging.getLogger("mkdocs.plugins.beliefs")

_DEFAULTS = SiteConfig()
ASSETS = "assets/belief-site"
STYLESHEET = f"{ASSETS}/fragments.css"
SCRIPT = f"{ASSETS}/site.js"
NAV_TITLE = "Beliefs"
_SECTION = re.compile(r'<section id="([A-Za-z0-9_-]+)"[^>]*>\s*<h2>(.*?)</h2>', re.S)
_TAG = re.compile(r"<[^>]*>")


class BeliefsConfig(base.Config):
    """Options under `plugins: - beliefs:` (README "Options"); defaults are the core's."""

    source = c.Type((str, os.PathLike), default=_DEFAULTS.source)  # PathLike: `!relative $config_dir/...`
    prefix = c.Type(str, default=_DEFAULTS.prefix)
    diagram_engine = c.Type(str, default=_DEFAULTS.diagram_engine)
    diagram_depth = c.Type(int, default=_DEFAULTS.diagram_depth)
    diagram_max_nodes = c.Type(int, default=_DEFAULTS.diagram_max_nodes)
    panel_max_items = c.Type(int, default=_DEFAULTS.panel_max_items)
    search = c.Type(bool, default=_DEFAULTS.search)
    visible_to = c.Optional(c.ListOfItems(c.Type(str)))
    templates = c.Optional(c.Type((str, os.PathLike)))
    edit_links = c.Type(bool, default=_DEFAULTS.edit_links)
    nav = c.Type(bool, default=True)
    """Add the listing pages (all beliefs, premises, OUT, nogoods) to the nav as one section."""


@dataclass(frozen=True, slots=True)
class _Listing:
    """A listing page: its folder under the prefix, title, template and rows."""

    folder: str
    title: str
    template: str
    values: Callable[[RenderContext, Any, str], dict]
    """The template's values: (context, Jinja environment, page path) -> dict."""


# Titles and rows of the standalone index pages (render/pages.py listing_specs), moved under the
# prefix: the host's own index.html stays the host's.
LISTINGS = (
    _Listing("", "All beliefs", "index.html", core_pages.index_values),
    _Listing("_premises", "Premises", "premises.html", core_pages.premise_values),
    _Listing("_out", "OUT beliefs", "out.html", core_pages.out_values),
    _Listing("_nogoods", "Nogoods", "nogoods.html", core_pages.nogood_values),
)


def _docs_dir(config: Any) -> str:
    """docs_dir relative to the config file's folder (MkDocs stores it absolute)."""
    if not config.config_file_path:
        return "docs"
    return os.path.relpath(config.docs_dir, os.path.dirname(os.path.abspath(config.config_file_path)))


def _edit_uri_as_written(config: Any) -> str | None:
    """edit_uri as mkdocs.yml writes it, INHERIT and !ENV read as MkDocs reads them: MkDocs
    fills in a default relative to docs_dir, while belief documents live outside it, and
    the core has its own default (views.edit_link)."""
    if not config.config_file_path:
        return None
    try:
        with open(config.config_file_path, "rb") as stream:
            written = yaml_load(stream)
    except Exception:  # MkDocs has just read it: whatever fails now keeps the core's default
        return None
    value = written.get("edit_uri") if isinstance(written, dict) else None
    return None if value is None else str(value)


def _path_option(options: BeliefsConfig, key: str) -> str | None:
    """A path option as written, or where MkDocs' `!relative $config_dir/...` points."""
    value = getattr(options, key)
    try:
        return None if value is None else os.fspath(value)
    except ConfigurationError as exc:  # a bare !relative: the folder of a Markdown file
        raise PluginError(f"beliefs: option {key!r}: {exc}") from None


def site_config(options: BeliefsConfig, config: Any) -> SiteConfig:
    """The core's settings from the plugin options and the MkDocs configuration."""
    prefix = options.prefix.strip("/")
    source, templates = _path_option(options, "source"), _path_option(options, "templates")
    for key in ("prefix", "diagram_depth", "diagram_max_nodes", "panel_max_items"):
        problem = option_problem(key, getattr(options, key))
        if problem:
            raise PluginError(f"beliefs: option {key!r} {problem}")
    base = Path(os.path.dirname(os.path.abspath(config.config_file_path))) if config.config_file_path else Path(".")
    problem = templates_problem(base, templates) if templates else None
    if problem:
        raise PluginError(f"beliefs: option 'templates' {problem}")
    edit_uri = _edit_uri_as_written(config)
    shown = {"site_name": config.site_name, "site_url": config.site_url, "repo_url": config.repo_url,
             "edit_uri": edit_uri, "visible_to": options.visible_to}
    for key, value in shown.items():  # else MkDocs's own theme fails on them with a traceback
        if holds_surrogate(value):
            raise PluginError(f"beliefs: {key} {SURROGATE_PROBLEM}")
    return SiteConfig(
        source=source, prefix=prefix, diagram_engine=options.diagram_engine,
        diagram_depth=options.diagram_depth, diagram_max_nodes=options.diagram_max_nodes,
        panel_max_items=options.panel_max_items, search=options.search,
        visible_to=tuple(options.visible_to) if options.visible_to is not None else None,
        templates=templates, edit_links=options.edit_links,
        site_name=config.site_name, site_url=config.site_url or None, repo_url=config.repo_url or None,
        edit_uri=edit_uri, use_directory_urls=config.use_directory_urls,
        docs_dir=_docs_dir(config),
        config_path=os.path.abspath(config.config_file_path) if config.config_file_path else None)


def prepare(config: SiteConfig) -> tuple[Checked, RenderContext, tuple[Diagnostic, ...]]:
    """The network ready to render, once per build: what `pipeline.build` does before writing.

    Documents with errors are left out and the rest is built (`--keep-going`): in a docs
    site a broken belief must not take the documentation down; `--strict` still fails.
    """
    source = config.source_path()
    checked = check(source, config.panel_max_items)
    kept = _kept(checked, source, keep_going=True, strict=False)
    ctx = _context(kept, config, source, checked)
    diagrams = render_diagrams(ctx)
    panels = compute_panels(ctx.evaluation, ctx.visible, config.panel_max_items, ctx.is_visible)
    ctx = replace(ctx, diagrams=diagrams.svg, panels=panels)
    return kept, ctx, (*checked.diagnostics, *diagrams.diagnostics)


def _refuse_files_in_our_folders(claimed: set[str], ctx: RenderContext) -> None:
    """A file of the docs or the theme where a belief needs a folder (`belief/data.json` and
    the belief `data.json`; `css/base.css` and, with `prefix: css`, the belief `base.css`)
    would be moved into that folder by the build, without a word: an error instead."""
    folders: set[str] = set()
    pages = [posixpath.join(ctx.config.prefix, listing.folder, "index.html") for listing in LISTINGS]
    for page in chain(pages, (ctx.page(belief.id) for belief in ctx.shown())):
        folder = posixpath.dirname(page)
        while folder and folder not in folders:
            folders.add(folder)
            folder = posixpath.dirname(folder)
    taken = sorted(folders & claimed)
    if taken:
        raise PluginError(f"beliefs: {', '.join(taken[:5])} {'is a file' if len(taken) == 1 else 'are files'} of "
                          "the docs or the theme where the belief site needs a folder (a belief's "
                          "id, or the `prefix` option); rename one or the other")


def _markdown_path(page_path: str) -> str:
    """`belief/<id>/index.html` -> `belief/<id>/index.md` (the same page in MkDocs)."""
    return page_path[: -len(".html")] + ".md"


def _shown_path(path: str, base: Path) -> str:
    """A diagnostic's path relative to the configuration's folder when it is inside it."""
    try:
        return Path(path).resolve().relative_to(base).as_posix()
    except (ValueError, OSError):
        return path


def _within(path: str, source: Path) -> bool:
    """True when `path` is the source itself or inside the source folder."""
    where, root = os.path.abspath(path), os.path.abspath(source)
    return where == root or where.startswith(root.rstrip(os.sep) + os.sep)


def _toc(fragment: str) -> tuple[TableOfContents, set[str]]:
    """The page's sections (`<section id=...><h2>`) as its table of contents and anchors.

    The headings come from autoescaped templates: with the tags stripped, what is left is
    escaped text, which the theme may print as HTML unchanged.
    """
    links, anchors = [], set()
    for anchor, heading in _SECTION.findall(fragment):
        title = " ".join(_TAG.sub("", heading).split())
        links.append(AnchorLink(title, anchor, 2))
        anchors.add(anchor)
    return TableOfContents(links), anchors


class BeliefsPlugin(BasePlugin[BeliefsConfig]):
    """Belief pages, listings, badges and exports inside an MkDocs/ProperDocs build."""

    def __init__(self) -> None:
        super().__init__()
        self._reset()

    def _reset(self) -> None:
        self.site: SiteConfig | None = None
        self.ctx: RenderContext | None = None
        self.env: jinja2.Environment | None = None
        self.counts: Counter = Counter()
        self.beliefs: dict[str, Belief] = {}      # src_uri -> belief
        self.listings: dict[str, _Listing] = {}   # src_uri -> listing
        self.claimed: set[str] = set()            # output paths that docs or the theme provide
        self.search_text: dict[str, str] = {}     # src_uri -> what search plugins may index
        self.held: dict[str, str] = {}            # src_uri -> body, while search plugins look
        self.written: dict[str, bytes] = {}       # top-level files written, to check after the others
        self.dirty = False

    # -- configuration ----------------------------------------------------------------------

    def on_startup(self, *, command: str, dirty: bool) -> None:
        self.dirty = dirty

    def on_config(self, config):
        dirty = self.dirty
        self._reset()
        self.dirty = dirty
        self.site = site_config(self.config, config)
        if STYLESHEET not in config.extra_css:
            config.extra_css.append(STYLESHEET)
        if not any(str(s) == SCRIPT for s in config.extra_javascript):
            script = c.ExtraScriptValue(SCRIPT)
            script.defer = True
            config.extra_javascript.append(script)
        return config

    # -- the network, once per build ----------------------------------------------------------

    def on_files(self, files: Files, *, config) -> Files:
        site = self.site
        source = site.source_path()
        if not source.exists():
            raise PluginError(f"beliefs: source {source} not found (the `source` option names a "
                              "documents folder or a network.json, relative to mkdocs.yml)")
        # Belief documents inside docs_dir would otherwise be MkDocs pages (Python-Markdown on
        # untrusted text) and _project.yaml a published file: the source is never the docs'.
        inside = [f for f in files if f.abs_src_path and _within(f.abs_src_path, source)]
        for f in inside:
            files.remove(f)
        if inside:
            log.info("beliefs: the %d files of %s are read as beliefs, not as documentation pages",
                     len(inside), source)
        kept, ctx, found = prepare(site)
        base_dir = Path(site.config_path).parent.resolve() if site.config_path else Path.cwd()
        for d in folded(found):  # a hint many share: once
            shown = replace(d, path=_shown_path(d.path, base_dir))
            (log.error if d.severity == "error" else log.warning)("beliefs: %s", shown.text())
        if not kept.parsed.network.beliefs and any(d.severity == "error" for d in found):
            # A broken document is left out; a source of which nothing could be read would
            # publish the docs without a single belief page (and a deploy would remove them all).
            raise PluginError(f"beliefs: no belief could be read from {source} (the errors above); "
                              "the build stops rather than publish none")
        self.ctx, self.env = ctx, core_pages.environment(ctx)
        self.counts = core_pages.site_counts(ctx)
        self.claimed = {f.dest_uri for f in files}
        _refuse_files_in_our_folders(self.claimed, ctx)
        for belief in ctx.shown():
            self._add_page(files, config, _markdown_path(ctx.page(belief.id)), belief=belief)
        for listing in LISTINGS:
            self._add_page(files, config, self._listing_path(listing), listing=listing)
        for name, data in ((STYLESHEET, self._stylesheet()), (SCRIPT, self._script())):
            if self._free(name, files):
                files.append(File.generated(config, name, content=data))
        self.written = self._write_files(files, config)
        log.info("beliefs: %d beliefs from %s (%d IN, %d OUT)", len(self.beliefs), source,
                 self.counts.get("IN", 0), self.counts.get("OUT", 0))
        return files

    def _write_files(self, files: Files, config) -> dict[str, bytes]:
        """Badges, JSON records, exports and the redirect pages of aliases, written into
        site_dir now (after MkDocs emptied it, before it copies files) and registered as files
        of the build, so that a page's link to one resolves (`--strict`): a file whose source
        is its destination is not copied. Returns the top-level ones (another plugin may write
        such a file later: on_post_build tells). objects.inv waits for on_post_build."""
        site_dir = Path(config.site_dir)
        top: dict[str, bytes] = {}
        count = 0
        # Not the sitemap (MkDocs writes its own) nor robots.txt (a site-wide policy), and
        # objects.inv later (merged with another plugin's).
        parts = [part(self.ctx) for part in exports.PARTS if part not in (sitemap.emit, inventory_export.emit)]
        outputs = chain(_belief_files(self.ctx), badges.emit(self.ctx), *parts, changes.emit_redirects(self.ctx))
        for out in outputs:  # streamed: 10,000 beliefs make 30,000 files
            if not self._free(out.path, files):
                continue
            target = site_dir / out.path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(out.data)
            files.append(File(out.path, str(site_dir), str(site_dir), config.use_directory_urls,
                              inclusion=InclusionLevel.NOT_IN_NAV))
            if "/" not in out.path:
                top[out.path] = out.data
            count += 1
        log.info("beliefs: wrote %d badge, JSON and redirect files", count)
        return top

    def _listing_path(self, listing: _Listing) -> str:
        folder = f"{self.site.prefix}/{listing.folder}" if listing.folder else self.site.prefix
        return f"{folder}/index.md"

    def _free(self, src_uri: str, files: Files) -> bool:
        """True when no documentation file, theme file or other plugin has this path."""
        dest = src_uri[: -len(".md")] + ".html" if src_uri.endswith(".md") else src_uri
        if files.get_file_from_path(src_uri) is None and dest not in self.claimed:
            return True
        log.warning("beliefs: %s is already in the site (from docs_dir, the theme or another "
                    "plugin); the belief site's page or file is left out", dest)
        return False

    def _add_page(self, files: Files, config, src_uri: str, *, belief: Belief | None = None,
                  listing: _Listing | None = None) -> None:
        if not self._free(src_uri, files):
            return
        # Empty Markdown: the body is put in on_page_content (never through Python-Markdown).
        files.append(File.generated(config, src_uri, content="", inclusion=InclusionLevel.NOT_IN_NAV))
        if belief is not None:
            self.beliefs[src_uri] = belief
        else:
            self.listings[src_uri] = listing

    def _stylesheet(self) -> bytes:
        return (Path(__file__).with_name("fragments.css")).read_bytes()

    def _script(self) -> bytes:
        """The theme's `site.js` (sorting and filtering the index), or the user's override."""
        if self.site.templates:
            base_dir = Path(self.site.config_path).parent if self.site.config_path else Path(".")
            override = base_dir / self.site.templates / "assets" / "site.js"
            if override.is_file():
                return override.read_bytes()
        return (core_pages.templates_dir() / "assets" / "site.js").read_bytes()

    # -- navigation ---------------------------------------------------------------------------

    @event_priority(-50)  # after plugins that rebuild the nav (awesome-nav runs at 100)
    def on_nav(self, nav: Navigation, *, config, files: Files) -> Navigation:
        if not self.config.nav:
            return nav
        listed = [f.page for f in (files.get_file_from_path(s) for s in self.listings) if f and f.page]
        if not listed or any(p in nav.pages for p in listed):
            return nav  # none generated, or placed by the user's own `nav:`
        for page in listed:
            page.title = self.listings[page.file.src_uri].title
        section = Section(NAV_TITLE, listed)
        for page in listed:
            page.parent = section
        placed = set(map(id, nav.pages))  # by the user's `nav:`, which says where they belong
        for src_uri in self.beliefs:  # highlights the section on belief pages (as Material's blog)
            found = files.get_file_from_path(src_uri)
            if found is not None and found.page is not None and id(found.page) not in placed:
                found.page.parent = section
        nav.items.append(section)
        last = nav.pages[-1] if nav.pages else None
        for page in listed:
            page.previous_page, page.next_page = last, None
            if last is not None:
                last.next_page = page
            last = page
        nav.pages.extend(listed)
        return nav

    # -- pages --------------------------------------------------------------------------------

    def on_pre_page(self, page: Page, *, config, files: Files) -> Page:
        src_uri = page.file.src_uri
        belief = self.beliefs.get(src_uri)
        # A title is already set where the user's `nav:` gives one (or on_nav did): kept.
        if belief is not None:
            if page.title is None:  # themes print titles unescaped: ids are validated, claims never used
                page.title = belief.id
            page.edit_url = edit_link(self.ctx, belief.id)
        elif src_uri in self.listings:
            if page.title is None:
                page.title = self.listings[src_uri].title
            page.edit_url = None
        return page

    def on_page_markdown(self, markdown: str, *, page: Page, config, files: Files) -> str:
        if page.file.src_uri in self.beliefs or page.file.src_uri in self.listings:
            if not self.site.search:
                page.meta["search"] = {"exclude": True}  # Material's search honours this
            return ""
        return markdown

    def on_page_content(self, html_text: str, *, page: Page, config, files: Files) -> str:
        src_uri = page.file.src_uri
        belief = self.beliefs.get(src_uri)
        listing = self.listings.get(src_uri)
        if belief is None and listing is None:
            return html_text
        ctx = self.ctx
        path = src_uri[: -len(".md")] + ".html"
        try:
            if belief is not None:
                values = belief_page(ctx, belief, path)
                spec = core_pages.PageSpec(path, belief.id, "belief.html", {"b": values})
                self.search_text[src_uri] = self._belief_search_text(values)
            else:
                spec = core_pages.PageSpec(path, listing.title, listing.template,
                                           listing.values(ctx, self.env, path))
                self.search_text[src_uri] = ""  # the title is enough; the rows repeat every claim
            fragment = core_pages.render_page(self.env, ctx, spec, self.counts, fragment=True)
        except Exception as exc:
            if not core_pages.raised_by_template(exc):  # a bug: its traceback is wanted
                raise
            raise PluginError(f"beliefs: {core_pages.template_problem(exc).text()}") from None
        page.toc, anchors = _toc(fragment)
        page.present_anchor_ids = anchors
        return f'<div class="belief-site">\n{fragment}</div>\n'

    def _belief_search_text(self, values: dict) -> str:
        """Claim and summary as the core rendered them (escaped HTML); the title is the id.

        DESIGN "search": id, claim and summary only, never whole pages (lists of other
        beliefs' claims would make every belief match every query near it).
        """
        if not self.site.search:
            return ""
        return str(values["claim"]) + (str(values["summary"]) if values.get("summary") else "")

    @event_priority(1)  # just before the search plugins (priority 0) read page.content
    def _search_view(self, context, *, page: Page, config, nav):
        text = self.search_text.get(page.file.src_uri)
        if text is not None and page.content is not None:
            self.held[page.file.src_uri] = page.content
            page.content = text
        return context

    @event_priority(-1)  # right after them: the template renders the body
    def _page_view(self, context, *, page: Page, config, nav):
        body = self.held.pop(page.file.src_uri, None)
        if body is not None:
            page.content = body
        return context

    on_page_context = CombinedEvent(_search_view, _page_view)

    # -- badges, JSON and the inventory ---------------------------------------------------------

    @event_priority(-100)  # last: objects.inv from mkdocstrings (or others) exists by then
    def on_post_build(self, *, config) -> None:
        if self.ctx is None:
            return
        site_dir = Path(config.site_dir)
        for path, data in self.written.items():
            target = site_dir / path
            if not target.is_file() or target.read_bytes() != data:
                log.warning("beliefs: %s was written by another plugin; the belief site's file is "
                            "left out", path)
        self._write_inventory(site_dir)

    def _write_inventory(self, site_dir: Path) -> int:
        ours = inventory(self.ctx)
        target = site_dir / INVENTORY
        if INVENTORY in self.claimed or target.exists():
            existing = target.read_bytes() if target.exists() else None
            merged = merge_inventories(existing, ours) if existing is not None else None
            if merged is None:
                beside = site_dir / self.site.prefix / INVENTORY
                beside.parent.mkdir(parents=True, exist_ok=True)
                beside.write_bytes(rebase_inventory(ours, self.site.prefix))
                log.warning("beliefs: %s is not a Sphinx v2 inventory; the beliefs' inventory is "
                            "at %s/%s", INVENTORY, self.site.prefix, INVENTORY)
                return 1
            target.write_bytes(merged)
            return 1
        target.write_bytes(ours)
        return 1

    # -- mkdocs serve -----------------------------------------------------------------------------

    def on_serve(self, server, *, config, builder):
        site = self.site or site_config(self.config, config)
        server.watch(str(site.source_path()))
        if site.templates:
            base_dir = Path(site.config_path).parent if site.config_path else Path(".")
            server.watch(str(base_dir / site.templates))
        return server


# -- Sphinx inventories ------------------------------------------------------------------------

_HEADER = b"# Sphinx inventory version 2\n"


def _split_inventory(data: bytes) -> tuple[list[bytes], list[bytes]] | None:
    """(the four header lines, the entry lines) of a v2 inventory, or None."""
    head = data.split(b"\n", 4)
    if len(head) < 5 or not data.startswith(_HEADER):
        return None
    try:
        body = zlib.decompress(head[4]).decode("utf-8")
    except (zlib.error, UnicodeDecodeError):
        return None
    return [line + b"\n" for line in head[:4]], [l.encode("utf-8") for l in body.splitlines() if l.strip()]


def merge_inventories(existing: bytes, ours: bytes) -> bytes | None:
    """One inventory: the existing header and entries, ours added (ours win on the same name
    and role); None when the existing file is not a v2 inventory."""
    theirs, mine = _split_inventory(existing), _split_inventory(ours)
    if theirs is None or mine is None:
        return None

    def key(line: bytes) -> tuple[bytes, bytes]:
        parts = line.split(b" ", 2)
        return (parts[0], parts[1] if len(parts) > 1 else b"")

    ours_keys = {key(line) for line in mine[1]}
    kept = [line for line in theirs[1] if key(line) not in ours_keys]
    body = b"".join(line + b"\n" for line in (*kept, *mine[1]))
    return b"".join(theirs[0]) + zlib.compress(body, 9)


def rebase_inventory(ours: bytes, prefix: str) -> bytes:
    """Our inventory with URIs relative to `<prefix>/` (for an inventory placed there)."""
    header, lines = _split_inventory(ours)
    lead = (prefix + "/").encode("utf-8")
    rebased = []
    for line in lines:
        name, role, priority, uri, dispname = line.split(b" ", 4)
        rebased.append(b" ".join((name, role, priority, uri[len(lead):] if uri.startswith(lead) else uri,
                                  dispname)))
    return b"".join(header) + zlib.compress(b"".join(l + b"\n" for l in rebased), 9)


def _belief_files(ctx: RenderContext):
    """Each belief's badges and index.json (its page is MkDocs's)."""
    for belief in ctx.shown():
        yield from badges.belief_badges(ctx, belief.id)
        yield belief_json(ctx, belief)
