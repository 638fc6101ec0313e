"""Check a tool call's arguments against its ``args_schema``: fill in defaults, then list every field error.

:func:`apply_defaults` and :func:`validate_args` are what :mod:`toolcat.reader.execution.runners` runs before a
handler. ``jsonschema`` (with ``referencing`` and RE2) is imported lazily here and only here; without it
a minimal check of required fields and JSON types runs and says so in the warnings. The schema itself is
vetted first by :mod:`toolcat.format.schemaguard`.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import json
import re
from collections.abc import Callable
from typing import Any

from ...format.envelope import ReaderError
from ...format.field_errors import field_errors, got_text

JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$", re.ASCII)
_TIME = re.compile(r"^\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$", re.ASCII)
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")


def _is_date(text: str) -> bool:
    """RFC 3339 full-date: ``2026-11-30``, a real day."""
    try:
        return bool(_DATE.match(text)) and dt.date.fromisoformat(text) is not None
    except ValueError:
        return False


def _is_time(text: str) -> bool:
    """RFC 3339 full-time: ``12:30:00Z`` or with an offset (a leap second allowed)."""
    if not _TIME.match(text):
        return False
    hour, minute, second = int(text[0:2]), int(text[3:5]), int(text[6:8])
    zone = text.rstrip("Zz")[-6:] if text[-1] not in "Zz" else ""
    offset_ok = not zone or (int(zone[1:3]) < 24 and int(zone[4:6]) < 60)
    return hour < 24 and minute < 60 and second <= 60 and offset_ok


def _is_date_time(text: str) -> bool:
    """RFC 3339 date-time: ``2026-11-30T12:30:00Z`` (``T`` or ``t``, an offset is required)."""
    date, sep, time = text.partition("T") if "T" in text else text.partition("t")
    return bool(sep) and _is_date(date) and _is_time(time)


#: Formats checked before a call, stdlib-only, the same whether or not jsonschema's optional format packages are installed.
FORMAT_CHECKS: dict[str, Callable[[str], bool]] = {
    "date": _is_date,
    "time": _is_time,
    "date-time": _is_date_time,
    "email": lambda text: bool(_EMAIL.match(text)),
}


def format_error(name: str, value: Any, schema: Any) -> dict[str, Any] | None:
    """A field error when ``value`` is a string that does not have the ``format`` its schema names."""
    fmt = schema.get("format") if isinstance(schema, dict) else None
    check = FORMAT_CHECKS.get(fmt) if isinstance(fmt, str) else None
    if check is None or not isinstance(value, str) or check(value):
        return None
    return {"field": name, "message": got_text(value), "expected": f'format "{fmt}"'}


def _format_checker(cls: Any) -> Any:
    """The validator's format checker with :data:`FORMAT_CHECKS` in place of its own date, time and email rules."""
    checker = copy.copy(cls.FORMAT_CHECKER)
    checker.checkers = dict(checker.checkers)
    for fmt, check in FORMAT_CHECKS.items():
        checker.checkers[fmt] = (lambda value, check=check: not isinstance(value, str) or check(value), ())
    return checker


def _is_type(value: Any, name: str) -> bool:
    if name in ("integer", "number") and isinstance(value, bool):
        return False
    if name == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, JSON_TYPES.get(name, (object,)))


class FilledArgs(dict):  # type: ignore[type-arg]
    """Arguments with defaults filled in; ``defaulted`` names the top-level ones the agent did not give.

    http handlers send them unless the handler says ``send_defaults: false`` (:func:`toolcat.reader.execution.runners.sent_args`).
    """

    __slots__ = ("defaulted",)

    def __init__(self, value: dict[str, Any]) -> None:
        super().__init__(value)
        self.defaulted: frozenset[str] = frozenset()


def apply_defaults(schema: Any, value: Any) -> Any:
    """A copy of ``value`` with the ``default`` of every absent property filled in (nested objects too).

    Iterative and bounded: objects deeper than ``MAX_ARGS_DEPTH`` get no defaults (validation
    refuses such arguments anyway), so neither a deep schema nor cyclic args can exhaust the stack.
    """
    from ...engines.schemaguard import MAX_ARGS_DEPTH  # noqa: PLC0415 - keeps the import block untouched

    if not isinstance(schema, dict) or not isinstance(value, dict):
        return value
    out = FilledArgs(value)
    stack: list[tuple[dict[str, Any], dict[str, Any], int]] = [(schema, out, 1)]
    while stack:
        node, obj, depth = stack.pop()
        properties = node.get("properties")
        if not isinstance(properties, dict) or depth > MAX_ARGS_DEPTH:
            continue
        for name, sub in properties.items():
            if not isinstance(sub, dict):
                continue
            if name not in obj and "default" in sub:
                obj[name] = _copied_default(name, sub["default"])
            if isinstance(obj.get(name), dict):
                obj[name] = dict(obj[name])
                stack.append((sub, obj[name], depth + 1))
    out.defaulted = frozenset(k for k in out if k not in value)
    return out


