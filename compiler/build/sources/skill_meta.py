"""004's skill metadata: version, author, capabilities, constraints, tools, the task id and task arguments.

Design 004 writes them at the top level of the SKILL.md frontmatter or in a ``metadata.yaml``
beside it (merged, the frontmatter wins); the Agent Skills spec keeps non-standard keys under
``metadata:`` as strings. Both are read: a top-level key wins over the same key under
``metadata``, and a list may also be written as one comma-separated string
(``capabilities: "code-analysis, bug-detection"``), the only way the spec's string-valued
``metadata`` can hold one.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...format.json_paths import child_path
from ...format.names import tool_id_problem
from ..errors import Severity

#: The keys 004 adds to a skill's frontmatter; toolcat reads them and does not warn about them.
META_FIELDS = ("version", "author", "tags", "capabilities", "constraints", "tools", "task_id")
LIST_FIELDS = ("tags", "capabilities", "constraints", "tools")
MAX_ITEMS = 64
MAX_TEXT = 200

Add = Callable[..., None]


def meta_field(meta: dict[str, Any], key: str) -> tuple[Any, str] | None:
    """The value of ``key`` and its JSON path: top level first, then under ``metadata``."""
    if meta.get(key) is not None:
        return meta[key], f"$.{key}"
    nested = meta.get("metadata")
    if isinstance(nested, dict) and nested.get(key) is not None:
        return nested[key], f"$.metadata.{key}"
    return None


def _text(value: Any, path: str, add: Add) -> str | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        add(
            Severity.ERROR,
            path,
            "must be a string",
            expected="one line of text, e.g. 1.0.0 or community",
            got=type(value).__name__,
            code="wrong_type",
        )
        return None
    text = str(value).strip()
    if len(text) > MAX_TEXT:
        add(Severity.ERROR, path, f"is {len(text)} characters, over {MAX_TEXT}", code="too_long")
        return None
    return text or None


def _items(value: Any, path: str, add: Add) -> list[str]:
    raw = value.split(",") if isinstance(value, str) else value
    if not isinstance(raw, list) or not all(isinstance(v, (str, int, float)) and not isinstance(v, bool) for v in raw):
        add(
            Severity.ERROR,
            path,
            "must be a list of strings",
            expected="[a, b] or 'a, b'",
            got=type(value).__name__,
            code="wrong_type",
        )
        return []
    items = sorted({str(v).strip() for v in raw if str(v).strip()})
    if len(items) > MAX_ITEMS:
        add(Severity.ERROR, path, f"has {len(items)} entries, over {MAX_ITEMS}", code="too_many")
        return []
    return items


def read_skill_meta(meta: dict[str, Any], add: Add, parsed_text: Callable[[str, Any], str]) -> dict[str, Any]:
    """``{version?, author?, tags?, capabilities?, constraints?, tools?, task_id?}`` of a skill, each checked.

    ``add(severity, json_path, message, **kw)`` reports a located diagnostic;
    ``parsed_text(json_path, value)`` gives a scalar as the author wrote it (``2.10`` stays ``"2.10"``).
    """
    out: dict[str, Any] = {}
    for key in ("version", "author"):
        found = meta_field(meta, key)
        if found is None:
            continue
        value, path = found
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = parsed_text(path, value)
        if (text := _text(value, path, add)) is not None:
            out[key] = text
    for key in LIST_FIELDS:
        found = meta_field(meta, key)
        if found is not None and (items := _items(found[0], found[1], add)):
            out[key] = items
    found = meta_field(meta, "task_id")
    if found is not None:
        value, path = found
        if isinstance(value, str) and tool_id_problem(value.strip()) is None:
            out["task_id"] = value.strip()
        else:
            add(
                Severity.ERROR,
                path,
                "task_id is not a tool id",
                expected="a dotted lower-case id such as task.code_review",
                got=repr(value)[:80],
                code="bad_task_id",
                hint="Write the id agents should call this skill by, e.g. task_id: task.code_review.",
            )
    return out


# -- task arguments ----------------------------------------------------------------------------
#: The key a skill or agent declares its task arguments under (004's ``task.code_review(target=...)``).
ARGUMENTS_FIELD = "arguments"
#: What one argument may say; ``type`` defaults to ``string``.
ARGUMENT_KEYS = ("type", "description", "required", "enum", "default")
ARGUMENT_TYPES = ("string", "integer", "number", "boolean", "array", "object")
#: A provider-safe property name: every provider accepts it, and it reads as a keyword argument.
ARGUMENT_NAME = re.compile(r"[a-z_][a-z0-9_]{0,63}")
#: Reserved: a call with ``resource`` reads one bundled file (level 3).
RESERVED_ARGUMENTS = frozenset({"resource"})
MAX_ARGUMENTS = 32
MAX_ARGUMENT_DESCRIPTION = 500
ARGUMENTS_SHAPE = (
    "arguments:\n  target:\n    type: string\n    description: What to review (a path, branch or PR).\n"
    "    required: true"
)
_PY_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


@dataclass(frozen=True, slots=True)
class TaskArguments:
    """Declared task arguments compiled to JSON Schema ``properties`` (in the author's order) and the required names."""

    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]


