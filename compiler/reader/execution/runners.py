"""Run one tool: validate its arguments, apply schema defaults, dispatch to its handler.

Handlers are found by the spec's ``handler.type`` (:mod:`toolcat.reader.execution.handlers`: a catalogue's own,
:func:`register_handler`, then installed entry points such as ``mcp``). A handler receives an
:class:`ExecContext` and returns a JSON-able result, or raises :class:`ReaderError` (or
an ordinary exception, which :func:`map_exception` turns into an envelope code).
Arguments are checked by :mod:`toolcat.reader.execution.arguments` (re-exported here), which imports
``jsonschema`` lazily; without it a minimal check of required fields and JSON types runs and
says so in the warnings.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from ...format.envelope import ReaderError
from .handlers import register_handler
from .network import checked_request, http_static_refusal
from .policy import DEFAULT_POLICY, HOW_TO_ALLOW, HandlerPolicy, mcp_target, sandbox_scope

__all__ = [
    "HTTP_BODY_LIMIT",
    "HTTP_STATUS_CODES",
    "PLACEHOLDER",
    "ExecContext",
    "describe_run",
    "map_exception",
    "read_resource",
    "run_http",
    "run_python",
    "run_skill",
]

log = logging.getLogger(__name__)

HTTP_BODY_LIMIT = 4 * 1024 * 1024
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class ExecContext:
    """Everything a handler may need: the spec, validated args, and reader services.

    A plain class, not a dataclass: ``dataclasses`` would add milliseconds to ``import toolcat.reader``.
    """

    __slots__ = (
        "allow_python",
        "args",
        "fetch_bytes",
        "next_action",
        "policy",
        "spec",
        "timeout",
        "tool_id",
        "warnings",
    )

    def __init__(
        self,
        tool_id: str,
        spec: dict[str, Any],
        args: dict[str, Any],
        timeout: float,
        fetch_bytes: Callable[[dict[str, Any]], bytes],
        allow_python: Callable[[str], bool],
        warnings: list[str] | None = None,
        policy: HandlerPolicy | None = None,
    ) -> None:
        self.tool_id = tool_id
        self.spec = spec
        self.args = args
        self.timeout = timeout
        self.fetch_bytes = fetch_bytes
        self.allow_python = allow_python
        self.warnings = warnings if warnings is not None else []
        #: What the host lets handlers run and reach, and the file.* sandbox (:mod:`toolcat.reader.execution.network`).
        self.policy = policy if policy is not None else DEFAULT_POLICY
        #: The call a handler suggests next (an abstract op, rendered in the caller's dialect), or None.
        self.next_action: dict[str, Any] | None = None

    @property
    def handler(self) -> dict[str, Any]:
        """The spec's handler mapping (never None inside a handler)."""
        handler = self.spec.get("handler")
        return handler if isinstance(handler, dict) else {}


# -- exceptions from handlers ----------------------------------------------------------------
def map_exception(exc: BaseException, tool_id: str) -> ReaderError:
    """An exception raised by a handler as a ReaderError: a code the agent can act on, no traceback."""
    message = str(exc) or type(exc).__name__
    if isinstance(exc, ReaderError):
        if exc.help_path == "root":  # raised by a handler that does not know its tool's name
            exc.help_path = tool_id
        return exc
    if isinstance(exc, PermissionError):
        return ReaderError(
            "NOT_AUTHORIZED",
            message,
            help_path=tool_id,
            hints=["The tool refused the operation (for example a path outside its sandbox)."],
        )
    if isinstance(exc, FileExistsError):
        return ReaderError(
            "CONFLICT",
            message,
            help_path=tool_id,
            hints=["It already exists: pick another name, or the tool's argument that replaces it (see tool_help)."],
        )
    if isinstance(exc, (FileNotFoundError, LookupError)):
        return ReaderError(
            "NOT_FOUND",
            message,
            help_path=tool_id,
            hints=["Check the identifier or path; list or search for what exists first."],
        )
    if isinstance(exc, (ValueError, TypeError, IsADirectoryError, NotADirectoryError)):
        return ReaderError(
            "VALIDATION_ERROR",
            message,
            help_path=tool_id,
            details={"field_errors": [], "exception": type(exc).__name__},
            next_action={"op": "help", "args": {"path": tool_id}},
        )
    if isinstance(exc, TimeoutError):
        return ReaderError("UNAVAILABLE", f"the tool timed out: {message}", help_path=tool_id)
    return ReaderError(
        "INTERNAL", f"{type(exc).__name__}: {message}", help_path=tool_id, details={"exception": type(exc).__name__}
    )


