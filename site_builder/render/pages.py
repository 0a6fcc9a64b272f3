"""HTML pages through the Jinja2 theme: belief pages, index, premises, OUT, nogoods, 404."""

from __future__ import annotations

import json
import os
import posixpath
import re
import traceback
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import jinja2
import markupsafe
from markupsafe import Markup

from ..checks import echo_of, kind_of
from ..diagnostics import Diagnostic
from ..evaluate.queries import explain_step
from ..model import IN, OUT, Belief
from . import OutputFile, RenderContext
from .graph import GRAPH_PAGE, page_values as graph_page_values
from .markup import escaped, reveal
from .search import enabled as search_enabled
from ..diagnostics import short
from .rows import cited, memo, structural
from .views import belief_page, ref, refs


def templates_dir() -> Path:
    """The default theme: inside the package when installed, `templates/` in a checkout."""
    here = Path(__file__).resolve().parent.parent
    installed = here / "templates"
    return installed if installed.is_dir() else here.parent / "templates"


def _escape(value: Any) -> str:
    """What a template outputs for `{{ value }}`: markupsafe.escape's text, without Markup's
    constructor (Python; 3% of a belief page each way): HTML the views made (a Markup) as
    it is, anything else escaped into a str (`escaped`). The compiled code calls this only
    to write the value out, where its type no longer matters."""
    return value if type(value) is Markup else escaped(value)


class _Template(jinja2.Template):
    """A compiled template outputs through `_escape`: the name its code looks up when it
    writes a value out (the module's `escape`, imported from jinja2.runtime)."""

    @classmethod
    def _from_namespace(cls, environment: jinja2.Environment, namespace: Any, globals: Any) -> jinja2.Template:
        if namespace.get("escape") is markupsafe.escape:
            namespace["escape"] = _escape
        return super()._from_namespace(environment, namespace, globals)


class _Environment(jinja2.Environment):
    """Views are plain dicts, so `b.status` looks the key up first: Jinja's default tries an
    attribute first, and the failed lookup raises (hundreds of times per belief page)."""

    template_class = _Template

    def getattr(self, obj: Any, attribute: str) -> Any:
        if type(obj) is dict:
            try:
                return obj[attribute]
            except KeyError:
                pass
        return super().getattr(obj, attribute)


def environment(ctx: RenderContext) -> jinja2.Environment:
    """One autoescaping environment per build; a user folder overrides single templates.
    Templates are read once per build: Jinja's default `auto_reload` stats the file at every
    page (2% of a belief page's time), and a changed template means a new build anyway.
    With a build cache, compiled templates are kept in it (cache.Rows.compiled_templates)."""
    folders = [str(templates_dir())]
    if ctx.config.templates:
        base = Path(ctx.config.config_path).parent if ctx.config.config_path else Path(".")
        folders.insert(0, str(base / ctx.config.templates))
    env = _Environment(loader=jinja2.FileSystemLoader(folders), autoescape=True,
                       undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True,
                       keep_trailing_newline=True, auto_reload=False,
                       bytecode_cache=ctx.rows.compiled_templates() if ctx.rows is not None else None)
    env.filters["reveal"] = reveal
    return env


def _root(path: str) -> str:
    depth = path.count("/")
    return "../" * depth if depth else "./"


def _common(ctx: RenderContext, path: str, title: str, counts: Counter) -> dict[str, Any]:
    href = lambda target: ctx.href(path, target)  # noqa: E731
    return {"title": title, "site_name": ctx.config.site_name, "root": _root(path),
            "nav": {"index": href("index.html"), "premises": href("premises/index.html"),
                    "out": href("out/index.html"), "nogoods": href("nogoods/index.html"),
                    "graph": href("graph/index.html"),
                    "changes": href("changes/index.html") if ctx.diff is not None else None,
                    "search": href("pagefind/pagefind.js") if search_enabled(ctx) else None},
            "assets": posixpath.join(_root(path), "assets"), "counts": counts,
            "home": href("index.html"), "site_badge": href("badge.svg")}


TEMPLATE_FILES = (".html", ".xml", ".txt", ".svg")
_FRAME = re.compile(r'File "([^"\n]+)", line (\d+)')


