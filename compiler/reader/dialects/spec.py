"""The spec dialect: list, search_nodes, search_tool_by_category, expand_tool (and call_tool, the session's exec).

Each function takes the catalogue's :class:`~toolcat.reader.store.Store` and
:class:`~toolcat.reader.session.Session` and the caller's raw arguments, and returns a result
envelope or raises :class:`ReaderError` (the session's guard turns it into an error envelope).
"""

from __future__ import annotations

import copy
from typing import Any

from ...format.types import Json
from ..checks import (
    bad,
    check_limit,
    check_query,
    check_str,
    check_tags,
    decode_cursor,
    deprecation_note,
    encode_cursor,
    node_path,
    ok,
    public_pointer,
    shown,
)
from ..execution import runners as execute
from ..execution.handlers import available
from ..session import Session
from ..store import Store
from .protocol import drop_empty
from .shared import check_capability, delegate, has_capability, runnable

#: What an agent reads of a spec when it expands a tool (null and empty ones are left out; no provider
#: alias lists, no token counts: the artifacts keep those).
DESCRIBED_KEYS = (
    "tool_id",
    "type",
    "path",
    "categories",
    "summary",
    "description",
    "args_schema",
    "result_schema",
    "examples",
    "errors",
    "tags",
    "kind",
    "optional",
    "when_to_use",
    "policy",
    "annotations",
    "version",
    "author",
    "capabilities",
    "constraints",
    "tools",
    "deprecated",
)
#: Frontmatter keys a described skill already shows elsewhere.
_SHOWN_FRONTMATTER = ("name", "description")


def list_node(store: Store, path: Any, tags: Any, query: Any, limit: Any, cursor: Any, capability: Any = None) -> Json:
    """Child nodes and tool pointers at ``path`` (paged); ``tags``, ``capability`` and ``query`` search its subtree.

    ``path`` is a list of names, ``"a/b"`` or ``"a.b"``; names match case-insensitively.
    """
    where = store.canonical_path(node_path(path))
    wanted = check_tags(tags)
    able = check_capability(capability)
    count = check_limit(limit, 10)
    if query is not None:
        check_str(query, "query", allow_empty=True)
    offset = decode_cursor(cursor)
    shard = store.node(where)
    searched = isinstance(query, str) and bool(query.strip())
    hits: list[Any] = []
    filtered = bool(wanted) or able is not None
    if searched and not filtered:  # ranked, and only the page's pointers are read
        hits, total = store.searcher_required().rank_tools_page(query, within=list(where), offset=offset, limit=count)
        page = [h[0] for h in hits]
    else:
        if searched:  # tags filter the ranked hits: every hit's pointer is needed
            hits = store.searcher_required().rank_tools(query, within=list(where))
            pointers = [h[0] for h in hits]
        elif filtered:
            pointers = list(store.subtree_pointers(where).values())
        elif offset + count <= len(shard.get("tools", [])):
            pointers = shard.get("tools", [])  # the first page answers without fetching more
        else:
            pointers = store.node_tools(shard)
        if wanted:
            pointers = [p for p in pointers if set(wanted) <= {t.lower() for t in p.get("tags", [])}]
        if able is not None:
            pointers = [p for p in pointers if has_capability(p, able)]
        page = pointers[offset : offset + count]
        total = len(pointers) if searched or filtered else shard.get("direct_tools", len(pointers))
    confidences = {h[0]["tool_id"]: float(h[1]) for h in hits}
    more = offset + count < total
    nodes = (
        []
        if offset or filtered or searched
        else [
            drop_empty({k: c[k] for k in ("name", "path", "title", "summary", "tags", "tool_count") if k in c})
            for c in shard.get("children", [])
        ]
    )
    tools = [public_pointer(p, confidences.get(p["tool_id"]) if confidences else None) for p in page]
    hints = []
    if tools:
        next_action: Json | None = {"op": "describe", "args": {"tool_id": tools[0]["tool_id"]}}
    elif nodes:
        next_action = {"op": "list", "args": {"path": "/".join(nodes[0]["path"])}}
    else:
        words = " ".join(part for part in [query if searched else "", *wanted, able or "", *where] if part)
        next_action = {"op": "search", "args": {"query": words}} if words else None
        hints.append("Nothing here matches; search the whole catalogue by purpose, or browse from the root.")
    out = drop_empty(
        {
            "path": list(where),
            "title": shard.get("title", ""),
            "summary": shard.get("summary", ""),
            "tool_count": shard.get("tool_count", 0),
            "nodes": nodes,
            "tools": tools,
            "total_tools": total,
        },
        ("path", "nodes", "tools"),
    )
    out["next_cursor"] = encode_cursor(offset + count) if more else None
    return ok(out, help_path="/".join(where) or "root", hints=hints, next_action=next_action)


