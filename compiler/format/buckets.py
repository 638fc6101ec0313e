"""Lookup buckets (format layer, stdlib only): which bucket file holds a name.

The build splits its name → spec lookup (and the prompt snippets) into ``buckets`` files;
the manifest names the rule as ``"hash": "sha256-hex8-mod"`` (docs/format.md). The builder
and every reader use this one definition.
"""

from __future__ import annotations

import hashlib

#: The value of ``hash`` next to ``buckets`` in the manifest: the rule :func:`lookup_bucket` follows.
LOOKUP_HASH = "sha256-hex8-mod"


def lookup_bucket(key: str, buckets: int) -> int:
    """Which lookup bucket holds ``key``: the first 8 hex digits of its sha256, modulo the count."""
    return int(hashlib.sha256(key.encode("utf-8")).hexdigest()[:8], 16) % buckets
