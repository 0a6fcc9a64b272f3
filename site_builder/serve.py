"""`belief-site serve`: build, serve on localhost, rebuild on change, reload browsers (issue 4).

Builds go into one folder under a private temporary directory (never the user's site/),
made by a build process of their own (rebuild.py: it renders on every core and stays warm
between builds). As with `belief-site build`, a rebuild renders into a temporary folder and
then renames what it rendered into the served one, file by file (a rebuild into a folder
its cache cannot vouch for swaps the whole folder); a failed build changes nothing, so the
last good site stays up. A request made while the files are renamed may get a mix of old
and new pages, or a 404 for a moment. Open pages reload once the build is done or, with
search, once it has put its pages in place: it then renames the search bundle in when
Pagefind is done, and only the open pages that loaded the old bundle reload (reload.js;
searches use the old one until then). A build process that dies while renaming leaves a
mixed folder, which the next build replaces whole. The files on disk are exactly what
`belief-site build` writes: the live-reload script and the problems banner are added to HTML
responses only, when they are served.
"""

from __future__ import annotations

import argparse
import errno
import html
import http.server
import ipaddress
import json
import os
import queue
import shutil
import signal
import socket
import stat
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import unquote, urlsplit

from .config import CONFIG_FILE, SiteConfig, flag_overrides, inherited
from .diagnostics import Diagnostic, counted, format_all, has_errors, shown_path
from .processes import owned_prefix, remove_left_by_dead
from .rebuild import Rebuilder, Reply, crash_text, settings
from .render.pages import templates_dir

OK, FAILED, USAGE = 0, 1, 2
PREFIX = "/__belief_site__/"
"""URL folder of the server's own endpoints (never a site path: site paths are belief ids)."""
POLL_MS = 500
"""How often an open page asks whether the site was rebuilt."""

RELOAD_JS = """\
// belief-site serve: reload this page when the site is rebuilt (added when served, never built).
(function () {
  "use strict";
  var me = document.currentScript;
  var version = me ? me.getAttribute("data-version") : null;
  var search = me ? me.getAttribute("data-search") : null;
  var delay = %(poll)d;
  function searched() {  // this page loaded the search bundle (site.js does on the first search)
    return performance.getEntriesByType("resource").some(function (entry) {
      return entry.name.indexOf("/pagefind/") >= 0;
    });
  }
  function poll() {
    fetch("%(prefix)sversion", {cache: "no-store"})
      .then(function (response) { return response.json(); })
      .then(function (state) {
        delay = %(poll)d;
        if (String(state.version) !== version) { location.reload(); return; }
        if (String(state.search) !== search) {  // a new search bundle, after the pages:
          if (searched()) { location.reload(); return; }  // the old one's files are gone
          search = String(state.search);  // a first search will load the new one
        }
        setTimeout(poll, delay);
      }, function () {  // the server is restarting or stopped: ask less often
        delay = Math.min(delay * 2, 5000);
        setTimeout(poll, delay);
      });
  }
  setTimeout(poll, delay);
  document.addEventListener("click", function (event) {
    var close = event.target.closest && event.target.closest("[data-belief-site-close]");
    if (close) { document.getElementById("belief-site-problems").remove(); }
  });
})();
""" % {"poll": POLL_MS, "prefix": PREFIX}

_BANNER_STYLE = (
    "position:fixed;left:0;right:0;bottom:0;z-index:2147483647;max-height:50vh;overflow:auto;"
    "margin:0;padding:.75rem 1rem;background:#2b0d0d;color:#ffecec;border-top:4px solid #e5484d;"
    "font:14px/1.45 system-ui,sans-serif;text-align:left;box-shadow:0 -2px 12px rgba(0,0,0,.4)")
_PRE_STYLE = ("margin:.5rem 0 0;white-space:pre-wrap;word-break:break-word;background:none;color:inherit;"
              "font:13px/1.45 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;border:0;padding:0")
_CLOSE_STYLE = ("float:right;margin-left:1rem;background:none;color:inherit;border:1px solid currentColor;"
                "border-radius:4px;cursor:pointer;font:inherit;padding:0 .5rem")


