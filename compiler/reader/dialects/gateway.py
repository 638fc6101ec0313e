"""The gateway dialect: tool_help over the root, groups (id prefixes), operations and a search (tool_exec and tool_batch are the session's).

A group is every proper prefix of a canonical id (``onto``, ``onto.task``); each carries a summary:
the title and summary of the category node that holds its tools (their deepest common node).
Help for an operation is its arguments (name, type, required, ``default`` as seed 001 lists them, then the
rules of :func:`toolcat.format.schema_text.schema_rules`: values, bounds, format), a usage line, policy notes and every
example. ``tool_help(query=...)`` ranks operations by purpose: the gateway's search. Each function
takes the catalogue's :class:`~toolcat.reader.store.Store` and :class:`~toolcat.reader.session.Session`.
"""

from __future__ import annotations

import copy
from typing import Any

from ...format.dialects import dialect_tools
from ...format.envelope import ReaderError
from ...format.schema_text import examples_text, resolve, schema_rules, type_text
from ...format.types import Json
from ..checks import (
    MAX_LIMIT,
    MAX_NAME,
    ROOT_NAMES,
    bad,
    check_bool,
    check_limit,
    check_query,
    deprecation_note,
    ok,
    or_default,
    shown,
    trim,
)
from ..session import Session
from ..store import Store
from .protocol import World, drop_empty, path_text, words_of
from .shared import cannot_run, namespaces_of, sample_call, unknown_path, visible_only, with_summaries

HELP_FORMATS = ("short", "full")


def tool_help(
    store: Store,
    session: Session,
    path: Any,
    fmt: Any,
    include_examples: Any,
    include_schemas: Any,
    query: Any = None,
    limit: Any = None,
) -> Json:
    """Help for the root, a group (``onto``, ``onto.task``) or one operation; with ``query``, a ranked search.

    A null argument is the argument left out. Groups, operations and hits the session's policy hides are
    not shown; help on a hidden operation is TOOL_NOT_FOUND, as if it did not exist.
    """
    fmt = or_default(fmt, "short")
    if fmt not in HELP_FORMATS:
        raise bad(f"format must be 'short' or 'full', got {shown(fmt)}")
    examples = check_bool(or_default(include_examples, True), "include_examples")
    schemas = check_bool(or_default(include_schemas, False), "include_schemas")
    path = or_default(path, "root")
    if not isinstance(path, str) or len(path) > MAX_NAME:
        raise bad(f"a help path is a dotted string like 'onto.task', got {shown(path)}")
    text = trim(path).strip(".").replace("/", ".")
    if query is not None:
        checked = check_query(query, "query")  # a long query is cut (the searcher's answer says so)
        return _help_search(store, session, "" if text in ROOT_NAMES else text, checked, check_limit(limit, 5))
    if text in ROOT_NAMES:
        return _help_root(store, session, fmt)
    tool_id = store.resolve(text)
    if tool_id is not None:
        return _help_op(store, session, tool_id, fmt, examples=examples, schemas=schemas)
    namespaces = namespaces_of(store, session)
    if text.split(".", 1)[0] not in namespaces:
        raise unknown_path(text, namespaces)
    groups, ops = store.namespace_tree(text.split(".", 1)[0], keep=session.allows if session.filters else None)
    if text not in groups:
        raise unknown_path(text, sorted([*groups, *ops]))
    return _help_group(store, text, groups, ops, fmt)


# -- group summaries -------------------------------------------------------------------------------
def _common_path(pointers: list[Json]) -> tuple[str, ...]:
    paths = [tuple(p.get("path") or ()) for p in pointers if isinstance(p, dict)]
    if not paths:
        return ()
    common = paths[0]
    for other in paths[1:]:
        size = 0
        while size < min(len(common), len(other)) and common[size] == other[size]:
            size += 1
        common = common[:size]
    return common


