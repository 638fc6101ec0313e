"""Provider exports: tool definitions in OpenAI, Anthropic and Gemini form, with every lossy change reported.

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

Names come from the alias maps (``toolcat.aliases``); :func:`to_canonical` maps a
provider's tool call back to the canonical id.
"""

from __future__ import annotations

import copy
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .aliases import PROVIDER_RULES
from .canonical import sha256
from .reader.dialects import DIALECT_NAMES, DiscoveryTool, dialect_tools

if TYPE_CHECKING:
    from .model import Catalog
    from .plan import ArtifactSet, Ref

log = logging.getLogger(__name__)

PROVIDER_NAMES: tuple[str, ...] = ("openai", "anthropic", "gemini")
OPENAI_DESCRIPTION_MAX = 1024
OPENAI_MAX_DEPTH = 10
OPENAI_MAX_PROPERTIES = 5000
OPENAI_MAX_ENUM = 1000
OPENAI_KEYWORDS = frozenset({
    "type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf", "description",
    "title", "$ref", "$defs", "definitions", "pattern", "format", "minimum", "maximum", "exclusiveMinimum",
    "exclusiveMaximum", "multipleOf", "minItems", "maxItems",
})
OPENAI_FORMATS = frozenset({"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"})
GEMINI_KEYWORDS = frozenset({
    "type", "format", "title", "description", "nullable", "enum", "maxItems", "minItems", "properties", "required",
    "minProperties", "maxProperties", "minLength", "maxLength", "pattern", "example", "anyOf", "propertyOrdering",
    "default", "items", "minimum", "maximum",
})
GEMINI_TYPES = frozenset({"string", "number", "integer", "boolean", "array", "object"})
GEMINI_FORMATS = {"string": frozenset({"enum", "date-time"}), "number": frozenset({"float", "double"}),
                  "integer": frozenset({"int32", "int64"})}
ANTHROPIC_TOP_LEVEL_FORBIDDEN = ("oneOf", "anyOf", "allOf")
#: Keywords that carry no meaning for a model; dropped without a warning.
SILENT = frozenset({"$schema", "$id", "$comment", "$anchor", "$defs", "definitions"})

JSON = Any


@dataclass(frozen=True, slots=True)
class Adaptation:
    """One change made to fit a provider's rules that loses some meaning."""

    provider: str
    tool: str
    json_path: str
    message: str

    def render(self) -> str:
        """``openai file.read $.properties.path: dropped minLength ...``."""
        return f"{self.provider} {self.tool} {self.json_path}: {self.message}"

    def as_dict(self) -> dict[str, str]:
        """JSON form, as stored in the build."""
        return {"provider": self.provider, "tool": self.tool, "json_path": self.json_path, "message": self.message}


@dataclass(frozen=True, slots=True)
class Export:
    """Definitions for one provider, ready to pass to its API, and what was lost on the way."""

    provider: str
    definitions: list[dict[str, JSON]]
    warnings: tuple[Adaptation, ...] = ()
    names: dict[str, str] = field(default_factory=dict)  # provider name -> canonical id (or dialect tool)

    def payload(self) -> JSON:
        """What goes in the request's ``tools`` field."""
        if self.provider == "gemini":
            return [{"functionDeclarations": self.definitions}]
        return self.definitions


# -- helpers --------------------------------------------------------------------------


