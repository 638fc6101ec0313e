"""What every importer shares: the error, the result, grouped warnings, deterministic YAML and the swap into ``--out``.

An importer gathers every file it will write as ``{relative path: text}`` and hands it to
:func:`write_tree`, which writes into a temporary folder beside ``--out`` and swaps it in
only when everything was written: a failed import leaves ``--out`` as it was. The folder
``_import/`` (ignored by ``toolcat build``, like every folder starting with ``_``) holds
the importer's state (``import.json``: the ids it gave, so re-imports keep them) and the
author's ``overrides.yaml``, which survives every re-import.

The swap is one step where the kernel offers it (``renameat2(RENAME_EXCHANGE)``, as ``toolcat
build`` does), two renames elsewhere; the next import first puts back an ``--out`` that a crash
between the two renames left aside. An import never replaces a folder it did not write (no
``_import/import.json``) unless told to with ``--force``, and a write that fails (a full disk)
is a diagnostic that leaves ``--out`` as it was.
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

from ..build.write import exchange, recover_aside
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

#: The largest file an importer reads (a spec, a dump, a definitions file).
MAX_IMPORT_BYTES = 64 * 1024 * 1024

__all__ = [
    "ImportResult",
    "ImporterError",
    "Warnings",
    "dump_yaml",
    "read_json",
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


def read_json(path: Path) -> Any:
    """A JSON file read under the build's source limits; every problem is an :class:`ImporterError` naming the file.

    A regular file of at most :data:`MAX_IMPORT_BYTES`; nesting, integer literals and non-finite numbers bounded.
    """
    from ..build.sources.limits import (  # noqa: PLC0415 - only importers that read JSON files need it
        MAX_DEPTH,
        json_int,
        json_too_deep,
        nesting,
        value_problems,
    )

    try:
        if not path.is_file():
            raise ImporterError(f"{path}: not a regular file")
        size = path.stat().st_size
        if size > MAX_IMPORT_BYTES:
            raise ImporterError(f"{path}: {size:,} bytes, more than the {MAX_IMPORT_BYTES:,} an import reads")
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise ImporterError(f"{path}: cannot read it ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        data = json.loads(text, parse_int=json_int)
    except RecursionError:
        too_deep = json_too_deep(text)
        raise ImporterError(f"{path}:{too_deep.line}:{too_deep.column}: {too_deep.message}") from None
    except ValueError as exc:
        where = f":{exc.lineno}:{exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise ImporterError(f"{path}{where}: not valid JSON: {getattr(exc, 'msg', exc)}") from None
    if nesting(data) > MAX_DEPTH:
        too_deep = json_too_deep(text)
        raise ImporterError(f"{path}:{too_deep.line}:{too_deep.column}: {too_deep.message}")
    problems: list[tuple[str, str, str, Any, str]] = []
    value_problems(data, "$", problems)
    if problems:
        where, message, hint, value, _code = problems[0]
        raise ImporterError(f"{path}: at {where}: {message.replace('{text}', repr(value)[:40])}; {hint}")
    return data


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


def recover_out(out: Path) -> list[str]:
    """Put back an ``out`` that a crash between the two renames of a swap left aside; remove stale temporary folders."""
    return recover_aside(out, f".{out.name}.import-tmp-", f".{out.name}.import-old-", "import")


def written_by_import(out: Path) -> bool:
    """True when ``out`` is absent, empty, or was written by a toolcat import (it has ``_import/import.json``)."""
    return not out.is_dir() or not any(out.iterdir()) or (out / STATE_DIR / STATE_FILE).is_file()


def claim_out(out: Path, *, force: bool = False) -> None:
    """Repair what an interrupted import left, then refuse an ``out`` no import wrote (unless ``force``).

    Importers call it before reading ``out``'s state and overrides, and :func:`write_tree` again before the swap.
    """
    try:
        recover_out(out)
    except OSError as exc:
        raise ImporterError(f"--out {out}: cannot repair an interrupted import: {exc.strerror or exc}") from None
    if out.exists() and not out.is_dir():
        raise ImporterError(f"--out {out}: exists and is not a folder")
    if not written_by_import(out) and not force:
        raise ImporterError(
            f"--out {out}: the folder holds sources no import wrote (no {STATE_DIR}/{STATE_FILE}); an import "
            "never replaces them: choose an empty or new folder with --out, or pass --force to replace it"
        )


def write_tree(out: Path, files: dict[str, str], *, force: bool = False) -> None:
    """Write ``files`` as the whole content of ``out``, swapped in at the end; ``_import/overrides.yaml`` is kept.

    ``out`` must be absent, empty, or written by a previous import (it has ``_import/import.json``);
    anything else needs ``force``, since the swap removes what the folder held.
    """
    claim_out(out, force=force)
    tmp = out.parent / f".{out.name}.import-tmp-{os.getpid()}"
    old = out.parent / f".{out.name}.import-old-{os.getpid()}"
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        _fill(tmp, files, out / STATE_DIR / OVERRIDES_FILE)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise ImporterError(
            f"--out {out}: cannot write the imported sources ({exc.strerror or exc}); {out} is unchanged"
        ) from None
    _swap(tmp, out, old)


def _fill(tmp: Path, files: dict[str, str], overrides: Path) -> None:
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    for rel, text in sorted(files.items()):
        target = tmp / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    if overrides.is_file():
        (tmp / STATE_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy2(overrides, tmp / STATE_DIR / OVERRIDES_FILE)


def _swap(tmp: Path, out: Path, old: Path) -> None:
    """``tmp`` becomes ``out`` in one step where the kernel can; a crash between two renames is repaired next time."""
    try:
        if out.exists() and exchange(tmp, out):
            shutil.rmtree(tmp, ignore_errors=True)  # now the previous content
            return
        if out.exists():
            out.rename(old)
        tmp.rename(out)
    except OSError as exc:
        if old.exists() and not out.exists():
            old.rename(out)
        shutil.rmtree(tmp, ignore_errors=True)
        raise ImporterError(
            f"--out {out}: cannot swap the imported sources in ({exc.strerror or exc}); unchanged"
        ) from None
    shutil.rmtree(old, ignore_errors=True)


def node_file(title: str, summary: str, tags: list[str]) -> Json:
    """A ``_node.yaml`` mapping."""
    return {"title": title, "summary": summary_of(summary, title), "tags": tags}


SUMMARY_MAX_CHARS = 160
#: The longest id segment or folder name an import derives from a name (a tag, an operationId, a server name).
SEGMENT_MAX_CHARS = 64


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
    out = _INVALID.sub("_", text[: SEGMENT_MAX_CHARS * 4].strip().lower()).strip("_") or "tool"
    out = re.sub(r"_{2,}", "_", out)
    out = out if out[0].isalpha() else f"t_{out}"
    return out[:SEGMENT_MAX_CHARS].rstrip("_")


def summary_of(description: str, fallback: str) -> str:
    """The first sentence of ``description`` on one line (cut at a word when long)."""
    text = " ".join(description.split())
    if not text:
        return fallback
    first = _SENTENCE_END.split(text, maxsplit=1)[0]
    if len(first) > SUMMARY_MAX_CHARS:
        first = first[:SUMMARY_MAX_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "…"
    return first
