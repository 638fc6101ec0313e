"""Error envelopes: the reader answers a bad call with data an agent can act on, never a traceback.

Shape (docs/reader.md): ``{"ok": false, "error": {"code", "message", "details", "hints",
"next_action", "help_path"}}``.
"""

from __future__ import annotations

from typing import Any

#: The error codes of the design, plus INTEGRITY (a fetched file does not match its hash)
#: and NOT_EXECUTABLE (the tool has no handler: the host must run it).
ERROR_CODES = (
    "UNKNOWN_PATH",
    "NO_MATCH_IN_CATEGORY",
    "TOOL_NOT_FOUND",
    "NOT_AUTHORIZED",
    "VALIDATION_ERROR",
    "CONFLICT",
    "INTERNAL",
    "INTEGRITY",
    "NOT_EXECUTABLE",
    "UNAVAILABLE",
    "BAD_REQUEST",
)


class ReaderError(Exception):
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
        return error_envelope(self.code, self.message, details=self.details, hints=self.hints,
                              next_action=self.next_action, help_path=self.help_path)


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
            "code": code,
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
