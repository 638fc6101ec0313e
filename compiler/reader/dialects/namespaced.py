"""The namespaced dialect: tool_list and find_tool (tool_describe is the spec dialect's expand).

Each function takes the catalogue's :class:`~toolcat.reader.store.Store` and the caller's raw
arguments, and returns a result envelope or raises :class:`ReaderError`. Running a described tool is
the host's part: over MCP it becomes a tool of its own, called by its provider alias (docs/mcp.md).
"""

from __future__ import annotations

from typing import Any

from ...format.types import Json
from ..checks import check_limit, check_query, check_str, check_tags, ok
from ..store import Store
from .protocol import drop_empty
from .shared import check_capability, delegate, has_capability, unknown_path


def tool_list(store: Store, namespace: Any, tags: Any, capability: Any = None) -> Json:
    """Canonical names and aliases (no schemas) of every tool, or of one namespace/group, tag set or capability."""
    wanted = check_tags(tags)
    able = check_capability(capability)
    group = None
    namespaces = [str(n) for n in store.manifest.get("namespaces", [])]
    if namespace is not None:
        group = check_str(namespace, "namespace").strip().strip(".")
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
        groups, ops = store.namespace_tree(group.split(".", 1)[0])
        raise unknown_path(group, sorted([*groups, *ops]))
    next_action = {"op": "describe", "args": {"tool_id": rows[0]["name"]}} if rows else None
    hints = [] if rows else ["Nothing matches these filters; search by purpose instead."]
    if not rows:
        next_action = {"op": "search", "args": {"query": " ".join([*(wanted or []), able or "", group or ""]).strip()}}
    out = drop_empty({"namespace": group, "count": len(rows), "tools": rows}, ("count", "tools"))
    return ok(out, help_path=group or "root", hints=hints, next_action=next_action)


def find_tool(store: Store, purpose: Any, limit: Any) -> Json:
    """Tools ranked for a purpose in plain words (delegated to the search module)."""
    check_query(purpose, "purpose")  # the one message for a blank purpose; a long one is cut by the searcher
    count = check_limit(limit, 5)
    return delegate(store.searcher_required().find_tool(purpose, count))
