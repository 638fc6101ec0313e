"""jsonschema errors as the field list an agent can act on (format layer, stdlib only).

One spelling everywhere a call's arguments are refused (``tool_exec``, the MCP server's
discovery tools): ``{"field": "a.0.b", "message": ..., "expected": ...}``, one entry per
missing or unexpected name. Errors are duck-typed (``validator``, ``validator_value``,
``instance``, ``schema``, ``absolute_path``, ``message``): jsonschema itself is never imported.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

_BOUNDS = frozenset(
    {
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "multipleOf",
    }
)


def field_name(path: Iterable[Any]) -> str:
    """``["a", 0, "b"]`` → ``a.0.b``; the arguments object itself is ``$``."""
    parts = [str(p) for p in path]
    return ".".join(parts) if parts else "$"


def json_path(path: Iterable[Any], root: str = "$") -> str:
    """``["a", 0, "b"]`` → ``$.a[0].b``: the spelling of diagnostics and ``toolcat verify``."""
    return root + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def got_text(value: Any) -> str:
    """The offending value, short: ``got "finished"``, ``got 5``."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=repr)
    except (TypeError, ValueError, RecursionError):
        text = type(value).__name__
    return "got " + (text if len(text) <= 60 else text[:57] + "...")


def expected(error: Any) -> str | None:
    """What the failed keyword wanted, in the notation of :mod:`toolcat.format.schema_text`, when it says.

    ``string | null`` for a type, ``one of: "a", "b"`` for an enum, ``exactly 3`` for a const,
    ``format date`` / ``pattern "^x"`` and bounds such as ``maxLength 64``.
    """
    from .schema_text import type_text  # noqa: PLC0415 - loaded on the one path that needs it

    validator, value = error.validator, error.validator_value
    if validator == "type":
        return type_text({"type": value})
    if validator == "enum" and isinstance(value, list):
        return "one of: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in value)
    if validator == "const":
        return f"exactly {json.dumps(value, ensure_ascii=False)}"
    if validator in ("format", "pattern"):
        return f"{validator} {json.dumps(value, ensure_ascii=False)}"
    if validator in _BOUNDS:
        return f"{validator} {value}"
    return None


def field_errors(
    errors: Iterable[Any], *, matches: Callable[[str, str], bool] | None = None, unexpected: str = "property"
) -> list[dict[str, Any]]:
    """The field list for jsonschema ``errors``, in path order, without repeats.

    ``required`` gives one entry per missing name and ``additionalProperties`` one per unexpected
    name (``expected`` lists the allowed ones); ``matches(pattern, name)`` tells which names a
    ``patternProperties`` pattern admits (the reader passes its RE2-backed search; without it a
    name is never taken as matching). ``unexpected`` names what a key is: ``property`` or
    ``argument``.
    """
    out: list[dict[str, Any]] = []
    for error in sorted(errors, key=lambda e: [str(p) for p in e.absolute_path]):
        base = list(error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            out.extend(
                {"field": field_name([*base, name]), "message": f"'{name}' is required", "expected": "present"}
                for name in error.validator_value
                if name not in error.instance
            )
            continue
        if error.validator == "additionalProperties" and isinstance(error.instance, dict):
            schema = error.schema if isinstance(error.schema, dict) else {}
            allowed = sorted(schema.get("properties") or {})
            patterns = list(schema.get("patternProperties") or {})
            wanted = ("one of " + ", ".join(allowed)) if allowed else "no properties"
            if patterns:
                wanted += " or a name matching " + ", ".join(patterns)
            out.extend(
                {"field": field_name([*base, name]), "message": f"unexpected {unexpected} '{name}'", "expected": wanted}
                for name in sorted(
                    k
                    for k in error.instance
                    if k not in allowed and not (matches and any(matches(p, k) for p in patterns))
                )
            )
            continue
        # the value and what was wanted, each said once: jsonschema's own message repeats the enum or type list
        hint = expected(error)
        item: dict[str, Any] = {
            "field": field_name(base),
            "message": got_text(error.instance) if hint else error.message,
        }
        if hint:
            item["expected"] = hint
        out.append(item)
    unique = {(e["field"], e["message"]): e for e in out}  # nested errors can repeat a missing name
    return list(unique.values())