def _copied_default(name: str, default: Any) -> Any:
    from ...engines.schemaguard import MAX_ARGS_DEPTH, REBUILD_HINT  # noqa: PLC0415 - loaded on the one path that needs it
    from ...format.json_paths import too_deep  # noqa: PLC0415 - loaded on the one path that needs it

    if too_deep(default, MAX_ARGS_DEPTH) is not None:
        raise ReaderError(
            "INTERNAL",
            f"the default of {name!r} in the tool's args_schema nests lists and objects "
            f"deeper than {MAX_ARGS_DEPTH} levels",
            hints=[REBUILD_HINT],
        )
    return copy.deepcopy(default)


@functools.lru_cache(maxsize=4096)
def _compiled_validator(canonical_schema: str) -> Any:
    """A checked, compiled validator per distinct schema (checking the schema costs milliseconds).

    The schema comes from the catalogue: it is refused (INTERNAL, nothing validated) when it
    is too deep, when a ``$ref``/``$dynamicRef``/``$recursiveRef`` leaves the document or points
    nowhere, when references loop without descending into the value, or when a regex is
    invalid. The validator runs regexes in RE2 and never retrieves anything.
    """
    import jsonschema  # noqa: PLC0415 - optional, only used when executing
    from jsonschema import validators  # noqa: PLC0415 - jsonschema is an optional extra

    from ...engines import schemaguard  # noqa: PLC0415 - loaded on the one path that needs it

    schema = json.loads(canonical_schema)
    errors = [p for p in schemaguard.analyse(schema, warnings=False) if p.severity == "error"]
    if errors:
        first = errors[0]
        raise ReaderError(
            "INTERNAL",
            f"the tool's args_schema cannot be checked safely: {first.path}: {first.message}",
            details={"schema_problems": [{"path": p.path, "code": p.code, "message": p.message} for p in errors]},
            hints=[first.hint, schemaguard.REBUILD_HINT],
        )
    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    invalid = jsonschema.exceptions.best_match(schemaguard.meta_validator(cls).iter_errors(schema))
    if invalid is not None:
        raise ReaderError(
            "INTERNAL",
            f"the tool's args_schema is itself invalid: {invalid.message}",
            hints=["This is a catalogue bug; rebuild with `toolcat build --strict`."],
        )
    return schemaguard.validator_class(cls)(
        schema, registry=schemaguard.refusing_registry(), format_checker=_format_checker(cls)
    )


def _jsonschema_errors(schema: dict[str, Any], args: dict[str, Any]) -> list[dict[str, Any]]:
    import jsonschema  # noqa: F401, PLC0415 - raises ImportError where it is absent, even with a warm cache
    from referencing.exceptions import Unresolvable  # noqa: PLC0415 - referencing is an optional extra

    from ...engines import regex, schemaguard  # noqa: PLC0415 - loaded on the one path that needs it
    from ...format import json_paths  # noqa: PLC0415 - loaded on the one path that needs it

    deep = json_paths.too_deep(schema, schemaguard.MAX_SCHEMA_DEPTH)
    if deep is not None:  # before json.dumps, which recurses once per level
        raise ReaderError(
            "INTERNAL",
            f"the tool's args_schema cannot be checked safely: {deep}: the schema nests "
            f"lists and objects deeper than {schemaguard.MAX_SCHEMA_DEPTH} levels",
            hints=[schemaguard.REBUILD_HINT],
        )
    validator = _compiled_validator(json.dumps(schema, sort_keys=True))
    try:
        found = list(validator.iter_errors(args))
    except regex.PatternError as exc:
        raise ReaderError(
            "INTERNAL",
            f"the tool's args_schema has a pattern {exc.pattern!r} that {exc.reason}; the reader never "
            "runs a backtracking regex on arguments, so it cannot check this call",
            details={"pattern": exc.pattern},
            hints=[exc.hint, schemaguard.REBUILD_HINT],
        ) from None
    except Unresolvable as exc:  # analyse() refuses such schemas first; this is the registry's backstop
        raise ReaderError(
            "INTERNAL",
            f"the tool's args_schema has a reference that does not resolve: {getattr(exc, 'ref', '?')!r:.200}",
            hints=[schemaguard.REBUILD_HINT],
        ) from None
    except RecursionError:
        raise ReaderError(
            "INTERNAL",
            "checking the arguments against the tool's args_schema recursed too deeply",
            hints=[schemaguard.REBUILD_HINT],
        ) from None
    return field_errors(found, matches=regex.search)


def _minimal_errors(schema: dict[str, Any], args: dict[str, Any]) -> list[dict[str, Any]]:
    """Required fields and JSON types of top-level properties: the stdlib fallback."""
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    out: list[dict[str, Any]] = [
        {"field": str(name), "message": f"'{name}' is required", "expected": "present"}
        for name in schema.get("required", []) or []
        if name not in args
    ]
    for name, value in args.items():
        sub = properties.get(name) if isinstance(properties, dict) else None
        if not isinstance(sub, dict):
            if schema.get("additionalProperties") is False:
                out.append({"field": name, "message": f"unexpected property '{name}'"})
            continue
        wanted = sub.get("type")
        names = wanted if isinstance(wanted, list) else [wanted] if isinstance(wanted, str) else []
        bad_format = format_error(str(name), value, sub)
        if bad_format is not None:
            out.append(bad_format)
        elif names and not any(_is_type(value, n) for n in names):
            out.append({"field": name, "message": got_text(value), "expected": " | ".join(names)})
        elif isinstance(sub.get("enum"), list) and value not in sub["enum"]:
            out.append(
                {
                    "field": name,
                    "message": got_text(value),
                    "expected": "one of: " + ", ".join(json.dumps(v, ensure_ascii=False) for v in sub["enum"]),
                }
            )
    return out


