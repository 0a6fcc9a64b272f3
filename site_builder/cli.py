"""`belief-site` command line: an adapter that turns arguments into pipeline calls.

Exit codes: 0 clean, 1 errors (or warnings with --strict), 2 usage errors.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import NoReturn

from . import __version__, review
from .config import flag_overrides, load_config, url_text, utf8_text, with_overrides
from .diagnostics import Diagnostic, counted, format_all, has_errors, os_problem, shown_path
from .load import DOCUMENTS, source_kind
from .cache import cache_folder
from .pipeline import build, check, exported, formatted, imported, read_back_otherwise
from .parse.summaries import SUMMARIES, beside, read_summaries, write_summaries
from .progress import START, Progress, Stages, process_started
from .render.parallel import default_jobs
from .write import replace_file, write_files

USAGE, FAILED, OK = 2, 1, 0

DESCRIPTION = """\
Build and check static sites for truth-maintenance belief networks.

A SOURCE is a folder of belief documents (one Markdown file per belief, see
docs/belief-format.md) or a ftl-reasons network.json export. Without SOURCE, the
`source` option of `plugins: - beliefs:` in ./mkdocs.yml is used, else ./beliefs.
"""

EPILOG = """\
examples:
  belief-site build                       build the site from ./beliefs into ./site
  belief-site serve --port 0              build, serve on localhost, rebuild and reload on change
  belief-site check                       check ./beliefs (or the configured source)
  belief-site check --strict --format github   fail on warnings; GitHub annotations
  belief-site fmt --check                 exit 1 if any derived content is stale
  belief-site import network.json -o beliefs
  belief-site export -o network.json
