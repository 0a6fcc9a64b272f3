"""`belief-site diff BASE HEAD`: what a change does to a belief network (issue 6)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `belief-site diff`."""
    parser.add_argument("base", metavar="BASE", help="documents folder, network.json, or git:REV[:PATH]")
    parser.add_argument("head", metavar="HEAD", help="documents folder, network.json, or git:REV[:PATH]")


def run(args: argparse.Namespace) -> int:
    """Print the diff; returns the exit code."""
    raise SystemExit("belief-site diff: not implemented yet")
