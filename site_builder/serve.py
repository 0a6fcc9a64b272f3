"""`belief-site serve`: build, serve on localhost, rebuild on change, reload browsers (issue 4)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `belief-site serve` (SOURCE and --config are added by the CLI)."""
    parser.add_argument("--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000)")


def run(args: argparse.Namespace) -> int:
    """Serve until interrupted; returns the exit code."""
    raise SystemExit("belief-site serve: not implemented yet")
