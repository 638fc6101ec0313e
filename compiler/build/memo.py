"""Per-tool results one build hands to the next, so a one-tool edit re-renders one tool, not ten thousand.

A tool's prompt snippets and its provider definitions are functions of its stored spec alone, so they are
kept under the sha256 of that spec (``Ref["sha256"]``, which changes with any field a snippet or a
definition reads); the planner keeps each spec's own ref and token counts under kind ``spec``, keyed by the
sha256 of the spec's ``marshal`` bytes (:func:`toolcat.build.artifacts.payload_key`). The index's and the vectors' texts are kept under kinds ``text`` and ``embed_text``, keyed by
all they read (:func:`toolcat.build.contributors.index.texts.text_key`); node, namespace, lookup, alias and stats
files under ``json`` (:func:`toolcat.build.plan._add_json`). They live beside the build in private files, one per kind (:func:`memo_file`, never
referenced by the manifest), as canonical JSON text, and the next build reads them back only when ``previous`` is set:
:func:`toolcat.build.pipeline._build_locked` sets it only for a build of the same settings, toolcat version and code
fingerprint (templates and adapters included), so a changed template or adapter never reuses an entry.

A missing, unreadable or foreign file only costs time. What is saved is the entries this build used, sorted:
the same sources save the same bytes. Each entry is a line of the file (:func:`_encoded`), so an entry the last
build saved is written back as the text it was read from, not dumped again: a one-tool edit at 10,000 tools
re-encoded 29 MB of snippets and definitions in the forked worker alone (issue 33).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

MEMO_FORMAT = "toolcat-memo-2"
#: Where a spliced list goes in a payload before its items' text is put in (a NUL-wrapped name no key or
#: provider name can hold; warnings, the only free text, come after it in key order).
HOLE = "\x00toolcat-hole\x00"
_HOLE_TEXT = json.dumps(HOLE)
_T = TypeVar("_T")


def memo_file(kind: str) -> str:
    """The private file of one kind of entry (``snippet``, ``export.openai`` ...), beside the build."""
    return f".toolcat-memo.{kind}.json"


class ToolMemo:
    """``get(kind, sha, make)``: the last build's value for this spec, or ``make()``; either is kept for the next.

    One kind is in memory at a time: the last build's entries of a kind are read on its first ``get``, and
    :meth:`close` streams the kind's entries to the staging folder (``stage``, when there is one) and drops
    them, so a 100,000-tool build never holds every tool's snippets and three providers' definitions at once.
    """

    def __init__(self, previous: Path | None = None, stage: Path | None = None) -> None:
        self.previous = previous
        self.stage = stage
        self._old: dict[str, dict[str, Any]] = {}
        #: The last build's line of each entry of a kind (``"sha":value``), written back while the entry is used.
        self._lines: dict[str, dict[str, str]] = {}
        self._new: dict[str, dict[str, Any]] = {}
        self._once: dict[str, dict[str, Any]] = {}
        #: Private files for the next build: name → bytes, or the staged file to link.
        self.files: dict[str, bytes | Path] = {}

    def _last(self, kind: str) -> dict[str, Any]:
        if kind not in self._old:
            self._old[kind] = {}
            self._lines[kind] = {}
            if self.previous is not None:
                try:
                    text = (self.previous / memo_file(kind)).read_bytes().decode("utf-8")
                    data = json.loads(text)
                except (OSError, ValueError):
                    data = None
                if (
                    isinstance(data, dict)
                    and data.get("format") == MEMO_FORMAT
                    and isinstance(data.get("entries"), dict)
                ):
                    self._old[kind] = data["entries"]
                    self._lines[kind] = _lines(text, data["entries"])
        return self._old[kind]

    def get(self, kind: str, sha: str, make: Callable[[], Any]) -> Any:
        """The value kept for (``kind``, ``sha``), made (and kept) when the last build had none."""
        value = self._last(kind).get(sha)
        if value is None:
            value = make()
            self._lines[kind].pop(sha, None)  # a null the last build kept is not this value's line
        self._new.setdefault(kind, {})[sha] = value
        return value

    def get_many(self, kind: str, shas: list[str], make: Callable[[int], Any]) -> list[Any]:
        """:meth:`get` of each of ``shas`` in turn (``make(i)`` makes the value of ``shas[i]``), in one loop."""
        old, new = self._last(kind), self._new.setdefault(kind, {})
        lines = self._lines[kind]
        values = []
        for index, sha in enumerate(shas):
            value = old.get(sha)
            if value is None:
                value = make(index)
                lines.pop(sha, None)
            new[sha] = value
            values.append(value)
        return values

    def once(self, kind: str, key: str, make: Callable[[], _T]) -> _T:
        """``make()`` the first time (``kind``, ``key``) is asked for in this build, then the same value.

        For what several stages of one build need per tool (its pointer, the key of its texts): never saved.
        """
        made = self._once.setdefault(kind, {})
        if key not in made:
            made[key] = make()
        value: _T = made[key]
        return value

    def close(self, kind: str) -> None:
        """Done with ``kind``: its entries (sorted, canonical) become its private file and leave memory."""
        entries = self._new.pop(kind, {})
        self._old.pop(kind, None)
        pieces = _encoded(entries, self._lines.pop(kind, {}))
        if self.stage is None:
            self.files[memo_file(kind)] = "".join(pieces).encode("utf-8")
            return
        path = self.stage / ".memo" / memo_file(kind)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8", newline="") as handle:
            handle.writelines(pieces)
        self.files[memo_file(kind)] = path

    def close_all(self) -> dict[str, bytes | Path]:
        """Close every kind still open; the private files for the next build."""
        for kind in sorted(self._new):
            self.close(kind)
        return self.files


_HEAD = '{"entries":{\n'
_TAIL = '\n},"format":' + json.dumps(MEMO_FORMAT) + "}"
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _line(sha: str, value: Any) -> str:
    """One entry's line: ``"sha":value`` as :func:`toolcat.format.canonical.dumps` writes it in an object."""
    return _ENCODER.encode(sha) + ":" + _ENCODER.encode(value)


