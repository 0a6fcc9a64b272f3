"""`llms.txt` (llmstxt.org): a title, a one-line summary, then links to each belief's JSON."""

from __future__ import annotations

from typing import Iterator

from ... import urls
from .. import OutputFile, RenderContext
from ...model import Belief
from ..rows import memo
from .records import counts, first_line, one_line, site_base


def _n(count: int, noun: str) -> str:
    return f"{count} {noun}" + ("" if count == 1 else "s")


def llms_txt(ctx: RenderContext) -> bytes:
    """`# name`, `> summary`, a note on the machine-readable files, `## Beliefs` sorted by id."""
    c, base = counts(ctx), site_base(ctx)
    name = one_line(ctx.config.site_name) or "Beliefs"
    lines = [
        f"# {name}", "",
        f"> A belief network of {_n(c['beliefs'], 'belief')}: {c['IN']} IN, {c['OUT']} OUT "
        f"({_n(c['premises'], 'premise')}, {c['derived']} derived).", "",
        f"The whole network is in [beliefs.json]({_href(base, 'beliefs.json')}) (schema: "
        f"[beliefs.schema.json]({_href(base, 'beliefs.schema.json')})); each belief below links to its own "
        "JSON record with why it is IN or OUT, the premises it rests on and its impact.", "",
        "## Beliefs", "",
    ]
    kept, shown = memo(ctx, "llms"), ctx.shown()  # a line per belief, kept by the build cache (render/rows.py)
    beliefs = kept.joined([b.id for b in shown], lambda k: _line(ctx, base, shown[k]), "\n")
    kept.done()
    return ("\n".join(lines) + "\n").encode("utf-8") + (beliefs + b"\n" if shown else b"")


def _line(ctx: RenderContext, base: str, belief: Belief) -> str:
    claim = first_line(belief.text)
    link = f"- [{belief.id}]({_href(base, urls.json_path(belief.id, ctx.config.prefix))})"
    return f"{link}: {claim}" if claim else link


def _href(base: str, path: str) -> str:
    """Absolute under the site's URL (a reader given the file alone can follow it), else relative."""
    return urls.site_url_for(base, path, False) if base else path


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """llms.txt at the site root."""
    yield OutputFile("llms.txt", llms_txt(ctx))
