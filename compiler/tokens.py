"""Token counts with OpenAI's o200k_base vocabulary (``bpe-openai`` ships it; no download)."""

from __future__ import annotations

import functools
import logging
from typing import Any

log = logging.getLogger(__name__)

ENCODING = "o200k_base"


@functools.cache
def _encoding() -> Any:
    import bpe_openai  # noqa: PLC0415 - loaded only when a count is needed

    return bpe_openai.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """How many o200k_base tokens ``text`` costs."""
    if not text:
        return 0
    return len(_encoding().encode(text))
