"""Incremental builds: reuse the files of beliefs whose pages cannot have changed.

The cache folder (`--cache-dir`, default `.belief-site-cache/` beside mkdocs.yml) holds one
manifest of the last successful build:

- `salt`: a hash of everything that may change any page: the code, its libraries and the
  templates, the configuration, which beliefs are published and the network's structure
  (ids, justifications, nogoods); with a `templates` folder, every status too (its pages may
  show the site's IN/OUT counts). When it differs, every belief is rendered (a cold build).
- `ids` and `texts`: for each belief, a hash of its own content (claim, summary, metadata,
  declared status, retraction...) and what the evaluation says of it (`state`: IN or OUT,
  pinned, the supporting justification); `shown`: the same with a hash of what the files of
  other beliefs may show of it (its content with the claim cut to what they show and without
  its summary, source and dates, which only its own files show: `shown`).
- `reads`, `files`: for each belief, the beliefs its files read (their content or state:
  render.belief records the lookups, those of explain and impact panels included), as
  bytes: sorted indexes into `ids`, 4 bytes each (`_reads`), and the files it wrote;
  `site`: the site's other files. Bytes, not numbers: 10,000 beliefs read 500,000 ids, which
  took 0.1 s to load, check and save as JSON numbers, and a string of them 30 ms to check.
- `out` and `marker`: the folder it wrote and the identity of its marker file, which every
  build replaces: a site written since by anything else is never trusted.

The manifest (MANIFEST: marshal bytes) is sealed with a CRC-32 of the rest: a damaged or
edited manifest gives a cold build (a wrong index in `reads` would otherwise keep a page
that shows a changed belief, and be saved again). Its fields are still checked, so that even
one edited and sealed again never stops a build with a traceback.

With an equal salt, a belief is rendered again only when its own content or state changed,
or a belief it read changed what other beliefs' files show of it or its state (a status
flip renders the pages that show or compute from a flipped belief, not every page; a claim
edit past the 200 characters other pages echo, or of a summary, source or date, renders the
belief's own files only);
otherwise its files are kept: left in place when the build writes into the folder
the last one wrote (write.update_site), hard-linked from it into a new folder otherwise (a
build into another folder, or a CLI build that keeps under 70% of the pages:
pipeline._swap_is_quicker). Listings, exports and the search bundle are always rebuilt,
the first two from the rows of the last build whose beliefs did not change (content or
state), nor did the beliefs the rows show or compute from (`Rows`).
Diagrams laid out by Graphviz (drawn before the pages, outside the recorded reads) turn
reuse off. The result is the same site a cold build writes (tests/test_scale.py). A build
holds the folder's `lock` (`locked`) from reading the manifest to saving the next one. The
folder also holds the last search bundle (SEARCH_BUNDLE), the parsed documents
(documents_cache.py), the rows of the listings and exports and the values of the structure
they use (`Rows`, `Rows.whole`), the compiled templates (`Rows.compiled_templates`) and the
last evaluation (`kept_evaluation`), all taken on trust only while the folder's OWNER file
vouches that a build made the folder here (`vouched`).
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import marshal
import os
import stat
import sys
import zipfile
import zlib
from array import array
from contextlib import contextmanager
from functools import cache, cached_property, partial
from importlib.util import find_spec
from itertools import accumulate
from operator import attrgetter
from dataclasses import dataclass, field, fields, replace
from pathlib import Path, PurePath
from typing import Callable, Iterable, Iterator, Mapping

import jinja2
import jinja2.bccache

try:
    import fcntl
except ImportError:  # not POSIX: builds sharing a cache are not serialised
    fcntl = None  # type: ignore[assignment]

from . import __version__
from .config import SiteConfig
from .evaluate import Evaluation, as_data, from_data, inputs
from .model import Belief, Justification, Network, Nogood
from .render import OutputFile, RenderContext
from .render.belief import Outputs
from .render.pages import templates_dir
from .render.views import claim_shown_elsewhere
from .write import MARKER, all_safe_relative, remove_tree, replace_file, safe_relative

__all__ = ["Cache", "Reuse", "Rows", "Saved", "DEFAULT_FOLDER", "MANIFEST", "ROWS", "SEARCH_BUNDLE", "cache_folder",
           "code_digest", "digest", "folder_digest", "keep_evaluation", "kept_evaluation", "locked", "vouched"]

DEFAULT_FOLDER = ".belief-site-cache"
MANIFEST = "manifest.marshal"
"""The last build's manifest (`Cache`): sealed as the rows are (`_sealed`), a line of FORMAT,
then marshal bytes, which load and save 3x quicker than JSON (10k beliefs: 6 MB, 0.02 s a
build). Earlier versions kept it as JSON in RETIRED_MANIFEST, removed by the next save."""
RETIRED_MANIFEST = "manifest.json"
LOCK = "lock"
EVALUATION = "evaluation.marshal"
"""The last build's evaluation (`keep_evaluation`)."""
SEARCH_BUNDLE = "search-bundle.zip"
"""The last search bundle, with the key of the records it indexes (render.search)."""
ROWS = "rows"
"""Folder of the rows of the site's own files, one file per part (render/rows.py)."""
RETIRED_ROWS = ("graph_edges.whole", "graph_position.rows")
"""Files of rows/ that earlier versions kept (now in graph_structure.whole): removed when a
structural value is made (a new salt, as after any change of belief-site)."""
TEMPLATES = "templates"
"""Folder of the compiled templates (`Rows.compiled_templates`)."""
FORMAT = 6


