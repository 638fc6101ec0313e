"""Check one Agent Skill folder against the Agent Skills specification.

Spec violations are errors; the common extra frontmatter keys are warnings (errors
under ``--strict``). Deliberate differences from the reference validator
(``skills-ref``) are listed in docs/sources.md. The frontmatter is read and located as
an agent's is (:mod:`toolcat.build.sources.frontmatter`).
"""

from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ...format.json_paths import child_path
from ...format.names import MAX_SKILL_NAME, RULES, SKILL_NAME, resource_path_problem
from ..errors import Diagnostic, Severity
from .frontmatter import FrontmatterChecker, first_sentence, read_frontmatter
from .parse import (
    MAX_SKILL_BYTES,
    MAX_SKILL_RESOURCE_BYTES,
    MAX_SOURCE_BYTES,
    SourceFileError,
    file_diagnostic,
    parse_file,
    read_source,
    symlink_error,
)
from .skill_meta import ARGUMENTS_FIELD, META_FIELDS, TaskArguments, meta_field, read_arguments, read_skill_meta

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_NAME",
    "SKILL_FILES",
    "SPEC_FIELDS",
    "SkillResult",
    "TaskArguments",
    "check_skill",
    "media_type",
    "resources_of",
    "skill_tool_id",
]

log = logging.getLogger(__name__)

MAX_NAME = MAX_SKILL_NAME
MAX_COMPATIBILITY = 500
SPEC_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}


@dataclass(slots=True)
class SkillResult:
    """A checked skill: its normalised record (None when invalid) and diagnostics."""

    record: dict[str, Any] | None = None
    diagnostics: list[Diagnostic] = field(default_factory=list)


def skill_tool_id(name: str) -> str:
    """``code-reviewer`` → ``task.code_reviewer``."""
    return "task." + name.replace("-", "_")


def check_skill(root: Path, skill_dir: Path, node_path: tuple[str, ...]) -> SkillResult:
    """Check the skill in ``skill_dir`` (which holds SKILL.md) found under ``node_path``."""
    result = SkillResult()
    rel_dir = skill_dir.relative_to(root).as_posix()
    loaded = read_frontmatter(root, skill_dir / "SKILL.md", result.diagnostics)
    if loaded is None:
        return result
    checker = loaded.checker
    #: SKILL.md's own frontmatter as JSON (YAML dates and other non-JSON scalars as text), before metadata.yaml
    authored = json.loads(json.dumps(loaded.meta, ensure_ascii=False, default=str))
    meta = _with_metadata_yaml(root, skill_dir, loaded.meta, checker)
    if meta is None:
        return result
    errors_before = checker.error_count()
    name = _name(meta, skill_dir.name, checker)
    description = checker.description(meta, "what the skill does and when to use it", "the SKILL.md body")
    compatibility = _compatibility(meta, checker)
    license_ = _license(meta, checker)
    string_metadata = _string_metadata(meta, checker)
    allowed_tools = _allowed_tools(meta, checker)
    skill_meta = read_skill_meta(meta, checker.add, checker.text_of)
    arguments = read_arguments(meta, checker.add)
    task_id_at = (
        checker.locate(found[1]) if "task_id" in skill_meta and (found := meta_field(meta, "task_id")) else None
    )
    extras = _extra_fields(meta, set(loaded.meta), checker)
    if checker.error_count() > errors_before:
        return result
    resources = resources_of(root, skill_dir, rel_dir, result)
    if resources is None:
        return result
    task_id, version, tags = (skill_meta.pop(k, None) for k in ("task_id", "version", "tags"))
    result.record = {
        "id": task_id or skill_tool_id(name),
        #: where task_id is written ([file, line]), when the skill sets one
        "task_id_at": list(task_id_at) if task_id_at else None,
        "version": version,
        "meta": skill_meta,  # author, capabilities, constraints, tools
        "name": name,
        "summary": first_sentence(description),
        "description": " ".join(description.split()),
        "frontmatter": {
            "name": name,
            "description": " ".join(description.split()),
            **({"license": license_} if license_ else {}),
            **({"compatibility": compatibility} if compatibility else {}),
            **({"metadata": string_metadata} if string_metadata else {}),
            **({"allowed-tools": " ".join(allowed_tools)} if allowed_tools else {}),
        },
        "extras": dict(sorted(extras.items())),
        "body": loaded.body.strip() + "\n",
        #: SKILL.md's bytes as authored: served as the skill's file (Skills extension), digests over them
        "markdown": loaded.raw,
        "markdown_frontmatter": authored,
        "resources": resources,
        "tags": tags or [],
        "path": node_path,
        "file": f"{rel_dir}/SKILL.md",
        "arguments": arguments,
    }
    return result


