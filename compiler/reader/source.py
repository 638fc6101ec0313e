"""Where a catalogue's bytes come from: a built folder or an http(s) base URL.

Only ``catalog.json`` is mutable; it is revalidated over HTTP with ``If-None-Match``.
Every other file is reached through a ref ``{"path", "sha256", "bytes"}`` and checked
against that hash before it is used; over HTTP verified files are kept in an on-disk
cache keyed by their sha256 (``$TOOLCAT_CACHE`` or ``~/.cache/toolcat``), so they are
fetched at most once. Requests ask for ``Accept-Encoding: gzip`` (static hosts and CDNs compress
JSON on the fly): a gzip body is inflated, bounded by the size its ref promised, and the hash is
checked on the inflated bytes. Timeouts and retries are bounded: a hanging or failing server
costs at most ``(retries + 1) * timeout`` plus a short backoff.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import posixpath
import threading
import time
import zlib
from pathlib import Path
from typing import Any

from compiler.reader.envelope import ReaderError

log = logging.getLogger(__name__)

ENTRY = "catalog.json"
#: The entry point is small; anything bigger than this is not a toolcat catalogue.
MAX_ENTRY_BYTES = 8 * 1024 * 1024
BACKOFF_SECONDS = 0.1
USER_AGENT = "toolcat-reader/1"


class SourceStats:
    """What a source has cost so far: network requests (file reads for a folder), cache hits, and bytes.

    ``bytes_downloaded`` is what crossed the wire (gzip-compressed when the server compressed it);
    ``bytes_decoded`` is the same files' size once inflated. A folder reads plain files: both are equal.
    ``round_trips`` counts the requests one after the other: the files of one :meth:`Source.fetch_many`
    are fetched concurrently and count once, so on a network with latency L an operation waits about
    ``round_trips * L``.
    """

    __slots__ = ("bytes_decoded", "bytes_downloaded", "cache_hits", "not_modified", "requests", "round_trips")

    def __init__(self) -> None:
        self.requests = 0
        self.round_trips = 0
        self.bytes_downloaded = 0
        self.bytes_decoded = 0
        self.cache_hits = 0
        self.not_modified = 0

    def count_file(self, size: int) -> None:
        """One plain file read on its own (a folder's reads)."""
        self.requests += 1
        self.round_trips += 1
        self.bytes_downloaded += size
        self.bytes_decoded += size

    def as_dict(self) -> dict[str, int]:
        """JSON-able copy."""
        return {"requests": self.requests, "round_trips": self.round_trips, "bytes_downloaded": self.bytes_downloaded,
                "bytes_decoded": self.bytes_decoded, "cache_hits": self.cache_hits, "not_modified": self.not_modified}


def default_cache_dir() -> Path:
    """``$TOOLCAT_CACHE`` or ``~/.cache/toolcat``."""
    env = os.environ.get("TOOLCAT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "toolcat"


def check_ref(ref: Any) -> tuple[str, str, int]:
    """Return ``(path, sha256, bytes)`` of a well-formed ref whose path stays inside the catalogue."""
    if not isinstance(ref, dict):
        raise ReaderError("INTEGRITY", f"expected a ref {{path, sha256, bytes}}, got {type(ref).__name__}",
                          hints=["The catalogue is malformed; rebuild it with `toolcat build`."])
    path, digest, size = ref.get("path"), ref.get("sha256"), ref.get("bytes")
    if (not isinstance(path, str) or not path or path.startswith("/") or "\\" in path
            or posixpath.normpath(path) != path or path.split("/", 1)[0] == ".."):
        raise ReaderError("INTEGRITY", f"ref path {path!r} is not a clean relative path inside the catalogue",
                          details={"ref": ref})
    if not isinstance(digest, str) or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ReaderError("INTEGRITY", f"ref to {path} has no valid sha256", details={"ref": ref})
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise ReaderError("INTEGRITY", f"ref to {path} has no valid byte count", details={"ref": ref})
    return path, digest, size


def verify(data: bytes, path: str, digest: str, size: int, where: str) -> bytes:
    """Raise INTEGRITY unless ``data`` has the size and sha256 its parent promised."""
    got = hashlib.sha256(data).hexdigest()
    if len(data) != size or got != digest:
        raise ReaderError(
            "INTEGRITY",
            f"{where} does not match the hash its parent holds (expected sha256 {digest[:16]}… and {size} bytes, "
            f"got {got[:16]}… and {len(data)} bytes); it was not used",
            details={"path": path, "expected_sha256": digest, "got_sha256": got,
                     "expected_bytes": size, "got_bytes": len(data)},
            hints=["The file was modified or truncated after the build, or a cache/CDN serves a stale copy.",
                   "Rebuild and redeploy the whole build folder; clear the reader cache if it persists."],
        )
    return data


class _CorruptBody(Exception):  # noqa: N818 - internal signal, retried like a truncated body
    """A compressed body that does not inflate (cut short in transit, or not gzip at all)."""


def wire_limit(limit: int) -> int:
    """The most bytes a response for a ``limit``-byte file may take on the wire (gzip can add a little)."""
    return limit + limit // 1000 + 1024


def decode_body(body: bytes, encoding: str, limit: int, url: str) -> bytes:
    """Inflate a ``Content-Encoding: gzip`` body, reading no more than ``limit`` + 1 decoded bytes.

    A body larger than ``limit`` once decoded is INTEGRITY (it cannot be the promised file, and a gzip
    bomb stops there); a gzip stream that does not inflate completely raises :class:`_CorruptBody`.
    """
    encoding = encoding.strip().lower()
    if encoding in ("", "identity"):
        data = body
    elif encoding in ("gzip", "x-gzip"):
        inflater = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        try:
            data = inflater.decompress(body, limit + 1)
        except zlib.error as exc:
            raise _CorruptBody(f"gzip body does not inflate ({exc})") from None
        if len(data) <= limit and not inflater.eof:
            raise _CorruptBody(f"gzip body ends early ({len(body)} bytes received)")
    else:
        raise ReaderError("UNAVAILABLE", f"{url} answered with Content-Encoding {encoding!r}, which the reader cannot decode",
                          details={"url": url, "content_encoding": encoding},
                          hints=["The reader asks for gzip or identity; configure the host to serve one of them."])
    if len(data) > limit:
        raise too_large(url, limit)
    return data


def too_large(url: str, limit: int) -> ReaderError:
    """INTEGRITY: a body longer than the file its ref promised."""
    return ReaderError("INTEGRITY", f"{url} is larger than expected ({limit} bytes); it was not used", details={"url": url})


class Source:
    """Bytes of one published catalogue."""

    location: str
    stats: SourceStats
    @property
    def concurrent(self) -> bool:
        """Whether :meth:`fetch_many` overlaps its requests (worth calling only then)."""
        return False

    def read_entry(self) -> bytes:
        """The current ``catalog.json``."""
        raise NotImplementedError

    def fetch(self, ref: dict[str, Any]) -> bytes:
        """The verified bytes a ref points to."""
        raise NotImplementedError

    def fetch_many(self, refs: list[dict[str, Any]]) -> list[bytes | ReaderError]:
        """The verified bytes of several refs (or the error each one met), in order; one after the other here."""
        out: list[bytes | ReaderError] = []
        for ref in refs:
            try:
                out.append(self.fetch(ref))
            except ReaderError as err:
                out.append(err)
        return out


class FolderSource(Source):
    """A build folder on disk; files are read directly (the reader keeps parsed ones in memory)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)
        self.stats = SourceStats()

    def read_entry(self) -> bytes:
        """Read ``catalog.json``; a missing folder or entry is UNAVAILABLE."""
        entry = self.root / ENTRY
        try:
            data = entry.read_bytes()
        except FileNotFoundError:
            raise ReaderError(
                "UNAVAILABLE", f"no catalogue at {self.root}: {entry} does not exist",
                hints=["Run `toolcat build` first, or pass the build folder (the one holding catalog.json)."],
            ) from None
        except OSError as exc:
            raise ReaderError("UNAVAILABLE", f"cannot read {entry}: {exc}") from None
        self.stats.count_file(len(data))
        return data

    def fetch(self, ref: dict[str, Any]) -> bytes:
        """Read and verify one immutable file."""
        path, digest, size = check_ref(ref)
        file = self.root / path
        try:
            data = file.read_bytes()
        except FileNotFoundError:
            raise ReaderError(
                "UNAVAILABLE", f"{file} is missing from the build folder",
                details={"path": path},
                hints=["The build folder is incomplete or an older build replaced it; rebuild, then reopen."],
            ) from None
        except OSError as exc:
            raise ReaderError("UNAVAILABLE", f"cannot read {file}: {exc}", details={"path": path}) from None
        self.stats.count_file(len(data))
        return verify(data, path, digest, size, str(file))


class HttpSource(Source):
    """An http(s) base URL (a static host or CDN), read with urllib and an on-disk cache."""

    def __init__(self, base_url: str, cache_dir: Path | None, timeout: float, retries: int, max_parallel: int = 8) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.location = self.base_url
        self.timeout = timeout
        self.retries = max(0, retries)
        self.max_parallel = max(1, max_parallel)
        self.stats = SourceStats()
        self._lock = threading.Lock()
        self.cache_dir = cache_dir
        key = hashlib.sha256(self.base_url.encode("utf-8")).hexdigest()[:24]
        self._entry_file = cache_dir / "entries" / f"{key}.json" if cache_dir else None

    # -- cache -------------------------------------------------------------------------
    def _object_file(self, digest: str) -> Path | None:
        return self.cache_dir / "objects" / digest[:2] / digest if self.cache_dir else None

    def _write_cache(self, file: Path, data: bytes) -> None:
        import tempfile  # noqa: PLC0415 - only when caching a download

        try:
            file.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=file.parent, prefix=".tmp-")
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            Path(tmp).replace(file)
        except OSError as exc:
            log.warning("reader cache %s is not writable (%s); continuing without caching", file.parent, exc)

    def _read_cached(self, digest: str, size: int) -> bytes | None:
        file = self._object_file(digest)
        if file is None:
            return None
        try:
            data = file.read_bytes()
        except OSError:
            return None
        if len(data) == size and hashlib.sha256(data).hexdigest() == digest:
            return data
        log.warning("cached file %s is corrupt; fetching it again", file)
        try:
            file.unlink()
        except OSError:
            log.debug("could not remove corrupt cache file %s", file)
        return None

    # -- network -------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        from urllib.parse import quote  # noqa: PLC0415 - keeps `import compiler.reader` fast

        return self.base_url + quote(path, safe="/")

    def _get(self, path: str, headers: dict[str, str], limit: int, *,
             batched: bool = False) -> tuple[int, bytes, dict[str, str]]:
        """GET with bounded timeout and retries; returns (status, decoded body, headers) for 2xx and 304.

        ``limit`` bounds the decoded body: a longer one (or one that inflates past it) is INTEGRITY.
        """
        import http.client  # noqa: PLC0415
        import urllib.error  # noqa: PLC0415
        import urllib.request  # noqa: PLC0415

        url = self._url(path)
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(BACKOFF_SECONDS * (2 ** (attempt - 1)))
            request = urllib.request.Request(  # noqa: S310 - http(s) checked at open
                url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", **headers})
            with self._lock:
                self.stats.requests += 1
                self.stats.round_trips += 0 if batched and not attempt else 1
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                    body = response.read(wire_limit(limit) + 1)
                    status = response.status
                    response_headers = {k.lower(): v for k, v in response.headers.items()}
                with self._lock:
                    self.stats.bytes_downloaded += len(body)
                if len(body) > wire_limit(limit):
                    raise too_large(url, limit)
                declared = response_headers.get("content-length")
                if declared is not None and declared.isdigit() and int(declared) != len(body):
                    last = f"truncated body ({len(body)} of {declared} bytes)"
                    continue
                body = decode_body(body, response_headers.get("content-encoding", ""), limit, url)
                with self._lock:
                    self.stats.bytes_decoded += len(body)
            except urllib.error.HTTPError as exc:
                if exc.code == 304:
                    return 304, b"", {k.lower(): v for k, v in exc.headers.items()}
                if exc.code >= 500 or exc.code == 429:
                    last = f"HTTP {exc.code}"
                    continue
                raise ReaderError(
                    "UNAVAILABLE", f"{url} answered HTTP {exc.code}" + (
                        " (not found)" if exc.code == 404 else ""),
                    details={"url": url, "status": exc.code},
                    hints=[("Check the base URL (it must be the folder holding catalog.json) and that the whole "
                            "build folder was deployed.")],
                ) from None
            except _CorruptBody as exc:
                last = str(exc)
                continue
            except (TimeoutError, http.client.IncompleteRead, http.client.HTTPException, OSError) as exc:
                last = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
                if isinstance(exc, http.client.IncompleteRead):
                    last = f"truncated body ({len(exc.partial)} bytes received)"
                continue
            else:
                return status, body, response_headers
        raise ReaderError(
            "UNAVAILABLE", f"could not fetch {url} after {self.retries + 1} attempt(s): {last}",
            details={"url": url, "attempts": self.retries + 1, "last_error": last, "timeout_s": self.timeout},
            hints=["The server is down, slow or dropping connections; retry later or raise timeout/retries."],
        )

    def read_entry(self) -> bytes:
        """Revalidate ``catalog.json`` with the cached ETag; a 304 reuses the cached copy."""
        cached: dict[str, Any] = {}
        if self._entry_file is not None:
            try:
                cached = json.loads(self._entry_file.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                cached = {}
        headers = {}
        etag, body_text = cached.get("etag"), cached.get("body")
        if isinstance(etag, str) and isinstance(body_text, str):
            headers["If-None-Match"] = etag
        status, body, response_headers = self._get(ENTRY, headers, MAX_ENTRY_BYTES)
        if status == 304 and isinstance(body_text, str):
            with self._lock:
                self.stats.not_modified += 1
            return body_text.encode("utf-8")
        if status == 304:  # a 304 we did not ask for: fetch unconditionally
            status, body, response_headers = self._get(ENTRY, {}, MAX_ENTRY_BYTES)
        new_etag = response_headers.get("etag")
        if self._entry_file is not None and new_etag:
            try:
                text = body.decode("utf-8")
            except UnicodeDecodeError:
                text = None
            if text is not None:
                self._write_cache(self._entry_file, json.dumps({"etag": new_etag, "body": text}).encode("utf-8"))
        return body

    def fetch(self, ref: dict[str, Any]) -> bytes:
        """The verified bytes of ``ref``: from the cache when present, else downloaded, checked, cached."""
        return self._fetch(ref, batched=False)

    @property
    def concurrent(self) -> bool:
        """True unless ``max_parallel`` is 1."""
        return self.max_parallel > 1

    def fetch_many(self, refs: list[dict[str, Any]]) -> list[bytes | ReaderError]:
        """Several refs at once: the ones not in the disk cache are downloaded concurrently (one round trip).

        At most ``max_parallel`` requests are in flight; each is bounded and retried as in :meth:`fetch`.
        """
        if len(refs) < 2 or self.max_parallel == 1:  # nothing to overlap
            return super().fetch_many(refs)
        from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - only for searches over HTTP

        def one(ref: dict[str, Any]) -> bytes | ReaderError:
            try:
                return self._fetch(ref, batched=True)
            except ReaderError as err:
                return err

        with self._lock:
            before = self.stats.requests
        with ThreadPoolExecutor(max_workers=min(self.max_parallel, len(refs))) as pool:
            out = list(pool.map(one, refs))
        with self._lock:
            if self.stats.requests > before:
                self.stats.round_trips += 1
        return out

    def _fetch(self, ref: dict[str, Any], *, batched: bool) -> bytes:
        path, digest, size = check_ref(ref)
        cached = self._read_cached(digest, size)
        if cached is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        _, body, _ = self._get(path, {}, size, batched=batched)
        data = verify(body, path, digest, size, self._url(path))
        file = self._object_file(digest)
        if file is not None:
            self._write_cache(file, data)
        return data


def open_source(path_or_url: str | Path, cache_dir: str | Path | None, timeout: float, retries: int,
                max_parallel: int = 8) -> Source:
    """A folder or http(s) source for ``path_or_url``; anything else is BAD_REQUEST."""
    text = str(path_or_url)
    if isinstance(path_or_url, str) and "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise ReaderError("BAD_REQUEST", f"unsupported URL scheme {scheme!r} in {text!r}",
                              hints=["Use a build folder path or an http(s):// base URL."])
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ReaderError("BAD_REQUEST", f"timeout must be a positive number of seconds, got {timeout!r}")
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        return HttpSource(text, cache, float(timeout), int(retries), max_parallel)
    root = Path(path_or_url)
    if root.name == ENTRY and root.is_file():
        root = root.parent
    return FolderSource(root)
