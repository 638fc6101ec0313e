"""The namespaced dialect: tool_list, find_tool and seed 002's per-domain discover (tool_describe is the spec dialect's expand).

Each function takes the catalogue's :class:`~toolcat.reader.store.Store` and the caller's raw
arguments, and returns a result envelope or raises :class:`ReaderError`. Running a described tool is
the host's part: over MCP it becomes a tool of its own, called by its provider alias (docs/mcp.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...format.dialects import dialect_tools
from ...format.envelope import ReaderError
from ...format.types import Json
from ..checks import MAX_LIMIT, check_limit, check_query, check_str, check_tags, close_names, ok, shown, trim
from ..session import Session
from ..store import Store
from .protocol import World, drop_empty, path_text, words_of
from .shared import (
    check_capability,
    delegate,
    has_capability,
    namespaces_of,
    unknown_path,
    visible_only,
    with_summaries,
)


def tool_list(store: Store, session: Session, namespace: Any, tags: Any, capability: Any = None) -> Json:
    """Canonical names and aliases (no schemas) of every tool, or of one namespace/group, tag set or capability.

    Tools the session's policy hides are not listed; a hidden namespace is UNKNOWN_PATH.
    """
    wanted = check_tags(tags)
    able = check_capability(capability)
    group = None
    namespaces = namespaces_of(store, session)
    if namespace is not None:
        group = trim(check_str(namespace, "namespace")).strip(".")
        if group.split(".", 1)[0] not in namespaces:
            raise unknown_path(group, namespaces)
    pointers = store.namespace_pointers(group.split(".", 1)[0]) if group is not None else store.all_pointers()
    rows = []
    for tool_id, pointer in pointers.items():
        if group is not None and tool_id != group and not tool_id.startswith(group + "."):
            continue
        if wanted and not set(wanted) <= {t.lower() for t in pointer.get("tags", [])}:
            continue
        if able is not None and not has_capability(pointer, able):
            continue
        if session.filters and not session.allows(tool_id, pointer.get("kind")):
            continue
        rows.append(
            drop_empty(
                {
                    "name": tool_id,
                    "alias": pointer.get("alias"),
                    "type": pointer.get("type") if pointer.get("type") != "tool" else None,
                    "kind": pointer.get("kind"),
                    "summary": pointer.get("summary"),
                }
            )
        )
    if group is not None and not rows and not wanted and able is None:
        groups, ops = store.namespace_tree(group.split(".", 1)[0], keep=session.allows if session.filters else None)
        raise unknown_path(group, sorted([*groups, *ops]))
    next_action = {"op": "describe", "args": {"tool_id": rows[0]["name"]}} if rows else None
    hints = [] if rows else ["Nothing matches these filters; search by purpose instead."]
    if not rows:
        next_action = {"op": "search", "args": {"query": trim(" ".join([*(wanted or []), able or "", group or ""]))}}
    out = drop_empty({"namespace": group, "count": len(rows), "tools": rows}, ("count", "tools"))
    return ok(out, help_path=group or "root", hints=hints, next_action=next_action)


def find_tool(store: Store, session: Session, purpose: Any, limit: Any) -> Json:
    """Tools ranked for a purpose in plain words (delegated to the search module).

    Under a policy that hides tools, the search looks further and hidden tools are left out of the matches.
    """
    check_query(purpose, "purpose")  # the one message for a blank purpose; a long one is cut by the searcher
    count = check_limit(limit, 5)
    answer = delegate(store.searcher_required().find_tool(purpose, count if not session.filters else MAX_LIMIT))
    if not answer.get("ok") or not isinstance(answer.get("matches"), list):
        return answer
    if session.filters:
        answer["matches"] = visible_only(session, answer["matches"], "name")[:count]
        if not answer["matches"]:
            answer["hints"] = ["No tool this session may use matches; browse the tools it can use."]
            answer["next_action"] = {"op": "help", "args": {"path": "root"}}
    # each hit's one line (capped), so a model chooses among them without describing each (issue 35); the
    # summary says what a hit does, so the ranking's reason (matched terms) is kept for the top hit only
    matches = with_summaries(store, answer["matches"], "name")
    answer["matches"] = matches[:1] + [{k: v for k, v in m.items() if k != "reason"} for m in matches[1:]]
    return answer


def discover(store: Store, session: Session, domain: Any, tool: Any, describe: Callable[[str], Json]) -> Json:
    """Seed 002's ``discover_<domain>_tools``: the domain's tools (names and one line), or one tool's details.

    Without ``tool``, the rows of :func:`tool_list` for the namespace ``domain``. With ``tool`` (a canonical
    name, an alias or a legacy name of a tool in the domain), the tool's description (as ``tool_describe``,
    which makes it callable by its alias over MCP) with 002's ``parameters`` (their names, required first)
    and ``usage`` line. A domain the session may not see is UNKNOWN_PATH; a tool outside it TOOL_NOT_FOUND.
    ``describe(tool_id)`` is the dialect's ``tool_describe`` (the facade passes it: no dialect imports another).
    """
    name = trim(check_str(domain, "domain")).strip(".")
    if tool is None:
        listed = tool_list(store, session, name, None)
        return {**listed, "domain": name}
    tool_id = store.resolve(check_str(tool, "tool"))
    if tool_id is None or not tool_id.startswith(name + "."):
        listed = tool_list(store, session, name, None)  # UNKNOWN_PATH when the session may not see the domain
        known = [str(row["name"]) for row in listed.get("tools", [])]
        raise ReaderError(
            "TOOL_NOT_FOUND",
            f"no tool {shown(tool, 120)} in the {name} domain",
            details={"domain": name, "suggestions": close_names(str(tool), known)},
            hints=[f"List the {name} tools first, then ask for one of them by name."],
            next_action={"op": "list", "args": {"path": name}},
            help_path=name,
        )
    described = describe(tool_id)
    raw = described.get("args_schema")
    schema: Json = raw if isinstance(raw, dict) else {}
    required = [str(n) for n in schema.get("required") or []]
    names = [*required, *(str(n) for n in schema.get("properties") or {} if n not in required)]
    sample = ", ".join(f"{n}=<{n}>" for n in required)
    return {**described, "domain": name, "parameters": names, "usage": f"{described.get('alias', tool_id)}({sample})"}


# -- the dialect's row of the protocol (:mod:`.protocol`; the registry is ``DIALECTS`` in this package) ----
NAME = "namespaced"
OPERATIONS: tuple[str, ...] = tuple(tool.name for tool in dialect_tools(NAME))
#: Abstract op → the call an agent makes, as the docs print it.
PROTOCOL_ROW: dict[str, str] = {
    "list": "tool_list() at the root; tool_list(namespace=<group>) for an id group; find_tool(purpose=<node words>)",
    "search": "find_tool(purpose=query)",
    "search_nodes": "find_tool(purpose=query)",
    "search_in": "find_tool(purpose=query)",
    "describe": "tool_describe(name=tool_id)",
    "call": "<alias>(**args): the described tool itself, callable by its provider alias",
    "help": "tool_describe(name) for a tool; tool_list(namespace) for a group; tool_list() for the root",
    "read_resource": "<alias>(resource=path): the described skill itself",
}
#: Abstract op → the tool a hint names for it.
HINT_NAMES: dict[str, str] = {
    "list": "tool_list",
    "search": "find_tool",
    "search_nodes": "find_tool",
    "search_in": "find_tool",
    "describe": "tool_describe",
    "call": "tool_describe",
    "help": "tool_describe",
    "read_resource": "tool_describe",
}


def render_next(op: str, args: Json, world: World) -> Json:
    """An abstract ``(op, args)`` as a call of one of this dialect's tools (:mod:`.protocol`)."""
    if op in ("search", "search_nodes", "search_in"):
        return {"op": "find_tool", "args": {"purpose": args["query"]}}
    if op == "describe":
        return {"op": "tool_describe", "args": {"name": args["tool_id"]}}
    if op in ("call", "read_resource"):
        tool_id = world.resolve(args["tool_id"]) or str(args["tool_id"])
        call_args = args.get("args") or {} if op == "call" else {"resource": args["path"]}
        return {"op": world.alias_of(tool_id), "args": call_args}
    path = path_text(args.get("path", "")).replace("/", ".").strip(".")  # list and help
    if not path:
        return {"op": "tool_list", "args": {}}
    found = world.resolve(path)
    if found is not None:
        return {"op": "tool_describe", "args": {"name": found}}
    if world.is_group(path):
        return {"op": "tool_list", "args": {"namespace": path}}
    return {"op": "find_tool", "args": {"purpose": words_of(path)}}
