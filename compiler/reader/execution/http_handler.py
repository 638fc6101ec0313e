"""The request an ``http`` handler sends, built from its spec and the call's arguments (stdlib only).

The handler fields (docs/reader.md, "http handler"): ``method``; ``url``, a template whose
``{arg}`` s are path parameters; ``params``: ``{arg: {in: path|query|header|cookie, name?,
style?, explode?, allowReserved?}}``, serialised as OpenAPI says (form, spaceDelimited,
pipeDelimited and deepObject in the query; simple, label and matrix in the path; simple in
headers; form in cookies); ``body``: ``{encoding: json|form|multipart|raw:<media type>,
arg?, media?}``, where the body is the value of ``arg`` or else an object of every argument
that is not a parameter; ``auth``: ``{type: bearer|basic|apiKey, env, in?, name?,
optional?}``, whose secret is read from the environment variable ``env`` when the call is
made, so a catalogue never holds it. A handler with none of ``params``, ``body`` and
``auth`` keeps the original rule: remaining arguments go in the query string for
GET/DELETE/HEAD and as a JSON body otherwise.

What reaches the wire is checked (docs/security.md, "The http request builder"): no framing or
hop-by-hop header (``Host``, ``Content-Length``, ``Transfer-Encoding`` ...) from a handler, a
spec or an agent; no control character in a header value or a cookie; path parameters are
always percent-encoded (``allowReserved`` applies to the query only) and may not be ``.``,
``..`` or empty, so an agent cannot reach another path. Every request carries
``User-Agent: toolcat/<version>`` unless the handler names its own ``user_agent``.
"""

from __future__ import annotations

import base64
import json
import re
import uuid
from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import quote

from ...engines.schemaguard import MAX_ARGS_DEPTH
from ...format import settings
from ...format.envelope import ReaderError
from ...format.http_headers import has_control, header_name_problem
from ...format.json_paths import too_deep
from ...format.version import __version__

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
DEFAULT_STYLE = {
    "query": ("form", True),
    "cookie": ("form", True),
    "path": ("simple", False),
    "header": ("simple", False),
}
QUERY_DELIMITERS = {"form": ",", "spaceDelimited": "%20", "pipeDelimited": "|"}
#: Shown instead of a secret wherever a request is described rather than sent.
SECRET_SHOWN = "<from ${env}>"  # noqa: S105 - a placeholder, not a secret
EXTENDED_KEYS = ("params", "body", "auth")
#: The User-Agent of every http handler request unless the handler names its own ``user_agent``.
USER_AGENT = f"toolcat/{__version__}"
#: Path parameter texts that would change which path is called.
DOT_SEGMENTS = frozenset({"", ".", ".."})


def is_extended(handler: Mapping[str, Any]) -> bool:
    """True when the handler uses the OpenAPI fields (``params``, ``body``, ``auth``)."""
    return any(key in handler for key in EXTENDED_KEYS)


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _enc(value: Any, *, reserved: bool = False) -> str:
    return quote(_text(value), safe=":/?#[]@!$&'()*+,;=" if reserved else "")


def _style(spec: Mapping[str, Any], location: str) -> tuple[str, bool]:
    default_style, default_explode = DEFAULT_STYLE[location]
    style = str(spec.get("style") or default_style)
    explode = spec.get("explode")
    return style, bool(explode) if explode is not None else (
        default_explode if style == default_style else style == "form"
    )


def query_pairs(name: str, value: Any, spec: Mapping[str, Any]) -> list[str]:
    """``name=value`` items of a query string (already percent-encoded) for one parameter."""
    style, explode = _style(spec, "query")
    reserved = spec.get("allowReserved") is True
    key = _enc(name)
    if isinstance(value, list):
        if explode and style == "form":
            return [f"{key}={_enc(v, reserved=reserved)}" for v in value]
        delimiter = QUERY_DELIMITERS.get(style, ",")
        return [f"{key}=" + delimiter.join(_enc(v, reserved=reserved) for v in value)]
    if isinstance(value, dict):
        if style == "deepObject":
            return [f"{key}%5B{_enc(k)}%5D={_enc(v, reserved=reserved)}" for k, v in value.items()]
        if explode and style == "form":
            return [f"{_enc(k)}={_enc(v, reserved=reserved)}" for k, v in value.items()]
        delimiter = QUERY_DELIMITERS.get(style, ",")
        return [
            f"{key}=" + delimiter.join(f"{_enc(k)}{delimiter}{_enc(v, reserved=reserved)}" for k, v in value.items())
        ]
    return [f"{key}={_enc(value, reserved=reserved)}"]