def _fits(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind != "boolean":
        return False
    return isinstance(value, _PY_TYPES[kind])


def _value_problems(raw: dict[str, Any], kind: str, path: str) -> list[tuple[str, str, str, str]]:
    """(json path, message, expected, got) for a wrong description, required, enum or default."""
    problems: list[tuple[str, str, str, str]] = []
    description = raw.get("description")
    if description is not None and (not isinstance(description, str) or len(description) > MAX_ARGUMENT_DESCRIPTION):
        got = f"{len(description)} characters" if isinstance(description, str) else type(description).__name__
        where = f"{path}.description"
        problems.append((where, "description must be text", f"at most {MAX_ARGUMENT_DESCRIPTION} characters", got))
    required = raw.get("required", False)
    if not isinstance(required, bool):
        problems.append((f"{path}.required", "required must be true or false", "true | false", repr(required)))
    enum = raw.get("enum")
    if enum is not None and (not isinstance(enum, list) or not enum or not all(_fits(v, kind) for v in enum)):
        message = f"enum must be a non-empty list of {kind} values"
        problems.append((f"{path}.enum", message, f"[{kind}, ...]", repr(enum)[:80]))
    default = raw.get("default")
    if default is not None and (not _fits(default, kind) or (isinstance(enum, list) and default not in enum)):
        message = f"default does not fit the argument's type {kind}"
        problems.append((f"{path}.default", message, kind, repr(default)[:80]))
    return problems


def _argument(name: str, raw: Any, path: str, add: Add) -> tuple[dict[str, Any], bool] | None:
    """One argument as a JSON Schema property and whether it is required; None (reported) when it is wrong."""
    if isinstance(raw, str) or raw is None:  # the short form: ``target: What to review``
        raw = {"description": raw} if raw else {}
    if not isinstance(raw, dict):
        add(
            Severity.ERROR,
            path,
            f"argument {name!r} must be a mapping (or one line of description)",
            expected="{type: string, description: ..., required: true}",
            got=type(raw).__name__,
            code="bad_argument",
            hint=f"Write it as in:\n{ARGUMENTS_SHAPE}",
        )
        return None
    problems: list[tuple[str, str, str, str]] = []
    unknown = sorted(str(k) for k in raw if k not in ARGUMENT_KEYS)
    if unknown:
        problems.append(
            (child_path(path, unknown[0]), f"unknown key {unknown[0]!r}", ", ".join(ARGUMENT_KEYS), unknown[0])
        )
    kind = raw.get("type", "string")
    if kind not in ARGUMENT_TYPES:
        problems.append((f"{path}.type", f"type {kind!r} is not a JSON type", " | ".join(ARGUMENT_TYPES), repr(kind)))
        kind = "string"
    problems.extend(_value_problems(raw, kind, path))
    for where, message, expected, got in problems:
        add(
            Severity.ERROR,
            where,
            f"argument {name!r}: {message}",
            expected=expected,
            got=got,
            code="bad_argument",
            hint=f"An argument is {{type, description, required, enum, default}}, e.g.\n{ARGUMENTS_SHAPE}",
        )
    if problems:
        return None
    prop: dict[str, Any] = {"type": kind}
    if raw.get("description"):
        prop["description"] = " ".join(raw["description"].split())
    prop.update({k: raw[k] for k in ("enum", "default") if raw.get(k) is not None})
    return prop, raw.get("required") is True


def read_arguments(meta: dict[str, Any], add: Add) -> TaskArguments | None:
    """The task arguments a skill or agent declares under ``arguments:``, each checked; None when none are declared.

    ``arguments`` maps a name to ``{type, description, required, enum, default}`` (or to one line of
    description, a string argument). Every problem is a located error (``$.arguments.<name>.<key>``).
    """
    raw = meta.get(ARGUMENTS_FIELD)
    if raw is None:
        return None
    if not isinstance(raw, dict) or not raw:
        add(
            Severity.ERROR,
            f"$.{ARGUMENTS_FIELD}",
            "arguments must map each argument's name to its description",
            expected="a mapping of names, e.g.\n" + ARGUMENTS_SHAPE,
            got=type(raw).__name__ if raw else "an empty value",
            code="bad_argument",
            hint="Declare the task's inputs by name (target, query, feature ...), or remove 'arguments'.",
        )
        return None
    if len(raw) > MAX_ARGUMENTS:
        add(Severity.ERROR, f"$.{ARGUMENTS_FIELD}", f"{len(raw)} arguments, over {MAX_ARGUMENTS}", code="too_many")
        return None
    properties: dict[str, dict[str, Any]] = {}
    required: list[str] = []
    for name, value in raw.items():
        path = child_path(f"$.{ARGUMENTS_FIELD}", name)
        if not isinstance(name, str) or not ARGUMENT_NAME.fullmatch(name) or name in RESERVED_ARGUMENTS:
            reserved = isinstance(name, str) and name in RESERVED_ARGUMENTS
            add(
                Severity.ERROR,
                path,
                f"argument name {name!r} is reserved: a call with it reads a bundled file"
                if reserved
                else f"argument name {name!r} is not a plain lower-case name",
                expected="lower-case letters, digits and '_', starting with a letter or '_' (at most 64)",
                got=repr(name)[:80],
                code="bad_argument",
                hint="Rename it, e.g. 'target', 'query', 'feature' or 'max_files'.",
            )
            continue
        compiled = _argument(name, value, path, add)
        if compiled is not None:
            properties[name] = compiled[0]
            if compiled[1]:
                required.append(name)
    return TaskArguments(properties, tuple(required))
