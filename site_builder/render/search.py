"""Search: a Pagefind index of the published beliefs, as files under `pagefind/` (DESIGN "search").

Records, not pages: each visible belief gives one record holding its id, claim and summary
(plain text), with `status` and `kind` as filters and id, status, kind and claim as metadata
for the result list. Indexing whole pages costs 1.0 GB and 8.9 s at 10k beliefs; records
keep the index small and the matches meaningful.

Pagefind's own Python wrapper polls its service once per 0.1 s for each message, so it needs
130 s for 1,296 records. This module speaks the same service protocol (base64 JSON messages,
each followed by a comma) to the binary that `pagefind[bin]` ships and collects the bundle in
memory; the build's writer, or the thread that fed Pagefind through the writer's sink
(`Indexing`), puts it in the site's folder.

Records reach Pagefind as tiny HTML files in a scratch folder (one `AddDir`) rather than as
one `AddRecord` message each: Pagefind looks each added record's URL up in a list of all
records so far, which makes `AddRecord` quadratic (gen-50k: 29 s of indexer CPU against
17 s). A file holds exactly its record (content in an inline body element, which gains no
sentence stop; meta and filters as elements; no empty meta value, which Pagefind would drop
from a page but keep from a record). Pagefind numbers pages in the order it walks the folder
and does not sort, so the files are created in the order that makes every folder list its
entries sorted. Where the listing order cannot be steered (ext4 lists by hash), or a URL
would not survive the trip through a file path, the records are sent one by one, in the same
order. Either way the bundle is the same, byte for byte (tests), and its URLs start with "/"
(the browser bundle joins them to its base).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import html
import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import threading
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Iterator, Mapping, Protocol

from ..checks import kind_of
from ..processes import owned_prefix, remove_left_by_dead
from . import OutputFile, RenderContext, Sink, stored
from .exports.records import one_line
from ..diagnostics import short

__all__ = ["SearchError", "SearchRecord", "enabled", "records", "index_files", "emit", "BUNDLE"]

BUNDLE = "pagefind"
"""Folder of the search bundle, relative to the site root."""

_ALLOCATOR = ("_RJEM_MALLOC_CONF", "thp:always,metadata_thp:always")
"""Pagefind's jemalloc, told to use transparent huge pages where the kernel allows them (as
with the common `madvise` setting); a setting of the user's own is kept. Pagefind frees and
touches again memory by the gigabyte: indexing gen-50k alone took 2.3 million page faults and
7.7 s of system time with small pages, 25,000 and 5.0 s with huge ones (wall 17.1 -> 14.5 s,
two runs each; at 10k no difference)."""

CLAIM_META_LIMIT = 300
"""Longest claim kept in a result's metadata (the full text stays searchable)."""

# The browser bundle needs these; Pagefind's three ready-made UIs and its highlight script
# (~400 KB) are left out: the theme has its own small result list (site.js).
_UNUSED = ("pagefind-ui.", "pagefind-modular-ui.", "pagefind-component-ui.", "pagefind-highlight.",
           "playground/")