def simple_text(value: Any, *, explode: bool) -> str:
    """The unencoded ``simple`` form of a value: ``a,b`` for lists, ``k,v`` or ``k=v`` pairs for objects."""
    if isinstance(value, list):
        return ",".join(_text(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={_text(v)}" if explode else f"{k},{_text(v)}" for k, v in value.items())
    return _text(value)


def path_segment(name: str, value: Any, spec: Mapping[str, Any]) -> str:
    """A path parameter's text (percent-encoded) by its style: simple, label or matrix."""
    style, explode = _style(spec, "path")

    def enc(v: Any) -> str:  # allowReserved is a query option (OpenAPI 3.1, 4.8.12.4): never in a path
        return _enc(v)

    if style == "label":
        sep = "." if explode else ","
        if isinstance(value, list):
            return "." + sep.join(enc(v) for v in value)
        if isinstance(value, dict):
            return "." + sep.join(f"{enc(k)}={enc(v)}" if explode else f"{enc(k)},{enc(v)}" for k, v in value.items())
        return "." + enc(value)
    if style == "matrix":
        if isinstance(value, list):
            if explode:
                return "".join(f";{_enc(name)}={enc(v)}" for v in value)
            return f";{_enc(name)}=" + ",".join(enc(v) for v in value)
        if isinstance(value, dict):
            if explode:
                return "".join(f";{enc(k)}={enc(v)}" for k, v in value.items())
            return f";{_enc(name)}=" + ",".join(f"{enc(k)},{enc(v)}" for k, v in value.items())
        return f";{_enc(name)}={enc(value)}"
    if isinstance(value, list):
        return ",".join(enc(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{enc(k)}={enc(v)}" if explode else f"{enc(k)},{enc(v)}" for k, v in value.items())
    return enc(value)


def _multipart(fields: Mapping[str, Any]) -> tuple[bytes, str]:
    boundary = "toolcat-" + uuid.uuid4().hex
    parts: list[bytes] = []
    for name, value in fields.items():
        values = value if isinstance(value, list) else [value]
        for item in values:
            disposition = f'form-data; name="{name.replace(chr(34), "%22")}"'
            parts.append(
                f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode()
                + _text(item).encode("utf-8")
                + b"\r\n"
            )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def _encode_body(value: Any, spec: Mapping[str, Any], tool_id: str) -> tuple[bytes, str]:
    encoding = str(spec.get("encoding") or "json")
    if encoding == "json":
        return json.dumps(value, ensure_ascii=False).encode("utf-8"), str(spec.get("media") or "application/json")
    if encoding == "form":
        if not isinstance(value, dict):
            raise ReaderError(
                "VALIDATION_ERROR", f"the body of {tool_id} must be an object of form fields", help_path=tool_id
            )
        pairs = [
            f"{_enc(k)}={_enc(v)}" for k, item in value.items() for v in (item if isinstance(item, list) else [item])
        ]
        return "&".join(pairs).encode("ascii"), "application/x-www-form-urlencoded"
    if encoding == "multipart":
        if not isinstance(value, dict):
            raise ReaderError(
                "VALIDATION_ERROR", f"the body of {tool_id} must be an object of form fields", help_path=tool_id
            )
        return _multipart(value)
    if encoding.startswith("raw:"):
        return _text(value).encode("utf-8"), encoding[4:]
    raise ReaderError(
        "NOT_EXECUTABLE",
        f"http handler of {tool_id}: unknown body encoding {encoding!r}",
        help_path=tool_id,
        hints=["Expected json, form, multipart or raw:<media type>."],
    )


def _secret(
    auth: Mapping[str, Any],
    tool_id: str,
    environ: Mapping[str, str],
    *,
    reveal: bool,
    allow_secret: Callable[[str], bool] | None,
) -> str | None:
    env = auth.get("env")
    if not isinstance(env, str) or not env:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"the auth of {tool_id}'s http handler names no environment variable",
            help_path=tool_id,
            hints=["Give auth an 'env' naming the variable that holds the secret."],
        )
    if allow_secret is not None and not allow_secret(env):
        raise ReaderError(
            "NOT_AUTHORIZED",
            f"{tool_id}: the host does not let this tool's http handler send the environment variable {env}",
            help_path=tool_id,
            details={"env": env},
            hints=[
                (
                    "The host decides which secrets each API may receive: Catalog.open(..., "
                    f"allow_secrets={{'<host>': [{env!r}]}}), or toolcat exec --allow-secret HOST={env}."
                ),
                "Tell the user this tool is not enabled on this host; do not retry.",
            ],
        )
    if not reveal:
        return SECRET_SHOWN.replace("{env}", env)
    value = environ.get(env)
    if value:
        return value
    if auth.get("optional") is True:
        return None
    raise ReaderError(
        "NOT_AUTHORIZED",
        f"{tool_id} needs credentials from the environment variable {env}, which is not set",
        help_path=tool_id,
        details={"env": env},
        hints=[f"Set {env} in the environment of the process that runs the tool."],
    )


def _apply_auth(
    auth: Any,
    tool_id: str,
    headers: dict[str, str],
    query: list[str],
    cookies: list[str],
    environ: Mapping[str, str],
    *,
    reveal: bool,
    allow_secret: Callable[[str], bool] | None,
) -> None:
    if not isinstance(auth, Mapping):
        return
    kind = str(auth.get("type", "")).lower()
    secret = _secret(auth, tool_id, environ, reveal=reveal, allow_secret=allow_secret)
    if secret is None:
        return
    if kind == "bearer":
        headers["Authorization"] = f"Bearer {secret}"
    elif kind == "basic":
        token = base64.b64encode(secret.encode("utf-8")).decode("ascii") if reveal else secret
        headers["Authorization"] = f"Basic {token}"
    elif kind == "apikey":
        name, where = str(auth.get("name") or ""), auth.get("in", "header")
        if not name:
            raise ReaderError("NOT_EXECUTABLE", f"the apiKey auth of {tool_id} names no parameter", help_path=tool_id)
        if where == "query":
            query.append(f"{_enc(name)}={_enc(secret)}")
        elif where == "cookie":
            cookies.append(f"{_enc(name)}={_enc(secret)}")
        else:
            headers[name] = secret
    else:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"http handler of {tool_id}: unknown auth type {kind!r}",
            help_path=tool_id,
            hints=["Expected bearer, basic or apiKey."],
        )


def build_request(
    tool_id: str,
    handler: Mapping[str, Any],
    args: Mapping[str, Any],
    *,
    environ: Mapping[str, str] | None = None,
    reveal_secrets: bool = True,
    allow_secret: Callable[[str], bool] | None = None,
) -> tuple[str, str, bytes | None, dict[str, str]]:
    """(method, url, body, headers) for a call; ``reveal_secrets=False`` shows ``<from $ENV>`` instead of secrets.

    ``allow_secret(env)`` is the host's decision whether this handler may read the variable ``env``
    (:meth:`~toolcat.reader.execution.policy.HandlerPolicy.allows_secret`); None allows every one.
    """
    environ = settings.named_variables() if environ is None else environ
    deep = [str(name) for name, value in args.items() if too_deep(value, MAX_ARGS_DEPTH) is not None]
    if deep:  # validation refuses these first; the builder never recurses into them either
        raise ReaderError(
            "VALIDATION_ERROR",
            f"{', '.join(deep)} of {tool_id} nest lists and objects deeper than {MAX_ARGS_DEPTH} levels",
            help_path=tool_id,
            details={"field_errors": [{"field": name, "message": "nested too deeply"} for name in deep]},
        )
    method = str(handler.get("method", "POST")).upper()
    url = handler.get("url")
    if not isinstance(url, str) or not re.match(r"^https?://", url):
        raise ReaderError("NOT_EXECUTABLE", f"http handler of {tool_id} has no http(s) URL", help_path=tool_id)
    raw_params, raw_body = handler.get("params"), handler.get("body")
    params: Mapping[str, Any] = raw_params if isinstance(raw_params, Mapping) else {}
    body_spec: Mapping[str, Any] | None = raw_body if isinstance(raw_body, Mapping) else None
    missing = [name for name in PLACEHOLDER.findall(url) if args.get(name) is None]
    if missing:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"the URL of {tool_id} needs {', '.join(missing)}",
            help_path=tool_id,
            details={
                "field_errors": [
                    {"field": m, "message": f"'{m}' is required by the URL", "expected": "present"} for m in missing
                ]
            },
        )
    url = PLACEHOLDER.sub(
        lambda m: checked_segment(
            tool_id,
            m.group(1),
            path_segment(
                str((params.get(m.group(1)) or {}).get("name") or m.group(1)),
                args[m.group(1)],
                params.get(m.group(1)) or {},
            ),
        ),
        url,
    )
    headers: dict[str, str] = {str(k): str(v) for k, v in (handler.get("headers") or {}).items()}
    from_agent: dict[str, str] = {}  # header name -> the argument that filled it
    query: list[str] = []
    cookies: list[str] = []
    rest: dict[str, Any] = {}
    used = set(PLACEHOLDER.findall(str(handler.get("url"))))
    ordered = [a for a in params if a in args] + [a for a in args if a not in params]  # the spec's order
    for arg in ordered:
        value = args[arg]
        if arg in used:
            continue
        spec = params.get(arg)
        if not isinstance(spec, Mapping):
            rest[arg] = value
            continue
        if value is None:
            continue
        name = str(spec.get("name") or arg)
        location = spec.get("in")
        if location == "query":
            query.extend(query_pairs(name, value, spec))
        elif location == "header":
            headers[name] = simple_text(value, explode=_style(spec, "header")[1])
            from_agent[name] = arg
        elif location == "cookie":
            explode = _style(spec, "cookie")[1]
            if isinstance(value, dict) and explode:
                cookies.extend(f"{_enc(k)}={_enc(v)}" for k, v in value.items())
            else:
                cookies.append(f"{_enc(name)}={_enc(simple_text(value, explode=False))}")
        elif location != "path":
            raise ReaderError(
                "NOT_EXECUTABLE",
                f"http handler of {tool_id}: parameter {arg!r} has an unknown location {location!r}",
                help_path=tool_id,
                hints=["Expected path, query, header or cookie."],
            )
    body: bytes | None = None
    if body_spec is not None:
        body_arg = body_spec.get("arg")
        payload: Any = (
            rest.pop(str(body_arg))
            if isinstance(body_arg, str) and body_arg in rest
            else (rest if not body_arg else None)
        )
        if isinstance(body_arg, str) and rest:
            query.extend(p for k, v in sorted(rest.items()) for p in query_pairs(k, v, {}))
        if payload is not None and (payload != {} or body_arg):
            body, content_type = _encode_body(payload, body_spec, tool_id)
            headers.setdefault("Content-Type", content_type)
    elif rest:
        if method in ("GET", "DELETE", "HEAD") or params:
            query.extend(p for k, v in sorted(rest.items()) for p in query_pairs(k, v, {}))
        else:
            body = json.dumps(rest, ensure_ascii=False).encode("utf-8")
            headers.setdefault("Content-Type", "application/json")
    _apply_auth(
        handler.get("auth"), tool_id, headers, query, cookies, environ, reveal=reveal_secrets, allow_secret=allow_secret
    )
    if cookies:
        headers["Cookie"] = "; ".join(filter(None, [headers.get("Cookie", ""), *cookies]))
    if query:
        url += ("&" if "?" in url else "?") + "&".join(query)
    headers.setdefault("Accept", "application/json")
    set_user_agent(headers, handler)
    check_headers(tool_id, headers, from_agent)
    return method, url, body, headers


def set_user_agent(headers: dict[str, str], handler: Mapping[str, Any]) -> None:
    """``User-Agent: toolcat/<version>``, or the handler's own ``user_agent``, unless a header already names one."""
    if any(k.lower() == "user-agent" for k in headers):
        return
    own = handler.get("user_agent")
    headers["User-Agent"] = own if isinstance(own, str) and own else USER_AGENT


def checked_segment(tool_id: str, arg: str, text: str) -> str:
    """A path parameter's encoded text, refused when it is ``.``, ``..`` or empty (it would change the path)."""
    if text in DOT_SEGMENTS:
        shown = "empty" if not text else repr(text)
        raise ReaderError(
            "VALIDATION_ERROR",
            f"the path parameter {arg!r} of {tool_id} may not be {shown}: it would change which path is called",
            help_path=tool_id,
            details={"field_errors": [{"field": arg, "message": f"{shown} is not a path segment value"}]},
            next_action={"op": "help", "args": {"path": tool_id}},
        )
    return text


def check_headers(tool_id: str, headers: Mapping[str, str], from_agent: Mapping[str, str]) -> None:
    """Refuse framing or hop-by-hop headers, bad names and control characters; values are never echoed.

    A header an agent's argument filled is a VALIDATION_ERROR naming the argument; one the
    catalogue set (``headers``, ``params``, ``auth``) is NOT_EXECUTABLE, a catalogue bug.
    """
    for name, value in headers.items():
        problem = header_name_problem(name)
        if problem is None and has_control(value):
            problem = "has a value with a control character (CR, LF, NUL, tab ...)"
        if problem is None:
            continue
        arg = from_agent.get(name)
        if arg is not None and header_name_problem(name) is None:
            raise ReaderError(
                "VALIDATION_ERROR",
                f"the argument {arg!r} of {tool_id} cannot be sent as the header {name!r}: it holds a control character",
                help_path=tool_id,
                details={"field_errors": [{"field": arg, "message": "control characters cannot be sent in a header"}]},
                next_action={"op": "help", "args": {"path": tool_id}},
            )
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"the http handler of {tool_id} sets the header {name[:60]!r}, which {problem}",
            help_path=tool_id,
            hints=["This is a catalogue bug: remove the header from the handler (its params, headers or auth)."],
        )


def shown_body(body: bytes | None, headers: Mapping[str, str]) -> Any:
    """A request body as a dry run shows it: parsed JSON, else its text."""
    if not body:
        return None
    if "json" in headers.get("Content-Type", "application/json"):
        try:
            return json.loads(body)
        except ValueError:
            pass
    return body.decode("utf-8", errors="replace")
