"""Untrusted prose -> safe HTML with markdown-it-py (DESIGN "parsing").

Raw HTML is escaped (`html=False`), links keep only http, https, mailto and relative
targets, and images are shown as their text: belief text must not load anything.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import markupsafe
from markupsafe import Markup, escape

from ..diagnostics import UNSHOWABLE

if TYPE_CHECKING:
    from markdown_it import MarkdownIt

SAFE_SCHEMES = ("http", "https", "mailto")

_ESCAPED = getattr(markupsafe, "_escape_inner", None)
"""markupsafe's escaping of a str into a str (3.0 on; not public: without it, `escape` does it)."""


def escaped(value: Any) -> str:
    """`escape(value)`'s text as a plain str, for HTML built by formatting: a str is not
    wrapped in a Markup, whose constructor is Python (3% of a belief page's time)."""
    if type(value) is str and _ESCAPED is not None:
        return _ESCAPED(value)
    return str(escape(value))

_HIDDEN = re.compile(f"(?![\t\n\r]){UNSHOWABLE.pattern}")
"""Control characters (but tab and line ends) and the bidi marks, embeddings, overrides and
isolates, which show nothing themselves yet can make text display in another order than it
reads."""


def safe_url(url: str) -> bool:
    """True for http(s), mailto and relative URLs (no javascript:, data:, file:, //host)."""
    # Browsers read `\` as `/` in http(s) URLs: `\\host` and `/\host` leave the site too.
    candidate = url.strip().replace("\\", "/")
    if any(ord(c) < 32 for c in candidate):
        return False
    parts = urlsplit(candidate)
    if parts.scheme:
        return parts.scheme.lower() in SAFE_SCHEMES
    return not candidate.startswith("//")  # protocol-relative would leave the site's host


def safe_source_url(url: str) -> bool:
    """A belief's `source_url` is shown as a link only when absolute http(s) or mailto."""
    return safe_url(url) and urlsplit(url.strip()).scheme.lower() in SAFE_SCHEMES


_MAY_LINK = re.compile(r"[:/@]|\.\S|www\.|localhost", re.IGNORECASE)
"""What every match of linkify-it's pretest holds: a scheme's `:` or `//`, an `@`, a dot
before a host's next label, `www.` or `localhost` (same flags, so the same case folding)."""


def _renderer() -> MarkdownIt:
    from markdown_it import MarkdownIt  # on first use: 62 modules, which a build that renders no page does not read

    md = MarkdownIt("commonmark", {"html": False, "linkify": True, "typographer": False})
    # The pretest is one 1,500-character regex, run on every paragraph (4% of a belief
    # page); most claims hold none of what it looks for, which a small regex tells first.
    pretest = md.linkify.pretest
    md.linkify.pretest = lambda text: _MAY_LINK.search(text) is not None and pretest(text)
    md.enable(["linkify", "table", "strikethrough"])
    md.disable(["image"])  # an image would be a request to another host
    default_validate = md.validateLink
    md.validateLink = lambda url: default_validate(url) and safe_url(url)  # type: ignore[method-assign]

    def link_open(renderer, tokens, idx, options, env):
        tokens[idx].attrSet("rel", "nofollow noopener")
        return renderer.renderToken(tokens, idx, options, env)

    md.add_render_rule("link_open", link_open)
    return md


@lru_cache(maxsize=1)
def _md() -> MarkdownIt:
    return _renderer()


_PLAIN = re.compile(r"(?![-+=]|\d{1,9}[.)])[^*_`\[\]<>&\\#|~!]+")
"""A line in which Markdown makes no markup: none of the characters that open emphasis,
code, links, HTML, entities, escapes, headings, tables or strikethrough, and no start that
opens a list."""


def render_block(text: str) -> str:
    """Markdown prose (claim, summary) -> HTML block. Most claims are one plain line, whose
    paragraph needs no parser (51 us a claim, 2% of a belief page)."""
    if _plain(text):
        quoted = text.replace('"', "&quot;")  # markdown-it escapes &, <, > and "; no other is here
        return f"<p>{quoted}</p>\n"
    return _md().render(text)


def _plain(text: str) -> bool:
    """One printable line, markdown-it renders as its text: nothing to strip at its ends,
    no markup (`_PLAIN`), nothing linkify would link (`_MAY_LINK` first, as the parser's
    pretest: then a build whose changed pages show only such lines never loads markdown-it,
    which took 0.04-0.07 s in each worker of a 10k claim edit)."""
    return (text.isprintable() and text.strip() == text and _PLAIN.fullmatch(text) is not None
            and (_MAY_LINK.search(text) is None or not _md().linkify.pretest(text)))


def render_inline(text: str) -> str:
    """One line of Markdown (a label) -> inline HTML: a plain one (`_plain`) is its text, as
    for `render_block`, without the parser (165 us a label)."""
    if _plain(text):
        return text.replace('"', "&quot;")
    return _md().renderInline(text)


def reveal(text: str) -> Markup:
    """`text` escaped, each of `_HIDDEN` shown as a mark (its code point, its name on hover):
    the changes page is where a reviewer reads an edit, and a claim whose bidi override makes
    it display other than it reads (what search, exports and LLMs get) must not pass unseen
    (the PR comment replaces them: diff.markdown)."""
    escaped = escape(text)
    if not _HIDDEN.search(text):
        return escaped
    return Markup(_HIDDEN.sub(_mark, str(escaped)))


def _mark(found: re.Match) -> str:
    char = found[0]
    name = unicodedata.name(char, "control character")
    return f'<span class="hidden-char" title="{name.lower()}">U+{ord(char):04X}</span>'
