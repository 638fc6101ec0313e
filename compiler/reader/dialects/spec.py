"""The spec dialect: list, search_nodes, search_tool_by_category, expand_tool (and call_tool, the session's exec).

Each function takes the catalogue's :class:`~toolcat.reader.store.Store` and
:class:`~toolcat.reader.session.Session` and the caller's raw arguments, and returns a result
envelope or raises :class:`ReaderError` (the session's guard turns it into an error envelope).
"""

from __future__ import annotations

import copy
from typing import Any

from ...format.dialects import dialect_tools
from ...format.envelope import ReaderError
from ...format.shapes import public_pointer
from ...format.types import Json
from ..checks import (
    bad,
    check_limit,
    check_name,
    check_query,
    check_str,
    check_tags,
    decode_cursor,
    deprecation_note,
    encode_cursor,
    node_path,
    ok,
    shown,
    trim,
)
from ..execution import runners as execute
from ..session import Session
from ..store import Store
from .protocol import World, drop_empty, path_text, words_of
from .shared import (
    cannot_run,
    capped_summary,
    check_capability,
    delegate,
    has_capability,
    sample_call,
    visible_only,
)

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


def _kept(pointer: Json, wanted: list[str], able: str | None, session: Session) -> bool:
    """Whether a pointer passes the tag and capability filters and the session's policy."""
    if wanted and not set(wanted) <= {t.lower() for t in pointer.get("tags", [])}:
        return False
    if able is not None and not has_capability(pointer, able):
        return False
    return not session.filters or session.allows(pointer["tool_id"], pointer.get("kind"))


def _listed(
    store: Store, session: Session, shard: Json, where: tuple[str, ...], query: str | None, filters: Json, page: range
) -> tuple[list[Json], int, list[Any]]:
    """(the page's pointers, how many in all, the ranked hits) of one list call.

    ``filters`` holds ``wanted`` (tags) and ``able`` (a capability); ``page`` is offset .. offset + limit.
    """
    wanted, able = filters["wanted"], filters["able"]
    narrowed = bool(wanted) or able is not None or session.filters
    if query is not None and not narrowed:  # ranked, and only the page's pointers are read
        ranked, total = store.searcher_required().rank_tools_page(
            query, within=list(where), offset=page.start, limit=len(page)
        )
        return [h[0] for h in ranked], total, ranked
    hits: list[Any] = []
    if query is not None:  # filters narrow the ranked hits: every hit's pointer is needed
        hits = store.searcher_required().rank_tools(query, within=list(where))
        pointers = [h[0] for h in hits]
    elif bool(wanted) or able is not None:
        pointers = list(store.subtree_pointers(where).values())
    elif page.stop <= len(shard.get("tools", [])) and not session.filters:
        pointers = shard.get("tools", [])  # the first page answers without fetching more
    else:
        pointers = store.node_tools(shard)
    pointers = [p for p in pointers if _kept(p, wanted, able, session)]
    searched_or_filtered = query is not None or narrowed
    total = len(pointers) if searched_or_filtered else shard.get("direct_tools", len(pointers))
    return pointers[page.start : page.stop], total, hits


def list_node(
    store: Store, session: Session, path: Any, tags: Any, query: Any, limit: Any, cursor: Any, capability: Any = None
) -> Json:
    """Child nodes and tool pointers at ``path`` (paged); ``tags``, ``capability`` and ``query`` search its subtree.

    ``path`` is a list of names, ``"a/b"`` or ``"a.b"``; names match case-insensitively. Tools the session's
    policy hides are not listed (and not counted).
    """
    where = store.canonical_path(node_path(path))
    wanted = check_tags(tags)
    able = check_capability(capability)
    count = check_limit(limit, 10)
    if query is not None:
        check_str(query, "query", allow_empty=True)
    offset = decode_cursor(cursor)
    shard = store.node(where)
    searched = isinstance(query, str) and bool(trim(query))
    filtered = bool(wanted) or able is not None
    page, total, hits = _listed(
        store,
        session,
        shard,
        where,
        query if searched else None,
        {"wanted": wanted, "able": able},
        range(offset, offset + count),
    )
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
    best = max(confidences.values(), default=0.0)
    weak = store.searcher_required().weak_words(query, best) if searched and tools and not offset else None
    if weak is not None:  # the ranked hits share only part of the request: say so, and browse instead
        hints.append(
            f"No good match for {query[:200]!r}: no tool mentions {', '.join(repr(w) for w in weak[:5])}, "
            "so these match only part of it. Try other words for it, or browse this category."
        )
        next_action: Json | None = {"op": "list", "args": {"path": "/".join(where)}}
    elif tools:
        next_action = {"op": "describe", "args": {"tool_id": tools[0]["tool_id"]}}
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
    if weak is not None:
        out["weak"] = True
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