def _with_metadata_yaml(
    root: Path, skill_dir: Path, meta: dict[str, Any], checker: FrontmatterChecker
) -> dict[str, Any] | None:
    """The frontmatter with ``metadata.yaml``'s fields beneath it (the frontmatter wins); None when it is refused.

    The keys only metadata.yaml holds have their diagnostics located there (``checker.beside``).
    """
    metadata_file = skill_dir / "metadata.yaml"
    if not os.path.lexists(metadata_file):
        return meta
    rel = f"{skill_dir.relative_to(root).as_posix()}/metadata.yaml"
    meta_parsed = parse_file(metadata_file, MAX_SOURCE_BYTES, root)
    if isinstance(meta_parsed, list):
        checker.diagnostics.extend(meta_parsed)
        return None
    extra_meta = meta_parsed.data or {}
    if not isinstance(extra_meta, dict):
        checker.diagnostics.append(
            Diagnostic(
                Severity.ERROR,
                rel,
                "metadata.yaml must be a mapping",
                line=1,
                json_path="$",
                expected="a mapping of 004's fields (author, version, tags, ...)",
                got=type(extra_meta).__name__,
                code="wrong_type",
            )
        )
        return None
    beside = FrontmatterChecker(rel, meta_parsed, checker.diagnostics)
    checker.beside = (beside, frozenset(str(k) for k in extra_meta if k not in meta))
    return {**extra_meta, **meta}


def _name(meta: dict[str, Any], folder: str, checker: FrontmatterChecker) -> str:
    """``name``: required, within the length and naming rule, equal to the skill's folder."""
    name = checker.required_text(meta, "name", "the skill name, equal to the folder name", f"Add 'name: {folder}'.")
    name = name.strip()
    if not name:
        return ""
    checker.length("name", name, MAX_NAME, "Shorten the name (and the folder).")
    if not SKILL_NAME.fullmatch(name):  # the length has its own message above
        fixed = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.lower())).strip("-")
        checker.bad_name(
            name,
            f"name {name!r} breaks the Agent Skills naming rule",
            f"Use {fixed!r} (and rename the folder to match).",
        )
    checker.name_matches(name, folder, "folder", "The spec requires the folder to be named exactly as the skill.")
    return name


def _license(meta: dict[str, Any], checker: FrontmatterChecker) -> str | None:
    """``license``: a string (another scalar is kept as text, with a warning)."""
    license_ = meta.get("license")
    if license_ is None or isinstance(license_, str):
        return license_
    checker.not_a_string("license", license_, Severity.WARNING)
    return str(license_)


def _compatibility(meta: dict[str, Any], checker: FrontmatterChecker) -> Any:
    """``compatibility``: a string of at most :data:`MAX_COMPATIBILITY` characters."""
    compatibility = meta.get("compatibility")
    if compatibility is None:
        return None
    if not isinstance(compatibility, str):
        checker.not_a_string("compatibility", compatibility)
    else:
        checker.length("compatibility", compatibility, MAX_COMPATIBILITY)
    return compatibility


def _string_metadata(meta: dict[str, Any], checker: FrontmatterChecker) -> dict[str, str]:
    """``metadata``: a map of strings to strings (a nested value is kept as JSON text, with a warning)."""
    metadata = meta.get("metadata")
    if metadata is None:
        return {}
    if not isinstance(metadata, dict):
        checker.add(
            Severity.ERROR,
            "$.metadata",
            "metadata must be a map of strings to strings",
            expected="a mapping",
            got=type(metadata).__name__,
            code="wrong_type",
        )
        return {}
    strings: dict[str, str] = {}
    for key, value in metadata.items():
        if isinstance(value, (dict, list)):
            checker.add(
                Severity.WARNING,
                child_path("$.metadata", key),
                "metadata values should be strings; this nested value is kept as JSON text",
                code="metadata_value",
                hint="Flatten it to a string.",
            )
            strings[str(key)] = json.dumps(value, ensure_ascii=False, sort_keys=True)
        elif value is None:
            strings[str(key)] = ""
        else:
            strings[str(key)] = checker.text_of(child_path("$.metadata", key), value)
    return strings


