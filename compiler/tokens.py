"""Token counts with OpenAI's o200k_base vocabulary (``bpe-openai`` ships it; no download)."""

from __future__ import annotations

import functools
import logging
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
    """How many o200k_base tokens ``text`` costs."""
    if not text:
        return 0
    encoding = _encoding()
    if len(text) <= CHUNK_CHARS:
        return len(encoding.encode(text))
    return sum(len(encoding.encode(piece)) for piece in _chunks(text))