def _frames(exc: BaseException) -> list[tuple[str, int]]:
    """(file, line) of each frame, outermost first; an exception raised in a worker process
    ends with the worker's frames, which come back as text (concurrent.futures' `__cause__`)."""
    frames = [(f.filename, f.lineno or 0) for f in traceback.extract_tb(exc.__traceback__)]
    remote = getattr(exc.__cause__, "tb", "")
    return frames + [(m[1], int(m[2])) for m in _FRAME.finditer(remote if isinstance(remote, str) else "")]


def template_location(exc: BaseException) -> tuple[str | None, int]:
    """The template file and line of a template error, or (None, 0): a syntax error knows
    them; any other is located by the innermost template frame of its traceback."""
    if getattr(exc, "filename", None):
        return exc.filename, getattr(exc, "lineno", None) or 0  # type: ignore[attr-defined]
    inside = [f for f in _frames(exc) if f[0].endswith(TEMPLATE_FILES)]
    return inside[-1] if inside else (None, 0)


def raised_by_template(exc: BaseException) -> bool:
    """A template error, or another error raised by a template's own code (`{{ 1 // 0 }}`) or
    by Jinja's filters it calls (`{{ "%d"|format("x") }}`), not by belief-site's code."""
    if isinstance(exc, jinja2.TemplateError):
        return True
    frames = _frames(exc)
    last = max((k for k, (name, _) in enumerate(frames) if name.endswith(TEMPLATE_FILES)), default=None)
    return last is not None and not any(f"{os.sep}site_builder{os.sep}" in name for name, _ in frames[last + 1:])


def template_problem(exc: BaseException) -> Diagnostic:
    """E805 at the template's file and line (relative to here when below it)."""
    name, line = template_location(exc)
    shown = name or "templates"
    if name and not os.path.relpath(name).startswith(".."):
        shown = os.path.relpath(name)
    # `message`, not str(): a syntax error that came back from a worker would add its location again
    message = getattr(exc, "message", None) or str(exc)
    return Diagnostic(shown, line, "E805", f"template error: {type(exc).__name__}: {message}",
                      "fix the template; a template in the `templates` folder replaces the theme's one of "
                      "that name and is given the same values")


@dataclass(frozen=True, slots=True)
class PageSpec:
    """One HTML page: where it goes, its title, its template and the template's values."""

    path: str
    title: str
    template: str
    values: dict


def belief_spec(ctx: RenderContext, belief: Belief) -> PageSpec:
    """The page of one belief."""
    path = ctx.page(belief.id)
    return PageSpec(path, belief.id, "belief.html", {"b": belief_page(ctx, belief, path)})


def listing_specs(ctx: RenderContext, env: jinja2.Environment) -> Iterator[PageSpec]:
    """The site's listings: index, premises, OUT, nogoods and the graph explorer."""
    yield PageSpec("index.html", "All beliefs", "index.html", index_values(ctx, env, "index.html"))
    yield PageSpec("premises/index.html", "Premises", "premises.html",
                   premise_values(ctx, env, "premises/index.html"))
    yield PageSpec("out/index.html", "OUT beliefs", "out.html", out_values(ctx, env, "out/index.html"))
    yield PageSpec("nogoods/index.html", "Nogoods", "nogoods.html", nogood_values(ctx, env, "nogoods/index.html"))
    yield PageSpec(GRAPH_PAGE, "Graph explorer", "graph.html", graph_page_values(ctx))


def render_page(env: jinja2.Environment, ctx: RenderContext, spec: PageSpec, counts: Counter | None,
                fragment: bool = False) -> str:
    """A whole HTML page, or (fragment) only its main content; `counts`: the site's IN/OUT
    counts (None on the default theme's belief pages: `belief_page_counts`)."""
    values = _common(ctx, spec.path, spec.title, counts)
    return env.get_template(spec.template).render(**values, **spec.values, fragment=fragment)


def site_counts(ctx: RenderContext) -> Counter:
    """IN/OUT counts of the published beliefs (once per build, never per page)."""
    return Counter(ctx.evaluation.value(b.id) for b in ctx.shown())


