"""`belief-site serve`: a real server process, real file edits, and an open page in Chromium."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from site_builder.cli import main

from .conftest import EXAMPLE
from .test_browser import ARGS, CHROMIUM, _record_problems, _require_browser, _search

BELIEF = "attention-is-non-symmetric"
CLAIM = ("Attention is non-symmetric: token i attending to token j does not imply j attends to i, "
         "because the query (W^Q) and key (W^K) weight matrices are different.")
COMMAND = [sys.executable, "-c", "import sys; from site_builder.cli import main; sys.exit(main())"]
SCRIPT = '<script src="/__belief_site__/reload.js"'


class Serve:
    """`belief-site serve ARGS --port 0` in `cwd`, its temporary files under `cwd/tmp`."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str] | None = None) -> None:
        self.temp = cwd / "tmp"
        self.temp.mkdir(exist_ok=True)
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [*COMMAND, "serve", *args, "--port", "0"], cwd=cwd, stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, encoding="utf-8",
            env={**os.environ, "TMPDIR": str(self.temp), "PYTHONUNBUFFERED": "1", **(env or {})})
        threading.Thread(target=self._read, daemon=True).start()
        line = self.wait_output("Serving http://", timeout=30)
        self.url = line.split()[1]
        assert self.url.startswith("http://127.0.0.1:") and self.url.endswith("/"), line

    def _read(self) -> None:
        for line in self.process.stdout:
            self.lines.append(line)

    def output(self) -> str:
        return "".join(self.lines)

    def wait_output(self, text: str, timeout: float = 5) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for line in list(self.lines):
                if text in line:
                    return line
            assert self.process.poll() is None, f"serve exited:\n{self.output()}"
            time.sleep(0.05)
        raise AssertionError(f"no {text!r} in the output of serve:\n{self.output()}")

    def get(self, path: str, **headers: str) -> tuple[int, bytes]:
        request = urllib.request.Request(self.url + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as error:
            return error.code, error.read()

    def wait_count(self, text: str, count: int, timeout: float = 30) -> None:
        """Until `count` lines of the output hold `text`."""
        deadline = time.monotonic() + timeout
        while sum(text in line for line in list(self.lines)) < count:
            assert self.process.poll() is None, f"serve exited:\n{self.output()}"
            assert time.monotonic() < deadline, f"not {count} lines with {text!r}:\n{self.output()}"
            time.sleep(0.05)

    def version(self) -> dict:
        return json.loads(self.get("__belief_site__/version")[1])

    def wait_version(self, after: int, timeout: float = 5) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            state = self.version()
            if state["version"] > after:
                return state
            time.sleep(0.05)
        raise AssertionError(f"no rebuild after version {after}:\n{self.output()}")

    def site(self) -> Path:
        """The one folder every build of this server goes into (its cache beside it; a site a
        build replaced whole may still be going, in a process of its own: write._discard)."""
        [root] = self.temp.glob("belief-site-serve-*")
        assert sorted(p.name for p in root.iterdir() if not p.name.startswith(".site.old-")) == ["cache", "site"]
        return root / "site"

    def stop(self) -> int:
        """Ctrl+C; the exit code (the temporary folder must be gone afterwards)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise


@pytest.fixture
def serve(tmp_path):
    started: list[Serve] = []

    def start(*args: str, env: dict[str, str] | None = None) -> Serve:
        started.append(Serve(tmp_path, *args, env=env))
        return started[-1]
    yield start
    for one in started:
        if one.process.poll() is None:
            one.process.kill()
            one.process.wait()


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, (old, path)
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _stopped_cleanly(served: Serve) -> None:
    assert served.stop() == 0, served.output()
    assert "stopped" in served.output()
    assert list(served.temp.iterdir()) == []  # the private build folders are removed


def test_a_killed_servers_private_folder_goes_when_the_next_one_starts(tmp_path, serve):
    """SIGKILL leaves no chance to remove the site and cache a server builds into."""
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    left = tmp_path / "tmp" / f"belief-site-serve-{int(gone.stdout)}-abcd_123"
    (left / "site").mkdir(parents=True)
    (left / "site" / "index.html").write_text("a killed server's page", encoding="utf-8")
    running = tmp_path / "tmp" / f"belief-site-serve-{os.getpid()}-defg_456"  # a live process's: kept
    running.mkdir()
    served = serve(str(EXAMPLE))
    assert not left.exists() and running.is_dir()
    running.rmdir()
    assert served.site().is_dir()
    _stopped_cleanly(served)


def test_serves_the_build_output_with_a_reload_script_added_on_the_way_out(tmp_path, serve):
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    served = serve(str(source))
    assert served.version() == {"version": 1, "ok": True, "problems": "", "search": 0}

    # the folder served is byte for byte what `belief-site build` writes
    site = served.site()
    _same_as_built(site, source, tmp_path / "built")
    disk = (site / "belief" / BELIEF / "index.html").read_bytes()
    assert b"__belief_site__" not in disk

    status, page = served.get(f"belief/{BELIEF}/")
    assert status == 200
    assert page.replace(b'<script src="/__belief_site__/reload.js" data-version="1" data-search="0"></script>',
                        b"") == disk
    status, script = served.get("__belief_site__/reload.js")
    assert status == 200 and b"location.reload()" in script
    assert served.get("assets/style.css")[1] == (site / "assets" / "style.css").read_bytes()
    status, missing = served.get("no/such/page/")
    assert status == 404 and b"Not found" in missing and SCRIPT.encode() in missing
    # a name longer than the file system allows (ENAMETOOLONG) is as missing, not a traceback
    assert [served.get(p)[0] for p in ("a" * 256, f"belief/{'x' * 300}/", f"{'y' * 300}.html")] == [404] * 3
    assert served.get("", Host="attacker.example")[0] == 403  # DNS rebinding
    # a file's URL with a slash after it names a folder that is not there (its links would break)
    assert [served.get(p)[0] for p in (f"belief/{BELIEF}/index.html/", "assets/style.css/")] == [404] * 2

    _edit(source / f"{BELIEF}.md", CLAIM, "A claim edited while serving.")
    assert served.wait_version(1)["ok"]
    assert b"A claim edited while serving." in served.get(f"belief/{BELIEF}/")[1]
    # the pages first (open pages reload), then the search bundle (only pages that loaded
    # the old one reload: reload.js; tests/test_browser.py)
    served.wait_count("built ", 2)
    assert {k: served.version()[k] for k in ("version", "search")} == {"version": 2, "search": 1}
    assert "pages updated in" in served.output()
    # rebuilt in place (no second folder), incrementally, into what a fresh build writes
    assert served.site() == site
    _same_as_built(site, source, tmp_path / "built-again")
    assert "Traceback" not in served.output()
    _stopped_cleanly(served)


def _same_as_built(site: Path, source: Path, built: Path) -> None:
    """Every file of `site` is byte for byte what `belief-site build` writes, and no other."""
    subprocess.run([*COMMAND, "build", str(source), "-o", str(built), "-q"], cwd=built.parent, check=True)
    files = lambda top: {p.relative_to(top): p.read_bytes() for p in top.rglob("*") if p.is_file()}  # noqa: E731
    assert files(site) == files(built)


def test_a_file_the_config_inherits_is_watched(tmp_path, serve):
    """mkdocs.yml's INHERIT is read as MkDocs reads it: editing the base file rebuilds too."""
    shutil.copytree(EXAMPLE, tmp_path / "beliefs")
    (tmp_path / "base.yml").write_text("site_name: Base Name\n", encoding="utf-8")
    (tmp_path / "mkdocs.yml").write_text("INHERIT: base.yml\nplugins:\n  - beliefs\n", encoding="utf-8")
    served = serve()
    assert b"Base Name" in served.get("")[1]
    _edit(tmp_path / "base.yml", "Base Name", "Inherited Name")
    served.wait_version(1)
    assert b"Inherited Name" in served.get("")[1]
    _stopped_cleanly(served)


def test_a_network_json_source_the_config_and_the_templates_are_watched(tmp_path, serve):
    assert main(["export", str(EXAMPLE), "-o", str(tmp_path / "net.json")]) == 0
    (tmp_path / "theme").mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: First Name\nplugins:\n  - beliefs:\n      source: net.json\n"
                      "      templates: theme\n", encoding="utf-8")
    served = serve()  # ./mkdocs.yml names the source
    assert b"First Name" in served.get("")[1]

    _edit(tmp_path / "net.json", CLAIM, "Edited in network.json.")
    version = served.wait_version(1)["version"]
    assert b"Edited in network.json." in served.get(f"belief/{BELIEF}/")[1]

    _edit(config, "First Name", "Second Name")
    version = served.wait_version(version)["version"]
    assert b"Second Name" in served.get("")[1]

    default = Path(__file__).resolve().parent.parent / "templates" / "404.html"
    (tmp_path / "theme" / "404.html").write_text(
        default.read_text(encoding="utf-8").replace("Not found", "Lost in the network"), encoding="utf-8")
    version = served.wait_version(version)["version"]
    assert b"Lost in the network" in served.get("nowhere/")[1]

    good = (tmp_path / "theme" / "404.html").read_text(encoding="utf-8")
    (tmp_path / "theme" / "404.html").write_text("{% extends 'base.html' %}\n{% if %}\n", encoding="utf-8")
    state = served.wait_version(version)
    assert not state["ok"] and "theme/404.html:2: E805 template error" in state["problems"]
    (tmp_path / "theme" / "404.html").write_text(good, encoding="utf-8")
    version = served.wait_version(state["version"])["version"]

    _edit(config, "      templates: theme\n", "      templates: theme\n      colour: red\n")  # as build: none
    state = served.wait_version(version)
    assert not state["ok"] and "E802 unknown beliefs option 'colour'" in state["problems"], state
    _edit(config, "      colour: red\n", "")
    version = served.wait_version(state["version"])["version"]
    _edit(config, "site_name: Second Name", "site_name: Second Name\nbad: [")  # unreadable: watched as it was
    state = served.wait_version(version)
    assert not state["ok"] and "E802 cannot read the configuration" in state["problems"], state
    _edit(config, "\nbad: [", "")
    version = served.wait_version(state["version"])["version"]

    _edit(tmp_path / "net.json", '"nodes"', '"nodes" oops')
    state = served.wait_version(version)
    assert not state["ok"] and "net.json" in state["problems"] and "E601" in state["problems"]
    served.wait_output("E601")
    page = served.get(f"belief/{BELIEF}/")[1]  # the last good site, with the problems on top
    assert b"Edited in network.json." in page and b"E601" in page
    _stopped_cleanly(served)


