"""Check the JSON Schemas a tool declares (``args_schema``, ``result_schema``) and validate its examples.

Metaschema validity, schemaguard's problems (refs that leave the document or point nowhere, ref cycles,
regexes RE2 cannot run, depth) and the RE2 validators for examples are cached by the schema's canonical
bytes, so a catalogue that repeats a schema checks it once. :mod:`toolcat.build.sources.tools` uses them.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from typing import Any

import jsonschema
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from ...format import schemaguard
from ...format.canonical import dumps
from ...format.field_errors import json_path
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
    """A validator of the metaschema itself, built once per draft (``check_schema`` rebuilds it each call)."""
    return cls(cls.META_SCHEMA)


def schema_errors(schema: dict[str, Any]) -> list[SchemaError]:
    """What ``check_schema`` would complain about, most relevant first; cached by canonical bytes."""
    return list(_schema_errors_cached(dumps(schema)))


@functools.lru_cache(maxsize=65536)
def _schema_errors_cached(canonical: bytes) -> tuple[SchemaError, ...]:
    schema = json.loads(canonical)
    cls = validator_for(schema, default=jsonschema.Draft202012Validator)
    best = jsonschema.exceptions.best_match(_meta_validator(cls).iter_errors(schema))
    return () if best is None else (SchemaError.create_from(best),)


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
    for exc in schema_errors(schema):
        where = json_path(exc.path, path)
        error(
            where,
            f"invalid JSON Schema: {exc.message}",
            code="invalid_schema",
            hint=f"Fix the schema so it is valid {cls.__name__.removesuffix('Validator')}.",
        )
        ok = False
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
