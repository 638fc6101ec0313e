"""The frontmatter of a Markdown entry, as skills and agents share it: read once, located, checked field by field.

Both entry kinds are a Markdown file with YAML frontmatter (``SKILL.md``; ``AGENT.md`` or ``agents/<name>.md``):

* :func:`read_frontmatter` reads the file once under its size limit and parses it (:func:`.parse.parse_bytes`);
* :class:`FrontmatterChecker` records each problem as a diagnostic located in the file that holds the key
  (``SKILL.md``, or the ``metadata.yaml`` beside it) and checks the fields both kinds have: a required text
  (``name``), the ``description`` and its length;
* :func:`first_sentence` is the one-line summary both kinds' records carry.

What differs stays with each kind: :mod:`.skills` checks the Agent Skills fields (the name against its folder,
``compatibility``, ``metadata``, ``allowed-tools``), :mod:`.agents` the sub-agent fields (``model``, ``tools``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from ...format.names import RULES
from ..errors import Diagnostic, Severity
from .parse import MAX_SKILL_MD_BYTES, Parsed, SourceFileError, file_diagnostic, parse_bytes, read_source

__all__ = ["MAX_DESCRIPTION", "Frontmatter", "FrontmatterChecker", "first_sentence", "read_frontmatter"]

#: The longest description the Agent Skills specification allows (agents keep to it too).
MAX_DESCRIPTION = 1024


def first_sentence(text: str, limit: int = 160) -> str:
    """The first sentence of ``text`` on one line, cut to ``limit`` characters (with an ellipsis)."""
    flat = " ".join(text.split())
    match = re.search(r"(?<=[.!?])\s", flat)
    sentence = flat[: match.start()] if match else flat
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


def _top_key(json_path: str) -> str | None:
    """``$.metadata.author`` → ``metadata``; ``$["odd key"]`` → ``odd key``; ``$`` → None."""
    rest = json_path[1:]
    if rest.startswith("."):
        return re.split(r"[.\[]", rest[1:], maxsplit=1)[0]
    if rest.startswith('["'):
        end = rest.find('"]')
        return rest[2:end] if end > 0 else None
    return None


class FrontmatterChecker:
    """Records an entry's diagnostics, each located at the file and line that hold its JSON path."""

    def __init__(self, rel: str, parsed: Parsed | None, diagnostics: list[Diagnostic]) -> None:
        self.rel = rel
        self.parsed = parsed  # lines counted from the top of the file
        self.diagnostics = diagnostics
        #: metadata.yaml's checker and the top-level keys only it holds: their diagnostics are located there
        self.beside: tuple[FrontmatterChecker, frozenset[str]] | None = None

    def _owner(self, json_path: str) -> FrontmatterChecker:
        if self.beside is not None and _top_key(json_path) in self.beside[1]:
            return self.beside[0]
        return self

    def locate(self, json_path: str) -> tuple[str, int | None]:
        """The file (SKILL.md or metadata.yaml) and line that hold ``json_path``."""
        owner = self._owner(json_path)
        line = owner.parsed.where(json_path)[0] if owner.parsed is not None else None
        return owner.rel, line

    def text_of(self, json_path: str, value: Any) -> str:
        """A scalar as written, read from the file that holds it."""
        owner = self._owner(json_path)
        return owner.parsed.text_of(json_path, value) if owner.parsed is not None else str(value)

    def add(self, severity: Severity, json_path: str, message: str, **kw: Any) -> None:
        """Record one diagnostic at ``json_path`` (keyword fields as :class:`~toolcat.build.errors.Diagnostic`'s)."""
        owner = self._owner(json_path)
        if owner is not self:
            owner.add(severity, json_path, message, **kw)
            return
        line, column = self.parsed.where(json_path) if self.parsed is not None else (None, None)
        self.diagnostics.append(
            Diagnostic(severity, self.rel, message, line=line, column=column, json_path=json_path, **kw)
        )

    def error_count(self) -> int:
        """How many errors the entry has so far (its record is made only when checking added none)."""
        return sum(1 for d in self.diagnostics if d.severity is Severity.ERROR)

    # -- the fields both kinds have ----------------------------------------------------------------------------

    def required_text(self, meta: dict[str, Any], key: str, expected: str, hint: str | None = None) -> str:
        """``meta[key]`` when it is a non-blank string, else ``""`` after a ``missing_field`` error."""
        value = meta.get(key)
        if isinstance(value, str) and value.strip():
            return value
        self.add(
            Severity.ERROR,
            f"$.{key}" if key in meta else "$",
            f"missing or empty '{key}'",
            expected=expected,
            got=repr(value),
            code="missing_field",
            hint=hint,
        )
        return ""

    def description(self, meta: dict[str, Any], expected: str, where_detail_goes: str) -> str:
        """``description`` as written: required, at most :data:`MAX_DESCRIPTION` characters."""
        description = self.required_text(meta, "description", expected)
        hint = f"Move detail into {where_detail_goes}; keep the description to what and when."
        self.length("description", description, MAX_DESCRIPTION, hint)
        return description

    def length(self, key: str, text: str, limit: int, hint: str | None = None) -> None:
        """A ``<key>_length`` error when the top-level field ``key`` is over ``limit`` characters."""
        if len(text) > limit:
            self.add(
                Severity.ERROR,
                f"$.{key}",
                f"{key} is {len(text)} characters, over {limit}",
                code=f"{key}_length",
                hint=hint,
            )

    def not_a_string(self, key: str, value: Any, severity: Severity = Severity.ERROR) -> None:
        """The top-level field ``key`` holds ``value``, which is no string (a warning where it is read as text)."""
        verb = "must" if severity is Severity.ERROR else "should"
        self.add(severity, f"$.{key}", f"{key} {verb} be a string", got=type(value).__name__, code="wrong_type")

    def bad_name(self, name: str, message: str, hint: str) -> None:
        """A ``bad_skill_name`` error: ``name`` breaks the one naming rule of skills and agents (format/names.py)."""
        self.add(
            Severity.ERROR,
            "$.name",
            message,
            expected=RULES["skill name"],
            got=repr(name),
            code="bad_skill_name",
            hint=hint,
        )

    def name_matches(self, name: str, expected: str, place: str, hint: str) -> None:
        """A ``name_folder_mismatch`` error when ``name`` is not ``expected``, the name of its ``place``."""
        if name != expected:
            self.add(
                Severity.ERROR,
                "$.name",
                f"name {name!r} differs from its {place} {expected!r}",
                expected=repr(expected),
                got=repr(name),
                code="name_folder_mismatch",
                hint=hint,
            )