def _lines(text: str, entries: dict[str, Any]) -> dict[str, str]:
    """Each entry's line in a memo file's ``text`` (which :func:`_encoded` wrote), by key; {} for any other layout.

    The lines are the entries in the file's order, which ``json.loads`` keeps; a file laid out otherwise (or
    holding a key twice) gives none, and its entries are dumped again when saved.
    """
    if not (text.startswith(_HEAD) and text.endswith(_TAIL)):
        return {}
    body = text[len(_HEAD) : -len(_TAIL)]
    lines = body.split(",\n") if body else []
    if len(lines) != len(entries):
        return {}
    return dict(zip(entries, lines, strict=True))


def _encoded(entries: dict[str, Any], kept: dict[str, str]) -> Iterator[str]:
    """``{"entries": {...}, "format": ...}`` with sorted keys, an entry a line (``kept``: lines read, written back).

    A value the last build had is the value read from its line (the memo's values are never changed in place),
    so its line is what dumping the value gives: the same sources save the same bytes, built afresh or not.
    """
    yield _HEAD
    yield ",\n".join(kept.get(sha) or _line(sha, entries[sha]) for sha in sorted(entries))
    yield _TAIL


def splice(canonical: bytes, items: list[str]) -> bytes:
    """``canonical`` (a payload dumped with :data:`HOLE` where a list goes) with the list of ``items`` put in.

    Each item is the canonical JSON text of one element, so the result is byte for byte what dumping the
    payload with the list itself gives (``tests/test_memo.py``), without dumping the elements again.
    """
    text = canonical.decode("utf-8")
    at = text.index(_HOLE_TEXT)
    return (text[:at] + "[" + ",".join(items) + "]" + text[at + len(_HOLE_TEXT) :]).encode("utf-8")
