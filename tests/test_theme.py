"""The default theme: overridable, self-contained, readable (WCAG AA), printable."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from site_builder.render.pages import templates_dir

from .conftest import EXAMPLE, ROOT, SEED

STYLE = (templates_dir() / "assets" / "style.css").read_text(encoding="utf-8")


def _block(selector: str) -> dict[str, str]:
    """The custom properties declared in the first rule whose selector matches exactly."""
    match = re.search(re.escape(selector) + r"\s*\{(?P<body>[^}]*)\}", STYLE)
    assert match, selector
    return dict(re.findall(r"--([\w-]+):\s*(#[0-9a-fA-F]{3,6})", match.group("body")))


def _luminance(colour: str) -> float:
    colour = colour.lstrip("#")
    if len(colour) == 3:
        colour = "".join(c * 2 for c in colour)
    channels = [int(colour[i:i + 2], 16) / 255 for i in (0, 2, 4)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


PAIRS = [("fg", "bg"), ("muted", "bg"), ("link", "bg"), ("in", "in-bg"), ("out", "out-bg"),
         ("fg", "panel"), ("muted", "panel"), ("in", "bg"), ("out", "bg")]


@pytest.mark.parametrize("selector", [":root", ':root[data-theme="dark"]'], ids=["light", "dark"])
def test_text_colours_meet_wcag_aa(selector):
    colours = {**_block(":root"), **_block(selector)}
    for fg, bg in PAIRS:
        assert contrast(colours[fg], colours[bg]) >= 4.5, (selector, fg, bg)


def test_dark_palette_is_the_same_for_the_system_setting_and_the_toggle():
    system = re.search(r"prefers-color-scheme: dark\)\s*\{\s*:root:not\(\[data-theme=\"light\"\]\)\s*\{"
                       r"(?P<body>[^}]*)\}", STYLE)
    assert system
    assert dict(re.findall(r"--([\w-]+):\s*(#\w+)", system.group("body"))) == _block(':root[data-theme="dark"]')


def test_the_theme_loads_nothing_from_another_host():
    for path in templates_dir().rglob("*"):
        if path.is_file() and path.suffix in (".html", ".css", ".js", ".svg"):
            text = path.read_text(encoding="utf-8")
            assert not re.search(r"(?:src|href|url)\s*[=(]\s*[\"']?(?:https?:)?//", text), path
            assert "@import" not in text and "@font-face" not in text, path


def test_print_and_phone_rules_exist():
    assert "@media print" in STYLE and "@media (max-width: 30rem)" in STYLE
    assert "overflow-wrap: anywhere" in STYLE  # long ids never force horizontal scrolling


def test_a_user_templates_folder_overrides_single_templates(cli, tmp_path):
    overrides = tmp_path / "my-theme"
    (overrides / "assets").mkdir(parents=True)
    (overrides / "404.html").write_text("{% extends 'base.html' %}{% block main %}<p>Lost here</p>{% endblock %}")
    (overrides / "assets" / "extra.css").write_text("body { color: black; }")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nplugins:\n  - beliefs:\n      source: {EXAMPLE}\n      templates: my-theme\n")
    out = tmp_path / "site"
    assert cli("build", "--config", config, "-o", out)[0] == 0
    assert "<p>Lost here</p>" in (out / "404.html").read_text(encoding="utf-8")
    assert (out / "assets" / "extra.css").is_file() and (out / "assets" / "style.css").is_file()
    assert "Why IN" in (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")  # others stay default


def test_a_listing_template_may_loop_over_its_rows_or_write_them_whole(cli, tmp_path):
    """The theme writes `{{ rows }}` (the cache keeps that text whole); an override that loops
    gets each row as HTML, and `rows|length` counts them, in a cold and an incremental build."""
    overrides = tmp_path / "my-theme"
    overrides.mkdir()
    (overrides / "premises.html").write_text(
        "{% extends 'base.html' %}{% block main %}<p>{{ rows|length }} rows</p>"
        "<ol>{% for row in rows %}<li class=\"row\">{{ row }}</li>{% endfor %}</ol>"
        "<div class=\"whole\">{{ rows }}</div><p class=\"first\">{{ rows[0] }}</p>"
        "<p class=\"last\">{{ rows|last }}</p><p class=\"text\">{{ rows|string }}</p>{% endblock %}")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nplugins:\n  - beliefs:\n      source: {EXAMPLE}\n      templates: my-theme\n")
    pages = []
    for run in ("cold", "incremental"):
        out = tmp_path / "site"
        assert cli("build", "--config", config, "-o", out, "--cache-dir", tmp_path / "cache")[0] == 0
        pages.append((out / "premises" / "index.html").read_text(encoding="utf-8"))
    page = pages[0]
    rows = re.findall(r'<li class="row">(<tr>.*?</tr>)</li>', page, flags=re.S)
    assert len(rows) > 1 and f"<p>{len(rows)} rows</p>" in page
    assert all('class="claim-echo"' in row and "&lt;" not in row for row in rows)  # HTML, not escaped
    whole = re.search(r'<div class="whole">(.*?)</div><p class="first">', page, flags=re.S).group(1)
    assert whole == "".join(row + "\n" for row in rows)
    assert f'<p class="first">{rows[0]}</p>' in page and f'<p class="last">{rows[-1]}</p>' in page
    assert "&lt;tr&gt;" in page and " object at 0x" not in page  # |string: the text, escaped
    assert pages[1] == page



def _theme(name: str) -> str:
    return (templates_dir() / name).read_text(encoding="utf-8")


def _line_of(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.splitlines(), 1) if needle in line)


def _without_index_row(macros: str) -> str:
    return re.sub(r"\{% macro index_row\(r\) -%\}.*?\{%- endmacro %\}\n", "", macros, flags=re.S)


OLD_INDEX_LOOP = "{% extends 'base.html' %}{% block main %}\n{% for r in rows %}\n<p>{{ r.kind }}</p>\n{% endfor %}\n{% endblock %}\n"
ROW_MACRO_ERROR = _theme("_macros.html").replace("{{ r.depth }}", "{{ r.depth.x.y }}")
ZERO = "{% extends 'base.html' %}\n{% block main %}\n{{ 1 // 0 }}\n{% endblock %}\n"
SYNTAX = "{% extends 'base.html' %}\n{% block main %}\n{% for %}\n{% endblock %}\n"
BROKEN = {  # template, its text, the line reported (0: none), the message
    "a runtime error": ("index.html", OLD_INDEX_LOOP, 3,
                        "UndefinedError: 'markupsafe.Markup object' has no attribute 'kind'"),
    "a syntax error": ("out.html", "<p>fine</p>\n\n{% for %}\n", 3, "TemplateSyntaxError: Expected an expression"),
    "an error inside a row macro": ("_macros.html", ROW_MACRO_ERROR, _line_of(ROW_MACRO_ERROR, "r.depth.x.y"),
                                    "UndefinedError: 'int object' has no attribute 'x'"),
    "_macros.html from before the row macros": ("_macros.html", _without_index_row(_theme("_macros.html")), 0,
                                                "TemplateRuntimeError: _macros.html defines no macro 'index_row'"),
    "a Python error in template code": ("belief.html", ZERO, 3, "ZeroDivisionError: integer division or modulo by zero"),
    "an error in a Jinja filter": ("404.html", "{% extends 'base.html' %}\n{% block main %}\n{{ '%d'|format('x') }}\n"
                                   "{% endblock %}\n", 3, "TypeError: %d format: a real number is required"),
}


def _built_with(cli, tmp_path, source, name: str, text: str, *flags: str) -> tuple[int, str, Path]:
    theme = tmp_path / "my-theme"
    theme.mkdir(exist_ok=True)
    (theme / name).write_text(text, encoding="utf-8")
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nplugins:\n  - beliefs:\n      source: {source}\n      templates: my-theme\n")
    code, _, err = cli("build", "--config", config, "-o", tmp_path / "site", *flags)
    return code, err, theme / name


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_template_that_fails_is_an_error_at_its_line_and_nothing_is_written(cli, tmp_path, case):
    name, text, line, message = BROKEN[case]
    code, err, path = _built_with(cli, tmp_path, EXAMPLE, name, text)
    assert code == 1 and "Traceback" not in err, err
    assert f"{path}{f':{line}' if line else ''}: E805 template error: {message}" in err, err
    assert not (tmp_path / "site").exists()


@pytest.fixture(scope="module")
def three_hundred(tmp_path_factory) -> Path:
    network = tmp_path_factory.mktemp("gen") / "network.json"
    subprocess.run([sys.executable, str(ROOT / "bench" / "generate.py"), "300", "-o", str(network)], check=True)
    return network


@pytest.mark.parametrize("case", ["a runtime error", "a syntax error", "an error inside a row macro",
                                  "a Python error in template code"])
def test_a_template_error_in_a_worker_process_is_located_too(cli, tmp_path, three_hundred, case):
    name, text, line, message = {
        **BROKEN, "a runtime error": ("belief.html", _theme("belief.html").replace("{{ b.id }}", "{{ b.nothing.more }}", 1),
                                      _line_of(_theme("belief.html"), "{{ b.id }}"), "UndefinedError: 'dict object'"),
        "a syntax error": ("belief.html", SYNTAX, 3, "TemplateSyntaxError: Expected an expression")}[case]
    code, err, path = _built_with(cli, tmp_path, three_hundred, name, text, "-j", "2", "--no-search")
    assert code == 1 and "Traceback" not in err and 'File "' not in err, err
    assert f"{path}:{line}: E805 template error: {message}" in err, err


def test_a_build_reads_each_template_once(tmp_path, monkeypatch):
    """Jinja's auto_reload would stat the template file for every page of the build."""
    import os
    from types import SimpleNamespace
    from site_builder.render.pages import environment
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "note.html").write_text("first")
    config = SimpleNamespace(templates="theme", config_path=str(tmp_path / "mkdocs.yml"))
    env = environment(SimpleNamespace(config=config, rows=None))
    assert env.get_template("note.html").render() == "first"
    stats = []
    real = os.path.getmtime
    monkeypatch.setattr(os.path, "getmtime", lambda path: stats.append(path) or real(path))
    (tmp_path / "theme" / "note.html").write_text("second")
    assert env.get_template("note.html").render() == "first" and stats == []
    assert environment(SimpleNamespace(config=config, rows=None)).get_template("note.html").render() == "second"


