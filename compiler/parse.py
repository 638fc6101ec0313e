"""Read one YAML or JSON source file into plain data plus a JSON-path → line map.

PyYAML's C loader gives speed; composing the same text gives node marks, so every
diagnostic can name the line of the field it is about. YAML surprises are
normalised here: dates become ISO strings, CRLF is accepted, a BOM is dropped.

Sources are untrusted input (a contributor's pull request), so every file is held to
the limits below before and while it is parsed, whatever it says about itself: its
size, its nesting, what its YAML aliases expand to, and numbers JSON cannot carry.
Each limit is a located :class:`SourceParseError`, never a hang or a traceback.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .reader.schemaguard import child_path  # one spelling of JSON paths, shared with the reader

log = logging.getLogger(__name__)

# -- limits (documented in docs/sources.md, "Limits") ------------------------------------------
#: Bytes of one tools file (YAML or JSON), ``_node.yaml`` or skill ``metadata.yaml``.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
#: Bytes of one ``SKILL.md``.
MAX_SKILL_MD_BYTES = 1024 * 1024
#: Bytes of one file bundled with a skill (``scripts/``, ``references/``, ``assets/``, ...).
MAX_SKILL_RESOURCE_BYTES = 8 * 1024 * 1024
#: Bytes of all the files bundled with one skill together.
MAX_SKILL_BYTES = 32 * 1024 * 1024
#: Nesting of mappings and lists in one file (the root mapping is level 1), aliases expanded.
MAX_DEPTH = 64
#: Nodes that YAML aliases may add to one document ("billion laughs" documents add billions).
MAX_ALIAS_NODES = 100_000
#: Integers must fit in 64 bits (signed or unsigned): what JSON readers in other languages hold.
MIN_INT, MAX_INT = -(2**63), 2**64 - 1
#: Integer literals longer than this are refused before Python converts them (it refuses 4,300 digits).
MAX_INT_LITERAL = 100

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


@dataclass(frozen=True, slots=True)
class SourceFileError(Exception):
    """A source file that is not read at all: a symbolic link, not a regular file, or over its size limit."""

    message: str
    expected: str
    got: str
    hint: str
    code: str


def _size(n: int) -> str:
    mib = 1024 * 1024
    return f"{n // mib} MiB" if n and n % mib == 0 else f"{n:,} bytes"


def symlink_error(path: Path, root: Path) -> SourceFileError:
    """Why a symbolic link in the source tree is refused, naming where it points."""
    try:
        target = str(path.readlink())
    except OSError as exc:  # pragma: no cover - raced away between the listing and here
        target = f"? ({exc.strerror})"
    absolute = os.path.normpath(path.parent / target)
    inside = Path(os.path.realpath(absolute)).is_relative_to(os.path.realpath(root))
    where = "inside" if inside else "outside"
    shown = target if target == absolute else f"{target} ({absolute})"
    return SourceFileError(
        f"symbolic link to {shown} is not followed (it points {where} the source tree)",
        "a regular file or folder",
        f"a symbolic link to {shown}",
        "toolcat publishes only real files of the source tree and never follows links, which could pull in files "
        "from anywhere on the build machine (~/.ssh, .env). Replace the link with a copy of what it points to "
        "(cp -R --dereference), or move the target into the tree.",
        "symlink",
    )


def read_source(path: Path, limit: int, root: Path) -> bytes:
    """The bytes of a regular file, never through a symbolic link and never more than ``limit``.

    Raises :class:`SourceFileError` before reading anything when the file is refused.
    """
    try:
        info = os.lstat(path)
    except OSError as exc:  # gone since the folder was listed
        raise SourceFileError(
            f"could not be read: {exc.strerror}",
            "a readable file",
            exc.strerror or "an error",
            "Check that nothing changes the sources during the build.",
            "unreadable",
        ) from None
    if stat.S_ISLNK(info.st_mode):
        raise symlink_error(path, root)
    if not stat.S_ISREG(info.st_mode):
        raise SourceFileError(
            "not a regular file",
            "a regular file",
            stat.filemode(info.st_mode),
            "Sources are regular files: remove this entry from the source tree.",
            "not_a_file",
        )
    if info.st_size > limit:
        raise _too_big(info.st_size, limit)
    try:  # O_NOFOLLOW and the fstat: the entry may have been swapped for a link or a FIFO since the lstat
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                raise SourceFileError(
                    "not a regular file",
                    "a regular file",
                    "something else",
                    "Sources are regular files: remove this entry from the source tree.",
                    "not_a_file",
                )
            data = handle.read(limit + 1)
    except OSError as exc:
        raise SourceFileError(
            f"could not be read: {exc.strerror}",
            "a readable file",
            exc.strerror or "an error",
            "Check the file's permissions.",
            "unreadable",
        ) from None
    if len(data) > limit:  # it grew since the lstat
        raise _too_big(len(data), limit)
    return data


def _too_big(size: int, limit: int) -> SourceFileError:
    return SourceFileError(
        f"file is {_size(size)}, over the limit of {_size(limit)}",
        f"at most {_size(limit)}",
        _size(size),
        "toolcat caps the size of every source file so that a build cannot be made to exhaust memory: split it "
        "into several files, or move long text into a skill's references/ files.",
        "too_large",
    )


def normalise(value: Any) -> Any:
    """Turn YAML-only types into JSON types: dates → ISO strings, keys → strings."""
    if isinstance(value, dict):
        return {str(k) if not isinstance(k, str) else k: normalise(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):  # tuples: the pairs of !!omap and !!pairs
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


class _LongInteger(str):
    """A JSON integer literal too long to convert (Python refuses 4,300 digits); refused with its path."""

    __slots__ = ()


def _json_int(text: str) -> int | _LongInteger:
    return _LongInteger(text) if len(text) > MAX_INT_LITERAL else int(text)


def _error_at(mark: Any, message: str, hint: str) -> SourceParseError:
    return SourceParseError(message, mark.line + 1, mark.column + 1, hint)


def _too_deep(mark: Any, via_alias: bool = False) -> SourceParseError:
    what = "an alias here expands to mappings and lists" if via_alias else "mappings and lists are"
    return _error_at(
        mark,
        f"{what} nested deeper than {MAX_DEPTH} levels",
        "Flatten the structure: move nested parts into $defs and point to them with $ref.",
    )


_INT_TAG = "tag:yaml.org,2002:int"
_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


def _guard_yaml(text: str) -> None:
    """Walk the YAML event stream once, before anything is composed, enforcing the structural limits.

    libyaml's composer recurses per level (100,000 nested '[' crash the process) and PyYAML expands
    every alias (a 451-byte document can stand for billions of nodes), so nesting and alias expansion
    are measured on the flat event stream: each anchor's size and depth is known when it closes,
    and an alias adds them.
    """
    loader = _Loader(text)
    try:
        stack: list[list[Any]] = []  # open collections: [anchor, nodes, deepest child]
        anchors: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, depth) of what it names
        added = 0

        def close(anchor: str | None, nodes: int, depth: int) -> None:
            if anchor is not None:
                anchors[anchor] = (nodes, depth)
            if stack:
                stack[-1][1] += nodes
                stack[-1][2] = max(stack[-1][2], depth)

        while loader.check_event():
            event = loader.get_event()
            if isinstance(event, _COLLECTION_START):
                if len(stack) >= MAX_DEPTH:
                    raise _too_deep(event.start_mark)
                stack.append([event.anchor, 1, 0])
            elif isinstance(event, _COLLECTION_END):
                anchor, nodes, depth = stack.pop()
                close(anchor, nodes, depth + 1)
            elif isinstance(event, yaml.ScalarEvent):
                value = event.value
                if len(value) > MAX_INT_LITERAL and value[:1] in "+-0123456789":
                    tag = event.tag
                    if tag is None or tag == "!":
                        tag = loader.resolve(yaml.ScalarNode, value, event.implicit)
                    if tag == _INT_TAG:
                        raise _error_at(
                            event.start_mark,
                            f"integer of {len(value):,} characters is outside the 64-bit integer range",
                            _INTEGER_HINT,
                        )
                close(event.anchor, 1, 0)
            elif isinstance(event, yaml.AliasEvent):
                if any(frame[0] == event.anchor for frame in stack):
                    raise _error_at(
                        event.start_mark,
                        f"recursive alias: *{event.anchor} is used inside its own anchor &{event.anchor}",
                        "A value cannot contain itself: write the inner part out, or refer to a separate anchor.",
                    )
                nodes, depth = anchors.get(event.anchor or "", (1, 0))  # undefined: the composer names it
                added += nodes
                if added > MAX_ALIAS_NODES:
                    raise _error_at(
                        event.start_mark,
                        f"YAML aliases expand this document by more than "
                        f"{MAX_ALIAS_NODES:,} nodes (*{event.anchor} alone stands for {nodes:,})",
                        "Aliases that nest aliases grow exponentially ('billion laughs'): write the "
                        "shared part once, or use fewer '*alias' references.",
                    )
                if len(stack) + depth > MAX_DEPTH:
                    raise _too_deep(event.start_mark, via_alias=True)
                close(None, nodes, depth)
    finally:
        loader.dispose()


_INTEGER_HINT = (
    "JSON readers in most languages hold integers in 64 bits (JavaScript exactly only up to 2**53): "
    "use a smaller bound, or write the value as a quoted string."
)
_FINITE_HINT = (
    "JSON has no NaN or Infinity (JavaScript's JSON.parse rejects them, and YAML's .nan and .inf "
    "have no JSON form): leave the bound out, or write a finite number."
)


def _depth(data: Any) -> int:
    """Nesting of dicts and lists, without recursion (json.loads accepts about 1,000 levels)."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, level = stack.pop()
        if isinstance(value, dict):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in value.values())
        elif isinstance(value, list):
            deepest = max(deepest, level)
            stack.extend((v, level + 1) for v in value)
    return deepest