def validate_args(schema: Any, args: dict[str, Any], warnings: list[str]) -> list[dict[str, Any]]:
    """Every field error of ``args`` against ``schema`` (empty when valid), sorted by field.

    Arguments nested deeper than ``MAX_ARGS_DEPTH`` lists and objects are refused first.
    """
    from ...engines.schemaguard import MAX_ARGS_DEPTH  # noqa: PLC0415 - loaded on the one path that needs it
    from ...format.json_paths import too_deep  # noqa: PLC0415 - loaded on the one path that needs it

    deep = [str(name) for name, value in args.items() if too_deep(value, MAX_ARGS_DEPTH - 1) is not None]
    if deep:
        return [
            {
                "field": name,
                "message": f"'{name}' nests lists and objects deeper than the limit of {MAX_ARGS_DEPTH} levels",
                "expected": f"at most {MAX_ARGS_DEPTH} levels of nesting",
            }
            for name in sorted(deep)
        ]
    if not isinstance(schema, dict) or not schema:
        return []
    try:
        errors = _jsonschema_errors(schema, args)
    except ImportError as exc:
        missing = {"re2": "google-re2"}.get(exc.name or "", exc.name or "jsonschema")
        warnings.append(f"{missing} is not installed: only required fields and top-level types were checked")
        errors = _minimal_errors(schema, args)
    return sorted(errors, key=lambda e: (e["field"], e["message"]))


# -- the host's context (001: "apply schema defaults and context defaults (project_id, ...)") ------------------
def context_names(spec: dict[str, Any]) -> list[str]:
    """The top-level arguments ``spec`` declares as context (its ``contexts``), as strings; [] for older builds."""
    declared = spec.get("contexts")
    return [n for n in declared if isinstance(n, str)] if isinstance(declared, list) else []


def host_filled(spec: dict[str, Any], context: dict[str, Any]) -> list[str]:
    """The declared context arguments of ``spec`` the host's ``context`` holds a value for, sorted."""
    return sorted(n for n in set(context_names(spec)) if n in context)


def fill_context(
    spec: dict[str, Any], args: dict[str, Any], context: dict[str, Any], warnings: list[str]
) -> tuple[dict[str, Any], list[str]]:
    """``args`` with every declared context argument set to the host's value (the host wins), and their names.

    Only arguments the tool declares in ``contexts`` are filled, so a tool never receives a context value it
    did not ask for. An argument the model sent and the host replaced is named in ``warnings`` (its values
    never are).
    """
    filled = host_filled(spec, context)
    if not filled:
        return args, []
    replaced = [n for n in filled if n in args and args[n] != context[n]]
    if replaced:
        warnings.append(
            f"set by the host, not by you: {', '.join(replaced)} (the value sent was replaced; leave it out)"
        )
    return {**args, **{n: copy.deepcopy(context[n]) for n in filled}}, filled


def host_field_errors(errors: list[dict[str, Any]], filled: list[str]) -> list[dict[str, Any]]:
    """Field errors with those of host-filled arguments said as the host's problem, the value not shown."""
    out = []
    for error in errors:
        top = str(error.get("field", "")).split(".", 1)[0].split("[", 1)[0]
        out.append(
            {
                "field": error["field"],
                "message": f"the host's context value for '{top}' does not match the tool's args_schema",
                "source": "host context",
            }
            if top in filled
            else error
        )
    return out


def without_host_args(spec: dict[str, Any], filled: list[str]) -> dict[str, Any]:
    """A copy of ``spec`` as the model reads it: the arguments the host fills are gone from its schema and examples.

    The host owns them (001), so the model neither guesses nor sends them; the stored spec is unchanged.
    """
    if not filled:
        return spec
    out = dict(spec)
    schema = spec.get("args_schema")
    if isinstance(schema, dict) and isinstance(schema.get("properties"), dict):
        schema = dict(schema)
        schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in filled}
        if isinstance(schema.get("required"), list):
            schema["required"] = [n for n in schema["required"] if n not in filled]
            if not schema["required"]:
                del schema["required"]
        out["args_schema"] = schema
    if isinstance(spec.get("arg_order"), list):
        out["arg_order"] = [n for n in spec["arg_order"] if n not in filled]
    if isinstance(spec.get("examples"), list):
        out["examples"] = [
            {**e, "args": {k: v for k, v in e["args"].items() if k not in filled}}
            if isinstance(e, dict) and isinstance(e.get("args"), dict)
            else e
            for e in spec["examples"]
        ]
    return out
