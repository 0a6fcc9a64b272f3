"""The only place belief ids become output paths and links (DESIGN "URLs").

Output paths are POSIX strings relative to the site root. Every link is relative, so a
site works under any sub-path (PR previews) and, with `use_directory_urls: false`, from
`file://`.
"""

from __future__ import annotations

from functools import lru_cache

from .ids import id_problem


@lru_cache(maxsize=1 << 17)  # five paths per belief and per listing row: validate each id once
def _segments(belief_id: str) -> str:
    problem = id_problem(belief_id)
    if problem:  # ids are validated in parse; this guards against traversal all the same
        raise ValueError(f"invalid id {belief_id!r}: {problem}")
    return "/".join(belief_id.split(":"))


def belief_dir(belief_id: str, prefix: str = "belief") -> str:
    """`belief/<id>/` (a namespaced `ns:local` -> `belief/ns/local/`)."""
    return f"{prefix}/{_segments(belief_id)}/"


def page_path(belief_id: str, prefix: str = "belief") -> str:
    """The belief page file."""
    return belief_dir(belief_id, prefix) + "index.html"


def json_path(belief_id: str, prefix: str = "belief") -> str:
    """The belief's JSON record (inside its folder: cannot collide with an id ending in .json)."""
    return belief_dir(belief_id, prefix) + "index.json"


def badge_path(belief_id: str, prefix: str = "belief", ext: str = "svg") -> str:
    """`badge.svg` or `badge.json` of a belief."""
    return belief_dir(belief_id, prefix) + f"badge.{ext}"


def relative_href(from_file: str, to_file: str, directory_urls: bool = True) -> str:
    """Relative link from one output file to another (`index.html` dropped for directory URLs)."""
    # Both paths are clean relative POSIX paths: a prefix comparison is enough (and much
    # cheaper than posixpath.relpath, which runs tens of thousands of times per build).
    source, target = from_file.split("/")[:-1], to_file.split("/")
    common = 0
    while common < len(source) and common < len(target) - 1 and source[common] == target[common]:
        common += 1
    link = "/".join([".."] * (len(source) - common) + target[common:])
    if directory_urls and (link == "index.html" or link.endswith("/index.html")):
        link = link[: -len("index.html")] or "./"
    return link


def site_url_for(site_url: str, path: str, directory_urls: bool = True) -> str:
    """Absolute URL of an output file under `site_url` (sitemap, badges, embeds)."""
    if directory_urls and path.endswith("index.html"):
        path = path[: -len("index.html")]
    return site_url.rstrip("/") + "/" + path