def test_a_source_folder_made_again_is_watched_again(tmp_path, serve):
    """A branch switch or `rm -rf beliefs && cp -r backup beliefs` makes the folder again, often
    with the inode it had: its watch saw its last event, and serve never saw an edit again."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    served = serve(str(source), "--no-search")
    shutil.copytree(source, tmp_path / "backup")
    shutil.rmtree(source)
    shutil.copytree(tmp_path / "backup", source)
    version = served.wait_version(1)["version"]
    time.sleep(2.5)  # past the watcher's batching of the replacement (debounce 1.6 s)
    version = served.version()["version"]
    _edit(source / f"{BELIEF}.md", CLAIM, "Edited in the folder made again.")
    served.wait_version(version, timeout=10)
    assert b"Edited in the folder made again." in served.get(f"belief/{BELIEF}/")[1]
    _stopped_cleanly(served)


def test_a_watched_folder_deleted_is_told_by_its_watch_even_when_made_again_with_its_inode(tmp_path, monkeypatch):
    """A folder made again at once often gets the inode it had (rm -rf data && cp -r backup data),
    so only its watch can tell: a documents folder (watched recursively) and a network.json's
    folder (watched through it), whose own deletion the filter dropped."""
    import queue

    from site_builder import serve as serve_module
    monkeypatch.setattr(serve_module, "_identity", lambda path: (0, 0))  # the same inode, always
    docs, data = tmp_path / "docs", tmp_path / "data"
    for target, folder in (((frozenset({docs}), frozenset(), frozenset()), docs),
                           ((frozenset(), frozenset({data / "net.json"}), frozenset()), data)):
        folder.mkdir()
        (folder / "net.json").write_text("{}", encoding="utf-8")
        watchers = serve_module._Watchers(queue.Queue())
        try:
            watchers.start(target)
            assert not watchers.replaced()
            shutil.rmtree(folder)
            folder.mkdir()
            deadline = time.monotonic() + 10
            while not watchers.replaced():
                assert time.monotonic() < deadline, f"{folder.name}: the deletion went untold"
                time.sleep(0.1)
        finally:
            watchers.stop()


def test_a_broken_configuration_watches_no_file_beside_it_nor_a_missing_folder(tmp_path, serve):
    """While mkdocs.yml is broken, a folder made beside it may be the one it names; a file
    written there (serve's own log: `serve > serve.log`) rebuilt for ever, and so did a
    --config in a folder that does not exist (watchfiles refused it; serve restarted it
    every second)."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (tmp_path / "mkdocs.yml").write_text("site_name: B\nplugins:\n  - beliefs:\n      source: beliefs\n"
                                         "      search: false\n      templates: theme\n", encoding="utf-8")
    served = serve()
    assert "E802" in served.version()["problems"]
    version = served.version()["version"]
    for k in range(12):
        with open(tmp_path / "serve.log", "a", encoding="utf-8") as log:
            log.write(f"line {k}\n")
        time.sleep(0.25)
    time.sleep(2)
    assert served.version()["version"] == version and "serve.log" not in served.output()
    _stopped_cleanly(served)
    elsewhere = serve(str(source), "--no-search", "--config", str(tmp_path / "nowhere" / "mkdocs.yml"))
    time.sleep(3)
    assert elsewhere.output().count("rebuilding") == 0 and "stopped watching" not in elsewhere.output()
    _stopped_cleanly(elsewhere)

