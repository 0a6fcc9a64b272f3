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
