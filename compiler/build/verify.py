"""Verify a build as a reader would see it: refs resolve, hashes match, JSON validates.

Every JSON artifact is checked against the JSON Schema of its ``artifact`` kind, and the
``args_schema``/``result_schema`` of every tool spec with :func:`toolcat.format.schemaguard.analyse`
(invalid regexes, references that leave the document or loop): what the reader would refuse.

Used by ``toolcat verify`` (run it before a deploy) and by the tests on every real build.
"""

from __future__ import annotations

import functools
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema

from ..engines import schemaguard
from ..format.envelope import ReaderError
from ..format.field_errors import json_path
from ..format.index_format import WordFilter, proven_docs
from ..format.refs import page_refs
from ..format.vector_format import PROVEN_ROW_FORMATS, proven_checked, proven_rows, proven_tables
from ..reader.fetch.folder import FolderSource

log = logging.getLogger(__name__)


@functools.cache
def artifact_schema(kind: str) -> dict[str, Any] | None:
    """The published JSON Schema of an artifact kind (``compiler/format/schemas/<kind>.json``), if any."""
    resource = resources.files("toolcat.format") / "schemas" / f"{kind}.json"
    if not resource.is_file():
        return None
    loaded: dict[str, Any] = json.loads(resource.read_text(encoding="utf-8"))
    return loaded


