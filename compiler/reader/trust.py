"""What a catalogue may run on this host: the handler policy, and the checked connection of http handlers.

A catalogue names its handlers, but the host decides which of them run. :class:`HandlerPolicy`
holds that decision, per handler type:

* ``python``: module prefixes (``"mypkg."``; ``"*"`` is any module);
* ``http``: ``host`` or ``host:port`` (``"*"`` any public host, ``"*.example.com"`` its subdomains);
* ``mcp``: exactly what may start: a command line or argv (``"python /srv/up.py"``,
  ``["node", "server.js"]``), a streamable-HTTP URL, or ``{"command" | "url", "env"?, "cwd"?}``.
  A handler runs only when its command, env and cwd (or its url) equal an entry;
* ``skill`` handlers read the catalogue's own verified files and always run.

A type the host does not name keeps the source's default: everything for a folder the host
built (it is trusted to name its handlers), nothing for a catalogue opened by URL. ``kind``
and every other field of a spec come from the catalogue and never widen the policy.

Whatever the policy, an http handler connects only to public addresses: a name is resolved
once, every address it resolves to is checked, and the connection goes to a checked address
(the ``Host`` header and TLS name stay the name). Loopback, private, link-local, reserved,
multicast and unspecified addresses (IPv4, IPv6, IPv4-mapped, 6to4, Teredo, and numeric host
forms such as ``2130706433`` or ``0x7f.1``) are reached only when the host lists that host
(and port) under ``http``. Redirects are not followed.

Stdlib only; the network modules are imported when a call needs them.
"""

from __future__ import annotations

import contextvars
import functools
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from .envelope import ReaderError

#: The handler types the host allows by target; skill handlers only read the catalogue's own files.
GATED_TYPES = ("python", "http", "mcp")
#: How a host allows each type, for the hints of a refusal.
HOW_TO_ALLOW = {
    "python": (
        "Catalog.open(..., allow_handlers={'python': ['package.']}) (or python_modules=[...]); "
        "toolcat serve/exec --allow-python PREFIX"
    ),
    "http": "Catalog.open(..., allow_handlers={'http': ['host:port']}); toolcat serve/exec --allow-http HOST[:PORT]",
    "mcp": (
        "Catalog.open(..., allow_handlers={'mcp': ['the exact command line or URL']}); "
        "toolcat serve/exec --allow-mcp 'COMMAND' (or a URL, or JSON with command, env and cwd)"
    ),
}
REDACTED = "<redacted>"
#: Handler fields shown in envelopes; env and headers show their names only, anything else is left out.
SHOWN_FIELDS = ("type", "target", "method", "url", "command", "tool", "cwd")

_SANDBOX: contextvars.ContextVar[str | None] = contextvars.ContextVar("toolcat_sandbox", default=None)


def current_sandbox() -> str | None:
    """The sandbox root the running tool call was given (``Catalog.open(..., sandbox=)``), if any."""
    return _SANDBOX.get()


@contextmanager
def sandbox_scope(root: str | None) -> Iterator[None]:
    """Make ``root`` the sandbox of the handler called inside this block (this thread or task only)."""
    token = _SANDBOX.set(root)
    try:
        yield
    finally:
        _SANDBOX.reset(token)


def redacted_handler(handler: Any) -> dict[str, Any]:
    """A handler safe to show an agent: env and header values replaced, unknown fields left out."""
    if not isinstance(handler, dict):
        return {}
    out = {k: handler[k] for k in SHOWN_FIELDS if k in handler}
    for secret in ("env", "headers"):
        if isinstance(handler.get(secret), dict):
            out[secret] = dict.fromkeys(sorted(map(str, handler[secret])), REDACTED)
    return out


# -- the policy ------------------------------------------------------------------------------
def _bad(message: str) -> ReaderError:
    example = (
        "allow_handlers={'http': ['api.example.com', '127.0.0.1:8080'], 'python': ['mypkg.'], "
        "'mcp': ['python /srv/upstream.py', 'https://mcp.example.com/mcp']}"
    )
    return ReaderError("BAD_REQUEST", message, hints=[f"For example {example}."])


