"""Walk ``catalog_src/``: folders become nodes, YAML/JSON files tools, SKILL.md folders skills, AGENT.md files agents.

Agents (``agents/<name>.md`` and ``<name>/AGENT.md``, :mod:`toolcat.build.sources.agents`) are loaded
beside the skills and served the same way.

Loading only reads and checks files one at a time; cross-file rules are applied by
:mod:`toolcat.build.sources.assemble`. A tools file's result depends only on its bytes, so it is
looked up in (and added to) the cache the caller passes in.
"""

from __future__ import annotations

import hashlib
import logging
import multiprocessing
import os
import re
import threading
from collections.abc import Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...format.canonical import sha256
from ...format.json_paths import child_path
from ..config import BuildConfig, read_config
from ..errors import CatalogError, Diagnostics
from ..progress import report
from .git import load_git_skills
from .kinds import CONFIG_FILES, KINDS, TOOL_SUFFIXES, Entry
from .parse import (
    MAX_SOURCE_BYTES,
    SourceFileError,
    file_diagnostic,
    parse_file,
    read_source,
    symlink_error,
)
from .skills import SkillResult
from .tools import FileResult, check_tools_file

log = logging.getLogger(__name__)

NODE_FILE = "_node.yaml"
#: Tools files are checked in worker processes (fork, at most this many) once there is this much to check;
#: below it the start-up costs more than it saves. Each file's result is a pure function of its bytes.
PARALLEL_CHECK_BYTES = 1 << 20
MAX_CHECK_WORKERS = 4
NODE_FIELDS = {"title", "summary", "tags"}


@dataclass(slots=True)
class NodeRecord:
    """A folder of the source tree, with what its ``_node.yaml`` says."""

    path: tuple[str, ...]
    title: str
    summary: str
    tags: list[str]
    file: str


@dataclass(slots=True)
class Loaded:
    """Everything read from the sources, before cross-file checks."""

    nodes: list[NodeRecord] = field(default_factory=list)
    tool_files: dict[str, FileResult] = field(default_factory=dict)
    tool_paths: dict[str, tuple[str, ...]] = field(default_factory=dict)
    skills: list[SkillResult] = field(default_factory=list)
    file_hashes: dict[str, str] = field(default_factory=dict)
    diagnostics: Diagnostics = field(default_factory=Diagnostics)
    #: ``skills_from`` entries fetched from Git (url, commit, path, into, skills), for the manifest.
    git_sources: list[dict[str, Any]] = field(default_factory=list)


def _walk(root: Path) -> Iterator[tuple[Path, bool]]:
    """Every regular file (False) and symbolic link (True) under ``root``, sorted; links are never followed."""
    found: list[tuple[Path, bool]] = []
    for folder, dirs, files in os.walk(root):  # os.walk does not descend into linked folders
        base = Path(folder)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]  # .git can be huge
        found.extend((base / name, True) for name in dirs if (base / name).is_symlink())
        for name in files:
            path = base / name
            if path.is_symlink():
                found.append((path, True))
            elif path.is_file():
                found.append((path, False))
    for path, is_link in sorted(found):
        if not path.name.startswith("."):
            yield path, is_link


def source_files(root: Path) -> Iterator[Path]:
    """Every regular file that can affect a build, sorted; symbolic links are not followed."""
    for path, is_link in _walk(root):
        if not is_link:
            yield path


def _file_digest(path: Path) -> str:
    try:
        with path.open("rb") as handle:  # streamed: an oversized file is refused later, not held in memory here
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError as exc:  # unreadable: the loader reports it where it matters
        return f"unreadable:{exc.errno}"


def fingerprint(root: Path) -> tuple[str, dict[str, str]]:
    """A hash over every source file's relative path and bytes, plus the per-file hashes.

    A symbolic link counts by where it points (it is not followed), so adding one is a change:
    the next build is never "up to date" with it, and the loader refuses it.
    """
    hashes = {
        path.relative_to(root).as_posix(): "symlink:" + sha256(os.fsencode(path.readlink()))
        if is_link
        else _file_digest(path)
        for path, is_link in _walk(root)
    }
    joined = "\n".join(f"{rel}\0{digest}" for rel, digest in sorted(hashes.items()))
    return sha256(joined.encode("utf-8", "surrogateescape")), hashes


def _titleize(name: str) -> str:
    return re.sub(r"[-_]+", " ", name).strip().title() or "Catalogue"


