"""Claims and summaries through markdown-it-py: the quick test before linkify-it's pretest."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st
from linkify_it import LinkifyIt

from site_builder.render import markup

# Pieces of every kind of link linkify-it finds, and of text that is nearly one.
PIECES = ["http:", "HTTPS:", "ftp:", "mailto:", "//", "@", ".", ". ", "www", "WWW.", "localhost",
          "LOCALHOſT", "com", "org", "рф", "xn--p1ai", "1", "23", "a", "é", " ", "\n", "_", "-",
          "<", ">", "(", ")", "，", "。", "\u3000", "ʼ", "K"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=12).map("".join))
def test_every_text_the_pretest_accepts_passes_the_quick_test(text):
    if LinkifyIt().pretest(text):
        assert markup._MAY_LINK.search(text), text


def test_plain_prose_skips_the_pretest_and_links_are_still_found(monkeypatch):
    calls = []
    real = LinkifyIt.pretest
    monkeypatch.setattr(LinkifyIt, "pretest", lambda self, text: calls.append(text) or real(self, text))
    md = markup._renderer()
    assert md.render("Plain prose; two sentences. Ünïcode — too, 3 times.\n") == \
        "<p>Plain prose; two sentences. Ünïcode — too, 3 times.</p>\n"
    assert calls == []
    for text, href in (("see example.com now", "http://example.com"), ("mail a@b.org", "mailto:a@b.org"),
                       ("at https://x.org/p", "https://x.org/p"), ("WWW.EXAMPLE.ORG", "http://WWW.EXAMPLE.ORG")):
        assert f'<a href="{href}" rel="nofollow noopener">' in md.render(text), text
    assert len(calls) == 4


# Pieces of what a line may start with, hold or end with that markdown-it turns into markup,
# or nearly: list and heading starts, setext and thematic rules, entities, escapes, code,
# emphasis, links (linkify's too), quotes, and whitespace it strips or keeps at the ends.
LINE_PIECES = ["-", "+", "=", "*", "1.", "2024)", "1234567890.", " ", "    ", "\t", "\u00a0", "\u3000", "\x1f",
               "\x0b", "\u2028", "\x85", "\x00", "\r", "\n", "#", "##", ">", "<", "&", "&amp;", "&copy;", "\\",
               "`", "_", "~~", "|", "[", "]", "(", ")", "!", "'", '"', ":", "/", "://", "@", ".", "e.g.",
               "www.", "example.com", "http", "a", "Z", "é", "—", "3", "$", "%", "^", "{", "}"]


@settings(max_examples=3000, deadline=None)
@given(st.lists(st.sampled_from(LINE_PIECES), max_size=10).map("".join))
def test_a_line_taken_as_plain_renders_as_markdown_it_renders_it(text):
    assert markup.render_block(text) == markup._md().render(text), repr(text)
    assert markup.render_inline(text) == markup._md().renderInline(text), repr(text)


def test_plain_claims_skip_the_parser_and_render_as_it_would():
    """One printable line with no markup, as most claims and labels are, is its own paragraph
    or (a label) its own text (quotes escaped); a start that opens a list, a link, an end markdown-it strips, is parsed."""
    plain = ['Attention is non-symmetric: "i looks at j" is not "j looks at i", e.g. at 3.5 times.',
             "10 things — naïve, $5 {x} ^y (and more)", "Ünïcode; too = 4% of it's"]
    parsed = ["2024) a list", "- a list", "see www.example.com", "mail a@b.co", "x://y", "trailing ",
              "ends\u00a0", "two\nlines", "*emphasis*", "a & b", "# heading", "a <b>", ""]
    for text in plain + parsed:
        assert markup._plain(text) == (text in plain), repr(text)
        assert markup.render_block(text) == markup._md().render(text), repr(text)
        assert markup.render_inline(text) == markup._md().renderInline(text), repr(text)


@settings(max_examples=2000, deadline=None)
@given(st.one_of(st.text(), st.lists(st.sampled_from(LINE_PIECES), max_size=10).map("".join)))
def test_escaped_is_markupsafe_escape_as_a_plain_str(text):
    """`escaped` gives markupsafe.escape's text for HTML built by formatting, as a str."""
    from markupsafe import escape

    assert markup.escaped(text) == str(escape(text)) and type(markup.escaped(text)) is str


def test_escaped_takes_anything_escape_takes(monkeypatch):
    from markupsafe import Markup, escape

    class Shown:
        def __html__(self):
            return "<em>shown</em>"

    class Tagged(str):
        def __html__(self):
            return "<b>tagged</b>"

    values = ["<a href='x'>&\"", 3, None, Shown(), Tagged("<i>"), Markup("<u>made</u>")]
    for fallback in (False, True):  # without markupsafe's str-to-str escaping (before 3.0): escape itself
        if fallback:
            monkeypatch.setattr(markup, "_ESCAPED", None)
        assert [markup.escaped(v) for v in values] == [str(escape(v)) for v in values]
        assert all(type(markup.escaped(v)) is str for v in values)


def test_plain_lines_render_without_loading_markdown_it():
    """A build whose changed pages show only plain lines (a claim edit, mostly) never pays for
    loading the parser (62 modules, in every worker); a line that may hold a link still
    goes through linkify's pretest, and one with markup through the parser."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from site_builder.render.markup import render_block, render_inline\n"
        "assert render_block('Plain prose \\u2014 na\\u00efve, 3 times, at 50% (and more).') == "
        "'<p>Plain prose \\u2014 na\\u00efve, 3 times, at 50% (and more).</p>\\n'\n"
        "assert render_inline('a \"quoted\" label') == 'a &quot;quoted&quot; label'\n"
        "print('markdown_it' in sys.modules)\n"
        "assert render_inline('it is 3.5 times') == 'it is 3.5 times'\n"
        "print('markdown_it' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]  # "3.5" may be a host name: the pretest decides
