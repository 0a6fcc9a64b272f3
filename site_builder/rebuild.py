"""`serve`'s builds, in a process of their own (`python -m site_builder.rebuild`).

The server has threads (HTTP requests, file watching), and forking beside threads can copy a
lock one of them holds into a child; this process has no other thread when it forks (the
render's own threads start after the fork: render.parallel), so it renders with a pool of
workers on every core, as `belief-site build` does (from parallel.SERIAL_BELOW beliefs up). It stays up between builds, so a rebuild pays no interpreter start or imports,
and it hands each build the last one's evaluation (taken when nothing the evaluation reads
changed: evaluate.evaluate). Builds go into one folder: each renames the files it rendered
into it, one by one, when its cache vouches for the folder (else it swaps a whole new folder
in); a failed build leaves it as it was.

The server talks to it through `Rebuilder`: one request per line on its stdin, one reply
per line on a pipe of its own (so that nothing else the process prints can be taken for a
reply), both JSON (paths that are not UTF-8 travel as `\\udcXX` escapes):

    {"source": str | null, "config": str | null, "out": str, "cache": str}
    {"written": bool, "beliefs": int, "files": int, "reused": int, "diagnostics": [{path,
     line, code, message, hint}], "crash": str | null, "partial": bool}

A build with search into the folder of the last one replies twice: once its pages are in
place ("partial": true; Pagefind starts then), and once the search bundle is too. It replies
once when it has no new file to put in place first, or when it replaces the whole folder
(one its cache cannot vouch for: the first build, a folder changed by hand).

The end of its input ends it. It runs in a session of its own, so Ctrl+C in the terminal
reaches only the server, which then stops it, killing its session (workers, Pagefind) when
it is in the middle of a build. Its render workers inherit the reply pipe, so the server
does not wait for the pipe to close to know the process died: it checks the process.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import traceback
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, TextIO

from .config import SiteConfig, load_config, with_overrides
from .diagnostics import Diagnostic

if TYPE_CHECKING:
    from .pipeline import Memory

__all__ = ["Rebuilder", "Reply", "settings", "main"]

STOP_WAIT = 2.0
"""Seconds an idle build process gets to exit at the end of its input before it is killed."""
POLL_S = 0.2
"""How often the server, waiting for a reply, checks that the build process still runs."""
_HOME = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
"""The folder that holds this package."""


def _isolated() -> tuple[str, ...]:
    """`-m` puts the working folder first on the module path: a belief repository's `json.py`
    would run in the build process. `-P` leaves it out, unless belief-site itself is run from
    that folder (a checkout, not installed), where the server found it the same way."""
    return () if os.path.abspath(os.getcwd()) == _HOME else ("-P",)


def settings(source: str | None, config_file: str | None,
             overrides: dict | None = None) -> tuple[SiteConfig, list[Diagnostic], Path]:
    """(config, config problems, source), read afresh for every build (mkdocs.yml is watched);
    the same rules as `belief-site build`; `overrides`: its flags (config.flag_overrides)."""
    config, problems = load_config(config_file)
    config = with_overrides(config, **(overrides or {}))
    path = Path(source) if source else config.source_path()
    if source:  # a SOURCE argument is relative to the working folder, not to mkdocs.yml
        config = with_overrides(config, source=str(path.resolve()))
    return config, problems, path


@dataclass(frozen=True)
class Reply:
    """What one build did."""

    written: bool = False
    beliefs: int = 0
    files: int = 0
    reused: int = 0
    """Beliefs whose files were kept from the last build."""
    diagnostics: tuple[Diagnostic, ...] = ()
    crash: str | None = None
    """An internal error's traceback, or why the build process stopped (None: no crash)."""
    partial: bool = False
    """The pages are in place; the search bundle is not yet (another reply follows)."""


def crash_text(exc: BaseException) -> str:
    """An exception during a build as text (template errors come back as E805 diagnostics)."""
    return "internal error while building:\n" + "".join(traceback.format_exception(exc))


def _build(request: dict, memory: Memory, send: Callable[[dict], None]) -> dict:
    """One build, and its reply (`send` takes the early one of a build with search)."""
    from .pipeline import build  # here: the server's process never imports the build itself
    from .render.parallel import default_jobs

    problems: list[Diagnostic] = []

    def reply(built, partial: bool = False) -> dict:
        return asdict(Reply(built.written, len(built.checked.parsed.network.beliefs), built.files, built.reused,
                            (*problems, *built.diagnostics), partial=partial))
    try:
        config, problems, _ = settings(request["source"], request["config"], request.get("overrides"))
        if any(d.severity == "error" for d in problems):  # as `belief-site build`: nothing is built
            return asdict(Reply(diagnostics=tuple(problems)))
        built = build(config, Path(request["out"]), jobs=request.get("jobs") or default_jobs(), cache=Path(request["cache"]),
                      memory=memory, published=lambda early: send(reply(early, partial=True)))
    except Exception as exc:  # a stage failed: the server shows it and keeps serving
        memory.evaluation = None  # (nothing else is known to be amiss)
        return asdict(Reply(diagnostics=tuple(problems), crash=crash_text(exc)))
    return reply(built)