"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="belief-site", description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"belief-site {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    commands: dict[str, argparse.ArgumentParser] = {}
    parser.set_defaults(commands=commands)  # main: an unknown option is the command's usage error

    def command(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        commands[name] = sub.add_parser(name, help=help_text, description=description,
                                        formatter_class=argparse.RawDescriptionHelpFormatter)
        return commands[name]

    def quiet(p: argparse.ArgumentParser, what: str = "print only problems") -> None:
        p.add_argument("--quiet", "-q", action="store_true", help=what)

    def site_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--base-url", metavar="URL", type=url_text,
                       help="absolute URL the site is published at (overrides site_url)")
        p.add_argument("--visible-to", metavar="TAGS", help="comma-separated tags: publish only beliefs whose "
                       "access_tags (over their antecedents) are all among them")
        p.add_argument("--no-search", dest="search", action="store_false", default=None,
                       help="build without the search index (very large networks, offline CI)")

    def jobs_flag(p: argparse.ArgumentParser) -> None:
        p.add_argument("--jobs", "-j", type=positive_integer, metavar="N", default=None,
                       help="processes rendering belief pages (default: one per core; output is the same)")

    def source_args(p: argparse.ArgumentParser) -> None:
        p.add_argument("source", nargs="?", metavar="SOURCE",
                       help="documents folder or network.json (default: from mkdocs.yml, else beliefs/)")
        p.add_argument("--config", metavar="FILE", help="site configuration (default: ./mkdocs.yml)")

    p = command("check", "report every problem in a belief network",
                "Read every belief, recompute every truth value, and report each problem as\n"
                "`path:line: CODE message`. Exit 0 when clean, 1 on errors (or on warnings\n"
                "with --strict), 2 on usage errors.")
    source_args(p)
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--format", choices=("text", "json", "github"), default="text",
                   help="text (default), json, or github workflow annotations")
    quiet(p, "print only the diagnostics")
    p.add_argument("--base", metavar="REV", help="also fail (E410) when a belief id of REV (a git "
                   "revision, git:REV[:PATH], a folder or a network.json) is gone and no belief "
                   "lists it in `aliases`: published links must not break")

    p = command("fmt", "refresh derived content in belief documents",
                "Rewrite the derived content each document already has (status line, item tags\n"
                "and echoed claims, dependents, counts) from the computed network. Nothing\n"
                "else changes; a second run changes nothing. While `check` finds errors, fmt\n"
                "changes nothing and exits 1.")
    source_args(p)
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 and list the files that would change")
    p.add_argument("--diff", action="store_true",
                   help="change nothing; print what would change as a unified diff (with --check: exit 1 too)")
    quiet(p, "print only problems and the files changed")

    p = command("import", "turn a network.json or beliefs.md into belief documents",
                "Write one document per belief (plus _project.yaml) into DIR. Existing files are\n"
                "never replaced without --force. beliefs.md is lossy: each loss is reported.")
    p.add_argument("file", metavar="FILE", help="network.json or beliefs.md")
    p.add_argument("-o", "--output", metavar="DIR", required=True, help="documents folder to write")
    p.add_argument("--force", action="store_true", help="replace existing files")
    quiet(p)

    p = command("build", "build the static site",
                "Check the network, then render every page, diagram, badge and export into DIR\n"
                "(default site/). Everything is written into a temporary folder first, so a failed\n"
                "build leaves the previous site untouched: a cold build swaps the new site in (a\n"
                "process of its own then removes the old one, beside DIR as .DIR.old-..., and the\n"
                "build does not wait for it); an incremental one (the default, when the cache\n"
                "allows) renders only the pages that show a changed belief and then renames them\n"
                "into DIR, keeping the others (or, when it keeps under 70% of the pages, hard-links\n"
                "them into the new folder and swaps that in; files the last build did not write\n"
                "then go, as after a cold build).\n"
                "Settings come from mkdocs.yml; while it has errors, nothing is built.")
    source_args(p)
    p.add_argument("-o", "--output", metavar="DIR", default=None, help="output folder (default: site/)")
    site_flags(p)
    p.add_argument("--strict", action="store_true", help="treat warnings as errors")
    p.add_argument("--keep-going", action="store_true", help="leave out files with errors and build the rest")
    p.add_argument("--diff-base", metavar="REV", help="add changes/ (what changed since REV: a git "
                   "revision, git:REV[:PATH], a folder or a network.json) and mark changed beliefs")
    jobs_flag(p)
    cached = p.add_mutually_exclusive_group()
    cached.add_argument("--cache-dir", metavar="DIR", default=None,
                        help="incremental build cache (default: .belief-site-cache/ beside mkdocs.yml); "
                        "unchanged belief pages are kept from the previous site, not rendered, and "
                        "unchanged documents are not parsed again (nor read, when their files are as the "
                        "last build found them)")
    cached.add_argument("--no-cache", action="store_true", help="a cold build: render everything, "
                        "neither read nor write the cache")
    p.add_argument("--profile", action="store_true",
                   help="print the seconds each stage took, from the process's start")
    quiet(p)

    p = command("serve", "build, serve on localhost and rebuild on every change",
                "Build the site, serve it on http://127.0.0.1:PORT/ (or --host ADDR), watch the\n"
                "sources, the config and the templates, rebuild on change and reload open browsers.\n"
                "A broken belief shows its diagnostic in the terminal and in the page; the server\n"
                "keeps running.")
    source_args(p)
    p.add_argument("--port", type=int, default=8000, help="port to listen on (default 8000; 0 picks a free one)")
    p.add_argument("--host", default="127.0.0.1", metavar="ADDR",
                   help="address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every "
                        "interface, as inside a container whose port is forwarded)")
    site_flags(p)
    jobs_flag(p)

    p = command("diff", "what a change does to the network: edits, renames and status flips",
                "Compare two versions of a network (folders, network.json files or git:REV[:PATH])\n"
                "and report beliefs added, removed, edited and renamed, and every status flip with\n"
                "its cause and the path of justifications that carries it.")
    review.add_arguments(p)

    p = command("export", "write the evaluated network as network.json",
                "Write the network with computed truth values as a ftl-reasons network.json.")
    source_args(p)
    p.add_argument("-o", "--output", metavar="FILE", required=True, help="file to write ('-' for stdout)")
    quiet(p)
    return parser


def _source(args: argparse.Namespace) -> tuple[Path, int, list[Diagnostic]]:
    """(source, panel limit, config problems) from arguments and mkdocs.yml."""
    config, problems = load_config(args.config)
    source = Path(args.source) if args.source else config.source_path()
    return source, config.panel_max_items, problems


def _report(diagnostics, fmt: str = "text") -> None:
    if diagnostics or fmt == "json":  # an empty JSON report is `[]`, still valid JSON
        print(format_all(diagnostics, fmt), file=sys.stderr if fmt == "text" else sys.stdout)


def _summary(diagnostics, count: int) -> str:
    errors = sum(d.severity == "error" for d in diagnostics)
    warnings = len(diagnostics) - errors
    return ", ".join(counted(n, word) for n, word in ((count, "belief"), (errors, "error"), (warnings, "warning")))


