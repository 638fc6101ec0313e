"""Gather an Agent Skill's bundled files (level 3 resources), each and all together within their size caps.

Links are refused, never followed; media types come from a fixed extension table.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Diagnostic, Severity
from .parse import MAX_SKILL_BYTES, MAX_SKILL_RESOURCE_BYTES, SourceFileError, read_source, symlink_error

if TYPE_CHECKING:
    from .check_skills import SkillResult

SKILL_FILES = {"SKILL.md", "metadata.yaml"}
MEDIA_TYPES = {
    ".md": "text/markdown",
    ".txt": "text/plain",
    ".py": "text/x-python",
    ".sh": "text/x-shellscript",
    ".json": "application/json",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".js": "text/javascript",
    ".ts": "text/plain",
    ".html": "text/html",
    ".css": "text/css",
    ".csv": "text/csv",
    ".xml": "application/xml",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".gif": "image/gif",
    ".pdf": "application/pdf",
    ".sql": "application/sql",
    ".toml": "application/toml",
}


def media_type(path: str) -> str:
    """A fixed extension table, so builds do not depend on the machine's mime database."""
    return MEDIA_TYPES.get(Path(path).suffix.lower(), "application/octet-stream")


def _resource_paths(skill_dir: Path) -> list[Path]:
    """Every entry of the skill folder below its top level files, links included but never followed."""
    found: list[Path] = []
    for folder, dirs, files in os.walk(skill_dir):
        base = Path(folder)
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        found.extend(base / d for d in dirs if (base / d).is_symlink())  # os.walk lists them, never enters them
        found.extend(base / f for f in files if not f.startswith("."))
    return sorted(found)


def _over_total(file: Path, root: Path, total: int) -> SourceFileError | None:
    """A link, or a file that would take the skill's bundled files over their total cap (checked before reading)."""
    if file.is_symlink():
        return symlink_error(file, root)
    size = file.stat().st_size
    if total + size <= MAX_SKILL_BYTES:
        return None
    limit = f"{MAX_SKILL_BYTES // (1024 * 1024)} MiB"
    return SourceFileError(
        f"the skill's bundled files come to more than the limit of {limit} with this one",
        f"at most {limit} in all",
        f"{total + size:,} bytes",
        "Keep large data out of skills, or split the skill into several.",
        "too_large",
    )


def resources_of(root: Path, skill_dir: Path, rel_dir: str, result: SkillResult) -> list[dict[str, Any]] | None:
    """The bundled files (level 3), each and all together within their caps; None when one is refused."""
    resources: list[dict[str, Any]] = []
    total = 0
    refused = False
    for file in _resource_paths(skill_dir):
        rel = file.relative_to(skill_dir).as_posix()
        if rel in SKILL_FILES:
            continue
        problem = _over_total(file, root, total)
        if problem is None:
            try:
                data = read_source(file, MAX_SKILL_RESOURCE_BYTES, root)
            except SourceFileError as exc:
                problem = exc
        if problem is not None:
            result.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    f"{rel_dir}/{rel}",
                    problem.message,
                    expected=problem.expected,
                    got=problem.got,
                    hint=problem.hint,
                    code=problem.code,
                )
            )
            refused = True
            continue
        total += len(data)
        resources.append({"rel_path": rel, "data": data, "media_type": media_type(rel)})
    return None if refused else resources