def serve_requests(requests: TextIO, replies: TextIO) -> None:
    """Build for each request line until the input ends; each build takes what the last one
    found (pipeline.Memory: its evaluation, 0.2 s at 10k beliefs, after an edit of claims or
    summaries that moves no line; network.json nodes that read the same, 0.15 s)."""
    from .pipeline import Memory

    def send(reply: dict) -> None:
        replies.write(json.dumps(reply) + "\n")
        replies.flush()

    memory = Memory()
    for line in requests:
        send(_build(json.loads(line), memory, send))


def main(argv: list[str] | None = None) -> int:
    """`python -m site_builder.rebuild FD`: requests on stdin, replies on file descriptor FD."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the server decides when this process stops
    fd = int((argv if argv is not None else sys.argv[1:])[0])
    with os.fdopen(fd, "w", encoding="utf-8") as replies:
        serve_requests(sys.stdin, replies)
    return 0


class Rebuilder:
    """The server's side: starts the build process when first asked, sends it requests and
    starts it again after it died (killed, out of memory) or said something that is not a
    reply."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._replies: int | None = None
        self._pending = b""
        """What was read of the reply pipe after the last full line."""
        self._busy = False

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def _start(self) -> None:
        read, write = os.pipe()
        try:
            self._process = subprocess.Popen(
                [sys.executable, *_isolated(), "-m", "site_builder.rebuild", str(write)], stdin=subprocess.PIPE,
                text=True, encoding="utf-8", start_new_session=True, pass_fds=(write,))
        except BaseException:
            os.close(read)
            raise
        finally:
            os.close(write)
        self._replies = read

    def build(self, source: str | None, config_file: str | None, out: Path, cache: Path,
              published: Callable[[Reply], None] | None = None, overrides: dict | None = None,
              jobs: int | None = None) -> Reply:
        """The build's reply; `published(reply)` first, when its pages are in place before
        its search bundle (`Reply.partial`); `overrides`: see `settings`; `jobs`: rendering
        processes (default: one per core)."""
        if self._process is not None and self._process.poll() is not None:
            self.stop()  # it died since the last build
        if self._process is None:
            self._start()
        request = {"source": source, "config": config_file, "out": str(out), "cache": str(cache),
                   "overrides": overrides or {}, "jobs": jobs}
        self._busy = True
        try:
            self._process.stdin.write(json.dumps(request) + "\n")
            self._process.stdin.flush()
        except OSError:  # BrokenPipeError: it died before reading
            reply = self._lost(b"")
        else:
            while (reply := self._reply()).partial:
                if published is not None:
                    try:
                        published(reply)
                    except BaseException:  # its final reply would answer the next request
                        self.stop(kill=True)
                        raise
        self._busy = False  # not on an exception (Ctrl+C while waiting): `stop` kills it at once
        return reply

    def _reply(self) -> Reply:
        try:
            line = self._line()
        except OSError:
            line = b""
        try:
            data = json.loads(line)
            return Reply(data["written"], data["beliefs"], data["files"], data["reused"],
                         tuple(Diagnostic(**d) for d in data["diagnostics"]), data["crash"], data["partial"] is True)
        except (ValueError, TypeError, KeyError):
            return self._lost(line)

    def _lost(self, line: bytes) -> Reply:
        """The build process died, or said something that is not a reply: it is stopped."""
        code = self.stop(kill=True)
        why = f"exit code {code}" if line == b"" else f"it replied {line[:200]!r}"
        return Reply(crash=f"the build process stopped ({why}); the next change starts a new one")

    def _line(self) -> bytes:
        """One reply line (b"" when the process is gone, even if its workers live on)."""
        while b"\n" not in self._pending:  # JSON holds no raw newline
            ready, _, _ = select.select([self._replies], [], [], POLL_S)
            if ready:
                chunk = os.read(self._replies, 1 << 16)
                if not chunk:
                    return b""
                self._pending += chunk
            elif _exited(self._process.pid):
                return b""
        line, _, self._pending = self._pending.partition(b"\n")
        return line

    def stop(self, kill: bool = False) -> int | None:
        """End the build process; its exit code. Idle, it exits at the end of its input. In
        the middle of a build (the server is stopping), or dead (`kill`), its session is killed:
        the workers and Pagefind it started, too."""
        process, self._process = self._process, None
        if process is None:
            return None
        if kill or self._busy:  # before it is waited for: until then its pid names its session
            _kill_session(process.pid)
        self._busy = False
        try:
            process.stdin.close()
        except OSError:
            pass
        try:
            code = process.wait(STOP_WAIT)
        except subprocess.TimeoutExpired:
            _kill_session(process.pid)
            code = process.wait()
        if self._replies is not None:
            os.close(self._replies)
            self._replies = None
        self._pending = b""
        return code


def _exited(pid: int) -> bool:
    """Whether the process has ended, without reaping it (its pid keeps naming its session)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


if __name__ == "__main__":
    sys.exit(main())
