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
from ...format.names import MAX_NODE_NAME, RULES, node_name_problem
from ..config import CONFIG_FILES  # the build's settings (read by config.py), not tools files
from ..errors import CatalogError, Diagnostics
from ..progress import report
from .agents import AGENT_FILE, check_agent, is_agent_file
from .git import load_git_skills
from .parse import (
    MAX_SOURCE_BYTES,
    SourceFileError,
    file_diagnostic,
    parse_file,
    read_source,
    symlink_error,
)
from .skills import SkillResult, check_skill
from .tools import FileResult, check_tools_file

log = logging.getLogger(__name__)

NODE_FILE = "_node.yaml"
RESERVED_ROOT_DIRS = {"evals"}
TOOL_SUFFIXES = (".yaml", ".yml", ".json")
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


def load(root: Path, cache: dict[str, Any] | None = None) -> Loaded:
    """Read and check every source under ``root``; ``cache`` maps file hash → checked result.

    Reports the ``load`` phase per tools file read and the ``check`` phase per file checked
    (:mod:`toolcat.build.progress`).
    """
    if not root.is_dir():
        raise CatalogError(
            f"source folder {str(root)!r} does not exist or is not a folder. "
            "Pass the folder holding your catalogue sources (default: catalog_src)."
        )
    cache = cache if cache is not None else {}
    out = Loaded()
    _, out.file_hashes = fingerprint(root)
    tools_files = sum(
        1
        for rel in out.file_hashes
        if Path(rel).suffix in TOOL_SUFFIXES and Path(rel).name != NODE_FILE and rel not in CONFIG_FILES
    )
    report("load", 0, tools_files)
    pending: dict[str, bytes] = {}  # tools files to check: rel → bytes
    digests: dict[str, str] = {}
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, path = stack.pop()
        out.nodes.append(_read_node(root, folder, path, out.diagnostics))
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
        subfolders: list[tuple[Path, tuple[str, ...]]] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name in {"__pycache__", NODE_FILE}:
                continue
            rel = entry.relative_to(root).as_posix()
            if entry.is_symlink():
                out.diagnostics.extend([file_diagnostic(rel, symlink_error(entry, root))])
                continue
            if entry.is_dir():
                if name.startswith("_") or (not path and name in RESERVED_ROOT_DIRS):
                    continue
                if os.path.lexists(entry / AGENT_FILE):  # an agent (seed 004), served like a skill
                    out.skills.append(check_agent(root, entry, path))
                    continue
                if os.path.lexists(entry / "SKILL.md"):
                    out.skills.append(check_skill(root, entry, path))
                    continue
                if (entry / "skill.md").is_file():
                    out.diagnostics.warning(
                        f"{rel}/skill.md",
                        "skill file is named skill.md; it is skipped",
                        code="skill_filename",
                        hint="Rename it to SKILL.md.",
                    )
                    continue
                if node_name_problem(name) is not None:
                    fixed = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:MAX_NODE_NAME] or "node"
                    out.diagnostics.error(
                        repr(rel)[1:-1],  # a name with a newline would break the diagnostic's line
                        f"folder name {name!r} is not a valid node name",
                        expected=RULES["node name"],
                        got=repr(name),
                        code="bad_node_name",
                        hint=f"Rename the folder to {fixed!r}.",
                    )
                    continue
                subfolders.append((entry, (*path, name)))
            elif is_agent_file(entry, path):
                out.skills.append(check_agent(root, entry, path))
            elif entry.suffix in TOOL_SUFFIXES:
                if not path and name in CONFIG_FILES:  # the catalogue's settings, not tools
                    continue
                known = _read_tools_file(root, entry, rel, cache)
                if isinstance(known, FileResult):
                    out.tool_files[rel] = known
                else:
                    digests[rel], pending[rel] = known
                    out.tool_files[rel] = FileResult()  # keeps the walk's order; filled in below
                out.tool_paths[rel] = path
                if len(out.tool_files) < tools_files:  # the phase ends once, below
                    report("load", len(out.tool_files), tools_files)
        stack.extend(reversed(subfolders))
    report("load", len(out.tool_files), len(out.tool_files))
    for rel, result in _check_all(pending).items():
        out.tool_files[rel] = result
        cache[digests[rel]] = (rel, result)
    _add_git_skills(root, out)
    out.nodes.sort(key=lambda n: n.path)
    return out


def _add_git_skills(root: Path, out: Loaded) -> None:
    """The skills ``skills_from`` pins in ``toolcat.yaml`` (:mod:`toolcat.build.sources.git`), and their nodes."""
    fetched = load_git_skills(root)
    out.skills.extend(fetched.skills)
    out.diagnostics.extend(fetched.diagnostics)
    out.git_sources = fetched.provenance
    known = {node.path for node in out.nodes}
    for into in fetched.nodes:
        for depth in range(1, len(into) + 1):
            if into[:depth] not in known:
                known.add(into[:depth])
                out.nodes.append(NodeRecord(into[:depth], _titleize(into[depth - 1]), "", [], fetched.config))