def test_a_templates_folder_made_after_the_configuration_named_it(tmp_path, serve):
    """`templates: theme` before theme/ exists is E802 (the option is left out, so its folder
    was never watched): making the folder now rebuilds with it."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    config = tmp_path / "mkdocs.yml"
    config.write_text("site_name: Beliefs\nplugins:\n  - beliefs:\n      source: beliefs\n"
                      "      search: false\n      templates: theme\n", encoding="utf-8")
    served = serve()
    state = served.version()
    assert not state["ok"] and "E802 option 'templates' names no folder" in state["problems"], state
    default = Path(__file__).resolve().parent.parent / "templates" / "404.html"
    (tmp_path / "theme").mkdir()
    (tmp_path / "theme" / "404.html").write_text(
        default.read_text(encoding="utf-8").replace("Not found", "Lost in the network"), encoding="utf-8")
    deadline = time.monotonic() + 15
    while b"Lost in the network" not in served.get("nowhere/")[1]:
        assert time.monotonic() < deadline, served.output()
        time.sleep(0.2)
    assert served.version()["ok"]
    _stopped_cleanly(served)

def test_a_first_build_that_fails_shows_its_problems_until_fixed(tmp_path, serve):
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    _edit(source / f"{BELIEF}.md", "**IN** · premise", "**IN** · premize <b>")
    served = serve(str(source))
    status, page = served.get(f"belief/{BELIEF}/")
    assert status == 503 and b":3: E205 malformed status line &#x27;**IN** \xc2\xb7 premize &lt;b&gt;&#x27;" in page
    assert SCRIPT.encode() in page and b"premize <b>" not in page  # escaped
    _edit(source / f"{BELIEF}.md", "**IN** · premize <b>", "**IN** · premise")
    assert served.wait_version(1)["ok"]
    assert served.get(f"belief/{BELIEF}/")[0] == 200
    _stopped_cleanly(served)


def test_an_open_page_follows_edits_and_shows_a_broken_file(tmp_path, serve):
    sync_api = _require_browser()
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    document = source / f"{BELIEF}.md"
    served = serve(str(source))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page()
        page.goto(served.url + f"belief/{BELIEF}/")
        assert CLAIM in page.inner_text("main")
        page.evaluate("window.notReloaded = true")

        started = time.monotonic()
        _edit(document, CLAIM, "A claim edited in the editor.")
        page.get_by_text("A claim edited in the editor.").first.wait_for(timeout=5000)
        print(f"\nedit -> page updated in {time.monotonic() - started:.2f} s")
        assert page.evaluate("window.notReloaded") is None  # the page reloaded by itself

        _edit(document, "**IN** · premise", "**INN** · premise")
        banner = page.locator("#belief-site-problems")
        banner.wait_for(timeout=5000)
        expected = f"{document}:3: E205 malformed status line"
        assert expected in banner.inner_text()
        assert "A claim edited in the editor." in page.inner_text("main")  # the last good site
        served.wait_output(expected)
        assert served.process.poll() is None

        _edit(document, "**INN** · premise", "**IN** · premise")
        banner.wait_for(state="detached", timeout=5000)
        assert "A claim edited in the editor." in page.inner_text("main")
        browser.close()
    _stopped_cleanly(served)


def test_the_problems_banner_shows_a_path_that_is_not_utf8():
    """Diagnostics name files by path; a path's bytes that are not UTF-8 are lone surrogates."""
    from site_builder.serve import Snapshot, inject
    snap = Snapshot(version=3, problems="b\udce9liefs/a.md:1: E101 bytes are not valid UTF-8", failed=True)
    page = inject(b"<html><body><p>site</p></body></html>", snap)
    assert b"b\\udce9liefs/a.md:1: E101" in page and page.endswith(b"</body></html>")