def test_templates_output_views_html_as_it_is_and_escape_everything_else():
    """Compiled templates, fresh or from a bytecode cache (the build cache keeps them), write
    `{{ value }}` out through pages._escape: a Markup as it is, anything else as
    markupsafe.escape makes it."""
    from types import SimpleNamespace

    import jinja2
    from markupsafe import Markup, escape

    from site_builder.config import SiteConfig
    from site_builder.render.pages import _escape, environment

    class Kept(jinja2.BytecodeCache):
        def __init__(self):
            self.codes = {}

        def load_bytecode(self, bucket):
            if bucket.key in self.codes:
                bucket.bytecode_from_string(self.codes[bucket.key])

        def dump_bytecode(self, bucket):
            self.codes[bucket.key] = bucket.bytecode_to_string()

    class Shown:
        def __html__(self):
            return "<em>shown</em>"

    class Flagged(Markup):
        pass

    class Tagged(str):
        pass

    kept = Kept()
    rows = SimpleNamespace(compiled_templates=lambda: kept)
    values = {"a": Markup("<b>made</b>"), "b": "<i>&'\"", "c": 3, "d": Shown(), "e": Flagged("<u>"),
              "f": Tagged("<s>&")}
    # Where the output is taken up again (a block set, a macro, a filter block), Jinja wraps
    # it whole in a Markup: escaped once, whatever type `_escape` returns.
    again = ("{% set x %}{{ b }}{{ a }}{% endset %}{{ x }}|{% macro m(v) %}{{ v }}{% endmacro %}{{ m(b) }}"
             "|{% filter upper %}{{ b }}{% endfilter %}")
    for _ in range(2):  # compiled, then loaded from the cache
        env = environment(SimpleNamespace(config=SiteConfig(), rows=rows))
        for name in ("belief.html", "_macros.html", "base.html"):
            assert env.get_template(name).root_render_func.__globals__["escape"] is _escape, name
        out = env.from_string("{{ a }}|{{ b }}|{{ c }}|{{ d }}|{{ e }}|{{ f }}").render(**values)
        assert out == "|".join(str(escape(v)) for v in values.values())
        b = str(escape(values["b"]))
        assert env.from_string(again).render(**values) == f"{b}<b>made</b>|{b}|{b.upper()}"
    assert kept.codes
    # A str's escaped text comes back as a plain str, not through Markup's (Python) constructor
    assert type(_escape(values["b"])) is str and _escape(values["a"]) is values["a"]


