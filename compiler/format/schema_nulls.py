"""Whether a JSON Schema lets ``null`` through: the reader's null rule (docs/reader.md, "Null means absent").

A ``null`` for a property whose schema allows it is a value (``assignee: null`` unassigns); any other ``null``
is the argument left out. The reader applies the rule before defaults and validation; the build uses it to
tell whether an example can run. Stdlib only.
"""

from __future__ import annotations

from typing import Any

#: How deep :func:`allows_null` follows ``anyOf``/``oneOf``/``allOf`` and local ``$ref`` s before it answers False.
NULL_CHECK_DEPTH = 8


def property_schema(schema: Any, name: str) -> Any:
    """The schema of top-level property ``name`` (None when the schema does not name it)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    return properties.get(name) if isinstance(properties, dict) else None


def local_ref(root: Any, ref: str) -> Any:
    """The subschema a local ``#/...`` reference names inside ``root``, or None."""
    if not ref.startswith("#/") or not isinstance(root, dict):
        return None
    node: Any = root
    for raw in ref[2:].split("/"):
        part = raw.replace("~1", "/").replace("~0", "~")
        node = node.get(part) if isinstance(node, dict) else None
    return node


def allows_null(root: Any, schema: Any, depth: int = 0) -> bool:
    """Whether ``schema`` (a property's, inside the args schema ``root``) accepts JSON ``null`` as a value.

    ``type`` naming ``"null"``, an ``enum`` holding null, ``const: null``, a branch of ``anyOf``/``oneOf`` that
    allows it (every branch of ``allOf``), a local ``$ref`` to such a schema: every keyword present must allow
    it, and at least one must be present. A property the schema does not name, or names without any of these
    keywords, does not allow it: null is then the argument left out (000's ``"cursor": null``, OpenAI's
    strict mode). Bounded: a deeper or cyclic schema answers False.
    """
    if not isinstance(schema, dict) or depth > NULL_CHECK_DEPTH:
        return False
    verdicts = _verdicts(root, schema, depth)
    return bool(verdicts) and all(verdicts)


def _verdicts(root: Any, schema: dict[str, Any], depth: int) -> list[bool]:
    """For each null-deciding keyword ``schema`` has, whether it lets null through."""
    out: list[bool] = []
    if isinstance(schema.get("$ref"), str):
        out.append(allows_null(root, local_ref(root, schema["$ref"]), depth + 1))
    kinds = schema.get("type")
    if isinstance(kinds, (str, list)):
        out.append(kinds == "null" or (isinstance(kinds, list) and "null" in kinds))
    if "enum" in schema:
        out.append(isinstance(schema["enum"], list) and None in schema["enum"])
    if "const" in schema:
        out.append(schema["const"] is None)
    for key, combine in (("anyOf", any), ("oneOf", any), ("allOf", all)):
        branches = schema.get(key)
        if isinstance(branches, list):
            out.append(combine(allows_null(root, b, depth + 1) for b in branches))
    return out


def without_null_optionals(schema: Any, args: dict[str, Any]) -> dict[str, Any]:
    """``args`` without the top-level nulls the schema does not allow: such a null means the argument is absent.

    A null the property's schema allows (``type: [string, "null"]``: ``assignee: null`` unassigns) stays a value
    and reaches the handler; a null for a required property stays too, and is validated.
    """
    required = schema.get("required") if isinstance(schema, dict) else None
    needed = set(required) if isinstance(required, list) else set()
    return {
        k: v for k, v in args.items() if v is not None or k in needed or allows_null(schema, property_schema(schema, k))
    }
