"""Where a catalogue's bytes come from: a built folder or an http(s) base URL.

Only ``catalog.json`` is mutable; it is revalidated over HTTP with ``If-None-Match``.
Every other file is reached through a ref ``{"path", "sha256", "bytes"}`` and checked
against that hash before it is used; over HTTP verified files are kept in an on-disk
cache keyed by their sha256 (``$TOOLCAT_CACHE`` or ``~/.cache/toolcat``), so they are
fetched at most once.

A host, CDN or man-in-the-middle is not trusted (docs/security.md):

- **Caps that no promise raises**: no file is read past ``max_file_bytes`` (default
  :data:`MAX_FILE_BYTES`) on the wire or inflated, ``catalog.json`` past :data:`MAX_ENTRY_BYTES`;
  a ref promising more is refused before any request. Bodies are read and inflated in chunks and
  stop at ``min(promise, cap)``: nothing is ever allocated by a promised size.
- **A deadline per request**: ``timeout`` bounds connect, headers and body together, however
  slowly bytes arrive; with retries a fetch costs at most :func:`fetch_bound` seconds.
- **Redirects** are followed only within the base URL's origin (scheme, host, port), at most
  :data:`MAX_REDIRECTS` hops; never to another host or scheme.
- **The cache is verified by content**: objects by their sha256, the cached ``catalog.json`` by a
  record binding its URL, ETag and sha256. Folders are 0o700, files 0o600, written atomically;
  symlinks planted in it are never followed, and a cache folder others can write is not used.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import math
import os
import posixpath
import stat
import threading
import time
import zlib
from pathlib import Path
from typing import Any, TypeGuard

from .envelope import ReaderError

log = logging.getLogger(__name__)

ENTRY = "catalog.json"
#: catalog.json holds a manifest ref and the last builds' refs (a few KB); a bigger one is refused.
MAX_ENTRY_BYTES = 1024 * 1024
#: No file is read past this many bytes, on the wire or inflated, whatever its ref promises (``max_file_bytes``).
MAX_FILE_BYTES = 64 * 1024 * 1024
#: Same-origin redirects followed per request; a redirect to another origin or scheme is never followed.
MAX_REDIRECTS = 3
#: Bodies are read (and inflated) this many bytes at a time.
READ_CHUNK = 64 * 1024
#: The longest ref path the reader accepts.
MAX_REF_PATH = 1024
#: The largest timeout, in seconds, a request may be given (socket timeouts must fit a C timeval).
MAX_TIMEOUT = 3600.0
#: The most retries a request may be given.
MAX_RETRIES = 10
BACKOFF_SECONDS = 0.1
MAX_BACKOFF_SECONDS = 1.0
USER_AGENT = "toolcat-reader/1"
#: A cached entry record is small (url, etag, sha256, bytes).
_MAX_RECORD_BYTES = 4096
_MAX_ETAG = 256
_HEX = frozenset("0123456789abcdef")
_REDIRECT_HINT = (f"The reader follows redirects only within the base URL's scheme, host and port, at most "
                  f"{MAX_REDIRECTS} hops; open the final URL directly.")


def backoff(attempt: int) -> float:
    """Seconds slept before retry number ``attempt`` (1-based): 0.1, 0.2, 0.4 … capped at 1 s."""
    return min(BACKOFF_SECONDS * 2.0 ** (attempt - 1), MAX_BACKOFF_SECONDS)


def fetch_bound(timeout: float, retries: int) -> float:
    """The most seconds one file's fetch may take: ``(retries + 1) * timeout`` plus the backoff between attempts.

    Each attempt has one deadline for connect, headers and body together (redirect hops included).
    Name resolution (DNS) is left to the system resolver and is not inside this bound.
    """
    return (retries + 1) * timeout + sum(backoff(i) for i in range(1, retries + 1))


def is_sha256(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is 64 lower-case hex digits (a cache key that cannot leave the cache folder)."""
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


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


