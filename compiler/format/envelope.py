"""Error envelopes: the reader answers a bad call with data an agent can act on, never a traceback.

Shape (docs/reader.md): ``{"ok": false, "error": {"code", "message", "details", "hints",
"next_action", "help_path"}}``.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from .errors import ToolcatError


class ErrorCode(StrEnum):
    """Every code an envelope can carry (docs/reader.md, "Errors"); members compare equal to their strings."""

    UNKNOWN_PATH = "UNKNOWN_PATH"  # no node or group at that path
    NO_MATCH_IN_CATEGORY = "NO_MATCH_IN_CATEGORY"  # a scoped search found nothing there
    TOOL_NOT_FOUND = "TOOL_NOT_FOUND"  # no tool by that id or alias
    NOT_AUTHORIZED = "NOT_AUTHORIZED"  # policy, trust or sandbox refused the call
    PERMISSION_DENIED = "PERMISSION_DENIED"  # a write tool called in a read-only session (001's code)
    VALIDATION_ERROR = "VALIDATION_ERROR"  # the arguments do not match the tool's schema
    CONFLICT = "CONFLICT"  # an idempotency key reused for another call, or the tool's own conflict
    INTERNAL = "INTERNAL"  # a bug, in toolcat or in a handler
    INTEGRITY = "INTEGRITY"  # a fetched file does not match its hash, or is not what a build writes
    NOT_EXECUTABLE = "NOT_EXECUTABLE"  # the tool has no handler this reader can run: the host must run it
    UNAVAILABLE = "UNAVAILABLE"  # the host, or the tool's endpoint, failed or timed out: retry later
    BAD_REQUEST = "BAD_REQUEST"  # a malformed call: wrong types, a bad cursor or mode
    NOT_FOUND = "NOT_FOUND"  # a handler's own "no such thing" (a file, a task)
    UPSTREAM_ERROR = "UPSTREAM_ERROR"  # an upstream MCP server answered its tool call with an error
    IN_PROGRESS = "IN_PROGRESS"  # a call with this idempotency_key is still running elsewhere: retry it later


#: The codes as plain strings, for membership tests.
ERROR_CODES: tuple[str, ...] = tuple(code.value for code in ErrorCode)


class ReaderError(ToolcatError):
    """Raised inside the reader; the public operations turn it into an envelope."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        details: dict[str, Any] | None = None,
        hints: list[str] | None = None,
        next_action: dict[str, Any] | None = None,
        help_path: str = "root",
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details or {}
        self.hints = hints or []
        self.next_action = next_action
        self.help_path = help_path

    def envelope(self) -> dict[str, Any]:
        """This error as an envelope."""
        return error_envelope(
            self.code,
            self.message,
            details=self.details,
            hints=self.hints,
            next_action=self.next_action,
            help_path=self.help_path,
        )


def error_envelope(
    code: str,
    message: str,
    *,
    details: dict[str, Any] | None = None,
    hints: list[str] | None = None,
    next_action: dict[str, Any] | None = None,
    help_path: str = "root",
) -> dict[str, Any]:
    """Build ``{"ok": false, "error": {...}}``; ``next_action`` is a call the agent can make next."""
    return {
        "ok": False,
        "error": {
            "code": str(code),
            "message": message,
            "details": details or {},
            "hints": list(hints or []),
            "next_action": next_action,
            "help_path": help_path,
        },
    }


def is_error(result: Any) -> bool:
    """True for an error envelope."""
    return isinstance(result, dict) and result.get("ok") is False and isinstance(result.get("error"), dict)