# -- handlers ---------------------------------------------------------------------------------
def run_python(ctx: ExecContext) -> Any:
    """Call ``package.module:function`` with the validated args dict."""
    target = ctx.handler.get("target")
    if not isinstance(target, str) or ":" not in target:
        raise ReaderError(
            "NOT_EXECUTABLE", f"python handler of {ctx.tool_id} has no 'module:function' target", help_path=ctx.tool_id
        )
    module_name, _, attr = target.partition(":")
    if not ctx.allow_python(module_name):
        raise ctx.policy.refusal(ctx.tool_id, {"type": "python", "target": target}) or ReaderError(
            "NOT_AUTHORIZED",
            f"{ctx.tool_id}: the host does not allow python handlers from module {module_name!r}",
            help_path=ctx.tool_id,
            details={"handler": "python", "target": module_name},
            hints=[f"The host allows it with {HOW_TO_ALLOW['python']}."],
        )
    try:
        obj: Any = importlib.import_module(module_name)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"cannot load python handler {target!r} of {ctx.tool_id}: {exc}",
            help_path=ctx.tool_id,
            details={"target": target},
            hints=["Install the package that provides the handler in the host's environment."],
        ) from None
    if not callable(obj):
        raise ReaderError("NOT_EXECUTABLE", f"python handler {target!r} is not callable", help_path=ctx.tool_id)
    try:
        with sandbox_scope(ctx.policy.sandbox):  # handlers.sandbox_root() reads it
            return obj(ctx.args)
    except Exception as exc:
        log.debug("python handler %s raised", target, exc_info=True)
        raise map_exception(exc, ctx.tool_id) from None


HTTP_STATUS_CODES = {
    400: "VALIDATION_ERROR",
    401: "NOT_AUTHORIZED",
    403: "NOT_AUTHORIZED",
    404: "NOT_FOUND",
    409: "CONFLICT",
    422: "VALIDATION_ERROR",
    429: "UNAVAILABLE",
}


def sent_args(args: dict[str, Any], handler: dict[str, Any]) -> dict[str, Any]:
    """The arguments an http handler sends: the agent's, with the schema's defaults filled in (001 §9.1).

    Defaults reach the request like any argument (path, query, header, body) and show in a dry run. A handler
    that leaves them to the server says ``send_defaults: false`` (or lists the defaulted names to send); a
    default the URL path needs (``{calendar_id}``) is sent all the same, or the URL could not be built.
    """
    defaulted: frozenset[str] = getattr(args, "defaulted", frozenset())
    wanted = handler.get("send_defaults", True)
    if not defaulted or wanted is True:
        return dict(args)
    keep = {str(n) for n in wanted} if isinstance(wanted, list) else set()
    keep |= set(PLACEHOLDER.findall(str(handler.get("url", ""))))
    params = handler.get("params")
    if isinstance(params, dict):
        keep |= {str(n) for n, p in params.items() if isinstance(p, dict) and p.get("in") == "path"}
    return {k: v for k, v in args.items() if k not in defaulted or k in keep}


