"""The one set of rules for the names a catalogue is made of: tool ids, node names and paths, skill names, resource paths.

A name the build accepts must be one every reader of the build accepts: it becomes a ref path (which the
reader checks: :func:`toolcat.format.refs.check_ref`), a site page's file name, URL and HTML id, and a key agents
send back. So the build (``toolcat build``), the reader, the site and the importers ask these functions, each
of which answers ``None`` for a good name, else one sentence saying what is wrong; :data:`RULES` holds what each
kind of name must look like, for messages. Standard library only, like all of ``format/``.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from typing import Any

__all__ = [
    "ACTION",
    "ENTITY",
    "MAX_NODE_NAME",
    "MAX_NODE_PATH_DEPTH",
    "MAX_RESOURCE_PATH",
    "MAX_SKILL_NAME",
    "MAX_TOOL_ID",
    "NODE_NAME",
    "RULES",
    "SKILL_NAME",
    "TOOL_ID",
    "entity_action",
    "node_name_problem",
    "node_path_problem",
    "resource_path_problem",
    "skill_name_problem",
    "tool_id_problem",
]

#: A canonical tool id: 2 to 4 dotted segments of ``[a-z0-9_]``, each starting with a letter.
TOOL_ID = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){1,3}")
#: A node (folder) name: lowercase letters, digits, ``-`` and ``_``, not starting with ``-`` or ``_``.
NODE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
#: An Agent Skills name: lowercase letters and digits in runs joined by single hyphens.
SKILL_NAME = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")
#: The site makes page file names, URLs and HTML ids of ids and names, and refuses longer ones.
MAX_TOOL_ID = 128
MAX_NODE_NAME = 128
#: The Agent Skills specification's limit.
MAX_SKILL_NAME = 64
#: Nodes below the root (the reader refuses deeper paths in a request).
MAX_NODE_PATH_DEPTH = 32
#: A bundled file's path inside its skill folder. Its ref path ``skills/<16 hex>/<path>`` must stay within the
#: reader's 1,024 characters (:data:`toolcat.format.refs.MAX_REF_PATH`), with room to spare.
MAX_RESOURCE_PATH = 512

#: A tool's ``entity`` (dotted segments) and ``action`` (one segment), when the source names them.
ENTITY = re.compile(r"[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*){0,3}")
ACTION = re.compile(r"[a-z][a-z0-9_]*")

#: What each kind of name must look like, as a diagnostic's ``expected`` says it.
RULES = {
    "tool id": f"2 to 4 dotted lowercase segments of [a-z0-9_], each starting with a letter, e.g. file.read "
    f"(at most {MAX_TOOL_ID} characters)",
    "node name": f"lowercase letters, digits, '-' or '_', starting with a letter or digit (at most {MAX_NODE_NAME})",
    "skill name": f"lowercase a-z, 0-9 and single hyphens, not at the start or end (at most {MAX_SKILL_NAME})",
    "entity": "1 to 4 dotted lowercase segments of [a-z0-9_], each starting with a letter, e.g. task",
    "action": "one lowercase segment of [a-z0-9_] starting with a letter, e.g. update",
    "resource path": f"a relative path of plain file names: no control characters, backslashes, '..', '.' or "
    f"empty segments (at most {MAX_RESOURCE_PATH} characters)",
}


def _unprintable(text: str) -> str | None:
    """The first character no reader can safely carry in a name: a control character or a lone surrogate."""
    for char in text:
        if unicodedata.category(char) in ("Cc", "Cs", "Cf", "Zl", "Zp"):
            return char
    return None


def _basic(value: Any, kind: str, limit: int) -> str | None:
    if not isinstance(value, str) or not value:
        return f"a {kind} must be a non-empty string"
    bad = _unprintable(value)
    if bad is not None:
        return f"the {kind} holds the control character {bad!r}"
    if len(value) > limit:
        return f"the {kind} is {len(value)} characters, over {limit}"
    return None


def _matching(value: Any, kind: str, limit: int, pattern: re.Pattern[str]) -> str | None:
    problem = _basic(value, kind, limit)
    if problem is None and not pattern.fullmatch(value):
        return f"{value!r} is not a {kind}: {RULES[kind]}"
    return problem


def tool_id_problem(value: Any) -> str | None:
    """What is wrong with a canonical tool id (``file.read``), or None."""
    return _matching(value, "tool id", MAX_TOOL_ID, TOOL_ID)


def node_name_problem(value: Any) -> str | None:
    """What is wrong with one node (folder) name (``refactoring``), or None."""
    return _matching(value, "node name", MAX_NODE_NAME, NODE_NAME)


def node_path_problem(parts: Any) -> str | None:
    """What is wrong with a node path (a sequence of node names; the root is empty), or None."""
    if not isinstance(parts, (list, tuple)):
        return "a node path must be a list of node names"
    if len(parts) > MAX_NODE_PATH_DEPTH:
        return f"the node path is {len(parts)} levels deep, over {MAX_NODE_PATH_DEPTH}"
    return next((problem for part in parts if (problem := node_name_problem(part)) is not None), None)


def skill_name_problem(value: Any) -> str | None:
    """What is wrong with an Agent Skills name (``code-reviewer``), or None."""
    return _matching(value, "skill name", MAX_SKILL_NAME, SKILL_NAME)


def resource_path_problem(value: Any) -> str | None:
    """What is wrong with the path of a file bundled with a skill (``references/guide.md``), or None.

    Exactly the paths a reader accepts inside a ref (:func:`toolcat.format.refs.check_ref`), with a shorter cap.
    """
    problem = _basic(value, "resource path", MAX_RESOURCE_PATH)
    if problem is not None:
        return problem
    if "\\" in value:
        return f"the resource path {value!r} holds a backslash"
    segments = value.split("/")  # a ':' is harmless here: the ref path always starts with skills/<hash>/
    if any(segment in ("", ".", "..") for segment in segments) or posixpath.normpath(value) != value:
        return f"the resource path {value!r} has an empty, '.' or '..' segment"
    return None


def entity_action(tool_id: str) -> tuple[str, str]:
    """The entity and action a tool id names, for a source that does not name them (docs/sources.md).

    The action is the last segment; the entity is the one before it when the id has two segments, else the
    segments between the namespace and the action: ``file.read`` → (``file``, ``read``), ``onto.task.update``
    → (``task``, ``update``), ``onto.project.graph.get`` → (``project.graph``, ``get``).
    """
    parts = tool_id.split(".")
    if len(parts) < 2:
        return tool_id, tool_id
    middle = parts[1:-1] or parts[:1]
    return ".".join(middle), parts[-1]