def schema_kinds() -> list[str]:
    """Every artifact kind that has a published schema."""
    folder = resources.files("toolcat.format") / "schemas"
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def _refs(obj: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    if isinstance(obj, dict):
        if set(obj) == {"path", "sha256", "bytes"} and isinstance(obj["path"], str):
            found.append(obj)
        else:
            for value in obj.values():
                found.extend(_refs(value))
    elif isinstance(obj, list):
        for value in obj:
            found.extend(_refs(value))
    return found


def _page_refs(rel: str, page: dict[str, Any], report: VerifyReport) -> list[dict[str, Any]]:
    """The files a page of a paged table lists (their refs are the page's hashes)."""
    try:
        return page_refs(page)
    except (KeyError, TypeError, ValueError) as exc:
        report.problems.append(f"{rel}: malformed page ({exc!r})")
        return []


@dataclass(slots=True)
class VerifyReport:
    """What :func:`verify_build` found."""

    files_checked: int = 0
    kinds: dict[str, int] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems


def _check_json(rel: str, data: bytes, report: VerifyReport) -> Any:
    try:
        obj = json.loads(data)
    except ValueError as exc:
        report.problems.append(f"{rel}: not valid JSON ({exc})")
        return None
    kind = obj.get("artifact") if isinstance(obj, dict) else None
    if not isinstance(kind, str):
        report.problems.append(f"{rel}: JSON artifact without an 'artifact' kind")
        return obj
    report.kinds[kind] = report.kinds.get(kind, 0) + 1
    schema = artifact_schema(kind)
    if schema is None:
        report.problems.append(
            f"{rel}: no published schema for artifact kind {kind!r} (add compiler/format/schemas/{kind}.json)"
        )
        return obj
    validator = jsonschema.Draft202012Validator(schema, registry=schemaguard.refusing_registry())
    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    if error is not None:
        where = json_path(error.absolute_path)
        report.problems.append(f"{rel}: {where}: {error.message} (schema {kind}.json)")
    if kind == "tool" and isinstance(obj, dict):
        for key in ("args_schema", "result_schema"):
            problems = schemaguard.analyse(obj.get(key), f"$.{key}", warnings=False)
            report.problems.extend(f"{rel}: {p.path}: {p.message}" for p in problems if p.severity == "error")
    return obj


def _fetch(source: FolderSource, ref: dict[str, Any], rel: str, report: VerifyReport) -> bytes | None:
    """The bytes of ``ref`` as the reader reads them, or None with the problem recorded.

    The path must stay inside the build, the read is bounded by the size the ref promises, and
    size and sha256 are checked.
    """
    try:
        return source.fetch(ref)
    except ReaderError as err:
        if err.code == "INTEGRITY" and "expected_sha256" in err.details:
            report.files_checked += 1
            report.problems.append(f"{rel}: sha256/size differ from the ref that points to it (tampered or stale)")
        elif err.code == "UNAVAILABLE" and "is missing" in err.message:
            report.problems.append(f"{rel}: referenced but missing")
        else:
            report.problems.append(f"{rel}: {err.message}")
        return None


def verify_build(out: Path, *, all_versions: bool = True) -> VerifyReport:
    """Walk every file reachable from ``out/catalog.json`` and check it.

    Files are read through the reader's :class:`~toolcat.reader.fetch.folder.FolderSource`, so a ref that
    leaves the build folder, a file larger than its ref, or one whose sha256 differs is reported
    exactly where a reader would refuse it.
    """
    report = VerifyReport()
    source = FolderSource(out)
    try:
        entry_bytes = source.read_entry()
    except ReaderError as err:
        report.problems.append(
            f"{out / 'catalog.json'}: cannot read the entry point ({err.message}); is this a toolcat build folder?"
        )
        return report
    entry = _check_json("catalog.json", entry_bytes, report)
    if not isinstance(entry, dict):
        return report
    queue = [entry["manifest"]] if isinstance(entry.get("manifest"), dict) else []
    if all_versions:
        queue += [v["manifest"] for v in entry.get("versions", []) if isinstance(v, dict) and "manifest" in v]
    seen: set[str] = set()
    terms: dict[str, Any] = {}  # path -> each index_terms file read, for the filters' check
    metas: list[dict[str, Any]] = []
    proven: dict[str, dict[str, Any]] = {}  # a toolcat-vectors-10 row table's group folder -> the table
    while queue:
        ref = queue.pop()
        rel = str(ref.get("path")) if isinstance(ref, dict) else repr(ref)
        if rel in seen:
            continue
        seen.add(rel)
        data = _fetch(source, ref, rel, report)
        if data is None:
            continue
        report.files_checked += 1
        if rel.endswith(".json") and not rel.startswith(("skills/", "providers/")):
            obj = _check_json(rel, data, report)
            queue.extend(_walk_json(source, rel, obj, report, (terms, metas, proven)))
    for meta in metas:
        _check_filters(meta, terms, report)
    return report


def _walk_json(
    source: FolderSource,
    rel: str,
    obj: Any,
    report: VerifyReport,
    noted: tuple[dict[str, Any], list[dict[str, Any]], dict[str, dict[str, Any]]],
) -> list[Any]:
    """The refs one JSON file of the build leads to; the proven files it names (row groups', doc tables') checked here.

    ``noted``: what the walk keeps across files (each index_terms file read, each index meta, the proven row tables).
    """
    terms, metas, proven = noted
    table = proven.get(rel.rsplit("/", 1)[0]) if isinstance(obj, dict) and "nodes" in obj else None
    if table is not None:  # a group of proven row files: it lists its pages' roots, not files
        _check_proven_group(source, rel, obj, table, report)
        return []
    refs = _follow(rel, obj, report, terms, metas)
    _note_proven(obj, proven)
    if isinstance(obj, dict) and obj.get("artifact") == "index_meta":  # toolcat-index-4's proven doc shards
        _check_proven_docs(source, rel, obj, report)
    if isinstance(obj, dict) and obj.get("artifact") == "vectors_meta":  # toolcat-vectors-11's groups, cluster shards
        _check_proven_tables(source, rel, obj, report)
    return refs


def _note_proven(obj: Any, proven: dict[str, dict[str, Any]]) -> None:
    """Keep the row table of a vectors meta whose row files carry proofs (``toolcat-vectors-10``), by group folder."""
    if (
        not isinstance(obj, dict)
        or obj.get("artifact") != "vectors_meta"
        or obj.get("format") not in PROVEN_ROW_FORMATS
    ):
        return
    table = (obj.get("tools") or {}).get("rows")
    if isinstance(table, dict) and isinstance(table.get("group_folder"), str):
        proven[table["group_folder"]] = table


def _proven_refs(rel: str, what: str, refs_of: Callable[[], list[dict[str, Any]]], report: VerifyReport) -> list[Any]:
    """The proven refs ``refs_of()`` gives, or none and a problem naming ``rel`` when its listing is malformed."""
    try:
        return refs_of()
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        report.problems.append(f"{rel}: malformed {what} ({exc!r})")
        return []


def _check_proven_group(
    source: FolderSource, rel: str, group: dict[str, Any], table: dict[str, Any], report: VerifyReport
) -> None:
    """Each row file of a proven group's pages (``toolcat-vectors-10``): :func:`_check_proven`."""
    _check_proven(
        source, _proven_refs(rel, "group of proven row files", lambda: proven_rows(table, group), report), report
    )


def _check_proven_docs(source: FolderSource, rel: str, meta: dict[str, Any], report: VerifyReport) -> None:
    """Each doc shard of a proven doc table (``toolcat-index-4``): :func:`_check_proven`."""
    _check_proven(source, _proven_refs(rel, "proven doc table", lambda: proven_docs(meta), report), report)


def _check_proven_tables(source: FolderSource, rel: str, meta: dict[str, Any], report: VerifyReport) -> None:
    """Each row group and cluster shard of a ``toolcat-vectors-11`` meta (:func:`_check_proven`), and each group's rows."""
    refs = _proven_refs(rel, "proven row groups or cluster table", lambda: proven_tables(meta), report)
    if not refs:
        return
    rows = meta["tools"]["rows"]  # proven_tables read it: a meta with proven refs has it
    for path, group in _check_proven(source, refs, report):
        if path.startswith(f"{rows['group_folder']}/"):
            _check_proven_group(source, path, group, rows, report)


def _check_proven(source: FolderSource, refs: list[dict[str, Any]], report: VerifyReport) -> list[tuple[str, Any]]:
    """Each proven file: read within its bound, its path led to its page's root, then its JSON checked.

    Returns (path, parsed JSON) of each file that checked.
    """
    out = []
    for ref in refs:
        path = str(ref["path"])
        data = _fetch(source, {"path": path, "max_bytes": ref["max_bytes"]}, path, report)
        if data is None:
            continue
        report.files_checked += 1
        try:
            proven_checked(data, ref)
        except ValueError as exc:
            report.problems.append(f"{path}: {exc} (tampered or stale)")
            continue
        out.append((path, _check_json(path, data, report)))
    return out


def _follow(
    rel: str, obj: Any, report: VerifyReport, terms: dict[str, Any], metas: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The refs a JSON artifact leads to (a page's files too); index term shards and metas kept in ``terms``, ``metas``."""
    refs = _refs(obj)
    kind = obj.get("artifact") if isinstance(obj, dict) else None
    if kind == "index_pages":
        refs += _page_refs(rel, obj, report)
    elif kind == "index_terms":
        terms[rel] = obj.get("terms")
    elif kind == "index_meta":
        metas.append(obj)
    return refs


def _check_filters(meta: dict[str, Any], terms: dict[str, Any], report: VerifyReport) -> None:
    """Each space's term filter (``filter``: the words', and a paged chars space's) passes every term its shards hold.

    A filter that lacked a held term would hide it from every search (a reader reads no shard for a term its filter
    says is absent), so a damaged one is reported with the first such term.
    """
    for part in ("tools", "nodes"):
        spaces = meta.get(part, {}).get("spaces") if isinstance(meta.get(part), dict) else None
        for space in spaces if isinstance(spaces, list) else []:
            if not isinstance(space, dict) or "filter" not in space:
                continue
            try:
                held = WordFilter(space["filter"])
            except (KeyError, TypeError, ValueError) as exc:
                report.problems.append(f"index meta: {part}.{space.get('name')} filter is malformed ({exc})")
                continue
            pages = space.get("term_pages")
            paths = (
                [f"{pages['folder']}/{pages['prefix']}{i}.json" for i in range(int(pages["files"]))]
                if isinstance(pages, dict)
                else [shard["ref"]["path"] for shard in space.get("shards", [])]
            )
            for path in paths:
                lacking = next((t for t in terms.get(path) or {} if not held.may_hold(t)), None)
                if lacking is not None:
                    report.problems.append(
                        f"{path}: term {lacking!r} is not in the index meta's {part}.{space.get('name')} filter, so no"
                        " search finds it (a damaged meta: rebuild the catalogue)"
                    )
                    break