def _json_too_deep(text: str) -> SourceParseError:
    """The place where JSON text first nests deeper than :data:`MAX_DEPTH` (only called when it does)."""
    depth = line = 1
    line_start = 0
    in_string = escaped = False
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            if depth > MAX_DEPTH:
                break
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "\n":
            line += 1
            line_start = index + 1
    else:
        return SourceParseError(
            f"mappings and lists are nested deeper than {MAX_DEPTH} levels",
            None,
            None,
            "Flatten the structure: move nested parts into $defs and point to them with $ref.",
        )
    return SourceParseError(
        f"mappings and lists are nested deeper than {MAX_DEPTH} levels",
        line,
        index - line_start + 1,
        "Flatten the structure: move nested parts into $defs and point to them with $ref.",
    )


def _value_problems(value: Any, path: str, found: list[tuple[str, str, str, Any]]) -> None:
    """Values JSON cannot carry faithfully; the depth is already known to be at most :data:`MAX_DEPTH`."""
    if isinstance(value, dict):
        for key, item in value.items():
            _value_problems(item, child_path(path, key), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            _value_problems(item, child_path(path, index), found)
    elif isinstance(value, _LongInteger):
        found.append(
            (path, f"integer of {len(value):,} characters is outside the 64-bit integer range", _INTEGER_HINT, None)
        )
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int):
        if not MIN_INT <= value <= MAX_INT:
            found.append((path, "integer {text} is outside the 64-bit integer range", _INTEGER_HINT, value))
    elif isinstance(value, float):
        if not math.isfinite(value):
            found.append((path, "{text} is not a finite number", _FINITE_HINT, value))
    else:
        kind = "a YAML !!set" if isinstance(value, (set, frozenset)) else type(value).__name__
        found.append((path, f"{kind} has no JSON equivalent", "Write a list (or a mapping) instead.", None))