def _host_port(text: str) -> tuple[str, int | None]:
    """``host``, ``host:port``, ``[v6]:port`` or a URL's authority as (lowercase host, port or None)."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    raw = text.strip()
    parts = urlsplit(raw if "://" in raw else "//" + raw)
    try:
        port = parts.port
    except ValueError:
        raise _bad(f"allow_handlers['http'] entry {text!r} has an invalid port") from None
    host = (parts.hostname or "").rstrip(".")
    if not host or parts.username is not None or (parts.path not in ("", "/")) or parts.query:
        raise _bad(f"allow_handlers['http'] entry {text!r} is not a host or host:port")
    return host, port


def _mcp_key(entry: Any, where: str) -> tuple[Any, ...]:
    """The comparable form of an mcp server: ``("url", url)`` or ``("stdio", argv, env items, cwd)``."""
    if isinstance(entry, str) and entry.strip().lower().startswith(("http://", "https://")):
        return ("url", entry.strip())
    if isinstance(entry, (str, list, tuple)):
        entry = {"command": entry}
    if not isinstance(entry, Mapping):
        raise _bad(f"{where} must be a command line, an argv list, a URL or {{command|url, env, cwd}}")
    if isinstance(entry.get("url"), str) and entry.get("command") is None:
        return ("url", entry["url"].strip())
    command = entry.get("command")
    if isinstance(command, str):
        try:
            argv = shlex.split(command)
        except ValueError as exc:
            raise _bad(f"{where} has a command that does not parse ({exc})") from None
    elif isinstance(command, (list, tuple)) and all(isinstance(p, str) for p in command):
        argv = list(command)
    else:
        raise _bad(f"{where} needs a command (a string or a list of strings) or a url")
    env = entry.get("env") or {}
    cwd = entry.get("cwd")
    if not argv or not isinstance(env, Mapping) or (cwd is not None and not isinstance(cwd, str)):
        raise _bad(f"{where} needs a non-empty command, an env mapping and a cwd string")
    return ("stdio", tuple(argv), tuple(sorted((str(k), str(v)) for k, v in env.items())), cwd)


def _python_matches(module: str, prefixes: tuple[str, ...]) -> bool:
    return any(p == "*" or module == p.rstrip(".") or module.startswith(p.rstrip(".") + ".") for p in prefixes)


class HandlerPolicy:
    """Which handlers run on this host (see the module docstring); built once per opened catalogue.

    ``trusted`` is the default of a type the host does not name: True for a folder, False for a URL.
    A plain class, not a dataclass, to keep ``import toolcat.reader`` fast.
    """

    __slots__ = ("http", "mcp", "other", "python", "sandbox", "trusted")

    def __init__(
        self,
        allow_handlers: Mapping[str, Any] | None = None,
        *,
        trusted: bool = True,
        python_modules: list[str] | None = None,
        sandbox: str | None = None,
    ) -> None:
        if allow_handlers is not None and not isinstance(allow_handlers, Mapping):
            raise _bad(f"allow_handlers must map a handler type to a list of targets, got {allow_handlers!r:.80}")
        allow = dict(allow_handlers or {})
        if python_modules is not None:
            if isinstance(python_modules, str) or not all(isinstance(p, str) for p in python_modules):
                raise _bad("python_modules must be a list of module prefixes")
            allow["python"] = [*(allow.get("python") or []), *python_modules]
        for kind, targets in allow.items():
            if (
                not isinstance(kind, str)
                or isinstance(targets, (str, bytes, Mapping))
                or not isinstance(targets, (list, tuple))
            ):
                raise _bad(f"allow_handlers[{kind!r}] must be a list of targets, got {targets!r:.80}")
        self.trusted = trusted
        self.sandbox = sandbox
        self.python: tuple[str, ...] | None = None
        self.http: tuple[tuple[str, int | None], ...] | None = None
        self.mcp: tuple[tuple[Any, ...], ...] | None = None
        self.other: dict[str, tuple[str, ...]] = {}
        if "python" in allow:
            if not all(isinstance(p, str) and p.strip() for p in allow["python"]):
                raise _bad("allow_handlers['python'] lists module prefixes such as 'mypkg.'")
            self.python = tuple(p.strip() for p in allow["python"])
        if "http" in allow:
            if not all(isinstance(h, str) for h in allow["http"]):
                raise _bad("allow_handlers['http'] lists hosts such as 'api.example.com' or '127.0.0.1:8080'")
            self.http = tuple(("*", None) if h.strip() == "*" else _host_port(h) for h in allow["http"])
        if "mcp" in allow:
            self.mcp = tuple(_mcp_key(e, f"allow_handlers['mcp'][{i}]") for i, e in enumerate(allow["mcp"]))
        for kind, targets in allow.items():
            if kind not in ("python", "http", "mcp", "skill"):
                self.other[kind] = tuple(str(t) for t in targets)

    # -- per type ----------------------------------------------------------------------------
    def allows_python(self, module: str) -> bool:
        """Whether python handlers from ``module`` may run."""
        return self.trusted if self.python is None else _python_matches(module, self.python)

    def http_listed(self, host: str, port: int) -> bool:
        """Whether the host named ``host:port`` itself (which lets it reach a non-public address)."""
        return any(h == host and p in (None, port) for h, p in self.http or ())

    def allows_http(self, host: str, port: int) -> bool:
        """Whether an http handler may call ``host:port`` at all (public addresses only, unless listed)."""
        if self.http is None:
            return self.trusted
        return any(
            (h in ("*", host) or (h.startswith("*.") and host.endswith(h[1:]))) and p in (None, port)
            for h, p in self.http
        )

    def allows_mcp(self, handler: dict[str, Any]) -> bool:
        """Whether the mcp server this handler names (command, env and cwd, or url) may run."""
        if self.mcp is None:
            return self.trusted
        try:
            key = _mcp_key({k: handler.get(k) for k in ("command", "url", "env", "cwd")}, "the handler")
        except ReaderError:
            return False
        return key in self.mcp

    # -- any handler --------------------------------------------------------------------------
    def refusal(self, tool_id: str, handler: Any) -> ReaderError | None:
        """NOT_AUTHORIZED when this host does not run ``handler`` (no network or process is touched)."""
        if not isinstance(handler, dict):
            return None
        kind = str(handler.get("type"))
        if kind == "skill":
            return None
        if kind == "python":
            module = str(handler.get("target", "")).partition(":")[0]
            if self.allows_python(module):
                return None
            target, what = module, f"python handlers from module {module!r}"
        elif kind == "http":
            refused = self.http_refusal(str(handler.get("url", "")))
            if refused is None:
                return None
            target, what = refused, f"http handlers that call {refused}"
        elif kind == "mcp":
            if self.allows_mcp(handler):
                return None
            target = mcp_target(handler)
            what = f"mcp handlers that start {target}"
        else:
            listed = self.other.get(kind)
            if self.trusted if listed is None else ("*" in listed or str(handler.get("target")) in listed):
                return None
            target, what = str(handler.get("target", "")), f"{kind!r} handlers"
        source = "this catalogue (opened by URL)" if not self.trusted else "this catalogue"
        how = HOW_TO_ALLOW.get(kind, f"Catalog.open(..., allow_handlers={{{kind!r}: ['*']}})")
        return ReaderError(
            "NOT_AUTHORIZED",
            f"{tool_id}: the host does not allow {what} for {source}",
            help_path=tool_id,
            details={"handler": kind, "target": target},
            hints=[
                f"A catalogue runs only the handlers its host allows; the host allows this one with {how}.",
                "Tell the user this tool is not enabled on this host; do not retry.",
            ],
        )

    def http_refusal(self, url: str) -> str | None:
        """The ``host:port`` of ``url`` when http handlers may not call it, else None (no DNS lookup here).

        A host that is a placeholder the agent fills (``https://{host}/x``) is checked when the call runs.
        """
        from urllib.parse import urlsplit  # noqa: PLC0415

        try:
            parts = urlsplit(url)
            if "{" in parts.netloc or "}" in parts.netloc:
                return None
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        except ValueError:
            return url[:200]
        host = (parts.hostname or "").rstrip(".")
        return None if self.allows_http(host, port) else f"{host}:{port}"


def mcp_target(handler: dict[str, Any]) -> str:
    """How an envelope names an mcp handler's server: its command line (env names only) or its URL."""
    command = handler.get("command")
    if isinstance(command, list):
        shown = shlex.join(str(p) for p in command)
    elif command is not None:
        shown = str(command)
    else:
        shown = str(handler.get("url"))
    extras = []
    if isinstance(handler.get("env"), dict) and handler["env"]:
        extras.append("env " + ", ".join(sorted(map(str, handler["env"]))))
    if handler.get("cwd") is not None:
        extras.append(f"cwd {handler['cwd']}")
    return shown[:300] + (f" ({'; '.join(extras)})" if extras else "")


#: The policy of a context that names none: trusted like a folder, with the address checks of http handlers.
DEFAULT_POLICY = HandlerPolicy()


# -- http handlers: the address check and the checked connection -----------------------------------------
def blocked_reason(address: Any) -> str | None:
    """Why an http handler may not connect to ``address`` unless the host lists it (None for a public address).

    An IPv6 address that carries an IPv4 one (IPv4-mapped, 6to4, Teredo) is judged by that one too.
    """
    if address.version == 6:
        embedded = [address.ipv4_mapped, address.sixtofour, *(address.teredo or ())]
        for inner in embedded:
            if inner is not None and blocked_reason(inner) is not None:
                return f"{blocked_reason(inner)} (inside {address})"
    for name in ("loopback", "link_local", "multicast", "unspecified", "private", "reserved", "site_local"):
        if getattr(address, f"is_{name}", False):
            return f"a {name.replace('_', '-')} address"
    if not address.is_global:
        return "not a public address"
    return None


def _ip(text: str) -> Any:
    """The address a host string is, when it is one (dotted, or a numeric form libc accepts); else None."""
    import ipaddress  # noqa: PLC0415
    import socket  # noqa: PLC0415

    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        pass
    if text and all(c in "0123456789abcdefx." for c in text.lower()) and text[0].isdigit():
        try:  # 2130706433, 0x7f.1, 0177.0.0.1, 127.1: what getaddrinfo would connect to
            return ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    return None


def static_address_refusal(host: str, port: int, policy: HandlerPolicy) -> str | None:
    """Why ``host`` is refused without a DNS lookup (it is a non-public address literal), else None."""
    address = _ip(host)
    if address is None or policy.http_listed(host, port):
        return None
    reason = blocked_reason(address)
    return f"{host} is {reason}" if reason else None


def http_static_refusal(tool_id: str, url: str, policy: HandlerPolicy) -> ReaderError | None:
    """The refusal of a filled http handler URL that needs no DNS lookup to decide (for dry runs), else None."""
    from urllib.parse import urlsplit  # noqa: PLC0415

    try:
        parts = urlsplit(url)
        port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
    except ValueError:
        return None  # the run reports the invalid URL
    host = (parts.hostname or "").rstrip(".")
    if not policy.allows_http(host, port):
        return policy.refusal(tool_id, {"type": "http", "url": f"{parts.scheme}://{parts.netloc}/"}) or _refused(
            tool_id, host, port, "the host does not allow it"
        )
    static = static_address_refusal(host, port, policy)
    return None if static is None else _refused(tool_id, host, port, static)


def _refused(tool_id: str, host: str, port: int, why: str) -> ReaderError:
    return ReaderError(
        "NOT_AUTHORIZED",
        f"{tool_id}: http handlers do not reach {host}:{port}: {why}",
        help_path=tool_id,
        details={"handler": "http", "target": f"{host}:{port}"},
        hints=[
            f"http handlers reach only public addresses unless the host lists the host:port: {HOW_TO_ALLOW['http']}.",
            "Tell the user this endpoint is not enabled on this host; do not retry.",
        ],
    )


def _resolve(tool_id: str, host: str, port: int, policy: HandlerPolicy) -> list[tuple[Any, ...]]:
    """The addresses to connect to: every one the name resolves to, each checked (unless the host lists it)."""
    import socket  # noqa: PLC0415

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError) as exc:
        raise ReaderError(
            "UNAVAILABLE",
            f"{tool_id}: cannot resolve {host}: {exc}",
            help_path=tool_id,
            details={"target": f"{host}:{port}"},
            hints=["The endpoint's name does not resolve; retry later or tell the user."],
        ) from None
    listed = policy.http_listed(host, port)
    out: list[tuple[Any, ...]] = []
    for family, _, _, _, sockaddr in infos:
        address = _ip(str(sockaddr[0]))
        reason = None if address is None else blocked_reason(address)
        if address is None or (reason is not None and not listed):
            raise _refused(tool_id, host, port, f"it resolves to {sockaddr[0]}, {reason or 'not an IP address'}")
        if (family, sockaddr) not in out:
            out.append((family, sockaddr))
    return out