def _missing(source: Path, problems: list[Diagnostic]) -> bool:
    """Say so and return True when the source does not exist (a usage error), after the
    configuration's problems: a configuration that cannot be read names no source."""
    if source.exists():
        return False
    _report(problems)
    print(f"belief-site: source {source} not found (pass a documents folder or a network.json)",
          file=sys.stderr)
    return True


def cmd_check(args: argparse.Namespace) -> int:
    source, limit, problems = _source(args)
    if _missing(source, problems):
        return USAGE
    checked = check(source, limit)
    found = [*problems, *checked.diagnostics]
    if args.base:
        from .diff import read_side, side_of, vanished
        base = read_side(args.base, source, limit=limit)
        unreadable = [d for d in base.diagnostics if d.code == "E802"]
        if unreadable:
            _report(unreadable)
            return USAGE
        _report([d for d in base.diagnostics if d.code == "W607"])  # said, not counted: no id can vanish
        found += vanished(base, side_of(str(source), checked.evaluation, checked.diagnostics))
    _report(found, args.format)
    if args.format == "text" and not args.quiet:
        print(_summary(found, len(checked.parsed.network.beliefs)), file=sys.stderr)
    return FAILED if has_errors(found, args.strict) else OK


def cmd_fmt(args: argparse.Namespace) -> int:
    source, _, problems = _source(args)
    if _missing(source, problems):
        return USAGE
    if source_kind(source) != DOCUMENTS:
        print(f"belief-site: fmt works on a documents folder, not {source}", file=sys.stderr)
        return USAGE
    checked = check(source)
    errors = [d for d in checked.diagnostics if d.severity == "error"]
    _report([*problems, *errors])
    if errors:  # a left-out item or file would change what the others compute: nothing is written
        print("belief-site: nothing changed: fix the errors above first", file=sys.stderr)
        return FAILED
    changes = formatted(checked)
    dry = args.check or args.diff
    for path, old, new in changes:
        if args.diff:
            sys.stdout.writelines(_unified(path, old, new))
        else:
            print(f"{'would reformat' if dry else 'reformatted'} {shown_path(path)}")
        if not dry:
            replace_file(path, new)
    if not args.quiet:
        how = "; `belief-site fmt --diff` shows how" if args.check and changes and not args.diff else ""
        print(f"{len(changes)} of {len(checked.parsed.documents)} documents "
              f"{'would change' if dry else 'changed'}{how}", file=sys.stderr)
    return FAILED if (args.check and changes) else OK


def _unified(path: Path, old: bytes, new: bytes) -> list[str]:
    """What fmt would change in one document, as `diff -u` prints it."""
    import difflib
    # Lines end at "\n" only, as for diff and patch (str.splitlines also ends them at U+2028...)
    before, after = (re.findall(r"[^\n]*\n|[^\n]+$", b.decode("utf-8", "replace")) for b in (old, new))
    name = shown_path(path)
    a, b = (name, name) if path.is_absolute() else (f"a/{name}", f"b/{name}")  # as git and patch -p1
    lines = list(difflib.unified_diff(before, after, a, b))
    return [line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines]


REFUSED_SHOWN = 5
"""Files in the way listed one by one by `import` (a second import of 1,000 beliefs would list 1,001),
and beliefs an export computes otherwise read back."""


def cmd_import(args: argparse.Namespace) -> int:
    source = Path(args.file)
    if not source.is_file():
        print(f"belief-site: {source} is not a file", file=sys.stderr)
        return USAGE
    checked = check(source)
    summaries, problems = {}, []
    if source.suffix == ".json":  # network.json has no summary field: they may be beside it
        summaries, problems = read_summaries(beside(source), checked.parsed.network.beliefs)
    found = [*checked.diagnostics, *problems]
    _report(found)
    if has_errors(found):
        print("belief-site: nothing written: fix the errors above first", file=sys.stderr)
        return FAILED
    out = Path(args.output)
    try:
        files = imported(checked, out, summaries)
    except RecursionError:  # values nested hundreds deep: the YAML writer recurses per level
        print(f"belief-site: {source} holds values nested too deeply to write as documents; nothing written",
              file=sys.stderr)
        return FAILED
    refused = write_files(files, args.force)
    if refused:
        shown = refused if len(refused) <= REFUSED_SHOWN else refused[:REFUSED_SHOWN - 1]
        _report([*(replace(d, hint="") for d in shown[:-1]), shown[-1]])  # the hint once
        if len(shown) < len(refused):
            print(f"belief-site: {len(refused)} of the {len(files)} files to write are in the way "
                  f"({len(refused) - len(shown)} not listed)", file=sys.stderr)
        print(f"belief-site: nothing written to {out}", file=sys.stderr)
        return FAILED
    if not args.quiet:
        read = f" (with {counted(len(summaries), 'summary', 'summaries')} from {beside(source)})" if summaries else ""
        print(f"wrote {len(files) - 1} belief documents and _project.yaml to {out}{read}", file=sys.stderr)
    return OK


