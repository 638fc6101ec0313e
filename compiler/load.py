"""Walk ``catalog_src/``: folders become nodes, YAML/JSON files tools, SKILL.md folders skills.

Loading only reads and checks files one at a time; cross-file rules are applied by
:mod:`compiler.assemble`. A tools file's result depends only on its bytes, so it is
looked up in (and added to) the cache the caller passes in.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from compiler.canonical import sha256
from compiler.check_skills import SkillResult, check_skill
from compiler.check_tools import FileResult, check_tools_file
from compiler.errors import CatalogError, Diagnostic, Diagnostics, Severity
from compiler.parse import DuplicateKeyError, SourceParseError, child_path, parse_text

log = logging.getLogger(__name__)

NODE_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
NODE_FILE = "_node.yaml"
RESERVED_ROOT_DIRS = {"evals"}
TOOL_SUFFIXES = (".yaml", ".yml", ".json")
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


def source_files(root: Path) -> Iterator[Path]:
    """Every file that can affect a build, sorted (used for the input fingerprint)."""
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).parts
        if any(part.startswith(".") or part == "__pycache__" for part in rel):
            continue
        if path.is_file():
            yield path


def fingerprint(root: Path) -> tuple[str, dict[str, str]]:
    """A hash over every source file's relative path and bytes, plus the per-file hashes."""
    hashes = {p.relative_to(root).as_posix(): sha256(p.read_bytes()) for p in source_files(root)}
    joined = "\n".join(f"{rel}\0{digest}" for rel, digest in sorted(hashes.items()))
    return sha256(joined.encode()), hashes


def _titleize(name: str) -> str:
    return re.sub(r"[-_]+", " ", name).strip().title() or "Catalogue"


def _read_node(root: Path, folder: Path, path: tuple[str, ...], diags: Diagnostics) -> NodeRecord:
    rel = (folder / NODE_FILE).relative_to(root).as_posix()
    record = NodeRecord(path, _titleize(path[-1] if path else root.name), "", [], rel)
    file = folder / NODE_FILE
    if not file.exists():
        return record
    try:
        parsed = parse_text(file.read_text(encoding="utf-8"), is_json=False)
    except SourceParseError as exc:
        diags.error(rel, exc.message, line=exc.line, column=exc.column, hint=exc.hint, code="parse")
        return record
    except DuplicateKeyError as exc:
        for json_path, dup_line, dup_column in exc.places:
            diags.error(rel, "duplicate key", line=dup_line, column=dup_column, json_path=json_path,
                        code="duplicate_key")
        return record
    except UnicodeDecodeError as exc:
        diags.error(rel, f"not UTF-8 text: {exc.reason}", code="encoding")
        return record
    data = parsed.data or {}
    if not isinstance(data, dict):
        diags.error(rel, "_node.yaml must be a mapping", expected="title, summary, tags",
                    got=type(data).__name__, line=1, code="wrong_type")
        return record
    for key in sorted(set(data) - NODE_FIELDS):
        line, column = parsed.where(child_path("$", key))
        diags.warning(rel, f"unknown node field '{key}' is ignored", line=line, column=column,
                      json_path=child_path("$", key), code="unknown_field", hint="Node fields: title, summary, tags.")
    for key in ("title", "summary"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            line, column = parsed.where(child_path("$", key))
            diags.error(rel, f"'{key}' must be a string", line=line, column=column, json_path=child_path("$", key),
                        expected="a string", got=type(value).__name__, code="wrong_type")
    tags = data.get("tags") or []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        line, column = parsed.where("$.tags")
        diags.error(rel, "'tags' must be a list of strings", line=line, column=column, json_path="$.tags",
                    code="wrong_type")
        tags = []
    if isinstance(data.get("title"), str) and data["title"].strip():
        record.title = data["title"].strip()
    if isinstance(data.get("summary"), str):
        record.summary = " ".join(data["summary"].split())
    record.tags = sorted(set(tags))
    return record


def load(
    root: Path,
    cache: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> Loaded:
    """Read and check every source under ``root``; ``cache`` maps file hash → checked result.

    ``progress`` is called with the size in bytes of each tools file once it is checked.
    """
    if not root.is_dir():
        raise CatalogError(f"source folder {str(root)!r} does not exist or is not a folder. "
                           "Pass the folder holding your catalogue sources (default: catalog_src).")
    cache = cache if cache is not None else {}
    out = Loaded()
    _, out.file_hashes = fingerprint(root)
    stack: list[tuple[Path, tuple[str, ...]]] = [(root, ())]
    while stack:
        folder, path = stack.pop()
        out.nodes.append(_read_node(root, folder, path, out.diagnostics))
        entries = sorted(folder.iterdir(), key=lambda p: p.name)
        subfolders: list[tuple[Path, tuple[str, ...]]] = []
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "__pycache__":
                continue
            rel = entry.relative_to(root).as_posix()
            if entry.is_dir():
                if name.startswith("_") or (not path and name in RESERVED_ROOT_DIRS):
                    continue
                if (entry / "SKILL.md").is_file():
                    out.skills.append(check_skill(root, entry, path))
                    continue
                if (entry / "skill.md").is_file():
                    out.diagnostics.warning(f"{rel}/skill.md", "skill file is named skill.md; it is skipped",
                                            code="skill_filename", hint="Rename it to SKILL.md.")
                    continue
                if not NODE_NAME.match(name):
                    fixed = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-") or "node"
                    out.diagnostics.error(rel, f"folder name {name!r} is not a valid node name",
                                          expected="lowercase letters, digits, '-' or '_'", got=repr(name),
                                          code="bad_node_name", hint=f"Rename the folder to {fixed!r}.")
                    continue
                subfolders.append((entry, (*path, name)))
            elif entry.suffix in TOOL_SUFFIXES and name != NODE_FILE:
                digest = out.file_hashes.get(rel) or sha256(entry.read_bytes())
                cached = cache.get(digest)
                if cached is None or cached[0] != rel:
                    try:
                        text = entry.read_bytes().decode("utf-8")
                    except UnicodeDecodeError as exc:
                        result = FileResult(diagnostics=[Diagnostic(Severity.ERROR, rel, f"not UTF-8 text: {exc.reason}",
                                                                    code="encoding", hint="Save the file as UTF-8.")])
                    else:
                        result = check_tools_file(rel, text)
                    cache[digest] = (rel, result)
                else:
                    result = cached[1]
                out.tool_files[rel] = result
                out.tool_paths[rel] = path
                if progress:
                    progress(entry.stat().st_size)
        stack.extend(reversed(subfolders))
    out.nodes.sort(key=lambda n: n.path)
    return out
