"""The agent protocol of each dialect: abstract operations → the dialect's own tool and arguments.

Code below the dialect layer (the store, the session, the search module, handlers) writes a
``next_action`` as an *abstract* operation, ``{"op": OP, "args": {...}}``:

========================  =================================================================
``list``                  ``{path}``: a node ("" or "root" is the root; dotted or slash)
``search``                ``{query}``: find a tool by purpose
``search_nodes``          ``{query}``: find a category
``search_in``             ``{query, path}``: find a tool inside one category
``describe``              ``{tool_id}``: read one tool's full definition
``call``                  ``{tool_id, args}``: run one tool
``help``                  ``{path}``: help on a tool, a group or the root
``read_resource``         ``{tool_id, path}``: one file bundled with a skill
========================  =================================================================

:func:`render` turns every ``next_action`` of an answer (and of each item of a batch) into a call
of a tool the dialect really exposes, with arguments that pass that tool's input schema
(:mod:`toolcat.format.dialects`), and rewrites tool names in hints to the dialect's. A
``next_action`` already written with another dialect's tool names (``tool_help``, ``tool_exec``,
``find_tool``, ``expand_tool`` …, as handlers and older modules do) is first read back into its
abstract op, so nothing slips through. :data:`PROTOCOL` is the same table as text, for the docs
and the tests. :func:`lean` drops what a model does not need from a success answer.
Stdlib only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from ...format.types import Json

log = logging.getLogger(__name__)


OPS: tuple[str, ...] = ("list", "search", "search_nodes", "search_in", "describe", "call", "help", "read_resource")

#: Each dialect's protocol table, as the docs print it: abstract op → the call an agent makes.
PROTOCOL: dict[str, dict[str, str]] = {
    "spec": {
        "list": 'list(path="a/b")',
        "search": 'search_tool_by_category(query, category_path="")',
        "search_nodes": "search_nodes(query)",
        "search_in": 'search_tool_by_category(query, category_path="a/b")',
        "describe": "expand_tool(tool_id)",
        "call": "call_tool(tool_id, args)",
        "help": 'expand_tool(tool_id) for a tool; list(path) for a node; list(path="") for the root; '
        "search_tool_by_category(query=<words>) otherwise",
        "read_resource": 'call_tool(tool_id, args={"resource": path})',
    },
    "gateway": {
        "list": 'tool_help(path="root") at the root; tool_help(path=<group>) for an id group; '
        "tool_help(query=<node words>) for a node",
        "search": "tool_help(query)",
        "search_nodes": "tool_help(query)",
        "search_in": "tool_help(query)",
        "describe": "tool_help(path=tool_id)",
        "call": "tool_exec(op=tool_id, args)",
        "help": "tool_help(path)",
        "read_resource": 'tool_exec(op=tool_id, args={"resource": path})',
    },
    "namespaced": {
        "list": "tool_list() at the root; tool_list(namespace=<group>) for an id group; find_tool(purpose=<node words>)",
        "search": "find_tool(purpose=query)",
        "search_nodes": "find_tool(purpose=query)",
        "search_in": "find_tool(purpose=query)",
        "describe": "tool_describe(name=tool_id)",
        "call": "<alias>(**args): the described tool itself, callable by its provider alias",
        "help": "tool_describe(name) for a tool; tool_list(namespace) for a group; tool_list() for the root",
        "read_resource": "<alias>(resource=path): the described skill itself",
    },
}

#: Every tool name any dialect exposes, mapped to the abstract op it performs (for hints).
_TOOL_OPS: dict[str, str] = {
    "tool_help": "help",
    "tool_exec": "call",
    "tool_batch": "call",
    "tool_describe": "describe",
    "tool_list": "list",
    "find_tool": "search",
    "expand_tool": "describe",
    "call_tool": "call",
    "search_tool_by_category": "search_in",
    "search_nodes": "search_nodes",
    "read_skill_resource": "read_resource",
}
#: The tool a hint names for each abstract op, per dialect.
_HINT_NAMES: dict[str, dict[str, str]] = {
    "spec": {
        "list": "list",
        "search": "search_tool_by_category",
        "search_nodes": "search_nodes",
        "search_in": "search_tool_by_category",
        "describe": "expand_tool",
        "call": "call_tool",
        "help": "expand_tool",
        "read_resource": "call_tool",
    },
    "gateway": {
        "list": "tool_help",
        "search": "tool_help",
        "search_nodes": "tool_help",
        "search_in": "tool_help",
        "describe": "tool_help",
        "call": "tool_exec",
        "help": "tool_help",
        "read_resource": "tool_exec",
    },
    "namespaced": {
        "list": "tool_list",
        "search": "find_tool",
        "search_nodes": "find_tool",
        "search_in": "find_tool",
        "describe": "tool_describe",
        "call": "tool_describe",
        "help": "tool_describe",
        "read_resource": "tool_describe",
    },
}
_HINT_WORDS = re.compile(r"\b(" + "|".join(sorted(_TOOL_OPS, key=len, reverse=True)) + r")\b|\blist(?=\()")


class World(Protocol):
    """What rendering needs to know about the catalogue (the store answers it)."""

    def resolve(self, name: Any) -> str | None:
        """The canonical id of a tool name or alias, else None."""

    def alias_of(self, tool_id: str) -> str:
        """The provider alias a model calls ``tool_id`` by."""

    def is_group(self, path: str) -> bool:
        """Whether ``path`` is an id group (a proper prefix of some tool id)."""

    def is_node(self, path: str) -> bool:
        """Whether ``path`` is a node of the category tree."""


def path_text(path: Any) -> str:
    """A node path as the one string every dialect takes: ``["a", "b"]`` → ``"a/b"``; the root is ``""``."""
    if isinstance(path, (list, tuple)):
        return "/".join(str(p) for p in path)
    if not isinstance(path, str) or path.strip() in ("root", "/", "."):
        return ""
    return path.strip()


def abstract(action: Any) -> tuple[str, Json] | None:
    """``(op, args)`` of a next_action in the abstract vocabulary, or in any dialect's tool names; None if neither."""
    if not isinstance(action, dict) or not isinstance(action.get("op"), str):
        return None
    op = action["op"]
    raw = action.get("args")
    args: Json = raw if isinstance(raw, dict) else {}
    if op in OPS:
        return op, dict(args)
    if op == "tool_help":
        if isinstance(args.get("query"), str):
            return "search", {"query": args["query"]}
        return "help", {"path": args.get("path", "root")}
    if op in ("tool_exec", "call_tool"):
        tool = args.get("op", args.get("tool_id"))
        return "call", {"tool_id": tool, "args": args.get("args") or {}}
    if op in ("tool_describe", "expand_tool"):
        return "describe", {"tool_id": args.get("name", args.get("tool_id"))}
    if op == "find_tool":
        return "search", {"query": args.get("purpose", "")}
    if op == "tool_list":
        return "help", {"path": args.get("namespace") or "root"}
    if op == "search_tool_by_category":
        path = path_text(args.get("category_path", ""))
        return (
            ("search_in", {"query": args.get("query", ""), "path": path})
            if path
            else (
                "search",
                {"query": args.get("query", "")},
            )
        )
    if op == "read_skill_resource":
        return "read_resource", {"tool_id": args.get("tool_id"), "path": args.get("path")}
    return None


