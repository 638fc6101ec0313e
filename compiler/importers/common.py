"""What every importer shares: the error, the result, grouped warnings, deterministic YAML and the swap into ``--out``.

An importer gathers every file it will write as ``{relative path: text}`` and hands it to
:func:`write_tree`, which writes into a temporary folder beside ``--out`` and swaps it in
only when everything was written: a failed import leaves ``--out`` as it was. The folder
``_import/`` (ignored by ``toolcat build``, like every folder starting with ``_``) holds
the importer's state (``import.json``: the ids it gave, so re-imports keep them) and the
author's ``overrides.yaml``, which survives every re-import.
"""

from __future__ import annotations

import json
import logging
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..format.errors import ToolcatError
from ..format.types import Json

log = logging.getLogger(__name__)


STATE_DIR = "_import"
STATE_FILE = "import.json"
OVERRIDES_FILE = "overrides.yaml"
#: Fields an ``overrides.yaml`` entry may not change: the id is the key the entry is found by.
OVERRIDE_FORBIDDEN = frozenset({"id"})
#: How many places a grouped warning names before saying "and N more".
WARNING_EXAMPLES = 3
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

__all__ = [
    "ImportResult",
    "ImporterError",
    "Warnings",
    "dump_yaml",
    "read_overrides",
    "read_state",
    "segment",
    "snake",
    "summary_of",
    "write_tree",
]


class ImporterError(ToolcatError):
    """A source that cannot be imported: the message names the file, the JSON pointer and the fix."""


class Warnings:
    """Lossy steps, grouped by what was lost, each with the JSON pointers where it happened."""

    def __init__(self) -> None:
        self._places: dict[str, list[str]] = {}

    def add(self, what: str, where: str) -> None:
        """Record that ``what`` happened at the JSON pointer ``where``."""
        places = self._places.setdefault(what, [])
        if where not in places:
            places.append(where)

    def __len__(self) -> int:
        return sum(len(p) for p in self._places.values())

    def lines(self) -> list[str]:
        """One line per kind of loss: what, how often, and the first places."""
        out = []
        for what, places in sorted(self._places.items()):
            shown = ", ".join(places[:WARNING_EXAMPLES])
            more = f" and {len(places) - WARNING_EXAMPLES} more" if len(places) > WARNING_EXAMPLES else ""
            count = f"{len(places)} places: " if len(places) > 1 else ""
            out.append(f"{what} ({count}{shown}{more})")
        return out


_BaseDumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc]  # libyaml's dumper when present: 10x faster on large specs
    """Multi-line strings as ``|`` blocks, so imported descriptions stay readable; no anchors for shared values."""

    def ignore_aliases(self, data: Any) -> bool:  # noqa: ARG002 - a value used twice is written twice
        """Never write ``&id001`` anchors: authors read and diff these files."""
        return True


def _str(dumper: Any, value: str) -> Any:
    style = "|" if "\n" in value and all(line == line.rstrip() for line in value.splitlines()) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def dump_yaml(value: Any) -> str:
    """Deterministic, readable YAML (keys in the order given)."""
    return str(yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100))


def snake(name: str) -> str:
    """``getFileById`` → ``get_file_by_id``; ``admin.apps.approve`` → ``admin_apps_approve``."""
    return segment(_CAMEL.sub("_", name))


