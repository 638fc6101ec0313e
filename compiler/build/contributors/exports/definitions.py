"""Provider exports: tool definitions in OpenAI, Anthropic and Gemini form, with every lossy change reported.

How an args schema is fitted to each provider's schema subset (and the rules followed) lives in
:mod:`toolcat.build.contributors.exports.schemas`; this module assembles whole definitions, checks them against the
documented constraints and maps provider calls back; :mod:`toolcat.build.contributors.exports.contribute` writes ``providers/``
into a build.

Names come from the alias maps (``toolcat.format.aliases``); :func:`to_canonical` maps a
provider's tool call back to the canonical id.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ....format.aliases import PROVIDER_RULES, PROVIDERS, check_provider
from ....format.dialects import DiscoveryTool, dialect_tools, served_tools
from ....format.types import JSON
from .schemas import (
    ANTHROPIC_TOP_LEVEL_FORBIDDEN,
    GEMINI_FORMATS,
    GEMINI_KEYWORDS,
    GEMINI_TYPES,
    OPENAI_DESCRIPTION_MAX,
    OPENAI_FORMATS,
    OPENAI_KEYWORDS,
    OPENAI_MAX_DEPTH,
    OPENAI_MAX_ENUM,
    adapt_anthropic,
    adapt_gemini,
    adapt_openai,
    schema_path,
    schema_types,
)

if TYPE_CHECKING:
    from ....reader.folder import BuildFolder
    from ...model import CompiledCatalog

#: The providers exported (the one list lives in :mod:`toolcat.format.aliases`, beside their name rules).
PROVIDER_NAMES: tuple[str, ...] = PROVIDERS
#: OpenAI's Responses API shape (``FunctionToolParam``: flat ``{type, name, description, parameters, strict}``): the
#: openai definitions (same names, same schemas) without Chat Completions' ``function`` wrapper. An export form only.
OPENAI_RESPONSES = "openai-responses"
#: What ``toolcat export --provider`` takes: each provider, and the Responses shape of OpenAI's.
EXPORT_FORMATS: tuple[str, ...] = (*PROVIDER_NAMES, OPENAI_RESPONSES)


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
    provider: str,
    name: str,
    description: str,
    schema: dict[str, JSON],
    tool: str,
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
        return {
            "type": "function",
            "function": {"name": name, "description": description, "parameters": parameters, "strict": strict},
        }
    if provider == "anthropic":
        return {"name": name, "description": description, "input_schema": adapt_anthropic(schema, warn)}
    if provider == "gemini":
        declaration: dict[str, JSON] = {"name": name, "description": description}
        parameters_gemini = adapt_gemini(schema, warn)
        if parameters_gemini is not None:
            declaration["parameters"] = parameters_gemini
        return declaration
    raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDER_NAMES)}")


def export_specs(provider: str, specs: Iterable[Mapping[str, JSON]]) -> Export:
    """Definitions of real catalogue tools (stored specs), named by their ``provider`` alias."""
    check_provider(provider)
    warnings: list[Adaptation] = []
    definitions = []
    names: dict[str, str] = {}
    for spec in sorted(specs, key=lambda s: str(s["tool_id"])):
        tool_id = str(spec["tool_id"])
        name = str(spec.get("aliases", {}).get(provider) or tool_id)
        definitions.append(definition(provider, name, spec_description(spec), spec["args_schema"], tool_id, warnings))
        names[name] = tool_id
    return Export(provider, definitions, tuple(warnings), names)


def export_dialect(
    provider: str, dialect: str, always: Iterable[Mapping[str, JSON]] = (), domains: Iterable[str] = ()
) -> Export:
    """Definitions of a dialect's discovery tools, then the always-loaded catalogue tools (``always``'s specs).

    An agent sees the always-loaded tools directly, by their provider alias, beside the tools it
    discovers the rest with (the MCP server lists them the same way). ``domains``: the namespaces with
    a per-domain discovery tool (namespaced dialect only; seed 002). The direct dialect has no discovery
    tools: its export is the catalogue's (:func:`export_specs`), so it is refused here.
    """
    check_provider(provider)
    if not dialect_tools(dialect):
        raise ValueError(f"the {dialect} dialect exposes the catalogue's own tools: export them with export_specs")
    warnings: list[Adaptation] = []
    tools: tuple[DiscoveryTool, ...] = served_tools(dialect, domains)
    definitions = [
        definition(provider, t.name, t.description, t.input_schema, f"{dialect}:{t.name}", warnings) for t in tools
    ]
    names = {t.name: f"{dialect}:{t.name}" for t in tools}
    direct = export_specs(provider, always)
    clashes = sorted(set(direct.names) & set(names))
    if clashes:
        raise ValueError(f"always-loaded tools {clashes} have the names of {dialect} discovery tools")
    return Export(
        provider,
        [*definitions, *direct.definitions],
        (*warnings, *direct.warnings),
        {**names, **direct.names},
    )


def base_provider(export_format: str) -> str:
    """The provider whose names and schema rules an export format follows (``openai-responses`` → ``openai``)."""
    return "openai" if export_format == OPENAI_RESPONSES else export_format


def as_export_format(export: Export, export_format: str) -> Export:
    """``export`` (made for :func:`base_provider` of ``export_format``) in that format's shape.

    ``openai-responses`` flattens each Chat Completions definition ``{type, function: {name, description,
    parameters, strict}}`` to the Responses API's ``{type, name, description, parameters, strict}``.
    """
    if export_format != OPENAI_RESPONSES:
        return export
    flat: list[dict[str, JSON]] = []
    for item in export.definitions:
        function = item.get("function")
        if not isinstance(function, dict):
            raise TypeError(f"not an openai definition ({{type: function, function: {{...}}}}): {sorted(item)}")
        flat.append({"type": "function", **function})
    return Export(OPENAI_RESPONSES, flat, export.warnings, export.names)


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
    return {
        **dict.fromkeys(properties),
        **{k: _fill_null_optionals(v, properties.get(k, {})) for k, v in value.items()},
    }


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
            yield from _walk(sub, schema_path(path, key, name))
    if isinstance(node.get("items"), dict):
        yield from _walk(node["items"], schema_path(path, "items"))
    for key in ("anyOf", "oneOf", "allOf"):
        for index, sub in enumerate(node.get(key) or []):
            yield from _walk(sub, schema_path(path, key, index))


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
    from jsonschema.validators import Draft202012Validator  # noqa: PLC0415 - jsonschema is an optional extra

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
        if "object" in schema_types(node):
            if node.get("additionalProperties") is not False:
                problems.append(f"{path}: additionalProperties must be false")
            if sorted(node.get("required") or []) != sorted(node.get("properties") or {}):
                problems.append(f"{path}: every property must be required")
        if "array" in schema_types(node) and not isinstance(node.get("items"), dict):
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


def to_canonical(
    provider: str, name: str, source: Path | str | BuildFolder | CompiledCatalog | Mapping[str, str]
) -> str:
    """The canonical tool id behind a provider's tool-call ``name`` (an alias or an id).

    ``source`` is a build folder, a compiled :class:`toolcat.build.model.CompiledCatalog`, or an alias →
    id mapping. A KeyError says when the name is unknown.
    """
    from ....reader.folder import BuildFolder  # noqa: PLC0415 - the reader's 80 ms of imports: not on a build's path (issue 33)

    check_provider(provider)
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