def _words(path: str) -> str:
    return re.sub(r"[./_\s-]+", " ", path).strip() or "tools"


def _spec(op: str, args: Json, world: World) -> Json:
    if op == "list":
        return {"op": "list", "args": {"path": path_text(args.get("path", ""))}}
    if op == "search":
        return {"op": "search_tool_by_category", "args": {"query": args["query"], "category_path": ""}}
    if op == "search_nodes":
        return {"op": "search_nodes", "args": {"query": args["query"]}}
    if op == "search_in":
        return {
            "op": "search_tool_by_category",
            "args": {"query": args["query"], "category_path": path_text(args.get("path", ""))},
        }
    if op == "describe":
        return {"op": "expand_tool", "args": {"tool_id": args["tool_id"]}}
    if op == "call":
        return {"op": "call_tool", "args": {"tool_id": args["tool_id"], "args": args.get("args") or {}}}
    if op == "read_resource":
        return {"op": "call_tool", "args": {"tool_id": args["tool_id"], "args": {"resource": args["path"]}}}
    path = path_text(args.get("path", ""))  # help
    if not path:
        return {"op": "list", "args": {"path": ""}}
    tool_id = world.resolve(path)
    if tool_id is not None:
        return {"op": "expand_tool", "args": {"tool_id": tool_id}}
    if world.is_node(path):
        return {"op": "list", "args": {"path": path}}
    return {"op": "search_tool_by_category", "args": {"query": _words(path), "category_path": ""}}


def _gateway(op: str, args: Json, world: World) -> Json:
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
    return {"op": "tool_help", "args": {"query": _words(path)}}


def _namespaced(op: str, args: Json, world: World) -> Json:
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
    return {"op": "find_tool", "args": {"purpose": _words(path)}}


_RENDERERS: dict[str, Callable[[str, Json, World], Json]] = {
    "spec": _spec,
    "gateway": _gateway,
    "namespaced": _namespaced,
}


