"""Canonical bytes and hashes: sorted keys, compact separators, UTF-8, no timestamps."""

from __future__ import annotations

import hashlib
import json
from typing import Any


def dumps(obj: Any) -> bytes:
    """The one JSON encoding every artifact uses, so equal data gives equal bytes.

    NaN and Infinity are refused (ValueError): they are not JSON, and JavaScript's ``JSON.parse``
    rejects an artifact holding them. The sources are checked for them first (toolcat.build.sources.parse).
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def sha256(data: bytes) -> str:
    """Hex sha256 of some bytes."""
    return hashlib.sha256(data).hexdigest()
