"""Read one YAML or JSON source file into plain data plus a JSON-path → line map.

PyYAML's C loader gives speed; composing the same text gives node marks, so every
diagnostic can name the line of the field it is about. YAML surprises are
normalised here: dates become ISO strings, CRLF is accepted, a BOM is dropped.

Sources are untrusted input (a contributor's pull request), so every file is held to
limits before and while it is parsed, whatever it says about itself: its size (below),
and its nesting, what its YAML aliases expand to, and numbers JSON cannot carry
(:mod:`toolcat.build.sources.limits`).
Each limit is a located :class:`SourceParseError`, never a hang or a traceback.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from frontmatter.default_handlers import YAMLHandler

from ...format.errors import ToolcatError
from ...format.json_paths import child_path  # one spelling of JSON paths, shared with the reader
from ..errors import Diagnostic, Severity
from .limits import (
    MAX_DEPTH,
    SCALAR_ERRORS,
    Loader,
    SourceParseError,
    YAMLSyntaxError,
    error_at,
    guard_yaml,
    json_int,
    json_too_deep,
    nesting,
    value_problems,
)

__all__ = [
    "MAX_SKILL_BYTES",
    "MAX_SKILL_MD_BYTES",
    "MAX_SKILL_RESOURCE_BYTES",
    "MAX_SOURCE_BYTES",
    "MappingError",
    "Parsed",
    "SourceFileError",
    "file_diagnostic",
    "normalise",
    "parse_bytes",
    "parse_file",
    "parse_text",
    "read_source",
    "symlink_error",
]

log = logging.getLogger(__name__)

# -- file size limits (documented in docs/sources.md, "Limits"); the structural ones are in source_limits.py --
#: Bytes of one tools file (YAML or JSON), ``_node.yaml`` or skill ``metadata.yaml``.
MAX_SOURCE_BYTES = 4 * 1024 * 1024
#: Bytes of one ``SKILL.md``.
MAX_SKILL_MD_BYTES = 1024 * 1024
#: Bytes of one file bundled with a skill (``scripts/``, ``references/``, ``assets/``, ...).
MAX_SKILL_RESOURCE_BYTES = 8 * 1024 * 1024
#: Bytes of all the files bundled with one skill together.
MAX_SKILL_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class Parsed:
    """The data of one file and where each JSON path starts (1-based line, column)."""

    data: Any
    lines: dict[str, tuple[int, int]]
    #: the source text of numeric scalars (``version: 1.10`` loads as the float 1.1)
    number_text: dict[str, str] = field(default_factory=dict)
    #: what follows the frontmatter of a Markdown file (SKILL.md), CRLF turned into LF; None for YAML and JSON
    body: str | None = None

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
class SourceFileError(ToolcatError):
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
    if "mapping values are not allowed" in problem:
        return "A value containing ': ' must be quoted, or the indentation is off by one level."
    if "could not find expected ':'" in problem:
        return "A key is missing its ':' or a multi-line string is not indented under its key."
    if "sequence entries are not allowed" in problem:
        return "A '- ' list item is indented where a mapping key was expected; align it with its siblings."
    if "found undefined alias" in problem:
        return "An '*alias' is used before its '&anchor' is defined, or a value starting with '*' needs quotes."
    return "Check the indentation and quoting around this line."


_TAB_MESSAGE = "invalid YAML: YAML does not allow tabs for indentation; use spaces"
_FLOW_HINT = (
    "Inside {...} a ',' ends the value and a ': ' starts one: quote a value that holds either "
    "({description: 'a, b'}), or write the mapping in block style, one key per line."
)


def _tab_at(text: str, mark: Any, problem: str) -> tuple[int, int] | None:
    """The 0-based (line, column) of the indentation tab a YAML error is about, if it is about one."""
    lines = text.split("\n")
    line = lines[mark.line] if mark.line < len(lines) else ""
    at_tab = line[mark.column : mark.column + 1] == "\t"
    if not at_tab and "tab" not in problem:
        return None
    indent = len(line) - len(line.lstrip(" \t"))
    column = line.find("\t", 0, indent)
    return (mark.line, column if column >= 0 else mark.column)


def _yaml_error(text: str, exc: yaml.MarkedYAMLError, json_path: str | None) -> SourceParseError:
    """A PyYAML error as one located message, with the usual causes (tabs, flow mappings) named plainly."""
    mark = exc.problem_mark or exc.context_mark
    problem = f"{exc.problem or 'invalid YAML'}"
    if exc.context:
        problem = f"{exc.context}, {problem}"
    if mark is None:
        return SourceParseError(f"invalid YAML: {problem}", None, None, _yaml_hint(problem), json_path=json_path)
    tab = _tab_at(text, mark, problem)
    if tab is not None:
        return SourceParseError(
            _TAB_MESSAGE,
            tab[0] + 1,
            tab[1] + 1,
            "Replace the tab at the start of this line with spaces (set your editor to indent with spaces).",
            "yaml_tab",
            json_path,
        )
    if "flow mapping" in problem:
        return SourceParseError(
            "invalid YAML: an unquoted ': ' or ',' inside a flow mapping {...}",
            mark.line + 1,
            mark.column + 1,
            _FLOW_HINT,
            "flow_mapping",
            json_path,
        )
    return SourceParseError(
        f"invalid YAML: {problem}", mark.line + 1, mark.column + 1, _yaml_hint(problem), json_path=json_path
    )


def _bare_flow_key(key_node: yaml.Node, value_node: yaml.Node) -> bool:
    """``{a: 1, b}``: a key with no ':' and no value, which is what an unquoted comma in a value leaves behind."""
    return (
        isinstance(value_node, yaml.ScalarNode)
        and value_node.tag == "tag:yaml.org,2002:null"
        and value_node.value == ""
        and value_node.start_mark.index == key_node.end_mark.index
    )


_MAP_TAG = "tag:yaml.org,2002:map"  # not a !!set, whose {a, b} is meant


def _mapping_problems(node: yaml.Node, path: str, found: list[SourceParseError]) -> None:
    """Duplicate keys (YAML keeps the last silently) and bare keys in flow mappings, each located."""
    if isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else ""
            child = child_path(path, key)
            line, column = key_node.start_mark.line + 1, key_node.start_mark.column + 1
            if key in seen:
                found.append(
                    SourceParseError(
                        f"duplicate key {key!r}: YAML would keep only the last value",
                        line,
                        column,
                        f"Remove or rename one of the two '{key}' keys of this mapping.",
                        "duplicate_key",
                        child,
                    )
                )
            seen.add(key)
            if node.flow_style and node.tag == _MAP_TAG and _bare_flow_key(key_node, value_node):
                found.append(
                    SourceParseError(
                        f"{key!r} is a key without a value in a flow mapping {{...}}: an unquoted ',' split a value",
                        line,
                        column,
                        _FLOW_HINT,
                        "flow_mapping",
                        child,
                    )
                )
            _mapping_problems(value_node, child, found)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _mapping_problems(item, child_path(path, index), found)


@dataclass(frozen=True, slots=True)
class MappingError(ToolcatError):
    """Mappings that do not say what the author meant: duplicate keys, keys split off by an unquoted comma."""

    errors: list[SourceParseError]


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
            except SCALAR_ERRORS as bad:
                return error_at(
                    node.start_mark,
                    f"invalid value {node.value[:60]!r}: {bad}",
                    "Fix the value, or quote it to keep it as text.",
                    "invalid_value",
                )
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in reversed(node.value) for n in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))
    return SourceParseError(f"invalid value: {exc}", None, None, "Fix the value, or quote it to keep it as text.")


def _load_json(text: str) -> tuple[Any, yaml.Node | None]:
    """JSON data, and its YAML node tree for line numbers (None when PyYAML cannot compose it)."""
    try:
        data = json.loads(text, parse_int=json_int)
    except json.JSONDecodeError as exc:
        raise SourceParseError(
            f"invalid JSON: {exc.msg}",
            exc.lineno,
            exc.colno,
            "Check for a trailing comma, a missing quote or an unclosed bracket.",
        ) from None
    except RecursionError:
        raise json_too_deep(text) from None
    if nesting(data) > MAX_DEPTH:
        raise json_too_deep(text)
    try:  # JSON is YAML 1.2; composing it gives line numbers for diagnostics
        return data, yaml.compose(text, Loader=Loader)
    except yaml.YAMLError:
        return data, None


def _load_yaml(text: str) -> tuple[Any, yaml.Node | None]:
    """YAML data and its node tree, once the text is known to be within the structural limits."""
    try:
        guard_yaml(text)
        loader = Loader(text)
        try:
            root = loader.get_single_node()
            try:
                return (loader.construct_document(root) if root is not None else None), root
            except SCALAR_ERRORS as exc:  # !!int '', !!timestamp null
                raise _locate_bad_scalar(loader, root, exc) from None
        finally:
            loader.dispose()
    except YAMLSyntaxError as exc:
        raise _yaml_error(text, exc.error, exc.json_path) from None
    except yaml.MarkedYAMLError as exc:
        raise _yaml_error(text, exc, None) from None
    except yaml.YAMLError as exc:
        raise SourceParseError(f"invalid YAML: {exc}", None, None, _yaml_hint(str(exc))) from None


def _check_values(parsed: Parsed) -> None:
    """Raise the first value JSON cannot carry (counting the others), located by its path."""
    problems: list[tuple[str, str, str, Any, str]] = []
    value_problems(parsed.data, "$", problems)
    if problems:
        json_path, message, hint, value, code = problems[0]
        message = message.replace("{text}", parsed.text_of(json_path, value))
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more such value(s) in this file)"
        line, column = parsed.where(json_path)
        raise SourceParseError(message, line, column, hint, code, json_path)


def parse_text(text: str, *, is_json: bool) -> Parsed:
    """Parse source text; raise :class:`SourceParseError` or :class:`MappingError`.

    Prefer :func:`parse_file` (or :func:`parse_bytes`): they turn every problem into the same diagnostics.
    """
    text = text.removeprefix("\ufeff")
    data, root = _load_json(text) if is_json else _load_yaml(text)
    lines: dict[str, tuple[int, int]] = {}
    numbers: dict[str, str] = {}
    if root is not None:
        found: list[SourceParseError] = []
        _mapping_problems(root, "$", found)
        if found:
            raise MappingError(found)
        _mark_lines(root, "$", lines, numbers)
    parsed = Parsed(normalise(data), lines, numbers)
    _check_values(parsed)
    return parsed


# -- one parse: every YAML, JSON and frontmatter reader of the build goes through parse_file --------


def file_diagnostic(rel: str, exc: SourceFileError) -> Diagnostic:
    """A refused file (link, not a file, over its size limit, unreadable) as an error diagnostic."""
    return Diagnostic(
        Severity.ERROR, rel, exc.message, expected=exc.expected, got=exc.got, hint=exc.hint, code=exc.code
    )


def _encoding_error(rel: str, data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    line_start = data.rfind(b"\n", 0, exc.start) + 1
    return Diagnostic(
        Severity.ERROR,
        rel,
        f"not UTF-8 text: {exc.reason} (byte 0x{data[exc.start]:02x})",
        line=data.count(b"\n", 0, exc.start) + 1,
        column=exc.start - line_start + 1,
        expected="UTF-8 text",
        got=f"byte 0x{data[exc.start]:02x} at offset {exc.start}",
        hint="Save the file as UTF-8 (most editors: 'Save with encoding', UTF-8).",
        code="encoding",
    )


def split_frontmatter(text: str) -> tuple[str, str, int] | None:
    """Frontmatter text, body, and the file line of the frontmatter's first line (python-frontmatter's split)."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---"):
        return None
    try:
        fm, body = YAMLHandler().split(text)
    except ValueError:
        return None
    # the frontmatter text keeps the newline after the opening '---' when there is one,
    # so its line n is then line n of the file
    return fm, body, 1 if fm.startswith("\n") else 2


