"""Diagnostics and the exception tree: every problem says where, what and how to fix it."""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

import click

from ..format.errors import ToolcatError

log = logging.getLogger(__name__)


class Severity(StrEnum):
    """How bad a diagnostic is; warnings become errors under ``--strict``."""

    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem found in the sources, located as precisely as we can."""

    severity: Severity
    file: str
    message: str
    line: int | None = None
    column: int | None = None
    json_path: str | None = None
    expected: str | None = None
    got: str | None = None
    hint: str | None = None
    code: str = "invalid"

    def location(self) -> str:
        """``file:line:col`` with whatever parts are known."""
        loc = self.file
        if self.line is not None:
            loc += f":{self.line}"
            if self.column is not None:
                loc += f":{self.column}"
        return loc

    def render(self) -> str:
        """One readable block: location, severity, JSON path, message, expected/got, hint."""
        head = f"{self.location()}: {self.severity.value}"
        if self.json_path:
            head += f": {self.json_path}"
        text = f"{head}: {self.message}"
        if self.expected is not None or self.got is not None:
            text += f"\n    expected {self.expected or '?'}, got {self.got or '?'}"
        if self.hint:
            text += f"\n    hint: {self.hint}"
        return text

    def as_dict(self) -> dict[str, object]:
        """JSON-able form (for ``--json`` output and tests)."""
        return {
            "severity": self.severity.value,
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "json_path": self.json_path,
            "message": self.message,
            "expected": self.expected,
            "got": self.got,
            "hint": self.hint,
            "code": self.code,
        }


@dataclass(slots=True)
class Diagnostics:
    """A collector: stages add problems, the orchestrator aborts once at the end."""

    items: list[Diagnostic] = field(default_factory=list)

    def error(self, file: str, message: str, **kw: object) -> None:
        """Record an error."""
        self.items.append(Diagnostic(Severity.ERROR, file, message, **kw))  # type: ignore[arg-type]

    def warning(self, file: str, message: str, **kw: object) -> None:
        """Record a warning."""
        self.items.append(Diagnostic(Severity.WARNING, file, message, **kw))  # type: ignore[arg-type]

    def extend(self, other: list[Diagnostic]) -> None:
        """Add diagnostics found elsewhere (for example from a cache)."""
        self.items.extend(other)

    @property
    def errors(self) -> list[Diagnostic]:
        """Only the errors."""
        return [d for d in self.items if d.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Diagnostic]:
        """Only the warnings."""
        return [d for d in self.items if d.severity is Severity.WARNING]

    def failed(self, *, strict: bool) -> bool:
        """True when the build must stop: any error, or any warning under strict."""
        return bool(self.errors) or (strict and bool(self.warnings))

    def sorted(self) -> list[Diagnostic]:
        """Stable order: by file, line, then message."""
        return sorted(
            self.items,
            key=lambda d: (d.file, d.line or 0, d.column or 0, d.json_path or "", d.message),
        )


class CatalogError(click.ClickException, ToolcatError):
    """Root of toolcat's expected errors: the CLI prints the message and exits 1."""

    exit_code = 1


class SourceError(CatalogError):
    """The sources are invalid; carries every diagnostic found."""

    def __init__(self, diagnostics: list[Diagnostic], *, strict: bool = False) -> None:
        self.diagnostics = diagnostics
        errors = [d for d in diagnostics if d.severity is Severity.ERROR]
        warnings = [d for d in diagnostics if d.severity is Severity.WARNING]
        counted = f"{len(errors)} error(s)"
        if strict and warnings:
            counted += f" and {len(warnings)} warning(s) (--strict makes warnings fatal)"
        body = "\n".join(d.render() for d in diagnostics)
        super().__init__(f"{body}\n\nThe catalogue is invalid: {counted}. Nothing was written.")


class BuildError(CatalogError):
    """The build could not write its output (the previous build is left as it was)."""