class Frontmatter(NamedTuple):
    """A Markdown entry as read: its frontmatter mapping, body, checker and bytes."""

    meta: dict[str, Any]
    body: str
    checker: FrontmatterChecker
    #: the file exactly as its author wrote it (line endings, comments, key order)
    raw: bytes


def read_frontmatter(root: Path, file: Path, diagnostics: list[Diagnostic]) -> Frontmatter | None:
    """A Markdown entry's frontmatter mapping, its body, a checker locating diagnostics in ``file``, and its bytes.

    The bytes are the file exactly as its author wrote it (line endings, comments, key order): the build stores
    them for hosts that serve the file itself (the Skills extension's ``SKILL.md``).
    None when the file is refused or its frontmatter is not a mapping (the diagnostics are in ``diagnostics``).
    SKILL.md and AGENT.md are read the same way: read once under the same limit, parsed by :func:`parse_bytes`.
    """
    rel = file.relative_to(root).as_posix()
    try:
        raw = read_source(file, MAX_SKILL_MD_BYTES, root)
    except SourceFileError as exc:
        diagnostics.append(file_diagnostic(rel, exc))
        return None
    parsed = parse_bytes(rel, raw)
    if isinstance(parsed, list):
        diagnostics.extend(parsed)
        return None
    checker = FrontmatterChecker(rel, parsed, diagnostics)
    if not isinstance(parsed.data, dict):
        checker.add(
            Severity.ERROR,
            "$",
            "frontmatter must be a YAML mapping",
            expected="name: ..., description: ...",
            got=type(parsed.data).__name__,
            code="wrong_type",
        )
        return None
    return Frontmatter(parsed.data, parsed.body or "", checker, raw)
