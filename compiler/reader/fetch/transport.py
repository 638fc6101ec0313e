"""HTTP transport of the reader: one deadline per request, same-origin redirects only, bounded decoding.

Each request carries one monotonic deadline for connect, headers and body together (a socket timeout
alone is per ``recv``); redirects are followed within the base URL's origin, at most
:data:`MAX_REDIRECTS` hops; bodies are read and inflated in chunks and never past their limit.
urllib is loaded on the first request, so ``import toolcat.reader`` stays fast.
"""

from __future__ import annotations

import functools
import time
import zlib
from typing import Any

from ...format.envelope import ReaderError
from ...format.errors import ToolcatError
from ...format.refs import too_large

#: Same-origin redirects followed per request; a redirect to another origin or scheme is never followed.
MAX_REDIRECTS = 3
#: Bodies are read (and inflated) this many bytes at a time.
READ_CHUNK = 64 * 1024
BACKOFF_SECONDS = 0.1
MAX_BACKOFF_SECONDS = 1.0
USER_AGENT = "toolcat-reader/1"
REDIRECT_HINT = (
    f"The reader follows redirects only within the base URL's scheme, host and port, at most "
    f"{MAX_REDIRECTS} hops; open the final URL directly."
)


def backoff(attempt: int) -> float:
    """Seconds slept before retry number ``attempt`` (1-based): 0.1, 0.2, 0.4 … capped at 1 s."""
    return min(BACKOFF_SECONDS * 2.0 ** (attempt - 1), MAX_BACKOFF_SECONDS)


def fetch_bound(timeout: float, retries: int) -> float:
    """The most seconds one file's fetch may take: ``(retries + 1) * timeout`` plus the backoff between attempts.

    Each attempt has one deadline for connect, headers and body together (redirect hops included).
    Name resolution (DNS) is left to the system resolver and is not inside this bound.
    """
    return (retries + 1) * timeout + sum(backoff(i) for i in range(1, retries + 1))


class CorruptBody(ToolcatError):  # noqa: N818 - internal signal, retried like a truncated body
    """A compressed body that does not inflate (cut short in transit, or not gzip at all)."""


class Retry(ToolcatError):  # noqa: N818 - internal signal: this attempt failed in a way worth retrying
    """A transient failure of one attempt; the message says what happened."""


def wire_limit(limit: int) -> int:
    """The most bytes a response for a ``limit``-byte file may take on the wire (gzip can add a little)."""
    return limit + limit // 1000 + 1024


class BodyDecoder:
    """Inflates a body chunk by chunk as it arrives, never holding more than ``limit`` + 1 decoded bytes.

    ``identity`` passes bytes through; ``gzip`` (one member or several, as RFC 1952 allows) is inflated with
    an output bound per call, so a gzip bomb stops at the limit. Any other encoding is UNAVAILABLE before a
    byte is read; a stream that does not inflate, or ends mid-member, raises :class:`CorruptBody`.
    """

    def __init__(self, encoding: str, limit: int, url: str, why: str = "the size its ref promised") -> None:
        self.encoding = encoding.strip().lower()
        if self.encoding not in ("", "identity", "gzip", "x-gzip"):
            raise ReaderError(
                "UNAVAILABLE",
                f"{url} answered with Content-Encoding {encoding[:80]!r}, which the reader cannot decode",
                details={"url": url, "content_encoding": encoding[:200]},
                hints=["The reader asks for gzip or identity; configure the host to serve one of them."],
            )
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
                raise CorruptBody(f"gzip body does not inflate ({exc})") from None
            if self._inflater.eof:  # another gzip member may follow
                pending = self._inflater.unused_data
                if pending:
                    self._inflater = self._new_member()
            else:  # all input consumed (a non-empty tail would mean the output bound was hit, raised above)
                pending = self._inflater.unconsumed_tail

    def finish(self, received: int) -> bytes:
        """The decoded body; a gzip stream that stopped mid-member raises :class:`CorruptBody`."""
        if self._inflater is not None and not self._inflater.eof:
            raise CorruptBody(f"gzip body ends early ({received} bytes received)")
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


class RedirectRefused(ToolcatError):  # noqa: N818 - internal signal, turned into UNAVAILABLE (never retried)
    """A redirect to another origin or scheme, or one hop too many."""

    def __init__(self, target: str, reason: str) -> None:
        super().__init__(reason)
        self.target, self.reason = target, reason


def time_left(deadline: float) -> float:
    """Seconds to the deadline; TimeoutError once it has passed."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's deadline passed")
    return left


@functools.cache
def transport() -> Any:
    """The urllib pieces of the HTTP source, defined on first use so that ``import toolcat.reader`` stays fast.

    Returns ``opener(base) -> OpenerDirector``, built once per base URL. Each request carries one monotonic
    deadline (``request.toolcat_deadline``, passed on to redirect hops): its connections give the connect and
    TLS handshake the time left, and every read of the status line, headers and body sets the socket timeout
    to the time left (a socket timeout alone is per ``recv``, so a host dripping one byte a second never
    trips it). Only http(s) handlers are installed (no ``file:``, ``ftp:`` or ``data:``), and
    redirects are followed within the base URL's origin only.
    """
    import http.client  # noqa: PLC0415 - stdlib, imported on first use
    import io  # noqa: PLC0415 - stdlib, imported on first use: keeps the module's import (and the reader's start) light
    import urllib.request  # noqa: PLC0415 - stdlib, imported on first use

    class DeadlineReader(io.RawIOBase):
        """A socket stream that stops when the request's deadline passes, however slowly bytes arrive."""

        def __init__(self, raw: Any, sock: Any, deadline: float) -> None:
            super().__init__()
            self._raw, self._sock, self._deadline = raw, sock, deadline

        def readable(self) -> bool:
            return True

        def readinto(self, buffer: Any) -> int | None:
            self._sock.settimeout(time_left(self._deadline))
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
                    sock.settimeout(time_left(deadline))  # what is left for the TLS handshake and the request
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
                context = self._context  # type: ignore[attr-defined]  # urllib keeps the SSL context private
                return self.do_open(
                    functools.partial(https_connection, deadline=req.toolcat_deadline), req, context=context
                )

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
                raise RedirectRefused(newurl, "it leaves the catalogue's origin (scheme, host and port)")
            if hops > MAX_REDIRECTS:
                raise RedirectRefused(newurl, f"it is hop {hops}, more than {MAX_REDIRECTS}")
            new: Any = super().redirect_request(req, fp, code, msg, headers, newurl)
            if new is not None:  # the hop shares the request's deadline
                new.toolcat_deadline, new.toolcat_hops = req.toolcat_deadline, hops
            return new

    @functools.lru_cache(maxsize=64)  # stateless (the per-request state rides on the request): shared by sources
    def opener(base: str) -> urllib.request.OpenerDirector:
        director = urllib.request.OpenerDirector()
        for handler in (
            urllib.request.ProxyHandler(),
            urllib.request.UnknownHandler(),
            *(make() for make in handlers),
            urllib.request.HTTPDefaultErrorHandler(),
            Redirects(base),
            urllib.request.HTTPErrorProcessor(),
        ):
            director.add_handler(handler)
        return director

    return opener
