"""The next_action walk of issue 34, shared by the Python API test and the MCP one: start from an error, follow hints.

A :class:`Walk` starts from a call that fails (a missing argument, a wrong type, an unknown op, a policy refusal, a
weak search) and follows each answer's ``next_action`` for up to :data:`STEPS` steps, as an agent would. It fails
when a step revisits a call already made in the walk, or names a tool the dialect does not expose. The starting
calls are made from the catalogue itself (:func:`starting_calls`), so new tools are walked without editing a list.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from toolcat.format.dialects import dialect_tools
from toolcat.format.types import Json
from toolcat.reader import Catalog

#: How many next_actions a walk follows.
STEPS = 5
#: Queries no tool or category of the example catalogue matches well (000's own "oauth login" among them).
WEAK_QUERIES = ("oauth login", "xyzzy plugh frobnicate")

Call = tuple[str, Json]
Execute = Callable[[str, Json], Awaitable[Json]]


def key(op: str, args: Json) -> str:
    """One call as a comparable text."""
    return json.dumps([op, args], sort_keys=True, default=str)


def next_action(answer: Json) -> Json | None:
    """The next_action an answer carries (an error's, or a success's)."""
    holder = answer["error"] if isinstance(answer.get("error"), dict) else answer
    action = holder.get("next_action")
    return action if isinstance(action, dict) else None


def code(answer: Json) -> str:
    """``ok`` or the answer's error code."""
    return answer["error"]["code"] if isinstance(answer.get("error"), dict) else "ok"


def wrong_value(schema: Any) -> Any:
    """A value of another JSON type than ``schema`` asks for (an object for a string, a string otherwise)."""
    kinds = schema.get("type") if isinstance(schema, dict) else None
    names = kinds if isinstance(kinds, list) else [kinds]
    return {"not": "this"} if "object" not in names else "not an object"


def call_in(dialect: str, tool_id: str, alias: str, args: Json) -> Call:
    """How ``dialect`` calls a catalogue tool: call_tool (spec), tool_exec (gateway), its alias (namespaced, direct)."""
    if dialect == "spec":
        return "call_tool", {"tool_id": tool_id, "args": args}
    if dialect == "gateway":
        return "tool_exec", {"op": tool_id, "args": args}
    return alias, args


def unknown_op(dialect: str, tool_id: str) -> Call:
    """A call of a tool that does not exist, as ``dialect`` would make it."""
    wrong = tool_id + "x"
    if dialect == "spec":
        return "expand_tool", {"tool_id": wrong}
    if dialect == "gateway":
        return "tool_exec", {"op": wrong, "args": {}}
    return "tool_describe", {"name": wrong}


def weak_searches(dialect: str) -> list[Call]:
    """The dialect's searches for queries nothing matches well."""
    out: list[Call] = []
    for query in WEAK_QUERIES:
        if dialect == "spec":
            out += [
                ("search_nodes", {"query": query}),
                ("search_tool_by_category", {"query": query, "category_path": ["Coding", "Refactoring"]}),
                ("list", {"path": "", "query": query}),
            ]
        elif dialect == "gateway":
            out.append(("tool_help", {"query": query}))
        elif dialect == "namespaced":
            out.append(("find_tool", {"purpose": query}))
    return out


def starting_calls(cat: Catalog, dialect: str, *, kinds: tuple[str, ...] = ("read", "write")) -> list[Call]:
    """The failing calls a walk starts from, for every tool of the catalogue (of ``kinds``) in ``dialect``."""
    out: list[Call] = []
    for row in cat.tool_list()["tools"]:
        if row.get("kind", "read") not in kinds:
            continue
        tool_id, alias = row["name"], row["alias"]
        spec = cat.store.spec(tool_id)[1]
        schema = spec.get("args_schema") or {}
        props = schema.get("properties") or {}
        required = list(schema.get("required") or []) + list((spec.get("handler") or {}).get("requires") or [])
        if required:
            out.append(call_in(dialect, tool_id, alias, {}))  # a missing argument
        example = next((dict(e["args"]) for e in spec.get("examples") or []), {})
        typed = next((name for name, sub in props.items() if isinstance(sub, dict) and "type" in sub), None)
        if typed is not None:
            out.append(call_in(dialect, tool_id, alias, {**example, typed: wrong_value(props[typed])}))  # wrong type
        if dialect != "direct":
            out.append(unknown_op(dialect, tool_id))
    return out


class Walk:
    """Follows next_actions from starting calls through ``execute``; collects loops and calls of unknown tools."""

    def __init__(self, dialect: str, execute: Execute, exposed: set[str], aliases: set[str]) -> None:
        self.dialect = dialect
        self.execute = execute
        self.exposed = exposed
        self.aliases = aliases
        self.problems: list[str] = []
        self.steps = 0
        self.codes: set[str] = set()

    async def walk(self, op: str, args: Json) -> None:
        """Make the call, then follow next_action up to :data:`STEPS` times; note a revisit or an unknown tool."""
        made = [key(op, args)]
        answer = await self.execute(op, args)
        self.codes.add(code(answer))
        for _ in range(STEPS):
            action = next_action(answer)
            if action is None:
                return
            step_op, step_args = action["op"], action.get("args") or {}
            if step_op not in self.exposed and step_op not in self.aliases:
                self.problems.append(f"{self.dialect}: {op} {args} -> next_action {action} names no tool")
                return
            if key(step_op, step_args) in made:
                chain = " -> ".join([*made, key(step_op, step_args)])
                self.problems.append(f"{self.dialect}: loop after {code(answer)}: {chain}")
                return
            made.append(key(step_op, step_args))
            self.steps += 1
            answer = await self.execute(step_op, step_args)
            self.codes.add(code(answer))


def exposed_tools(dialect: str, domains: list[str]) -> set[str]:
    """The discovery tools of ``dialect`` (with 002's per-domain ones)."""
    from toolcat.format.dialects import served_tools  # noqa: PLC0415

    return {t.name for t in served_tools(dialect, domains)} or {t.name for t in dialect_tools(dialect)}