def _read_node(root: Path, folder: Path, path: tuple[str, ...], diags: Diagnostics) -> NodeRecord:
    rel = (folder / NODE_FILE).relative_to(root).as_posix()
    record = NodeRecord(path, _titleize(path[-1] if path else root.name), "", [], rel)
    file = folder / NODE_FILE
    if not os.path.lexists(file):
        return record
    parsed = parse_file(file, MAX_SOURCE_BYTES, root)
    if isinstance(parsed, list):
        diags.extend(parsed)
        return record
    data = parsed.data or {}
    if not isinstance(data, dict):
        diags.error(
            rel,
            "_node.yaml must be a mapping",
            expected="title, summary, tags",
            got=type(data).__name__,
            line=1,
            code="wrong_type",
        )
        return record
    for key in sorted(set(data) - NODE_FIELDS):
        line, column = parsed.where(child_path("$", key))
        diags.warning(
            rel,
            f"unknown node field '{key}' is ignored",
            line=line,
            column=column,
            json_path=child_path("$", key),
            code="unknown_field",
            hint="Node fields: title, summary, tags.",
        )
    for key in ("title", "summary"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            line, column = parsed.where(child_path("$", key))
            diags.error(
                rel,
                f"'{key}' must be a string",
                line=line,
                column=column,
                json_path=child_path("$", key),
                expected="a string",
                got=type(value).__name__,
                code="wrong_type",
            )
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        line, column = parsed.where("$.tags")
        diags.error(
            rel, "'tags' must be a list of strings", line=line, column=column, json_path="$.tags", code="wrong_type"
        )
        tags = []
    if isinstance(data.get("title"), str) and data["title"].strip():
        record.title = data["title"].strip()
    if isinstance(data.get("summary"), str):
        record.summary = " ".join(data["summary"].split())
    record.tags = sorted(set(tags))
    return record


def _read_tools_file(root: Path, entry: Path, rel: str, cache: dict[str, Any]) -> FileResult | tuple[str, bytes]:
    """A tools file's result when it is already known (unreadable, or cached by hash), else ``(digest, bytes)``."""
    try:
        data = read_source(entry, MAX_SOURCE_BYTES, root)
    except SourceFileError as exc:
        return FileResult(diagnostics=[file_diagnostic(rel, exc)])
    digest = sha256(data)  # of the bytes checked, even if the file changed since the fingerprint
    cached = cache.get(digest)
    if cached is not None and cached[0] == rel:
        return cached[1]  # type: ignore[no-any-return]
    return digest, data


def _check_tools_bytes(rel: str, data: bytes) -> FileResult:
    """Check one tools file's bytes (a pure function of them: it runs in a worker process for large builds)."""
    return check_tools_file(rel, data)


def fork_is_safe() -> bool:
    """Whether this process may fork workers: the ``fork`` start method, and no other thread running.

    Forking a threaded process (a server that rebuilds) is unsafe; the build's workers are forks, so they
    inherit what they need instead of having it pickled (:func:`_check_all`, :func:`toolcat.build.parallel.run_beside`).
    """
    return multiprocessing.get_start_method(allow_none=False) == "fork" and threading.active_count() == 1


def _check_all(pending: dict[str, bytes]) -> dict[str, FileResult]:
    """Check the tools files that were not cached: on every core when there is enough to share (same results)."""
    total = sum(len(data) for data in pending.values())
    workers = min(MAX_CHECK_WORKERS, os.cpu_count() or 1, len(pending))
    report("check", 0, len(pending))
    if workers < 2 or total < PARALLEL_CHECK_BYTES or not fork_is_safe():
        rels = list(pending)
        results: Iterable[FileResult] = (_check_tools_bytes(rel, pending[rel]) for rel in rels)
        return _counted(rels, results)
    rels = sorted(pending, key=lambda r: -len(pending[r]))  # largest first: the pool finishes evenly
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return _counted(rels, pool.map(_check_tools_bytes, rels, [pending[r] for r in rels], chunksize=4))


def _counted(rels: list[str], results: Iterable[FileResult]) -> dict[str, FileResult]:
    """The results by file, reporting the ``check`` phase as each one arrives."""
    checked: dict[str, FileResult] = {}
    for rel, result in zip(rels, results, strict=True):
        checked[rel] = result
        report("check", len(checked), len(rels))
    return checked


class Walk:
    """One walk of the source tree: what the source kinds (:mod:`toolcat.build.sources.kinds`) record into."""

    def __init__(self, root: Path, cache: dict[str, Any], out: Loaded) -> None:
        self.root = root
        self.out = out
        self._cache = cache
        self._stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
        self._subfolders: list[tuple[Path, tuple[str, ...]]] = []
        self.pending: dict[str, bytes] = {}  # tools files to check: rel → bytes
        self.digests: dict[str, str] = {}
        self.tools_files = sum(
            1
            for rel in out.file_hashes
            if Path(rel).suffix in TOOL_SUFFIXES and Path(rel).name != NODE_FILE and rel not in CONFIG_FILES
        )

    def descend(self, folder: Path, path: tuple[str, ...]) -> None:
        """Walk ``folder`` (the node at ``path``) after the current folder's entries, in name order."""
        self._subfolders.append((folder, path))

    def add_tools_file(self, entry: Entry) -> None:
        """A tools file: its cached result, or its bytes queued for checking (keeping the walk's order)."""
        known = _read_tools_file(self.root, entry.path, entry.rel, self._cache)
        if isinstance(known, FileResult):
            self.out.tool_files[entry.rel] = known
        else:
            self.digests[entry.rel], self.pending[entry.rel] = known
            self.out.tool_files[entry.rel] = FileResult()  # filled in once checked
        self.out.tool_paths[entry.rel] = entry.node
        if len(self.out.tool_files) < self.tools_files:  # the phase ends once, in load()
            report("load", len(self.out.tool_files), self.tools_files)

    def run(self) -> None:
        """Visit every folder depth-first in name order, dispatching each entry to the first kind that claims it."""
        while self._stack:
            folder, path = self._stack.pop()
            self.out.nodes.append(_read_node(self.root, folder, path, self.out.diagnostics))
            self._subfolders = []
            for entry in self._entries(folder, path):
                kind = next((kind for kind in KINDS if kind.claims(entry)), None)
                if kind is not None:
                    kind.read(entry, self)
            self._stack.extend(reversed(self._subfolders))

    def _entries(self, folder: Path, path: tuple[str, ...]) -> Iterator[Entry]:
        """The folder's entries for the kinds: hidden files and ``_node.yaml`` skipped, links refused here."""
        for item in sorted(folder.iterdir(), key=lambda p: p.name):
            if item.name.startswith(".") or item.name in {"__pycache__", NODE_FILE}:
                continue
            rel = item.relative_to(self.root).as_posix()
            if item.is_symlink():
                self.out.diagnostics.extend([file_diagnostic(rel, symlink_error(item, self.root))])
                continue
            yield Entry(item, rel, path, item.is_dir())


def load(
    root: Path,
    cache: dict[str, Any] | None = None,
    config: BuildConfig | None = None,
    *,
    file_hashes: dict[str, str] | None = None,
) -> Loaded:
    """Read and check every source under ``root``; ``cache`` maps file hash → checked result.

    Each entry goes to the source kind that claims it (:mod:`toolcat.build.sources.kinds`). Reports the
    ``load`` phase per tools file read and the ``check`` phase per file checked (:mod:`toolcat.build.progress`).
    ``file_hashes``: :func:`fingerprint`'s per-file hashes when the caller has them (a build does: hashing 10,000
    tools' sources again cost 0.03-0.04 CPU-s of a one-tool edit, issue 33).
    """
    if not root.is_dir():
        raise CatalogError(
            f"source folder {str(root)!r} does not exist or is not a folder. "
            "Pass the folder holding your catalogue sources (default: catalog_src)."
        )
    cache = cache if cache is not None else {}
    out = Loaded()
    out.file_hashes = file_hashes if file_hashes is not None else fingerprint(root)[1]
    walk = Walk(root, cache, out)
    report("load", 0, walk.tools_files)
    walk.run()
    report("load", len(out.tool_files), len(out.tool_files))
    for rel, result in _check_all(walk.pending).items():
        out.tool_files[rel] = result
        cache[walk.digests[rel]] = (rel, result)
    _add_git_skills(config if config is not None else read_config(root), out)
    out.nodes.sort(key=lambda n: n.path)
    return out


def _add_git_skills(config: BuildConfig, out: Loaded) -> None:
    """The skills ``skills_from`` pins in the settings (:mod:`toolcat.build.sources.git`), and their nodes."""
    fetched = load_git_skills(config)
    out.skills.extend(fetched.skills)
    out.diagnostics.extend(fetched.diagnostics)
    out.git_sources = fetched.provenance
    known = {node.path for node in out.nodes}
    for into in fetched.nodes:
        for depth in range(1, len(into) + 1):
            if into[:depth] not in known:
                known.add(into[:depth])
                out.nodes.append(NodeRecord(into[:depth], _titleize(into[depth - 1]), "", [], fetched.config))