def _category(store: Store, query: str, category_path: Any) -> tuple[str, ...]:
    """The category as the catalogue spells it; UNKNOWN_PATH whose next_action runs the same query nearby.

    Nearby is the closest existing child when one is close, else the deepest node of the path that exists.
    """
    try:
        return store.canonical_path(node_path(category_path))
    except ReaderError as err:
        if err.code == "UNKNOWN_PATH":
            near = [*err.details.get("suggestions", []), err.details.get("parent", "")][0]
            err.next_action = {"op": "search_in", "args": {"query": query, "path": near}}
        raise


def search_tool_by_category(
    store: Store, session: Session, query: Any, category_path: Any, limit: Any, cursor: Any
) -> Json:
    """Tools under ``category_path`` ranked for ``query``; NO_MATCH_IN_CATEGORY when none match.

    Hits the session's policy hides are left out of the page (a page may then hold fewer than ``limit``).
    """
    check_query(query, "query")
    count = check_limit(limit, 5)
    if cursor is not None and not isinstance(cursor, str):
        raise bad(f"cursor {shown(cursor)} must be a string this reader returned")
    where = _category(store, query, category_path)  # UNKNOWN_PATH with a way forward before searching
    inside = "/".join(where) or "root"  # help on a search within a category is that category, not the root
    answer = delegate(store.searcher_required().search_tool_by_category(query, list(where), count, cursor), inside)
    if isinstance(answer.get("error"), dict):
        answer["error"]["help_path"] = inside
    if answer.get("ok") and isinstance(answer.get("results"), list) and session.filters:
        answer["results"] = visible_only(session, answer["results"], "tool_id")
        if not answer["results"]:
            answer["hints"] = ["No tool this session may use matches here; browse the category instead."]
            answer["next_action"] = {"op": "list", "args": {"path": "/".join(where)}}
    if answer.get("ok") and isinstance(answer.get("results"), list):  # each hit's one line, capped (issue 35)
        answer["results"] = [capped_summary(r) for r in answer["results"]]
    if answer.get("ok") and answer.get("results"):
        answer["next_action"] = answer.get("next_action") or {
            "op": "describe",
            "args": {"tool_id": answer["results"][0]["tool_id"]},
        }
    return answer


def _author_order(schema: Any, order: Any) -> None:
    """Put a described schema's top-level properties in the spec's ``arg_order`` (the stored keys are sorted)."""
    if not isinstance(schema, dict) or not isinstance(schema.get("properties"), dict) or not isinstance(order, list):
        return
    properties = schema["properties"]
    first = {name: properties[name] for name in order if isinstance(name, str) and name in properties}
    schema["properties"] = {**first, **properties}


def describe(store: Store, session: Session, name: Any) -> Json:
    """The full spec of a tool by canonical name or alias (a skill's SKILL.md body too); marks it expanded.

    A tool the session's policy hides is TOOL_NOT_FOUND, as if absent. A tool this reader cannot run here
    says why once (one hint) and offers no call.
    """
    tool_id, spec = store.spec(check_name(name), visible=session.allows)
    spec = session.model_spec(spec)  # without the arguments the host fills
    session.expanded(tool_id)
    out: Json = {k: copy.deepcopy(spec.get(k)) for k in DESCRIBED_KEYS}
    _author_order(out.get("args_schema"), spec.get("arg_order"))
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
    refused = cannot_run(session, tool_id, spec)
    executable = refused is None
    hints: list[str] = [] if refused is None else [_why_not(refused)]
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
    if spec.get("deprecated"):
        hints.append(deprecation_note(spec))
    next_action = sample_call(tool_id, spec) if executable else None
    out = drop_empty(out, ("tool_id", "args_schema", "executable"))
    return ok(out, help_path=tool_id, hints=hints, next_action=next_action)


