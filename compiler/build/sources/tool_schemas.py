"""Check the JSON Schemas a tool declares (``args_schema``, ``result_schema``) and validate its examples.

Metaschema validity, schemaguard's problems (refs that leave the document or point nowhere, ref cycles,
regexes RE2 cannot run, depth) and the RE2 validators for examples are cached by the schema's canonical
bytes, so a catalogue that repeats a schema checks it once. :mod:`toolcat.build.sources.tools` uses them.
"""

from __future__ import annotations

import difflib
import functools
import json
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from ...engines import schemaguard
from ...format.canonical import dumps
from ...format.field_errors import json_path
from ...format.json_paths import child_path
from ..errors import Severity

#: Records one diagnostic: ``(severity, json_path, message, **fields)``, as ``_Checker.add`` does.
Report = Callable[..., None]


def type_name(value: Any) -> str:
    """What kind of value this is, as a diagnostic's ``got`` says it (``a mapping``, ``a list``, ...)."""
    if value is None:
        return "null"
    return {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def short(value: Any, limit: int = 60) -> str:
    """A value as compact JSON, cut to ``limit`` characters, for a diagnostic's ``got``."""
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.cache
def _meta_validator(cls: Any) -> Any:
    """A validator of the metaschema itself, built once per draft (``check_schema`` rebuilds it each call).

    Its registry never retrieves (:func:`toolcat.format.schemaguard.refusing_registry`): the drafts' own
    metaschemas are built into jsonschema, and nothing a schema says makes the check fetch anything.
    """
    return cls(cls.META_SCHEMA, registry=schemaguard.refusing_registry())


#: At most this many metaschema errors of one schema are reported (the rest are counted in the last one).
MAX_SCHEMA_ERRORS = 20
#: Type names authors bring from other languages, and the JSON Schema type each one means.
TYPE_SLIPS = {
    "str": "string",
    "text": "string",
    "int": "integer",
    "long": "integer",
    "float": "number",
    "double": "number",
    "decimal": "number",
    "bool": "boolean",
    "dict": "object",
    "map": "object",
    "list": "array",
    "tuple": "array",
    "none": "null",
    "None": "null",
}
JSON_TYPES = ("string", "integer", "number", "boolean", "object", "array", "null")


def schema_errors(schema: dict[str, Any]) -> list[SchemaError]:
    """Every place the schema breaks its metaschema (one error each, the most relevant), by path; cached by bytes."""
    return list(_schema_errors_cached(dumps(schema)))


@functools.lru_cache(maxsize=65536)
def _schema_errors_cached(canonical: bytes) -> tuple[SchemaError, ...]:
    schema = json.loads(canonical)
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    found = [jsonschema.exceptions.best_match([e]) or e for e in _meta_validator(cls).iter_errors(schema)]
    found.sort(key=lambda e: ([str(p) for p in e.absolute_path], e.message))
    out = []
    for found_error in found:
        error = SchemaError.create_from(found_error)
        error.path = deque(found_error.absolute_path)  # a best match inside anyOf has a path relative to it
        out.append(error)
    return tuple(out)


def type_slip(exc: SchemaError) -> tuple[str, str] | None:
    """``("str", "string")`` when the error is a ``type`` naming another language's type; None otherwise."""
    where = [str(p) for p in exc.path]
    if "type" not in where[-2:]:
        return None
    values = exc.instance if isinstance(exc.instance, list) else [exc.instance]
    for value in values:
        if isinstance(value, str) and value in TYPE_SLIPS:
            return value, TYPE_SLIPS[value]
    return None


@functools.lru_cache(maxsize=65536)
def schema_validator(canonical: bytes) -> Any:
    """A validator with RE2 regexes that never retrieves; patterns RE2 cannot run count as matching (warned)."""
    return schemaguard.validator_for(json.loads(canonical), skip_unsupported=True)


@functools.lru_cache(maxsize=65536)
def _schema_problems(canonical: bytes) -> tuple[schemaguard.SchemaProblem, ...]:
    """:func:`toolcat.format.schemaguard.analyse` of a schema, with paths under ``$``; cached by bytes."""
    return tuple(schemaguard.analyse(json.loads(canonical)))


def schema_problems(schema: dict[str, Any], path: str) -> list[schemaguard.SchemaProblem]:
    """Refs that leave the document or point nowhere, ref cycles, bad regexes, depth: paths under ``path``."""
    return [p._replace(path=path + p.path[1:]) for p in _schema_problems(dumps(schema))]


#: Keywords no validator acts on but every draft defines (annotations, identifiers, the other half of if).
_ANNOTATIONS = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$vocabulary",
        "$comment",
        "$defs",
        "definitions",
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentMediaType",
        "contentEncoding",
        "contentSchema",
        "then",
        "else",
    }
)


class SchemaLint(NamedTuple):
    """An author mistake that is valid JSON Schema but not what was meant; a warning (an error under ``--strict``)."""

    path: str
    message: str
    code: str
    hint: str


