"""The site's input: a build folder's artifacts read from ``catalog.json`` down, each checked against its sha256.

``catalog.json`` → manifest → node shards (and their pages) → tool specs → skill bodies and
resources; every file reachable from the manifest is read through the reader's own folder
source (clean paths, size cap, no symlinks) and kept, so the site can publish exactly the
bytes it verified. Names that become file names, URLs and HTML ids must look like the ones
``toolcat build`` writes.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import FORMAT_VERSION
from ..build.errors import BuildError
from ..build.progress import report
from ..format.envelope import ReaderError
from ..format.index_format import proven_docs
from ..format.refs import page_refs
from ..format.types import Ref
from ..format.vector_format import PROVEN_ROW_FORMATS, proven_checked, proven_rows, proven_tables
from ..reader.fetch.folder import FolderSource

log = logging.getLogger(__name__)

NodePath = tuple[str, ...]

ENTRY = "catalog.json"
#: Where the verified copy of the build's current version lives inside the site.
ARTIFACTS_DIR = "artifacts"


@dataclass(frozen=True, slots=True)
class NodeData:
    """One ontology node as its shard (and its extra pages) describe it."""

    path: NodePath
    title: str
    summary: str
    tags: tuple[str, ...]
    children: tuple[dict[str, Any], ...]
    pointers: tuple[dict[str, Any], ...]
    tool_count: int


@dataclass(frozen=True, slots=True)
class SkillData:
    """A skill's level-2 body and level-3 resources, as published."""

    name: str
    frontmatter: dict[str, Any]
    body: str
    body_ref: Ref
    resources: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class BuildData:
    """Everything the site shows, read and verified from one build folder."""

    entry: dict[str, Any]
    manifest: dict[str, Any]
    nodes: dict[NodePath, NodeData]
    specs: dict[str, dict[str, Any]]
    spec_refs: dict[str, Ref]
    skills: dict[str, SkillData]
    #: Every file reachable from the manifest (verified), by its path relative to the build.
    files: dict[str, bytes] = field(default_factory=dict)


def _is_ref(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("path"), str)
        and isinstance(value.get("sha256"), str)
        and isinstance(value.get("bytes"), int)
    )


def _refs_in(value: Any) -> Iterator[Ref]:
    """Every ref anywhere inside a JSON value (a list or object holds one only if it holds an object)."""
    if isinstance(value, dict):
        if _is_ref(value):
            yield value
        for item in value.values():
            if isinstance(item, (dict, list)):
                yield from _refs_in(item)
    elif isinstance(value, list):
        for item in value:
            if isinstance(item, (dict, list)):
                yield from _refs_in(item)


