"""Token counts with OpenAI's o200k_base vocabulary (``bpe-openai`` ships it; no download)."""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata
import logging
import struct
from typing import Any

log = logging.getLogger(__name__)

ENCODING = "o200k_base"
#: bpe-openai refuses inputs of a million characters or more; longer texts are counted in
#: pieces cut just after a newline, which can differ from a whole-text count by at most a
#: token per cut (only where blank lines meet the cut).
CHUNK_CHARS = 200_000


@functools.cache
def _encoding() -> Any:
    import bpe_openai  # noqa: PLC0415 - loaded only when a count is needed

    return bpe_openai.get_encoding(ENCODING)


def _chunks(text: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    while len(text) - start > CHUNK_CHARS:
        cut = text.rfind("\n", start, start + CHUNK_CHARS)
        if cut <= start:
            cut = start + CHUNK_CHARS
        pieces.append(text[start : cut + 1])
        start = cut + 1
    pieces.append(text[start:])
    return pieces


def count_tokens(text: str) -> int:
    """How many o200k_base tokens ``text`` costs (remembered by a hash of the text: see :func:`begin`)."""
    if not text:
        return 0
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()
    count = _known.get(key)
    if count is None:
        encoding = _encoding()
        if len(text) <= CHUNK_CHARS:
            count = len(encoding.encode(text))
        else:
            count = sum(len(encoding.encode(piece)) for piece in _chunks(text))
        _known[key] = count
    _used.add(key)
    return count


#: A build counts hundreds of thousands of texts, almost all of them the same as in the last build: the
#: counts are kept beside the build (``.toolcat-tokens.bin``, build-private) and read back by the next one.
CACHE_FILE = ".toolcat-tokens.bin"
KEY_BYTES = 16
_RECORD = struct.Struct(f">{KEY_BYTES}sI")
_known: dict[bytes, int] = {}
_used: set[bytes] = set()


def _header() -> bytes:
    try:
        version = importlib.metadata.version("bpe-openai")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - a dependency of the build extra
        version = "?"
    return f"toolcat-token-counts 1 {ENCODING} bpe-openai {version}\n".encode()


def begin(cached: bytes | None) -> None:
    """Start a build: forget which counts were used, and take the counts a previous build saved (if valid)."""
    _used.clear()
    header = _header()
    if not cached or not cached.startswith(header) or (len(cached) - len(header)) % _RECORD.size:
        return
    _known.update(_RECORD.iter_unpack(cached[len(header) :]))


def saved() -> bytes:
    """The counts this build used, for the next build (sorted by key: the same build saves the same bytes)."""
    return _header() + b"".join(_RECORD.pack(key, _known[key]) for key in sorted(_used))


def used() -> dict[bytes, int]:
    """The counts this build used so far, by key (a forked worker hands them back with :func:`adopt`)."""
    return {key: _known[key] for key in _used}


def adopt(counts: dict[bytes, int]) -> None:
    """Take counts a forked worker made, as if they had been made here."""
    _known.update(counts)
    _used.update(counts)