def cache_folder(config: SiteConfig, explicit: str | None = None) -> Path:
    """`--cache-dir`, else `.belief-site-cache/` beside the config file (or here without one)."""
    if explicit:
        return Path(explicit)
    return (Path(config.config_path).parent if config.config_path else Path(".")) / DEFAULT_FOLDER


@contextmanager
def locked(folder: Path, waiting: Callable[[str], None] | None = None) -> Iterator[None]:
    """Hold the cache folder for one build. A second build sharing it waits (told through
    `waiting`, with the holder's pid): it would read a manifest the first one is replacing,
    and both would update the same site. A POSIX record lock (lockf), not flock: forked
    render workers do not inherit it, so it ends with this process even when killed."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / LOCK, "a+") as handle:
        if fcntl is None:
            _claim(folder)
            yield
            return
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EACCES, errno.EAGAIN):
                raise
            if waiting is not None:
                handle.seek(0)
                waiting(handle.read().strip() or "?")
            fcntl.lockf(handle, fcntl.LOCK_EX)
        try:
            handle.seek(0)
            handle.truncate()
            handle.write(f"{os.getpid()}\n")
            handle.flush()
            _claim(folder)
            yield
        finally:
            fcntl.lockf(handle, fcntl.LOCK_UN)


OWNER = "owner"
OWNER_ID = "owner.id"
"""The cache folder's identity: OWNER_ID holds the device, inode and change time of the
OWNER file (a plain file, one link). A checkout, copy or restore of the folder gives that
file another inode and change time (no tool can set the latter), so a cache folder committed
to a repository or copied from elsewhere is never trusted: its compiled templates are code,
and its manifest, rows and evaluation decide what pages show (a CRC only tells damage).
Renaming the folder keeps it. The documents' facts have their own stamp (documents_cache)."""
_TRUSTED = (MANIFEST, RETIRED_MANIFEST, EVALUATION, SEARCH_BUNDLE, ROWS, TEMPLATES)
"""What a build takes from the folder on trust: removed from a folder that is not vouched for."""
_CACHE_SIGNS = (OWNER, MANIFEST, EVALUATION, "documents.stamp")
"""Files only a belief-site cache folder holds: a folder with none that holds more than a new
one does (_NEW) is someone else's, and nothing in it is removed."""
_NEW = {LOCK, "documents.clock"}
"""What a build puts in a new cache folder before it holds it (documents_cache's clock probe)."""


def vouched(folder: Path) -> bool:
    """Whether `folder`'s owner file is the one a build made there (`_claim`)."""
    try:
        found = os.lstat(folder / OWNER)
        if not stat.S_ISREG(found.st_mode) or found.st_nlink != 1:
            return False
        return (folder / OWNER_ID).read_bytes() == _owner_id(found)
    except OSError:
        return False


def _owner_id(found: os.stat_result) -> bytes:
    return b"%d %d %d\n" % (found.st_dev, found.st_ino, found.st_ctime_ns)


def _claim(folder: Path) -> None:
    """Make the folder this machine's (the lock held): what it holds on trust goes unless the
    owner file vouches for it. OSError (the build goes on without a cache) for a folder that
    is not a belief-site cache, whose files are left alone, or one whose files do not go."""
    if vouched(folder):
        return
    names = set(os.listdir(folder))
    if not names <= _NEW and not names & set(_CACHE_SIGNS):
        raise OSError(errno.EEXIST, "it holds files but no belief-site cache (choose an empty or new folder)")
    for name in _TRUSTED:
        path = folder / name
        remove_tree(path) if path.is_dir() else path.unlink(missing_ok=True)  # remove_tree unlinks a link
    left = [name for name in _TRUSTED if os.path.lexists(folder / name)]
    if left:
        raise OSError(errno.EACCES, f"{left[0]} of a cache folder made elsewhere cannot be removed")
    (folder / OWNER).unlink(missing_ok=True)
    with open(folder / OWNER, "xb") as handle:  # a new inode
        handle.write(b"This cache folder was made here by belief-site build (owner.id names this file).\n")
    replace_file(folder / OWNER_ID, _owner_id(os.lstat(folder / OWNER)))


def digest(*parts: str | bytes) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part if isinstance(part, bytes) else part.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def folder_digest(folders: Iterable[Path]) -> str:
    """Every file under the folders, by relative path and content."""
    h = hashlib.blake2b(digest_size=16)
    for folder in folders:
        if not folder.is_dir():
            continue
        for relative, path in sorted(_files_under(str(folder))):
            h.update(os.fsencode("/".join(relative)) + b"\0" + Path(path).read_bytes() + b"\0")
    return h.hexdigest()


def _files_under(folder: str) -> list[tuple[tuple[str, ...], str]]:
    """(relative path as parts, path) of each file under `folder`, through linked folders as
    Jinja's loader opens templates through them (each real folder once: a loop of links ends),
    leaving out __pycache__."""
    found, seen = [], set()
    for root, folders, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:
            folders[:] = []
            continue
        seen.add(real)
        folders[:] = [f for f in folders if f != "__pycache__"]
        base = tuple(PurePath(os.path.relpath(root, folder)).parts) if root != folder else ()
        found += [((*base, name), os.path.join(root, name)) for name in names
                  if os.path.isfile(os.path.join(root, name))]
    return found


