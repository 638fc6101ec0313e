"""Check one tool record field by field and normalise it (ids, texts, examples, errors, kind, policy, handler).

:class:`_Checker` records each problem as a located diagnostic; the schemas themselves are checked by
:mod:`toolcat.build.sources.tool_schemas`, and :mod:`toolcat.build.sources.tools` drives it over one parsed file.
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...engines import schemaguard
from ...format import json_paths
from ...format.canonical import dumps
from ...format.json_paths import child_path
from ...format.names import ACTION, ENTITY, MAX_TOOL_ID, RULES, entity_action, tool_id_problem
from ...format.schema_nulls import without_null_optionals
from ..errors import Diagnostic, Severity
from ..tokens import count_tokens
from .parse import Parsed, parse_bytes
from .tool_handler import check_handler
from .tool_schemas import check_schema, schema_validator, short, type_name

SUMMARY_TOKEN_BUDGET = 40

TOOL_FIELDS = {
    "id": "canonical dotted id, e.g. file.read",
    "summary": "one line saying what the tool does",
    "description": "longer text",
    "args_schema": "JSON Schema of the arguments (root type object)",
    "result_schema": "JSON Schema of the result",
    "examples": "list of {description, args}",
    "errors": "list of {code, when}",
    "tags": "list of strings",
    "kind": "read | write",
    "optional": "true | false",
    "when_to_use": "text",
    "policy": "{do, dont, edge_cases}",
    "annotations": "MCP tool annotations",
    "categories": "extra node paths",
    "handler": "how to execute the tool",
    "version": "version string",
    "deprecated": "true, false, or what to use instead",
    "alias": "provider-safe name to use instead of the derived one (a list: legacy names, as 'aliases')",
    "aliases": "legacy names (old ids or function names) that still resolve to this tool",
    "always_load": "true to expose the tool directly beside the discovery tools in every dialect",
    "search_hints": "phrases users say for this tool; indexed for search, never shown to the model",
    "entity": "what the tool acts on, for analytics and UI events (else derived from the id: task for onto.task.update)",
    "action": "what it does to the entity (else the id's last segment: update for onto.task.update)",
    "contexts": "names of top-level arguments the host fills from its context (Catalog.open(context=...))",
}
#: A legacy name: an old id (dots), function name or provider alias.
LEGACY_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
ANNOTATION_KEYS = {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
POLICY_KEYS = ("do", "dont", "edge_cases")


@dataclass(slots=True)
class FileResult:
    """What one tools file contributes: normalised tool records and diagnostics."""

    tools: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)


def suggest_id(raw: str) -> str:
    """A canonical id close to what the author wrote (``File-Read`` → ``file.read``)."""
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", raw).lower()
    text = re.sub(r"[\s/:-]+", "_", text)
    text = re.sub(r"[^a-z0-9_.]", "", text).strip("._")
    text = re.sub(r"\.+", ".", text)
    if "." not in text:
        text = text.replace("_", ".", 1) if "_" in text else f"ns.{text or 'tool'}"
    parts = [p if re.match(r"[a-z]", p) else f"x{p}" for p in text.split(".") if p]
    return ".".join(parts)


class _Checker:
    """Checks one file's tools, recording diagnostics with lines from the parse."""

    def __init__(self, rel: str, parsed: Parsed, result: FileResult) -> None:
        self.rel = rel
        self.parsed = parsed
        self.result = result

    def add(self, severity: Severity, json_path: str, message: str, **kw: Any) -> None:
        line, column = self.parsed.where(json_path)
        self.result.diagnostics.append(
            Diagnostic(severity, self.rel, message, line=line, column=column, json_path=json_path, **kw)
        )

    def error(self, json_path: str, message: str, **kw: Any) -> None:
        self.add(Severity.ERROR, json_path, message, **kw)

    def warning(self, json_path: str, message: str, **kw: Any) -> None:
        self.add(Severity.WARNING, json_path, message, **kw)

    def unrunnable_examples(
        self, tool_id: str, args_schema: Any, handler: Any, examples: list[dict[str, Any]], path: str
    ) -> None:
        """A warning for each example the reader would refuse before running it (issue 34: examples are a contract).

        After the reader's null rule and defaults (:func:`toolcat.format.schema_nulls.without_null_optionals`, the
        top-level ``default`` s), an http handler's URL path parameters must all have a value; the examples test
        (tests/test_examples_contract.py) runs every example through the reader itself.
        """
        needed = url_parameters(handler)
        if not needed:
            return
        properties = args_schema.get("properties") if isinstance(args_schema, dict) else None
        defaulted = {
            str(name)
            for name, sub in (properties.items() if isinstance(properties, dict) else ())
            if isinstance(sub, dict) and "default" in sub
        }
        for index, example in enumerate(examples):
            given = set(without_null_optionals(args_schema, example.get("args", {}))) | defaulted
            missing = [name for name in needed if name not in given]
            if missing:
                self.warning(
                    child_path(child_path(path, "examples"), index),
                    f"example {index + 1} of {tool_id} cannot run: the handler's URL needs "
                    f"{', '.join(missing)}, which neither the example nor a default in args_schema gives",
                    code="example_unrunnable",
                    hint="Give the argument in the example, or a default in args_schema; "
                    "`toolcat exec --dry-run` shows the call.",
                )

    def wrong_type(self, json_path: str, message: str, expected: str, got: str) -> None:
        """A ``wrong_type`` error: the value at ``json_path`` is not what ``expected`` says (``got`` shows it)."""
        self.error(json_path, message, expected=expected, got=got, code="wrong_type")

    def schema(self, schema: Any, path: str, *, root_object: bool) -> bool:
        """Check a JSON Schema the author wrote; True when it is usable."""
        return check_schema(self.add, schema, path, root_object=root_object)

    # -- fields ----------------------------------------------------------------------

    def name_field(self, tool: dict[str, Any], key: str, path: str, fallback: str) -> str:
        """``entity`` or ``action`` as the source names it, else ``fallback`` (derived from the id)."""
        value = tool.get(key)
        if value is None:
            return fallback
        rule = ENTITY if key == "entity" else ACTION
        if not isinstance(value, str) or not rule.fullmatch(value):
            self.error(
                child_path(path, key),
                f"'{key}' {short(value)} is not a valid {key} name",
                expected=RULES[key],
                got=short(value),
                code="bad_name",
                hint=f"Leave '{key}' out to derive it from the id ({fallback!r}), or write e.g. {fallback!r}.",
            )
            return fallback
        return value

    def contexts(self, tool: dict[str, Any], path: str, args_schema: Any) -> list[str]:
        """``contexts``: top-level argument names the host fills; each must be a property of ``args_schema``."""
        names = self.string_list(tool, "contexts", path)
        properties = args_schema.get("properties") if isinstance(args_schema, dict) else None
        known = list(properties) if isinstance(properties, dict) else []
        for index, name in enumerate(names):
            if name not in known:
                close = difflib.get_close_matches(name, known, n=1)
                self.error(
                    f"{child_path(path, 'contexts')}[{index}]",
                    f"context argument {short(name)} is not a top-level property of args_schema",
                    expected=f"one of: {', '.join(known)}" if known else "a property under args_schema.properties",
                    got=short(name),
                    code="unknown_context",
                    hint=f"Did you mean '{close[0]}'?"
                    if close
                    else "Declare the argument under args_schema.properties.",
                )
        return sorted(set(names))

    def host_fields(self, tool: dict[str, Any], tool_id: str, path: str, args_schema: Any) -> dict[str, Any]:
        """``entity``, ``action`` (derived from the id where not given) and ``contexts`` of one tool."""
        entity, action = entity_action(tool_id) if tool_id else ("", "")
        return {
            "entity": self.name_field(tool, "entity", path, entity),
            "action": self.name_field(tool, "action", path, action),
            "contexts": self.contexts(tool, path, args_schema),
        }

    def string(self, tool: dict[str, Any], key: str, path: str, *, required: bool = False) -> str:
        value = tool.get(key)
        if value is None:
            if required:
                self.error(
                    path,
                    f"missing required field '{key}'",
                    expected=TOOL_FIELDS[key],
                    got="nothing",
                    code="missing_field",
                    hint=f"Add '{key}:' to this tool.",
                )
            return ""
        if isinstance(value, (int, float)) and not isinstance(value, bool) and key == "version":
            text = self.parsed.text_of(child_path(path, key), value)
            self.warning(
                child_path(path, key),
                f"'{key}' is a number; it is read as the string {text!r}",
                expected="a quoted string",
                got=short(value),
                code="number_as_string",
                hint=f'Quote it: {key}: "{text}".',
            )
            return text
        if not isinstance(value, str):
            self.wrong_type(child_path(path, key), f"'{key}' must be a string", "a string", type_name(value))
            return ""
        if required and not value.strip():
            self.error(
                child_path(path, key), f"'{key}' must not be empty", expected="text", got='""', code="empty_field"
            )
        return value.strip()

    def string_list(self, tool: dict[str, Any], key: str, path: str) -> list[str]:
        value = tool.get(key)
        if value is None:
            return []
        if isinstance(value, str):
            return [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.wrong_type(
                child_path(path, key), f"'{key}' must be a list of strings", "a list of strings", short(value)
            )
            return []
        return [v.strip() for v in value]

    def legacy_names(self, tool: dict[str, Any], path: str, *, list_alias: bool) -> list[str]:
        """Legacy names from ``aliases:`` (and ``alias:`` when it is a list), each checked, deduplicated."""
        found: list[str] = []
        for key in ("alias", "aliases") if list_alias else ("aliases",):
            for index, name in enumerate(self.string_list(tool, key, path)):
                if not LEGACY_NAME.match(name):
                    self.error(
                        f"{child_path(path, key)}[{index}]",
                        f"legacy alias {short(name)} is not a tool name",
                        expected=f"{LEGACY_NAME.pattern} (an old id, function name or provider alias)",
                        got=short(name),
                        code="bad_alias",
                    )
                elif name not in found:
                    found.append(name)
        return found

    def tool(self, tool: Any, path: str) -> dict[str, Any] | None:
        """One tool's normalised record, each field read by its check in :data:`FIELD_CHECKS`; None on an error."""
        if not isinstance(tool, dict):
            self.wrong_type(
                path, "a tool must be a mapping", "a mapping with id, summary, args_schema", type_name(tool)
            )
            return None
        errors_before = self.error_count()
        self.unknown_fields(tool, path)
        draft = _Draft(tool, path)
        for key, check in FIELD_CHECKS:
            draft.record[key] = check(self, draft)
        if self.error_count() > errors_before:
            return None
        for key, check in LATE_FIELD_CHECKS:
            draft.record[key] = check(self, draft)
        record = draft.record
        self.unrunnable_examples(record["id"], record["args_schema"], record["handler"], record["examples"], path)
        line, _ = self.parsed.where(path)
        return {**{key: draft.record[key] for key in RECORD_FIELDS}, "line": line, "json_path": path}

    def error_count(self) -> int:
        return sum(1 for d in self.result.diagnostics if d.severity is Severity.ERROR)

    def unknown_fields(self, tool: dict[str, Any], path: str) -> None:
        """A warning, with a did-you-mean, for every key that is not one of :data:`TOOL_FIELDS`."""
        for key in sorted(set(tool) - set(TOOL_FIELDS)):
            close = difflib.get_close_matches(key, list(TOOL_FIELDS), n=1)
            self.warning(
                child_path(path, key),
                f"unknown field '{key}' is ignored",
                code="unknown_field",
                hint=f"Did you mean '{close[0]}'?" if close else f"Known fields: {', '.join(sorted(TOOL_FIELDS))}.",
            )

    # -- one check per record field, in the order of FIELD_CHECKS ---------------------------------------------------

    def id_field(self, draft: _Draft) -> str:
        """``id``: required, canonical (else the hint names a canonical id close to it)."""
        tool_id = self.string(draft.tool, "id", draft.path, required=True)
        if tool_id and (problem := tool_id_problem(tool_id)) is not None:
            self.error(
                draft.at("id"),
                f"id {short(tool_id)} is not canonical: {problem}",
                expected=RULES["tool id"],
                got=short(tool_id),
                code="non_canonical_id",
                hint=f"Use {suggest_id(tool_id)[:MAX_TOOL_ID]!r}.",
            )
        return tool_id

    def summary(self, draft: _Draft) -> str:
        """``summary``: required, one line (else flattened, with a warning), within :data:`SUMMARY_TOKEN_BUDGET`."""
        summary = self.string(draft.tool, "summary", draft.path, required=True)
        if summary and "\n" in summary:
            self.warning(
                draft.at("summary"),
                "summary spans more than one line",
                code="summary_lines",
                hint="Keep the summary to one line; put the rest in description.",
            )
            summary = " ".join(summary.split())
        if summary and count_tokens(summary) > SUMMARY_TOKEN_BUDGET:
            self.warning(
                draft.at("summary"),
                f"summary costs {count_tokens(summary)} tokens, over the budget of {SUMMARY_TOKEN_BUDGET}",
                code="summary_tokens",
                hint="Summaries are shown for every search hit; say what the tool does in a few words.",
            )
        return summary

    def args_schema(self, draft: _Draft) -> Any:
        """``args_schema``: required, a usable JSON Schema of an object (``draft.schema_ok`` says so)."""
        args_schema = draft.tool.get("args_schema")
        if args_schema is None:
            self.error(
                draft.path,
                "missing required field 'args_schema'",
                expected="a JSON Schema with type: object",
                got="nothing",
                code="missing_field",
                hint="Tools without arguments use args_schema: {type: object, properties: {}}.",
            )
        else:
            draft.schema_ok = self.schema(args_schema, draft.at("args_schema"), root_object=True)
        return args_schema

    def result_schema(self, draft: _Draft) -> Any:
        result_schema = draft.tool.get("result_schema")
        if result_schema is not None:
            self.schema(result_schema, draft.at("result_schema"), root_object=False)
        return result_schema

    def examples(self, draft: _Draft) -> list[dict[str, Any]]:
        """``examples``: a list of ``{description, args}``, each one's args valid against ``args_schema``."""
        examples: list[dict[str, Any]] = []
        for index, example in enumerate(self.entries(draft, "examples", "a list of {description, args}")):
            ex_path = child_path(draft.at("examples"), index)
            if not isinstance(example, dict) or not isinstance(example.get("args", {}), dict):
                self.wrong_type(
                    ex_path,
                    "an example must be a mapping with 'args' (a mapping)",
                    "{description, args}",
                    short(example),
                )
                continue
            args = example.get("args", {})
            self.example_args(draft, child_path(ex_path, "args"), args)
            examples.append({"description": str(example.get("description", "")), "args": args})
        return examples

    def entries(self, draft: _Draft, key: str, expected: str) -> list[Any]:
        """A list field's items (none when it is absent or empty); an error, and none, when it is not a list."""
        raw = draft.tool.get(key) or []
        if isinstance(raw, list):
            return raw
        self.wrong_type(draft.at(key), f"'{key}' must be a list", expected, type_name(raw))
        return []

    def example_args(self, draft: _Draft, args_path: str, args: dict[str, Any]) -> None:
        """An example's args: within the reader's nesting limit, and matching ``args_schema`` when it is usable."""
        if json_paths.too_deep(args, schemaguard.MAX_ARGS_DEPTH) is not None:
            self.error(
                args_path,
                f"example args nest lists and objects deeper than {schemaguard.MAX_ARGS_DEPTH} levels",
                code="example_invalid",
                hint="The reader refuses such arguments; flatten the example.",
            )
            return
        if not draft.schema_ok:
            return
        validator = schema_validator(dumps(draft.record["args_schema"]))
        for err in sorted(validator.iter_errors(args), key=lambda e: [str(p) for p in e.absolute_path]):
            where = args_path
            for part in err.absolute_path:
                where = child_path(where, part)
            self.error(
                where,
                f"example does not match args_schema: {err.message}",
                code="example_invalid",
                hint="Fix the example's args, or the schema if the example is right.",
            )

    def errors(self, draft: _Draft) -> list[dict[str, Any]]:
        """``errors``: a list of ``{code, when}`` (a bare string is a code)."""
        errors_field: list[dict[str, Any]] = []
        for index, item in enumerate(self.entries(draft, "errors", "a list of {code, when}")):
            if isinstance(item, str):
                errors_field.append({"code": item, "when": ""})
            elif isinstance(item, dict) and isinstance(item.get("code"), str):
                errors_field.append({"code": item["code"], "when": str(item.get("when", ""))})
            else:
                self.wrong_type(
                    child_path(draft.at("errors"), index),
                    "an error entry needs a string 'code'",
                    "{code, when}",
                    short(item),
                )
        return errors_field

    def annotations(self, draft: _Draft) -> dict[str, Any]:
        """``annotations``: MCP's keys (others are warnings), the hints booleans."""
        annotations = draft.tool.get("annotations") or {}
        if not isinstance(annotations, dict):
            self.wrong_type(
                draft.at("annotations"),
                "'annotations' must be a mapping",
                "{readOnlyHint, destructiveHint, ...}",
                type_name(annotations),
            )
            annotations = {}
        for key in sorted(set(annotations) - ANNOTATION_KEYS):
            self.warning(
                child_path(draft.at("annotations"), key),
                f"unknown MCP annotation '{key}'",
                code="unknown_field",
                hint=f"MCP defines: {', '.join(sorted(ANNOTATION_KEYS))}.",
            )
        for key in sorted(ANNOTATION_KEYS - {"title"}):
            if key in annotations and not isinstance(annotations[key], bool):
                self.wrong_type(
                    child_path(draft.at("annotations"), key),
                    f"'{key}' must be true or false",
                    "a boolean",
                    short(annotations[key]),
                )
        return annotations

    def kind(self, draft: _Draft) -> str:
        """``kind``: read or write (else from ``annotations.readOnlyHint``), agreeing with the annotations."""
        kind = draft.tool.get("kind")
        read_only = draft.record["annotations"].get("readOnlyHint") is True
        if kind is None:
            kind = "read" if read_only else "write"
        elif kind not in ("read", "write"):
            self.error(
                draft.at("kind"),
                "'kind' must be read or write",
                expected="read | write",
                got=short(kind),
                code="bad_enum",
                hint="Use write for anything that changes state, read otherwise.",
            )
            kind = "write"
        if kind == "write" and read_only:
            self.warning(
                draft.at("annotations"),
                "kind is write but readOnlyHint is true",
                code="inconsistent",
                hint="Make kind and annotations.readOnlyHint agree.",
            )
        return str(kind)

    def flag(self, draft: _Draft, key: str, expected: str) -> bool:
        """A true/false field (false when absent, or after an error when it is not a boolean)."""
        value = draft.tool.get(key, False)
        if isinstance(value, bool):
            return value
        self.wrong_type(draft.at(key), f"'{key}' must be true or false", expected, short(value))
        return False

    def policy(self, draft: _Draft) -> dict[str, list[str]]:
        """``policy``: ``{do, dont, edge_cases}``, each a list of strings (other keys are warnings)."""
        raw_policy = draft.tool.get("policy") or {}
        if not isinstance(raw_policy, dict):
            self.wrong_type(
                draft.at("policy"), "'policy' must be a mapping", "{do, dont, edge_cases}", type_name(raw_policy)
            )
            raw_policy = {}
        for key in sorted(set(raw_policy) - set(POLICY_KEYS)):
            self.warning(
                child_path(draft.at("policy"), key),
                f"unknown policy key '{key}'",
                code="unknown_field",
                hint="Policy keys are do, dont and edge_cases.",
            )
        policy: dict[str, list[str]] = {}
        for key in POLICY_KEYS:
            items = self.string_list(raw_policy, key, draft.at("policy"))
            if items:
                policy[key] = items
        return policy

    def categories(self, draft: _Draft) -> list[str]:
        """``categories``: extra node paths, ``a/b`` (or ``a.b``), none of them empty."""
        categories: list[str] = []
        for index, category in enumerate(self.string_list(draft.tool, "categories", draft.path)):
            norm = category.strip().strip("/").replace(".", "/") if "/" not in category else category.strip().strip("/")
            if not norm:
                self.error(child_path(draft.at("categories"), index), "empty category path", code="bad_category")
                continue
            categories.append(norm)
        return categories

    def deprecated(self, draft: _Draft) -> bool | str:
        """``deprecated``: true/false, or a note saying what to use instead."""
        deprecated = draft.tool.get("deprecated", False)
        if isinstance(deprecated, (bool, str)):
            return deprecated
        self.wrong_type(
            draft.at("deprecated"),
            "'deprecated' must be true/false or a note",
            "a boolean or a string",
            type_name(deprecated),
        )
        return False

    def alias(self, draft: _Draft) -> str | None:
        """``alias``: a provider-safe name (a list is legacy names, read by :meth:`legacy_names`)."""
        alias = draft.tool.get("alias")
        if alias is None or isinstance(alias, list):  # `alias: [old_name, ...]`: the derived provider alias stays
            return None
        if not isinstance(alias, str) or not re.match(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$", alias):
            self.error(
                draft.at("alias"),
                "alias is not a valid provider tool name",
                expected="^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$ (the rules OpenAI, Anthropic and Gemini share)",
                got=short(alias),
                code="bad_alias",
            )
            return None
        return alias

    def derived_name(self, draft: _Draft, key: str) -> str:
        """``entity`` or ``action``: as written, else derived from the id (``onto.task.update``: task, update)."""
        tool_id = draft.record["id"]
        entity, action = entity_action(tool_id) if tool_id else ("", "")
        return self.name_field(draft.tool, key, draft.path, entity if key == "entity" else action)


@dataclass(slots=True)
class _Draft:
    """One tool being checked: its mapping, its JSON path and the record's fields checked so far."""

    tool: dict[str, Any]
    path: str
    record: dict[str, Any] = field(default_factory=dict)
    #: args_schema is a usable schema, so the examples are validated against it
    schema_ok: bool = False

    def at(self, key: str) -> str:
        return child_path(self.path, key)


#: Reads one field of the tool being checked (recording its diagnostics) and returns the record's value.
FieldCheck = Callable[[_Checker, _Draft], Any]

#: Each record field and its check, in the order they run (so diagnostics keep their order); a check may read
#: a field checked before it (``kind`` reads ``annotations``, ``examples`` and ``contexts`` read ``args_schema``).
FIELD_CHECKS: tuple[tuple[str, FieldCheck], ...] = (
    ("id", _Checker.id_field),
    ("summary", _Checker.summary),
    ("description", lambda c, d: c.string(d.tool, "description", d.path)),
    ("args_schema", _Checker.args_schema),
    ("result_schema", _Checker.result_schema),
    ("examples", _Checker.examples),
    ("errors", _Checker.errors),
    ("annotations", _Checker.annotations),
    ("kind", _Checker.kind),
    ("optional", lambda c, d: c.flag(d, "optional", "a boolean")),
    ("policy", _Checker.policy),
    ("categories", _Checker.categories),
    ("handler", lambda c, d: check_handler(c.error, d.tool.get("handler"), d.at("handler"))),
    ("deprecated", _Checker.deprecated),
    ("legacy_aliases", lambda c, d: c.legacy_names(d.tool, d.path, list_alias=isinstance(d.tool.get("alias"), list))),
    ("always_load", lambda c, d: c.flag(d, "always_load", "true | false")),
    ("search_hints", lambda c, d: sorted({h for h in c.string_list(d.tool, "search_hints", d.path) if h})),
    ("alias", _Checker.alias),
    ("entity", lambda c, d: c.derived_name(d, "entity")),
    ("action", lambda c, d: c.derived_name(d, "action")),
    ("contexts", lambda c, d: c.contexts(d.tool, d.path, d.record["args_schema"])),
)
#: Checked once the tool is known to be free of errors: their own errors are reported but keep the record.
LATE_FIELD_CHECKS: tuple[tuple[str, FieldCheck], ...] = (
    ("tags", lambda c, d: sorted(set(c.string_list(d.tool, "tags", d.path)))),
    ("when_to_use", lambda c, d: c.string(d.tool, "when_to_use", d.path)),
    ("version", lambda c, d: c.string(d.tool, "version", d.path) or None),
)
#: The record's fields in their order (``line`` and ``json_path`` follow): the source's, ``aliases`` read as legacy ones.
RECORD_FIELDS = tuple("legacy_aliases" if key == "aliases" else key for key in TOOL_FIELDS)


__all__ = [
    "ANNOTATION_KEYS",
    "POLICY_KEYS",
    "SUMMARY_TOKEN_BUDGET",
    "TOOL_FIELDS",
    "FileResult",
    "check_tools_file",
    "suggest_id",
]

log = logging.getLogger(__name__)


def check_tools_file(rel: str, data: bytes) -> FileResult:
    """Parse and check one tools file's bytes (``rel`` is its path relative to the source root)."""
    result = FileResult()
    parsed = parse_bytes(rel, data)
    if isinstance(parsed, list):
        result.diagnostics.extend(parsed)
        return result
    checker = _Checker(rel, parsed, result)
    data = parsed.data
    if isinstance(data, dict) and "tools" in data:
        tools = data["tools"]
        extra = sorted(set(data) - {"tools"})
        for key in extra:
            checker.warning(
                child_path("$", key),
                f"unknown top-level key '{key}' is ignored",
                code="unknown_field",
                hint="A tools file holds a 'tools:' list.",
            )
        if not isinstance(tools, list):
            checker.wrong_type("$.tools", "'tools' must be a list", "a list of tool mappings", type_name(tools))
            return result
        entries = [(child_path("$.tools", i), t) for i, t in enumerate(tools)]
    elif isinstance(data, dict) and "id" in data:
        entries = [("$", data)]
    else:
        checker.error(
            "$",
            "not a tools file",
            expected="a 'tools:' list, or one tool mapping with an 'id'",
            got=short(data) if data is not None else "an empty file",
            code="not_tools_file",
            hint="Put tool definitions under 'tools:'; move other data out of the catalogue folders.",
        )
        return result
    for json_path, entry in entries:
        record = checker.tool(entry, json_path)
        if record is not None:
            result.tools.append(record)
    return result


_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def url_parameters(handler: Any) -> list[str]:
    """The arguments an http handler's URL path needs: its ``{placeholders}`` and its ``params`` with ``in: path``."""
    if not isinstance(handler, dict) or handler.get("type") != "http":
        return []
    names = _PLACEHOLDER.findall(str(handler.get("url", "")))
    params = handler.get("params")
    if isinstance(params, dict):
        names += [str(n) for n, spec in params.items() if isinstance(spec, dict) and spec.get("in") == "path"]
    return list(dict.fromkeys(names))
