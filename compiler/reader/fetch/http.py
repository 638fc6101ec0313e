"""The http(s) source: a catalogue on a static host or CDN, read through the transport and the disk cache.

``catalog.json`` is revalidated with ``If-None-Match``; every other file is fetched through its ref,
verified against its sha256 and kept in the disk cache by that hash, so it is fetched at most once.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
import threading
import time
from pathlib import Path
from typing import Any

from ...format.envelope import ReaderError
from ...format.refs import (
    ENTRY,
    MAX_ENTRY_BYTES,
    MAX_FILE_BYTES,
    check_pending,
    check_ref,
    is_sha256,
    promise_too_large,
    too_large,
    verify,
)
from .cache import DiskCache, clean_etag
from .folder import Source, SourceStats
from .transport import (
    READ_CHUNK,
    REDIRECT_HINT,
    USER_AGENT,
    BodyDecoder,
    CorruptBody,
    RedirectRefused,
    Retry,
    backoff,
    time_left,
    transport,
    wire_limit,
)

log = logging.getLogger(__name__)

#: The disk cache's name for a proven file: its page's root (sha256 hex) and its place in the page.
_PROVEN_KEY = re.compile(r"[0-9a-f]{64}-[0-9]{1,6}")
#: A cached entry record is small (url, etag, sha256, bytes).
_MAX_RECORD_BYTES = 4096


class HttpSource(Source):
    """An http(s) base URL (a static host or CDN), read with urllib and an on-disk cache."""

    def __init__(
        self,
        base_url: str,
        cache_dir: Path | None,
        timeout: float,
        retries: int,
        max_parallel: int = 8,
        *,
        max_file_bytes: int = MAX_FILE_BYTES,
    ) -> None:
        self.base_url = base_url if base_url.endswith("/") else base_url + "/"
        self.location = self.base_url
        self.timeout = timeout
        self.retries = max(0, retries)
        self.max_parallel = max(1, max_parallel)
        self.max_file_bytes = max_file_bytes
        self.stats = SourceStats()
        self._lock = threading.Lock()
        self.cache_dir = cache_dir
        self.cache = DiskCache(cache_dir) if cache_dir is not None else None
        self._entry_url = self._url(ENTRY)
        self._opener: Any = None  # built on the first request
        self._entry_record = hashlib.sha256(self._entry_url.encode("utf-8")).hexdigest() + ".json"

    # -- cache -------------------------------------------------------------------------
    @staticmethod
    def _object_parts(digest: str) -> tuple[str, ...]:
        return ("objects", digest[:2])

    def _read_cached(self, digest: str, size: int) -> bytes | None:
        if self.cache is None or not is_sha256(digest):
            return None
        parts = self._object_parts(digest)
        data = self.cache.read(parts, digest, size, max(size, 0))
        if data is None:
            return None
        if hashlib.sha256(data).hexdigest() == digest:
            return data
        log.warning("cached file %s is corrupt; fetching it again", digest)
        self.cache.remove(parts, digest)
        return None

    def _write_cached(self, digest: str, data: bytes) -> None:
        if self.cache is not None and is_sha256(digest):
            self.cache.write(self._object_parts(digest), digest, data)

    # A proven file (toolcat-vectors-10's row files, -11's row groups and cluster shards, toolcat-index-4's doc
    # shards) has no sha256 of its own in the build: it is kept under its page's root and its place, and checked by
    # its Merkle path each time it is read.
    def recall_proven(self, key: str, max_bytes: int) -> bytes | None:
        """A proven file kept in the disk cache under ``key`` (``<root>-<place>``), for the caller to check."""
        if self.cache is None or not _PROVEN_KEY.fullmatch(key):
            return None
        data = self.cache.read(("proven", key[:2]), key, None, max(max_bytes, 0))
        if data is not None:
            with self._lock:
                self.stats.cache_hits += 1
        return data

    def keep_proven(self, key: str, data: bytes) -> None:
        """Keep a proven file the caller checked."""
        if self.cache is not None and _PROVEN_KEY.fullmatch(key):
            self.cache.write(("proven", key[:2]), key, data)

    def forget_proven(self, key: str) -> None:
        """Drop a kept proven file whose path did not lead to its root."""
        if self.cache is not None and _PROVEN_KEY.fullmatch(key):
            log.warning("cached proven file %s does not lead to its root; fetching it again", key)
            self.cache.remove(("proven", key[:2]), key)

    def _cached_entry(self) -> tuple[str, bytes] | None:
        """The cached ``(etag, catalog.json)`` of this URL, when its record and body both verify."""
        if self.cache is None:
            return None
        raw = self.cache.read(("entries",), self._entry_record, None, _MAX_RECORD_BYTES)
        if raw is None:
            return None
        try:
            record = json.loads(raw)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict) and record.get("url") == self._entry_url:
            etag, digest, size = clean_etag(record.get("etag")), record.get("sha256"), record.get("bytes")
            if (
                etag is not None
                and is_sha256(digest)
                and isinstance(size, int)
                and not isinstance(size, bool)
                and 0 <= size <= MAX_ENTRY_BYTES
            ):
                body = self._read_cached(str(digest), size)
                if body is not None:
                    return etag, body
        log.warning("cached catalog.json record for %s does not verify; fetching it again", self._entry_url)
        self.cache.remove(("entries",), self._entry_record)
        return None

    def _store_entry(self, etag: str | None, body: bytes) -> None:
        if self.cache is None:
            return
        etag = clean_etag(etag)
        if etag is None:  # nothing to revalidate with: forget any older record
            self.cache.remove(("entries",), self._entry_record)
            return
        digest = hashlib.sha256(body).hexdigest()
        self._write_cached(digest, body)
        record = {"url": self._entry_url, "etag": etag, "sha256": digest, "bytes": len(body)}
        self.cache.write(("entries",), self._entry_record, json.dumps(record, sort_keys=True).encode("utf-8"))

    # -- network -------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        from urllib.parse import quote  # noqa: PLC0415 - keeps `import toolcat.reader` fast

        return self.base_url + quote(path, safe="/")

    def _get(
        self,
        path: str,
        headers: dict[str, str],
        limit: int,
        *,
        batched: bool = False,
        why: str = "the size its ref promised",
    ) -> tuple[int, bytes, dict[str, str]]:
        """GET with a deadline per attempt and bounded retries; (status, decoded body, headers) for 2xx and 304.

        ``limit`` bounds the decoded body: a longer one (or one that inflates past it) is INTEGRITY.
        """
        url = self._url(path)
        last = ""
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(backoff(attempt))
            with self._lock:
                self.stats.requests += 1
                self.stats.round_trips += 0 if batched and not attempt else 1
            try:
                return self._attempt(url, headers, limit, time.monotonic() + self.timeout, why)
            except Retry as exc:
                last = str(exc)
        raise ReaderError(
            "UNAVAILABLE",
            f"could not fetch {url} after {self.retries + 1} attempt(s): {last}",
            details={"url": url, "attempts": self.retries + 1, "last_error": last, "timeout_s": self.timeout},
            hints=["The server is down, slow or dropping connections; retry later or raise timeout/retries."],
        )

    def _attempt(
        self, url: str, headers: dict[str, str], limit: int, deadline: float, why: str
    ) -> tuple[int, bytes, dict[str, str]]:
        """One attempt, all of it (redirects, headers, body) before ``deadline``; :class:`_Retry` when transient."""
        import http.client  # noqa: PLC0415 - stdlib, imported on first use
        import urllib.error  # noqa: PLC0415 - stdlib, imported on first use
        import urllib.request  # noqa: PLC0415 - stdlib, imported on first use

        request = urllib.request.Request(  # noqa: S310 - http(s) checked at open; only http(s) handlers installed
            url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", **headers}
        )
        request.toolcat_deadline = deadline  # type: ignore[attr-defined] # read by the deadline handlers
        if self._opener is None:
            self._opener = transport()(self.base_url)
        try:
            response = self._opener.open(request, timeout=time_left(deadline))
        except urllib.error.HTTPError as exc:
            try:
                return self._http_error(url, exc)
            finally:  # never read an error's body; an HTTPError made without a response has no fp
                if getattr(exc, "fp", None) is not None:
                    exc.close()
        except RedirectRefused as exc:
            raise ReaderError(
                "UNAVAILABLE",
                f"{url} redirects to {exc.target[:300]}, which the reader does not follow: {exc.reason}",
                details={"url": url, "location": exc.target[:300]},
                hints=[REDIRECT_HINT],
            ) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise Retry(self._describe(exc)) from None
        try:
            with response:
                return self._read_response(url, response, limit, deadline, why)
        except CorruptBody as exc:
            raise Retry(str(exc)) from None
        except http.client.IncompleteRead as exc:
            raise Retry(f"truncated body ({len(exc.partial)} bytes received)") from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise Retry(self._describe(exc)) from None

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, TimeoutError) or "timed out" in str(exc):
            return f"no complete answer within the {self.timeout} s timeout (timed out)"
        return f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__

    def _http_error(self, url: str, exc: Any) -> tuple[int, bytes, dict[str, str]]:
        """A non-2xx answer: 304 is returned, 5xx/429 retried, a refused redirect or other 4xx is UNAVAILABLE."""
        if exc.code == 304:
            return 304, b"", {k.lower(): v for k, v in (exc.headers or {}).items()}
        if exc.code >= 500 or exc.code == 429:
            raise Retry(f"HTTP {exc.code}")
        if 300 <= exc.code < 400:
            location = str((exc.headers or {}).get("Location", ""))[:300]
            raise ReaderError(
                "UNAVAILABLE",
                f"{url} answered a redirect (HTTP {exc.code}) the reader does not follow "
                f"({'to ' + location if location else 'without a Location'})",
                details={"url": url, "status": exc.code, "location": location},
                hints=[REDIRECT_HINT],
            )
        raise ReaderError(
            "UNAVAILABLE",
            f"{url} answered HTTP {exc.code}" + (" (not found)" if exc.code == 404 else ""),
            details={"url": url, "status": exc.code},
            hints=[
                (
                    "Check the base URL (it must be the folder holding catalog.json) and that the whole "
                    "build folder was deployed."
                )
            ],
        )

    def _read_response(
        self, url: str, response: Any, limit: int, deadline: float, why: str
    ) -> tuple[int, bytes, dict[str, str]]:
        """Read a 2xx body in chunks before ``deadline``: at most ``wire_limit(limit)`` bytes, inflated to ``limit``."""
        response_headers = {k.lower(): v for k, v in response.headers.items()}
        cap = wire_limit(limit)
        text = response_headers.get("content-length", "").strip()
        declared = int(text[:20]) if text.isdigit() else None  # 20 digits already exceed any cap
        if declared is not None and declared > cap:
            raise too_large(url, limit, why)  # said up front: nothing is read
        decoder = BodyDecoder(response_headers.get("content-encoding", ""), limit, url, why)
        received = 0
        while True:
            time_left(deadline)
            chunk = response.read1(min(READ_CHUNK, cap + 1 - received))
            if not chunk:
                break
            received += len(chunk)
            with self._lock:
                self.stats.bytes_downloaded += len(chunk)
            if received > cap:
                raise too_large(url, limit, why)
            decoder.feed(chunk)
        if declared is not None and received != declared:
            raise Retry(f"truncated body ({received} of {declared} bytes)")
        body = decoder.finish(received)
        with self._lock:
            self.stats.bytes_decoded += len(body)
        return response.status, body, response_headers

    def read_entry(self) -> bytes:
        """Revalidate ``catalog.json`` with the cached ETag; a 304 reuses the cached copy (verified by its sha256)."""
        cached = self._cached_entry()
        headers = {"If-None-Match": cached[0]} if cached is not None else {}
        status, body, response_headers = self._get(ENTRY, headers, MAX_ENTRY_BYTES, why="the cap for catalog.json")
        if status == 304:
            if cached is None:
                raise ReaderError(
                    "UNAVAILABLE",
                    f"{self._entry_url} answered 304 Not Modified to a request without If-None-Match",
                    details={"url": self._entry_url, "status": 304},
                    hints=[
                        "The host or a cache in between answers 304 to unconditional requests; fix its configuration."
                    ],
                )
            with self._lock:
                self.stats.not_modified += 1
            return cached[1]
        self._store_entry(response_headers.get("etag"), body)
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

    def remember(self, digest: str, data: bytes) -> None:
        """Cache bytes the caller verified against ``digest`` (a file fetched by path, checked afterwards)."""
        self._write_cached(digest, data)

    def _fetch(self, ref: dict[str, Any], *, batched: bool) -> bytes:
        if isinstance(ref, dict) and "sha256" not in ref and "max_bytes" in ref:
            # fetched by path, unverified: the caller checks it against a hash from the same round before use
            pending, limit = check_pending(ref, self.max_file_bytes)
            return self._get(pending, {}, limit, batched=batched)[1]
        path, digest, size = check_ref(ref)
        if size > self.max_file_bytes:
            raise promise_too_large(path, self._url(path), size, self.max_file_bytes)
        cached = self._read_cached(digest, size)
        if cached is not None:
            with self._lock:
                self.stats.cache_hits += 1
            return cached
        _, body, _ = self._get(path, {}, size, batched=batched)
        data = verify(body, path, digest, size, self._url(path))
        self._write_cached(digest, data)
        return data
