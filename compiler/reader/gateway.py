"""The gateway dialect: tool_help over the root, groups (id prefixes) and operations (tool_exec and tool_batch are the session's).

A group is every proper prefix of a canonical id (``onto``, ``onto.task``); help for an operation
is its arguments, usage line, policy notes and examples. Each function takes the catalogue's
:class:`~toolcat.reader.store.Store` and :class:`~toolcat.reader.session.Session`.
"""

from __future__ import annotations

import copy
from typing import Any

from .checks import MAX_NAME, ROOT_NAMES, bad, check_bool, close_names, ok, shown
from .envelope import ReaderError
from .schema_text import type_text
from .session import Session
from .store import Store, deprecation_note

Json = dict[str, Any]
HELP_FORMATS = ("short", "full")


def tool_help(store: Store, session: Session, path: Any, fmt: Any, include_examples: Any, include_schemas: Any) -> Json:
    """Help for the root, a group (``onto``, ``onto.task``) or one operation (``onto.task.update``)."""
    if fmt not in HELP_FORMATS:
        raise bad(f"format must be 'short' or 'full', got {shown(fmt)}")
    examples = check_bool(include_examples, "include_examples")
    schemas = check_bool(include_schemas, "include_schemas")
    if path is None:
        path = "root"
    if not isinstance(path, str) or len(path) > MAX_NAME:
        raise bad(f"a help path is a dotted string like 'onto.task', got {shown(path)}")
    text = path.strip().strip(".").replace("/", ".")
    if text in ROOT_NAMES:
        return _help_root(store, fmt)
    tool_id = store.resolve(text)
    if tool_id is not None:
        return _help_op(store, session, tool_id, fmt, examples=examples, schemas=schemas)
    namespaces = [str(n) for n in store.manifest.get("namespaces", [])]
    if text.split(".", 1)[0] not in namespaces:
        raise unknown_path(text, namespaces)
    groups, ops = store.namespace_tree(text.split(".", 1)[0])
    if text not in groups:
        raise unknown_path(text, sorted([*groups, *ops]))
    return _help_group(text, groups, ops, fmt)


def unknown_path(text: str, names: list[str]) -> ReaderError:
    """UNKNOWN_PATH for a group or operation that does not exist, with the closest names."""
    close = close_names(text, names)
    return ReaderError(
        "UNKNOWN_PATH",
        f"no group or operation {shown(text, 120)}",
        details={"path": text, "suggestions": close},
        hints=[f"Did you mean {', '.join(close)}?" if close else "Start at the root to see the groups."],
        next_action={"op": "tool_help", "args": {"path": close[0] if close else "root"}},
        help_path="root",
    )


def _help_root(store: Store, fmt: str) -> Json:
    namespaces = [str(n) for n in store.manifest.get("namespaces", [])]
    out: Json = {
        "path": "root",
        "level": "root",
        "title": store.manifest.get("title", ""),
        "summary": store.manifest.get("summary", ""),
        "registry_version": store.registry_version,
        "counts": store.manifest.get("counts", {}),
        "groups": [{"name": n, "help_path": n} for n in namespaces],
        "usage": "tool_help(path) for a group or an operation; tool_exec(op, args) to run one; "
        "find_tool(purpose) to search.",
    }
    if fmt == "full" and store.pointers_loaded:
        groups, _ = store.namespace_tree()
        for group in out["groups"]:
            group["op_count"] = groups.get(group["name"], {}).get("count", 0)
    next_action = {"op": "tool_help", "args": {"path": namespaces[0]}} if namespaces else None
    return ok(out, help_path="root", next_action=next_action)


def _help_group(group: str, groups: dict[str, Json], ops: dict[str, Json], fmt: str) -> Json:
    entry = groups[group]

    def op_line(tool_id: str) -> Json:
        pointer = ops[tool_id]
        line = {
            "op": tool_id,
            "alias": pointer.get("alias"),
            "summary": pointer.get("summary"),
            "kind": pointer.get("kind"),
            "help_path": tool_id,
        }
        if fmt == "full":
            line.update(
                type=pointer.get("type"), tags=list(pointer.get("tags", [])), deprecated=pointer.get("deprecated")
            )
        return line

    subgroups = [
        {
            "path": g,
            "op_count": groups[g]["count"],
            "help_path": g,
            "sample_ops": sorted(i.rsplit(".", 1)[-1] for i in groups[g]["ops"])[:8],
        }
        for g in sorted(entry["groups"])
    ]
    operations = [op_line(t) for t in sorted(entry["ops"])]
    out = {
        "path": group,
        "level": "group",
        "op_count": entry["count"],
        "summary": f"{entry['count']} operation(s) under {group}: {len(operations)} here, {len(subgroups)} subgroup(s)",
        "groups": subgroups,
        "operations": operations,
    }
    first = operations[0]["op"] if operations else subgroups[0]["path"]
    return ok(out, help_path=group, next_action={"op": "tool_help", "args": {"path": first}})


def _help_op(store: Store, session: Session, tool_id: str, fmt: str, *, examples: bool, schemas: bool) -> Json:
    spec = store.spec(tool_id)[1]
    session.expanded(tool_id)
    schema = spec.get("args_schema") or {}
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    args = []
    for name, raw in props.items():
        sub = raw if isinstance(raw, dict) else {}
        arg: Json = {"name": name, "type": type_text(sub, schema), "required": name in required}
        if "default" in sub:
            arg["default"] = copy.deepcopy(sub["default"])
        if "enum" in sub:
            arg["enum"] = copy.deepcopy(sub["enum"])
        if sub.get("description"):
            arg["description"] = sub["description"]
        args.append(arg)
    usage_args = ", ".join(f'"{a["name"]}": <{a["type"]}>' for a in args if a["required"])
    policy = spec.get("policy") or {}
    notes = [n for n in [spec.get("when_to_use") or "", *policy.get("edge_cases", [])] if n]
    if spec.get("deprecated"):
        notes.insert(0, deprecation_note(spec))
    out: Json = {
        "path": tool_id,
        "level": "operation",
        "op": tool_id,
        "alias": (spec.get("aliases") or {}).get("openai", tool_id),
        "type": spec.get("type"),
        "summary": spec.get("summary"),
        "kind": spec.get("kind"),
        "usage": f'tool_exec(op="{tool_id}", args={{{usage_args}}})',
        "args": args,
        "notes": notes,
        "policy": copy.deepcopy(policy) if fmt == "full" else {"dont": list(policy.get("dont", []))},
    }
    if examples:
        shown = spec.get("examples", []) if fmt == "full" else spec.get("examples", [])[:2]
        out["examples"] = copy.deepcopy(shown)
    if fmt == "full":
        out.update(
            description=spec.get("description"),
            errors=copy.deepcopy(spec.get("errors", [])),
            tags=list(spec.get("tags", [])),
            annotations=copy.deepcopy(spec.get("annotations")),
        )
        if isinstance(spec.get("skill"), dict):
            out["resources"] = [r.get("path") for r in spec["skill"].get("resources", [])]
    if schemas:
        out.update(args_schema=copy.deepcopy(schema), result_schema=copy.deepcopy(spec.get("result_schema")))
    example = next((e.get("args") for e in spec.get("examples", []) if isinstance(e, dict)), None)
    return ok(
        out,
        help_path=tool_id,
        next_action={"op": "tool_exec", "args": {"op": tool_id, "args": copy.deepcopy(example or {})}},
    )
