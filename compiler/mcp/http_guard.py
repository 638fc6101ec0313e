"""What stands in front of ``toolcat serve --transport http``: who may reach it, and how many sessions it keeps.

Three guards, each a plain ASGI wrapper around the SDK's streamable HTTP app (public protocol only,
no SDK internals):

* :func:`exposure` decides, before anything binds, whether a host may be served: loopback always
  (with the SDK's DNS-rebinding and Origin checks on); any other address only with explicit allowed
  hosts and origins, or a bearer token, else :class:`ExposureError` says how to fix it.
* :class:`BearerToken` refuses a request without ``Authorization: Bearer <token>`` (401). The token
  comes from an environment variable the operator names; it is never logged or echoed.
* :class:`SessionBound` keeps at most ``max_sessions`` handshake-era sessions: when a new one would
  pass the bound it ends the session idle for longest, by sending the SDK the ``DELETE`` a client
  would send, so new clients are served instead of getting ``503`` for the idle timeout's length.
  A session with a request in flight is never evicted. (2026-07-28 clients open no sessions.)
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from ..format.errors import ToolcatError

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: Handshake-era HTTP sessions kept at once; a new one past this evicts the one idle for longest.
MAX_HTTP_SESSIONS = 1_000
#: An HTTP session with no request for this long is closed by the SDK (its default is 30 minutes).
SESSION_IDLE_SECONDS = 5 * 60.0
_SESSION_HEADER = b"mcp-session-id"
LOOPBACK_NAMES = ("localhost",)


class ExposureError(ToolcatError, ValueError):
    """Serving beyond loopback was asked for without allowed hosts/origins or a token."""


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and every loopback address (127.0.0.0/8, ::1)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Exposure:
    """How an HTTP server is reachable: the Host/Origin allow-lists and whether a token is required."""

    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    token_required: bool
    warnings: tuple[str, ...] = field(default=())


def exposure(
    host: str,
    allowed_hosts: tuple[str, ...] = (),
    allowed_origins: tuple[str, ...] = (),
    *,
    token: bool = False,
) -> Exposure:
    """The checks serving on ``host`` needs; raises :class:`ExposureError` when beyond loopback unguarded."""
    if is_loopback(host) and not allowed_hosts and not allowed_origins:
        return Exposure(
            ("127.0.0.1:*", "localhost:*", "[::1]:*", f"{host}:*"),
            ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*", f"http://{host}:*"),
            token_required=token,
        )
    if not is_loopback(host) and not token and not (allowed_hosts and allowed_origins):
        raise ExposureError(
            f"--host {host} serves beyond loopback, where any page a browser opens or any machine on the "
            "network could call this server's tools. Give both --allowed-host HOST[:PORT] and "
            "--allowed-origin URL (the names clients use), or --token-env NAME (a bearer token read from "
            "that environment variable), or bind --host 127.0.0.1"
        )
    notes = []
    if not is_loopback(host):
        guard = "a bearer token" if token else "Host/Origin allow-lists only (no authentication)"
        notes.append(f"serving beyond loopback on {host}, guarded by {guard}")
    hosts = allowed_hosts or ("*",)
    origins = allowed_origins or ("*",)
    return Exposure(tuple(hosts), tuple(origins), token_required=token, warnings=tuple(notes))


async def _reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]] | None = None) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), *(headers or [])],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BearerToken:
    """Refuses HTTP requests that do not carry ``Authorization: Bearer <token>`` (compared in constant time)."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass an authorised request on; answer 401 otherwise."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        given = next((value for key, value in scope.get("headers", []) if key == b"authorization"), b"")
        if not hmac.compare_digest(given, self._expected):
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Unauthorized: send Authorization: Bearer <token>"}}'
            await _reply(send, 401, body, [(b"www-authenticate", b"Bearer")])
            return
        await self.app(scope, receive, send)


class SessionBound:
    """At most ``max_sessions`` handshake-era sessions; a new one ends the session idle for longest."""

    def __init__(self, app: ASGIApp, max_sessions: int = MAX_HTTP_SESSIONS) -> None:
        self.app = app
        self.max_sessions = max_sessions
        #: session id -> (requests in flight, monotonic time of the last request's end); oldest idle first.
        self.sessions: OrderedDict[bytes, list[float]] = OrderedDict()
        self.evicted = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Track the request's session; before a session-opening request, make room by evicting."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        session = next((value for key, value in scope.get("headers", []) if key == _SESSION_HEADER), None)
        if session is None and scope.get("method") == "POST":
            await self._make_room(scope)
        elif session is not None and session in self.sessions:
            self.sessions[session][0] += 1
        opened: list[bytes] = []

        async def watch(message: Message) -> None:
            if message["type"] == "http.response.start" and session is None and message.get("status", 500) < 400:
                new = next((v for k, v in message.get("headers", []) if k.lower() == _SESSION_HEADER), None)
                if new is not None:
                    opened.append(new)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self._settle(scope, session, opened)

    def _settle(self, scope: Scope, session: bytes | None, opened: list[bytes]) -> None:
        """After a request: remember a new session, mark the used one idle, forget a deleted one."""
        now = time.monotonic()
        for new in opened:
            self.sessions[new] = [0, now]
        if session is None or session not in self.sessions:
            return
        if scope.get("method") == "DELETE":
            del self.sessions[session]
            return
        state = self.sessions[session]
        state[0] = max(0, state[0] - 1)
        state[1] = now
        self.sessions.move_to_end(session)

    async def _make_room(self, scope: Scope) -> None:
        while len(self.sessions) >= self.max_sessions:
            victim = next((sid for sid, (busy, _) in self.sessions.items() if busy == 0), None)
            if victim is None:
                return  # every session is busy: the SDK's own limit answers 503
            del self.sessions[victim]
            self.evicted += 1
            log.info("evicting the HTTP session idle for longest to admit a new client (%d kept)", self.max_sessions)
            await self._delete(scope, victim)

    async def _delete(self, scope: Scope, session: bytes) -> None:
        """End ``session`` through the SDK, exactly as its client would (``DELETE /mcp`` with its id)."""
        headers = [(k, v) for k, v in scope.get("headers", []) if k in {b"host", b"authorization"}]
        headers += [(_SESSION_HEADER, session), (b"mcp-protocol-version", b"2025-11-25")]
        delete_scope = {**scope, "method": "DELETE", "headers": headers, "query_string": b""}

        async def receive() -> Message:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_message: Message) -> None:
            return None

        try:
            await self.app(delete_scope, receive, discard)
        except Exception:  # an eviction that fails must not fail the new client's request
            log.warning("could not end an idle HTTP session", exc_info=True)
