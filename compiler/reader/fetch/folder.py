"""The Source interface, the checks every source applies to a ref, and the build-folder source.

A ref is ``{"path", "sha256", "bytes"}``: its path must stay inside the catalogue, and the bytes it
points to are used only once their size and sha256 match. :class:`FolderSource` reads a build folder
on disk with the same caps an HTTP source has.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...format.envelope import ReaderError
from ...format.refs import (
    ENTRY,
    MAX_ENTRY_BYTES,
    MAX_FILE_BYTES,
    check_pending,
    check_ref,
    too_large,
    verify,
)


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
        return {
            "requests": self.requests,
            "round_trips": self.round_trips,
            "bytes_downloaded": self.bytes_downloaded,
            "bytes_decoded": self.bytes_decoded,
            "cache_hits": self.cache_hits,
            "not_modified": self.not_modified,
        }


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

    def remember(self, digest: str, data: bytes) -> None:
        """Keep bytes the caller verified against ``digest`` (a disk cache does; a folder has nothing to keep)."""

    def recall_proven(self, key: str, max_bytes: int) -> bytes | None:
        """A proven file kept under ``key`` (its page's root and place), unchecked: the caller checks its path."""
        del key, max_bytes  # a folder keeps nothing: its files are read where they are
        return None

    def keep_proven(self, key: str, data: bytes) -> None:
        """Keep a proven file whose path the caller checked (a disk cache does; a folder has nothing to keep)."""

    def forget_proven(self, key: str) -> None:
        """Drop a kept proven file whose path did not check."""

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
        #: ``str(root / path)`` is this prefix + path for a clean relative path (check_ref), without pathlib's cost.
        self._prefix = "" if self.location == "." else self.location.rstrip("/") + "/"
        self.stats = SourceStats()

    def read_entry(self) -> bytes:
        """Read ``catalog.json``; a missing folder or entry is UNAVAILABLE."""
        entry = self.root / ENTRY
        try:
            with entry.open("rb") as handle:
                data = handle.read(MAX_ENTRY_BYTES + 1)
        except FileNotFoundError:
            raise ReaderError(
                "UNAVAILABLE",
                f"no catalogue at {self.root}: {entry} does not exist",
                hints=["Run `toolcat build` first, or pass the build folder (the one holding catalog.json)."],
            ) from None
        except OSError as exc:
            raise ReaderError("UNAVAILABLE", f"cannot read {entry}: {exc}") from None
        self.stats.count_file(len(data))
        if len(data) > MAX_ENTRY_BYTES:
            raise too_large(str(entry), MAX_ENTRY_BYTES, "the cap for catalog.json")
        return data

    def fetch(self, ref: dict[str, Any]) -> bytes:
        """Read and verify one immutable file (a pending ref ``{path, max_bytes}``: read, bounded, for its caller to check)."""
        pending = "sha256" not in ref and "max_bytes" in ref
        if pending:
            path, limit = check_pending(ref, MAX_FILE_BYTES)
            digest, size = "", limit
        else:
            path, digest, size = check_ref(ref)
        file = self._prefix + path
        try:
            with open(file, "rb") as handle:  # noqa: PTH123 - a str path: pathlib cost 15 us a read (a query reads ~20)
                data = handle.read(size + 1)
        except FileNotFoundError:
            raise ReaderError(
                "UNAVAILABLE",
                f"{file} is missing from the build folder",
                details={"path": path},
                hints=["The build folder is incomplete or an older build replaced it; rebuild, then reopen."],
            ) from None
        except OSError as exc:
            raise ReaderError("UNAVAILABLE", f"cannot read {file}: {exc}", details={"path": path}) from None
        self.stats.count_file(len(data))
        if pending:  # checked by the caller (a proven file, Store.fetch_json); a file over its bound is not the build's
            if len(data) > size:
                raise too_large(file, size, "the bound its table promises")
            return data
        return verify(data, path, digest, size, file)
