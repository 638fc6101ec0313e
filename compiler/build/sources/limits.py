"""The structural limits every untrusted YAML or JSON source is held to, before and while it is parsed.

Nesting depth, what YAML aliases expand to, integer literals too long to convert, and values JSON
cannot carry (out-of-range integers, NaN and Infinity, sets) are each refused as a located
:class:`SourceParseError`, never a hang or a traceback. :mod:`toolcat.build.sources.parse` applies them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from ...format.errors import ToolcatError
from ...format.json_paths import child_path

# -- structural limits (documented in docs/sources.md, "Limits") -------------------------------
#: Nesting of mappings and lists in one file (the root mapping is level 1), aliases expanded.
MAX_DEPTH = 64
#: Nodes that YAML aliases may add to one document ("billion laughs" documents add billions).
MAX_ALIAS_NODES = 100_000
#: Integers must fit in 64 bits (signed or unsigned): what JSON readers in other languages hold.
MIN_INT, MAX_INT = -(2**63), 2**64 - 1
#: Integer literals longer than this are refused before Python converts them (it refuses 4,300 digits).
MAX_INT_LITERAL = 100

try:  # the C loader is much faster; the pure-Python one behaves the same
    Loader: type = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - depends on how PyYAML was built
    Loader = yaml.SafeLoader


@dataclass(frozen=True, slots=True)
class SourceParseError(ToolcatError):
    """The text is not valid YAML/JSON; line and column are 1-based when known.

    ``code`` names the kind of problem (the :class:`~toolcat.build.errors.Diagnostic` code it becomes);
    ``json_path`` is set when the place is known as a path of the data, not only as a line.
    """

    message: str
    line: int | None
    column: int | None
    hint: str
    code: str = "parse"
    json_path: str | None = None


#: What PyYAML's constructors raise for a value they cannot build (``!!int ''``, ``!!timestamp null``,
#: an impossible date): every reader of YAML turns these into a located error, not a traceback.
SCALAR_ERRORS: tuple[type[Exception], ...] = (
    ValueError,
    OverflowError,
    AttributeError,
    TypeError,
    IndexError,
    KeyError,
)


class _LongInteger(str):
    """A JSON integer literal too long to convert (Python refuses 4,300 digits); refused with its path."""

    __slots__ = ()


def json_int(text: str) -> int | _LongInteger:
    """``json.loads``'s ``parse_int``: an integer, or a :class:`_LongInteger` left unconverted when too long."""
    return _LongInteger(text) if len(text) > MAX_INT_LITERAL else int(text)


def error_at(mark: Any, message: str, hint: str, code: str = "parse") -> SourceParseError:
    """A :class:`SourceParseError` at a PyYAML mark (0-based) given 1-based."""
    return SourceParseError(message, mark.line + 1, mark.column + 1, hint, code)


def _too_deep_text(via_alias: bool = False) -> tuple[str, str]:
    what = "an alias here expands to mappings and lists" if via_alias else "mappings and lists are"
    return (
        f"{what} nested deeper than {MAX_DEPTH} levels",
        "Flatten the structure: move nested parts into $defs and point to them with $ref.",
    )


_INT_TAG = "tag:yaml.org,2002:int"
_COLLECTION_START = (yaml.SequenceStartEvent, yaml.MappingStartEvent)
_COLLECTION_END = (yaml.SequenceEndEvent, yaml.MappingEndEvent)


class YAMLSyntaxError(ToolcatError):
    """PyYAML's error while the event stream was walked, with the JSON path of the last key or value read.

    A plain class, not a frozen dataclass: raising sets ``__traceback__``, which a frozen instance refuses.
    """

    def __init__(self, error: yaml.MarkedYAMLError, json_path: str) -> None:
        super().__init__(error, json_path)
        self.error = error
        self.json_path = json_path


class _Places:
    """Where the event stream is, as a JSON path: that of the last key or value read (for located errors)."""

    def __init__(self) -> None:
        self.frames: list[list[Any]] = []  # open collections: [path, is a mapping, a key comes next, key, index]
        self.last = "$"

    def node(self, event: Any) -> None:
        """A scalar, an alias or the start of a collection: a mapping key, or a value at a new path."""
        frame = self.frames[-1] if self.frames else None
        if frame is None:
            path = "$"
        elif frame[1] and frame[2]:  # a mapping key
            frame[3] = event.value if isinstance(event, yaml.ScalarEvent) else "?"
            frame[2] = False
            path = child_path(frame[0], frame[3])
        elif frame[1]:  # a mapping value: its key is the path
            frame[2] = True
            path = child_path(frame[0], frame[3])
        else:
            path = child_path(frame[0], frame[4])
            frame[4] += 1
        self.last = path
        if isinstance(event, _COLLECTION_START):
            self.frames.append([path, isinstance(event, yaml.MappingStartEvent), True, "", 0])

    def end(self) -> None:
        """The end of the innermost collection."""
        self.frames.pop()