def _note(key: str, value: JSON) -> str:
    """A keyword the provider rejects, said in words for the description."""
    text = json.dumps(value, ensure_ascii=False)
    plural = "" if value == 1 else "s"
    words = {
        "default": f"default {text}", "minLength": f"at least {value} character{plural}",
        "maxLength": f"at most {value} character{plural}", "uniqueItems": "items must be unique",
        "exclusiveMinimum": f"greater than {value}", "exclusiveMaximum": f"less than {value}",
        "multipleOf": f"a multiple of {value}", "minProperties": f"at least {value} entr{'y' if value == 1 else 'ies'}",
        "maxProperties": f"at most {value} entr{'y' if value == 1 else 'ies'}", "pattern": f"must match /{value}/", "format": f"format {value}",
        "const": f"must be {text}", "minimum": f"at least {value}", "maximum": f"at most {value}",
        "minItems": f"at least {value} item{plural}", "maxItems": f"at most {value} item{plural}",
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


def _child(path: str, *keys: str | int) -> str:
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
            return [self.inline(v, _child(path, i), seen) for i, v in enumerate(node)]
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
        return {k: (v if k in {"$defs", "definitions"} else self.inline(v, _child(path, k), seen))
                for k, v in node.items() if k not in {"$defs", "definitions"}}


def _types(node: dict[str, JSON]) -> list[str]:
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
        types = _types(node)
        for key, value in node.items():
            if key in SILENT or key in {"properties", "required", "additionalProperties", "items", "anyOf"}:
                continue
            if key == "format" and value not in OPENAI_FORMATS:
                notes.append(_note(key, value))
                self.warn(_child(path, key), f"dropped format {value!r} (strict mode supports only "
                          f"{', '.join(sorted(OPENAI_FORMATS))}); kept in the description")
            elif key in OPENAI_KEYWORDS:
                out[key] = copy.deepcopy(value)
            else:
                notes.append(_note(key, value))
                self.warn(_child(path, key), f"dropped {key!r} (not supported in strict mode); kept in the description")
        if "enum" in out and len(out["enum"]) > OPENAI_MAX_ENUM:
            self.blockers.append(f"{path}: more than {OPENAI_MAX_ENUM} enum values")
        if "anyOf" in node:
            out["anyOf"] = [self.convert(b, _child(path, "anyOf", i), depth + 1) for i, b in enumerate(node["anyOf"])]
        if "object" in types:
            self.object(node, out, path, depth)
        if "array" in types:
            if isinstance(node.get("items"), dict):
                out["items"] = self.convert(node["items"], _child(path, "items"), depth + 1)
            else:
                self.blockers.append(f"{_child(path, 'items')}: an array without an items schema")
        if not types and not {"anyOf", "enum", "$ref"} & out.keys():
            self.blockers.append(f"{path}: a value of any type")
        _with_notes(out, notes)
        return out

    def merge_all_of(self, node: dict[str, JSON], path: str) -> dict[str, JSON]:
        merged = {k: v for k, v in node.items() if k != "allOf"}
        for branch in node["allOf"]:
            if not isinstance(branch, dict) or not {"properties", "required"} >= (branch.keys() - {"type", "description"}):
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
            child = self.convert(sub, _child(path, "properties", name), depth + 1)
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
            warn(_child("$", key), f"dropped top-level {key} (Anthropic rejects it at the root of input_schema)")
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
        if not isinstance(node, dict):
            return self.free_form({}, path, "boolean schema")
        node = dict(node)
        notes: list[str] = []
        if "oneOf" in node:
            node["anyOf"] = [*node.get("anyOf", []), *node.pop("oneOf")]
            self.warn(path, "oneOf became anyOf: exactly-one is no longer enforced")
        if "allOf" in node:
            branches = [b for b in node.pop("allOf") if isinstance(b, dict)]
            for branch in branches:
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
                self.warn(_child(path, "const"), "dropped non-string const; kept in the description")
        nullable = bool(node.get("nullable"))
        types = _types(node)
        if "null" in types:
            nullable = True
            types = [t for t in types if t != "null"]
        if "anyOf" in node:
            branches = []
            for index, branch in enumerate(node.pop("anyOf")):
                if isinstance(branch, dict) and _types(branch) == ["null"]:
                    nullable = True
                    continue
                branches.append(self.convert(branch, _child(path, "anyOf", index)))
            if len(branches) == 1 and not types:
                merged = {**branches[0], **{k: v for k, v in node.items() if k in {"description", "title", "default"}}}
                if nullable:
                    merged["nullable"] = True
                return merged
            if branches:
                node["anyOf"] = branches
        if len(types) > 1:
            node["anyOf"] = [*node.get("anyOf", []), *({"type": t} for t in types)]
            types = []
        out: dict[str, JSON] = {}
        kind = types[0] if types else None
        if kind is None and "anyOf" not in node and "enum" not in node:
            return self.free_form(node, path, "a value of any type")
        if kind is not None and kind not in GEMINI_TYPES:
            return self.free_form(node, path, f"type {kind!r}")
        if kind == "object" and not node.get("properties"):
            return self.free_form(node, path, "a free-form object")
        if kind:
            out["type"] = kind
        for key, value in node.items():
            if key in SILENT or key in {"type", "properties", "required", "items", "anyOf", "nullable"}:
                continue
            if key == "enum":
                if all(isinstance(v, str) for v in value) and kind in {None, "string"}:
                    out["enum"] = list(value)
                    out.setdefault("type", "string")
                else:
                    notes.append(_note(key, value))
                    self.warn(_child(path, key), "dropped a non-string enum (Gemini enums are strings); "
                              "kept in the description")
            elif key == "format":
                if value in GEMINI_FORMATS.get(kind or "", frozenset()):
                    out[key] = value
                else:
                    notes.append(_note(key, value))
                    self.warn(_child(path, key), f"dropped format {value!r} (not supported for {kind}); "
                              "kept in the description")
            elif key == "examples" and isinstance(value, list) and value:
                out["example"] = value[0]
            elif key == "additionalProperties":
                if value not in (False, None):
                    self.warn(_child(path, key), "dropped additionalProperties: extra keys are no longer described")
            elif key in GEMINI_KEYWORDS:
                out[key] = copy.deepcopy(value)
            else:
                notes.append(_note(key, value))
                self.warn(_child(path, key), f"dropped {key!r} (not in Gemini's schema subset); kept in the description")
        if "anyOf" in node:
            out["anyOf"] = node["anyOf"]
        if nullable:
            out["nullable"] = True
        if kind == "object":
            properties = {name: self.convert(sub, _child(path, "properties", name))
                          for name, sub in node["properties"].items()}
            out["properties"] = properties
            required = [r for r in node.get("required", []) if r in properties]
            if required:
                out["required"] = required
        if kind == "array":
            if isinstance(node.get("items"), dict):
                out["items"] = self.convert(node["items"], _child(path, "items"))
            else:
                self.warn(_child(path, "items"), "array without an items schema: items described as strings")
                out["items"] = {"type": "string"}
        _with_notes(out, notes)
        return out


def adapt_gemini(schema: dict[str, JSON], warn: Callable[[str, str], None]) -> dict[str, JSON] | None:
    """An args schema as Gemini ``parameters``; None for a tool without arguments."""
    if not schema.get("properties"):
        if schema.get("additionalProperties") not in (None, False):
            warn("$", "a free-form argument object cannot be declared to Gemini; the function takes no parameters")
        return None
    inlined = _RefInliner(schema, warn).inline(schema, "$")
    return _Gemini(warn).convert(inlined, "$")


# -- definitions ----------------------------------------------------------------------


def spec_description(spec: Mapping[str, JSON]) -> str:
    """What the model reads about a tool: summary, description and when to use it."""
    parts = [str(spec.get("summary", "")).strip()]
    description = str(spec.get("description", "")).strip()
    if description and description != parts[0]:
        parts.append(description)
    when = str(spec.get("when_to_use", "")).strip()
    if when:
        parts.append(f"When to use: {when}")
    return "\n\n".join(p for p in parts if p)


def definition(
    provider: str, name: str, description: str, schema: dict[str, JSON], tool: str,
    warnings: list[Adaptation],
) -> dict[str, JSON]:
    """One tool definition in ``provider``'s form; lossy changes are appended to ``warnings``."""
    def warn(json_path: str, message: str) -> None:
        warnings.append(Adaptation(provider, tool, json_path, message))

    rule = PROVIDER_RULES[provider]
    if not rule.pattern.match(name):
        raise ValueError(f"{provider} name {name!r} for {tool} breaks the rule: {rule.doc}")
    if provider == "openai":
        parameters, strict = adapt_openai(schema, warn)
        if len(description) > OPENAI_DESCRIPTION_MAX:
            warn("description", f"description cut from {len(description)} to {OPENAI_DESCRIPTION_MAX} characters")
            description = description[: OPENAI_DESCRIPTION_MAX - 1].rstrip() + "…"
        return {"type": "function",
                "function": {"name": name, "description": description, "parameters": parameters, "strict": strict}}
    if provider == "anthropic":
        return {"name": name, "description": description, "input_schema": adapt_anthropic(schema, warn)}
    if provider == "gemini":
        declaration: dict[str, JSON] = {"name": name, "description": description}
        parameters_gemini = adapt_gemini(schema, warn)
        if parameters_gemini is not None:
            declaration["parameters"] = parameters_gemini
        return declaration
    raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDER_NAMES)}")


