"""004's skill metadata: version, author, capabilities, constraints, tools and the task id.

Design 004 writes them at the top level of the SKILL.md frontmatter or in a ``metadata.yaml``
beside it (merged, the frontmatter wins); the Agent Skills spec keeps non-standard keys under
``metadata:`` as strings. Both are read: a top-level key wins over the same key under
``metadata``, and a list may also be written as one comma-separated string
(``capabilities: "code-analysis, bug-detection"``), the only way the spec's string-valued
``metadata`` can hold one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

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