def _http_request(ctx: ExecContext, *, reveal_secrets: bool = True) -> tuple[str, str, bytes | None, dict[str, str]]:
    from urllib.parse import quote, urlencode  # noqa: PLC0415 - stdlib, imported on first use

    from .http_handler import build_request, check_headers, checked_segment, is_extended, set_user_agent  # noqa: PLC0415 - loaded on the one path that needs it

    handler = ctx.handler
    args = sent_args(ctx.args, handler)
    if is_extended(handler):  # params / body / auth: the OpenAPI form (docs/reader.md, "http handler")
        target = str(handler.get("url", ""))
        return build_request(
            ctx.tool_id,
            handler,
            args,
            reveal_secrets=reveal_secrets,
            allow_secret=lambda env: ctx.policy.allows_secret(target, env),
        )
    method = str(handler.get("method", "POST")).upper()
    url = handler.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise ReaderError("NOT_EXECUTABLE", f"http handler of {ctx.tool_id} has no http(s) URL", help_path=ctx.tool_id)
    rest = args
    missing = [name for name in PLACEHOLDER.findall(url) if name not in rest]
    if missing:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"the URL of {ctx.tool_id} needs {', '.join(missing)}",
            help_path=ctx.tool_id,
            details={
                "field_errors": [
                    {"field": m, "message": f"'{m}' is required by the URL", "expected": "present"} for m in missing
                ]
            },
        )

    def fill(match: re.Match[str]) -> str:
        value = rest.pop(match.group(1))
        return checked_segment(
            ctx.tool_id, match.group(1), quote(value if isinstance(value, str) else json.dumps(value), safe="")
        )

    url = PLACEHOLDER.sub(fill, url)
    headers = {str(k): str(v) for k, v in (handler.get("headers") or {}).items()}
    body: bytes | None = None
    if method in ("GET", "DELETE", "HEAD"):
        if rest:
            pairs = [(k, v if isinstance(v, str) else json.dumps(v)) for k, v in sorted(rest.items())]
            url += ("&" if "?" in url else "?") + urlencode(pairs)
    else:
        body = json.dumps(rest, ensure_ascii=False).encode("utf-8")
        headers.setdefault("Content-Type", "application/json")
    headers.setdefault("Accept", "application/json")
    set_user_agent(headers, handler)
    check_headers(ctx.tool_id, headers, {})
    return method, url, body, headers


def _decode(body: bytes, content_type: str) -> Any:
    if not body:  # 204 No Content, or a 2xx with an empty body: an empty result, not {"text": ""}
        return None
    text = body.decode("utf-8", errors="replace")
    if "json" in content_type or text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            pass
    return {"text": text}


def run_http(ctx: ExecContext) -> Any:
    """Fill the URL template, send args as query (GET/DELETE) or JSON body, return the decoded response.

    The request goes through :func:`toolcat.reader.execution.network.checked_request`: an allowed host, public
    addresses only (unless the host lists the host:port), no redirects, ``timeout`` for the whole call.
    Envelopes name the method and URL without its query, never a header value.
    """
    import http.client  # noqa: PLC0415 - stdlib, imported on first use

    method, url, body, headers = _http_request(ctx)
    shown = f"{method} {url.split('?', 1)[0]}"
    try:
        status, response_headers, data = checked_request(
            ctx.tool_id, method, url, body, headers, timeout=ctx.timeout, limit=HTTP_BODY_LIMIT, policy=ctx.policy
        )
    except ReaderError:
        raise
    except (TimeoutError, OSError, http.client.HTTPException) as exc:
        reason = type(exc).__name__ if isinstance(exc, http.client.HTTPException) else str(exc) or type(exc).__name__
        raise ReaderError(
            "UNAVAILABLE",
            f"{shown} failed: {reason}",
            help_path=ctx.tool_id,
            details={"timeout_s": ctx.timeout},
            hints=["The endpoint is down or slow; retry later."],
        ) from None
    except ValueError:  # http.client refuses a method or header with control characters; the value may be secret
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"the http handler of {ctx.tool_id} has a method or header that cannot be sent (control characters)",
            help_path=ctx.tool_id,
            hints=["This is a catalogue bug; fix the handler's method and headers."],
        ) from None
    if len(data) > HTTP_BODY_LIMIT:
        raise ReaderError(
            "INTERNAL", f"the response of {ctx.tool_id} exceeds {HTTP_BODY_LIMIT} bytes", help_path=ctx.tool_id
        )
    content_type = response_headers.get("content-type", "")
    if 300 <= status < 400:
        raise ReaderError(
            "UNAVAILABLE",
            f"{shown} answered HTTP {status} (a redirect); http handlers do not follow redirects",
            help_path=ctx.tool_id,
            details={"status": status, "location": response_headers.get("location")},
            hints=["The endpoint moved: the catalogue's handler URL must name the final address."],
        )
    if status >= 400:
        code = HTTP_STATUS_CODES.get(status, "UNAVAILABLE" if status >= 500 else "INTERNAL")
        raise ReaderError(
            code,
            f"{shown} answered HTTP {status}",
            help_path=ctx.tool_id,
            details={"status": status, "body": _decode(data, content_type)},
        )
    return _decode(data, content_type)