@functools.cache
def _connection_classes() -> tuple[type, type]:
    """HTTP and HTTPS connections that connect to a checked address while Host and SNI stay the name."""
    import http.client  # noqa: PLC0415
    import socket  # noqa: PLC0415

    class CheckedHTTPConnection(http.client.HTTPConnection):
        addresses: list[tuple[Any, ...]]

        def connect(self) -> None:
            last: OSError | None = None
            for family, sockaddr in self.addresses:
                sock = socket.socket(family, socket.SOCK_STREAM)
                try:
                    sock.settimeout(self.timeout)
                    sock.connect(sockaddr)
                except OSError as exc:
                    sock.close()
                    last = exc
                    continue
                self.sock = sock
                return
            raise last or OSError("no address to connect to")

    class CheckedHTTPSConnection(http.client.HTTPSConnection, CheckedHTTPConnection):
        def connect(self) -> None:
            CheckedHTTPConnection.connect(self)
            self.sock = self._context.wrap_socket(self.sock, server_hostname=self.host)  # type: ignore[attr-defined]

    return CheckedHTTPConnection, CheckedHTTPSConnection


def checked_request(
    tool_id: str,
    method: str,
    url: str,
    body: bytes | None,
    headers: dict[str, str],
    *,
    timeout: float,
    limit: int,
    policy: HandlerPolicy,
) -> tuple[int, dict[str, str], bytes]:
    """Send one request for an http handler; ``(status, lowercase headers, body)``; never follows a redirect.

    The scheme must be http(s), the host allowed by ``policy`` and every address it resolves to
    public (unless the host lists it); the connection goes to those checked addresses. ``timeout``
    bounds the whole exchange; a body over ``limit`` bytes stops the read (the caller reports it).
    """
    import time  # noqa: PLC0415
    from urllib.parse import urlsplit  # noqa: PLC0415

    started = time.monotonic()
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"{tool_id}: the URL {url.split('?', 1)[0]!r:.200} is invalid ({exc})",
            help_path=tool_id,
            details={"field_errors": []},
        ) from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").rstrip(".")
    if scheme not in ("http", "https") or not host or "@" in parts.netloc:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"{tool_id}: http handlers call http(s)://host/... URLs without "
            f"credentials, not {url.split('?', 1)[0]!r:.200}",
            help_path=tool_id,
        )
    if not all(c.isascii() and (c.isalnum() or c in ".-_:") for c in host):
        try:
            host = host.encode("idna").decode("ascii")
        except UnicodeError:
            raise ReaderError(
                "VALIDATION_ERROR",
                f"{tool_id}: {host!r:.100} is not a valid host name",
                help_path=tool_id,
                details={"field_errors": []},
            ) from None
    port = port or (443 if scheme == "https" else 80)
    if not policy.allows_http(host, port):
        refusal = policy.refusal(tool_id, {"type": "http", "url": f"{scheme}://{parts.netloc}/"})
        raise refusal or _refused(tool_id, host, port, "the host does not allow it")
    static = static_address_refusal(host, port, policy)
    if static is not None:
        raise _refused(tool_id, host, port, static)
    addresses = _resolve(tool_id, host, port, policy)
    plain, tls = _connection_classes()
    connection = (tls if scheme == "https" else plain)(host, port, timeout=timeout)
    connection.addresses = addresses
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        chunks: list[bytes] = []
        size = 0
        while size <= limit:
            left = timeout - (time.monotonic() - started)
            if left <= 0:
                raise TimeoutError(f"the response took longer than {timeout} s")
            if connection.sock is not None:
                connection.sock.settimeout(left)
            chunk = response.read1(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks)
    finally:
        connection.close()