def _check_provider(provider: str) -> None:
    if provider not in PROVIDER_NAMES:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDER_NAMES)}")


def export_specs(provider: str, specs: Iterable[Mapping[str, JSON]]) -> Export:
    """Definitions of real catalogue tools (stored specs), named by their ``provider`` alias."""
    _check_provider(provider)
    warnings: list[Adaptation] = []
    definitions = []
    names: dict[str, str] = {}
    for spec in sorted(specs, key=lambda s: str(s["tool_id"])):
        tool_id = str(spec["tool_id"])
        name = str(spec.get("aliases", {}).get(provider) or tool_id)
        definitions.append(definition(provider, name, spec_description(spec), spec["args_schema"], tool_id, warnings))
        names[name] = tool_id
    return Export(provider, definitions, tuple(warnings), names)


def export_dialect(provider: str, dialect: str) -> Export:
    """Definitions of a dialect's discovery tools."""
    _check_provider(provider)
    warnings: list[Adaptation] = []
    tools: tuple[DiscoveryTool, ...] = dialect_tools(dialect)
    definitions = [definition(provider, t.name, t.description, t.input_schema, f"{dialect}:{t.name}", warnings)
                   for t in tools]
    return Export(provider, definitions, tuple(warnings), {t.name: f"{dialect}:{t.name}" for t in tools})


