"""`sitemap.xml` and `robots.txt`, only when `site_url` is set (sitemaps need absolute URLs).

The sitemap lists the index page and every visible belief page (past 50,000, through a
sitemap index); it has no `<lastmod>`: render reads no clock, so the same input gives the
same bytes.
"""

from __future__ import annotations

from typing import Iterator
from html import escape

from ... import urls
from .. import OutputFile, RenderContext
from .records import site_base


MAX_URLS = 50_000
"""sitemaps.org's limit per sitemap file: a larger site gets a sitemap index over several."""

_HEAD = '<?xml version="1.0" encoding="UTF-8"?>\n'
_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"


def sitemaps(ctx: RenderContext, site_url: str) -> Iterator[OutputFile]:
    """sitemaps.org 0.9: `sitemap.xml`, a urlset of the index and the belief pages sorted by
    id; past MAX_URLS pages, a sitemap index over `sitemap-1.xml`, `sitemap-2.xml`..."""
    directory = ctx.config.use_directory_urls
    pages = ["index.html"] + [ctx.page(b.id) for b in ctx.shown()]
    if len(pages) <= MAX_URLS:
        yield OutputFile("sitemap.xml", _urlset(pages, site_url, directory))
        return
    parts = [f"sitemap-{k // MAX_URLS + 1}.xml" for k in range(0, len(pages), MAX_URLS)]
    for k, name in enumerate(parts):
        yield OutputFile(name, _urlset(pages[k * MAX_URLS:(k + 1) * MAX_URLS], site_url, directory))
    entries = "".join(f"  <sitemap><loc>{_location(site_url, name, False)}</loc></sitemap>\n" for name in parts)
    yield OutputFile("sitemap.xml", f'{_HEAD}<sitemapindex xmlns="{_NS}">\n{entries}</sitemapindex>\n'.encode("utf-8"))


def _urlset(pages: list[str], site_url: str, directory: bool) -> bytes:
    entries = "".join(f"  <url><loc>{_location(site_url, p, directory)}</loc></url>\n" for p in pages)
    return f'{_HEAD}<urlset xmlns="{_NS}">\n{entries}</urlset>\n'.encode("utf-8")


def _location(site_url: str, path: str, directory: bool) -> str:
    return escape(urls.site_url_for(site_url, path, directory), quote=False)


def robots(site_url: str) -> bytes:
    """Allow everything and point at the sitemap."""
    return ("User-agent: *\nAllow: /\n"
            f"Sitemap: {urls.site_url_for(site_url, 'sitemap.xml')}\n").encode("utf-8")


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """sitemap.xml and robots.txt when `site_url` is configured; nothing otherwise."""
    base = site_base(ctx)
    if not base:
        return
    yield from sitemaps(ctx, base)
    yield OutputFile("robots.txt", robots(base))
