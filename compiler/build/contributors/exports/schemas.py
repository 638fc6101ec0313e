"""Provider schema subsets: an args schema adapted to OpenAI, Anthropic and Gemini, every lossy change reported.

The rules followed (from each provider's function-calling documentation):

* **OpenAI** (Chat Completions ``tools``, ``strict: true``): every object has
  ``additionalProperties: false`` and lists every property in ``required``; an optional
  property becomes a union with ``null``. Supported keywords: type, properties, required,
  additionalProperties, items, enum, const, anyOf, description, title, $ref/$defs,
  pattern, format (date-time, time, date, duration, email, hostname, ipv4, ipv6, uuid),
  minimum/maximum/exclusive*/multipleOf, minItems/maxItems. ``default``, ``minLength``,
  ``maxLength``, ``uniqueItems``, ``allOf``, ``not``... are rejected: we drop them and say
  so in the property's description. A schema strict mode cannot express (a free-form
  object, an untyped value, a recursive $ref) is exported with ``strict: false``. The
  function description is at most 1,024 characters.
* **Anthropic** (``tools[].input_schema``): JSON Schema with ``type: object`` at the root
  and no ``oneOf``/``anyOf``/``allOf`` at the top level.
* **Gemini** (``functionDeclarations[].parameters``): an OpenAPI 3.0 subset. Only type,
  format, title, description, nullable, enum (strings), items, properties, required,
  min/maxItems, min/maxProperties, min/maxLength, pattern, minimum, maximum, anyOf,
  default, example, propertyOrdering. ``$ref`` is inlined; type arrays become
  ``nullable``; ``oneOf`` becomes ``anyOf``; an object needs at least one property (a tool
  without arguments has no ``parameters``).

Each ``adapt_*`` function takes ``warn(json_path, message)`` and calls it for every change that
loses meaning; :mod:`toolcat.build.contributors.exports.definitions` turns those into :class:`~toolcat.build.contributors.exports.definitions.Adaptation` records.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable

from ....format.types import JSON

OPENAI_DESCRIPTION_MAX = 1024
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM = 1000
OPENAI_KEYWORDS = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "description",
        "title",
        "$ref",
        "$defs",
        "definitions",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
GEMINI_KEYWORDS = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "nullable",
        "enum",
        "maxItems",
        "minItems",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minLength",
        "maxLength",
        "pattern",
        "example",
        "anyOf",
        "propertyOrdering",
        "default",
        "items",
        "minimum",
        "maximum",
    }
)
GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
GEMINI_FORMATS = {
    "string": frozenset({"enum", "date-time"}),
    "number": frozenset({"float", "double"}),
    "integer": frozenset({"int32", "int64"}),
}
ANTHROPIC_TOP_LEVEL_FORBIDDEN = ("oneOf", "anyOf", "allOf")
#: Keywords that carry no meaning for a model; dropped without a warning.
SILENT = frozenset({"$schema", "$id", "$comment", "$anchor", "$defs", "definitions"})


# -- helpers --------------------------------------------------------------------------


def _note(key: str, value: JSON) -> str:
    """A keyword the provider rejects, said in words for the description."""
    text = json.dumps(value, ensure_ascii=False)
    plural = "" if value == 1 else "s"
    words = {
        "default": f"default {text}",
        "minLength": f"at least {value} character{plural}",
        "maxLength": f"at most {value} character{plural}",
        "uniqueItems": "items must be unique",
        "exclusiveMinimum": f"greater than {value}",
        "exclusiveMaximum": f"less than {value}",
        "multipleOf": f"a multiple of {value}",
        "minProperties": f"at least {value} entr{'y' if value == 1 else 'ies'}",
        "maxProperties": f"at most {value} entr{'y' if value == 1 else 'ies'}",
        "pattern": f"must match /{value}/",
        "format": f"format {value}",
        "const": f"must be {text}",
        "minimum": f"at least {value}",
        "maximum": f"at most {value}",
        "minItems": f"at least {value} item{plural}",
        "maxItems": f"at most {value} item{plural}",
    }
    if key == "enum" and isinstance(value, list):
        return "one of " + ", ".join(json.dumps(v, ensure_ascii=False) for v in value)
    return words.get(key, f"{key} {text}")


def _with_notes(node: dict[str, JSON], notes: list[str]) -> None:
    if not notes:
        return
    base = str(node.get("description", "")).rstrip()
    extra = "; ".join(notes)
    node["description"] = f"{base} ({extra})" if base else extra[:1].upper() + extra[1:] + "."


def schema_path(path: str, *keys: str | int) -> str:
    """``$.a`` + ``b``, 3 → ``$.a.b[3]``: the JSON path of a keyword, as the warnings spell it."""
    for key in keys:
        path += f"[{key}]" if isinstance(key, int) else f".{key}"
    return path


class _RefInliner:
    """Replaces local ``$ref``s by the definitions they name; a cycle is cut and reported."""

    def __init__(self, root: dict[str, JSON], warn: Callable[[str, str], None]) -> None:
        self.root = root
        self.warn = warn
        self.cyclic = False

    def resolve(self, ref: str) -> JSON:
        node: JSON = self.root
        for part in ref.removeprefix("#").strip("/").split("/"):
            if not part:
                continue
            key = part.replace("~1", "/").replace("~0", "~")
            if not isinstance(node, dict) or key not in node:
                return None
            node = node[key]
        return node

    def inline(self, node: JSON, path: str, seen: tuple[str, ...] = ()) -> JSON:
        if isinstance(node, list):
            return [self.inline(v, schema_path(path, i), seen) for i, v in enumerate(node)]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            if ref in seen:
                self.cyclic = True
                self.warn(path, f"recursive $ref {ref!r} cut: nested values are described as any object")
                return {"type": "object", "description": str(node.get("description", f"see {ref}"))}
            target = self.resolve(ref)
            if not isinstance(target, dict):
                self.warn(path, f"$ref {ref!r} does not resolve; replaced by an empty schema")
                return {}
            merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
            return self.inline(merged, path, (*seen, ref))
        return {
            k: (v if k in {"$defs", "definitions"} else self.inline(v, schema_path(path, k), seen))
            for k, v in node.items()
            if k not in {"$defs", "definitions"}
        }


def schema_types(node: dict[str, JSON]) -> list[str]:
    """The JSON types a schema node allows (``properties`` alone implies object)."""
    raw = node.get("type")
    if isinstance(raw, str):
        return [raw]
    if isinstance(raw, list):
        return [str(t) for t in raw]
    if "properties" in node:
        return ["object"]
    return []


# -- OpenAI ---------------------------------------------------------------------------


class _OpenAI:
    def __init__(self, warn: Callable[[str, str], None]) -> None:
        self.warn = warn
        self.blockers: list[str] = []
        self.property_count = 0

    def nullable(self, node: dict[str, JSON]) -> dict[str, JSON]:
        out = dict(node)
        raw = out.get("type")
        if isinstance(raw, str):
            out["type"] = [raw, "null"] if raw != "null" else "null"
        elif isinstance(raw, list):
            out["type"] = raw if "null" in raw else [*raw, "null"]
        elif "anyOf" in out:
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
            return out
        else:
            return {"anyOf": [out, {"type": "null"}]}
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
        return out

    def convert(self, node: JSON, path: str, depth: int) -> dict[str, JSON]:
        if not isinstance(node, dict):
            self.blockers.append(f"{path}: boolean schema")
            return {}
        if depth > OPENAI_MAX_DEPTH:
            self.blockers.append(f"{path}: nested deeper than {OPENAI_MAX_DEPTH} levels")
        out: dict[str, JSON] = {}
        notes: list[str] = []
        node = dict(node)
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
            self.warn(path, "oneOf became anyOf (strict mode has no oneOf): exactly-one is no longer enforced")
        if "allOf" in node:
            node = self.merge_all_of(node, path)
        if "const" in node:
            node["enum"] = [node.pop("const")]
        types = schema_types(node)
        for key, value in node.items():
            if key in SILENT or key in {"properties", "required", "additionalProperties", "items", "anyOf"}:
                continue
            if key == "format" and value not in OPENAI_FORMATS:
                notes.append(_note(key, value))
                self.warn(
                    schema_path(path, key),
                    f"dropped format {value!r} (strict mode supports only "
                    f"{', '.join(sorted(OPENAI_FORMATS))}); kept in the description",
                )
            elif key in OPENAI_KEYWORDS:
                out[key] = copy.deepcopy(value)
            else:
                notes.append(_note(key, value))
                self.warn(
                    schema_path(path, key), f"dropped {key!r} (not supported in strict mode); kept in the description"
                )
        if "enum" in out and len(out["enum"]) > OPENAI_MAX_ENUM:
            self.blockers.append(f"{path}: more than {OPENAI_MAX_ENUM} enum values")
        if "anyOf" in node:
            out["anyOf"] = [
                self.convert(b, schema_path(path, "anyOf", i), depth + 1) for i, b in enumerate(node["anyOf"])
            ]
        if "object" in types:
            self.object(node, out, path, depth)
        if "array" in types:
            if isinstance(node.get("items"), dict):
                out["items"] = self.convert(node["items"], schema_path(path, "items"), depth + 1)
            else:
                self.blockers.append(f"{schema_path(path, 'items')}: an array without an items schema")
        if not types and not {"anyOf", "enum", "$ref"} & out.keys():
            self.blockers.append(f"{path}: a value of any type")
        _with_notes(out, notes)
        return out

    def merge_all_of(self, node: dict[str, JSON], path: str) -> dict[str, JSON]:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for branch in node["allOf"]:
            if not isinstance(branch, dict) or not {"properties", "required"} >= (
                branch.keys() - {"type", "description"}
            ):
                self.blockers.append(f"{path}.allOf: not a plain object merge")
                continue
            merged["type"] = "object"
            merged["properties"] = {**merged.get("properties", {}), **branch.get("properties", {})}
            merged["required"] = sorted({*merged.get("required", []), *branch.get("required", [])})
        return merged

    def object(self, node: dict[str, JSON], out: dict[str, JSON], path: str, depth: int) -> None:
        properties = node.get("properties") or {}
        extra = node.get("additionalProperties")
        no_arguments = path == "$" and extra is None  # a root without properties: a tool that takes nothing
        if extra not in (None, False) or (not properties and not no_arguments):
            self.blockers.append(f"{path}: a free-form object (additionalProperties or no properties)")
        required = set(node.get("required") or [])
        converted: dict[str, JSON] = {}
        for name, sub in properties.items():
            self.property_count += 1
            child = self.convert(sub, schema_path(path, "properties", name), depth + 1)
            converted[name] = child if name in required else self.nullable(child)
        out["type"] = out.get("type", "object")
        out["properties"] = converted
        out["required"] = list(converted)
        out["additionalProperties"] = False


def adapt_openai(schema: dict[str, JSON], warn: Callable[[str, str], None]) -> tuple[dict[str, JSON], bool]:
    """An args schema in OpenAI strict form, or (when strict cannot express it) as plain JSON Schema."""
    inliner = _RefInliner(schema, warn)
    inlined = inliner.inline(schema, "$")
    converter = _OpenAI(warn)
    strict = converter.convert(inlined, "$", 0)
    if converter.property_count > OPENAI_MAX_PROPERTIES:
        converter.blockers.append(f"$: more than {OPENAI_MAX_PROPERTIES} properties")
    if inliner.cyclic:
        converter.blockers.append("$: recursive $ref")
    if not converter.blockers:
        return strict, True
    warn("$", "strict mode off: " + "; ".join(converter.blockers))
    loose = copy.deepcopy(schema)
    for key in ANTHROPIC_TOP_LEVEL_FORBIDDEN:
        loose.pop(key, None)
    return loose, False


# -- Anthropic ------------------------------------------------------------------------


def adapt_anthropic(schema: dict[str, JSON], warn: Callable[[str, str], None]) -> dict[str, JSON]:
    """An args schema as Anthropic's ``input_schema``: JSON Schema, an object at the root."""
    out = copy.deepcopy(schema)
    for key in ANTHROPIC_TOP_LEVEL_FORBIDDEN:
        if key in out:
            out.pop(key)
            warn(schema_path("$", key), f"dropped top-level {key} (Anthropic rejects it at the root of input_schema)")
    out["type"] = "object"
    out.setdefault("properties", {})
    return out