def cmd_export(args: argparse.Namespace) -> int:
    source, limit, problems = _source(args)
    if _missing(source, problems):
        return USAGE
    checked = check(source, limit)
    found = [*problems, *checked.diagnostics]
    _report(found)
    if has_errors(found):
        print("belief-site: nothing written: fix the errors above first", file=sys.stderr)
        return FAILED
    data, summaries = exported(checked)
    out = Path(args.output)
    # Summaries go beside a file, never beside stdout, a pipe or a device (-o /dev/null).
    sidecar = None if args.output == "-" or (out.exists() and not out.is_file()) else beside(out)
    if args.output == "-":
        sys.stdout.write(data.decode("utf-8") + "\n")
    else:
        replace_file(out, data)
    told = counted(len(summaries), "summary", "summaries")
    if sidecar is not None and (summaries or sidecar.exists()):  # an old one would give import stale ones
        replace_file(sidecar, write_summaries(summaries))
    elif summaries:  # never dropped without a word
        print(f"belief-site: {told} left out: network.json has no summary field (export to a file to get "
              f"{SUMMARIES} beside it)", file=sys.stderr)
    otherwise = read_back_otherwise(checked)
    if otherwise:  # never changed without a word
        shown = ", ".join(f"{i} {was} -> {then}" for i, was, then in otherwise[:REFUSED_SHOWN])
        more = f" and {len(otherwise) - REFUSED_SHOWN} more" if len(otherwise) > REFUSED_SHOWN else ""
        print(f"belief-site: network.json has no field for the status a document assumes of a belief outside "
              f"the network (W401 above): read back, {counted(len(otherwise), 'belief')} would be computed otherwise: "
              f"{shown}{more}", file=sys.stderr)
    if not args.quiet and args.output != "-":
        kept = f" and {told} to {sidecar}" if summaries and sidecar else ""
        print(f"wrote {counted(len(checked.parsed.network.beliefs), 'belief')} to {out}{kept}", file=sys.stderr)
    return OK


