"""Token counts with OpenAI's o200k_base vocabulary (``bpe-openai`` ships it; no download)."""

from __future__ import annotations

import functools
import hashlib
import importlib.machinery
import importlib.metadata
import importlib.util
import logging
import re
import struct
import sys
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

ENCODING = "o200k_base"
#: bpe-openai refuses inputs of a million characters or more; longer texts are counted in
#: pieces cut just after a newline, which can differ from a whole-text count by at most a
#: token per cut (only where blank lines meet the cut).
CHUNK_CHARS = 200_000
#: Where a longer text is cut first: before each Markdown heading of level 1 or 2 at the start of a line. No token
#: spans such a cut (o200k_base's pre-tokenizer splits before a ``#`` that follows a newline), so the pieces' counts
#: add up to the whole text's; and the cuts follow the text, not offsets, so an edit of one section of a whole
#: catalogue's prompt (4.8 MB at 10,000 tools) counts that section's piece again, not every piece after it (issue 33).
HEADING_CUT = re.compile(r"\n(?=##? )")


@functools.cache
def _encoding() -> Any:
    """bpe-openai's Rust tokenizer for :data:`ENCODING` (its ``encode`` gives the token ids of a text).

    Importing the ``bpe_openai`` package parses all three of its vocabularies in Python (about 2 s of CPU, the
    largest part of a one-tool edit's build: issue 29), which counting does not need: the Rust extension carries
    its own. So the extension is loaded alone, from the package's folder, and the package only when that fails.
    """
    bindings = sys.modules.get(_BINDINGS) or _load_bindings()
    if bindings is None:  # pragma: no cover - a bpe-openai laid out otherwise: the package's own way
        import bpe_openai  # noqa: PLC0415 - loaded only when a count is needed

        return bpe_openai.get_encoding(ENCODING)._backend  # noqa: SLF001 - the Rust tokenizer it wraps
    return bindings.tokenizer_for_encoding(ENCODING)


_BINDINGS = "bpe_openai._bindings"


def _load_bindings() -> Any:
    """bpe-openai's extension module, loaded without running its package's ``__init__`` (None when not found)."""
    package = importlib.util.find_spec("bpe_openai")
    folders = list(package.submodule_search_locations or []) if package else []
    found = sorted(f for folder in folders for f in Path(folder).glob("_bindings*") if f.suffix in {".so", ".pyd"})
    if not found:  # pragma: no cover - see _encoding
        return None
    loader = importlib.machinery.ExtensionFileLoader(_BINDINGS, str(found[0]))
    spec = importlib.util.spec_from_file_location(_BINDINGS, found[0], loader=loader)
    if spec is None:  # pragma: no cover - see _encoding
        return None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    sys.modules[_BINDINGS] = module  # one copy: a later ``import bpe_openai`` finds it
    return module


def load() -> None:
    """Load the tokenizer now (``toolcat build --watch`` does before a build forks its worker, which then has it)."""
    _encoding()


def _count(text: str) -> int:
    """Tokens of one piece (under a million characters), as ``len(bpe_openai.get_encoding(...).encode(text))``.

    Two differences from the package's ``encode``: special-token names (``<|endoftext|>``) in a text are counted
    as the plain text they are, where ``encode`` raises; and a piece over 200,000 tokens is counted, where
    ``encode`` raises. A lone surrogate is replaced first, as ``encode`` does.
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return len(_encoding().encode(text))


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


def _sections(text: str) -> list[str]:
    """``text`` cut before each level-1 or level-2 heading (:data:`HEADING_CUT`); one piece when it has none."""
    starts = [0, *(match.end() for match in HEADING_CUT.finditer(text))]
    return [text[start:end] for start, end in zip(starts, [*starts[1:], len(text)], strict=True)]


def count_tokens(text: str) -> int:
    """How many o200k_base tokens ``text`` costs (remembered by a hash of the text: see :func:`begin`).

    A text over :data:`CHUNK_CHARS` is counted as its sections (:func:`_sections`), each remembered on its own;
    a section still over it in pieces cut after a newline (:func:`_chunks`).
    """
    if not text:
        return 0
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=KEY_BYTES).digest()
    count = _known.get(key)
    if count is None:
        if len(text) <= CHUNK_CHARS:
            count = _count(text)
        else:
            sections = _sections(text)
            if len(sections) > 1:
                count = sum(count_tokens(section) for section in sections)
            else:
                count = sum(_count(piece) for piece in _chunks(text))
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


def token_counter_version() -> str:
    """The encoding and the counter's package version: what a count kept from another build depends on."""
    return _header().decode("utf-8").strip()


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