def salt(ctx: RenderContext, statuses: str, code: str) -> str:
    """What every page may depend on (see the module docstring); `statuses`: a hash of every
    belief's `state`, in the salt only with a templates folder; `code`: `code_digest()`."""
    config, ev = ctx.config, ctx.evaluation
    templates = [templates_dir()]
    if config.templates:
        base = Path(config.config_path).parent if config.config_path else Path(".")
        templates.insert(0, base / config.templates)
    network = ev.network
    structure = [(b.id, [_compared(j) for j in b.justifications]) for b in network.beliefs.values()]
    # The default theme shows the site's IN/OUT counts on its own pages only; a templates
    # folder may show them on every page (render.pages.belief_page_counts).
    everywhere = statuses if config.templates else ""
    return digest(code, folder_digest(templates), everywhere,
                  repr(_resolved(config)), repr(sorted(ctx.visible)), repr(sorted(ctx.documents.items())),
                  repr(sorted(ctx.marks.items())), repr(ctx.diff is not None),
                  _fingerprint(structure), _fingerprint([_compared(n) for n in network.nogoods]),
                  repr(network.meta), repr(network.repos))


def _resolved(config: SiteConfig) -> SiteConfig:
    """The config with its source and its own path resolved: no page shows how they were
    spelled, and `belief-site build beliefs` after `serve` (which resolves the source) or
    after a build given `./beliefs/` or the absolute path must keep the pages."""
    return replace(config, source=os.path.realpath(config.source_path()),
                   config_path=config.config_path and os.path.realpath(config.config_path))


def kept_evaluation(folder: Path, network: Network, limit: int) -> Evaluation | None:
    """The evaluation the last build kept in `folder` (`keep_evaluation`), when every input to
    it is this network's (evaluate.inputs: a claim or summary edit changes none), else None:
    a 10k network evaluates in 0.1 s, and its results load in 0.03. Read before the build
    holds the folder, so asked whether the folder is vouched for (`vouched`) first."""
    if not vouched(folder):
        return None
    data = _load_marshal(folder / EVALUATION, _evaluation_head(network, limit))
    if data is None:
        return None  # none, damaged, or of another network, code or limit
    try:
        return from_data(network, data)
    except (ValueError, TypeError, AttributeError, KeyError, IndexError):
        return None  # the CRC passed, yet not what `keep_evaluation` writes: not ours


def keep_evaluation(folder: Path, evaluation: Evaluation) -> None:
    """Keep the evaluation for the next build (`kept_evaluation`): marshal, as it holds only
    plain values, loads 4x quicker than JSON; sealed as the rows are (`_sealed`)."""
    _save_marshal(folder / EVALUATION, _evaluation_head(evaluation.network, evaluation.limit), as_data(evaluation))


def _evaluation_head(network: Network, limit: int) -> bytes:
    """The kept evaluation's first line: the format and a hash of the code, limit and inputs."""
    return f"{FORMAT} {digest(code_digest(), str(limit), _fingerprint(inputs(network)))}".encode("ascii")


def state(ev: Evaluation, belief_id: str) -> str:
    """What the evaluation says of one belief that a page may show: its status, whether it is
    pinned OUT, and which justification supports it (render.belief records who reads it)."""
    support = ev.supporting.get(belief_id)
    return f"{ev.value(belief_id)}:{'pinned' if ev.is_pinned(belief_id) else ''}:{'' if support is None else support}"


@cache
def code_digest() -> str:
    """belief-site's own code, its version, Python's and the installed libraries whose output
    lands in pages or parsed documents (once per process: the package's sources are read)."""
    return digest(str(FORMAT), __version__, sys.version, repr(_libraries()),
                  folder_digest([Path(__file__).parent]))


LIBRARIES = {"jinja2": "jinja2", "markupsafe": "markupsafe", "markdown_it": "markdown-it-py",
             "linkify_it": "linkify-it-py", "uc_micro": "uc-micro-py", "mdurl": "mdurl", "yaml": "pyyaml"}
"""Module -> distribution of each library whose output lands in pages or parsed documents."""


def _libraries() -> list[tuple]:
    """Where each library is installed, and the size and modification time of its package
    file: installing any version (pip writes every file anew) changes them. Their versions
    take importlib.metadata, whose import took 17 ms of every build: asked only for a
    library whose file is not on disk (imported from an archive, say)."""
    found: list[tuple] = []
    for module, distribution in LIBRARIES.items():
        try:
            origin = find_spec(module).origin  # type: ignore[union-attr]
        except (AttributeError, ImportError, ValueError):  # not installed
            found.append((module,))
            continue
        try:
            st = os.stat(origin)  # type: ignore[arg-type]
        except (OSError, TypeError):  # inside a zip file, or a namespace package
            found.append((module, _version(distribution)))
            continue
        found.append((module, origin, st.st_size, st.st_mtime_ns))
    return found


def _version(distribution: str) -> str:
    from importlib import metadata  # here only (see _libraries)
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""


def marker_identity(out: Path) -> list[int] | None:
    """The site marker's inode and modification time (None without one)."""
    try:
        st = (out / MARKER).stat()
    except (OSError, ValueError):  # ValueError: a NUL in a manifest's path
        return None
    return [st.st_ino, st.st_mtime_ns]