def run_skill(ctx: ExecContext) -> Any:
    """A task: a skill's or agent's instructions with its arguments, one bundled file, or ``task.list``.

    With ``resource``, one bundled file (level 3). Otherwise the task to carry out: the SKILL.md or
    AGENT.md body (level 2) as ``instructions``, the declared ``arguments`` the call gave (defaults
    filled) and, apart, every other argument as ``context``. A generated ``task.list`` answers its rows.
    """
    tasks = ctx.handler.get("tasks")
    if isinstance(tasks, list):
        return _task_list(ctx, tasks)
    skill = ctx.spec.get("skill")
    if not isinstance(skill, dict):
        raise ReaderError(
            "NOT_EXECUTABLE", f"{ctx.tool_id} has a skill handler but no skill section", help_path=ctx.tool_id
        )
    resource = ctx.args.get("resource")
    if resource is not None:
        return read_resource(ctx.tool_id, skill, resource, ctx.fetch_bytes)
    _check_required(ctx)
    declared = (ctx.spec.get("args_schema") or {}).get("properties") or {}
    given = {k: v for k, v in ctx.args.items() if k in declared and k != "resource"}
    context = {k: v for k, v in ctx.args.items() if k not in declared}
    out: dict[str, Any] = {
        "task": ctx.tool_id,
        "type": ctx.spec.get("type", "skill"),
        "name": skill.get("name"),
        "instructions": ctx.fetch_bytes(skill["body"]).decode("utf-8", errors="replace"),
    }
    if given:
        out["arguments"] = given
    if context:
        out["context"] = context
    if out["type"] == "agent":  # what a host's sub-agent runner is started with
        model = (skill.get("frontmatter") or {}).get("metadata", {}).get("model")
        out.update({k: v for k, v in (("tools", ctx.spec.get("tools")), ("model", model)) if v})
    resources = [r.get("path") for r in skill.get("resources", [])]
    if resources:
        out["resources"] = resources
    return out


def _check_required(ctx: ExecContext) -> None:
    """VALIDATION_ERROR naming every required task argument the call left out (a resource read needs none)."""
    missing = [str(n) for n in ctx.handler.get("requires") or [] if n not in ctx.args]
    if missing:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"{ctx.tool_id} needs {', '.join(missing)} to run the task",
            help_path=ctx.tool_id,
            details={
                "field_errors": [
                    {"field": m, "message": f"'{m}' is required to run the task", "expected": "present"}
                    for m in missing
                ]
            },
            hints=["Give every required argument; the task's description says what each one means."],
            next_action={"op": "describe", "args": {"tool_id": ctx.tool_id}},
        )


