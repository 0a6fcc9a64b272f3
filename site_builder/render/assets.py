"""Static assets of the theme (stylesheet, scripts, vendored libraries with their licences)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

import jinja2

from . import OutputFile, RenderContext
from .pages import templates_dir


def _asset_folders(ctx: RenderContext) -> list[Path]:
    """Default assets first; a user templates folder's `assets/` overrides single files."""
    folders = [templates_dir() / "assets"]
    if ctx.config.templates:
        base = Path(ctx.config.config_path).parent if ctx.config.config_path else Path(".")
        folders.append(base / ctx.config.templates / "assets")
    return folders


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """`assets/<file>` for every file of the theme's assets folder (sorted, deterministic)."""
    chosen: dict[str, Path] = {}
    for folder in _asset_folders(ctx):
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.name.startswith("."):
                    _inside(path, folder)
                    chosen[path.relative_to(folder).as_posix()] = path
    for name in sorted(chosen):
        yield OutputFile(f"assets/{name}", chosen[name].read_bytes())


class OutsideTheme(jinja2.TemplateError):
    """An asset that is a link to a file outside its folder: publishing it could publish a
    key or /proc/self/environ (a pull request can change the templates folder). E805."""


def _inside(path: Path, folder: Path) -> None:
    real, home = os.path.realpath(path), os.path.join(os.path.realpath(folder), "")
    if not real.startswith(home):
        problem = OutsideTheme("a link to a file outside the assets folder (not followed)")
        problem.filename = str(path)  # type: ignore[attr-defined]
        raise problem