# --- settings: the same rules as `belief-site build` -------------------------------------------

def _settings(args: argparse.Namespace) -> tuple[SiteConfig, list[Diagnostic], Path]:
    """(config, config problems, source), read afresh for every build (mkdocs.yml is watched)."""
    return settings(args.source, args.config, flag_overrides(args))


Targets = tuple[frozenset, frozenset, frozenset]
"""What serve watches: (folders, recursively; files, through their folder; folders where a
folder made counts, while mkdocs.yml is broken)."""
NOTHING: Targets = (frozenset(), frozenset(), frozenset())


def _targets(args: argparse.Namespace, config: SiteConfig, source: Path, broken: bool = False) -> Targets:
    """What to watch for these settings. While they have errors (`broken`), a folder made
    beside the configuration file counts too: it may be one the file names that did not exist
    yet (`templates: tpl` is E802 until tpl is made, and the option is then left out)."""
    paths = [source, templates_dir()]
    if config.templates:
        base = Path(config.config_path).parent if config.config_path else Path(".")
        paths.append(base / config.templates)
    config_file = Path(os.path.abspath(args.config if args.config else CONFIG_FILE))
    paths += [config_file, *inherited(config_file)]
    return _watchable({Path(os.path.abspath(p)) for p in paths}, {config_file.parent} if broken else set())


def _watchable(paths: set[Path], open_folders: set[Path]) -> Targets:
    """Each path as it can be watched now: a folder recursively; a file, or a folder not made
    yet, through its folder; nothing when that is missing too (watchfiles refuses a job naming
    a missing path, which would stop the others it watches)."""
    folders = {p for p in paths if p.is_dir()}
    files = {p for p in paths - folders if p.parent.is_dir()}
    return frozenset(folders), frozenset(files), frozenset(f for f in open_folders if f.is_dir())


def _union(a: Targets, b: Targets) -> Targets:
    """What both watch, as it can be watched now (a folder gone since goes through its parent)."""
    return _watchable(a[0] | a[1] | b[0] | b[1], a[2] | b[2])


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        found = path.stat()
    except OSError:
        return None
    return found.st_dev, found.st_ino


# --- what the server shows ----------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Snapshot:
    """What the server serves right now; replaced whole after each build."""

    version: int = 0
    site: Path | None = None
    """Folder of the last good build (None until one succeeds)."""
    problems: str = ""
    """Errors of the last build as text (empty when it was clean)."""
    failed: bool = False
    """The last build wrote nothing (the site shown is an older one, if any)."""
    stale_search: bool = False
    """The last build put its pages in place, then failed (Pagefind): the pages are new, the
    search bundle is an older build's."""
    search: int = 0
    """Counts search bundles put in place after their build's pages were shown: an open page
    that has loaded the last bundle reloads (reload.js), the others need not."""


class _State:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._snapshot = Snapshot()

    def get(self) -> Snapshot:
        with self._lock:
            return self._snapshot

    def publish(self, site: Path | None, problems: str, failed: bool, stale_search: bool = False) -> Snapshot:
        with self._lock:
            old = self._snapshot
            self._snapshot = Snapshot(old.version + 1, site if site is not None else old.site,
                                      problems, failed, stale_search, old.search)
            return self._snapshot

    def searched(self) -> Snapshot:
        """The pages shown stay; the search bundle beside them is new."""
        with self._lock:
            self._snapshot = replace(self._snapshot, search=self._snapshot.search + 1)
            return self._snapshot


def _banner(snap: Snapshot) -> str:
    if not snap.problems:
        return ""
    if snap.stale_search:
        title = "The pages are up to date, but their search index could not be. Fix the problems below and save."
    elif snap.failed and snap.site is not None:
        title = "The build failed; this is the last good build. Fix the problems below and save."
    elif snap.failed:
        title = "The build failed. Fix the problems below and save."
    else:
        title = "The site was built, with errors:"
    return (f'<div id="belief-site-problems" role="alert" style="{_BANNER_STYLE}">'
            f'<button type="button" data-belief-site-close aria-label="Hide" style="{_CLOSE_STYLE}">'
            f'&times;</button><strong>belief-site serve: {html.escape(title)}</strong>'
            f'<pre style="{_PRE_STYLE}">{html.escape(snap.problems)}</pre></div>')