class _Guard:
    """The structural limits, checked event by event (:func:`guard_yaml`)."""

    def __init__(self, loader: Any) -> None:
        self.loader = loader
        self.stack: list[list[Any]] = []  # open collections: [anchor, nodes, deepest child]
        self.anchors: dict[str, tuple[int, int]] = {}  # anchor -> (nodes, depth) of what it names
        self.added = 0
        self.places = _Places()

    def error(self, mark: Any, message: str, hint: str, code: str) -> SourceParseError:
        return SourceParseError(message, mark.line + 1, mark.column + 1, hint, code, self.places.last)

    def close(self, anchor: str | None, nodes: int, depth: int) -> None:
        if anchor is not None:
            self.anchors[anchor] = (nodes, depth)
        if self.stack:
            self.stack[-1][1] += nodes
            self.stack[-1][2] = max(self.stack[-1][2], depth)

    def start(self, event: Any) -> None:
        self.places.node(event)
        if len(self.stack) >= MAX_DEPTH:
            raise self.error(event.start_mark, *_too_deep_text(), "too_deep")
        self.stack.append([event.anchor, 1, 0])

    def end(self, event: Any) -> None:
        del event
        self.places.end()
        anchor, nodes, depth = self.stack.pop()
        self.close(anchor, nodes, depth + 1)

    def scalar(self, event: Any) -> None:
        self.places.node(event)
        value = event.value
        if len(value) > MAX_INT_LITERAL and value[:1] in "+-0123456789":
            tag = event.tag
            if tag is None or tag == "!":
                tag = self.loader.resolve(yaml.ScalarNode, value, event.implicit)
            if tag == _INT_TAG:
                raise self.error(
                    event.start_mark,
                    f"integer of {len(value):,} characters is outside the 64-bit integer range",
                    _INTEGER_HINT,
                    "integer_range",
                )
        self.close(event.anchor, 1, 0)

    def alias(self, event: Any) -> None:
        self.places.node(event)
        if any(frame[0] == event.anchor for frame in self.stack):
            raise self.error(
                event.start_mark,
                f"recursive alias: *{event.anchor} is used inside its own anchor &{event.anchor}",
                "A value cannot contain itself: write the inner part out, or refer to a separate anchor.",
                "recursive_alias",
            )
        nodes, depth = self.anchors.get(event.anchor or "", (1, 0))  # undefined: the composer names it
        self.added += nodes
        if self.added > MAX_ALIAS_NODES:
            raise self.error(
                event.start_mark,
                f"YAML aliases expand this document by more than "
                f"{MAX_ALIAS_NODES:,} nodes (*{event.anchor} alone stands for {nodes:,})",
                "Aliases that nest aliases grow exponentially ('billion laughs'): write the "
                "shared part once, or use fewer '*alias' references.",
                "alias_expansion",
            )
        if len(self.stack) + depth > MAX_DEPTH:
            raise self.error(event.start_mark, *_too_deep_text(via_alias=True), "too_deep")
        self.close(None, nodes, depth)


def guard_yaml(text: str) -> None:
    """Walk the YAML event stream once, before anything is composed, enforcing the structural limits.

    libyaml's composer recurses per level (100,000 nested '[' crash the process) and PyYAML expands
    every alias (a 451-byte document can stand for billions of nodes), so nesting and alias expansion
    are measured on the flat event stream: each anchor's size and depth is known when it closes,
    and an alias adds them. Errors (its own, and PyYAML's as :class:`YAMLSyntaxError`) carry the JSON
    path of the last key or value read.
    """
    loader = Loader(text)
    guard = _Guard(loader)
    handlers = {
        yaml.MappingStartEvent: guard.start,
        yaml.SequenceStartEvent: guard.start,
        yaml.MappingEndEvent: guard.end,
        yaml.SequenceEndEvent: guard.end,
        yaml.ScalarEvent: guard.scalar,
        yaml.AliasEvent: guard.alias,
    }
    try:
        while loader.check_event():
            event = loader.get_event()
            handler = handlers.get(type(event))
            if handler is not None:
                handler(event)
    except yaml.MarkedYAMLError as exc:
        raise YAMLSyntaxError(exc, guard.places.last) from None
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


def nesting(data: Any) -> int:
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


def json_too_deep(text: str) -> SourceParseError:
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
            "too_deep",
        )
    return SourceParseError(
        f"mappings and lists are nested deeper than {MAX_DEPTH} levels",
        line,
        index - line_start + 1,
        "Flatten the structure: move nested parts into $defs and point to them with $ref.",
        "too_deep",
    )


def value_problems(value: Any, path: str, found: list[tuple[str, str, str, Any, str]]) -> None:
    """Values JSON cannot carry faithfully, as ``(json_path, message, hint, value, code)``; depth is at most :data:`MAX_DEPTH`."""
    if isinstance(value, dict):
        for key, item in value.items():
            value_problems(item, child_path(path, key), found)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            value_problems(item, child_path(path, index), found)
    elif isinstance(value, _LongInteger):
        found.append(
            (
                path,
                f"integer of {len(value):,} characters is outside the 64-bit integer range",
                _INTEGER_HINT,
                None,
                "integer_range",
            )
        )
    elif isinstance(value, bool) or value is None or isinstance(value, str):
        return
    elif isinstance(value, int):
        if not MIN_INT <= value <= MAX_INT:
            found.append(
                (path, "integer {text} is outside the 64-bit integer range", _INTEGER_HINT, value, "integer_range")
            )
    elif isinstance(value, float):
        if not math.isfinite(value):
            found.append((path, "{text} is not a finite number", _FINITE_HINT, value, "not_finite"))
    else:
        kind = "a YAML !!set" if isinstance(value, (set, frozenset)) else type(value).__name__
        found.append((path, f"{kind} has no JSON equivalent", "Write a list (or a mapping) instead.", None, "not_json"))