def _locate_bad_scalar(loader: Any, root: yaml.Node, exc: Exception) -> SourceParseError:
    """The scalar whose conversion failed (an impossible date such as 2026-13-45), located by its mark."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.ScalarNode):
            construct = loader.yaml_constructors.get(node.tag)
            try:
                if construct is not None:
                    construct(loader, node)
            except (ValueError, OverflowError) as bad:
                return _error_at(
                    node.start_mark,
                    f"invalid value {node.value[:60]!r}: {bad}",
                    "Fix the value, or quote it to keep it as text.",
                )
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return SourceParseError(f"invalid value: {exc}", None, None, "Fix the value, or quote it to keep it as text.")


def parse_text(text: str, *, is_json: bool) -> Parsed:
    """Parse source text; raise :class:`SourceParseError` or :class:`DuplicateKeyError`."""
    text = text.removeprefix("\ufeff")
    if is_json:
        try:
            data = json.loads(text, parse_int=_json_int)
        except json.JSONDecodeError as exc:
            raise SourceParseError(
                f"invalid JSON: {exc.msg}",
                exc.lineno,
                exc.colno,
                "Check for a trailing comma, a missing quote or an unclosed bracket.",
            ) from None
        except RecursionError:
            raise _json_too_deep(text) from None
        if _depth(data) > MAX_DEPTH:
            raise _json_too_deep(text)
        # JSON is YAML 1.2; composing it gives line numbers for diagnostics
        try:
            root = yaml.compose(text, Loader=_Loader)
        except yaml.YAMLError:
            root = None
    else:
        try:
            _guard_yaml(text)
            loader = _Loader(text)
            try:
                root = loader.get_single_node()
                try:
                    data = loader.construct_document(root) if root is not None else None
                except (ValueError, OverflowError) as exc:
                    raise _locate_bad_scalar(loader, root, exc) from None
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
    parsed = Parsed(normalise(data), lines, numbers)
    problems: list[tuple[str, str, str, Any]] = []
    _value_problems(parsed.data, "$", problems)
    if problems:
        json_path, message, hint, value = problems[0]
        message = message.replace("{text}", parsed.text_of(json_path, value))
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more such value(s) in this file)"
        line, column = parsed.where(json_path)
        raise SourceParseError(f"{json_path}: {message}", line, column, hint)
    return parsed