def _extras(snap: Snapshot) -> bytes:
    script = f'<script src="{PREFIX}reload.js" data-version="{snap.version}" data-search="{snap.search}"></script>'
    return (_banner(snap) + script).encode("utf-8", "backslashreplace")  # a path may not be UTF-8


def inject(page: bytes, snap: Snapshot) -> bytes:
    """The page with the reload script (and the problems banner) before its last `</body>`."""
    at = page.lower().rfind(b"</body>")
    extra = _extras(snap)
    return page + extra if at < 0 else page[:at] + extra + page[at:]


def _failure_page(snap: Snapshot) -> bytes:
    page = ('<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            '<title>Build failed · belief-site serve</title></head>'
            '<body><h1>No site yet</h1><p>The first build failed; see the problems below.</p></body></html>\n')
    return inject(page.encode("utf-8"), snap)


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static files from the current build; HTML gets the reload script on the way out."""

    state: _State  # set on the subclass made by _server
    port: int
    server_version = "belief-site-serve"
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript",
                      ".mjs": "text/javascript", ".wasm": "application/wasm", ".json": "application/json"}
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - polling every 500 ms would flood the terminal
        pass

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")  # a rebuilt site must never come from a cache
        super().end_headers()

    def do_GET(self) -> None:  # noqa: N802
        self._respond(head=False)

    def do_HEAD(self) -> None:  # noqa: N802
        self._respond(head=True)

    def _host_ok(self) -> bool:
        """A Host header naming localhost, an IP address or the --host name: a page on another
        site cannot read this one by DNS rebinding, which needs a name of its own."""
        host = self.headers.get("Host")
        if host is None:
            return True
        name = (host.rsplit(":", 1)[0] if not host.endswith("]") else host).strip("[]").lower()
        return name in ("localhost", self.host.lower()) or _is_address(name)

    def _send(self, status: int, body: bytes, content_type: str, head: bool) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head:
            self.wfile.write(body)

    def _respond(self, head: bool) -> None:
        if not self._host_ok():
            self._send(403, b"belief-site serve answers to localhost, IP addresses and its --host name only\n",
                       "text/plain; charset=utf-8", head)
            return
        path = unquote(urlsplit(self.path).path)
        snap = self.state.get()
        if path == PREFIX + "version":
            body = json.dumps({"version": snap.version, "ok": not snap.failed, "problems": snap.problems,
                               "search": snap.search}).encode("utf-8")
            self._send(200, body, "application/json", head)
        elif path == PREFIX + "reload.js":
            self._send(200, RELOAD_JS.encode("utf-8"), "text/javascript; charset=utf-8", head)
        elif snap.site is None:
            self._send(503, _failure_page(snap), "text/html; charset=utf-8", head)
        else:
            self._static(path, snap, head)

    def _static(self, path: str, snap: Snapshot, head: bool) -> None:
        self.directory = str(snap.site)
        file = Path(self.translate_path(self.path))
        kind = _kind(file)
        if kind == "folder":
            if not path.endswith("/"):  # the standard redirect to the folder URL
                super().do_HEAD() if head else super().do_GET()
                return
            file, kind = file / "index.html", _kind(file / "index.html")
        elif path.endswith("/"):  # a file asked for as a folder (`page.html/`): not found, as on
            kind = None  # any static host (served, every relative link on it would break)
        page = _read(file) if kind == "file" and file.suffix == ".html" else None
        if kind != "file" or (file.suffix == ".html" and page is None):
            # (or gone while a rebuild replaces it: the page reloads once the build is done)
            body = _read(snap.site / "404.html") or b"<!doctype html><title>Not found</title><body>Not found</body>"
            self._send(404, inject(body, snap), "text/html; charset=utf-8", head)
        elif page is not None:
            self._send(200, inject(page, snap), "text/html; charset=utf-8", head)
        else:
            super().do_HEAD() if head else super().do_GET()


def _loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host.lower() == "localhost"


def _is_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _kind(path: Path) -> str | None:
    """`file`, `folder`, or None: not there, or not a name this system can look up (a URL
    may ask for one longer than the file system allows, ENAMETOOLONG, which is_dir raises)."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return None
    return "folder" if stat.S_ISDIR(mode) else "file" if stat.S_ISREG(mode) else None


