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
abstract op, so nothing slips through. Each dialect module (``spec.py``, ``gateway.py``,
``namespaced.py``, registered in ``DIALECTS`` of this package) carries its own row: the table as
text (``PROTOCOL_ROW``), its hint names and its renderer (``render_next``); this module holds
what they share. :func:`lean` drops what a model does not need from a success answer.
Stdlib only.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, Protocol

from ...format.types import Json
from ..checks import TRIM, trim

log = logging.getLogger(__name__)


OPS: tuple[str, ...] = ("list", "search", "search_nodes", "search_in", "describe", "call", "help", "read_resource")

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
_HINT_WORDS = re.compile(
    r"\b(?P<word>(?:" + "|".join(sorted(_TOOL_OPS, key=len, reverse=True)) + r")\b|list(?=\())(?P<args>\([^()]*\))?"
)


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
    if not isinstance(path, str) or trim(path) in ("root", "/", "."):
        return ""
    return trim(path)


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


def words_of(path: str) -> str:
    """A path as search words: ``onto.task`` → ``onto task`` (``tools`` when nothing is left)."""
    return trim(re.sub(f"[./_{TRIM}-]+", " ", path)) or "tools"


class Dialect(Protocol):
    """What a dialect module carries (``reader/dialects/spec.py`` …; the registry is ``DIALECTS`` in the package)."""

    #: The dialect's name, one of :data:`toolcat.format.dialects.DIALECT_NAMES`.
    NAME: str
    #: The discovery tools the dialect exposes, by name (:func:`toolcat.format.dialects.dialect_tools`).
    OPERATIONS: tuple[str, ...]
    #: Abstract op → the call an agent makes, as the docs print it.
    PROTOCOL_ROW: dict[str, str]
    #: Abstract op → the tool a hint names for it.
    HINT_NAMES: dict[str, str]

    def render_next(self, op: str, args: Json, world: World) -> Json | None:
        """An abstract ``(op, args)`` as a call of one of the dialect's tools (None: the dialect has none for it)."""


def render_action(action: Any, dialect: Dialect, world: World) -> Json | None:
    """A next_action as a call of one of ``dialect``'s tools (None stays None; an unreadable one is dropped)."""
    found = abstract(action)
    if found is None:
        return None
    op, args = found
    for key in ("query", "tool_id"):
        if key in args and (not isinstance(args[key], str) or not trim(args[key])):
            if key == "query":
                return dialect.render_next("help", {"path": ""}, world)
            return None
    if op == "call" and not isinstance(args.get("args", {}), dict):
        args["args"] = {}
    if op == "read_resource" and not isinstance(args.get("path"), str):
        return None
    return dialect.render_next(op, args, world)


def render_hint(text: str, dialect: Dialect) -> str:
    """A hint with every tool name rewritten to the one ``dialect`` exposes for the same operation."""
    names = dialect.HINT_NAMES

    def swap(match: re.Match[str]) -> str:
        name = names[_TOOL_OPS.get(match.group("word"), "list")]
        # a dialect without a tool for the op names it in words (direct: "your tool list"): no call syntax then
        return name if " " in name else name + (match.group("args") or "")

    return _HINT_WORDS.sub(swap, text) if isinstance(text, str) else text


def hint_tools(text: str) -> set[str]:
    """The tool names a hint mentions (for the conformance test)."""
    return {m.group("word") for m in _HINT_WORDS.finditer(text)}


def _render_one(envelope: Json, dialect: Dialect, world: World) -> None:
    holder = envelope["error"] if isinstance(envelope.get("error"), dict) else envelope
    if "next_action" in holder:
        holder["next_action"] = render_action(holder["next_action"], dialect, world)
    if isinstance(holder.get("hints"), list):
        holder["hints"] = [render_hint(h, dialect) for h in holder["hints"]]
    if holder is not envelope and isinstance(envelope.get("hints"), list):
        envelope["hints"] = [render_hint(h, dialect) for h in envelope["hints"]]


def render(envelope: Json, dialect: Dialect, world: World) -> Json:
    """``envelope`` with its next_action and hints (and those of each batch item) in ``dialect``'s terms."""
    if not isinstance(envelope, dict):
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
def always_loaded(store: Any, visible: Callable[[str, Any], bool] | None = None) -> list[Json]:
    """Lean specs of the tools marked ``always_load: true`` (manifest key ``always_load``), by tool_id.

    Each is ``{tool_id, alias, summary, description?, args_schema, kind?, annotations?}``; an entry whose
    spec cannot be read is left out (and logged), and so is one ``visible(tool_id, kind)`` refuses (a policy).
    """
    from ...format.envelope import ReaderError  # noqa: PLC0415 - loaded on the one path that needs it

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
        if not isinstance(spec, dict) or (visible is not None and not visible(entry["tool_id"], spec.get("kind"))):
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