def _clean_path(path: Any) -> TypeGuard[str]:
    """A relative path of plain segments: no ``..``/``.``/empty segment, backslash, control char, surrogate or scheme."""
    if not isinstance(path, str) or not path or len(path) > MAX_REF_PATH or "\\" in path:
        return False
    if any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF for c in path):
        return False
    segments = path.split("/")
    if ":" in segments[0]:  # "scheme:..." would read as a URL (RFC 3986 forbids ':' in a relative path's first segment)
        return False
    return all(segment not in ("", ".", "..") for segment in segments) and posixpath.normpath(path) == path


def check_ref(ref: Any) -> tuple[str, str, int]:
    """Return ``(path, sha256, bytes)`` of a well-formed ref whose path stays inside the catalogue."""
    if not isinstance(ref, dict):
        raise ReaderError("INTEGRITY", f"expected a ref {{path, sha256, bytes}}, got {type(ref).__name__}",
                          hints=["The catalogue is malformed; rebuild it with `toolcat build`."])
    path, digest, size = ref.get("path"), ref.get("sha256"), ref.get("bytes")
    if not _clean_path(path):
        raise ReaderError("INTEGRITY", f"ref path {path!r:.200} is not a clean relative path inside the catalogue",
                          details={"ref": {"path": repr(path)[:200], "sha256": digest, "bytes": size}},
                          hints=[("Ref paths are relative to the base URL: no '..', '.', empty segments, leading "
                                  "'/', URLs, backslashes or control characters.")])
    if not is_sha256(digest):
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


def promise_too_large(path: str, where: str, promise: int, cap: int) -> ReaderError:
    """INTEGRITY: a ref promises a file bigger than the reader will ever read."""
    return ReaderError(
        "INTEGRITY",
        f"the ref to {path} promises {promise} bytes, above the reader's cap of {cap} bytes (max_file_bytes); "
        f"{where} was not fetched",
        details={"path": path, "url": where, "promised_bytes": promise, "cap_bytes": cap},
        hints=["A toolcat build keeps its files small; a huge promise means a malformed or hostile catalogue.",
               ("If the catalogue is yours and the file is legitimately this large, open it with a larger "
                "max_file_bytes.")],
    )


def too_large(url: str, limit: int, why: str = "the size its ref promised") -> ReaderError:
    """INTEGRITY: a body longer than the file its ref promised (or than a cap)."""
    return ReaderError("INTEGRITY", f"{url} is larger than expected ({limit} bytes: {why}); it was not used",
                       details={"url": url, "limit_bytes": limit},
                       hints=[("The host serves another file than the catalogue names, or a compressed body "
                               "inflates past it (a gzip bomb); the reader stopped reading there.")])


class _CorruptBody(Exception):  # noqa: N818 - internal signal, retried like a truncated body
    """A compressed body that does not inflate (cut short in transit, or not gzip at all)."""


class _Retry(Exception):  # noqa: N818 - internal signal: this attempt failed in a way worth retrying
    """A transient failure of one attempt; the message says what happened."""


def wire_limit(limit: int) -> int:
    """The most bytes a response for a ``limit``-byte file may take on the wire (gzip can add a little)."""
    return limit + limit // 1000 + 1024


