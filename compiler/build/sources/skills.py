"""Check one Agent Skill folder against the Agent Skills specification.

Spec violations are errors; the common extra frontmatter keys are warnings (errors
under ``--strict``). Deliberate differences from the reference validator
(``skills-ref``) are listed in docs/sources.md.
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
from .parse import (
    MAX_SKILL_BYTES,
    MAX_SKILL_MD_BYTES,
    MAX_SKILL_RESOURCE_BYTES,
    MAX_SOURCE_BYTES,
    Parsed,
    SourceFileError,
    file_diagnostic,
    parse_bytes,
    parse_file,
    read_source,
    symlink_error,
)
from .skill_meta import ARGUMENTS_FIELD, META_FIELDS, TaskArguments, meta_field, read_arguments, read_skill_meta

__all__ = [
    "MAX_COMPATIBILITY",
    "MAX_DESCRIPTION",
    "MAX_NAME",
    "SKILL_FILES",
    "SPEC_FIELDS",
    "SkillResult",
    "TaskArguments",
    "check_skill",
    "media_type",
    "skill_tool_id",
]

log = logging.getLogger(__name__)

MAX_NAME = MAX_SKILL_NAME
MAX_DESCRIPTION = 1024
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


def _first_sentence(text: str, limit: int = 160) -> str:
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", flat)
    sentence = flat[: match.start()] if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _top_key(json_path: str) -> str | None:
    """``$.metadata.author`` → ``metadata``; ``$["odd key"]`` → ``odd key``; ``$`` → None."""
    rest = json_path[1:]
    if rest.startswith("."):
        return re.split(r"[.\[]", rest[1:], maxsplit=1)[0]
    if rest.startswith('["'):
        end = rest.find('"]')
        return rest[2:end] if end > 0 else None
    return None


class _SkillChecker:
    def __init__(self, rel_md: str, parsed: Parsed | None, result: SkillResult) -> None:
        self.rel = rel_md
        self.parsed = parsed  # lines counted from the top of the file
        self.result = result
        #: metadata.yaml's checker and the top-level keys only it holds: their diagnostics are located there
        self.beside: tuple[_SkillChecker, frozenset[str]] | None = None

    def _owner(self, json_path: str) -> _SkillChecker:
        if self.beside is not None and _top_key(json_path) in self.beside[1]:
            return self.beside[0]
        return self

    def locate(self, json_path: str) -> tuple[str, int | None]:
        """The file (SKILL.md or metadata.yaml) and line that hold ``json_path``."""
        owner = self._owner(json_path)
        line = owner.parsed.where(json_path)[0] if owner.parsed is not None else None
        return owner.rel, line

    def text_of(self, json_path: str, value: Any) -> str:
        """A scalar as written, read from the file that holds it."""
        owner = self._owner(json_path)
        return owner.parsed.text_of(json_path, value) if owner.parsed is not None else str(value)

    def add(self, severity: Severity, json_path: str, message: str, **kw: Any) -> None:
        owner = self._owner(json_path)
        if owner is not self:
            owner.add(severity, json_path, message, **kw)
            return
        line, column = self.parsed.where(json_path) if self.parsed is not None else (None, None)
        self.result.diagnostics.append(
            Diagnostic(severity, self.rel, message, line=line, column=column, json_path=json_path, **kw)
        )


def read_frontmatter(
    root: Path, file: Path, result: SkillResult
) -> tuple[dict[str, Any], str, _SkillChecker, bytes] | None:
    """A Markdown entry's frontmatter mapping, its body, a checker locating diagnostics in ``file``, and its bytes.

    The bytes are the file exactly as its author wrote it (line endings, comments, key order): the build stores
    them for hosts that serve the file itself (the Skills extension's ``SKILL.md``).
    None when the file is refused or its frontmatter is not a mapping (the diagnostics are in ``result``).
    SKILL.md and AGENT.md are read the same way: read once under the same limit, parsed by :func:`parse_bytes`.
    """
    rel = file.relative_to(root).as_posix()
    try:
        raw = read_source(file, MAX_SKILL_MD_BYTES, root)
    except SourceFileError as exc:
        result.diagnostics.append(file_diagnostic(rel, exc))
        return None
    parsed = parse_bytes(rel, raw)
    if isinstance(parsed, list):
        result.diagnostics.extend(parsed)
        return None
    checker = _SkillChecker(file.relative_to(root).as_posix(), parsed, result)
    if not isinstance(parsed.data, dict):
        checker.add(
            Severity.ERROR,
            "$",
            "frontmatter must be a YAML mapping",
            expected="name: ..., description: ...",
            got=type(parsed.data).__name__,
            code="wrong_type",
        )
        return None
    return parsed.data, parsed.body or "", checker, raw


def check_skill(root: Path, skill_dir: Path, node_path: tuple[str, ...]) -> SkillResult:
    """Check the skill in ``skill_dir`` (which holds SKILL.md) found under ``node_path``."""
    result = SkillResult()
    rel_dir = skill_dir.relative_to(root).as_posix()
    rel_md = f"{rel_dir}/SKILL.md"
    loaded = read_frontmatter(root, skill_dir / "SKILL.md", result)
    if loaded is None:
        return result
    meta, body, checker, markdown = loaded
    #: SKILL.md's own frontmatter as JSON (YAML dates and other non-JSON scalars as text), before metadata.yaml
    authored = json.loads(json.dumps(meta, ensure_ascii=False, default=str))

    extra_meta: dict[str, Any] = {}
    metadata_file = skill_dir / "metadata.yaml"
    if os.path.lexists(metadata_file):
        meta_parsed = parse_file(metadata_file, MAX_SOURCE_BYTES, root)
        if isinstance(meta_parsed, list):
            result.diagnostics.extend(meta_parsed)
            return result
        merged = meta_parsed.data or {}
        if not isinstance(merged, dict):
            result.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    f"{rel_dir}/metadata.yaml",
                    "metadata.yaml must be a mapping",
                    line=1,
                    json_path="$",
                    expected="a mapping of 004's fields (author, version, tags, ...)",
                    got=type(merged).__name__,
                    code="wrong_type",
                )
            )
            return result
        extra_meta = merged
        beside = _SkillChecker(f"{rel_dir}/metadata.yaml", meta_parsed, result)
        checker.beside = (beside, frozenset(str(k) for k in extra_meta if k not in meta))
    frontmatter_keys = set(meta)
    meta = {**extra_meta, **meta}  # the frontmatter wins

    errors_before = len([d for d in result.diagnostics if d.severity is Severity.ERROR])
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        checker.add(
            Severity.ERROR,
            "$.name" if "name" in meta else "$",
            "missing or empty 'name'",
            expected="the skill name, equal to the folder name",
            got=repr(name),
            code="missing_field",
            hint=f"Add 'name: {skill_dir.name}'.",
        )
        name = ""
    else:
        name = name.strip()
        if len(name) > MAX_NAME:
            checker.add(
                Severity.ERROR,
                "$.name",
                f"name is {len(name)} characters, over {MAX_NAME}",
                code="name_length",
                hint="Shorten the name (and the folder).",
            )
        if not SKILL_NAME.fullmatch(name):  # the length has its own message above
            fixed = re.sub(r"-+", "-", re.sub(r"[^a-z0-9-]", "-", name.lower())).strip("-")
            checker.add(
                Severity.ERROR,
                "$.name",
                f"name {name!r} breaks the Agent Skills naming rule",
                expected=RULES["skill name"],
                got=repr(name),
                code="bad_skill_name",
                hint=f"Use {fixed!r} (and rename the folder to match).",
            )
        if name != skill_dir.name:
            checker.add(
                Severity.ERROR,
                "$.name",
                f"name {name!r} differs from its folder {skill_dir.name!r}",
                expected=repr(skill_dir.name),
                got=repr(name),
                code="name_folder_mismatch",
                hint="The spec requires the folder to be named exactly as the skill.",
            )
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        checker.add(
            Severity.ERROR,
            "$.description" if "description" in meta else "$",
            "missing or empty 'description'",
            expected="what the skill does and when to use it",
            got=repr(description),
            code="missing_field",
        )
        description = ""
    elif len(description) > MAX_DESCRIPTION:
        checker.add(
            Severity.ERROR,
            "$.description",
            f"description is {len(description)} characters, over {MAX_DESCRIPTION}",
            code="description_length",
            hint="Move detail into the SKILL.md body; keep the description to what and when.",
        )
    compatibility = meta.get("compatibility")
    if compatibility is not None:
        if not isinstance(compatibility, str):
            checker.add(
                Severity.ERROR,
                "$.compatibility",
                "compatibility must be a string",
                got=type(compatibility).__name__,
                code="wrong_type",
            )
        elif len(compatibility) > MAX_COMPATIBILITY:
            checker.add(
                Severity.ERROR,
                "$.compatibility",
                f"compatibility is {len(compatibility)} characters, over {MAX_COMPATIBILITY}",
                code="compatibility_length",
            )
    license_ = meta.get("license")
    if license_ is not None and not isinstance(license_, str):
        checker.add(
            Severity.WARNING, "$.license", "license should be a string", got=type(license_).__name__, code="wrong_type"
        )
        license_ = str(license_)
    metadata = meta.get("metadata")
    string_metadata: dict[str, str] = {}
    if metadata is not None:
        if not isinstance(metadata, dict):
            checker.add(
                Severity.ERROR,
                "$.metadata",
                "metadata must be a map of strings to strings",
                expected="a mapping",
                got=type(metadata).__name__,
                code="wrong_type",
            )
        else:
            for key, value in metadata.items():
                if isinstance(value, (dict, list)):
                    checker.add(
                        Severity.WARNING,
                        child_path("$.metadata", key),
                        "metadata values should be strings; this nested value is kept as JSON text",
                        code="metadata_value",
                        hint="Flatten it to a string.",
                    )
                    string_metadata[str(key)] = json.dumps(value, ensure_ascii=False, sort_keys=True)
                elif value is None:
                    string_metadata[str(key)] = ""
                else:
                    string_metadata[str(key)] = checker.text_of(child_path("$.metadata", key), value)
    allowed = meta.get("allowed-tools")
    allowed_tools: list[str] = []
    if allowed is not None:
        if isinstance(allowed, list):
            checker.add(
                Severity.WARNING,
                "$.allowed-tools",
                "allowed-tools is a YAML list; the spec says a space-delimited string",
                code="allowed_tools_form",
                hint=f"Write: allowed-tools: {' '.join(map(str, allowed))}",
            )
            allowed_tools = [str(a).strip() for a in allowed]
        elif isinstance(allowed, str):
            if "," in allowed:
                checker.add(
                    Severity.WARNING,
                    "$.allowed-tools",
                    "allowed-tools is comma-separated; the spec says space-delimited",
                    code="allowed_tools_form",
                    hint="Separate the tools with spaces.",
                )
                allowed_tools = [a.strip() for a in allowed.split(",") if a.strip()]
            else:
                allowed_tools = allowed.split()
        else:
            checker.add(
                Severity.ERROR,
                "$.allowed-tools",
                "allowed-tools must be a string",
                got=type(allowed).__name__,
                code="wrong_type",
            )
    skill_meta = read_skill_meta(meta, checker.add, checker.text_of)
    arguments = read_arguments(meta, checker.add)
    task_id_at = (
        checker.locate(found[1]) if "task_id" in skill_meta and (found := meta_field(meta, "task_id")) else None
    )
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

    if len([d for d in result.diagnostics if d.severity is Severity.ERROR]) > errors_before:
        return result

    resources = resources_of(root, skill_dir, rel_dir, result)
    if resources is None:
        return result

    frontmatter_out: dict[str, Any] = {"name": name, "description": " ".join(description.split())}
    if license_:
        frontmatter_out["license"] = license_
    if compatibility:
        frontmatter_out["compatibility"] = compatibility
    if string_metadata:
        frontmatter_out["metadata"] = string_metadata
    if allowed_tools:
        frontmatter_out["allowed-tools"] = " ".join(allowed_tools)
    task_id, version, tags = (skill_meta.pop(k, None) for k in ("task_id", "version", "tags"))
    result.record = {
        "id": task_id or skill_tool_id(name),
        #: where task_id is written ([file, line]), when the skill sets one
        "task_id_at": list(task_id_at) if task_id_at else None,
        "version": version,
        "meta": skill_meta,  # author, capabilities, constraints, tools
        "name": name,
        "summary": _first_sentence(description),
        "description": " ".join(description.split()),
        "frontmatter": frontmatter_out,
        "extras": dict(sorted(extras.items())),
        "body": body.strip() + "\n",
        #: SKILL.md's bytes as authored: served as the skill's file (Skills extension), digests over them
        "markdown": markdown,
        "markdown_frontmatter": authored,
        "resources": resources,
        "tags": tags or [],
        "path": node_path,
        "file": rel_md,
        "arguments": arguments,
    }
    return result


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