def _why_not(refused: ReaderError) -> str:
    """The one hint a described tool that cannot run here carries: the call's own answer, said in advance."""
    if refused.code == "NOT_EXECUTABLE":
        return f"Not runnable by this reader: {refused.message}. Calling it answers NOT_EXECUTABLE."
    return f"Not runnable on this host: {refused.message}. Calling it answers {refused.code}; do not retry."


def read_skill_resource(store: Store, session: Session, tool_id: Any, path: Any) -> Json:
    """One bundled file of a skill (level 3), read only when asked for."""
    resolved, spec = store.spec(check_name(tool_id), visible=session.allows)
    skill = spec.get("skill")
    if not isinstance(skill, dict):
        raise bad(f"{resolved} is not a skill; only skills bundle resources", help_path=resolved)
    session.check_namespace(resolved)
    return ok(execute.read_resource(resolved, skill, path, store.fetch_bytes), help_path=resolved)


# -- the dialect's row of the protocol (:mod:`.protocol`; the registry is ``DIALECTS`` in this package) ----
NAME = "spec"
OPERATIONS: tuple[str, ...] = tuple(tool.name for tool in dialect_tools(NAME))
#: Abstract op → the call an agent makes, as the docs print it.
PROTOCOL_ROW: dict[str, str] = {
    "list": 'list(path="a/b")',
    "search": 'search_tool_by_category(query, category_path="")',
    "search_nodes": "search_nodes(query)",
    "search_in": 'search_tool_by_category(query, category_path="a/b")',
    "describe": "expand_tool(tool_id)",
    "call": "call_tool(tool_id, args)",
    "help": 'expand_tool(tool_id) for a tool; list(path) for a node; list(path="") for the root; '
    "search_tool_by_category(query=<words>) otherwise",
    "read_resource": 'call_tool(tool_id, args={"resource": path})',
}
#: Abstract op → the tool a hint names for it.
HINT_NAMES: dict[str, str] = {
    "list": "list",
    "search": "search_tool_by_category",
    "search_nodes": "search_nodes",
    "search_in": "search_tool_by_category",
    "describe": "expand_tool",
    "call": "call_tool",
    "help": "expand_tool",
    "read_resource": "call_tool",
}


#: The abstract ops the spec dialect renders without looking at the catalogue.
_SIMPLE: dict[str, Any] = {
    "list": lambda a: {"op": "list", "args": {"path": path_text(a.get("path", ""))}},
    "search": lambda a: {"op": "search_tool_by_category", "args": {"query": a["query"], "category_path": ""}},
    "search_nodes": lambda a: {"op": "search_nodes", "args": {"query": a["query"]}},
    "search_in": lambda a: {
        "op": "search_tool_by_category",
        "args": {"query": a["query"], "category_path": path_text(a.get("path", ""))},
    },
    "describe": lambda a: {"op": "expand_tool", "args": {"tool_id": a["tool_id"]}},
    "call": lambda a: {"op": "call_tool", "args": {"tool_id": a["tool_id"], "args": a.get("args") or {}}},
    "read_resource": lambda a: {"op": "call_tool", "args": {"tool_id": a["tool_id"], "args": {"resource": a["path"]}}},
}


def render_next(op: str, args: Json, world: World) -> Json:
    """An abstract ``(op, args)`` as a call of one of this dialect's tools (:mod:`.protocol`)."""
    if op in _SIMPLE:
        rendered: Json = _SIMPLE[op](args)
        return rendered
    path = path_text(args.get("path", ""))  # help
    if not path:
        return {"op": "list", "args": {"path": ""}}
    tool_id = world.resolve(path)
    if tool_id is not None:
        return {"op": "expand_tool", "args": {"tool_id": tool_id}}
    if world.is_node(path):
        return {"op": "list", "args": {"path": path}}
    return {"op": "search_tool_by_category", "args": {"query": words_of(path), "category_path": ""}}
