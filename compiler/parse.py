"""Read one YAML or JSON source file into plain data plus a JSON-path → line map.

PyYAML's C loader gives speed; composing the same text gives node marks, so every
diagnostic can name the line of the field it is about. YAML surprises are
normalised here: dates become ISO strings, CRLF is accepted, a BOM is dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from dataclasses import dataclass, field
from typing import Any

import yaml

log = logging.getLogger(__name__)

try:  # the C loader is much faster; the pure-Python one behaves the same
    _Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    _Loader = yaml.SafeLoader


@dataclass(frozen=True, slots=True)
class Parsed:
    """The data of one file and where each JSON path starts (1-based line, column)."""

    data: Any
    lines: dict[str, tuple[int, int]]
    #: the source text of numeric scalars (``version: 1.10`` loads as the float 1.1)
    number_text: dict[str, str] = field(default_factory=dict)

    def text_of(self, json_path: str, value: Any) -> str:
        """A scalar as the author wrote it: the source text for numbers, else ``str(value)``."""
        if isinstance(value, bool):
            return str(value).lower()
        if isinstance(value, (int, float)):
            return self.number_text.get(json_path, str(value))
        return str(value)

    def where(self, json_path: str) -> tuple[int | None, int | None]:
        """The line and column of ``json_path`` or of its nearest located parent."""
        path = json_path
        while path:
            if path in self.lines:
                return self.lines[path]
            cut = max(path.rfind("."), path.rfind("["))
            if cut <= 0:
                break
            path = path[:cut]
        return self.lines.get("$", (None, None))


@dataclass(frozen=True, slots=True)
class SourceParseError(Exception):
    """The text is not valid YAML/JSON; line and column are 1-based when known."""

    message: str
    line: int | None
    column: int | None
    hint: str


def child_path(parent: str, key: object) -> str:
    """``$.a`` + ``b`` → ``$.a.b``; ``$.a`` + 3 → ``$.a[3]``; odd keys are quoted."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    text = str(key)
    if text.replace("_", "a").replace("-", "a").isalnum():
        return f"{parent}.{text}"
    return f"{parent}[{json.dumps(text, ensure_ascii=False)}]"


def normalise(value: Any) -> Any:
    """Turn YAML-only types into JSON types: dates → ISO strings, keys → strings."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: normalise(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return value


_NUMBER_TAGS = ("tag:yaml.org,2002:float", "tag:yaml.org,2002:int")


def _mark_lines(node: yaml.Node, path: str, out: dict[str, tuple[int, int]], numbers: dict[str, str]) -> None:
    out[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.ScalarNode) and node.tag in _NUMBER_TAGS:
        numbers[path] = node.value
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node.start_mark)
            child = child_path(path, key)
            out[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            _mark_children(value_node, child, out, numbers)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _mark_lines(item, child_path(path, index), out, numbers)


def _mark_children(node: yaml.Node, path: str, out: dict[str, tuple[int, int]], numbers: dict[str, str]) -> None:
    # the key's line is the useful one for a mapping value; keep it, then descend
    keep = out[path]
    _mark_lines(node, path, out, numbers)
    out[path] = keep


def _yaml_hint(problem: str) -> str:
    if "found character '\\t'" in problem or "\\t" in problem:
        return "YAML does not allow tabs for indentation: indent with spaces."
    if "mapping values are not allowed" in problem:
        return "A value containing ': ' must be quoted, or the indentation is off by one level."
    if "could not find expected ':'" in problem:
        return "A key is missing its ':' or a multi-line string is not indented under its key."
    if "sequence entries are not allowed" in problem:
        return "A '- ' list item is indented where a mapping key was expected; align it with its siblings."
    if "found undefined alias" in problem:
        return "An '*alias' is used before its '&anchor' is defined, or a value starting with '*' needs quotes."
    return "Check the indentation and quoting around this line."


def _check_duplicate_keys(node: yaml.Node, path: str, dups: list[tuple[str, int, int]]) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else ""
            child = child_path(path, key)
            if key in seen:
                dups.append((child, key_node.start_mark.line + 1, key_node.start_mark.column + 1))
            seen.add(key)
            _check_duplicate_keys(value_node, child, dups)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _check_duplicate_keys(item, child_path(path, index), dups)


@dataclass(frozen=True, slots=True)
class DuplicateKeyError(Exception):
    """A mapping names the same key twice (YAML would silently keep the last one)."""

    places: list[tuple[str, int, int]]


def parse_text(text: str, *, is_json: bool) -> Parsed:
    """Parse source text; raise :class:`SourceParseError` or :class:`DuplicateKeyError`."""
    text = text.removeprefix("\ufeff")
    if is_json:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise SourceParseError(
                f"invalid JSON: {exc.msg}", exc.lineno, exc.colno,
                "Check for a trailing comma, a missing quote or an unclosed bracket.",
            ) from None
        # JSON is YAML 1.2; composing it gives line numbers for diagnostics
        try:
            root = yaml.compose(text, Loader=_Loader)
        except yaml.YAMLError:
            return Parsed(data, {})
    else:
        try:
            loader = _Loader(text)
            try:
                root = loader.get_single_node()
                data = loader.construct_document(root) if root is not None else None
            finally:
                loader.dispose()
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark or exc.context_mark
            problem = f"{exc.problem or 'invalid YAML'}"
            if exc.context:
                problem = f"{exc.context}, {problem}"
            raise SourceParseError(
                f"invalid YAML: {problem}",
                mark.line + 1 if mark else None,
                mark.column + 1 if mark else None,
                _yaml_hint(problem),
            ) from None
        except yaml.YAMLError as exc:
            raise SourceParseError(f"invalid YAML: {exc}", None, None, _yaml_hint(str(exc))) from None
    lines: dict[str, tuple[int, int]] = {}
    numbers: dict[str, str] = {}
    if root is not None:
        dups: list[tuple[str, int, int]] = []
        _check_duplicate_keys(root, "$", dups)
        if dups:
            raise DuplicateKeyError(dups)
        _mark_lines(root, "$", lines, numbers)
    return Parsed(normalise(data), lines, numbers)