def _compared(item: Belief | Justification | Nogood) -> tuple:
    """A belief's, justification's or nogood's content: every field but where it was read
    (no page shows a line, and an edit above it moves every later line: a nogood's line
    moves with any line added to the nodes before it). The IN/OUT tags written before ids
    are content: they decide whether a justification citing an id outside the network holds."""
    values = _CONTENT[type(item)](item)
    if type(item) is not Belief:
        return values
    return (*values[:_JUSTIFICATIONS], [_CONTENT[Justification](j) for j in item.justifications],
            *values[_JUSTIFICATIONS + 1:])


_LOCATION = {"path", "line", "ante_lines", "out_lines"}
_NAMES = {kind: [f.name for f in fields(kind) if f.name not in _LOCATION] for kind in (Belief, Justification, Nogood)}
# attrgetter reads every field in one call: 10,000 beliefs' contents in 0.02 s, not 0.1.
_CONTENT = {kind: attrgetter(*names) for kind, names in _NAMES.items()}
_JUSTIFICATIONS = _NAMES[Belief].index("justifications")


def texts(ctx: RenderContext, known: Mapping[str, tuple[Belief, str]] | None = None) -> dict[str, str]:
    """id -> hash of the belief's own content (`_compared`); `known`: id -> (a Belief, its
    hash) of an earlier build in this process, taken for the very same Belief object (a
    network.json node read as before keeps it: parse.network_json.NodesRead)."""
    beliefs = ctx.evaluation.network.beliefs
    if not known:
        return {i: digest(_fingerprint(_compared(b))) for i, b in beliefs.items()}
    return {i: found[1] if (found := known.get(i)) is not None and found[0] is b else digest(_fingerprint(_compared(b)))
            for i, b in beliefs.items()}


def _fingerprint(value: object) -> bytes:
    """Bytes that tell one content from another: marshal's version 0, which writes no
    back-references and no interning flags, so equal values give equal bytes (10,000
    beliefs in 0.03 s, repr took 0.05), else repr (what marshal cannot write: a str subclass
    from a caller of the API, say)."""
    try:
        return b"m" + marshal.dumps(value, 0)
    except ValueError:
        return b"r" + repr(value).encode("utf-8", "surrogatepass")


_TEXT = _NAMES[Belief].index("text")
_OWN_ONLY = [_NAMES[Belief].index(name) for name in (
    "summary", "source", "source_url", "source_hash", "date", "created_at", "updated_at", "reviewed_at", "verified_at")]
"""Fields only the belief's own files show (render.views.belief_page, exports.records): no view
of another belief reads them. Not retracted_at: it pins the belief (evaluate.truth)."""


def shown(ctx: RenderContext, contents: Mapping[str, str], old: dict, salt_: str) -> dict[str, str]:
    """id -> hash of what the files of other beliefs may show of it: its content (`_compared`)
    with the claim as they show it (render.views.claim_shown_elsewhere), without the fields
    only its own files show (`_OWN_ONLY`: summary, source, dates). Taken from the last
    manifest `old` for a belief whose content hash (`contents`) it holds, when it was made
    by this code for this salt (`salt_`): only an edit changes it, and most builds edit few."""
    carried: dict[str, tuple[str, str]] = {}
    if old.get("salt") == salt_ and type(old.get("shown")) is list and type(old.get("texts")) is list \
            and type(old.get("ids")) is list and len(old["ids"]) == len(old["texts"]) == len(old["shown"]):
        carried = {i: (t.partition(":")[0], h.partition(":")[0]) for i, t, h in zip(old["ids"], old["texts"], old["shown"])
                   if type(i) is str and type(t) is str and type(h) is str}
    beliefs = ctx.evaluation.network.beliefs
    found = {}
    for i, content in contents.items():
        before = carried.get(i)
        found[i] = before[1] if before is not None and before[0] == content else _shown(beliefs[i])
    return found


def _shown(belief: Belief) -> str:
    values = list(_compared(belief))
    values[_TEXT] = claim_shown_elsewhere(belief)
    for k in _OWN_ONLY:
        values[k] = ""
    return digest(_fingerprint(values))


_INDEX = "I"
"""The array type of a belief's reads in the manifest: unsigned indexes into its ids."""
_SIZE = array(_INDEX).itemsize


def _reads(indexes: Iterable[int]) -> bytes:
    """A belief's reads as the manifest keeps them: sorted indexes into its ids, _SIZE bytes each."""
    return array(_INDEX, sorted(indexes)).tobytes()


def _valid_reads(reads: list, count: int) -> bool:
    """Whether every belief's reads in the manifest (None, or `_reads` bytes) are whole
    indexes, the last (the largest: saved sorted) below `count`: `_reader_of` finds an index
    only where a whole one starts. One that is not bytes raises TypeError."""
    for r in reads:
        if r is None:
            continue
        if type(r) is not bytes:
            raise TypeError("a belief's reads are not bytes")
        if len(r) % _SIZE or r and int.from_bytes(r[-_SIZE:], sys.byteorder) >= count:
            return False
    return True


def _reader_of(changed: set[int]) -> Callable[[bytes], bool]:
    """Whether a belief's reads name one of the `changed` indexes: a search for the bytes of
    each of a few (an edit: 3 ms for 10,000 beliefs), else each index."""
    if len(changed) > 16:
        return lambda reads: not changed.isdisjoint(array(_INDEX, reads))
    wanted = [array(_INDEX, [k]).tobytes() for k in changed]
    return lambda reads: any(_names(reads, w) for w in wanted)


