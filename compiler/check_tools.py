"""Check one tools file: parse it, check every tool's fields and schemas, normalise.

The result of a file depends only on its bytes, so the build caches it by hash
(incremental builds). Cross-file checks (duplicate ids, categories, aliases) live in
:mod:`toolcat.assemble`.
"""

from __future__ import annotations

import logging

from .errors import Diagnostic, Severity
from .parse import DuplicateKeyError, SourceParseError, parse_text
from .reader.schemaguard import child_path
from .tool_fields import (
    ANNOTATION_KEYS,
    CANONICAL_ID,
    POLICY_KEYS,
    SUMMARY_TOKEN_BUDGET,
    TOOL_FIELDS,
    FileResult,
    _Checker,
    suggest_id,
)
from .tool_handler import HTTP_METHODS, PYTHON_TARGET
from .tool_schemas import schema_errors, schema_problems, short, type_name

__all__ = [
    "ANNOTATION_KEYS",
    "CANONICAL_ID",
    "HTTP_METHODS",
    "POLICY_KEYS",
    "PYTHON_TARGET",
    "SUMMARY_TOKEN_BUDGET",
    "TOOL_FIELDS",
    "FileResult",
    "check_tools_file",
    "schema_errors",
    "schema_problems",
    "suggest_id",
]

log = logging.getLogger(__name__)


def check_tools_file(rel: str, text: str) -> FileResult:
    """Parse and check one tools file (``rel`` is its path relative to the source root)."""
    result = FileResult()
    try:
        parsed = parse_text(text, is_json=rel.endswith(".json"))
    except SourceParseError as exc:
        result.diagnostics.append(
            Diagnostic(Severity.ERROR, rel, exc.message, line=exc.line, column=exc.column, hint=exc.hint, code="parse")
        )
        return result
    except DuplicateKeyError as exc:
        for json_path, line, column in exc.places:
            result.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    rel,
                    "duplicate key: YAML would keep only the last value",
                    line=line,
                    column=column,
                    json_path=json_path,
                    code="duplicate_key",
                    hint="Remove or rename one of them.",
                )
            )
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
            checker.error(
                "$.tools",
                "'tools' must be a list",
                expected="a list of tool mappings",
                got=type_name(tools),
                code="wrong_type",
            )
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
