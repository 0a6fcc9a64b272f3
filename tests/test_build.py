"""`belief-site build`: the whole site, atomic and deterministic, every link resolving."""

from __future__ import annotations

import hashlib
import json
import shutil
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from .conftest import EXAMPLE, SEED, network_files


def tree_digest(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


class _Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)


def broken_links(site: Path) -> list[str]:
    """Every internal href/src of every HTML page that does not resolve to a file."""
    broken = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue  # served at any depth: its links are root-relative by design
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith("#"):
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site)} -> {link}")
    return broken


def reachable_from_index(site: Path) -> set[Path]:
    """Pages reached by following links from index.html."""
    seen, todo = set(), [site / "index.html"]
    while todo:
        page = todo.pop()
        if page in seen or not page.is_file() or page.suffix != ".html":
            continue
        seen.add(page)
        parser = _Links()
        parser.feed(page.read_text(encoding="utf-8"))
        for link in parser.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            todo.append(target / "index.html" if target.is_dir() else target)
    return seen


def build_example(cli, tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "site"
    code, _, err = cli("build", EXAMPLE, "-o", out, *extra)
    assert code == 0, err
    return out


def test_the_example_builds_every_page_and_output(cli, tmp_path):
    site = build_example(cli, tmp_path)
    for name in ("index.html", "404.html", "premises/index.html", "out/index.html", "nogoods/index.html",
                 "badge.svg", "beliefs.json", "objects.inv", "llms.txt", "assets/style.css", ".belief-site"):
        assert (site / name).is_file(), name
    for doc in EXAMPLE.glob("*.md"):
        folder = site / "belief" / doc.stem
        for name in ("index.html", "index.json", "badge.svg", "badge.json"):
            assert (folder / name).is_file(), f"{doc.stem}/{name}"
    assert not (site / "sitemap.xml").exists()  # only with site_url


def test_the_build_says_how_to_read_a_site_of_directory_urls(cli, tmp_path):
    """Not "open site/index.html": its links to `belief/x/` need a web server."""
    code, _, err = cli("build", EXAMPLE, "-o", tmp_path / "site", "--no-search")
    assert code == 0 and "index.html" not in err
    assert f"s; read it with `belief-site serve` or any web server (python3 -m http.server -d {tmp_path / 'site'})" in err


def test_every_internal_link_resolves_and_every_belief_is_reachable(cli, tmp_path):
    site = build_example(cli, tmp_path)
    assert broken_links(site) == []
    pages = {p.resolve() for p in (site / "belief").rglob("index.html")}
    assert pages <= reachable_from_index(site)


def test_links_end_in_index_html_without_directory_urls(cli, tmp_path):
    config = tmp_path / "mkdocs.yml"
    config.write_text(f"site_name: t\nuse_directory_urls: false\nplugins:\n  - beliefs:\n      source: {EXAMPLE}\n")
    out = tmp_path / "site"
    code, _, err = cli("build", "--config", config, "-o", out)
    assert code == 0 and f"s; open {out / 'index.html'}, or read it with `belief-site serve`" in err
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert 'href="../attention-is-non-symmetric/index.html"' in page
    assert 'href="../../index.html"' in page
    assert broken_links(out) == []


def test_the_same_input_builds_byte_identical_sites(cli, tmp_path):
    first = tree_digest(build_example(cli, tmp_path / "a"))
    second = tree_digest(build_example(cli, tmp_path / "b"))
    assert first == second


def test_a_failed_build_leaves_the_previous_site_untouched(cli, tmp_path):
    site = build_example(cli, tmp_path)
    before = tree_digest(site)
    broken = tmp_path / "broken"
    shutil.copytree(EXAMPLE, broken)
    (broken / "attention-is-non-symmetric.md").write_bytes(b"\xff\xfe not utf-8")
    code, _, err = cli("build", broken, "-o", site)
    assert code == 1 and "E101" in err and "left as it was" in err
    assert tree_digest(site) == before


def test_keep_going_leaves_out_files_with_errors(cli, tmp_path):
    broken = tmp_path / "broken"
    shutil.copytree(EXAMPLE, broken)
    (broken / "attention-is-non-symmetric.md").write_text("# attention-is-non-symmetric\n\nIN premise\n\n"
                                                         "Claim.\n\n## Bogus\n", encoding="utf-8")
    out = tmp_path / "site"
    code, _, err = cli("build", broken, "-o", out, "--keep-going")
    assert code == 0 and "E301" in err
    assert not (out / "belief" / "attention-is-non-symmetric").exists()
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    # The left-out belief is now outside the network: shown unlinked, its tag assumed (W401).
    assert "<code>attention-is-non-symmetric</code> <em>(not in this network)</em>" in page
    assert 'href="../attention-is-non-symmetric/"' not in page


def test_refuses_to_replace_a_folder_it_did_not_create(cli, tmp_path):
    precious = tmp_path / "home"
    precious.mkdir()
    (precious / "thesis.tex").write_text("years of work")
    code, _, err = cli("build", EXAMPLE, "-o", precious)
    assert code == 1 and "E801" in err
    assert (precious / "thesis.tex").read_text() == "years of work"


def test_site_url_adds_sitemap_and_robots(cli, tmp_path):
    site = build_example(cli, tmp_path, "--base-url", "https://example.org/kb/")
    sitemap = (site / "sitemap.xml").read_text(encoding="utf-8")
    assert f"https://example.org/kb/belief/{SEED}/" in sitemap
    assert "Sitemap: https://example.org/kb/sitemap.xml" in (site / "robots.txt").read_text()
    page = (site / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert f"https://example.org/kb/belief/{SEED}/badge.svg" in page  # embed snippets are absolute


def test_stated_status_is_shown_when_it_differs(cli, tmp_path):
    stale = tmp_path / "b"
    shutil.copytree(EXAMPLE, stale)
    seed = stale / f"{SEED}.md"
    seed.write_text(seed.read_text(encoding="utf-8").replace("IN derived (depth 1)", "OUT derived (depth 1)"),
                    encoding="utf-8")
    out = tmp_path / "site"
    assert cli("build", stale, "-o", out)[0] == 0
    page = (out / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert "stated OUT" in page and 'data-status="IN"' in page


def test_visible_to_hides_beliefs_everywhere(cli, tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "public.md").write_text("# public\n\n**IN** · premise\n\nPublic claim.\n", encoding="utf-8")
    (folder / "secret.md").write_text("---\nmetadata:\n  access_tags: [internal]\n---\n# secret\n\n"
                                      "**IN** · premise\n\nSecret claim.\n", encoding="utf-8")
    (folder / "derived-from-secret.md").write_text(
        "# derived-from-secret\n\n**IN** · derived (depth 1)\n\nLeaks?\n\n## Justifications\n\n### SL\n\n"
        "Antecedents:\n\n- public\n- secret\n", encoding="utf-8")
    (folder / "blocked.md").write_text(
        "# blocked\n\n**OUT** · derived (depth 1)\n\nBlocked claim.\n\n## Justifications\n\n### SL\n\n"
        "Antecedents:\n\n- public\n\nUnless:\n\n- secret\n", encoding="utf-8")
    out = tmp_path / "site"
    code, _, err = cli("build", folder, "-o", out, "--visible-to", "public")
    assert code == 0 and "built 2 of 4 beliefs" in err
    assert (out / "belief" / "public" / "index.html").is_file()
    assert (out / "belief" / "blocked" / "index.html").is_file()
    for path in out.rglob("*"):
        if path.is_file() and path.name != "objects.inv":
            data = path.read_bytes()
            assert b"secret" not in data and b"Secret claim" not in data, path
    blocked = json.loads((out / "belief" / "blocked" / "index.json").read_text(encoding="utf-8"))
    assert blocked["status"] == "OUT"  # statuses are computed on the whole network


@pytest.mark.parametrize("tags, problem", [
    ('{"internal": true}', ""), ("1", ""), ("true", ""), ('["internal", 2]', ""),
    ('["internal"]', "## Bogus\n"),  # well-formed tags on a document with an error (E301)
    ('["internal"]\n  weight: .nan', ""),  # a document that cannot be read at all (E105): its tags unknown
    ('["internal"]', "\x1b")])  # nor this one (E104)
def test_a_belief_resting_on_one_left_out_or_with_malformed_access_tags_is_never_published(
        cli, tmp_path, tags, problem):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "public.md").write_text("# public\n\n**IN** · premise\n\nPublic claim.\n", encoding="utf-8")
    (folder / "secret.md").write_text(f"---\nmetadata:\n  access_tags: {tags}\n---\n# secret\n\n"
                                      f"**IN** · premise\n\nSecret claim.\n\n{problem}", encoding="utf-8")
    (folder / "rests.md").write_text(
        "# rests\n\n**IN** · derived (depth 1)\n\nRests on it.\n\n## Justifications\n\n### SL\n\n"
        "Antecedents:\n\n- public\n- secret\n", encoding="utf-8")
    code, _, err = cli("check", folder)
    malformed = not problem and "nan" not in tags
    assert code == 1 and ("secret.md:5: E507 'secret': metadata access_tags is" in err) == malformed
    out = tmp_path / "site"
    assert cli("build", folder, "-o", out, "--visible-to", "public", "--no-search")[0] == 1
    assert cli("build", folder, "-o", out, "--visible-to", "public", "--no-search", "--keep-going")[0] == 0
    assert (out / "belief" / "public" / "index.html").is_file()
    for path in out.rglob("*"):
        if path.is_file():
            assert b"Secret claim" not in path.read_bytes() and b"Rests on it" not in path.read_bytes(), path


@pytest.mark.parametrize("broken, flags", [
    ("plugins:\n  - beliefs:\n      visible_to: [public]\nbad: [\n", ()),  # unreadable YAML
    ("plugins:\n  - beliefs:\n      visibl_to: [public]\n", ()),  # a misspelled option
    ("plugins:\n  - beliefs:\n      visible_to: public\n", ()),  # not a list
    ("", ("--config", "missing.yml"))])
def test_a_configuration_with_errors_builds_nothing_and_leaves_the_site(cli, tmp_path, monkeypatch, broken, flags):
    """Built without the configuration, the site published the belief visible_to hides."""
    monkeypatch.chdir(tmp_path)
    folder = tmp_path / "beliefs"
    folder.mkdir()
    (folder / "public.md").write_text("# public\n\n**IN** · premise\n\nPublic claim.\n", encoding="utf-8")
    (folder / "secret.md").write_text("---\nmetadata:\n  access_tags: [internal]\n---\n# secret\n\n"
                                      "**IN** · premise\n\nSecret claim.\n", encoding="utf-8")
    config = "site_name: Mine\nsite_url: https://example.org/kb/\nplugins:\n  - beliefs:\n      visible_to: [public]\n"
    Path("mkdocs.yml").write_text(config, encoding="utf-8")
    assert cli("build", "--no-search")[0] == 0
    before = tree_digest(tmp_path / "site")
    assert not any(b"Secret claim" in p.read_bytes() for p in (tmp_path / "site").rglob("*") if p.is_file())
    Path("mkdocs.yml").write_text(f"site_name: Mine\n{broken}", encoding="utf-8")
    code, _, err = cli("build", "--no-search", *flags)
    assert code == 1 and " E802 " in err and "nothing built: fix the configuration first; site was left as it was" in err
    assert tree_digest(tmp_path / "site") == before


def test_the_configuration_is_read_as_mkdocs_reads_it(cli, tmp_path, monkeypatch):
    """Found by a plugin audit: `site_url: !ENV [...]` (the usual way to give a preview its
    URL) failed with "must be a string", settings from an `INHERIT`ed file were silently
    ignored (no sitemap, no edit links) and `source: !relative $config_dir/...` was refused;
    `mkdocs build` reads all three."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLE, tmp_path / "kb")
    Path("base.yml").write_text("site_url: https://inherited.example/kb/\nrepo_url: https://github.com/o/r\n"
                                "markdown_extensions:\n  - pymdownx.emoji:\n"
                                "      emoji_index: !!python/name:material.extensions.emoji.twemoji\n", encoding="utf-8")
    Path("mkdocs.yml").write_text("INHERIT: base.yml\nsite_name: Mine\nplugins:\n  - beliefs:\n"
                                  "      source: !relative $config_dir/kb\n", encoding="utf-8")
    assert cli("build", "--no-search", "-q")[0] == 0
    assert "https://inherited.example/kb/belief/" in (tmp_path / "site" / "sitemap.xml").read_text(encoding="utf-8")
    seed = (tmp_path / "site" / "belief" / SEED / "index.html").read_text(encoding="utf-8")
    assert "https://github.com/o/r/edit/" in seed
    Path("env.yml").write_text("site_url: !ENV [PREVIEW_URL, 'https://default.example/']\n"
                               "plugins:\n  - beliefs:\n      source: kb\n", encoding="utf-8")
    monkeypatch.setenv("PREVIEW_URL", "https://preview.example/pr-7/")
    assert cli("build", "--config", "env.yml", "-o", "preview", "--no-search", "-q")[0] == 0
    assert "https://preview.example/pr-7/belief/" in (tmp_path / "preview" / "sitemap.xml").read_text(encoding="utf-8")
    # what cannot be read is an error at its file and line, an inherited file's too
    Path("mkdocs.yml").write_text("site_name: Mine\nINHERIT: nowhere.yml\n", encoding="utf-8")
    code, _, err = cli("check", "kb")
    assert code == 1 and "mkdocs.yml:2: E802 INHERIT names 'nowhere.yml', which is not a file" in err, err
    Path("mkdocs.yml").write_text("INHERIT: base.yml\n", encoding="utf-8")
    Path("base.yml").write_text("site_name: Mine\nbad: [\n", encoding="utf-8")
    code, _, err = cli("check", "kb")
    assert code == 1 and err.startswith("base.yml:3: E802 cannot read the configuration"), err
    Path("mkdocs.yml").write_text("plugins:\n  - beliefs:\n      source: !relative\n", encoding="utf-8")
    code, _, err = cli("check", "kb")
    assert code == 1 and "mkdocs.yml:3: E802 option 'source': !relative '': write '!relative $config_dir/<path>'" in err, err
    Path("mkdocs.yml").write_text("INHERIT: mkdocs.yml\n", encoding="utf-8")
    code, _, err = cli("check", "kb")
    assert code == 1 and "mkdocs.yml:1: E802 INHERIT 'mkdocs.yml' goes round in a loop" in err, err


def test_inherited_settings_are_reported_where_they_are_written(cli, tmp_path, monkeypatch):
    """Found by a review: an empty INHERITed file was a traceback (MkDocs reads it as no
    settings), a list there was "a number of thousands of digits", an option's problem in
    the inherited file pointed at mkdocs.yml without a line, and `!relative $docs_dir/...`
    under a `!relative` docs_dir printed an object's repr."""
    monkeypatch.chdir(tmp_path)
    shutil.copytree(EXAMPLE, tmp_path / "kb")
    Path("mkdocs.yml").write_text("INHERIT: base.yml\nsite_name: x\nplugins:\n  - beliefs:\n      source: kb\n",
                                  encoding="utf-8")
    Path("base.yml").write_text("", encoding="utf-8")
    assert cli("check", "-q")[0] == 0
    Path("mkdocs.yml").write_text("", encoding="utf-8")  # no settings at all, as before INHERIT was read
    assert cli("check", "kb", "-q")[0] == 0
    Path("mkdocs.yml").write_text("INHERIT: base.yml\nsite_name: x\nplugins:\n  - beliefs:\n      source: kb\n",
                                  encoding="utf-8")
    Path("base.yml").write_text("- a\n", encoding="utf-8")
    code, _, err = cli("check", "kb", "-q")
    assert code == 1 and "mkdocs.yml:1: E802 INHERIT names 'base.yml', whose configuration is not a map" in err, err
    Path("base.yml").write_text("site_name: b\nplugins:\n  - beliefs:\n      diagram_depth: -3\n", encoding="utf-8")
    Path("mkdocs.yml").write_text("INHERIT: base.yml\n", encoding="utf-8")
    code, _, err = cli("check", "kb", "-q")
    assert code == 1 and "base.yml:4: E802 option 'diagram_depth' must be 0 or more, not -3" in err, err
    Path("mkdocs.yml").write_text("docs_dir: !relative $config_dir/kb\nplugins:\n  - beliefs:\n"
                                  "      source: !relative $docs_dir/../kb\n", encoding="utf-8")
    assert cli("check", "-q")[0] == 0


def test_an_empty_source_is_a_warning_and_with_strict_leaves_the_site(cli, tmp_path):
    """A mistyped, empty folder silently replaced a good site with an empty one."""
    site = build_example(cli, tmp_path, "--no-search")
    before = tree_digest(site)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = cli("build", empty, "-o", site, "--no-search", "--strict")
    assert code == 1 and f"{empty}: W607 holds no beliefs" in err and tree_digest(site) == before
    code, _, err = cli("build", empty, "-o", site, "--no-search")
    assert code == 0 and f"{empty}: W607 holds no beliefs" in err and "built 0 beliefs" in err


def test_build_names_files_as_check_does(cli, tmp_path, monkeypatch):
    """A relative SOURCE was made absolute, so build's diagnostics differed from check's."""
    monkeypatch.chdir(tmp_path)
    Path("beliefs").mkdir()
    Path("beliefs/a.md").write_text("# a\n\n**IN** · premise\n\nClaim.\n\n## Bogus\n", encoding="utf-8")
    expected = "beliefs/a.md:7: E301 unknown section heading '## Bogus'"
    for command in ("check", "build"):
        code, _, err = cli(command, "beliefs", "--no-search" if command == "build" else "--strict")
        assert code == 1 and expected in err.splitlines(), (command, err)


NETWORKS = network_files()


@pytest.mark.parametrize("network_path", NETWORKS, indirect=True)
def test_every_shared_network_builds_with_no_broken_links(network_path, cli, tmp_path):
    out = tmp_path / "site"
    code, _, err = cli("build", network_path, "-o", out)
    assert code == 0, err
    assert broken_links(out) == []
    pages = {p.resolve() for p in (out / "belief").rglob("index.html")}
    assert pages and pages <= reachable_from_index(out)
    data = json.loads((out / "beliefs.json").read_text(encoding="utf-8"))
    source = json.loads(network_path.read_text(encoding="utf-8"))
    assert len(data["beliefs"]) == len(source["nodes"])
    assert {b["id"]: b["status"] for b in data["beliefs"]} == {
        i: n["truth_value"] for i, n in source["nodes"].items()}


def test_challenges_and_defences_are_shown(cli, tmp_path):
    folder = tmp_path / "b"
    folder.mkdir()
    (folder / "target.md").write_text(
        "---\nmetadata:\n  challenges: [challenge-target]\n---\n# target\n\n**IN** · derived (depth 1)\n\n"
        "The claim under challenge.\n\n## Justifications\n\n### SL\n\nUnless:\n\n- challenge-target\n",
        encoding="utf-8")
    (folder / "challenge-target.md").write_text(
        "---\nmetadata:\n  challenge_target: target\n  challenges: [defense-challenge-target]\n---\n"
        "# challenge-target\n\n**OUT** · derived (depth 1)\n\nThe target is wrong.\n\n## Justifications\n\n"
        "### SL\n\nUnless:\n\n- defense-challenge-target\n", encoding="utf-8")
    (folder / "defense-challenge-target.md").write_text(
        "---\nmetadata:\n  challenge_target: challenge-target\n  defends: target\n---\n"
        "# defense-challenge-target\n\n**IN** · premise\n\nThe challenge misreads the target.\n", encoding="utf-8")
    out = tmp_path / "site"
    code, _, err = cli("build", folder, "-o", out)
    assert code == 0, err
    page = (out / "belief" / "target" / "index.html").read_text(encoding="utf-8")
    section = page[page.index('<section id="challenges">'):]
    section = section[: section.index("</section>")]
    assert 'href="../challenge-target/"' in section and "defended by" in section
    assert 'href="../defense-challenge-target/"' in section
    assert '<article class="belief" data-status="IN">' in page  # the defence brings it back


def test_keep_going_keeps_the_first_of_two_files_with_one_id(cli, tmp_path):
    folder = tmp_path / "b"
    (folder / "ns").mkdir(parents=True)
    (folder / "a.md").write_text("# a\n\n**IN** · premise\n\nFirst.\n", encoding="utf-8")
    (folder / "ns" / "a.md").write_text("# a\n\n**IN** · premise\n\nSecond.\n", encoding="utf-8")
    out = tmp_path / "site"
    code, _, err = cli("build", folder, "-o", out, "--keep-going")
    assert code == 0 and "E204" in err
    assert "First." in (out / "belief" / "a" / "index.html").read_text(encoding="utf-8")


@pytest.mark.parametrize("command", ["build", "build-with-cache", "export", "import", "diff"])
def test_an_output_that_cannot_be_written_is_an_error_naming_it_not_a_traceback(cli, tmp_path, command):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    out = blocker / "inside"  # no folder can be made under a file, whoever runs the tests
    assert cli("export", EXAMPLE, "-o", tmp_path / "network.json")[0] == 0
    args = {"build": ("build", EXAMPLE, "-o", out, "--no-cache"),
            "build-with-cache": ("build", EXAMPLE, "-o", out, "--cache-dir", tmp_path / "cache"),
            "export": ("export", EXAMPLE, "-o", out),
            "import": ("import", tmp_path / "network.json", "-o", out),
            "diff": ("diff", EXAMPLE, EXAMPLE, "-o", out)}[command]
    code, _, err = cli(*args)
    assert code == 1 and "Traceback" not in err, err
    # the file in the way is named: mkdir said "File exists", open "Not a directory"
    said = f"{blocker} is a file, not a folder: {out}"
    if command.startswith("build"):
        assert f"{out}: E806 cannot read or write a file of the build: {said}" in err and "build failed" in err, err
    else:
        assert err.startswith("belief-site: ") and said in err, err
    assert blocker.read_text() == "not a folder"


def test_a_dangling_link_as_the_output_is_an_error_naming_it(cli, tmp_path):
    out = tmp_path / "site"
    out.symlink_to(tmp_path / "nowhere")
    code, _, err = cli("build", EXAMPLE, "-o", out, "--no-cache")
    assert code == 1 and "Traceback" not in err, err
    assert f"{out}: E806 cannot read or write a file of the build: Not a directory: {out}\n" in err, err
    assert out.is_symlink() and not list(tmp_path.glob(".site.new-*"))


def test_an_output_folder_inside_the_documents_folder_is_refused(cli, tmp_path):
    """The next build would read the site's files as documents (its vendored README.md: E202)."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    before = tree_digest(source)
    (tmp_path / "link").symlink_to(source)
    for out in (source / "site", tmp_path / "link" / "site"):  # also through a link to the folder
        code, _, err = cli("build", source, "-o", out, "--no-search")
        assert code == 1 and f"{out}: E801 the output folder is inside the documents folder" in err, err
    code, _, err = cli("build", source, "-o", tmp_path / "site", "--cache-dir", source / "cache", "--no-search")
    assert code == 1 and f"{source / 'cache'}: E801 the cache folder is inside the documents folder" in err, err
    assert tree_digest(source) == before
    for hidden in ("-o", source / ".site"), ("--cache-dir", source / ".cache"):  # dot-folders are never read
        assert cli("build", source, "-o", tmp_path / "site", "--no-search", *hidden)[0] == 0


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_a_link_to_a_belief_is_right_from_each_page_that_shares_its_memo(order):
    """views.ref makes a link once for the pages of one parent folder: a page whose own
    folder holds the target (`ns` holds `ns:local`) and pages at the root (whose folder has
    no parent) must not take another page's link, whichever page asked first."""
    from site_builder.config import SiteConfig
    from site_builder.evaluate import evaluate
    from site_builder.model import Belief, Network
    from site_builder.render import RenderContext
    from site_builder.render.views import ref
    from site_builder.urls import relative_href

    ids = ("ns", "ns:local", "other")
    ctx = RenderContext(evaluate(Network({i: Belief(i, f"claim of {i}") for i in ids})), SiteConfig(),
                        visible=frozenset(ids))
    pages = ["belief/other/index.html", "belief/ns/index.html", "belief/ns/local/index.html",
             "changes/index.html", "index.html", "404.html"]
    for here in pages if order == "forward" else pages[::-1]:
        for target in ids:
            expected = relative_href(here, ctx.page(target))
            view = ref(ctx, target, here)
            assert (view["href"], f'href="{expected}"' in view["html"]) == (expected, True), (here, target)


# The explanation as belief.html rendered it from a step's parts, before each step view made
# its own `item` (views._step_item): a theme that lists the parts itself gets the same page.
_STEPS_FROM_PARTS = """{% for step in b.explain.entries %}
  <li>{{ step.html }}: {{ step.reason }}
  {% for j in step.justifications %}{% if j.failed or j.missing or j.violated %}
    <div class="because">justification {{ j.number }} ({{ j.type }}):
      {% if j.failed %}OUT antecedents: {% for r in j.failed %}{{ r.html }} {% endfor %}{% endif %}
      {% if j.missing %}missing antecedents: {% for r in j.missing %}{{ r.html }} {% endfor %}{% endif %}
      {% if j.violated %}IN outlist members: {% for r in j.violated %}{{ r.html }} {% endfor %}{% endif %}
    </div>
  {% endif %}{% endfor %}
  </li>
{% endfor %}"""


def test_an_explanation_step_is_listed_as_its_parts_render_it():
    """Each step carries its list item, made once with the view; it is what the template
    made of the step's parts (failed and missing antecedents, IN outlist members, several
    justifications, markup in a claim), and the page lists exactly those items."""
    from site_builder.config import SiteConfig
    from site_builder.evaluate import evaluate
    from site_builder.model import Belief, Justification, Network
    from site_builder.render import RenderContext
    from site_builder.render.pages import belief_spec, environment, render_page

    beliefs = [Belief("a", "A <b>premise</b> & 'quotes'"), Belief("d", "another premise"),
               Belief("e", "retracted", declared="OUT", retracted=True),
               Belief("b", "needs a ghost", justifications=(Justification("SL", ("a", "ghost"), label="x <y>"),)),
               Belief("c", "rests on b unless d", justifications=(
                   Justification("SL", ("b",), ("d",)), Justification("SL", ("ghost2", "a"), ("d", "e")))),
               Belief("f", "holds", justifications=(Justification("SL", ("a",), ("e",)),)),
               Belief("g", "an unknown type never holds", justifications=(Justification("<X&>", ("e",)),))]
    net = Network({b.id: b for b in beliefs})
    ctx = RenderContext(evaluate(net), SiteConfig(), visible=frozenset(net.beliefs))
    env = environment(ctx)
    for belief in beliefs:
        spec = belief_spec(ctx, belief)
        b = spec.values["b"]
        items = "".join(f"{step['item']}\n" for step in b["explain"]["entries"])
        assert items == env.from_string(_STEPS_FROM_PARTS).render(b=b), belief.id
        assert f'<ol class="explain">\n{items}</ol>' in render_page(env, ctx, spec, None), belief.id
    page = render_page(env, ctx, belief_spec(ctx, net.beliefs["c"]), None)
    for part in ("OUT antecedents: ", "missing antecedents: ", "IN outlist members: ", "justification 2 (SL)"):
        assert part in page


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_each_step_of_an_explanation_links_as_its_page_sees_it_whichever_page_asked_first(order):
    """views._step_view makes a belief's step once for the pages of one parent folder, like
    `ref`: `ns` explains through `ns:local`, which lies inside its folder, and `m` (OUT)
    through its failed antecedent `m:out`, inside its own; `a` and `b` explain through them
    from outside. Each page's links must be its own, whichever page asked first."""
    import re

    from site_builder.config import SiteConfig
    from site_builder.evaluate import evaluate
    from site_builder.model import Belief, Justification, Network
    from site_builder.render import RenderContext
    from site_builder.render.views import explanation
    from site_builder.urls import relative_href

    sl = lambda *ids: (Justification("SL", tuple(ids)),)  # noqa: E731
    beliefs = [Belief("ns:local", "a premise"), Belief("ns", "IN", justifications=sl("ns:local")),
               Belief("m:out", "OUT: its antecedent is missing", justifications=sl("nowhere")),
               Belief("m", "OUT", justifications=sl("m:out")), Belief("a", "IN", justifications=sl("ns")),
               Belief("b", "OUT", justifications=sl("ns", "m"))]
    net = Network({b.id: b for b in beliefs})
    ctx = RenderContext(evaluate(net), SiteConfig(), visible=frozenset(net.beliefs))
    pages = {f"belief/{i.replace(':', '/')}/index.html": i for i in ("a", "b", "ns", "m", "ns:local", "m:out")}
    linked = set()
    for here in list(pages) if order == "forward" else list(pages)[::-1]:
        for step in explanation(ctx, pages[here], here)["entries"]:
            for html in (step["html"], *(r["html"] for c in step["justifications"]
                                          for name in ("failed", "missing", "violated") for r in c[name])):
                target = re.search(r"<code>([^<]+)</code>", str(html))[1]
                if target in net.beliefs:
                    expected = relative_href(here, ctx.page(target))
                    assert f'href="{expected}"' in str(html), (here, target, str(html))
                    linked.add((pages[here], target))
    assert {("ns", "ns:local"), ("m", "m:out"), ("a", "ns:local"), ("b", "m"), ("b", "m:out")} <= linked
