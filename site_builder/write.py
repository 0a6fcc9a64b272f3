"""The only module that writes files: new files refuse to replace existing ones unless forced."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Iterable

from .diagnostics import Diagnostic

__all__ = ["write_files", "replace_file"]


def write_files(files: Iterable[tuple[Path, bytes]], force: bool = False) -> list[Diagnostic]:
    """Write every file, or none when one exists and force is off (E801 per file)."""
    files = list(files)
    seen: set[Path] = set()
    problems = []
    for path, _ in files:
        if path in seen:
            problems.append(Diagnostic(str(path), 0, "E801", "two outputs for one path"))
        seen.add(path)
        if path.exists() and not force:
            problems.append(Diagnostic(str(path), 0, "E801", "file exists; not overwritten",
                                       "pass --force to replace existing files"))
    if problems:
        return problems
    for path, data in files:
        replace_file(path, data)
    return []


def replace_file(path: Path, data: bytes) -> None:
    """Write atomically: a temporary file beside the target, then rename over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        if path.exists():
            os.chmod(temp, path.stat().st_mode & 0o7777)
        else:
            os.chmod(temp, 0o644)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