class BodyDecoder:
    """Inflates a body chunk by chunk as it arrives, never holding more than ``limit`` + 1 decoded bytes.

    ``identity`` passes bytes through; ``gzip`` (one member or several, as RFC 1952 allows) is inflated with
    an output bound per call, so a gzip bomb stops at the limit. Any other encoding is UNAVAILABLE before a
    byte is read; a stream that does not inflate, or ends mid-member, raises :class:`_CorruptBody`.
    """

    def __init__(self, encoding: str, limit: int, url: str, why: str = "the size its ref promised") -> None:
        self.encoding = encoding.strip().lower()
        if self.encoding not in ("", "identity", "gzip", "x-gzip"):
            raise ReaderError(
                "UNAVAILABLE", f"{url} answered with Content-Encoding {encoding[:80]!r}, which the reader cannot decode",
                details={"url": url, "content_encoding": encoding[:200]},
                hints=["The reader asks for gzip or identity; configure the host to serve one of them."])
        self.limit, self.url, self.why = limit, url, why
        self.out = bytearray()
        self._inflater = self._new_member() if self.encoding in ("gzip", "x-gzip") else None

    @staticmethod
    def _new_member() -> Any:
        return zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)

    def _append(self, data: bytes) -> None:
        self.out += data
        if len(self.out) > self.limit:
            raise too_large(self.url, self.limit, self.why)

    def feed(self, chunk: bytes) -> None:
        """Decode one chunk from the wire."""
        if self._inflater is None:
            self._append(chunk)
            return
        pending = chunk
        while pending:
            try:
                self._append(self._inflater.decompress(pending, self.limit + 1 - len(self.out)))
            except zlib.error as exc:
                raise _CorruptBody(f"gzip body does not inflate ({exc})") from None
            if self._inflater.eof:  # another gzip member may follow
                pending = self._inflater.unused_data
                if pending:
                    self._inflater = self._new_member()
            else:  # all input consumed (a non-empty tail would mean the output bound was hit, raised above)
                pending = self._inflater.unconsumed_tail

    def finish(self, received: int) -> bytes:
        """The decoded body; a gzip stream that stopped mid-member raises :class:`_CorruptBody`."""
        if self._inflater is not None and not self._inflater.eof:
            raise _CorruptBody(f"gzip body ends early ({received} bytes received)")
        return bytes(self.out)


def origin(url: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) URL, default port filled in; None for anything else."""
    from urllib.parse import urlsplit  # noqa: PLC0415 - keeps `import toolcat.reader` fast

    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or (443 if scheme == "https" else 80)


def same_origin(base: str, url: str) -> bool:
    """Whether ``url`` has the scheme, host and port of ``base`` (both http(s))."""
    here = origin(base)
    return here is not None and origin(url) == here


class _RedirectRefused(Exception):  # noqa: N818 - internal signal, turned into UNAVAILABLE (never retried)
    """A redirect to another origin or scheme, or one hop too many."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(reason)
        self.target, self.reason = target, reason