def _names(reads: bytes, index: bytes) -> bool:
    """Whether `index` (one index's bytes) is one of the indexes in `reads`, not bytes that
    straddle two of them."""
    at = reads.find(index)
    while at % _SIZE:  # -1 % _SIZE is not 0 either: checked below
        if at < 0:
            return False
        at = reads.find(index, at + 1)
    return at >= 0


@dataclass(frozen=True)
class Reuse:
    """What a build may take from the previous site."""

    origin: Path
    """The previous site's folder (the output folder, or `serve`'s previous build)."""
    files: dict[str, list[str]]
    """id -> the paths of its files, for every belief whose files are unchanged."""
    previous: frozenset[str]
    """Every file the previous build wrote (to remove what this one no longer writes)."""


@dataclass(frozen=True)
class Saved:
    """A manifest as this process wrote it, for its next build (serve's build process): while
    the file is the one written (inode, size, modification time), it is taken from memory,
    neither read nor checked again (0.07 s of a 10k claim edit)."""

    identity: tuple[int, int, int]
    manifest: dict
    files: frozenset[str]
    """Every file it lists (`_site_files`)."""


def _sealed(rest: bytes) -> bytes:
    """`rest` after a line with its CRC-32, which `_unsealed` checks (5 ms for 10 MB)."""
    return b"%d\n" % zlib.crc32(rest) + rest