def _pagefind(folder: Path) -> dict[str, str]:
    """The environment of a serve whose Pagefind (the real one, through a script in
    `folder`) sleeps 5 s while `folder`/slow exists and fails while `folder`/broken does."""
    from pagefind.service import get_executable
    real = get_executable()
    folder.mkdir()
    script = folder / "pagefind"
    script.write_text(f'#!/bin/sh\nif [ -e "{folder}/broken" ]; then exit 3; fi\n'
                      f'if [ -e "{folder}/slow" ]; then sleep 5; fi\nexec "{real}" "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return {"PAGEFIND_BINARY_PATH": str(script)}


def test_a_search_index_that_fails_after_the_pages_were_put_in_place_is_shown_as_such(tmp_path, serve):
    source, pagefind = tmp_path / "beliefs", tmp_path / "pagefind"
    shutil.copytree(EXAMPLE, source)
    served = serve(str(source), env=_pagefind(pagefind))
    (pagefind / "broken").touch()
    _edit(source / f"{BELIEF}.md", CLAIM, "A claim edited while serving.")
    served.wait_output("their search index is not", timeout=30)
    state = served.version()
    assert not state["ok"] and "E803" in state["problems"]
    status, page = served.get(f"belief/{BELIEF}/")
    assert status == 200 and b"A claim edited while serving." in page
    assert b"The pages are up to date, but their search index could not be." in page
    (pagefind / "broken").unlink()
    _edit(source / f"{BELIEF}.md", "A claim edited while serving.", "A claim edited again.")
    served.wait_count("built ", 2)
    assert served.version()["ok"]
    _same_as_built(served.site(), source, tmp_path / "built")  # the folder mid-update: rebuilt whole
    _stopped_cleanly(served)


def test_open_pages_that_searched_reload_when_the_search_bundle_is_replaced(tmp_path, serve):
    """With search, serve shows an edit's pages before Pagefind is done; then the old bundle's
    files go: a page that loaded it reloads, a page that did not stays."""
    sync_api = _require_browser()
    source, pagefind = tmp_path / "beliefs", tmp_path / "pagefind"
    shutil.copytree(EXAMPLE, source)
    served = serve(str(source), env=_pagefind(pagefind))
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        searching, reading = (_record_problems(browser.new_page(), lambda url: url.startswith(served.url))
                              for _ in range(2))
        (pagefind / "slow").touch()
        _edit(source / f"{BELIEF}.md", CLAIM, "A claim about dromedaries, edited while serving.")
        served.wait_output("pages updated in", timeout=30)  # Pagefind sleeps 5 s from now
        for tab in (searching, reading):
            tab.goto(served.url + f"belief/{BELIEF}/")
            assert "dromedaries" in tab.inner_text("main")
            tab.evaluate("window.notReloaded = true")
        assert _search(searching, "matrices") == [BELIEF]  # the old bundle: the old claim
        assert sum("built " in line for line in served.lines) == 1, "Pagefind was done too soon"
        served.wait_count("built ", 2)
        searching.wait_for_function("window.notReloaded === undefined", timeout=5000)
        reading.wait_for_timeout(1500)  # three polls
        assert reading.evaluate("window.notReloaded") is True
        assert _search(searching, "dromedaries") == [BELIEF]  # the new bundle
        assert _search(reading, "dromedaries") == [BELIEF]
        assert searching.problems == [] and reading.problems == []
        browser.close()
    _stopped_cleanly(served)


def test_watching_has_begun_when_the_watchers_have_started(tmp_path, monkeypatch):
    """serve prints "Serving" once its watchers are up: a file saved right after is seen even
    when watchfiles takes a while to set up its watches (here half a second)."""
    import queue

    import watchfiles

    from site_builder.serve import _Watchers

    real = watchfiles.watch

    def slow(*args, **kwargs):
        time.sleep(0.5)
        yield from real(*args, **kwargs)

    monkeypatch.setattr(watchfiles, "watch", slow)
    folder = tmp_path / "beliefs"
    folder.mkdir()
    changes: queue.Queue = queue.Queue()
    watchers = _Watchers(changes)
    try:
        watchers.start((frozenset({folder}), frozenset(), frozenset()))
        (folder / "a.md").write_text("saved right away", encoding="utf-8")
        assert changes.get(timeout=10) == {str(folder / "a.md")}
    finally:
        watchers.stop()


def test_serve_takes_builds_flags_for_the_site_it_builds(tmp_path, serve):
    """--no-search (a 50,000-belief network re-indexes for seconds on every save), --visible-to
    and --base-url, as for build, on every rebuild."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    (source / "secret.md").write_text("---\nmetadata:\n  access_tags: [internal]\n---\n# secret\n\n"
                                      "**IN** · premise\n\nSecret claim.\n", encoding="utf-8")
    served = serve(str(source), "--no-search", "--visible-to", "public", "--base-url", "https://example.org/kb/")

    def flags_hold() -> None:
        assert served.get("pagefind/pagefind.js")[0] == 404
        assert served.get("belief/secret/")[0] == 404 and b"Secret claim" not in served.get("beliefs.json")[1]
        assert b"https://example.org/kb/sitemap.xml" in served.get("robots.txt")[1]
    flags_hold()
    _edit(source / f"{BELIEF}.md", CLAIM, "Edited while served.")
    served.wait_version(served.version()["version"])
    assert b"Edited while served." in served.get(f"belief/{BELIEF}/")[1]
    flags_hold()  # the rebuild's too
    _stopped_cleanly(served)


def test_host_listens_on_another_address_and_says_who_can_read_it(tmp_path, serve):
    """Inside a container serve must listen on 0.0.0.0 for a forwarded port to reach it
    (127.0.0.2 stands for another interface: only a wildcard listener answers there). The
    Host check still refuses names (DNS rebinding needs one) and takes IP addresses."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    local = serve(str(source), "--no-search")
    port = local.url.rstrip("/").rsplit(":", 1)[1]
    with pytest.raises(urllib.error.URLError):
        urllib.request.urlopen(f"http://127.0.0.2:{port}/", timeout=5)
    assert "whoever can reach" not in local.output()
    _stopped_cleanly(local)
    wide = serve(str(source), "--no-search", "--host", "0.0.0.0")
    port = wide.url.rstrip("/").rsplit(":", 1)[1]
    with urllib.request.urlopen(f"http://127.0.0.2:{port}/belief/{BELIEF}/", timeout=5) as response:
        assert response.status == 200 and CLAIM.encode() in response.read()
    assert "listening on 0.0.0.0: whoever can reach this machine can read the site" in wide.output()
    assert wide.get("", Host=f"192.0.2.7:{port}")[0] == 200 and wide.get("", Host="[2001:db8::1]:80")[0] == 200
    assert wide.get("", Host=f"attacker.example:{port}")[0] == 403
    _stopped_cleanly(wide)


def test_an_address_it_cannot_listen_on_is_said_with_the_likely_cause(tmp_path):
    """A port in use suggests another server and --port 0; an unknown --host name says so."""
    import socket
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = subprocess.run([*COMMAND, "serve", str(source), "--no-search", "--port", str(port)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert busy.returncode == 1 and f"cannot listen on 127.0.0.1:{port}:" in busy.stderr, busy.stderr
    assert "(another server? try --port 0)" in busy.stderr
    unknown = subprocess.run([*COMMAND, "serve", str(source), "--no-search", "--host", "no-such-host.invalid"],
                             cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 1 and "cannot listen on no-such-host.invalid:8000:" in unknown.stderr
    assert "another server" not in unknown.stderr and "Traceback" not in unknown.stderr


def test_ctrl_c_pressed_twice_still_removes_the_private_folder(tmp_path, serve):
    """The second Ctrl+C landed while serve was stopping (its build process, the server) and
    cut the removal of its folder short: left until the next server started."""
    source = tmp_path / "beliefs"
    shutil.copytree(EXAMPLE, source)
    served = serve(str(source), "--no-search")
    served.process.send_signal(signal.SIGINT)
    time.sleep(0.1)
    if served.process.poll() is None:
        served.process.send_signal(signal.SIGINT)
    assert served.process.wait(timeout=10) == 0  # a stop, as with one Ctrl+C
    assert "Traceback" not in served.output()
    assert list(served.temp.iterdir()) == []