def _task_list(ctx: ExecContext, tasks: list[Any]) -> dict[str, Any]:
    """``task.list``: every task's row as the build wrote it; the next step describes the first task."""
    rows = [row for row in tasks if isinstance(row, dict) and isinstance(row.get("task"), str)]
    if rows:
        ctx.next_action = {"op": "describe", "args": {"tool_id": rows[0]["task"]}}
    return {"tasks": rows, "count": len(rows)}


def read_resource(
    tool_id: str, skill: dict[str, Any], resource: Any, fetch_bytes: Callable[[dict[str, Any]], bytes]
) -> dict[str, Any]:
    """One bundled file of a skill: text when it decodes as UTF-8, else base64."""
    import base64  # noqa: PLC0415 - stdlib, imported on first use
    import difflib  # noqa: PLC0415 - stdlib, imported on first use

    resources = {r.get("path"): r for r in skill.get("resources", []) if isinstance(r, dict)}
    if not isinstance(resource, str) or resource not in resources:
        names = sorted(str(p) for p in resources)
        close = difflib.get_close_matches(str(resource), names, n=3, cutoff=0.3)
        raise ReaderError(
            "UNKNOWN_PATH",
            f"{tool_id} has no resource {resource!r}",
            help_path=tool_id,
            details={"resources": names, "suggestions": close},
            hints=[f"Resources of this skill: {', '.join(names) or 'none'}."],
            next_action=(
                {"op": "read_resource", "args": {"tool_id": tool_id, "path": close[0]}}
                if close
                else {"op": "describe", "args": {"tool_id": tool_id}}
            ),
        )
    entry = resources[resource]
    data = fetch_bytes(entry["ref"])
    out: dict[str, Any] = {
        "tool_id": tool_id,
        "skill": skill.get("name"),
        "level": 3,
        "path": resource,
        "media_type": entry.get("media_type"),
        "bytes": len(data),
    }
    try:
        out["content"] = data.decode("utf-8")
    except UnicodeDecodeError:
        out["content_base64"] = base64.b64encode(data).decode("ascii")
    return out


register_handler("python", run_python)
register_handler("http", run_http)
register_handler("skill", run_skill)


def describe_run(spec: dict[str, Any], args: dict[str, Any], policy: HandlerPolicy | None = None) -> dict[str, Any]:
    """What a dry run would do: the handler kind and target with the validated args, and whether the host allows it.

    Nothing runs and no host name is resolved. A handler the host does not allow is described by
    its refusal only (``allowed: false``); header and env values are never shown.
    """
    handler = spec.get("handler")
    if not isinstance(handler, dict):
        return {"handler": None, "args": args, "note": "no handler: the host application runs this tool"}
    policy = policy if policy is not None else DEFAULT_POLICY
    tool_id = str(spec.get("tool_id"))
    kind = handler.get("type")
    plan: dict[str, Any] = {"handler": kind, "args": args, "allowed": True}
    refusal = policy.refusal(tool_id, handler)
    if kind == "http" and refusal is None:
        ctx = ExecContext(tool_id, spec, args, 0.0, lambda _r: b"", policy.allows_python, policy=policy)
        method, url, body, headers = _http_request(ctx, reveal_secrets=False)
        refusal = http_static_refusal(tool_id, url, policy)
        if refusal is None:
            from .http_handler import shown_body  # noqa: PLC0415 - loaded on the one path that needs it

            plan.update(
                method=method,
                url=url,
                body=shown_body(body, headers),
                headers=sorted(headers),
                note="the host name's addresses are checked when the call runs",
            )
    if refusal is not None:
        plan.update(allowed=False, refusal={"code": refusal.code, "message": refusal.message, "hints": refusal.hints})
    elif kind == "python":
        plan["target"] = handler.get("target")
    elif kind == "mcp":
        plan.update(server=mcp_target(handler), tool=handler.get("tool"))
    elif kind == "skill":
        plan["reads"] = "the task list" if "tasks" in handler else args.get("resource") or "the instructions"
    return plan