def _unsealed(path: Path) -> tuple[bytes, int] | None:
    """The file at `path` and where what `_sealed` gave it starts, or None when it is missing
    or damaged. Not cut out: rows files hold tens of MB, and a copy costs 0.7 ms a MB."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    start = data.find(b"\n") + 1
    if not start or data[:start - 1] != b"%d" % zlib.crc32(memoryview(data)[start:]):
        return None
    return data, start


def _line(data: bytes, start: int) -> tuple[bytes, int]:
    """The line of `data` from `start` (without its newline), and where the next one starts."""
    end = data.find(b"\n", start)
    return (data[start:], len(data)) if end < 0 else (data[start:end], end + 1)


def _save_marshal(path: Path, head: bytes, value: object) -> None:
    """`value` as marshal bytes after a line of `head`, sealed (`_sealed`); ValueError when
    marshal cannot write it."""
    replace_file(path, _sealed(head + b"\n" + marshal.dumps(value)))


def _load_marshal(path: Path, head: bytes) -> object:
    """What `_save_marshal` kept at `path` under `head`, or None: none, damaged or edited (the
    seal), another head, or bytes marshal refuses (too deep, cut, a bad code object: it
    raises SystemError and MemoryError too)."""
    found = _unsealed(path)
    if found is None:
        return None
    line, start = _line(*found)
    if line != head:
        return None
    try:
        return marshal.loads(memoryview(found[0])[start:])
    except Exception:  # not one we wrote
        return None


_MANIFEST_HEAD = b"%d" % FORMAT


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


@dataclass
class Cache:
    """The manifest of the last build in `folder`, and what this build adds to the next one.

    The manifest lists ids once (`ids`); each belief's reads are indexes into that list,
    which keeps it small and quick to load (about 5 MB for 10,000 beliefs)."""

    folder: Path
    previous: dict = field(default_factory=dict)
    salt: str = ""
    code: str = ""
    """`code_digest()`: the compiled templates are kept for this code only."""
    contents: dict[str, str] = field(default_factory=dict)
    """id -> the hash of its content alone (the function `texts`)."""
    texts: dict[str, str] = field(default_factory=dict)
    """id -> its content hash and evaluation `state`: a belief changed when either did."""
    shown: dict[str, str] = field(default_factory=dict)
    """id -> the hash of what other beliefs' files may show of it (the function `shown`) and
    its `state`: the pages that read a belief are made again when either changed."""
    beliefs: dict[str, tuple[list[str], frozenset[str]]] = field(default_factory=dict)
    """id -> (its files, the ids its files read), for each belief this build rendered."""
    kept: dict[str, tuple[list[str], bytes]] = field(default_factory=dict)
    """id -> (its files, its reads as the manifest's bytes of indexes into the previous
    `ids`), for each belief kept: carried over as they are."""
    search: tuple[str, list[OutputFile]] | None = None
    """This build's search bundle and its key, kept by `save` for the next build."""
    saved: Saved | None = None
    """The manifest `previous` is, as this process saved it (not checked again); after
    `save`, this build's."""

    @classmethod
    def open(cls, folder: Path, saved: Saved | None = None) -> "Cache":
        """The cache in `folder` (empty when missing or unreadable: a cold build); `saved`: the
        manifest this process saved last, taken while the file is the one it wrote."""
        if saved is not None and saved.identity == _identity(folder / MANIFEST):
            return cls(folder, saved.manifest, saved=saved)
        previous = _load_marshal(folder / MANIFEST, _MANIFEST_HEAD)
        if not isinstance(previous, dict) or previous.get("format") != FORMAT:
            previous = {}
        return cls(folder, previous)

    def reusable(self, ctx: RenderContext, known: Mapping[str, tuple[Belief, str]] | None = None) -> Reuse | None:
        """What the previous site offers this build (None: render everything); `known`: see `texts`."""
        ev = ctx.evaluation
        states = {i: state(ev, i) for i in ev.network.beliefs}
        statuses = digest(*states.values())
        self.code = code_digest()
        self.salt, self.contents = salt(ctx, statuses, self.code), texts(ctx, known)
        self.texts = {i: f"{h}:{states[i]}" for i, h in self.contents.items()}
        old = self.previous
        self.shown = {i: f"{h}:{states[i]}" for i, h in shown(ctx, self.contents, old, self.salt).items()}
        if old.get("salt") != self.salt or ctx.diagrams or not isinstance(old.get("out"), str):
            return None
        origin = Path(old["out"])
        if not _marked(origin, old):  # rewritten since, or gone
            return None
        try:
            return self._unchanged(ctx, origin, old)
        except (KeyError, IndexError, TypeError, ValueError):  # not a manifest of ours
            self.kept.clear()
            return None

    def _unchanged(self, ctx: RenderContext, origin: Path, old: dict) -> Reuse:
        ids, texts, seen = old["ids"], old["texts"], old["shown"]
        if ids != sorted(self.texts) or not len(ids) == len(texts) == len(seen):
            raise ValueError("the manifest's ids are not this network's")  # the salt covers them
        changed = {k for k, i in enumerate(ids) if self.texts[i] != texts[k]}
        # Pages that read a changed belief are made again only when what they may show of it
        # changed: its state, or its content as other beliefs' files show it.
        read_changed = _reader_of({k for k in changed if self.shown[ids[k]] != seen[k]})
        # One this process saved is as it made it; the files are checked with the site's (_site_files).
        if self.saved is None and not _valid_reads(old["reads"], len(ids)):
            raise ValueError("reads that are not indexes into the manifest's ids")
        for k, belief_id in enumerate(ids):
            reads, paths = old["reads"][k], old["files"][k]
            if reads is not None and belief_id in ctx.visible and k not in changed and not read_changed(reads):
                if type(paths) is not list:
                    raise TypeError("a belief's files are not a list")
                self.kept[belief_id] = (paths, reads)
        return Reuse(origin, {i: paths for i, (paths, _) in self.kept.items()}, self._previous_files())

    def _previous_files(self) -> frozenset[str]:
        return self.saved.files if self.saved is not None else _site_files(self.previous)

    def previous_files(self, out: Path) -> frozenset[str] | None:
        """Every file the last build wrote, when it wrote them into `out` and the folder is as
        it left them (else None): a build that renders everything may still update that
        folder file by file rather than replace it (serve: its pages go in before its search
        bundle, write.update_site)."""
        old = self.previous
        if not isinstance(old.get("out"), str) or os.path.abspath(old["out"]) != os.path.abspath(out):
            return None
        if not _marked(out, old):
            return None
        try:
            return self._previous_files()
        except (KeyError, TypeError, ValueError):  # not a manifest of ours
            return None

    def search_bundle(self, key: str) -> list[OutputFile] | None:
        """The search bundle an earlier build kept under `key`, or None (none kept, another
        key, or a damaged or foreign file)."""
        try:
            with zipfile.ZipFile(self.folder / SEARCH_BUNDLE) as saved:
                if saved.read("key") != key.encode("ascii"):
                    return None
                names = [n for n in saved.namelist() if n != "key"]
                if not all(n.startswith("pagefind/") and safe_relative(n) for n in names):
                    return None  # never write outside the bundle's folder
                return [OutputFile(n, saved.read(n)) for n in names]
        except Exception:  # any damage costs a re-index, never the build (zipfile raises
            return None  # NotImplementedError, RuntimeError and zlib.error too)

    def keep_search_bundle(self, key: str, files: list[OutputFile]) -> None:
        """Keep this build's search bundle (written by `save`, with the manifest)."""
        self.search = (key, files)

    def rendered(self, belief_id: str, outputs: Outputs | None) -> None:
        """Note what a rendered belief's files read (None: reused, already noted)."""
        if outputs is not None:
            self.beliefs[belief_id] = ([f.path for f in outputs.files], outputs.reads)

    def save(self, out: Path, paths: Iterable[str]) -> None:
        """Keep this build's manifest (after the site in `out`, of these files, was written)."""
        ids = sorted(self.texts)
        index = {i: k for k, i in enumerate(ids)}
        # Beliefs are kept only when the manifest's ids are these (`_unchanged`): the indexes hold.
        files, reads = [], []
        for belief_id in ids:
            if belief_id in self.kept:
                entry, read = self.kept[belief_id]
            elif belief_id in self.beliefs:
                entry, seen = self.beliefs[belief_id]
                read = _reads(index[r] for r in seen if r in index)
            else:
                entry, read = None, None
            files.append(entry)
            reads.append(read)
        belief_files = {p for entry in files if entry for p in entry}
        manifest = {
            "format": FORMAT, "salt": self.salt, "out": os.path.abspath(out),
            "marker": marker_identity(out), "ids": ids,
            "texts": [self.texts[i] for i in ids], "shown": [self.shown[i] for i in ids],
            "reads": reads, "files": files,
            "site": sorted(set(paths) - belief_files)}
        path = self.folder / MANIFEST
        try:
            _save_marshal(path, _MANIFEST_HEAD, manifest)  # a lone surrogate passes
        except ValueError:  # a str subclass from a caller of the API, say: the next build is a cold one
            path.unlink(missing_ok=True)
            self.saved = None
            return
        try:
            (self.folder / RETIRED_MANIFEST).unlink(missing_ok=True)
        except OSError:  # never read again all the same
            pass
        identity = _identity(path)
        self.saved = None if identity is None else Saved(identity, manifest, frozenset(manifest["site"]).union(belief_files))
        if self.search is not None:
            key, files = self.search
            packed = io.BytesIO()
            with zipfile.ZipFile(packed, "w", zipfile.ZIP_STORED) as bundle:
                bundle.writestr("key", key)
                for f in files:
                    bundle.writestr(f.path, f.data)
            replace_file(self.folder / SEARCH_BUNDLE, packed.getvalue())