def _no_frontmatter(rel: str, text: str) -> Diagnostic:
    name = rel.rsplit("/", 1)[-1]
    return Diagnostic(
        Severity.ERROR,
        rel,
        f"{name} must start with YAML frontmatter between '---' lines",
        line=1,
        column=1,
        code="no_frontmatter",
        expected="'---' on line 1, then name and description, then '---'",
        got=repr(text.splitlines()[0][:60]) if text.strip() else "an empty file",
        hint="Add a frontmatter block: ---\\nname: <folder name>\\ndescription: what it does and when to use it\\n---",
    )


def _diagnostic(rel: str, exc: SourceParseError, offset: int) -> Diagnostic:
    return Diagnostic(
        Severity.ERROR,
        rel,
        exc.message,
        line=None if exc.line is None else exc.line + offset - 1,
        column=exc.column,
        json_path=exc.json_path,
        hint=exc.hint,
        code=exc.code,
    )


def _shifted(parsed: Parsed, offset: int, body: str | None) -> Parsed:
    """``parsed`` with its lines counted from the top of the file (frontmatter starts on line ``offset``)."""
    if offset == 1 and body is None:
        return parsed
    lines = {path: (line + offset - 1, column) for path, (line, column) in parsed.lines.items()}
    return Parsed(parsed.data, lines, parsed.number_text, body)


