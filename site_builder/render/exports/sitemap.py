"""`sitemap.xml` and `robots.txt`, only when `site_url` is set (sitemaps need absolute URLs).

The sitemap lists the index page and every visible belief page; it has no `<lastmod>`:
render reads no clock, so the same input gives the same bytes.
"""

from __future__ import annotations

from typing import Iterator
from html import escape

from ... import urls
from .. import OutputFile, RenderContext
from .records import one_line


def _base(site_url: str) -> str:
    # A newline in the configured URL would add lines to robots.txt.
    return one_line(site_url).replace(" ", "%20")


def sitemap(ctx: RenderContext, site_url: str) -> bytes:
    """sitemaps.org 0.9 urlset: the index, then belief pages sorted by id."""
    directory = ctx.config.use_directory_urls
    pages = ["index.html"] + [ctx.page(b.id) for b in ctx.shown()]
    locations = (escape(urls.site_url_for(site_url, p, directory), quote=False) for p in pages)
    entries = "".join(f"  <url><loc>{loc}</loc></url>\n" for loc in locations)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{entries}</urlset>\n").encode("utf-8")


def robots(site_url: str) -> bytes:
    """Allow everything and point at the sitemap."""
    return ("User-agent: *\nAllow: /\n"
            f"Sitemap: {urls.site_url_for(site_url, 'sitemap.xml')}\n").encode("utf-8")


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """sitemap.xml and robots.txt when `site_url` is configured; nothing otherwise."""
    if not ctx.config.site_url or not ctx.config.site_url.strip():
        return
    base = _base(ctx.config.site_url)
    yield OutputFile("sitemap.xml", sitemap(ctx, base))
    yield OutputFile("robots.txt", robots(base))