def restore_args(provider: str, args: Mapping[str, JSON], schema: Mapping[str, JSON]) -> dict[str, JSON]:
    """A provider's call arguments back in the tool's own form: OpenAI's nulls for omitted optionals are removed.

    A null for a property whose own schema accepts null is kept: strict mode cannot tell
    "omitted" from "explicitly null" there, and null is the meaningful reading.
    """
    if provider != "openai":
        return dict(args)
    restored: dict[str, JSON] = _drop_null_optionals(args, schema)
    return restored


def openai_strict_args(args: Mapping[str, JSON], schema: Mapping[str, JSON]) -> dict[str, JSON]:
    """The inverse of :func:`restore_args` for OpenAI: arguments with ``null`` for every omitted optional property."""
    filled: dict[str, JSON] = _fill_null_optionals(dict(args), schema)
    return filled


def _fill_null_optionals(value: JSON, schema: JSON) -> JSON:
    if not isinstance(schema, Mapping):
        return value
    if isinstance(value, list) and isinstance(schema.get("items"), Mapping):
        return [_fill_null_optionals(v, schema["items"]) for v in value]
    if not isinstance(value, dict) or not schema.get("properties"):
        return value
    properties = schema["properties"]
    return {**dict.fromkeys(properties), **{k: _fill_null_optionals(v, properties.get(k, {})) for k, v in value.items()}}


def _accepts_null(schema: JSON) -> bool:
    """True when the tool's own schema allows null: then a null is the caller's value, not an omission."""
    if not isinstance(schema, Mapping):
        return False
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind) or None in (schema.get("enum") or []):
        return True
    return any(_accepts_null(b) for key in ("anyOf", "oneOf") for b in schema.get(key) or [])


def _drop_null_optionals(value: JSON, schema: JSON) -> JSON:
    if isinstance(value, list) and isinstance(schema, Mapping) and isinstance(schema.get("items"), Mapping):
        return [_drop_null_optionals(v, schema["items"]) for v in value]
    if not isinstance(value, dict) or not isinstance(schema, Mapping):
        return value
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    out = {}
    for key, item in value.items():
        if item is None and key not in required and not _accepts_null(properties.get(key, {})):
            continue
        out[key] = _drop_null_optionals(item, properties.get(key, {}))
    return out


# -- constraint checks (used by tests and ``toolcat export --check``) --------------------


def _walk(node: JSON, path: str) -> Iterable[tuple[str, dict[str, JSON]]]:
    if not isinstance(node, dict):
        return
    yield path, node
    for key in ("properties", "$defs", "definitions"):
        for name, sub in (node.get(key) or {}).items():
            yield from _walk(sub, _child(path, key, name))
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], _child(path, "items"))
    for key in ("anyOf", "oneOf", "allOf"):
        for index, sub in enumerate(node.get(key) or []):
            yield from _walk(sub, _child(path, key, index))


def _depth(node: JSON) -> int:
    if not isinstance(node, dict):
        return 0
    subs = [*(node.get("properties") or {}).values(), *(node.get("anyOf") or [])]
    if isinstance(node.get("items"), dict):
        subs.append(node["items"])
    return 1 + max((_depth(s) for s in subs), default=0)