def read_state(out: Path) -> Json:
    """The state a previous import left in ``out`` (``{}`` when there is none or it is unreadable)."""
    try:
        data = json.loads((out / STATE_DIR / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def read_overrides(out: Path) -> tuple[Json, str | None]:
    """The author's ``_import/overrides.yaml`` in ``out`` as ``{tools: {...}, nodes: {...}}``, and its text."""
    path = out / STATE_DIR / OVERRIDES_FILE
    if not path.is_file():
        return {}, None
    text = path.read_text(encoding="utf-8")
    try:
        data = yaml.safe_load(text) or {}
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        raise ImporterError(
            f"{path}{where}: not valid YAML ({getattr(exc, 'problem', exc)}); fix it or move it away, then import again"
        ) from None
    if not isinstance(data, dict) or not set(data) <= {"tools", "nodes"}:
        raise ImporterError(
            f"{path}: expected a mapping with 'tools' (tool id -> fields) and/or 'nodes' (folder -> title/summary/tags)"
        )
    for key in ("tools", "nodes"):
        entries = data.get(key) or {}
        if not isinstance(entries, dict) or not all(isinstance(v, dict) for v in entries.values()):
            raise ImporterError(f"{path}: '{key}' must map names to mappings of fields")
        for name, fields in entries.items():
            bad = OVERRIDE_FORBIDDEN & set(fields)
            if bad:
                raise ImporterError(f"{path}: {key}.{name}: '{min(bad)}' cannot be overridden (it is the key)")
    return data, text


def apply_overrides(tools_by_id: dict[str, Json], nodes: dict[str, Json], overrides: Json, warnings: Warnings) -> None:
    """Merge the author's fields over the generated ones (a field set to null removes it)."""
    for kind, table in (("tools", tools_by_id), ("nodes", nodes)):
        for name, fields in (overrides.get(kind) or {}).items():
            target = table.get(str(name))
            if target is None:
                warnings.add(f"_import/overrides.yaml names a {kind[:-1]} the spec no longer has", str(name))
                continue
            for key, value in fields.items():
                if value is None:
                    target.pop(key, None)
                else:
                    target[key] = value


def write_tree(out: Path, files: dict[str, str], *, force: bool = False) -> None:
    """Write ``files`` as the whole content of ``out``, swapped in at the end; ``_import/overrides.yaml`` is kept.

    ``out`` must be absent, empty, or written by a previous import (it has ``_import/import.json``);
    anything else needs ``force``, since the swap removes what the folder held.
    """
    if out.exists() and not out.is_dir():
        raise ImporterError(f"--out {out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / STATE_DIR / STATE_FILE).is_file() and not force:
        raise ImporterError(
            f"--out {out}: the folder holds files no import wrote; an import replaces the whole "
            "folder, so choose an empty or new folder, or pass --force to replace it"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.import-tmp-{os.getpid()}"
    old = out.parent / f".{out.name}.import-old-{os.getpid()}"
    for stale in (tmp, old):
        if stale.exists():
            shutil.rmtree(stale)
    try:
        for rel, text in sorted(files.items()):
            target = tmp / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        kept = out / STATE_DIR / OVERRIDES_FILE
        if kept.is_file():
            (tmp / STATE_DIR).mkdir(parents=True, exist_ok=True)
            shutil.copy2(kept, tmp / STATE_DIR / OVERRIDES_FILE)
        if out.exists():
            out.rename(old)
        tmp.rename(out)
    except BaseException:
        if old.exists() and not out.exists():
            old.rename(out)
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)


def node_file(title: str, summary: str, tags: list[str]) -> Json:
    """A ``_node.yaml`` mapping."""
    return {"title": title, "summary": summary_of(summary, title), "tags": tags}


SUMMARY_MAX_CHARS = 160


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'(\[])")


_INVALID = re.compile(r"[^a-z0-9_]+")


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import wrote."""

    path: Path
    namespace: str
    count: int
    tool_ids: tuple[str, ...]
    warnings: tuple[str, ...] = field(default_factory=tuple)


def segment(text: str) -> str:
    """A valid id segment: lowercase, other characters → ``_``, starting with a letter."""
    out = _INVALID.sub("_", text.strip().lower()).strip("_") or "tool"
    out = re.sub(r"_{2,}", "_", out)
    return out if out[0].isalpha() else f"t_{out}"


def summary_of(description: str, fallback: str) -> str:
    """The first sentence of ``description`` on one line (cut at a word when long)."""
    text = " ".join(description.split())
    if not text:
        return fallback
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) > SUMMARY_MAX_CHARS:
        first = first[:SUMMARY_MAX_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return first
