"""Where a catalogue's bytes come from: a built folder or an http(s) base URL.

Only ``catalog.json`` is mutable; it is revalidated over HTTP with ``If-None-Match``.
Every other file is reached through a ref ``{"path", "sha256", "bytes"}`` and checked
against that hash before it is used; over HTTP verified files are kept in an on-disk
cache keyed by their sha256 (``$TOOLCAT_CACHE_DIR`` or ``~/.cache/toolcat``), so they are
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

The pieces live in :mod:`~toolcat.reader.fetch.folder` (refs, :class:`Source`, :class:`FolderSource`),
:mod:`~toolcat.reader.fetch.transport` (deadline, redirects, decoding), :mod:`~toolcat.reader.fetch.cache`
(the disk cache) and :mod:`~toolcat.reader.fetch.http` (:class:`HttpSource`); their public names are
importable from here (the http ones are loaded on first use, so opening a folder never imports them).
"""

from __future__ import annotations

import math
from importlib import import_module
from pathlib import Path
from typing import Any

from ...format.envelope import ReaderError
from ...format.refs import (
    ENTRY,
    MAX_ENTRY_BYTES,
    MAX_FILE_BYTES,
    MAX_REF_PATH,
    check_ref,
    is_sha256,
    promise_too_large,
    too_large,
    verify,
)
from .folder import FolderSource, Source, SourceStats

#: The largest timeout, in seconds, a request may be given (socket timeouts must fit a C timeval).
MAX_TIMEOUT = 3600.0
#: The most retries a request may be given.
MAX_RETRIES = 10
#: Names re-exported from the http modules, imported when first asked for.
_LAZY = {
    **dict.fromkeys(("HttpSource",), "http_source"),
    **dict.fromkeys(("DiskCache", "default_cache_dir"), "cache"),
    **dict.fromkeys(
        (
            "BACKOFF_SECONDS",
            "MAX_BACKOFF_SECONDS",
            "MAX_REDIRECTS",
            "READ_CHUNK",
            "USER_AGENT",
            "BodyDecoder",
            "backoff",
            "fetch_bound",
            "origin",
            "same_origin",
            "wire_limit",
        ),
        "http_transport",
    ),
}


__all__ = [  # noqa: PLE0604 - the lazy names are listed through _LAZY
    "ENTRY",
    "MAX_ENTRY_BYTES",
    "MAX_FILE_BYTES",
    "MAX_REF_PATH",
    "MAX_RETRIES",
    "MAX_TIMEOUT",
    "FolderSource",
    "Source",
    "SourceStats",
    "check_ref",
    "is_sha256",
    "open_source",
    "promise_too_large",
    "too_large",
    "verify",
    *_LAZY,
]


def __getattr__(name: str) -> Any:
    """The http names, imported from their module when first asked for."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f".{module}", __package__), name)


def open_source(
    path_or_url: str | Path,
    cache_dir: str | Path | None,
    timeout: float,
    retries: int,
    max_parallel: int = 8,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
) -> Source:
    """A folder or http(s) source for ``path_or_url``; anything else is BAD_REQUEST."""
    text = str(path_or_url)
    if isinstance(path_or_url, str) and "://" in text:
        from .cache import default_cache_dir  # noqa: PLC0415 - only for URLs
        from .http import HttpSource  # noqa: PLC0415 - loaded on the one path that needs it
        from .transport import origin  # noqa: PLC0415 - loaded on the one path that needs it

        scheme = text.split("://", 1)[0].lower()
        if scheme not in ("http", "https") or origin(text) is None:
            raise ReaderError(
                "BAD_REQUEST",
                f"unsupported URL {text!r:.200}: not an http(s) URL with a host",
                hints=["Use a build folder path or an http(s):// base URL."],
            )
        if (
            not isinstance(timeout, (int, float))
            or isinstance(timeout, bool)
            or not math.isfinite(timeout)
            or not 0 < timeout <= MAX_TIMEOUT
        ):
            raise ReaderError(
                "BAD_REQUEST",
                f"timeout must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got {timeout!r:.40}",
            )
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