def _node_summary(store: Store, pointers: list[Json]) -> str:
    """The title and summary of the deepest node holding every pointer; the top categories when they spread."""
    common = _common_path(pointers)
    try:
        if common:
            shard = store.node(common)
            title, summary = str(shard.get("title") or common[-1]), str(shard.get("summary") or "")
            return f"{title}: {summary}" if summary else title
        root = store.node(())
    except ReaderError:
        return ""
    titles = {c.get("name"): str(c.get("title") or c.get("name")) for c in root.get("children", [])}
    tops = dict.fromkeys(titles.get(p["path"][0], p["path"][0]) for p in pointers if p.get("path"))
    return "Spans " + ", ".join(list(tops)[:4]) if tops else ""


def _namespace_heads(store: Store, namespaces: list[str]) -> dict[str, tuple[list[Json], int]]:
    """The first page of pointers and the tool count of each namespace (their shards fetched together)."""
    index = store.manifest.get("namespace_index")
    refs = store.fetch_json(index).get("namespaces") if isinstance(index, dict) else None
    if not isinstance(refs, dict) or store.pointers_loaded:
        groups, _ = store.namespace_tree()
        everything = store.all_pointers()
        return {
            n: ([p for i, p in everything.items() if i.split(".", 1)[0] == n], groups.get(n, {}).get("count", 0))
            for n in namespaces
        }
    store.prefetch([refs[n] for n in namespaces if isinstance(refs.get(n), dict)])
    out: dict[str, tuple[list[Json], int]] = {}
    for name in namespaces:
        shard = store.fetch_json(refs[name]) if isinstance(refs.get(name), dict) else {}
        tools = [t for t in shard.get("tools", []) if isinstance(t, dict)]
        out[name] = (tools, int(shard.get("tool_count", len(tools))))
    return out


def _visible_heads(store: Store, session: Session, namespaces: list[str]) -> dict[str, tuple[list[Json], int]]:
    """The pointers and tool count of each namespace as this session sees them (empty ones left out)."""
    heads = _namespace_heads(store, namespaces)
    if not session.filters:
        return heads
    seen = {n: visible_only(session, list(store.namespace_pointers(n).values()), "tool_id") for n in heads}
    return {n: (tools, len(tools)) for n, tools in seen.items() if tools}


def _help_root(store: Store, session: Session, fmt: str) -> Json:
    heads = _visible_heads(store, session, namespaces_of(store, session))
    namespaces = list(heads)
    out: Json = {
        "path": "root",
        "level": "root",
        "title": store.manifest.get("title", ""),
        "summary": store.manifest.get("summary", ""),
        "groups": [
            drop_empty({"name": n, "summary": _node_summary(store, heads[n][0]), "op_count": heads[n][1]})
            for n in namespaces
        ],
        "usage": "tool_help(path) for a group or an operation; tool_help(query) to search by purpose; "
        "tool_exec(op, args) to run an operation.",
    }
    if fmt == "full":
        out.update(registry_version=store.registry_version, counts=store.manifest.get("counts", {}))
    next_action = {"op": "help", "args": {"path": namespaces[0]}} if namespaces else None
    return ok(drop_empty(out), help_path="root", next_action=next_action)


def _help_group(store: Store, group: str, groups: dict[str, Json], ops: dict[str, Json], fmt: str) -> Json:
    entry = groups[group]

    def op_line(tool_id: str) -> Json:
        pointer = ops[tool_id]
        line = {"op": tool_id, "summary": pointer.get("summary"), "kind": pointer.get("kind")}
        if fmt == "full":
            line.update(
                type=pointer.get("type") if pointer.get("type") != "tool" else None,
                tags=list(pointer.get("tags", [])),
                deprecated=pointer.get("deprecated") or None,
            )
        return drop_empty(line)

    def below(prefix: str) -> list[Json]:
        return [p for i, p in ops.items() if i.startswith(prefix + ".")]

    subgroups = [
        drop_empty(
            {
                "path": g,
                "summary": _node_summary(store, below(g)),
                "op_count": groups[g]["count"],
                "sample_ops": sorted(i.rsplit(".", 1)[-1] for i in groups[g]["ops"])[:8],
            }
        )
        for g in sorted(entry["groups"])
    ]
    operations = [op_line(t) for t in sorted(entry["ops"])]
    out = {
        "path": group,
        "level": "group",
        "summary": _node_summary(store, below(group)),
        "op_count": entry["count"],
        "groups": subgroups,
        "operations": operations,
    }
    first = operations[0]["op"] if operations else subgroups[0]["path"]
    return ok(drop_empty(out), help_path=group, next_action={"op": "help", "args": {"path": first}})