def kind_of(rel: str) -> str:
    """How a source file is parsed, by its name: ``json``, ``frontmatter`` (Markdown) or ``yaml``."""
    suffix = rel.rsplit(".", 1)[-1].lower() if "." in rel else ""
    return {"json": "json", "md": "frontmatter"}.get(suffix, "yaml")


def parse_bytes(rel: str, data: bytes, kind: str | None = None) -> Parsed | list[Diagnostic]:
    """Parse a source file's bytes; every problem is a located diagnostic of ``rel``, worded the same for every kind.

    ``kind`` (``yaml``, ``json`` or ``frontmatter``) defaults to :func:`kind_of` the name. For frontmatter the
    lines are those of the whole file and :attr:`Parsed.body` holds the Markdown after it.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return [_encoding_error(rel, data, exc)]
    kind = kind or kind_of(rel)
    offset, body = 1, None
    if kind == "frontmatter":
        split = split_frontmatter(text)
        if split is None:
            return [_no_frontmatter(rel, text)]
        text, body, offset = split
    try:
        parsed = parse_text(text, is_json=kind == "json")
    except SourceParseError as exc:
        return [_diagnostic(rel, exc, offset)]
    except MappingError as exc:
        return [_diagnostic(rel, error, offset) for error in exc.errors]
    return _shifted(parsed, offset, body)


def parse_file(path: Path, limit: int, root: Path) -> Parsed | list[Diagnostic]:
    """Read (at most ``limit`` bytes, never through a link) and parse one source file under ``root``.

    The one way the build reads YAML, JSON and frontmatter: tools files, ``_node.yaml``, SKILL.md,
    ``metadata.yaml``, ``toolcat.yaml`` and eval files all get the same limits and the same diagnostics.
    """
    rel = path.relative_to(root).as_posix()
    try:
        data = read_source(path, limit, root)
    except SourceFileError as exc:
        return [file_diagnostic(rel, exc)]
    return parse_bytes(rel, data)