def _read(file: Path) -> bytes | None:
    try:
        return file.read_bytes() if _kind(file) == "file" else None
    except OSError:
        return None


class _Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)  # a real bug: show it, keep serving


def _server(host: str, port: int, state: _State, placeholder: Path) -> _Server:
    handler = type("Handler", (_Handler,), {"state": state, "host": host})
    server = type("Server", (_Server,), {"address_family": socket.AF_INET6}) if ":" in host else _Server

    def make(*args, **kwargs):
        return handler(*args, directory=str(placeholder), **kwargs)
    return server((host, port), make)


def _url(host: str, port: int) -> str:
    """Where a browser on this machine finds the server (a wildcard address names no host)."""
    shown = {"0.0.0.0": "127.0.0.1", "::": "[::1]"}.get(host, f"[{host}]" if ":" in host else host)
    return f"http://{shown}:{port}/"


# --- watching -----------------------------------------------------------------------------------

class _Watchers:
    """watchfiles in background threads; every batch of changes goes into one queue."""

    def __init__(self, changes: queue.Queue) -> None:
        self.changes = changes
        self.targets: Targets = NOTHING
        self._watched: dict[Path, tuple[int, int] | None] = {}
        self._gone = threading.Event()
        """Set when a watched folder itself was deleted (told by its watch)."""
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    def start(self, targets: Targets) -> None:
        import watchfiles
        self.stop()
        self.targets = targets
        self._stop = threading.Event()
        folders, files, open_folders = targets

        def ordinary(change, path: str) -> bool:  # editors' swap files, dot-files (never read)
            return watchfiles.DefaultFilter()(change, path) and not Path(path).name.startswith(".")

        beside = {f.parent for f in files} | open_folders

        def named(change, path: str) -> bool:
            # a folder made beside a broken mkdocs.yml may be the one it names; not a file (a
            # log written there, `serve > serve.log`, would rebuild for ever)
            found = Path(path)
            return (found in files or (found in beside and change == watchfiles.Change.deleted)
                    or (found.parent in open_folders and change == watchfiles.Change.added and found.is_dir()))

        jobs = []
        if folders:
            jobs.append((sorted(folders), True, ordinary))
        if beside:
            jobs.append((sorted(beside), False, named))
        self._watched = {folder: _identity(folder) for folder in folders | beside}
        self._gone.clear()
        ready = []
        for paths, recursive, keep in jobs:
            stop = _Watching(self._stop)
            thread = threading.Thread(target=self._watch, args=(watchfiles, paths, recursive, keep, stop),
                                      name="belief-site-watch", daemon=True)
            thread.start()
            self._threads.append(thread)
            ready.append(stop.ready)
        for event in ready:  # a change saved right after "Serving" would otherwise go unseen
            event.wait(timeout=5)

    def _watch(self, watchfiles, paths, recursive, keep, stop: "_Watching") -> None:
        try:
            for batch in watchfiles.watch(*paths, watch_filter=keep, recursive=recursive, stop_event=stop,
                                          debounce=1600, step=50, rust_timeout=1000, raise_interrupt=False):
                if any(change == watchfiles.Change.deleted and Path(path) in self._watched
                       for change, path in batch):
                    self._gone.set()
                self.changes.put({path for _, path in batch})
        except Exception as exc:  # a watched folder vanished: the main loop restarts the watchers
            if not stop.is_set():
                _say(f"belief-site serve: stopped watching {', '.join(map(str, paths))}: {exc}")
        finally:
            stop.ready.set()  # never watching: `start` need not wait

    def alive(self) -> bool:
        return all(t.is_alive() for t in self._threads)

    def replaced(self) -> bool:
        """Whether a watched folder was removed or made again since watching began: its watch
        saw its last event (a branch switch, `rm -rf src && cp -r backup src`) and would never
        report the next edit, though its thread runs on. Told by its watch (a folder made
        again at once often gets the inode it had; polling reports a folder as modified on
        every save, so only its deletion counts) or by its device and inode."""
        return self._gone.is_set() or any(_identity(folder) != seen for folder, seen in self._watched.items())

    def stop(self) -> None:
        self._stop.set()
        for thread in self._threads:
            thread.join(timeout=3)
        self._threads = []