def belief_page_counts(ctx: RenderContext) -> Counter | None:
    """The site's IN/OUT counts as belief pages get them: not at all with the default theme,
    which shows them on the site's own pages only (a status flip renders again only the
    belief pages that show a flipped belief, and a theme that used them there would fail
    loudly rather than go stale); a `templates` folder may show them on every page, so its
    belief pages get them, and the build cache's salt then covers every status."""
    return site_counts(ctx) if ctx.config.templates else None


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """The listings and 404 (belief pages come with their other files: render.belief)."""
    env = environment(ctx)
    counts = site_counts(ctx)
    for spec in listing_specs(ctx, env):
        yield OutputFile(spec.path, render_page(env, ctx, spec, counts).encode("utf-8"))
    yield _not_found(env, ctx, counts)


# The listings' template values from (context, environment, the page's path): also the MkDocs plugin's.

def index_values(ctx: RenderContext, env: jinja2.Environment, here: str) -> dict[str, Any]:
    """The index's rows and its counts of premises and derived beliefs."""
    return {"rows": _index_rows(ctx, env, here), "kinds": Counter(map(kind_of, ctx.shown()))}


def premise_values(ctx: RenderContext, env: jinja2.Environment, here: str) -> dict[str, Any]:
    return {"rows": _premise_rows(ctx, env, here)}


def out_values(ctx: RenderContext, env: jinja2.Environment, here: str) -> dict[str, Any]:
    return {"rows": _out_rows(ctx, env, here)}


def nogood_values(ctx: RenderContext, env: jinja2.Environment, here: str) -> dict[str, Any]:
    return {"rows": _nogood_rows(ctx, here)}


def _index_rows(ctx: RenderContext, env: jinja2.Environment, here: str) -> ListingRows:
    ev, shown = ctx.evaluation, ctx.shown()
    changes_href = ctx.href(here, "changes/index.html") if ctx.diff is not None else None

    def values(k: int) -> dict[str, Any]:
        b = shown[k]
        return {"id": b.id, "href": ctx.href(here, ctx.page(b.id)), "status": ev.value(b.id),
                "kind": kind_of(b), "depth": ev.depth[b.id],
                "dependents": sum(1 for d in ev.dependents[b.id] if ctx.is_visible(d.id)),
                "claim": short(echo_of(b), 160), "changes": ctx.marks.get(b.id, ()),
                "changes_href": changes_href if b.id in ctx.marks else None}

    return _rows(ctx, env, "index_row", [b.id for b in shown], values)


def _premise_rows(ctx: RenderContext, env: jinja2.Environment, here: str) -> ListingRows:
    """Premises ranked by how many beliefs rest on them (traces are capped: counts are lower bounds)."""
    premises, resting = json.loads(structural(ctx, "premise_ranking", lambda: _ranking(ctx)))
    return _rows(ctx, env, "premise_row", premises,
                 lambda k: {**ref(ctx, premises[k], here), "resting": resting[k]})


def _ranking(ctx: RenderContext) -> bytes:
    """The premises, most rested on first, and how many beliefs rest on each (of the structure)."""
    resting: Counter = Counter()
    trace, everything = ctx.evaluation.trace, ctx.visible.issuperset(ctx.beliefs)
    for belief in ctx.shown():
        if not belief.is_premise:  # with every belief published, no premise needs checking
            resting.update(trace[belief.id] if everything else (p for p in trace[belief.id] if ctx.is_visible(p)))
    premises = sorted((b.id for b in ctx.shown() if b.is_premise), key=lambda i: (-resting[i], i))
    return json.dumps([premises, [resting[i] for i in premises]], separators=(",", ":")).encode("utf-8")


def _out_rows(ctx: RenderContext, env: jinja2.Environment, here: str) -> ListingRows:
    """OUT beliefs with why, and the beliefs that cause it (their claims are in the row too).
    A row names the beliefs its justifications cite in `shows`: their states decide its
    reason and causes, which are among them; so a kept row needs no explanation worked out."""
    ev = ctx.evaluation
    out = [b for b in ctx.shown() if ev.value(b.id) == OUT]

    def values(k: int) -> dict[str, Any]:
        belief = out[k]
        step, causes = explain_step(ev, belief.id)
        return {**ref(ctx, belief.id, here), "reason": step.reason, "kind": kind_of(belief),
                "causes": refs(ctx, causes, here)}

    return _rows(ctx, env, "out_row", [b.id for b in out], values, [cited(b) for b in out])