def render_action(action: Any, dialect: str, world: World) -> Json | None:
    """A next_action as a call of one of ``dialect``'s tools (None stays None; an unreadable one is dropped)."""
    found = abstract(action)
    if found is None:
        return None
    op, args = found
    for key in ("query", "tool_id"):
        if key in args and (not isinstance(args[key], str) or not args[key].strip()):
            if key == "query":
                return _RENDERERS[dialect]("help", {"path": ""}, world)
            return None
    if op == "call" and not isinstance(args.get("args", {}), dict):
        args["args"] = {}
    if op == "read_resource" and not isinstance(args.get("path"), str):
        return None
    return _RENDERERS[dialect](op, args, world)


def render_hint(text: str, dialect: str) -> str:
    """A hint with every tool name rewritten to the one ``dialect`` exposes for the same operation."""
    names = _HINT_NAMES[dialect]

    def swap(match: re.Match[str]) -> str:
        word = match.group(0)
        return names[_TOOL_OPS.get(word, "list")]

    return _HINT_WORDS.sub(swap, text) if isinstance(text, str) else text


def hint_tools(text: str) -> set[str]:
    """The tool names a hint mentions (for the conformance test)."""
    return {m.group(0) for m in _HINT_WORDS.finditer(text)}


def _render_one(envelope: Json, dialect: str, world: World) -> None:
    holder = envelope["error"] if isinstance(envelope.get("error"), dict) else envelope
    if "next_action" in holder:
        holder["next_action"] = render_action(holder["next_action"], dialect, world)
    if isinstance(holder.get("hints"), list):
        holder["hints"] = [render_hint(h, dialect) for h in holder["hints"]]
    if holder is not envelope and isinstance(envelope.get("hints"), list):
        envelope["hints"] = [render_hint(h, dialect) for h in envelope["hints"]]


def render(envelope: Json, dialect: str, world: World) -> Json:
    """``envelope`` with its next_action and hints (and those of each batch item) in ``dialect``'s terms."""
    if not isinstance(envelope, dict) or dialect not in _RENDERERS:
        return envelope
    _render_one(envelope, dialect, world)
    results = envelope.get("results")
    if isinstance(results, list):
        for item in results:
            if isinstance(item, dict) and "ok" in item:
                _render_one(item, dialect, world)
    return envelope


# -- lean answers ----------------------------------------------------------------------------------
def _empty(value: Any) -> bool:
    return value is None or (isinstance(value, (list, dict, str)) and not value)


def drop_empty(data: Json, keep: tuple[str, ...] = ()) -> Json:
    """``data`` without its null, empty and false-by-default keys (``keep`` names keys always kept)."""
    return {k: v for k, v in data.items() if k in keep or not _empty(v)}


#: Success-answer keys kept even when null or empty (they carry meaning: no more pages, no results).
_KEEP = ("ok", "path", "next_cursor", "results", "matches", "tools", "nodes", "count", "help_path", "result", "args")


def lean(envelope: Json) -> Json:
    """A success answer without null/empty top-level fields; an error envelope keeps its documented shape (lean meta)."""
    if not isinstance(envelope, dict):
        return envelope
    out = drop_empty(envelope, _KEEP) if envelope.get("ok") is True else dict(envelope)
    meta = out.get("meta")
    if isinstance(meta, dict):
        out["meta"] = drop_empty({k: v for k, v in meta.items() if not (k == "tool_id" and v == out.get("op"))})
    return out


# -- always-loaded tools ---------------------------------------------------------------------------
def always_loaded(store: Any) -> list[Json]:
    """Lean specs of the tools marked ``always_load: true`` (manifest key ``always_load``), by tool_id.

    Each is ``{tool_id, alias, summary, description?, args_schema, kind?, annotations?}``; an entry whose
    spec cannot be read is left out (and logged).
    """
    from ...format.envelope import ReaderError  # noqa: PLC0415

    entries = store.manifest.get("always_load")
    out: list[Json] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict) or not isinstance(entry.get("tool_id"), str):
            continue
        try:
            ref = entry.get("ref")
            spec = store.fetch_json(ref) if isinstance(ref, dict) else store.spec(entry["tool_id"])[1]
        except ReaderError as exc:
            log.warning("cannot read always-loaded tool %s: %s", entry["tool_id"], exc.message)
            continue
        if not isinstance(spec, dict):
            continue
        schema = spec.get("args_schema")
        lean_spec = {
            "tool_id": entry["tool_id"],
            "alias": str(entry.get("alias") or entry["tool_id"].replace(".", "_")),
            "summary": spec.get("summary"),
            "description": spec.get("description") if spec.get("description") != spec.get("summary") else None,
            "args_schema": schema if isinstance(schema, dict) else {"type": "object"},
            "kind": spec.get("kind"),
            "annotations": spec.get("annotations"),
        }
        out.append(drop_empty(lean_spec))
    return sorted(out, key=lambda t: t["tool_id"])
