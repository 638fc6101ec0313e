"""Check one agent definition (seed 004's ``AGENT.md``) and turn it into a skill-like catalogue entry.

An agent is a Markdown file with YAML frontmatter, in either of the two forms Claude Code and 004 use:

* ``agents/<name>.md``: one file in a folder named ``agents`` (at any depth of the catalogue);
* ``<any folder>/<name>/AGENT.md``: a folder, which may bundle files beside it (level 3), as a skill does.

The frontmatter needs ``name`` (the file stem or the folder name, by the Agent Skills naming rule) and
``description``; ``tools`` (a list or Claude Code's ``Read, Grep`` string), ``model``, ``color`` and 004's
``version``, ``author``, ``tags``, ``capabilities``, ``constraints``, ``task_id`` and ``arguments`` (the task's
inputs, as a skill declares them: :func:`toolcat.build.sources.skill_meta.read_arguments`) are read; other keys
are warnings. The body is the agent's system prompt.

The result has the shape of a skill record (:func:`toolcat.build.sources.skills.check_skill`), so the
catalogue serves an agent exactly as a skill: ``agent.<name>`` (``task_id`` may choose another id, e.g.
``task.explore`` as 004 maps agents), level 1 the frontmatter, level 2 the body, level 3 the bundled
files, loaded only on demand. Its records say ``type: agent`` (a skill's say ``skill``), so a host can hand
the task to its sub-agent runner. ``model`` and ``color`` are kept as frontmatter ``metadata`` strings, with
``entry: agent`` saying what the record is.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

from ...format.agent_tools import model_problem, tool_entry_problem
from ...format.json_paths import child_path
from ...format.names import skill_name_problem
from ..errors import Severity
from .frontmatter import FrontmatterChecker, first_sentence, read_frontmatter
from .skill_meta import ARGUMENTS_FIELD, META_FIELDS, meta_field, read_arguments, read_skill_meta
from .skills import SkillResult, resources_of

__all__ = ["AGENTS_FOLDER", "AGENT_FIELDS", "AGENT_FILE", "agent_tool_id", "check_agent", "is_agent_file"]

log = logging.getLogger(__name__)

AGENT_FILE = "AGENT.md"
AGENTS_FOLDER = "agents"
#: Frontmatter keys of an agent besides 004's META_FIELDS: Claude Code's subagent fields and the task arguments.
AGENT_FIELDS = frozenset({"name", "description", "model", "color", ARGUMENTS_FIELD})
#: Markdown files in an ``agents`` folder that describe the folder rather than an agent.
NOT_AGENTS = frozenset({"README.md", "readme.md", "index.md"})


def agent_tool_id(name: str) -> str:
    """``code-explorer`` → ``agent.code_explorer``."""
    return "agent." + name.replace("-", "_")


def is_agent_file(entry: Path, node_path: tuple[str, ...]) -> bool:
    """Whether ``entry`` (a file in the folder at ``node_path``) is an ``agents/<name>.md`` agent."""
    return bool(node_path) and node_path[-1] == AGENTS_FOLDER and entry.suffix == ".md" and entry.name not in NOT_AGENTS


def _name(meta: dict[str, Any], expected: str, checker: FrontmatterChecker) -> str:
    """``name``: required, by the one naming rule, equal to the agent's file stem or folder."""
    name = checker.required_text(meta, "name", f"the agent's name, {expected!r}", f"Add 'name: {expected}'.").strip()
    if not name:
        return ""
    if skill_name_problem(name) is not None:  # the one naming rule (format/names.py), matched whole
        checker.bad_name(
            name, f"agent name {name!r} breaks the naming rule", "Rename the agent (and its file or folder) to match."
        )
    else:
        checker.name_matches(
            name, expected, "file or folder", "Name the file <name>.md (or the folder <name>/) exactly as the agent."
        )
    return name


