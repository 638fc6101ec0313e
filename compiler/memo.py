"""Per-tool results one build hands to the next, so a one-tool edit re-renders one tool, not ten thousand.

A tool's prompt snippets and its provider definitions are functions of its stored spec alone, so they are
kept under the sha256 of that spec (``Ref["sha256"]``, which changes with any field a snippet or a
definition reads). They live beside the build in a private file (:data:`MEMO_FILE`, never referenced by
the manifest) as canonical JSON text, and the next build reads them back only when ``previous`` is set:
:func:`toolcat.build._build_locked` sets it only for a build of the same settings, toolcat version and code
fingerprint (templates and adapters included), so a changed template or adapter never reuses an entry.

A missing, unreadable or foreign file only costs time. What is saved is the entries this build used, sorted:
the same sources save the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

MEMO_FILE = ".toolcat-memo.json"
MEMO_FORMAT = "toolcat-memo-1"
#: Where a spliced list goes in a payload before its items' text is put in (a NUL-wrapped name no key or
#: provider name can hold; warnings, the only free text, come after it in key order).
HOLE = "\x00toolcat-hole\x00"
_HOLE_TEXT = json.dumps(HOLE)


class ToolMemo:
    """``get(kind, sha, make)``: the last build's value for this spec, or ``make()``; either is kept for the next."""

    def __init__(self, previous: Path | None = None) -> None:
        self._old: dict[str, dict[str, Any]] = {}
        self._new: dict[str, dict[str, Any]] = {}
        self.reused = 0
        self.made = 0
        if previous is None:
            return
        try:
            data = json.loads((previous / MEMO_FILE).read_bytes())
        except (OSError, ValueError):
            return
        if isinstance(data, dict) and data.get("format") == MEMO_FORMAT and isinstance(data.get("entries"), dict):
            self._old = {k: v for k, v in data["entries"].items() if isinstance(v, dict)}

    def get(self, kind: str, sha: str, make: Callable[[], Any]) -> Any:
        """The value kept for (``kind``, ``sha``), made (and kept) when the last build had none."""
        value = self._old.get(kind, {}).get(sha)
        if value is None:
            value = make()
            self.made += 1
        else:
            self.reused += 1
        self._new.setdefault(kind, {})[sha] = value
        return value

    def saved(self) -> bytes:
        """The entries this build used, for the next one (sorted keys: the same build saves the same bytes)."""
        return json.dumps(
            {"format": MEMO_FORMAT, "entries": self._new}, sort_keys=True, separators=(",", ":"), ensure_ascii=False
        ).encode("utf-8")


def splice(canonical: bytes, items: list[str]) -> bytes:
    """``canonical`` (a payload dumped with :data:`HOLE` where a list goes) with the list of ``items`` put in.

    Each item is the canonical JSON text of one element, so the result is byte for byte what dumping the
    payload with the list itself gives (``tests/test_memo.py``), without dumping the elements again.
    """
    text = canonical.decode("utf-8")
    at = text.index(_HOLE_TEXT)
    return (text[:at] + "[" + ",".join(items) + "]" + text[at + len(_HOLE_TEXT) :]).encode("utf-8")
