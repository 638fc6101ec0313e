"""Checks of a tool's ``handler:``: python targets, http methods and URL templates, mcp commands."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...format.json_paths import child_path
from .tool_schemas import short, type_name

HTTP_METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE"}  # every OpenAPI operation method
PYTHON_TARGET = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_][\w.]*$")


def check_handler(error: Callable[..., None], handler: Any, path: str) -> dict[str, Any] | None:
    """Normalise a handler to ``{type, ...}``; None when the host runs the tool (or, after ``error(...)``, when it is bad)."""
    if handler is None:
        return None
    if isinstance(handler, str):
        handler = {"type": "python", "target": handler}
    if not isinstance(handler, dict):
        error(
            path,
            "'handler' must be a string or a mapping",
            code="wrong_type",
            expected="'package.module:function' or {type: python|http|mcp, ...}",
            got=type_name(handler),
        )
        return None
    kind = handler.get("type")
    if kind == "python":
        target = handler.get("target")
        if not isinstance(target, str) or not PYTHON_TARGET.match(target):
            error(
                child_path(path, "target"),
                "a python handler needs 'package.module:function'",
                expected="package.module:function",
                got=short(target),
                code="bad_handler",
            )
            return None
    elif kind == "http":
        method = str(handler.get("method", "POST")).upper()
        url = handler.get("url")
        if method not in HTTP_METHODS:
            error(
                child_path(path, "method"),
                "unknown HTTP method",
                expected=" | ".join(sorted(HTTP_METHODS)),
                got=short(handler.get("method")),
                code="bad_handler",
            )
            return None
        if not isinstance(url, str) or not re.match(r"^https?://", url):
            error(
                child_path(path, "url"),
                "an http handler needs an http(s) URL template",
                expected="https://host/path/{arg}",
                got=short(url),
                code="bad_handler",
            )
            return None
        handler = {**handler, "method": method}
    elif kind == "mcp":
        if not handler.get("command") and not handler.get("url"):
            error(
                path,
                "an mcp handler needs 'command' (stdio) or 'url' (streamable HTTP)",
                expected="{type: mcp, command: [...], tool: name} or {type: mcp, url: ..., tool: name}",
                got=short(handler),
                code="bad_handler",
            )
            return None
    else:
        error(
            child_path(path, "type"),
            "unknown handler type",
            expected="python | http | mcp",
            got=short(kind),
            code="bad_handler",
            hint="Leave the handler out when the host application runs the tool itself.",
        )
        return None
    return dict(handler)