def _settings(meta: dict[str, Any], checker: FrontmatterChecker) -> dict[str, str]:
    """``model`` and ``color`` as metadata strings, and a warning for every key neither form reads."""
    settings = {"entry": "agent"}
    for key in ("model", "color"):
        value = meta.get(key)
        if value is not None:
            settings[key] = checker.text_of(child_path("$", key), value)
    if "model" in settings and (problem := model_problem(settings["model"])) is not None:
        severity, message = problem
        checker.add(
            Severity.ERROR if severity == "error" else Severity.WARNING,
            "$.model",
            message,
            expected="one line naming a model, e.g. sonnet or claude-sonnet-4-5",
            got=repr(settings["model"])[:80],
            code="bad_agent_model",
            hint="A sub-agent runner reads model as one name; anything else could smuggle settings into it.",
        )
    for key in sorted(set(meta) - AGENT_FIELDS - set(META_FIELDS) - {"metadata"}):
        checker.add(
            Severity.WARNING,
            child_path("$", str(key)),
            f"'{key}' is not an agent field; it is ignored",
            code="extra_field",
            hint=f"Agent fields: {', '.join(sorted({*AGENT_FIELDS, *META_FIELDS}))}.",
        )
    return settings


def _check_tools(meta: dict[str, Any], checker: FrontmatterChecker) -> None:
    """Each entry of ``tools``: a known tool, a rule that does not grant everything, one line (issue 36)."""
    found = meta_field(meta, "tools")
    if found is None:
        return
    value, path = found
    entries = [part.strip() for part in value.split(",")] if isinstance(value, str) else value
    if not isinstance(entries, list):
        return  # read_skill_meta reported the wrong type
    for index, entry in enumerate(entries):
        problem = tool_entry_problem(entry)
        if problem is None:
            continue
        severity, message, hint = problem
        checker.add(
            Severity.ERROR if severity == "error" else Severity.WARNING,
            f"{path}[{index}]" if isinstance(value, list) else path,
            message,
            expected="Read, Bash(git diff:*), mcp__server__tool or a catalogue tool id such as file.read",
            got=repr(entry)[:80],
            code="bad_agent_tool",
            hint=hint,
        )


def check_agent(root: Path, entry: Path, node_path: tuple[str, ...]) -> SkillResult:
    """Check the agent at ``entry`` (``agents/<name>.md``, or a folder holding ``AGENT.md``) under ``node_path``."""
    result = SkillResult()
    folder = entry.is_dir()
    file = entry / AGENT_FILE if folder else entry
    rel = file.relative_to(root).as_posix()
    loaded = read_frontmatter(root, file, result.diagnostics)
    if loaded is None:
        return result
    meta, body, checker, _ = loaded  # an agent is served from its parts; its AGENT.md bytes are not stored
    name = _name(meta, entry.name if folder else entry.stem, checker)
    description = " ".join(
        checker.description(meta, "what the agent does and when to hand it a task", "the body").split()
    )
    settings = _settings(meta, checker)
    extra = read_skill_meta(meta, checker.add, checker.text_of)
    _check_tools(meta, checker)
    arguments = read_arguments(meta, checker.add)
    if checker.error_count():
        return result
    resources: list[dict[str, Any]] | None = []
    if folder:
        rel_dir = entry.relative_to(root).as_posix()
        resources = resources_of(root, entry, rel_dir, result)
        if resources is None:
            return result
        resources = [r for r in resources if r["rel_path"] != AGENT_FILE]
    task_id, version, tags = (extra.pop(k, None) for k in ("task_id", "version", "tags"))
    return SkillResult(
        record={
            "id": task_id or agent_tool_id(name),
            "task_id_at": list(checker.locate("$.task_id")) if task_id and "task_id" in meta else None,
            "version": version,
            "meta": extra,  # author, capabilities, constraints, tools
            "name": name,
            "summary": first_sentence(description),
            "description": description,
            "frontmatter": {"name": name, "description": description, "metadata": settings},
            "extras": {},
            "body": body.strip() + "\n",
            "resources": resources,
            "tags": sorted({*(tags or []), "agent"}),
            "path": node_path,
            "file": rel,
            "kind": "agent",
            "arguments": arguments,
        },
        diagnostics=result.diagnostics,
    )