class _Watching:
    """The stop event given to watchfiles: its watch loop first asks `is_set` once the watches
    are in place, which sets `ready` (from then on, no change goes unseen)."""

    def __init__(self, stop: threading.Event) -> None:
        self._stop, self.ready = stop, threading.Event()

    def is_set(self) -> bool:
        self.ready.set()
        return self._stop.is_set()


# --- the serve loop -----------------------------------------------------------------------------

def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _shown(paths: set[str]) -> str:
    def one(path: str) -> str:
        try:
            return os.path.relpath(path)
        except ValueError:
            return path
    names = sorted(shown_path(one(p)) for p in paths)
    return ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")


class _Builder:
    """Builds into `root`/site (through the build process) and publishes the result to the server."""

    def __init__(self, args: argparse.Namespace, state: _State, root: Path) -> None:
        self.args, self.state, self.root = args, state, root
        self.targets: Targets = NOTHING
        self.process = Rebuilder()

    def plan(self) -> Targets:
        """What the next build reads, as the settings say now (watched before it starts, so an
        edit saved during the build is seen). A broken mkdocs.yml stops watching nothing: its
        source may be the default one, say."""
        try:
            config, problems, source = _settings(self.args)
        except Exception:  # the build says why
            return self.targets
        broken = has_errors(problems)
        found = _targets(self.args, config, source, broken)
        self.targets = _union(self.targets, found) if broken else found
        return self.targets

    def __call__(self) -> Snapshot:
        out = self.root / "site"
        started = time.perf_counter()
        early: list[str] = []  # the errors shown with the pages, put in place before the search bundle

        def pages(reply: Reply) -> None:
            early.append(_errors(reply))
            self.state.publish(out, early[0], False)
            _say(f"pages updated in {time.perf_counter() - started:.1f} s; updating the search index")
        try:
            reply = self.process.build(self.args.source, self.args.config, out, self.root / "cache", pages,
                                       flag_overrides(self.args), self.args.jobs)
        except Exception as exc:  # the build process could not be asked: show it, keep serving
            reply = Reply(crash=crash_text(exc))
        found = list(reply.diagnostics)
        errors = _errors(reply)
        if found:
            _say(format_all(found, "text"))
        elapsed = time.perf_counter() - started
        if reply.written:
            # the pages shown since `pages` are these: only pages that loaded the search bundle reload
            snap = self.state.searched() if early == [errors] else self.state.publish(out, errors, False)
            kept = f", {counted(reply.reused, 'unchanged belief page')} kept" if reply.reused else ""
            _say(f"built {counted(reply.beliefs, 'belief')} ({reply.files} files{kept}) in {elapsed:.1f} s"
                 + (" (with errors: see above)" if has_errors(found) else ""))
        elif early:  # Pagefind failed after the pages were put in place
            snap = self.state.publish(out, errors or "the search index failed", True, stale_search=True)
            if not found:
                _say(errors)
            _say("belief-site serve: the pages are up to date, their search index is not; the next build "
                 "is a cold one")
        else:
            snap = self.state.publish(None, errors or "the build failed", True)
            if not found:
                _say(errors)
            _say("belief-site serve: build failed; " + ("still serving the last good build" if snap.site
                                                         else "the pages show the problems"))
        return snap

    def close(self) -> None:
        self.process.stop()


def _errors(reply: Reply) -> str:
    """The problems banner of a build: its crash, or its errors."""
    return reply.crash or format_all([d for d in reply.diagnostics if d.severity == "error"], "text")