def positive_integer(text: str) -> int:
    """argparse type: an integer of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, not {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, not {value}")
    return value


def cmd_build(args: argparse.Namespace) -> int:
    config, problems = load_config(args.config)
    config = with_overrides(config, **flag_overrides(args))
    source = Path(args.source) if args.source else config.source_path()
    if _missing(source, problems):
        return USAGE
    out = Path(args.output) if args.output else Path("site")
    if has_errors(problems):  # a site built without them might publish what visible_to hides, say
        _report(problems)
        print(f"belief-site: nothing built: fix the configuration first; {out} was left as it was",
              file=sys.stderr)
        return FAILED
    if args.source:  # a SOURCE argument is relative to the working folder, not to mkdocs.yml
        base = Path(config.config_path).parent if config.config_path else Path(".")
        # As given where that is the same (diagnostics then name files as `check` does).
        same = source.is_absolute() or os.path.abspath(base) == os.path.abspath(".")
        config = with_overrides(config, source=str(source if same else source.resolve()))
    progress = Progress(sys.stderr, "rendering beliefs")
    started, stages = time.perf_counter(), Stages(None if args.quiet else progress.phase)
    if args.started is not None:  # the console script: its time counts from the process's start
        stages.add(START, started - args.started)
        started = args.started
    try:
        built = build(config, out, keep_going=args.keep_going, strict=args.strict,
                      diff_base=args.diff_base, jobs=args.jobs or default_jobs(),
                      cache=None if args.no_cache else cache_folder(config, args.cache_dir),
                      stages=stages, progress=None if args.quiet else progress,
                      waiting=lambda pid: print(f"belief-site: waiting for another build using the cache "
                                                f"folder (pid {pid})", file=sys.stderr))
    finally:
        progress.close()
    found = [*problems, *built.diagnostics]
    _report(found)
    if args.profile:
        print(stages.report(), file=sys.stderr)
    if not built.written:
        print(f"belief-site: build failed; {out} was left as it was", file=sys.stderr)
        # E802 here: --diff-base names no revision, folder or file (a usage error, as for check --base)
        return USAGE if any(d.code == "E802" for d in built.diagnostics) else FAILED
    if not args.quiet:
        total = len(built.checked.parsed.network.beliefs)
        count = counted(total, "belief") if built.published is None else f"{built.published} of {total} beliefs"
        reused = f", {counted(built.reused, 'unchanged belief page')} kept" if built.reused else ""
        reused += f", {built.unparsed} unchanged documents not parsed again" if built.unparsed else ""
        reused += f" ({built.unread} not read)" if built.unread else ""
        # Directory URLs (`belief/x/`) need a web server; file:// opens only index.html files.
        opened = f"open {out / 'index.html'}, or " if not config.use_directory_urls else ""
        print(f"built {count} ({built.files} files{reused}) into {out} in "
              f"{time.perf_counter() - started:.1f} s; {opened}read it with `belief-site serve` or any web "
              f"server (python3 -m http.server -d {out})", file=sys.stderr)
    return FAILED if has_errors(found, args.strict) and not args.keep_going else OK


def cmd_serve(args: argparse.Namespace) -> int:
    from . import serve  # here: its HTTP server (http.server, ssl, email: 0.02 s) is for this command only
    return serve.run(args)


def cmd_diff(args: argparse.Namespace) -> int:
    return review.run(args)


COMMANDS = {"serve": cmd_serve, "diff": cmd_diff, "build": cmd_build, "check": cmd_check, "fmt": cmd_fmt, "import": cmd_import, "export": cmd_export}


def main(argv: list[str] | None = None, started: float | None = None) -> int:
    """Entry point of the `belief-site` console script; `started`: when its process started
    (progress.process_started), which `build` counts its time from."""
    for stream in (sys.stdout, sys.stderr):  # a path that is not UTF-8 is printed, never a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = _parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the command's own usage for its options (argparse would print the top level's)
        given = list(sys.argv[1:] if argv is None else map(str, argv))
        before = given.index(args.command) if args.command in given else len(given)
        blamed = parser if any(u in given[:before] for u in unknown) else args.commands[args.command]
        blamed.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.started = started
    try:
        return COMMANDS[args.command](args)
    except KeyboardInterrupt as exc:  # what was half written is gone (the old site stays)
        print(f"belief-site: stopped ({'SIGTERM' if isinstance(exc, Terminated) else 'Ctrl+C'})", file=sys.stderr)
        return 143 if isinstance(exc, Terminated) else 130
    except BrokenPipeError:
        return OK
    except OSError as exc:  # an output that cannot be written (a read-only or missing folder, a full disk)
        print(f"belief-site: {os_problem(exc)}", file=sys.stderr)
        return FAILED


class Terminated(KeyboardInterrupt):
    """SIGTERM (a cancelled CI job, `kill`): unwound as Ctrl+C is, so that a build's temporary
    folder goes instead of staying beside the site."""


def _terminated(signum: int, frame: object) -> NoReturn:
    raise Terminated()


def _unwind_on_sigterm() -> None:
    """Raise Terminated on SIGTERM, in the console script only: a program calling `main` keeps
    its own way of ending (serve has one; render workers go back to the default)."""
    if hasattr(signal, "SIGTERM") and sys.argv[1:2] != ["serve"]:
        signal.signal(signal.SIGTERM, _terminated)


def leave(code: int) -> NoReturn:
    """End the process with `code` once its output is flushed, without tearing down the heap:
    freeing a 10k build's objects one by one took 30 ms of a 1.2 s incremental build, and
    every file, child process and thread of the command is closed by the time it returns.
    Output that cannot be flushed (a full disk) fails the command, as Python's own exit
    would; a reader that went away (a closed pipe) does not. Under a tracer or a profiler
    (coverage, cProfile), which write their results at exit, Python exits as usual."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None or stream.closed:  # None: the process started with it closed
            continue
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away: nothing more can reach it
            pass
        except OSError as exc:  # a full disk, say: the output is cut short
            code = code or FAILED
            if stream is sys.stdout and sys.stderr is not None:
                try:
                    print(f"belief-site: cannot write the output: {exc.strerror or exc}", file=sys.stderr)
                except OSError:
                    pass
    if sys.gettrace() is not None or sys.getprofile() is not None:
        sys.exit(code)
    os._exit(code)


def console() -> NoReturn:
    """The `belief-site` console script (and `python -m site_builder.cli`)."""
    started = process_started()
    _unwind_on_sigterm()
    leave(main(started=started) or OK)


if __name__ == "__main__":
    console()