class SearchError(RuntimeError):
    """The indexer is missing or failed; `hint` says what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True, slots=True)
class SearchRecord:
    """One belief as Pagefind indexes it."""

    url: str
    """Relative to the site root (the browser bundle prefixes the site's base path)."""
    content: str
    """What is searched: id, claim and summary, as plain text."""
    meta: Mapping[str, str] = field(default_factory=dict)
    filters: Mapping[str, list[str]] = field(default_factory=dict)


@lru_cache(maxsize=1)
def _parser():
    from .markup import _md
    return _md()


def plain_text(markdown: str) -> str:
    """The words of a claim or summary, without Markdown syntax or link targets."""
    if not any(c in markdown for c in "*_`[]<>#|~\\!&"):
        return one_line(markdown)  # most claims: no syntax at all, skip the parser
    words: list[str] = []
    for token in _parser().parse(markdown):
        for child in token.children or ():
            if child.type in ("text", "code_inline"):
                words.append(child.content)
            elif child.type in ("softbreak", "hardbreak"):
                words.append(" ")
        if token.type in ("code_block", "fence"):
            words.append(token.content)
        words.append(" ")
    return one_line("".join(words))


def records(ctx: RenderContext) -> list[SearchRecord]:
    """One record per visible belief, sorted by id (only id, claim and summary are searched)."""
    out = []
    for belief in ctx.shown():
        claim, summary = plain_text(belief.text), plain_text(belief.summary)
        status, kind = ctx.evaluation.value(belief.id), kind_of(belief)
        out.append(SearchRecord(
            url=ctx.href("index.html", ctx.page(belief.id)),
            content="\n".join(part for part in (belief.id, claim, summary) if part),
            # Pagefind drops an empty meta value read from a page, and keeps one sent as a record
            meta={"title": belief.id, "status": status, "kind": kind,
                  **({"claim": short(claim, CLAIM_META_LIMIT)} if claim else {})},
            filters={"status": [status], "kind": [kind]}))
    return out


def enabled(ctx: RenderContext) -> bool:
    """Search is built (and offered on the pages) unless switched off or nothing is published."""
    return ctx.config.search and bool(ctx.visible)


def _executable() -> str:
    try:
        from pagefind.service import get_executable
    except ImportError as exc:
        raise SearchError("the search indexer is not installed",
                          "pip install 'pagefind[bin]', or build with --no-search") from exc
    found = get_executable()
    if found is None:
        raise SearchError("the Pagefind binary was not found",
                          "pip install 'pagefind[bin]' (or set PAGEFIND_BINARY_PATH), or build with --no-search")
    return str(found)


def _encode(message_id: int, payload: Mapping[str, Any]) -> bytes:
    body = json.dumps({"message_id": message_id, "payload": payload}, ensure_ascii=False)
    return base64.b64encode(body.encode("utf-8")) + b","


class _Service:
    """One `pagefind --service` process; messages are answered by id, in any order."""

    def __init__(self, executable: str) -> None:
        self._log = tempfile.TemporaryFile()
        try:
            name, value = _ALLOCATOR
            self._process = subprocess.Popen([executable, "--service"], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=self._log,
                                             env={name: value, **os.environ})
        except OSError as exc:
            self._log.close()
            raise SearchError(f"cannot start the search indexer: {exc}",
                              "reinstall 'pagefind[bin]', or build with --no-search") from exc
        self._pending = bytearray()
        self._next_id = 0

    def exchange(self, payloads: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """Send every payload (from a writer thread) and return the responses in sending order."""
        messages = []
        for payload in payloads:
            self._next_id += 1
            messages.append(_encode(self._next_id, payload))
        first = self._next_id - len(messages) + 1
        failure: list[BaseException] = []

        def write() -> None:
            try:
                for message in messages:
                    self._process.stdin.write(message)
                self._process.stdin.flush()
            except (BrokenPipeError, OSError) as exc:  # the reader reports the end of output
                failure.append(exc)

        writer = threading.Thread(target=write, daemon=True)
        writer.start()
        answers: dict[int, dict[str, Any]] = {}
        while len(answers) < len(messages):
            response = self._read()
            message_id = response.get("message_id")
            payload = response.get("payload") or {}
            if payload.get("type") == "Error" or message_id is None:
                raise SearchError(f"the search indexer failed: {payload.get('message', payload)}")
            answers[message_id] = payload
        writer.join()
        return [answers[first + i] for i in range(len(messages))]

    def _read(self) -> dict[str, Any]:
        scanned = 0  # the bundle comes as one message of megabytes: never rescan or copy it whole
        while (end := self._pending.find(b",", scanned)) < 0:
            scanned = len(self._pending)
            chunk = self._process.stdout.read1(1 << 20)
            if not chunk:
                self._log.seek(0)
                detail = self._log.read().decode("utf-8", "replace").strip()[-500:]
                raise SearchError("the search indexer stopped unexpectedly" + (f": {detail}" if detail else ""))
            self._pending += chunk
        message = bytes(self._pending[:end])
        del self._pending[:end + 1]
        return json.loads(base64.b64decode(message))

    def kill(self) -> None:
        """End the indexer now; the thread waiting on it sees the end of its output."""
        self._process.kill()

    def close(self) -> None:
        try:
            self._process.stdin.close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process.stdout.close()
        self._log.close()


SCRATCH_PREFIX = "belief-site-search-"
"""Scratch folders are named `<prefix><pid>-<random>`: a killed build's folder is found and removed."""


def _page(record: SearchRecord) -> str:
    """The smallest HTML page Pagefind indexes as exactly this record."""
    meta = "".join(f'<span data-pagefind-meta="{html.escape(k)}">{html.escape(v)}</span>'
                   for k, v in record.meta.items())
    filters = "".join(f'<span data-pagefind-filter="{html.escape(k)}">{html.escape(v)}</span>'
                      for k, values in record.filters.items() for v in values)
    return (f'<!DOCTYPE html><html lang="en"><body><span data-pagefind-body>{html.escape(record.content)}'
            f"</span>{meta}{filters}</body></html>")


def _file_of(url: str) -> str:
    """Where a record's page goes so that Pagefind derives "/" + `url` from it."""
    parts = url.split("/")
    if url.startswith("/") or any(p in ("", ".", "..") for p in parts[:-1]):
        raise SearchError(f"cannot index the search record {url!r}: not a relative page URL")
    return url + "index.html" if url.endswith("/") else url


_PLAIN_FOLDER = re.compile(r"[a-z0-9._-]+")


def _walkable(url: str) -> bool:
    """Pagefind turns the file's path into exactly "/" + `url`: nothing to escape, and no
    "index.html" inside a folder name (Pagefind removes it wherever it stands)."""
    return all(_PLAIN_FOLDER.fullmatch(p) and "index.html" not in p for p in _file_of(url).split("/")[:-1])


def _walk_order(found: list[SearchRecord]) -> list[SearchRecord]:
    """The records in the order Pagefind walks their files when every folder lists its
    entries sorted: the page order of the bundle, whichever way the records are sent."""
    return sorted(found, key=lambda r: _file_of(r.url).split("/"))


def _scratch_parent(pages: list[str]) -> str | None:
    """/dev/shm when it has room for these pages twice over (writing and deleting tens of
    thousands of files in memory is 3x quicker than on disk), else the system's temporary folder."""
    try:
        room = os.statvfs("/dev/shm")
    except OSError:
        return None
    size = sum(4096 * (1 + len(page) * 4 // 4096) for page in pages)  # whole pages; UTF-8 <= 4 bytes
    fits = room.f_bavail * room.f_frsize > 2 * size and room.f_favail > 4 * len(pages)  # a file and a folder
    return "/dev/shm" if fits and os.access("/dev/shm", os.W_OK) else None


def _listing_direction(folder: str) -> int:
    """1 when this file system lists a folder in creation order, -1 in reverse, 0 neither."""
    probe = os.path.join(folder, "probe")
    os.mkdir(probe)
    names = [f"{i:02d}" for i in range(16)]
    for name in names:
        open(os.path.join(probe, name), "wb").close()
    listed = os.listdir(probe)
    shutil.rmtree(probe)
    return 1 if listed == names else -1 if listed == names[::-1] else 0


def _files_in_walk_order(ordered: list[SearchRecord], pages: list[str], folder: str,
                         created: list[tuple[Callable[[str], None], str]]) -> bool:
    """Write each record's page at `_file_of` its URL so that every folder lists its entries
    sorted (Pagefind numbers pages in the order it walks them, and does not sort); False when
    this file system's listing order cannot be steered that way. `created` gets each folder
    and file made, in order, with what removes it."""
    direction = _listing_direction(folder)
    if not direction:
        return False
    children: dict[str, list[str]] = {}
    for record, page in list(zip(ordered, pages))[::direction]:
        path = _file_of(record.url)
        parent, _, name = path.rpartition("/")
        made = folder
        for part in parent.split("/"):
            entries = children.setdefault(made, [])
            made = os.path.join(made, part)
            if made not in children:
                entries.append(part)
                children[made] = []
                os.mkdir(made)
                created.append((os.rmdir, made))
        children[made].append(name)
        created.append((os.unlink, os.path.join(folder, path)))
        with open(created[-1][1], "wb") as out:  # not text mode: half the time
            out.write(page.encode("utf-8"))
    return all(os.listdir(d) == sorted(names) for d, names in children.items() if len(names) > 1)


def _sent_as_files(service: "_Service", index_id: str, ordered: list[SearchRecord]) -> bool:
    """Add the records as files in one `AddDir`, where their URLs and the scratch folder
    allow it; False when they must be sent one by one instead."""
    if not all(_walkable(r.url) for r in ordered):
        return False
    pages = [_page(r) for r in ordered]
    parent = _scratch_parent(pages)
    remove_left_by_dead(parent or tempfile.gettempdir(), [SCRATCH_PREFIX])  # builds killed before they could
    folder, created = None, []
    try:
        folder = tempfile.mkdtemp(prefix=owned_prefix(SCRATCH_PREFIX), dir=parent)
        written = _files_in_walk_order(ordered, pages, folder, created)
    except OSError:  # no room or no rights: send the records themselves
        written = False
    try:
        if written:
            service.exchange([{"type": "AddDir", "index_id": index_id, "path": folder, "glob": "**/*.html"}])
        return written
    finally:
        if folder is not None:
            _remove_scratch(folder, created)


def _remove_scratch(folder: str, created: list[tuple[Callable[[str], None], str]]) -> None:
    """Remove the scratch folder: what was made in it, the latest first (a third of the
    time rmtree takes to find it all again), then whatever is left."""
    try:
        for remove, path in reversed(created):
            remove(path)
        os.rmdir(folder)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)


def _add_pages(service: "_Service", index_id: str, ordered: list[SearchRecord]) -> None:
    """Add the records to the index as pages in the walk order: from files in one `AddDir`
    where possible, else one `AddRecord` each (the same bundle, slower)."""
    if not _sent_as_files(service, index_id, ordered):
        service.exchange({"type": "AddRecord", "index_id": index_id, "url": "/" + r.url, "content": r.content,
                          "language": "en", "meta": dict(r.meta), "filters": dict(r.filters), "sort": None}
                         for r in ordered)


def index_files(found: list[SearchRecord], service: "_Service | None" = None) -> dict[str, bytes]:
    """The Pagefind bundle for these records: path inside `pagefind/` -> bytes."""
    service = service or _Service(_executable())
    try:
        ordered = _walk_order(found)
        (created,) = service.exchange([{"type": "NewIndex", "config": {
            "force_language": "en", "keep_index_url": not all(r.url.endswith("/") for r in found)}}])
        _add_pages(service, created["index_id"], ordered)
        (files,) = service.exchange([{"type": "GetFiles", "index_id": created["index_id"]}])
    finally:
        service.close()
    bundle = {f["path"]: base64.b64decode(f["content"]) for f in files["files"]}
    languages = json.loads(bundle.get("pagefind-entry.json", b"{}")).get("languages", {})
    indexed = sum(language.get("page_count", 0) for language in languages.values())
    if indexed != len(found):  # never publish an index that lost records
        raise SearchError(f"the search indexer indexed {indexed} of {len(found)} records")
    return bundle


# Determinism (DESIGN "output"): Pagefind 1.5 keeps filters in hash maps, so the order of the
# filters in `pagefind.<hash>.pf_meta` and of the values inside each `filter/<hash>.pf_filter`
# changes from run to run, and with it the file names that carry content hashes. The files
# are gzip(b"pagefind_dcd" + CBOR); we sort those lists, re-encode, and rename by our own
# content hash (the browser bundle finds every file through the names listed in the files
# above it, entry -> meta -> filter, and checks no hash).

_SIGNATURE = b"pagefind_dcd"


class _Unexpected(ValueError):
    """The bundle is not in the shape this module knows (another Pagefind version)."""


def _cbor_decode(data: bytes, at: int = 0) -> tuple[Any, int]:
    head = data[at]
    major, info = head >> 5, head & 31
    at += 1
    if info < 24:
        value = info
    elif info in (24, 25, 26, 27):
        size = 1 << (info - 24)
        value = int.from_bytes(data[at:at + size], "big")
        at += size
    else:
        raise _Unexpected(f"CBOR item {head:#x}")
    if major == 0:
        return value, at
    if major == 1:
        return -1 - value, at
    if major in (2, 3):
        raw = data[at:at + value]
        return (bytes(raw) if major == 2 else raw.decode("utf-8")), at + value
    if major == 4:
        items = []
        for _ in range(value):
            item, at = _cbor_decode(data, at)
            items.append(item)
        return items, at
    if major == 7 and info in (20, 21, 22):
        return {20: False, 21: True, 22: None}[info], at
    raise _Unexpected(f"CBOR item {head:#x}")


def _cbor_head(major: int, value: int) -> bytes:
    if value < 24:
        return bytes([major << 5 | value])
    for info, size, fmt in ((24, 1, ">B"), (25, 2, ">H"), (26, 4, ">I"), (27, 8, ">Q")):
        if value < 1 << (8 * size):
            return bytes([major << 5 | info]) + struct.pack(fmt, value)
    raise _Unexpected("integer too large")


def _cbor_encode(value: Any) -> bytes:
    if isinstance(value, bool) or value is None:
        return bytes([0xF4 if value is False else 0xF5 if value is True else 0xF6])
    if isinstance(value, int):
        return _cbor_head(0, value) if value >= 0 else _cbor_head(1, -1 - value)
    if isinstance(value, bytes):
        return _cbor_head(2, len(value)) + value
    if isinstance(value, str):
        raw = value.encode("utf-8")
        return _cbor_head(3, len(raw)) + raw
    if isinstance(value, list):
        return _cbor_head(4, len(value)) + b"".join(_cbor_encode(v) for v in value)
    raise _Unexpected(f"cannot encode {type(value).__name__}")


def _unpack(data: bytes) -> Any:
    raw = gzip.decompress(data)
    if not raw.startswith(_SIGNATURE):
        raise _Unexpected("no pagefind signature")
    value, end = _cbor_decode(raw, len(_SIGNATURE))
    if end != len(raw):
        raise _Unexpected("trailing bytes")
    return value


def _pack(value: Any) -> tuple[bytes, str]:
    """gzip bytes (no timestamp) and the hex digest of the uncompressed content."""
    raw = _SIGNATURE + _cbor_encode(value)
    return gzip.compress(raw, compresslevel=9, mtime=0), hashlib.sha256(raw).hexdigest()


def canonical(bundle: dict[str, bytes]) -> dict[str, bytes]:
    """The same bundle with its filter lists sorted and renamed by content (see above)."""
    out = dict(bundle)
    entry = json.loads(bundle["pagefind-entry.json"])
    renamed: dict[str, str] = {}
    for path in sorted(p for p in bundle if p.startswith("filter/") and p.endswith(".pf_filter")):
        name, values = _unpack(bundle[path])
        data, digest = _pack([name, sorted(values, key=lambda v: v[0])])
        language = path[len("filter/"):].split("_", 1)[0]
        new = f"{language}_{digest[:7]}"
        renamed[path[len("filter/"):-len(".pf_filter")]] = new
        del out[path]
        out[f"filter/{new}.pf_filter"] = data
    text = bundle["pagefind-entry.json"].decode("utf-8")
    for language, info in sorted(entry["languages"].items()):
        old = info["hash"]
        meta = _unpack(bundle[f"pagefind.{old}.pf_meta"])
        if len(meta) < 4 or not isinstance(meta[3], list):
            raise _Unexpected("meta without a filter list")
        meta[3] = sorted(([f[0], renamed.get(f[1], f[1]), *f[2:]] for f in meta[3]), key=lambda f: f[0])
        data, digest = _pack(meta)
        new = f"{language}_{digest[:10]}"
        del out[f"pagefind.{old}.pf_meta"]
        out[f"pagefind.{new}.pf_meta"] = data
        text = text.replace(f'"{old}"', f'"{new}"')
    out["pagefind-entry.json"] = text.encode("utf-8")
    return out


def _kept(path: str) -> bool:
    return not path.startswith(_UNUSED)


class SavedBundles(Protocol):
    """Where a build finds the last build's search bundle and leaves its own (cache.Cache)."""

    def search_bundle(self, key: str) -> list[OutputFile] | None: ...

    def keep_search_bundle(self, key: str, files: list[OutputFile]) -> None: ...


def _bundle_key(found: list[SearchRecord], executable: str) -> str:
    """What a bundle depends on: the records, this module and the Pagefind binary."""
    from .. import __version__
    binary = os.stat(executable)
    digest = hashlib.sha256(json.dumps([__version__, executable, binary.st_size, binary.st_mtime_ns]).encode())
    for r in found:
        digest.update(json.dumps([r.url, r.content, r.meta, r.filters], ensure_ascii=False,
                                 sort_keys=True).encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


class Indexing:
    """Pagefind building a site's bundle in the background (its own process, fed from a
    thread), while the pages render; `files()` waits for it and gives the bundle. With a
    cache, records identical to the last build's take its bundle instead (Pagefind's output
    is deterministic: the same records give the same bytes). With a `sink` (writing into the
    site's folder, as the workers do), the thread writes a new bundle as soon as it comes
    (in a CLI build, while the pages still render: written after them, its 10,000 files took
    0.4 s of a 10k build), and `files()` gives them as written."""

    def __init__(self, ctx: RenderContext, saved: SavedBundles | None = None,
                 sink: Sink | None = None) -> None:
        self._files: list[OutputFile] = []
        self._stored: list[OutputFile] | None = None
        self._failure: BaseException | None = None
        self._service, self._reused, self._keep, self._sink = None, None, None, sink
        self._abandoned = False
        found = records(ctx)
        executable = _executable()  # here: a missing indexer fails the build before any page is waited for
        if saved is not None:
            key = _bundle_key(found, executable)
            self._reused = saved.search_bundle(key)
            if self._reused is not None:
                return
            self._keep = lambda files: saved.keep_search_bundle(key, files)
        self._service = _Service(executable)
        self._thread = threading.Thread(target=self._run, args=(found,), daemon=True)
        self._thread.start()

    def _run(self, found: list[SearchRecord]) -> None:
        try:
            self._files = _bundle_files(index_files(found, self._service))
            if self._sink is not None and not self._abandoned:  # a failed build's folder goes
                self._stored = stored(self._files, self._sink)
        except BaseException as exc:  # reported by files(), in the build's thread
            self._failure = exc

    def abandon(self) -> None:
        """Stop the indexer (the build failed): no Pagefind process outlives its build."""
        if self._service is not None:
            self._abandoned = True
            self._service.kill()
            self._thread.join()

    def files(self) -> Iterator[OutputFile]:
        """`pagefind/…`, canonical (byte-identical across builds); written already (their
        data left out) when the thread had a sink."""
        if self._reused is not None:
            yield from self._reused
            return
        self._thread.join()
        if self._failure is not None:
            raise self._failure
        if self._keep is not None:
            self._keep(self._files)
        yield from self._files if self._stored is None else self._stored


def _bundle_files(bundle: dict[str, bytes]) -> list[OutputFile]:
    """The files of Pagefind's bundle that the site serves, canonical where the layout is known."""
    try:
        bundle = canonical(bundle)
    except (_Unexpected, KeyError, ValueError, IndexError, OSError):
        pass  # an unknown bundle layout still searches; only byte-identical rebuilds are lost
    return [OutputFile(f"{BUNDLE}/{path}", bundle[path]) for path in sorted(bundle) if _kept(path)]


def start(ctx: RenderContext, saved: SavedBundles | None = None,
          sink: Sink | None = None) -> Indexing | None:
    """Start indexing (None when the site is built without search); `saved`: the build's
    cache, which keeps the last bundle; `sink`: writes the bundle into the site's folder
    as soon as it comes (see Indexing)."""
    return Indexing(ctx, saved, sink) if enabled(ctx) else None


def emit(ctx: RenderContext) -> Iterator[OutputFile]:
    """`pagefind/…`: the search bundle (nothing when the site is built without search)."""
    # `--no-search` (SiteConfig.search=False), or an empty site (Pagefind refuses no records)
    indexing = start(ctx)
    if indexing is not None:
        yield from indexing.files()