def _drain(changes: queue.Queue, quiet: float = 0.1) -> set[str]:
    """Everything queued, waiting until nothing has arrived for `quiet` seconds (a debounce)."""
    found: set[str] = set()
    while True:
        try:
            found |= changes.get(timeout=quiet)
        except queue.Empty:
            return found


def _interrupt(signum, frame):
    raise KeyboardInterrupt


FOLDER_PREFIX = "belief-site-serve-"
"""The server's private folder (site and cache) in the temporary folder: `<prefix><pid>-<random>`."""


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code."""
    try:
        import watchfiles  # noqa: F401 - fail early with a clear message
    except ImportError:
        _say("belief-site serve needs watchfiles: pip install watchfiles")
        return FAILED
    _, problems, source = _settings(args)
    if not source.exists():  # the configuration's problems first: they may be why
        if problems:
            _say(format_all(problems, "text"))
        _say(f"belief-site: source {source} not found (pass a documents folder or a network.json)")
        return USAGE
    if not 0 <= args.port <= 65535:
        _say(f"belief-site: --port {args.port} is not a port number")
        return USAGE
    main_thread = threading.current_thread() is threading.main_thread()
    # SIGHUP too (the terminal closed): the build process, in a session of its own, gets no signal
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)} if main_thread else {}
    remove_left_by_dead(tempfile.gettempdir(), [FOLDER_PREFIX])  # servers killed before they could
    root = Path(tempfile.mkdtemp(prefix=owned_prefix(FOLDER_PREFIX)))
    state = _State()
    changes: queue.Queue = queue.Queue()
    watchers = _Watchers(changes)
    server, serving, builder = None, None, None
    try:
        try:
            server = _server(args.host, args.port, state, root)
        except OSError as exc:
            busy = " (another server? try --port 0)" if exc.errno == errno.EADDRINUSE else ""
            _say(f"belief-site: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}{busy}")
            return FAILED
        builder = _Builder(args, state, root)
        watchers.start(builder.plan())
        builder()
        serving = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.2},
                                   name="belief-site-http", daemon=True)
        serving.start()
        _say(f"Serving {_url(args.host, server.server_address[1])} (Ctrl+C to stop)")
        if not _loopback(args.host):
            _say(f"belief-site: listening on {args.host}: whoever can reach this machine can read the site")
        restarted = 0.0
        while True:
            try:
                changed = changes.get(timeout=0.5)
            except queue.Empty:
                if (not watchers.alive() or watchers.replaced()) and time.monotonic() - restarted > 1:
                    restarted = time.monotonic()  # a watched folder was removed or replaced
                    watchers.start(builder.plan())
                    builder()
                continue
            changed |= _drain(changes)
            # Watching what this build reads (mkdocs.yml may have moved the source or the
            # templates, a folder may have been made again) starts before it reads anything.
            if builder.plan() != watchers.targets or watchers.replaced():
                watchers.start(builder.targets)
            _say(f"changed: {_shown(changed)}; rebuilding")
            builder()
    except KeyboardInterrupt:
        _say("belief-site serve: stopped")
        return OK
    finally:
        try:
            watchers.stop()
            if builder is not None:
                builder.close()
            if server is not None:
                if serving is not None:  # shutdown() waits for serve_forever, so only once it runs
                    server.shutdown()
                server.server_close()
        except KeyboardInterrupt:  # Ctrl+C again while stopping: it cuts the waits short, still a stop
            pass
        finally:
            _remove_uninterrupted(root, main_thread)
            for sig, handler in previous.items():
                signal.signal(sig, handler)


STOPPING = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def _remove_uninterrupted(root: Path, main_thread: bool) -> None:
    """Remove the server's private folder with Ctrl+C, SIGTERM and SIGHUP ignored meanwhile
    (only the main thread may set handlers): pressed twice, Ctrl+C left the folder until the
    next server started."""
    if not main_thread:
        shutil.rmtree(root, ignore_errors=True)
        return
    before = {sig: signal.signal(sig, signal.SIG_IGN) for sig in STOPPING}
    try:
        shutil.rmtree(root, ignore_errors=True)
    finally:
        for sig, handler in before.items():
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)


__all__ = ["run", "inject", "Snapshot", "PREFIX"]