# -- Gemini ---------------------------------------------------------------------------


class _Gemini:
    def __init__(self, warn: Callable[[str, str], None]) -> None:
        self.warn = warn

    def free_form(self, node: dict[str, JSON], path: str, what: str) -> dict[str, JSON]:
        self.warn(path, f"{what}: Gemini needs typed values, so it is passed as a JSON-encoded string")
        desc = str(node.get("description", "")).rstrip()
        return {"type": "string", "description": f"{desc} (a JSON value encoded as a string)".strip()}

    def convert(self, node: JSON, path: str) -> dict[str, JSON]:
        """``node`` in Gemini's schema subset; what cannot be said there is warned about and kept in the description."""
        if not isinstance(node, dict):
            return self.free_form({}, path, "boolean schema")
        notes: list[str] = []
        node = self._merged(dict(node), path, notes)
        types = schema_types(node)
        nullable = bool(node.get("nullable")) or "null" in types
        types = [t for t in types if t != "null"]
        if "anyOf" in node:
            branches, null_branch = self._branches(node.pop("anyOf"), path)
            nullable = nullable or null_branch
            if len(branches) == 1 and not types:
                kept = {k: v for k, v in node.items() if k in {"description", "title", "default"}}
                return {**branches[0], **kept, **({"nullable": True} if nullable else {})}
            if branches:
                node["anyOf"] = branches
        if len(types) > 1:
            node["anyOf"] = [*node.get("anyOf", []), *({"type": t} for t in types)]
            types = []
        kind = types[0] if types else None
        refused = self._refused(node, path, kind)
        if refused is not None:
            return refused
        out: dict[str, JSON] = {"type": kind} if kind else {}
        for key, value in node.items():
            if key not in SILENT and key not in {"type", "properties", "required", "items", "anyOf", "nullable"}:
                self._keyword(out, key, value, kind, schema_path(path, key), notes)
        if "anyOf" in node:
            out["anyOf"] = node["anyOf"]
        if nullable:
            out["nullable"] = True
        self._children(out, node, kind, path)
        _with_notes(out, notes)
        return out

    def _merged(self, node: dict[str, JSON], path: str, notes: list[str]) -> dict[str, JSON]:
        """``oneOf`` as ``anyOf``, ``allOf`` merged into the node, a string ``const`` as a one-value enum."""
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
            self.warn(path, "oneOf became anyOf: exactly-one is no longer enforced")
        if "allOf" in node:
            for branch in (b for b in node.pop("allOf") if isinstance(b, dict)):
                for key, value in branch.items():
                    if key == "properties":
                        node["properties"] = {**node.get("properties", {}), **value}
                    elif key == "required":
                        node["required"] = sorted({*node.get("required", []), *value})
                    else:
                        node.setdefault(key, value)
            self.warn(path, "allOf merged into one schema")
        if "const" in node:
            value = node.pop("const")
            if isinstance(value, str):
                node["enum"] = [value]
                node.setdefault("type", "string")
            else:
                notes.append(_note("const", value))
                self.warn(schema_path(path, "const"), "dropped non-string const; kept in the description")
        return node

    def _branches(self, branches: JSON, path: str) -> tuple[list[dict[str, JSON]], bool]:
        """The converted ``anyOf`` branches, and whether one of them was ``null`` (then dropped: nullable)."""
        out, null = [], False
        for index, branch in enumerate(branches):
            if isinstance(branch, dict) and schema_types(branch) == ["null"]:
                null = True
                continue
            out.append(self.convert(branch, schema_path(path, "anyOf", index)))
        return out, null

    def _refused(self, node: dict[str, JSON], path: str, kind: str | None) -> dict[str, JSON] | None:
        """The free-form string stand-in for a node Gemini cannot type, else None."""
        if kind is None and "anyOf" not in node and "enum" not in node:
            return self.free_form(node, path, "a value of any type")
        if kind is not None and kind not in GEMINI_TYPES:
            return self.free_form(node, path, f"type {kind!r}")
        if kind == "object" and not node.get("properties"):
            return self.free_form(node, path, "a free-form object")
        return None

    def _keyword(
        self, out: dict[str, JSON], key: str, value: JSON, kind: str | None, at: str, notes: list[str]
    ) -> None:
        """One keyword of the node into ``out``, or into the description's notes with a warning."""
        if key == "enum":
            if all(isinstance(v, str) for v in value) and kind in {None, "string"}:
                out["enum"] = list(value)
                out.setdefault("type", "string")
                return
            notes.append(_note(key, value))
            self.warn(at, "dropped a non-string enum (Gemini enums are strings); kept in the description")
        elif key == "format":
            if value in GEMINI_FORMATS.get(kind or "", frozenset()):
                out[key] = value
                return
            notes.append(_note(key, value))
            self.warn(at, f"dropped format {value!r} (not supported for {kind}); kept in the description")
        elif key == "examples" and isinstance(value, list) and value:
            out["example"] = value[0]
        elif key == "additionalProperties":
            if value not in (False, None):
                self.warn(at, "dropped additionalProperties: extra keys are no longer described")
        elif key in GEMINI_KEYWORDS:
            out[key] = copy.deepcopy(value)
        else:
            notes.append(_note(key, value))
            self.warn(at, f"dropped {key!r} (not in Gemini's schema subset); kept in the description")

    def _children(self, out: dict[str, JSON], node: dict[str, JSON], kind: str | None, path: str) -> None:
        """An object's properties and required names, an array's items, converted."""
        if kind == "object":
            properties = {
                name: self.convert(sub, schema_path(path, "properties", name))
                for name, sub in node["properties"].items()
            }
            out["properties"] = properties
            required = [r for r in node.get("required", []) if r in properties]
            if required:
                out["required"] = required
        if kind == "array":
            if isinstance(node.get("items"), dict):
                out["items"] = self.convert(node["items"], schema_path(path, "items"))
            else:
                self.warn(schema_path(path, "items"), "array without an items schema: items described as strings")
                out["items"] = {"type": "string"}


def adapt_gemini(schema: dict[str, JSON], warn: Callable[[str, str], None]) -> dict[str, JSON] | None:
    """An args schema as Gemini ``parameters``; None for a tool without arguments."""
    if not schema.get("properties"):
        if schema.get("additionalProperties") not in (None, False):
            warn("$", "a free-form argument object cannot be declared to Gemini; the function takes no parameters")
        return None
    inlined = _RefInliner(schema, warn).inline(schema, "$")
    return _Gemini(warn).convert(inlined, "$")