def _marked(out: Path, old: dict) -> bool:
    """Whether `out` holds the marker the manifest names (a folder without one, mid-update,
    matches no manifest, even one that says `"marker": null`)."""
    marker = old.get("marker")
    return isinstance(marker, list) and marker_identity(out) == marker


def _site_files(old: dict) -> frozenset[str]:
    """Every file a manifest lists, checked: each one a path inside the site."""
    if type(old["site"]) is not list or type(old["files"]) is not list or \
            not all(f is None or type(f) is list for f in old["files"]):
        raise TypeError("the site's files are not lists")
    previous = frozenset(old["site"]).union(*(f for f in old["files"] if f))
    if not all_safe_relative(previous) or MARKER in previous:  # a path not a string: TypeError
        raise ValueError("a path outside the site")  # never delete or link outside it
    return previous


@dataclass(frozen=True)
class Rows:
    """The rows of the site's own files kept in `folder`/rows/ (render/rows.py), for a build
    of this salt and these beliefs' contents and states (`Cache.salt`, `Cache.texts`)."""

    folder: Path
    salt: str
    texts: dict[str, str]
    code: str = ""
    """`code_digest()` (Cache.code)."""

    def part(self, name: str) -> "_RowPart":
        return _RowPart(self.folder / ROWS / f"{name}.rows", self.salt, self.texts)

    def whole(self, name: str, make: Callable[[], bytes]) -> bytes:
        """A value of the structure, which the salt alone decides (render/rows.py `structural`):
        the last build's, kept in `<name>.whole` after a line of its format and salt, else
        made and kept."""
        path = self.folder / ROWS / f"{name}.whole"
        head = json.dumps({"format": FORMAT, "salt": self.salt}).encode("ascii")
        kept = _unsealed(path)
        if kept is not None:
            line, rest = _line(*kept)
            if line == head:
                return kept[0][rest:]
        value = make()
        try:
            replace_file(path, _sealed(head + b"\n" + value))
            for retired in RETIRED_ROWS:  # never read again
                (self.folder / ROWS / retired).unlink(missing_ok=True)
        except OSError:
            pass  # it only saves time
        return value

    def compiled_templates(self) -> jinja2.BytecodeCache | None:
        """Where Jinja keeps the templates it compiled: every worker compiled them again, 35 ms
        of a 10k claim edit. Jinja checks each template's source and Python's version, not
        its own version nor the environment's options (ours: code), so the folder is one per
        `code`, and another code's is removed. None when the folder cannot be made."""
        root = self.folder / TEMPLATES
        here = root / (self.code[:32] or "any")
        try:
            if not here.is_dir():
                remove_tree(root)  # compiled for other code: never read again
                here.mkdir(parents=True, exist_ok=True)
        except OSError:
            return None
        return _CompiledTemplates(here)


