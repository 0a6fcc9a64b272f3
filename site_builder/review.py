"""`belief-site diff BASE [HEAD]`: what a change does to a belief network (issue 6).

A thin adapter: arguments -> `diff.read_side` (twice) -> `diff.compare` -> `diff.render`.
Exit codes: 0 the report was written, 1 with --exit-code when anything changed, 2 usage
errors (no such folder, file, revision or git). Errors inside the sources are printed
but do not fail the diff: `check` is the gate, the diff is a report.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import load_config, url_text
from .diagnostics import counted, format_all
from .diff.report import FORMATS
from .write import replace_file

USAGE, CHANGED, OK = 2, 1, 0


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `belief-site diff`."""
    parser.add_argument("base", metavar="BASE",
                        help="documents folder, network.json, or git:REV[:PATH] (a bare REV such as "
                             "origin/main works when no file has that name)")
    parser.add_argument("head", metavar="HEAD", nargs="?",
                        help="the same kinds of source (default: the configured source as it is "
                             "in the working tree)")
    parser.add_argument("--format", choices=FORMATS, default="text",
                        help="text (default), markdown (pull-request comment, job summary), or json")
    parser.add_argument("-o", "--output", metavar="FILE", help="write the report to FILE, not stdout")
    parser.add_argument("--config", metavar="FILE",
                        help="site configuration giving the default source (default: ./mkdocs.yml)")
    parser.add_argument("--site-url", metavar="URL", type=url_text,
                        help="markdown: link belief ids to their pages under URL (e.g. a preview)")
    parser.add_argument("--exit-code", action="store_true",
                        help="exit 1 when anything changed, 0 when nothing did (like git diff)")


def _errors(side) -> list:
    return [d for d in side.diagnostics if d.severity == "error"]


def run(args: argparse.Namespace) -> int:
    """Print (or write) the diff; returns the exit code."""
    from .diff import compare, read_side, render  # here: every other command parses its arguments too

    config, problems = load_config(args.config)
    if problems:
        print(format_all(problems, "text"), file=sys.stderr)
    default = config.source_path()
    specs = (args.base, args.head or str(default))
    sides = [read_side(spec, default, limit=config.panel_max_items) for spec in specs]
    usage = [d for side in sides for d in side.diagnostics if d.code == "E802"]
    if usage:
        print(format_all(usage, "text"), file=sys.stderr)
        return USAGE
    for side in sides:
        empty = [d for d in side.diagnostics if d.code == "W607"]
        if empty:
            print(format_all(empty, "text"), file=sys.stderr)
        errors = _errors(side)
        if errors:
            print(format_all(errors, "text"), file=sys.stderr)
            print(f"belief-site diff: {side.label} has {counted(len(errors), 'error')}; the diff covers the "
                  "beliefs that could be read (run `belief-site check`)", file=sys.stderr)
    diff = compare(*sides, limit=config.panel_max_items)
    report = render(diff, args.format, args.site_url, config.prefix)
    if args.output:
        replace_file(Path(args.output), report.encode("utf-8"))
    else:
        sys.stdout.write(report)
    return CHANGED if args.exit_code and not diff.is_empty else OK