def validate_definition(provider: str, item: Mapping[str, JSON]) -> list[str]:
    """Every way ``item`` breaks ``provider``'s documented constraints (empty when it is valid)."""
    from jsonschema.exceptions import SchemaError  # noqa: PLC0415 - only checks need jsonschema
    from jsonschema.validators import Draft202012Validator  # noqa: PLC0415

    problems: list[str] = []
    rule = PROVIDER_RULES[provider]
    if provider == "openai":
        if item.get("type") != "function" or not isinstance(item.get("function"), dict):
            return ["not {type: function, function: {...}}"]
        fn = item["function"]
        name, schema = fn.get("name", ""), fn.get("parameters")
        if len(fn.get("description", "")) > OPENAI_DESCRIPTION_MAX:
            problems.append(f"description longer than {OPENAI_DESCRIPTION_MAX} characters")
    elif provider == "anthropic":
        name, schema = item.get("name", ""), item.get("input_schema")
    else:
        name, schema = item.get("name", ""), item.get("parameters")
    if not rule.pattern.match(str(name)):
        problems.append(f"name {name!r} breaks {rule.doc}")
    if provider == "gemini":
        if schema is None:
            return problems
        problems.extend(_gemini_problems(schema))
        return problems
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return [*problems, "schema root is not type: object"]
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        problems.append(f"not valid JSON Schema: {exc.message}")
    if provider == "anthropic":
        problems.extend(f"top-level {k} is not allowed" for k in ANTHROPIC_TOP_LEVEL_FORBIDDEN if k in schema)
    elif item["function"].get("strict"):
        problems.extend(_openai_strict_problems(schema))
    return problems


def _openai_strict_problems(schema: dict[str, JSON]) -> list[str]:
    problems = [f"top-level {k} is not allowed" for k in ("anyOf", "oneOf", "allOf") if k in schema]
    if _depth(schema) > OPENAI_MAX_DEPTH + 1:
        problems.append(f"nested deeper than {OPENAI_MAX_DEPTH} levels")
    for path, node in _walk(schema, "$"):
        unknown = set(node) - OPENAI_KEYWORDS
        if unknown:
            problems.append(f"{path}: keywords not allowed in strict mode: {sorted(unknown)}")
        if "format" in node and node["format"] not in OPENAI_FORMATS:
            problems.append(f"{path}: format {node['format']!r} is not supported")
        if "object" in _types(node):
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            if sorted(node.get("required") or []) != sorted(node.get("properties") or {}):
                problems.append(f"{path}: every property must be required")
        if "array" in _types(node) and not isinstance(node.get("items"), dict):
            problems.append(f"{path}: arrays need an items schema")
        if len(node.get("enum") or []) > OPENAI_MAX_ENUM:
            problems.append(f"{path}: more than {OPENAI_MAX_ENUM} enum values")
    return problems


def _gemini_problems(schema: dict[str, JSON]) -> list[str]:
    problems = []
    if schema.get("type") != "object":
        problems.append("$: parameters must be type: object")
    for path, node in _walk(schema, "$"):
        unknown = set(node) - GEMINI_KEYWORDS
        if unknown:
            problems.append(f"{path}: keywords outside Gemini's schema subset: {sorted(unknown)}")
        kind = node.get("type")
        if kind is None and "anyOf" not in node:
            problems.append(f"{path}: no type")
        if kind is not None and (not isinstance(kind, str) or kind not in GEMINI_TYPES):
            problems.append(f"{path}: type {kind!r} is not one of {sorted(GEMINI_TYPES)}")
        if kind == "object" and not node.get("properties"):
            problems.append(f"{path}: an object needs at least one property")
        if kind == "array" and not isinstance(node.get("items"), dict):
            problems.append(f"{path}: arrays need items")
        if "enum" in node and (kind != "string" or not all(isinstance(v, str) for v in node["enum"])):
            problems.append(f"{path}: enum must be strings on a string")
        if "format" in node and node["format"] not in GEMINI_FORMATS.get(str(kind), frozenset()):
            problems.append(f"{path}: format {node['format']!r} not supported for {kind}")
        missing = set(node.get("required") or []) - set(node.get("properties") or {})
        if missing:
            problems.append(f"{path}: required names missing from properties: {sorted(missing)}")
    return problems


