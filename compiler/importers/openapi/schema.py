"""Schema conversion for ``toolcat import openapi``: OpenAPI / Swagger schema objects as JSON Schema 2020-12.

``$ref`` s are inlined, recursive schemas cut at their first re-entry (:data:`MAX_RECURSION`),
deep ones at :data:`MAX_SCHEMA_DEPTH`; every lossy step is a warning naming its JSON pointer.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import unquote, urldefrag

from ...format.types import Json
from ..common import ImporterError, Warnings
from .refs import Resolver, pointer

#: Nesting of schemas (properties, items, ...) kept; deeper ones become ``{}`` with a warning.
MAX_SCHEMA_DEPTH = 12
#: A ``$ref`` met again inside itself is expanded this many times, then cut with a warning.
MAX_RECURSION = 1
#: Schema objects one import may convert in all: $refs that fan out (each naming the next twice) stop here.
MAX_SCHEMA_NODES = 1_000_000
#: Annotation-only keywords JSON Schema has no place for; dropped with a warning.
DROPPED_KEYWORDS = ("discriminator", "xml", "externalDocs")


@functools.lru_cache(maxsize=65_536)
def _escaped(name: str) -> str:
    """A property name as one JSON pointer part (a fan-out meets the same names again and again)."""
    return pointer(name)[1:]


class SchemaConverter:
    """OpenAPI / Swagger schema objects as self-contained JSON Schema 2020-12 (refs inlined, cycles cut)."""

    def __init__(self, resolver: Resolver, warnings: Warnings, version: str) -> None:
        self.resolver = resolver
        self.warnings = warnings
        self.swagger = version.startswith("2")
        self.v31 = version.startswith("3.1")
        self.nodes = 0
        #: (ref, base) -> (target URI, its document URI, value): a fan-out looks each $ref up once
        self._refs: dict[tuple[str, str], tuple[str, str, Any]] = {}
        self._shown: dict[str, str] = {}

    def _show(self, where: str) -> str:
        """``where`` as warnings name it (once per place: a fan-out passes the same places again and again)."""
        shown = self._shown.get(where)
        if shown is None:
            shown = self._shown[where] = self.resolver.show(where).removeprefix("at ")
        return shown

    def _lookup(self, ref: str, base: str, where: str) -> tuple[str, str, Any]:
        found = self._refs.get((ref, base))
        if found is None:
            target, value = self.resolver.lookup(ref, base, where)
            found = self._refs[(ref, base)] = (target, urldefrag(target)[0], value)
        return found

    def convert(
        self, node: Any, base: str, where: str, *, request: bool = True, stack: tuple[str, ...] = (), depth: int = 0
    ) -> Any:
        """``node`` (at the absolute pointer URI ``where``) in the project's schema dialect."""
        if isinstance(node, bool):
            return node
        self.nodes += 1
        if self.nodes > MAX_SCHEMA_NODES:
            raise ImporterError(
                f"{self.resolver.label}: {self.resolver.show(where)}: the spec's schemas expand to more than "
                f"{MAX_SCHEMA_NODES:,} schema objects ($refs that fan out); inline less, or split the spec"
            )
        if not isinstance(node, dict):
            raise ImporterError(
                f"{self.resolver.label}: {self.resolver.show(where)}: a schema must be an object, got {type(node).__name__}"
            )
        if depth > MAX_SCHEMA_DEPTH:
            self.warnings.add(
                f"schema nested deeper than {MAX_SCHEMA_DEPTH} levels cut to any value", self._show(where)
            )
            return {"description": "(nested deeper than the import keeps; any value)"}
        ref = node.get("$ref")
        if isinstance(ref, str):
            target, document, value = self._lookup(ref, base, where)
            if stack.count(target) >= MAX_RECURSION:
                self.warnings.add("recursive $ref cut (nested values are any value of its type)", self._show(where))
                out: Json = {
                    "description": f"(recursive: {unquote(urldefrag(target)[1]).rsplit('/', 1)[-1]}, "
                    "same shape as its parent)"
                }
                if isinstance(value, dict) and isinstance(value.get("type"), str):
                    out["type"] = value["type"]
                return out
            siblings = {k: v for k, v in node.items() if k != "$ref"}
            if siblings and not self.v31 and not isinstance(value, bool):
                siblings = {k: v for k, v in siblings.items() if k in ("description", "summary")}
            merged = value if not siblings or not isinstance(value, dict) else {**value, **siblings}
            return self.convert(merged, document, target, request=request, stack=(*stack, target), depth=depth)
        return self._object(node, base, where, request=request, stack=stack, depth=depth)

    def _object(self, node: Json, base: str, where: str, *, request: bool, stack: tuple[str, ...], depth: int) -> Json:
        out: Json = {}
        nullable = bool(node.get("nullable")) or bool(node.get("x-nullable"))
        for key, value in node.items():
            here = f"{where}/{key}"
            if key.startswith("x-") or key == "nullable":
                continue
            if key in DROPPED_KEYWORDS:
                self.warnings.add(f"'{key}' dropped (JSON Schema has no such keyword)", f"{self._show(where)}/{key}")
                continue
            if key == "example":
                out.setdefault("examples", [value])
            elif key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
                props: Json = {}
                for name, sub in value.items():
                    if request and key == "properties" and isinstance(sub, dict) and sub.get("readOnly") is True:
                        continue
                    props[name] = self.convert(
                        sub, base, f"{here}/{_escaped(name)}", request=request, stack=stack, depth=depth + 1
                    )
                out[key] = props
            elif key in (
                "items",
                "additionalProperties",
                "not",
                "contains",
                "propertyNames",
                "additionalItems",
                "unevaluatedProperties",
                "unevaluatedItems",
                "if",
                "then",
                "else",
            ):
                if isinstance(value, list) and key == "items":  # draft-4 tuple form
                    out["prefixItems"] = [
                        self.convert(v, base, f"{here}/{i}", request=request, stack=stack, depth=depth + 1)
                        for i, v in enumerate(value)
                    ]
                else:
                    out[key] = self.convert(value, base, here, request=request, stack=stack, depth=depth + 1)
            elif key in ("allOf", "anyOf", "oneOf", "prefixItems") and isinstance(value, list):
                out[key] = [
                    self.convert(v, base, f"{here}/{i}", request=request, stack=stack, depth=depth + 1)
                    for i, v in enumerate(value)
                ]
            elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
                bound = "minimum" if key == "exclusiveMinimum" else "maximum"
                if value and bound in node:
                    out[key] = node[bound]
            elif key in ("minimum", "maximum") and node.get(f"exclusive{key.capitalize()}") is True:
                continue
            elif key == "type" and value == "file":
                self.warnings.add(
                    "Swagger 'type: file' became a binary string (upload the content as text)", self._show(where)
                )
                out["type"] = "string"
                out["format"] = "binary"
            else:
                out[key] = value
        if "required" in out and isinstance(out.get("properties"), dict) and request:
            kept = [r for r in out["required"] if r in out["properties"] or "properties" not in node]
            if kept != out["required"]:
                out["required"] = kept
            if not out["required"]:
                del out["required"]
        if nullable:
            self._nullable(out, self._show(where))
        return out

    def _nullable(self, out: Json, show: str) -> None:
        kind = out.get("type")
        if isinstance(kind, str):
            out["type"] = [kind, "null"] if kind != "null" else "null"
        elif isinstance(kind, list):
            if "null" not in kind:
                out["type"] = [*kind, "null"]
        elif any(k in out for k in ("anyOf", "oneOf", "allOf", "$ref")):
            inner = {k: out.pop(k) for k in list(out) if k not in ("description", "title", "default", "examples")}
            out["anyOf"] = [inner, {"type": "null"}]
            return
        else:
            self.warnings.add("'nullable' without a type has nothing to add null to (dropped)", show)
            return
        if isinstance(out.get("enum"), list) and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