def _unknown_keywords(node: dict[str, Any], where: str, known: list[str]) -> list[SchemaLint]:
    """Keywords of no draft (``requried``; a property one level too far left): validators ignore them silently."""
    found = []
    for key in sorted(k for k in node if k not in known and not k.startswith("x-")):
        close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
        value = node[key]
        if close:
            hint = f"Did you mean '{close[0]}'?"
        elif isinstance(value, dict) and any(k in known for k in value):
            hint = f"'{key}' looks like a property schema one level too far left: indent it under 'properties'."
        else:
            hint = "Validators ignore keywords they do not know; remove it, or prefix a vendor extension with 'x-'."
        message = f"unknown JSON Schema keyword '{key}' is ignored by validators"
        found.append(SchemaLint(child_path(where, key), message, "unknown_keyword", hint))
    return found


def _forbidden_required(node: dict[str, Any], where: str) -> list[SchemaLint]:
    """Names ``required`` asks for that ``additionalProperties: false`` forbids: no arguments can ever be valid."""
    required, properties = node.get("required"), node.get("properties")
    if node.get("additionalProperties") is not False or not isinstance(required, list) or node.get("patternProperties"):
        return []
    named = properties if isinstance(properties, dict) else {}
    return [
        SchemaLint(
            child_path(child_path(where, "required"), index),
            f"'{name}' is required, but additionalProperties: false forbids it (it is not under properties)",
            "required_forbidden",
            f"No value can satisfy this schema: add '{name}' to properties, or remove it from required.",
        )
        for index, name in enumerate(required)
        if isinstance(name, str) and name not in named
    ]


@functools.lru_cache(maxsize=65536)
def _schema_lints(canonical: bytes) -> tuple[SchemaLint, ...]:
    schema = json.loads(canonical)
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    known = sorted({*cls.VALIDATORS, *_ANNOTATIONS})
    found: list[SchemaLint] = []
    stack: list[tuple[Any, str]] = [(schema, "$")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            found += _unknown_keywords(node, where, known) + _forbidden_required(node, where)
            stack.extend((sub, at) for _, at, _, sub in schemaguard.subschemas(node, where))
    return tuple(sorted(found))


def schema_lints(schema: dict[str, Any], path: str) -> list[SchemaLint]:
    """Unknown keywords and required names additionalProperties forbids, anywhere in ``schema``: paths under ``path``."""
    return [lint._replace(path=path + lint.path[1:]) for lint in _schema_lints(dumps(schema))]


def check_schema(report: Report, schema: Any, path: str, *, root_object: bool) -> bool:
    """Check a JSON Schema the author wrote, passing each problem to ``report``; True when it is usable."""

    def error(where: str, message: str, **kw: Any) -> None:
        report(Severity.ERROR, where, message, **kw)

    if not isinstance(schema, dict):
        error(
            path,
            "must be a JSON Schema mapping",
            expected="a mapping",
            got=type_name(schema),
            code="schema_type",
            hint="Write the schema as a YAML mapping, e.g. {type: object, properties: {...}}.",
        )
        return False
    ok = True
    problems = schema_problems(schema, path)
    for problem in problems:
        report(
            Severity.ERROR if problem.severity == "error" else Severity.WARNING,
            problem.path,
            problem.message,
            code=problem.code,
            hint=problem.hint,
        )
        ok = ok and problem.severity != "error"
    if any(p.code in ("schema_too_deep", "keyword_type") for p in problems):
        return False  # the metaschema check recurses once per level; a non-string $schema or $id crashes it
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = schema_errors(schema)
    for index, exc in enumerate(errors[:MAX_SCHEMA_ERRORS]):
        where = json_path(exc.path, path)
        more = len(errors) - MAX_SCHEMA_ERRORS
        tail = (
            f" ({more} more error(s) in this schema after this one)"
            if index == MAX_SCHEMA_ERRORS - 1 and more > 0
            else ""
        )
        slip = type_slip(exc)
        if slip is not None:
            error(
                where,
                f"invalid JSON Schema: {slip[0]!r} is not a JSON Schema type{tail}",
                expected=" | ".join(JSON_TYPES),
                got=repr(slip[0]),
                code="invalid_schema",
                hint=f"Did you mean '{slip[1]}'? JSON Schema's types are {', '.join(JSON_TYPES)}.",
            )
        else:
            error(
                where,
                f"invalid JSON Schema: {exc.message}{tail}",
                code="invalid_schema",
                hint=f"Fix the schema so it is valid {cls.__name__.removesuffix('Validator')}.",
            )
        ok = False
    for lint in schema_lints(schema, path):
        report(Severity.WARNING, lint.path, lint.message, code=lint.code, hint=lint.hint)
    if root_object and schema.get("type") != "object":
        error(
            path,
            "the root of args_schema must describe an object",
            expected='type: "object"',
            got=short(schema.get("type")),
            code="schema_root",
            hint="Tools take named arguments: put them under properties of a type: object schema.",
        )
        ok = False
    return ok
