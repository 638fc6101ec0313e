"""The direct dialect: no discovery tools; every tool the session may use is exposed itself, with its schema.

Seed 001 keeps the legacy flow behind its feature flag: with the gateway off, "legacy tool selection and
direct tool usage remain unchanged". This dialect is that flow for a toolcat catalogue (``toolcat serve
--dialect direct``, ``toolcat export --dialect direct``, :meth:`toolcat.reader.Catalog.direct_tools`): each
tool is offered under its provider-safe alias with its input schema, and a call runs through the same
reader execution as ``tool_exec`` (policy, argument defaults and validation, envelopes).

The list-time policies hold: a namespace the session may not see (``allowed_namespaces``, serve's
``--allow-namespace``/``--deny-namespace``) and, in a read-only session, every ``kind: write`` tool are
left out of the list, as every dialect leaves them out of its listings. ``require_expand`` has no meaning
here (each tool's schema is in the list the agent reads), so serve refuses the two together.
"""

from __future__ import annotations

from ...format.dialects import dialect_tools
from ...format.envelope import ReaderError
from ...format.types import Json
from ..checks import ok
from ..session import Session
from ..store import Store
from .protocol import World, drop_empty

#: What a hint says instead of a discovery tool's name: the lists and calls of the protocol the agent speaks.
_LISTED = "your tool list"


def direct_tools(store: Store, session: Session) -> Json:
    """``{ok, count, tools}``: a lean spec of every tool the session may see, sorted by tool_id.

    Each tool is ``{tool_id, alias, summary, description?, args_schema, kind?, annotations?}`` (the shape
    of :meth:`toolcat.reader.Catalog.always_loaded`'s entries); a spec that cannot be read is left out.
    """
    pointers = store.all_pointers()
    tools: list[Json] = []
    for tool_id, pointer in pointers.items():
        if session.filters and not session.allows(tool_id, pointer.get("kind")):
            continue
        try:
            _, spec = store.spec(tool_id, visible=session.allows if session.filters else None)
        except ReaderError:
            continue
        tools.append(_lean(tool_id, spec))
    return ok({"count": len(tools), "tools": tools}, help_path="root")


def _lean(tool_id: str, spec: Json) -> Json:
    raw = spec.get("aliases")
    aliases: Json = raw if isinstance(raw, dict) else {}
    schema = spec.get("args_schema")
    description = spec.get("description")
    return drop_empty(
        {
            "tool_id": tool_id,
            "alias": str(aliases.get("anthropic") or aliases.get("openai") or tool_id.replace(".", "_")),
            "summary": spec.get("summary"),
            "description": description if description != spec.get("summary") else None,
            "args_schema": schema if isinstance(schema, dict) else {"type": "object"},
            "kind": spec.get("kind"),
            "annotations": spec.get("annotations"),
        }
    )


# -- the dialect's row of the protocol (:mod:`.protocol`; the registry is ``DIALECTS`` in this package) ----
NAME = "direct"
OPERATIONS: tuple[str, ...] = tuple(tool.name for tool in dialect_tools(NAME))
#: Abstract op → the call an agent makes, as the docs print it.
PROTOCOL_ROW: dict[str, str] = {
    "list": "none: every tool is in the tool list already",
    "search": "none: every tool is in the tool list already",
    "search_nodes": "none: every tool is in the tool list already",
    "search_in": "none: every tool is in the tool list already",
    "describe": "none: each tool's schema is in the tool list",
    "call": "<alias>(**args): the tool itself, by its provider alias",
    "help": "none: each tool's schema is in the tool list",
    "read_resource": "<alias>(resource=path): the skill itself",
}
#: Abstract op → what a hint names for it: there is no discovery tool to name.
HINT_NAMES: dict[str, str] = {
    "list": _LISTED,
    "search": _LISTED,
    "search_nodes": _LISTED,
    "search_in": _LISTED,
    "describe": _LISTED,
    "call": "the tool itself",
    "help": _LISTED,
    "read_resource": "the skill itself",
}


def render_next(op: str, args: Json, world: World) -> Json | None:
    """An abstract ``(op, args)`` as a call of a listed tool; None for discovery (nothing to call for it)."""
    if op not in ("call", "read_resource"):
        return None
    tool_id = world.resolve(args["tool_id"]) or str(args["tool_id"])
    call_args = (args.get("args") or {}) if op == "call" else {"resource": args["path"]}
    return {"op": world.alias_of(tool_id), "args": call_args}