# -- reading a build, mapping names back -------------------------------------------------


class BuildFolder:
    """A built catalogue on disk, read with every file checked against the hash its parent holds."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        entry = self.root / "catalog.json"
        if not entry.is_file():
            raise FileNotFoundError(f"{entry} not found: run `toolcat build` first or pass --build DIR")
        self.entry = json.loads(entry.read_text(encoding="utf-8"))
        self.manifest: dict[str, JSON] = self.fetch_json(self.entry["manifest"])

    def fetch_bytes(self, ref: Mapping[str, JSON]) -> bytes:
        """The bytes of a ref, after checking their sha256."""
        data = (self.root / str(ref["path"])).read_bytes()
        if sha256(data) != ref["sha256"]:
            raise ValueError(f"{ref['path']}: sha256 does not match the ref that points to it; rebuild the catalogue")
        return data

    def fetch_json(self, ref: Mapping[str, JSON]) -> JSON:
        """The parsed JSON of a ref, after checking its hash."""
        return json.loads(self.fetch_bytes(ref))

    def specs(self) -> dict[str, dict[str, JSON]]:
        """Every tool spec, by id (read through the lookup buckets)."""
        refs: dict[str, Mapping[str, JSON]] = {}
        for bucket_ref in self.manifest["lookup"]["refs"]:
            for entry in self.fetch_json(bucket_ref)["entries"].values():
                refs.setdefault(entry["tool_id"], entry["spec"])
        return {tool_id: self.fetch_json(ref) for tool_id, ref in sorted(refs.items())}

    def aliases(self, provider: str) -> dict[str, JSON]:
        """The alias map of ``provider``: ``{to_alias, to_id, rule}``."""
        _check_provider(provider)
        return dict(self.fetch_json(self.manifest["aliases"][provider]))


def to_canonical(provider: str, name: str, source: Path | str | BuildFolder | Catalog | Mapping[str, str]) -> str:
    """The canonical tool id behind a provider's tool-call ``name`` (an alias or an id).

    ``source`` is a build folder, a compiled :class:`toolcat.model.Catalog`, or an alias →
    id mapping. A KeyError says when the name is unknown.
    """
    _check_provider(provider)
    to_id: Mapping[str, str]
    if isinstance(source, (str, Path)):
        source = BuildFolder(Path(source))
    if isinstance(source, BuildFolder):
        to_id = source.aliases(provider)["to_id"]
    elif isinstance(source, Mapping):
        to_id = source
    else:
        to_id = {tool.aliases[provider]: tool.id for tool in source.tools.values()}
    if name in to_id:
        return to_id[name]
    if name in set(to_id.values()):
        return name
    raise KeyError(f"{provider} tool name {name!r} is not an alias or id in this catalogue")


# -- build contributor ---------------------------------------------------------------------


def contribute(catalog: Catalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, JSON], Ref]]) -> None:
    """Write ``providers/<provider>/`` (whole catalogue + each dialect) and ``manifest["providers"]``."""
    del catalog  # the specs carry everything a definition needs
    entry: dict[str, JSON] = {}
    for provider in PROVIDER_NAMES:
        whole = export_specs(provider, [spec for spec, _ in specs.values()])
        catalogue_ref = artifacts.add_json(f"providers/{provider}", "catalog", {
            "artifact": "provider_tools", "provider": provider, "scope": "catalog",
            "tools": whole.payload(), "names": whole.names, "warnings": [w.as_dict() for w in whole.warnings],
        })
        dialects: dict[str, JSON] = {}
        for dialect in DIALECT_NAMES:
            export = export_dialect(provider, dialect)
            dialects[dialect] = artifacts.add_json(f"providers/{provider}", dialect, {
                "artifact": "provider_tools", "provider": provider, "scope": f"dialect:{dialect}",
                "tools": export.payload(), "names": export.names, "warnings": [w.as_dict() for w in export.warnings],
            })
        if whole.warnings:
            touched = len({w.tool for w in whole.warnings})
            log.info("%s export: %d lossy adaptations in %d tools (toolcat export --provider %s lists them)",
                     provider, len(whole.warnings), touched, provider)
        entry[provider] = {"catalog": catalogue_ref, "dialects": dialects, "warnings": len(whole.warnings)}
    artifacts.manifest["providers"] = entry