class _CompiledTemplates(jinja2.BytecodeCache):
    """One file per template, sealed (`_sealed`): Jinja checks a compiled template's source,
    not the code it loads, so a damaged file that still loaded ran as a wrong page or a
    failing one. A damaged or unwritable file costs a compile, never the build."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _path(self, bucket: jinja2.bccache.Bucket) -> Path:
        return self.folder / f"{bucket.key}.code"  # the key is a hex digest

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        kept = _unsealed(self._path(bucket))
        if kept is None:
            return
        try:
            bucket.bytecode_from_string(kept[0][kept[1]:])
        except Exception:  # sealed, yet not what Jinja wrote (another Jinja's pickle, say)
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            replace_file(self._path(bucket), _sealed(bucket.bytecode_to_string()))  # workers may race
        except OSError:  # a full disk, say
            pass


class _RowPart:
    """One part's rows in `<part>.rows`: a line with the CRC-32 of the rest, a line of JSON,
    {"format", "salt", "ids", "contents": [content hash and state per id], "ends": [the
    byte where each row ends], "sep"}, then the rows as UTF-8, `sep` between them (a lone
    surrogate of a bad claim kept as is). Rows as JSON strings took 0.2 s of a 10k claim
    edit's worker time to decode: their HTML is dense in quotes and non-ASCII text. The rows
    stay bytes: `joined` gives bytes an export writes as they are (decoding 10 MB of records
    and encoding them again took 25 ms; the CRC tells a damaged file in 5). A file of
    another salt, or damaged, keeps nothing.

    The rows are written back only when more than one in REWRITE_SHARE was made: after a
    claim edit, encoding every row again cost more than making the one that changed, which
    the next build makes again instead (its content hash tells it from the kept one)."""

    REWRITE_SHARE = 64

    def __init__(self, path: Path, salt: str, texts: dict[str, str]) -> None:
        self._path, self._salt, self._texts = path, salt, texts
        self._ids: list[str] = []
        self._contents: list[str] = []
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._sep = ""
        self._load()
        self._new: dict[str, tuple[str, bytes]] = {}
        self._made = 0
        self._spliced = False
        self._new_sep = ""

    def _load(self) -> None:
        """The last build's rows (`self._rows`), and their ids, contents, starts and ends, in order."""
        self._rows = memoryview(b"")
        found = _unsealed(self._path)
        if found is None:
            return  # none, or damaged
        head, start = _line(*found)
        rows = memoryview(found[0])[start:]  # sliced and joined as they are: never copied whole
        try:
            data = json.loads(head)
            if not (type(data) is dict and data.get("format") == FORMAT and data.get("salt") == self._salt):
                return
            ids, contents, ends, sep = data["ids"], data["contents"], data["ends"], data["sep"]
        except (ValueError, RecursionError, KeyError, TypeError):
            return
        if not (type(ids) is list and type(contents) is list and type(ends) is list and type(sep) is str
                and len(ids) == len(contents) == len(ends) and all(type(i) is str for i in ids)
                and all(type(c) is str for c in contents) and all(type(e) is int for e in ends)):
            return
        between = sep.encode("utf-8", "surrogatepass")
        gap = len(between)
        starts = [0, *(end + gap for end in ends[:-1])]
        if not all(0 <= a <= b for a, b in zip(starts, ends)) or (ends and ends[-1] != len(rows)) \
                or gap and not all(rows[end:end + gap] == between for end in ends[:-1]):
            return
        self._rows, self._ids, self._contents, self._starts, self._ends, self._sep = \
            rows, ids, contents, starts, ends, sep

    @cached_property
    def _old(self) -> dict[str, tuple[str, int, int]]:
        """id -> (content hash, start, end) in `self._rows`: only for rows taken one by one."""
        return {i: (c, a, b) for i, c, a, b in zip(self._ids, self._contents, self._starts, self._ends)}

    def _key(self, belief_id: str, shows: Iterable[str] = (), own: bool = True, states: Iterable[str] = ()) -> str:
        """What a row is kept for (`Memo.row`): the texts of its belief, of those it shows, and
        the states of those it computes from."""
        texts = self._texts
        known = texts.get(belief_id, "")  # the salt covers which beliefs there are
        content = known if own else "=" if known else ""
        if shows:
            content += "".join([texts.get(i, "-") for i in shows])
        if states:  # a text is "content hash:state" (Cache.texts)
            content += "|" + ";".join([texts.get(i, ":-").partition(":")[2] for i in states])
        return content

    def _made_now(self, belief_id: str, make: Callable[[], str]) -> bytes:
        self._made += 1
        return make().encode("utf-8", "surrogatepass")

    def _take(self, belief_id: str, content: str, make: Callable[[], str]) -> bytes:
        found = self._old.get(belief_id)
        if found is not None and found[0] == content and content:
            value = bytes(self._rows[found[1]:found[2]])
        else:
            value = self._made_now(belief_id, make)
        self._new[belief_id] = (content, value)
        return value

    def row(self, belief_id: str, make: Callable[[], str], shows: Iterable[str] = (),
            own: bool = True, states: Iterable[str] = ()) -> str:
        return self._take(belief_id, self._key(belief_id, shows, own, states), make).decode("utf-8", "surrogatepass")

    def joined(self, belief_ids: list[str], make: Callable[[int], str], sep: str,
               states: list[tuple[str, ...]] | None = None, shows: list[tuple[str, ...]] | None = None) -> bytes:
        # The same beliefs in the same order, and few rows to make: the last build's text,
        # cut where those go (a 10k claim edit: no Python step per kept row).
        self._new_sep = sep
        texts = self._texts
        if states is None and shows is None:
            keys = [texts.get(i, "") for i in belief_ids]
        else:  # most rows show and compute from their own belief alone (premises)
            none = [()] * len(belief_ids)
            keys = [self._key(i, w, True, s) if w or s else texts.get(i, "")
                    for i, w, s in zip(belief_ids, shows or none, states or none)]
        if self._ids and sep == self._sep and belief_ids == self._ids:
            changed = [k for k, (key, was) in enumerate(zip(keys, self._contents)) if key != was or not key]
            if len(changed) * self.REWRITE_SHARE <= len(keys):
                pieces, at = [], 0
                for k in changed:
                    pieces += (self._rows[at:self._starts[k]], self._made_now(belief_ids[k], partial(make, k)))
                    at = self._ends[k]
                pieces.append(self._rows[at:])
                self._spliced = True
                return b"".join(pieces)
        rows = [self._take(i, key, partial(make, k)) for k, (i, key) in enumerate(zip(belief_ids, keys))]
        return sep.encode("utf-8", "surrogatepass").join(rows)

    def done(self) -> None:
        sep = self._new_sep.encode("utf-8", "surrogatepass")
        if self._spliced or not self._made or self._ids and self._made * self.REWRITE_SHARE <= len(self._new):
            return
        rows = [value for _, value in self._new.values()]
        ends = [end + k * len(sep) for k, end in enumerate(accumulate(map(len, rows)))]
        blob = sep.join(rows)
        head = json.dumps({"format": FORMAT, "salt": self._salt, "ids": list(self._new),
                           "contents": [content for content, _ in self._new.values()],
                           "ends": ends, "sep": self._new_sep}, separators=(",", ":"))
        try:
            replace_file(self._path, _sealed(head.encode("utf-8") + b"\n" + blob))
            self._path.with_suffix(".json").unlink(missing_ok=True)  # the same rows as kept before format 2
        except OSError:
            pass  # the rows only save time; the next build makes them again