def _help_search(store: Store, session: Session, group: str, query: str, limit: int) -> Json:
    """Operations ranked for ``query`` (inside ``group`` when given): the gateway's find-a-tool."""
    found = store.searcher_required().find_tool(query, MAX_LIMIT if group or session.filters else limit)
    if isinstance(found, dict) and found.get("ok") is False:
        raise ReaderError(**{k: found["error"][k] for k in ("code", "message", "details", "hints", "help_path")})
    matches = [m for m in (found.get("matches") or []) if isinstance(m, dict) and isinstance(m.get("name"), str)]
    matches = visible_only(session, matches, "name")
    if group:
        matches = [m for m in matches if m["name"].startswith(group + ".")]
    operations = [
        drop_empty({"op": m["name"], "summary": m.get("summary"), "relevance": m.get("relevance")})
        for m in with_summaries(store, matches[:limit], "name")  # each hit's one line, capped (issue 35)
    ]
    out: Json = {"path": group or "root", "level": "search", "query": query, "operations": operations}
    if not operations:
        where = f" under {group}" if group else ""
        return ok(
            out,
            help_path=group or "root",
            hints=[f"No operation{where} matches {query!r}; try other words, or browse the groups."],
            next_action={"op": "help", "args": {"path": group or "root"}},
        )
    hints = [h for h in found.get("hints") or [] if isinstance(h, str)]  # a cut query's note, a weak answer's
    if found.get("weak") is True:  # no operation matches the whole request: say so, and browse instead
        out["weak"] = True
        return ok(
            out, help_path=group or "root", hints=hints, next_action={"op": "help", "args": {"path": group or "root"}}
        )
    return ok(
        out,
        help_path=group or "root",
        hints=hints or None,
        next_action={"op": "help", "args": {"path": operations[0]["op"]}},
    )


def _arg(name: str, raw: Any, root: Json, required: bool) -> Json:
    sub = raw if isinstance(raw, dict) else {}
    arg: Json = {"name": name, "type": type_text(sub, root)}
    if required:
        arg["required"] = True
    node = resolve(sub, root)
    if isinstance(node, dict) and "default" in node:  # 001's args: name, type, required, default
        arg["default"] = copy.deepcopy(node["default"])
    rules = [r for r in schema_rules(sub, root) if not r.startswith("default: ")]
    if rules:
        arg["rules"] = "; ".join(rules)
    if sub.get("description"):
        arg["description"] = sub["description"]
    examples = examples_text(sub)
    if examples:
        arg["examples"] = examples
    return arg


