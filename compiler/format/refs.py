"""Refs: check_ref, verify, page_refs, page_ref (docs/format.md in code)."""

from __future__ import annotations

import hashlib
import posixpath
import re
from typing import Any, TypeGuard

from .envelope import ReaderError


def page_refs(page: dict[str, Any]) -> list[dict[str, Any]]:
    """The refs of the files an ``index_pages`` file lists (``<folder>/<prefix><i>.json``, sha256, bytes)."""
    return [page_ref(page, number) for number in range(len(page["files"]))]


def page_ref(page: dict[str, Any], number: int) -> dict[str, Any]:
    """``page_refs(page)[number]`` without making the others (a lookup was O(page) and cost 1.6 ms a query)."""
    files = page["files"]
    index = range(len(files))[number]  # IndexError out of range; a negative number counts from the end, as a list's
    digest, size = files[index]
    return {
        "path": f"{page['folder']}/{page['prefix']}{int(page['first']) + index}.json",
        "sha256": digest,
        "bytes": size,
    }


ENTRY = "catalog.json"


#: catalog.json holds a manifest ref and the last builds' refs (a few KB); a bigger one is refused.
MAX_ENTRY_BYTES = 1024 * 1024


#: No file is read past this many bytes, on the wire or inflated, whatever its ref promises (``max_file_bytes``).
MAX_FILE_BYTES = 64 * 1024 * 1024


#: The longest ref path the reader accepts.
MAX_REF_PATH = 1024


_HEX = frozenset("0123456789abcdef")
#: A control character (C0, DEL, C1) or a lone surrogate: never in a ref path (one search, not a loop per character).
_UNSAFE_CHAR = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def is_sha256(value: Any) -> TypeGuard[str]:
    """Whether ``value`` is 64 lower-case hex digits (a cache key that cannot leave the cache folder)."""
    return isinstance(value, str) and len(value) == 64 and _HEX.issuperset(value)


def _clean_path(path: Any) -> TypeGuard[str]:
    """A relative path of plain segments: no ``..``/``.``/empty segment, backslash, control char, surrogate or scheme."""
    if not isinstance(path, str) or not path or len(path) > MAX_REF_PATH or "\\" in path:
        return False
    if _UNSAFE_CHAR.search(path):
        return False
    segments = path.split("/")
    if ":" in segments[0]:  # "scheme:..." would read as a URL (RFC 3986 forbids ':' in a relative path's first segment)
        return False
    return all(segment not in ("", ".", "..") for segment in segments) and posixpath.normpath(path) == path


def check_pending(ref: Any, cap: int) -> tuple[str, int]:
    """``(path, byte limit)`` of a pending ref ``{path, max_bytes}`` (a file checked later against a hash)."""
    path, limit = ref.get("path"), ref.get("max_bytes")
    if not _clean_path(path) or not isinstance(limit, int) or isinstance(limit, bool) or limit < 0:
        raise ReaderError("INTEGRITY", f"malformed pending ref {ref!r:.200}", details={"ref": repr(ref)[:200]})
    return path, min(limit, cap)


def check_ref(ref: Any) -> tuple[str, str, int]:
    """Return ``(path, sha256, bytes)`` of a well-formed ref whose path stays inside the catalogue."""
    if not isinstance(ref, dict):
        raise ReaderError(
            "INTEGRITY",
            f"expected a ref {{path, sha256, bytes}}, got {type(ref).__name__}",
            hints=["The catalogue is malformed; rebuild it with `toolcat build`."],
        )
    path, digest, size = ref.get("path"), ref.get("sha256"), ref.get("bytes")
    if not _clean_path(path):
        raise ReaderError(
            "INTEGRITY",
            f"ref path {path!r:.200} is not a clean relative path inside the catalogue",
            details={"ref": {"path": repr(path)[:200], "sha256": digest, "bytes": size}},
            hints=[
                (
                    "Ref paths are relative to the base URL: no '..', '.', empty segments, leading "
                    "'/', URLs, backslashes or control characters."
                )
            ],
        )
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
            details={
                "path": path,
                "expected_sha256": digest,
                "got_sha256": got,
                "expected_bytes": size,
                "got_bytes": len(data),
            },
            hints=[
                "The file was modified or truncated after the build, or a cache/CDN serves a stale copy.",
                "Rebuild and redeploy the whole build folder; clear the reader cache if it persists.",
            ],
        )
    return data


def promise_too_large(path: str, where: str, promise: int, cap: int) -> ReaderError:
    """INTEGRITY: a ref promises a file bigger than the reader will ever read."""
    return ReaderError(
        "INTEGRITY",
        f"the ref to {path} promises {promise} bytes, above the reader's cap of {cap} bytes (max_file_bytes); "
        f"{where} was not fetched",
        details={"path": path, "url": where, "promised_bytes": promise, "cap_bytes": cap},
        hints=[
            "A toolcat build keeps its files small; a huge promise means a malformed or hostile catalogue.",
            (
                "If the catalogue is yours and the file is legitimately this large, open it with a larger "
                "max_file_bytes."
            ),
        ],
    )


def too_large(url: str, limit: int, why: str = "the size its ref promised") -> ReaderError:
    """INTEGRITY: a body longer than the file its ref promised (or than a cap)."""
    return ReaderError(
        "INTEGRITY",
        f"{url} is larger than expected ({limit} bytes: {why}); it was not used",
        details={"url": url, "limit_bytes": limit},
        hints=[
            (
                "The host serves another file than the catalogue names, or a compressed body "
                "inflates past it (a gzip bomb); the reader stopped reading there."
            )
        ],
    )
