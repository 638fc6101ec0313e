"""Checks of a tool's ``handler:``: python targets, http methods, URL templates and headers, mcp commands, secrets.

A catalogue is published, so no handler may hold a secret: ``env`` and ``headers`` values that
look like credentials are errors that say how to reference them by name (``${NAME}``, or an http
handler's ``auth: {type, env}``), and never show the value. Framing and hop-by-hop headers
(``Host``, ``Content-Length``, ``Transfer-Encoding`` ...) and control characters in header values
are errors too (:mod:`toolcat.format.http_headers`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ...format.http_headers import has_control, header_name_problem
from ...format.json_paths import child_path
from ...format.secrets import looks_like_secret
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
        if not _headers_ok(error, handler, path):
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
    if not _no_literal_secrets(error, handler, path):
        return None
    return dict(handler)


def _headers_ok(error: Callable[..., None], handler: dict[str, Any], path: str) -> bool:
    """False (after ``error(...)``) when a static header or a header parameter may not be sent."""
    headers = handler.get("headers") or {}
    params = handler.get("params") or {}
    named: list[tuple[str, str, Any]] = []
    if isinstance(headers, dict):
        named += [(child_path(child_path(path, "headers"), str(k)), str(k), v) for k, v in headers.items()]
    if isinstance(params, dict):
        named += [
            (child_path(child_path(path, "params"), str(arg)), str(spec.get("name") or arg), None)
            for arg, spec in params.items()
            if isinstance(spec, dict) and spec.get("in") == "header"
        ]
    for where, name, value in named:
        problem = header_name_problem(name)
        if problem is None and isinstance(value, str) and has_control(value):
            problem = "has a value with a control character (CR, LF, NUL, tab ...)"
        if problem is not None:
            error(
                where,
                f"header {name[:60]!r} {problem}",
                code="bad_handler",
                expected="an ordinary request header",
                got=name[:60],
                hint="Remove it: the HTTP client sets framing headers itself, and a value cannot span lines.",
            )
            return False
    return True


def _no_literal_secrets(error: Callable[..., None], handler: dict[str, Any], path: str) -> bool:
    """False (after ``error(...)``) when an ``env`` or ``headers`` value looks like a literal secret (never shown)."""
    for field in ("env", "headers"):
        values = handler.get(field)
        if not isinstance(values, dict):
            continue
        for key, value in values.items():
            if not looks_like_secret(str(key), value):
                continue
            name = "".join(c if c.isalnum() else "_" for c in str(key)).upper() or "SECRET"
            hint = (
                f'Reference it by name: {key}: "${{{name}}}" (the host sets {name} when the tool runs).'
                if field == "env"
                else f"Use auth: {{type: bearer|basic|apiKey, env: {name}}}: the reader reads the secret from "
                f"${name} when the call is made."
            )
            error(
                child_path(child_path(path, field), str(key)),
                "holds a literal value that looks like a secret; catalogues are published, so secrets are "
                "referenced by name",
                code="literal_secret",
                expected="${NAME}, a reference to an environment variable",
                got="a literal value (not shown)",
                hint=hint,
            )
            return False
    return True
