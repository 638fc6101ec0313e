"""The handler policy: which handlers of a catalogue the host lets run, by type and target.

:class:`HandlerPolicy` holds the host's decision per handler type (``python`` module prefixes, ``http``
hosts, exact ``mcp`` commands or URLs; ``skill`` handlers always run), :data:`DEFAULT_POLICY` is the
policy of a context that names none, and the ``file.*`` sandbox of a running call lives here too.
:mod:`toolcat.reader.execution.network` describes the whole trust model and re-exports these names.
"""

from __future__ import annotations

import contextvars
import shlex
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import PurePath
from typing import Any

from ...format import settings
from ...format.envelope import ReaderError
from ...format.secrets import ENV_REFERENCE

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


def read_only_refusal(tool_id: str) -> ReaderError:
    """PERMISSION_DENIED (001's code) for a ``kind: write`` tool in a read-only session.

    A dry run of it still answers: it runs nothing. Every other refusal (namespaces, trust, sandbox,
    ``require_expand``) stays ``NOT_AUTHORIZED``.
    """
    return ReaderError(
        "PERMISSION_DENIED",
        f"{tool_id} writes, and this session is read-only",
        help_path=tool_id,
        hints=["Only kind=read tools run in a read-only session; ask the user to run this change."],
    )


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


def env_values(env: Mapping[str, Any], tool_id: str, environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """A handler's ``env`` with every ``${NAME}`` reference read from the host's environment.

    Catalogues reference secrets by name (docs/sources.md, "Secrets"); the build refuses literal
    values that look like secrets. A referenced variable that is not set is NOT_AUTHORIZED,
    naming the variable, never a value.
    """
    environ = settings.named_variables() if environ is None else environ
    out: dict[str, str] = {}
    for key, value in env.items():
        match = ENV_REFERENCE.match(str(value))
        if match is None:
            out[str(key)] = str(value)
            continue
        name = match.group(1)
        if name not in environ:
            raise ReaderError(
                "NOT_AUTHORIZED",
                f"{tool_id} needs the environment variable {name}, which is not set",
                help_path=tool_id,
                details={"env": name},
                hints=[f"Set {name} in the environment of the process that runs the tool."],
            )
        out[str(key)] = environ[name]
    return out


def redacted_handler(handler: Any) -> dict[str, Any]:
    """A handler safe to show an agent: env and header values replaced, unknown fields left out."""
    if not isinstance(handler, dict):
        return {}
    out = {k: handler[k] for k in SHOWN_FIELDS if k in handler}
    if out.get("type") == "mcp" and ("command" in out or "url" in out):  # an argument or a query may be a token
        out.pop("command", None)
        out.pop("url", None)
        out["server"] = mcp_target({k: handler.get(k) for k in ("command", "url")})
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
    from urllib.parse import urlsplit  # noqa: PLC0415 - stdlib, imported on first use

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

    __slots__ = ("http", "mcp", "other", "python", "sandbox", "secrets", "trusted")

    def __init__(
        self,
        allow_handlers: Mapping[str, Any] | None = None,
        *,
        trusted: bool = True,
        python_modules: list[str] | None = None,
        sandbox: str | None = None,
        allow_secrets: Mapping[str, Any] | None = None,
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
        self.secrets = _secret_table(allow_secrets)
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

    def allows_secret(self, url: str, env: str) -> bool:
        """Whether an http handler calling ``url`` may read the environment variable ``env``.

        The host decides (``allow_secrets={"api.example.com": ["EXAMPLE_TOKEN"]}``); a catalogue only
        names the variable. Without ``allow_secrets`` a folder the host built may read any variable
        and a catalogue opened by URL none.
        """
        if self.secrets is None:
            return self.trusted
        from urllib.parse import urlsplit  # noqa: PLC0415 - stdlib, imported on first use

        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        except ValueError:
            return False
        host = (parts.hostname or "").rstrip(".").lower()
        return any(h in ("*", host) and p in (None, port) and env in names for (h, p), names in self.secrets.items())

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
        from urllib.parse import urlsplit  # noqa: PLC0415 - stdlib, imported on first use

        try:
            parts = urlsplit(url)
            if "{" in parts.netloc or "}" in parts.netloc:
                return None
            port = parts.port or (443 if parts.scheme.lower() == "https" else 80)
        except ValueError:
            return url[:200]
        host = (parts.hostname or "").rstrip(".")
        return None if self.allows_http(host, port) else f"{host}:{port}"


def _secret_table(allow: Mapping[str, Any] | None) -> dict[tuple[str, int | None], frozenset[str]] | None:
    """``allow_secrets`` as ``{(host, port or None): variable names}``; BAD_REQUEST for a wrong shape."""
    if allow is None:
        return None
    if not isinstance(allow, Mapping):
        raise _bad(f"allow_secrets must map a host to the environment variables it may receive, got {allow!r:.80}")
    table: dict[tuple[str, int | None], frozenset[str]] = {}
    for host, names in allow.items():
        if (
            not isinstance(host, str)
            or isinstance(names, (str, bytes))
            or not isinstance(names, (list, tuple, set, frozenset))
            or not all(isinstance(n, str) and n for n in names)
        ):
            raise _bad(f"allow_secrets[{host!r}] must be a list of environment variable names, e.g. ['EXAMPLE_TOKEN']")
        key = ("*", None) if host.strip() == "*" else _host_port(host)
        table[key] = table.get(key, frozenset()) | frozenset(names)
    return table


def server_label(handler: dict[str, Any]) -> str:
    """How anything toolcat shows (an envelope, a log line, a dry run) names an mcp handler's server.

    The program's name and how many arguments follow it (an argument may be a token), or the URL's scheme, host,
    port and path (a query may hold a key, the user part a password). The host finds the exact command line in
    the tool's spec (``toolcat show TOOL``) when it decides what to allow.
    """
    command = handler.get("command")
    if command is not None:
        try:
            argv = shlex.split(command) if isinstance(command, str) else [str(part) for part in command]
        except (TypeError, ValueError):
            argv = []
        program = PurePath(argv[0]).name if argv else "?"
        return f"stdio server {program}" + (f" (+{len(argv) - 1} args)" if len(argv) > 1 else "")
    from urllib.parse import urlsplit  # noqa: PLC0415 - keeps `import toolcat.reader` fast

    parts = urlsplit(str(handler.get("url", "")))
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{parts.hostname or '?'}" + (f":{port}" if port else "") + parts.path


def mcp_target(handler: dict[str, Any]) -> str:
    """:func:`server_label`, with the names (never the values) of the handler's env variables, and its cwd."""
    shown = server_label(handler)
    extras = []
    if isinstance(handler.get("env"), dict) and handler["env"]:
        extras.append("env " + ", ".join(sorted(map(str, handler["env"]))))
    if handler.get("cwd") is not None:
        extras.append(f"cwd {handler['cwd']}")
    return shown[:300] + (f" ({'; '.join(extras)})" if extras else "")


#: The policy of a context that names none: trusted like a folder, with the address checks of http handlers.
DEFAULT_POLICY = HandlerPolicy()