def _time_left(deadline: float) -> float:
    """Seconds to the deadline; TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left


@functools.cache
def _transport() -> Any:
    """The urllib pieces of the HTTP source, defined on first use so that ``import toolcat.reader`` stays fast.

    Returns ``opener(base) -> OpenerDirector``, built once per base URL. Each request carries one monotonic
    deadline (``request.toolcat_deadline``, passed on to redirect hops): its connections give the connect and
    TLS handshake the time left, and every read of the status line, headers and body sets the socket timeout
    to the time left (a socket timeout alone is per ``recv``, so a host dripping one byte a second never
    trips it). Only http(s) handlers are installed (no ``file:``, ``ftp:`` or ``data:``), and
    redirects are followed within the base URL's origin only.
    """
    import http.client  # noqa: PLC0415
    import io  # noqa: PLC0415
    import urllib.request  # noqa: PLC0415

    class DeadlineReader(io.RawIOBase):
        """A socket stream that stops when the request's deadline passes, however slowly bytes arrive."""

        def __init__(self, raw: Any, sock: Any, deadline: float) -> None:
            super().__init__()
            self._raw, self._sock, self._deadline = raw, sock, deadline

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int | None:
            self._sock.settimeout(_time_left(self._deadline))
            return self._raw.readinto(buffer)  # type: ignore[no-any-return]

        def close(self) -> None:
            if not self.closed:
                self._raw.close()
            super().close()

    class DeadlineResponse(http.client.HTTPResponse):
        """An HTTP response read through a :class:`DeadlineReader`."""

        def __init__(self, sock: Any, *args: Any, deadline: float, **kwargs: Any) -> None:
            super().__init__(sock, *args, **kwargs)
            self.fp = io.BufferedReader(DeadlineReader(self.fp.detach(), sock, deadline))

    def deadline_connection(base: type[http.client.HTTPConnection]) -> Any:
        class DeadlineConnection(base):  # type: ignore[valid-type,misc]
            def __init__(self, *args: Any, deadline: float, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                self.response_class = functools.partial(DeadlineResponse, deadline=deadline)
                connect = getattr(self, "_create_connection")  # noqa: B009 - set by __init__, untyped

                def create(*c_args: Any, **c_kwargs: Any) -> Any:
                    sock = connect(*c_args, **c_kwargs)
                    sock.settimeout(_time_left(deadline))  # what is left for the TLS handshake and the request
                    return sock

                self._create_connection = create

        return DeadlineConnection

    http_connection = deadline_connection(http.client.HTTPConnection)

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(functools.partial(http_connection, deadline=req.toolcat_deadline), req)

    handlers: list[Any] = [HTTPHandler]
    if hasattr(http.client, "HTTPSConnection"):  # absent when Python was built without ssl
        https_connection = deadline_connection(http.client.HTTPSConnection)

        class HTTPSHandler(urllib.request.HTTPSHandler):
            def https_open(self, req: Any) -> Any:
                return self.do_open(functools.partial(https_connection, deadline=req.toolcat_deadline), req,
                                    context=self._context)  # type: ignore[attr-defined]

        handlers.append(HTTPSHandler)

    class Redirects(urllib.request.HTTPRedirectHandler):
        """Follows a redirect only to the base URL's origin, at most MAX_REDIRECTS times; never reads its body."""

        def __init__(self, base: str) -> None:
            super().__init__()
            self.base = base

        def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
            fp.close()  # urllib would read a redirect's body whole, unbounded
            hops = getattr(req, "toolcat_hops", 0) + 1
            if not same_origin(self.base, newurl):
                raise _RedirectRefused(newurl, "it leaves the catalogue's origin (scheme, host and port)")
            if hops > MAX_REDIRECTS:
                raise _RedirectRefused(newurl, f"it is hop {hops}, more than {MAX_REDIRECTS}")
            new: Any = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None:  # the hop shares the request's deadline
                new.toolcat_deadline, new.toolcat_hops = req.toolcat_deadline, hops
            return new

    @functools.lru_cache(maxsize=64)  # stateless (the per-request state rides on the request): shared by sources
    def opener(base: str) -> urllib.request.OpenerDirector:
        director = urllib.request.OpenerDirector()
        for handler in (urllib.request.ProxyHandler(), urllib.request.UnknownHandler(),
                        *(make() for make in handlers), urllib.request.HTTPDefaultErrorHandler(),
                        Redirects(base), urllib.request.HTTPErrorProcessor()):
            director.add_handler(handler)
        return director

    return opener


def _clean_etag(value: Any) -> str | None:
    """An ETag the reader may store and send back: short printable ASCII (no CR/LF header injection)."""
    if isinstance(value, str) and 0 < len(value) <= _MAX_ETAG and all(" " <= c <= "~" for c in value):
        return value
    return None


class DiskCache:
    """The reader's on-disk cache: private, written atomically, read without following symlinks.

    The folder (and the symlink to it, if it is one) must belong to this user, and the folder must not be
    writable by group or others (else it is not used at all: another user could plant entries). Folders are created 0o700 and files 0o600; a file is
    written to a temporary name and renamed into place; a symlink planted where a folder should be is
    removed, one where a file should be is not followed (``O_NOFOLLOW``) and removed; a file that is
    not a regular file of the expected size (a FIFO, a device, a huge plant) is never read.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._usable: bool | None = None
        self._lock = threading.Lock()

    def _private(self, info: os.stat_result, what: Path) -> bool:
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            log.warning("reader cache %s belongs to another user (uid %d); not using the cache", what, info.st_uid)
            return False
        if info.st_mode & 0o022:
            log.warning("reader cache %s is writable by group or others (mode %o); not using the cache "
                        "(chmod 700 it, or pick another cache_dir)", what, stat.S_IMODE(info.st_mode))
            return False
        return True

    def usable(self) -> bool:
        """Whether the cache folder exists (created 0o700 if not), belongs to this user and only they can write it."""
        with self._lock:
            if self._usable is None:
                try:
                    self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
                    link, info = self.root.lstat(), self.root.stat()  # the root may be a symlink of the user's
                except OSError as exc:
                    log.warning("reader cache %s is not usable (%s); continuing without caching", self.root, exc)
                    self._usable = False
                else:
                    self._usable = (stat.S_ISDIR(info.st_mode) and self._private(info, self.root)
                                    and (not stat.S_ISLNK(link.st_mode) or self._private(link, self.root)))
            return self._usable

    def folder(self, *parts: str, create: bool) -> Path | None:
        """The sub-folder ``parts`` of the cache (a real, private folder), or None."""
        if not self.usable():
            return None
        folder = self.root
        try:
            for part in parts:
                folder /= part
                try:
                    info = os.lstat(folder)
                except FileNotFoundError:
                    if not create:
                        return None
                    folder.mkdir(mode=0o700, exist_ok=True)
                    info = os.lstat(folder)
                if stat.S_ISLNK(info.st_mode):
                    log.warning("removing symlink %s planted in the reader cache", folder)
                    folder.unlink()
                    if not create:
                        return None
                    folder.mkdir(mode=0o700)
                    info = os.lstat(folder)
                if not stat.S_ISDIR(info.st_mode) or not self._private(info, folder):
                    return None
        except OSError as exc:
            log.warning("reader cache folder %s is not usable (%s); continuing without caching", folder, exc)
            return None
        return folder

    def read(self, parts: tuple[str, ...], name: str, size: int | None, max_bytes: int) -> bytes | None:
        """The bytes of a regular cache file (exactly ``size`` of them when given, at most ``max_bytes``), or None.

        A file that is a symlink, not a regular file, or of another size is removed and not read.
        """
        folder = self.folder(*parts, create=False)
        if folder is None:
            return None
        file = folder / name
        flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(file, flags)
        except FileNotFoundError:
            return None
        except OSError as exc:  # ELOOP: a symlink; or unreadable
            log.warning("cache file %s cannot be read safely (%s); removing it", file, exc)
            self.remove(parts, name)
            return None
        with os.fdopen(fd, "rb") as handle:
            info = os.fstat(handle.fileno())
            ok = stat.S_ISREG(info.st_mode) and info.st_size <= max_bytes and size in (None, info.st_size)
            data = handle.read(info.st_size + 1) if ok else b""
        if not ok or len(data) != info.st_size:
            log.warning("cache file %s is not what was stored there; removing it", file)
            self.remove(parts, name)
            return None
        return data

    def write(self, parts: tuple[str, ...], name: str, data: bytes) -> None:
        """Store ``data`` atomically (temporary file 0o600, then rename); a failure only logs a warning."""
        folder = self.folder(*parts, create=True)
        if folder is None:
            return
        tmp = folder / f".tmp-{os.getpid()}-{os.urandom(6).hex()}"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(tmp, flags, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            tmp.replace(folder / name)
        except OSError as exc:
            log.warning("reader cache %s is not writable (%s); continuing without caching", folder, exc)
            try:
                tmp.unlink()
            except OSError:
                log.debug("no temporary cache file %s to remove", tmp)

    def remove(self, parts: tuple[str, ...], name: str) -> None:
        """Remove a cache file (a symlink itself, never its target)."""
        folder = self.root.joinpath(*parts)
        try:
            (folder / name).unlink()
        except OSError:
            log.debug("could not remove cache file %s", folder / name)


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
    """A build folder on disk; files are read directly (the reader keeps parsed ones in memory).

    Reads are bounded too: ``catalog.json`` by :data:`MAX_ENTRY_BYTES`, any other file by the size
    its ref promises (one byte more is read, to tell a longer file), so a planted device or huge file
    is never read whole.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.location = str(root)
        self.stats = SourceStats()

    def read_entry(self) -> bytes:
        """Read ``catalog.json``; a missing folder or entry is UNAVAILABLE."""
        entry = self.root / ENTRY
        try:
            with entry.open("rb") as handle:
                data = handle.read(MAX_ENTRY_BYTES + 1)
        except FileNotFoundError:
            raise ReaderError(
                "UNAVAILABLE", f"no catalogue at {self.root}: {entry} does not exist",
                hints=["Run `toolcat build` first, or pass the build folder (the one holding catalog.json)."],
            ) from None
        except OSError as exc:
            raise ReaderError("UNAVAILABLE", f"cannot read {entry}: {exc}") from None
        self.stats.count_file(len(data))
        if len(data) > MAX_ENTRY_BYTES:
            raise too_large(str(entry), MAX_ENTRY_BYTES, "the cap for catalog.json")
        return data

    def fetch(self, ref: dict[str, Any]) -> bytes:
        """Read and verify one immutable file."""
        path, digest, size = check_ref(ref)
        file = self.root / path
        try:
            with file.open("rb") as handle:
                data = handle.read(size + 1)
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

    def __init__(self, base_url: str, cache_dir: Path | None, timeout: float, retries: int, max_parallel: int = 8,
                 *, max_file_bytes: int = MAX_FILE_BYTES) -> None:
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
            etag, digest, size = _clean_etag(record.get("etag")), record.get("sha256"), record.get("bytes")
            if (etag is not None and is_sha256(digest) and isinstance(size, int) and not isinstance(size, bool)
                    and 0 <= size <= MAX_ENTRY_BYTES):
                body = self._read_cached(str(digest), size)
                if body is not None:
                    return etag, body
        log.warning("cached catalog.json record for %s does not verify; fetching it again", self._entry_url)
        self.cache.remove(("entries",), self._entry_record)
        return None

    def _store_entry(self, etag: str | None, body: bytes) -> None:
        if self.cache is None:
            return
        etag = _clean_etag(etag)
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

    def _get(self, path: str, headers: dict[str, str], limit: int, *, batched: bool = False,
             why: str = "the size its ref promised") -> tuple[int, bytes, dict[str, str]]:
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
            except _Retry as exc:
                last = str(exc)
        raise ReaderError(
            "UNAVAILABLE", f"could not fetch {url} after {self.retries + 1} attempt(s): {last}",
            details={"url": url, "attempts": self.retries + 1, "last_error": last, "timeout_s": self.timeout},
            hints=["The server is down, slow or dropping connections; retry later or raise timeout/retries."],
        )

    def _attempt(self, url: str, headers: dict[str, str], limit: int, deadline: float,
                 why: str) -> tuple[int, bytes, dict[str, str]]:
        """One attempt, all of it (redirects, headers, body) before ``deadline``; :class:`_Retry` when transient."""
        import http.client  # noqa: PLC0415
        import urllib.error  # noqa: PLC0415
        import urllib.request  # noqa: PLC0415

        request = urllib.request.Request(  # noqa: S310 - http(s) checked at open; only http(s) handlers installed
            url, headers={"User-Agent": USER_AGENT, "Accept-Encoding": "gzip", **headers})
        request.toolcat_deadline = deadline  # type: ignore[attr-defined] # read by the deadline handlers
        if self._opener is None:
            self._opener = _transport()(self.base_url)
        try:
            response = self._opener.open(request, timeout=_time_left(deadline))
        except urllib.error.HTTPError as exc:
            try:
                return self._http_error(url, exc)
            finally:  # never read an error's body; an HTTPError made without a response has no fp
                if getattr(exc, "fp", None) is not None:
                    exc.close()
        except _RedirectRefused as exc:
            raise ReaderError(
                "UNAVAILABLE", f"{url} redirects to {exc.target[:300]}, which the reader does not follow: {exc.reason}",
                details={"url": url, "location": exc.target[:300]},
                hints=[_REDIRECT_HINT]) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise _Retry(self._describe(exc)) from None
        try:
            with response:
                return self._read_response(url, response, limit, deadline, why)
        except _CorruptBody as exc:
            raise _Retry(str(exc)) from None
        except http.client.IncompleteRead as exc:
            raise _Retry(f"truncated body ({len(exc.partial)} bytes received)") from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            raise _Retry(self._describe(exc)) from None

    def _describe(self, exc: BaseException) -> str:
        if isinstance(exc, TimeoutError) or "timed out" in str(exc):
            return f"no complete answer within the {self.timeout} s timeout (timed out)"
        return f"{type(exc).__name__}: {exc}"[:300] if str(exc) else type(exc).__name__

    def _http_error(self, url: str, exc: Any) -> tuple[int, bytes, dict[str, str]]:
        """A non-2xx answer: 304 is returned, 5xx/429 retried, a refused redirect or other 4xx is UNAVAILABLE."""
        if exc.code == 304:
            return 304, b"", {k.lower(): v for k, v in (exc.headers or {}).items()}
        if exc.code >= 500 or exc.code == 429:
            raise _Retry(f"HTTP {exc.code}")
        if 300 <= exc.code < 400:
            location = str((exc.headers or {}).get("Location", ""))[:300]
            raise ReaderError(
                "UNAVAILABLE", f"{url} answered a redirect (HTTP {exc.code}) the reader does not follow "
                f"({'to ' + location if location else 'without a Location'})",
                details={"url": url, "status": exc.code, "location": location},
                hints=[_REDIRECT_HINT])
        raise ReaderError(
            "UNAVAILABLE", f"{url} answered HTTP {exc.code}" + (" (not found)" if exc.code == 404 else ""),
            details={"url": url, "status": exc.code},
            hints=[("Check the base URL (it must be the folder holding catalog.json) and that the whole "
                    "build folder was deployed.")],
        )

    def _read_response(self, url: str, response: Any, limit: int, deadline: float,
                       why: str) -> tuple[int, bytes, dict[str, str]]:
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
            _time_left(deadline)
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
            raise _Retry(f"truncated body ({received} of {declared} bytes)")
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
                    "UNAVAILABLE", f"{self._entry_url} answered 304 Not Modified to a request without If-None-Match",
                    details={"url": self._entry_url, "status": 304},
                    hints=["The host or a cache in between answers 304 to unconditional requests; fix its configuration."])
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

    def _fetch(self, ref: dict[str, Any], *, batched: bool) -> bytes:
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