class ListingRows:
    """A listing's rows as its template gets them: `{{ rows }}` writes them all, each followed
    by a newline, as one text the build cache keeps whole (render/rows.py `joined`: after a
    claim edit one row is made again, with no step per kept row; rendering the three listings
    row by row took 0.19 s of a 10k claim edit's worker time); `rows|length` counts them; a
    template that loops over them (an override from before) gets each row, made afresh."""

    def __init__(self, html: str, count: int, each: Callable[[], list[Markup]]) -> None:
        self._html, self._count, self._each = html, count, each
        self._rows: list[Markup] | None = None

    def __html__(self) -> str:
        return self._html

    __str__ = __html__

    def __len__(self) -> int:
        return self._count

    def _made(self) -> list[Markup]:
        if self._rows is None:
            self._rows = self._each()
        return self._rows

    def __iter__(self) -> Iterator[Markup]:
        return iter(self._made())

    def __reversed__(self) -> Iterator[Markup]:
        return reversed(self._made())

    def __getitem__(self, index: int | slice) -> Markup | list[Markup]:
        return self._made()[index]


def _rows(ctx: RenderContext, env: jinja2.Environment, macro: str, ids: list[str],
          values: Callable[[int], dict], shows: list[tuple[str, ...]] | None = None) -> ListingRows:
    """A listing's rows, the k-th for belief `ids[k]` from `values(k)`, through the theme's
    macro of that name; `shows[k]`: the other beliefs the k-th row shows. Rows of the last
    build whose beliefs are unchanged are taken as they are (render/rows.py)."""
    macros = env.get_template("_macros.html")
    make_row, kept = getattr(macros.module, macro, None), memo(ctx, macro)
    if make_row is None:  # an override of _macros.html from before the listings' rows were macros
        missing = jinja2.TemplateRuntimeError(f"_macros.html defines no macro {macro!r}, which renders "
                                              "the rows of a listing (copy it from the theme's _macros.html)")
        missing.filename = macros.filename  # type: ignore[attr-defined]
        raise missing

    def render(k: int) -> str:
        try:
            return str(make_row(values(k)))
        except Exception:  # called from here, not from a template: give the error its template lines
            env.handle_exception()

    html = kept.joined(ids, render, "\n", shows=shows).decode("utf-8", "surrogatepass")
    kept.done()
    return ListingRows(html + "\n" if ids else "", len(ids), lambda: [Markup(render(k)) for k in range(len(ids))])


def _nogood_rows(ctx: RenderContext, here: str) -> list[dict]:
    rows = []
    for nogood in ctx.evaluation.network.nogoods:
        members = [ref(ctx, n, here) for n in nogood.nodes]
        if any(m is None for m in members):
            continue  # touches an unpublished belief: leave the whole nogood out
        rows.append({"id": nogood.id, "members": members, "discovered": nogood.discovered,
                     "resolution": nogood.resolution,
                     "all_in": all(ctx.evaluation.value(n) == IN for n in nogood.nodes)})
    return rows


def _not_found(env, ctx: RenderContext, counts: Counter) -> OutputFile:
    """404 is served at any depth: links must be absolute (site_url path) or root-relative."""
    base = "/"
    if ctx.config.site_url:
        from urllib.parse import urlsplit
        base = urlsplit(ctx.config.site_url).path.rstrip("/") + "/"
    values = _common(ctx, "404.html", "Not found", counts)
    values.update(root=base, assets=base + "assets", home=base,
                  nav={**{k: base + v for k, v in (("index", ""), ("premises", "premises/"),
                                                   ("out", "out/"), ("nogoods", "nogoods/"),
                                                   ("graph", "graph/"))},
                       "changes": base + "changes/" if ctx.diff is not None else None,
                       "search": base + "pagefind/pagefind.js" if search_enabled(ctx) else None},
                  site_badge=base + "badge.svg")
    html = env.get_template("404.html").render(**values, fragment=False)
    return OutputFile("404.html", html.encode("utf-8"))