def search_nodes(store: Store, query: Any, limit: Any) -> Json:
    """Ontology nodes ranked for ``query`` (delegated to the search module)."""
    check_query(query, "query")  # the one message for a blank query; a long one is cut by the searcher
    count = check_limit(limit, 5)
    answer = delegate(store.searcher_required().search_nodes(query, count))
    if answer.get("ok") and not answer.get("results") and not answer.get("hints"):
        answer["hints"] = [
            f"No category matches {shown(query, 80)}; search tools by purpose instead, or browse from the root.",
        ]
        answer["next_action"] = answer.get("next_action") or {"op": "search", "args": {"query": query}}
    return answer


def search_tool_by_category(store: Store, query: Any, category_path: Any, limit: Any, cursor: Any) -> Json:
    """Tools under ``category_path`` ranked for ``query``; NO_MATCH_IN_CATEGORY when none match."""
    check_query(query, "query")
    count = check_limit(limit, 5)
    if cursor is not None and not isinstance(cursor, str):
        raise bad(f"cursor {shown(cursor)} must be a string this reader returned")
    where = store.canonical_path(node_path(category_path))  # UNKNOWN_PATH with suggestions before searching
    answer = delegate(store.searcher_required().search_tool_by_category(query, list(where), count, cursor))
    if answer.get("ok") and answer.get("results"):
        answer["next_action"] = answer.get("next_action") or {
            "op": "describe",
            "args": {"tool_id": answer["results"][0]["tool_id"]},
        }
    return answer


def describe(store: Store, session: Session, name: Any) -> Json:
    """The full spec of a tool by canonical name or alias (a skill's SKILL.md body too); marks it expanded."""
    tool_id, spec = store.spec(name)
    session.expanded(tool_id)
    out: Json = {k: copy.deepcopy(spec.get(k)) for k in DESCRIBED_KEYS}
    if out.get("type") == "tool":
        out["type"] = None
    for flag in ("deprecated", "optional"):
        out[flag] = out.get(flag) or None
    raw_aliases = spec.get("aliases")
    aliases: Json = raw_aliases if isinstance(raw_aliases, dict) else {}
    out["alias"] = aliases.get("anthropic") or aliases.get("openai") or tool_id.replace(".", "_")
    if out.get("when_to_use") in (out.get("summary"), out.get("description")):
        out["when_to_use"] = None
    if out.get("description") == out.get("summary"):
        out["description"] = None
    handler = spec.get("handler")
    out["handler"] = {"type": handler.get("type")} if isinstance(handler, dict) else None
    hints: list[str] = []
    executable = runnable(session, tool_id, spec)
    if not executable and isinstance(handler, dict) and available(str(handler.get("type")), session.handlers):
        hints.append("This host does not allow this tool's handler: running it answers NOT_AUTHORIZED.")
    out["executable"] = executable
    skill = spec.get("skill")
    if isinstance(skill, dict):
        body = store.fetch_bytes(skill["body"]).decode("utf-8", errors="replace")
        raw_frontmatter = skill.get("frontmatter")
        frontmatter: Json = raw_frontmatter if isinstance(raw_frontmatter, dict) else {}
        out["skill"] = drop_empty(
            {
                "name": skill.get("name"),
                "level": 2,
                "frontmatter": {k: copy.deepcopy(v) for k, v in frontmatter.items() if k not in _SHOWN_FRONTMATTER},
                "body": body,
                "resources": [
                    drop_empty(
                        {
                            "path": r.get("path"),
                            "media_type": r.get("media_type"),
                            "bytes": (r.get("ref") or {}).get("bytes"),
                        }
                    )
                    for r in skill.get("resources", [])
                ],
            }
        )
        if skill.get("resources"):
            hints.append("Read a resource only when the instructions call for it (the resource argument).")
    if not executable and not hints:
        hints.append("This tool has no handler this reader can run: the host application executes it.")
    if spec.get("deprecated"):
        hints.append(deprecation_note(spec))
    example = next((e.get("args") for e in spec.get("examples", []) if isinstance(e, dict)), None)
    next_action = (
        {"op": "call", "args": {"tool_id": tool_id, "args": copy.deepcopy(example or {})}} if executable else None
    )
    out = drop_empty(out, ("tool_id", "args_schema", "executable"))
    return ok(out, help_path=tool_id, hints=hints, next_action=next_action)


def read_skill_resource(store: Store, session: Session, tool_id: Any, path: Any) -> Json:
    """One bundled file of a skill (level 3), read only when asked for."""
    resolved, spec = store.spec(tool_id)
    skill = spec.get("skill")
    if not isinstance(skill, dict):
        raise bad(f"{resolved} is not a skill; only skills bundle resources", help_path=resolved)
    session.check_namespace(resolved)
    return ok(execute.read_resource(resolved, skill, path, store.fetch_bytes), help_path=resolved)