class _VerifiedFiles:
    """Reads files of a build folder by ref, checking size and sha256 against the ref."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.source = FolderSource(root)
        self.files: dict[str, bytes] = {}
        self.parsed: dict[str, Any] = {}

    def read(self, ref: Ref, *, held_by: str) -> bytes:
        path: str = ref["path"]
        if path in self.files:
            return self.files[path]
        try:  # the reader's own folder source: clean ref paths, size cap, no symlinks, sha256
            data = self.source.fetch(ref)
        except ReaderError as err:
            what = "integrity check failed" if err.code == "INTEGRITY" else "cannot be read"
            raise BuildError(
                f"{self.root / path}: {what}: {err.message} (held by {held_by}); "
                "rebuild the catalogue with `toolcat build --force`"
            ) from None
        self.files[path] = data
        return data

    def json(self, ref: Ref, *, held_by: str) -> Any:
        path = ref["path"]
        if path not in self.parsed:
            try:
                self.parsed[path] = json.loads(self.read(ref, held_by=held_by))
            except ValueError as exc:
                raise BuildError(
                    f"{self.root / path}: not valid JSON ({exc}); rebuild with `toolcat build --force`"
                ) from exc
        return self.parsed[path]

    def mirror(self, start: Ref, *, held_by: str) -> None:
        """Read every file reachable from ``start``, following refs inside JSON artifacts."""
        pending: list[tuple[Ref, str]] = [(start, held_by)]
        proven: dict[str, dict[str, Any]] = {}  # a toolcat-vectors-10 row table's group folder -> the table
        while pending:
            ref, holder = pending.pop()
            if ref["path"] in self.files:
                continue
            if ref["path"].endswith(".json"):
                obj = self.json(ref, held_by=holder)
                pending.extend((inner, ref["path"]) for inner in _refs_in(obj))
                if isinstance(obj, dict):
                    pending.extend((inner, ref["path"]) for inner in self._mirror_proven(ref["path"], obj, proven))
            else:
                self.read(ref, held_by=holder)

    def _mirror_proven(self, path: str, obj: dict[str, Any], proven: dict[str, dict[str, Any]]) -> list[Ref]:
        """Read the proven files a JSON artifact at ``path`` names; the refs of a (non-proven) page's files.

        An index meta's doc shards (``toolcat-index-4``); a vectors meta's row table noted in ``proven`` by group
        folder (``toolcat-vectors-10``), whose groups list their pages' roots: their row files are read here; a
        ``toolcat-vectors-11`` meta's groups and cluster shards (:meth:`_mirror_tables`).
        """
        if obj.get("artifact") == "index_meta":  # toolcat-index-4: the doc shards carry their paths
            for doc in proven_docs(obj):
                self.read_proven(doc, held_by=path)
        if obj.get("artifact") == "vectors_meta" and obj.get("format") in PROVEN_ROW_FORMATS:
            proven[str(obj["tools"]["rows"]["group_folder"])] = obj["tools"]["rows"]
        if obj.get("artifact") == "vectors_meta":  # toolcat-vectors-11: its groups and cluster shards carry their paths
            self._mirror_tables(path, obj, proven)
        if obj.get("artifact") != "index_pages":
            return []
        table = proven.get(path.rsplit("/", 1)[0])
        if table is None:  # a paged table's files
            return list(page_refs(obj))
        for row in proven_rows(table, obj):  # its pages' roots: their row files
            self.read_proven(row, held_by=path)
        return []

    def _mirror_tables(self, path: str, meta: dict[str, Any], proven: dict[str, dict[str, Any]]) -> None:
        """Read a ``toolcat-vectors-11`` meta's row groups and cluster shards, and each group's row files."""
        for ref in proven_tables(meta):
            data = self.read_proven(ref, held_by=path)
            table = proven.get(str(ref["path"]).rsplit("/", 1)[0])
            if table is not None:  # a group: its pages' roots, their row files
                for row in proven_rows(table, json.loads(data)):
                    self.read_proven(row, held_by=str(ref["path"]))

    def read_proven(self, ref: dict[str, Any], *, held_by: str) -> bytes:
        """Read a proven file, used once its Merkle path leads to its page's root.

        ``ref`` is ``{path, max_bytes, root, place, per_page}``: ``toolcat-vectors-10``'s row files and
        ``toolcat-index-4``'s doc shards, ``toolcat-vectors-11``'s row groups and cluster shards. Returns its bytes.
        """
        path = str(ref["path"])
        try:
            data = self.source.fetch({"path": path, "max_bytes": ref["max_bytes"]})
            proven_checked(data, ref)
        except (ReaderError, ValueError) as err:
            raise BuildError(
                f"{self.root / path}: integrity check failed: {err} (held by {held_by}); "
                "rebuild the catalogue with `toolcat build --force`"
            ) from None
        self.files[path] = data
        return data


#: Names that become page file names, URL paths and HTML ids; ``toolcat build`` only writes names like these.
_SAFE_NAMES = {
    "node name": re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*"),
    "tool id": re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*"),
    "skill name": re.compile(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*"),
}


def _check_name(kind: str, value: Any, held_by: str) -> str:
    if not isinstance(value, str) or len(value) > 128 or not _SAFE_NAMES[kind].fullmatch(value):
        raise BuildError(
            f"{held_by}: {kind} {value!r} is not one toolcat builds (it becomes a file name, URL and "
            "HTML id on the site); rebuild the catalogue with `toolcat build --force`"
        )
    return value


def read_build(build_dir: Path) -> BuildData:
    """Read and verify the current version of the build in ``build_dir``."""
    entry_path = build_dir / ENTRY
    try:
        entry = json.loads(entry_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BuildError(f"{entry_path}: no build here ({exc.strerror}); run `toolcat build` first") from exc
    except ValueError as exc:
        raise BuildError(f"{entry_path}: not valid JSON ({exc}); rebuild with `toolcat build --force`") from exc
    if not isinstance(entry, dict) or entry.get("artifact") != "catalog" or not _is_ref(entry.get("manifest")):
        raise BuildError(f"{entry_path}: not a toolcat entry point (expected artifact 'catalog' with a manifest ref)")
    if entry.get("format_version") != FORMAT_VERSION:
        raise BuildError(
            f"{entry_path}: format_version {entry.get('format_version')!r}, this toolcat reads {FORMAT_VERSION}; "
            "rebuild the catalogue with this toolcat version"
        )
    files = _VerifiedFiles(build_dir)
    files.mirror(entry["manifest"], held_by=ENTRY)
    manifest = files.json(entry["manifest"], held_by=ENTRY)

    nodes: dict[NodePath, NodeData] = {}
    specs: dict[str, dict[str, Any]] = {}
    spec_refs: dict[str, Ref] = {}
    skills: dict[str, SkillData] = {}
    pending: list[tuple[Ref, str]] = [(manifest["root"], entry["manifest"]["path"])]
    counts = manifest.get("counts") if isinstance(manifest.get("counts"), dict) else {}
    expected = int(counts.get("tools", 0) or 0) + int(counts.get("skills", 0) or 0)
    report("site read", 0, expected)
    while pending:
        ref, holder = pending.pop()
        shard = files.json(ref, held_by=holder)
        path = tuple(_check_name("node name", part, ref["path"]) for part in shard["path"])
        if path in nodes:
            continue
        pointers = list(shard["tools"])
        for page_ref in shard.get("pages", []):
            pointers.extend(files.json(page_ref, held_by=ref["path"])["tools"])
        nodes[path] = NodeData(
            path,
            shard.get("title", ""),
            shard.get("summary", ""),
            tuple(shard.get("tags", [])),
            tuple(shard.get("children", [])),
            tuple(pointers),
            int(shard.get("tool_count", 0)),
        )
        pending.extend((child["ref"], ref["path"]) for child in reversed(shard.get("children", [])))
        for pointer in pointers:
            tool_id = _check_name("tool id", pointer["tool_id"], ref["path"])
            if tool_id in specs:
                continue
            spec = files.json(pointer["spec"], held_by=ref["path"])
            specs[tool_id] = spec
            spec_refs[tool_id] = pointer["spec"]
            if len(specs) < expected:
                report("site read", len(specs), expected)
            skill = spec.get("skill")
            if skill:
                _check_name("skill name", skill["name"], pointer["spec"]["path"])
                body = files.read(skill["body"], held_by=pointer["spec"]["path"]).decode("utf-8")
                skills[skill["name"]] = SkillData(
                    skill["name"],
                    dict(skill.get("frontmatter", {})),
                    body,
                    skill["body"],
                    tuple(skill.get("resources", [])),
                )
    log.info(
        "read build %s: %d nodes, %d tools, %d files verified",
        manifest.get("registry_version"),
        len(nodes),
        len(specs),
        len(files.files),
    )
    report("site read", len(specs), len(specs))
    return BuildData(
        entry, manifest, dict(sorted(nodes.items())), dict(sorted(specs.items())), spec_refs, skills, files.files
    )
