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

from ...format.json_paths import child_path  # one spelling of JSON paths, shared with the reader
from .limits import (
    MAX_DEPTH,
    Loader,
    SourceParseError,
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
    "DuplicateKeyError",
    "Parsed",
    "SourceFileError",
    "normalise",
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
            except (ValueError, OverflowError, AttributeError, TypeError, IndexError, KeyError) as bad:
                return error_at(
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
        # JSON is YAML 1.2; composing it gives line numbers for diagnostics
        try:
            root = yaml.compose(text, Loader=Loader)
        except yaml.YAMLError:
            root = None
    else:
        try:
            guard_yaml(text)
            loader = Loader(text)
            try:
                root = loader.get_single_node()
                try:
                    data = loader.construct_document(root) if root is not None else None
                except (
                    ValueError,
                    OverflowError,
                    AttributeError,
                    TypeError,
                    IndexError,
                    KeyError,
                ) as exc:  # !!int "", !!timestamp null
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
    value_problems(parsed.data, "$", problems)
    if problems:
        json_path, message, hint, value = problems[0]
        message = message.replace("{text}", parsed.text_of(json_path, value))
        if len(problems) > 1:
            message += f" (and {len(problems) - 1} more such value(s) in this file)"
        line, column = parsed.where(json_path)
        raise SourceParseError(f"{json_path}: {message}", line, column, hint)
    return parsed