def _help_op(store: Store, session: Session, tool_id: str, fmt: str, *, examples: bool, schemas: bool) -> Json:
    spec = session.model_spec(store.spec(tool_id, visible=session.allows)[1])
    session.expanded(tool_id)
    schema = spec.get("args_schema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args = [_arg(name, raw, schema, name in required) for name, raw in props.items()]
    usage_args = ", ".join(f'"{a["name"]}": <{a["type"]}>' for a in args if a.get("required"))
    policy = spec.get("policy") or {}
    notes = [n for n in dict.fromkeys([spec.get("when_to_use") or "", *policy.get("edge_cases", [])]) if n]
    if notes and notes[0] in (spec.get("summary"), spec.get("description")):
        notes = notes[1:]
    if spec.get("deprecated"):
        notes.insert(0, deprecation_note(spec))
    out: Json = {
        "path": tool_id,
        "level": "operation",
        "op": tool_id,
        "type": spec.get("type") if spec.get("type") != "tool" else None,
        "summary": spec.get("summary"),
        "kind": spec.get("kind"),
        "usage": f'tool_exec(op="{tool_id}", args={{{usage_args}}})',
        "args": args,
        "notes": notes,
        "policy": copy.deepcopy(policy) if fmt == "full" else {"dont": list(policy.get("dont", []))},
    }
    if examples:
        out["examples"] = copy.deepcopy(spec.get("examples", []))
    if fmt == "full":
        out.update(
            description=spec.get("description") if spec.get("description") != spec.get("summary") else None,
            errors=copy.deepcopy(spec.get("errors", [])),
            tags=list(spec.get("tags", [])),
        )
        if isinstance(spec.get("skill"), dict):
            out["resources"] = [r.get("path") for r in spec["skill"].get("resources", [])]
    if schemas:
        out.update(args_schema=copy.deepcopy(schema), result_schema=copy.deepcopy(spec.get("result_schema")))
    out = drop_empty(out, ("args",))
    if isinstance(out.get("policy"), dict):
        out["policy"] = drop_empty(out["policy"])
        if not out["policy"]:
            del out["policy"]
    refused = cannot_run(session, tool_id, spec)
    return ok(
        out,
        help_path=tool_id,
        hints=[] if refused is None else [f"This reader cannot run this operation here: {refused.message}."],
        next_action=sample_call(tool_id, spec) if refused is None else None,
    )


# -- the dialect's row of the protocol (:mod:`.protocol`; the registry is ``DIALECTS`` in this package) ----
NAME = "gateway"
OPERATIONS: tuple[str, ...] = tuple(tool.name for tool in dialect_tools(NAME))
#: Abstract op → the call an agent makes, as the docs print it.
PROTOCOL_ROW: dict[str, str] = {
    "list": 'tool_help(path="root") at the root; tool_help(path=<group>) for an id group; '
    "tool_help(query=<node words>) for a node",
    "search": "tool_help(query)",
    "search_nodes": "tool_help(query)",
    "search_in": "tool_help(query)",
    "describe": "tool_help(path=tool_id)",
    "call": "tool_exec(op=tool_id, args)",
    "help": "tool_help(path)",
    "read_resource": 'tool_exec(op=tool_id, args={"resource": path})',
}
#: Abstract op → the tool a hint names for it.
HINT_NAMES: dict[str, str] = {
    "list": "tool_help",
    "search": "tool_help",
    "search_nodes": "tool_help",
    "search_in": "tool_help",
    "describe": "tool_help",
    "call": "tool_exec",
    "help": "tool_help",
    "read_resource": "tool_exec",
}


def render_next(op: str, args: Json, world: World) -> Json:
    """An abstract ``(op, args)`` as a call of one of this dialect's tools (:mod:`.protocol`)."""
    if op in ("search", "search_nodes", "search_in"):
        return {"op": "tool_help", "args": {"query": args["query"]}}
    if op == "describe":
        return {"op": "tool_help", "args": {"path": args["tool_id"]}}
    if op == "call":
        return {"op": "tool_exec", "args": {"op": args["tool_id"], "args": args.get("args") or {}}}
    if op == "read_resource":
        return {"op": "tool_exec", "args": {"op": args["tool_id"], "args": {"resource": args["path"]}}}
    path = path_text(args.get("path", "")).replace("/", ".").strip(".")  # list and help
    if not path:
        return {"op": "tool_help", "args": {"path": "root"}}
    if world.resolve(path) is not None or world.is_group(path):
        return {"op": "tool_help", "args": {"path": path}}
    return {"op": "tool_help", "args": {"query": words_of(path)}}