def open_source(path_or_url: str | Path, cache_dir: str | Path | None, timeout: float, retries: int,
                max_parallel: int = 8, *, max_file_bytes: int = MAX_FILE_BYTES) -> Source:
    """A folder or http(s) source for ``path_or_url``; anything else is BAD_REQUEST."""
    text = str(path_or_url)
    if isinstance(path_or_url, str) and "://" in text:
        scheme = text.split("://", 1)[0].lower()
        if scheme not in ("http", "https") or origin(text) is None:
            raise ReaderError("BAD_REQUEST", f"unsupported URL {text!r:.200}: not an http(s) URL with a host",
                              hints=["Use a build folder path or an http(s):// base URL."])
        if (not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not math.isfinite(timeout)
                or not 0 < timeout <= MAX_TIMEOUT):
            raise ReaderError("BAD_REQUEST",
                              f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got {timeout!r:.40}")
        if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= MAX_RETRIES:
            raise ReaderError("BAD_REQUEST", f"retries must be an integer from 0 to {MAX_RETRIES}, got {retries!r:.40}")
        if not isinstance(max_file_bytes, int) or isinstance(max_file_bytes, bool) or max_file_bytes < 1:
            raise ReaderError("BAD_REQUEST", f"max_file_bytes must be a positive integer, got {max_file_bytes!r:.40}")
        cache = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        return HttpSource(text, cache, float(timeout), retries, max_parallel, max_file_bytes=max_file_bytes)
    root = Path(path_or_url)
    if root.name == ENTRY and root.is_file():
        root = root.parent
    return FolderSource(root)
