"""Static assets of the theme (stylesheet, scripts, vendored libraries with their licences)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

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
                    chosen[path.relative_to(folder).as_posix()] = path
    for name in sorted(chosen):
        yield OutputFile(f"assets/{name}", chosen[name].read_bytes())