def _allowed_tools(meta: dict[str, Any], checker: FrontmatterChecker) -> list[str]:
    """``allowed-tools``: a space-delimited string (a list or commas are read, with a warning)."""
    allowed = meta.get("allowed-tools")
    if allowed is None:
        return []
    if isinstance(allowed, list):
        checker.add(
            Severity.WARNING,
            "$.allowed-tools",
            "allowed-tools is a YAML list; the spec says a space-delimited string",
            code="allowed_tools_form",
            hint=f"Write: allowed-tools: {' '.join(map(str, allowed))}",
        )
        return [str(a).strip() for a in allowed]
    if not isinstance(allowed, str):
        checker.not_a_string("allowed-tools", allowed)
        return []
    if "," not in allowed:
        return allowed.split()
    checker.add(
        Severity.WARNING,
        "$.allowed-tools",
        "allowed-tools is comma-separated; the spec says space-delimited",
        code="allowed_tools_form",
        hint="Separate the tools with spaces.",
    )
    return [a.strip() for a in allowed.split(",") if a.strip()]


def _extra_fields(meta: dict[str, Any], frontmatter_keys: set[Any], checker: FrontmatterChecker) -> dict[str, Any]:
    """The keys that are no Agent Skills field, each with a warning saying where it belongs."""
    extras = {k: v for k, v in meta.items() if k not in SPEC_FIELDS}
    for key in sorted(extras):
        if key == ARGUMENTS_FIELD and key in frontmatter_keys:  # read, but not portable in SKILL.md itself
            checker.add(
                Severity.WARNING,
                child_path("$", key),
                "'arguments' is not an Agent Skills frontmatter field",
                code="extra_field",
                hint="Move it into metadata.yaml beside SKILL.md to keep the skill portable; toolcat reads it there "
                "too (metadata: only holds strings).",
            )
        elif key in frontmatter_keys:  # 004's fields (META_FIELDS) are read, but other skill readers reject them
            checker.add(
                Severity.WARNING,
                child_path("$", key),
                f"'{key}' is not an Agent Skills frontmatter field",
                code="extra_field",
                hint=f"Move it under metadata (metadata: {{{key}: ...}}) to keep the skill portable"
                + ("; toolcat reads it there too (a list as one 'a, b' string)." if key in META_FIELDS else "."),
            )
        elif key not in (*META_FIELDS, ARGUMENTS_FIELD):  # metadata.yaml is 004's place for its fields
            checker.add(
                Severity.WARNING,
                child_path("$", key),
                f"'{key}' in metadata.yaml is neither an Agent Skills field nor one of 004's; it is ignored",
                code="extra_field",
                hint=f"Known fields: {', '.join(sorted({*SPEC_FIELDS, *META_FIELDS, ARGUMENTS_FIELD}))}.",
            )
    return extras


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


def _bad_resource_name(rel_dir: str, rel: str, problem: str) -> Diagnostic:
    """A bundled file whose name no reader accepts (a newline, a backslash, ...): located at its skill folder."""
    return Diagnostic(
        Severity.ERROR,
        rel_dir,
        f"bundled file {rel!r} cannot be published: {problem}",
        expected=RULES["resource path"],
        got=repr(rel),
        code="bad_resource_name",
        hint="Rename the file to plain letters, digits, '-', '_' and '.'; readers refuse such names, "
        "so `toolcat site` and agents could not read the build.",
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
        if (bad_name := resource_path_problem(rel)) is not None:
            result.diagnostics.append(_bad_resource_name(rel_dir, rel, bad_name))
            refused = True
            continue
        problem = _over_total(file, root, total)
        if problem is None:
            try:
                data = read_source(file, MAX_SKILL_RESOURCE_BYTES, root)
            except SourceFileError as exc:
                problem = exc
        if problem is not None:
            result.diagnostics.append(file_diagnostic(f"{rel_dir}/{rel}", problem))
            refused = True
            continue
        total += len(data)
        resources.append({"rel_path": rel, "data": data, "media_type": media_type(rel)})
    return None if refused else resources