def test_edit_links_follow_repo_url_and_edit_uri(cli, tmp_path):
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nrepo_url: https://github.com/team/kb\nplugins:\n  - beliefs:\n"
                      f"      source: {EXAMPLE}\n")
    out = tmp_path / "site"
    assert cli("build", "--config", config, "-o", out)[0] == 0
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    # The documents folder sits outside the config's folder here: no edit link can be made.
    assert "Edit this belief" not in page
    local = tmp_path / "kb"
    local.mkdir()
    (local / "beliefs").symlink_to(EXAMPLE)
    (local / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/team/kb\nedit_uri: edit/trunk/\n")
    assert cli("build", "--config", local / "mkdocs.yml", "-o", out)[0] == 0
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert f'href="https://github.com/team/kb/edit/trunk/beliefs/{SEED}.md"' in page
    # The configuration beside the documents (source "."), and inside the documents folder:
    # only the documents under the configuration's folder get a link.
    flat = tmp_path / "flat"
    (flat / "nested").mkdir(parents=True)
    (flat / "top.md").write_text("# top\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    (flat / "nested" / "low.md").write_text("# nested:low\n\n**IN** · premise\n\nA claim.\n", encoding="utf-8")
    (flat / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/team/kb\nplugins:\n"
                                     "  - beliefs:\n      source: .\n")
    (flat / "nested" / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/team/kb\n"
                                                "plugins:\n  - beliefs:\n      source: ..\n")
    for config, top, low in ((flat / "mkdocs.yml", "top.md", "nested/low.md"),
                             (flat / "nested" / "mkdocs.yml", None, "low.md")):
        code, _, err = cli("build", "--config", config, "-o", tmp_path / "flat-site", "--no-search")
        assert code == 0, err  # (W606 only: the configuration is a stray file among the documents)
        for page, link in (("top", top), ("nested/low", low)):
            html = (tmp_path / "flat-site" / "belief" / page / "index.html").read_text(encoding="utf-8")
            if link is None:
                assert "Edit this belief" not in html
            else:
                assert f'href="https://github.com/team/kb/edit/main/{link}"' in html
    # MkDocs' convention: edit_uri names docs_dir; beliefs sit beside it.
    (local / "mkdocs.yml").write_text("site_name: t\nrepo_url: https://github.com/team/kb\n"
                                      "edit_uri: edit/trunk/docs/\n")
    assert cli("build", "--config", local / "mkdocs.yml", "-o", out)[0] == 0
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert f'href="https://github.com/team/kb/edit/trunk/beliefs/{SEED}.md"' in page
