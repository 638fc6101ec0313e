"""What stands in front of ``toolcat serve --transport http``: who may reach it, and how many sessions it keeps.

Three guards, each a plain ASGI wrapper around the SDK's streamable HTTP app (public protocol only,
no SDK internals):

* :func:`exposure` decides, before anything binds, whether a host may be served: loopback always
  (with the SDK's DNS-rebinding and Origin checks on); any other address only with explicit allowed
  hosts and origins, or a bearer token, else :class:`ExposureError` says how to fix it.
* :class:`BearerToken` refuses a request without ``Authorization: Bearer <token>`` (401). The token
  comes from an environment variable the operator names; it is never logged or echoed.
* :class:`SessionBound` keeps at most ``max_sessions`` handshake-era sessions: when a new one would
  pass the bound it ends the newest idle session of the identity holding the most sessions (so one
  client opening sessions in a loop evicts its own, never another's old active one), by sending the
  SDK the ``DELETE`` a client would send. A session with a request in flight is never evicted.
  (2026-07-28 clients open no sessions.)

And who a client is (issue 36, docs/security.md "Who a client is"):

* :class:`ClientIdentity` names each request's client in the ASGI scope (:data:`IDENTITY_KEY`): the
  bearer token's principal where a token guards the server, then a client key the server issued in a
  cookie (:data:`CLIENT_COOKIE`, 128 random bits: unguessable, so a client can only be itself), else the
  TCP connection (peer address and port). The address a client writes (``X-Forwarded-For``) counts only
  when the host names its proxy (``--trusted-proxy CIDR``; uvicorn then rewrites the peer address).
* :class:`ReadDeadline` gives a request's body :data:`BODY_SECONDS` to arrive (408 after), and
  :func:`guarded_protocol` gives request headers :data:`HEADER_SECONDS` and the server at most
  :data:`MAX_CONNECTIONS` connections (the oldest that has not sent its headers goes first).
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import logging
import os
import re
import resource
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
#: Seconds a connection has to send a request's headers (from its first byte, or from connecting).
HEADER_SECONDS = 10.0
#: Seconds a request has to send its whole body once its headers arrived.
BODY_SECONDS = 30.0
#: Connections served at once (at most half the process's file limit); past it the oldest without headers closes.
MAX_CONNECTIONS = 512
#: The cookie holding the client key the server issues to a client without a session.
CLIENT_COOKIE = "toolcat_client"
_CLIENT_KEY = re.compile(rb"^[0-9a-f]{32}$")
#: Where :class:`ClientIdentity` leaves the request's identity and its opener (principal and peer address).
IDENTITY_KEY = "toolcat.identity"
OPENER_KEY = "toolcat.opener"
PRINCIPAL_KEY = "toolcat.principal"


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
        scope[PRINCIPAL_KEY] = self.principal
        await self.app(scope, receive, send)

    @property
    def principal(self) -> str:
        """Who the token names: ``token:<12 hex digits of its sha256>`` (never the token)."""
        return "token:" + hashlib.sha256(self._expected).hexdigest()[:12]


def _cookie(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", []):
        if key == b"cookie":
            for part in value.split(b";"):
                left, _, right = part.strip().partition(b"=")
                if left == name:
                    return bytes(right)
    return None


class ClientIdentity:
    """Names the client of each HTTP request (:data:`IDENTITY_KEY`) and offers a client key to one without."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Set the identity, then pass the request on; a new client key rides on the response as a cookie."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        principal = str(scope.get(PRINCIPAL_KEY) or "anonymous")
        peer = scope.get("client") or ("local", 0)
        scope[OPENER_KEY] = f"{principal}@{peer[0]}"
        key = _cookie(scope, CLIENT_COOKIE.encode())
        if key is not None and _CLIENT_KEY.match(key):
            scope[IDENTITY_KEY] = f"{principal}/key:{key.decode()}"
            await self.app(scope, receive, send)
            return
        scope[IDENTITY_KEY] = f"{principal}/conn:{peer[0]}:{peer[1]}"
        offered = os.urandom(16).hex().encode()
        cookie = b"%s=%s; Path=/; HttpOnly; SameSite=Strict" % (CLIENT_COOKIE.encode(), offered)

        async def offer(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (b"set-cookie", cookie)]}
            await send(message)

        await self.app(scope, receive, offer)


class ReadDeadline:
    """A request's body must arrive within ``seconds`` of its headers: else 408, and the connection closes."""

    def __init__(self, app: ASGIApp, seconds: float = BODY_SECONDS) -> None:
        self.app = app
        self.seconds = seconds

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on with a ``receive`` that gives up on a body still arriving at the deadline."""
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        import anyio  # noqa: PLC0415 - the SDK's own dependency; this module stays importable without it

        deadline = time.monotonic() + self.seconds
        state = {"complete": False, "started": False, "late": False}

        async def timed() -> Message:
            if state["complete"]:
                return await receive()  # after the body: waiting for a disconnect is the app's business
            with anyio.move_on_after(max(0.0, deadline - time.monotonic())):
                message = await receive()
                if message["type"] != "http.request" or not message.get("more_body", False):
                    state["complete"] = True
                return message
            state["late"] = True
            return {"type": "http.disconnect"}

        async def watch(message: Message) -> None:
            if state["late"]:
                return
            if message["type"] == "http.response.start":
                state["started"] = True
            await send(message)

        await self.app(scope, timed, watch)
        if state["late"] and not state["started"]:
            body = b'{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"the request body did not arrive in time"}}'
            await _reply(send, 408, body, [(b"connection", b"close")])


def connection_limit() -> int:
    """:data:`MAX_CONNECTIONS`, or half the process's open-file limit when that is lower."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return MAX_CONNECTIONS if soft == resource.RLIM_INFINITY else max(16, min(MAX_CONNECTIONS, soft // 2))


class _HeaderDeadline:
    """The part of :func:`guarded_protocol`'s class that is toolcat's: a header deadline and connection shedding.

    Mixed in before uvicorn's ``H11Protocol`` (whose ``cycle``, ``loop``, ``transport`` and ``connections``
    it reads); ``header_seconds`` and ``bound`` are set on the class :func:`guarded_protocol` makes.
    """

    header_seconds: float = HEADER_SECONDS
    bound: int = MAX_CONNECTIONS
    cycle: Any
    loop: Any
    transport: Any
    connections: Any

    def connection_made(self, transport: Any) -> None:
        self.opened_at = time.monotonic()
        self._header_timer: Any = None
        super().connection_made(transport)  # type: ignore[misc]
        self._await_headers()
        if len(self.connections) > self.bound:
            self._shed()

    def _between_requests(self) -> bool:
        return self.cycle is None or bool(self.cycle.response_complete)

    def _await_headers(self) -> None:
        if self._header_timer is None:
            self._header_timer = self.loop.call_later(self.header_seconds, self._headers_late)

    def _headers_late(self) -> None:
        self._header_timer = None
        if self._between_requests():
            log.info("closing a connection that sent no request headers in %g s", self.header_seconds)
            self.transport.close()

    def _shed(self) -> None:
        slow = [c for c in self.connections if getattr(c, "_header_timer", None) is not None and c is not self]
        if slow:
            victim = min(slow, key=lambda c: float(getattr(c, "opened_at", 0.0)))
            victim.transport.close()

    def data_received(self, data: bytes) -> None:
        if self._between_requests():
            self._await_headers()
        cycle = self.cycle
        super().data_received(data)  # type: ignore[misc]
        if self.cycle is not cycle and self._header_timer is not None:  # a request's headers are in
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().connection_lost(exc)  # type: ignore[misc]


def guarded_protocol(header_seconds: float = HEADER_SECONDS, limit: int | None = None) -> type[Any]:
    """uvicorn's h11 protocol with a time limit on request headers and a bound on open connections.

    uvicorn limits neither: a connection that sends its headers one byte at a time, or nothing at all,
    keeps its file descriptor forever (1,100 of them exhausted a 1,024-file limit in issue 36). Each
    connection here must complete a request's headers within ``header_seconds`` of connecting or of the
    first byte after a response; past ``limit`` open connections, the oldest one still without headers
    is closed to admit the new one.
    """
    from uvicorn.protocols.http.h11_impl import H11Protocol  # noqa: PLC0415 - only the HTTP transport needs it

    bound = limit if limit is not None else connection_limit()
    return type(
        "GuardedH11Protocol", (_HeaderDeadline, H11Protocol), {"header_seconds": header_seconds, "bound": bound}
    )


class SessionBound:
    """At most ``max_sessions`` handshake-era sessions; a new one ends the session idle for longest."""

    def __init__(self, app: ASGIApp, max_sessions: int = MAX_HTTP_SESSIONS) -> None:
        self.app = app
        self.max_sessions = max_sessions
        #: session id -> [requests in flight, monotonic time of the last request's end]; in opening order.
        self.sessions: OrderedDict[bytes, list[float]] = OrderedDict()
        #: session id -> the identity that opened it (principal and peer address); sessions per opener.
        self.opener: dict[bytes, str] = {}
        self.per_opener: dict[str, OrderedDict[bytes, None]] = {}
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

    def _forget(self, session: bytes) -> None:
        self.sessions.pop(session, None)
        opener = self.opener.pop(session, None)
        held = self.per_opener.get(opener or "")
        if held is not None:
            held.pop(session, None)
            if not held:
                del self.per_opener[opener or ""]

    def _settle(self, scope: Scope, session: bytes | None, opened: list[bytes]) -> None:
        """After a request: remember a new session (and who opened it), mark the used one idle, forget a deleted one."""
        now = time.monotonic()
        opener = str(scope.get(OPENER_KEY) or "anonymous")
        for new in opened:
            self.sessions[new] = [0, now]
            self.opener[new] = opener
            self.per_opener.setdefault(opener, OrderedDict())[new] = None
        if session is None or session not in self.sessions:
            return
        if scope.get("method") == "DELETE":
            self._forget(session)
            return
        state = self.sessions[session]
        state[0] = max(0, state[0] - 1)
        state[1] = now

    def victim(self) -> bytes | None:
        """The session to end: the newest idle one of the opener holding the most sessions (None: all are busy)."""
        for _count, opener in sorted(((len(v), k) for k, v in self.per_opener.items()), reverse=True):
            for session in reversed(self.per_opener[opener]):
                if self.sessions[session][0] == 0:
                    return session
        return None

    async def _make_room(self, scope: Scope) -> None:
        while len(self.sessions) >= self.max_sessions:
            victim = self.victim()
            if victim is None:
                return  # every session is busy: the SDK's own limit answers 503
            self._forget(victim)
            self.evicted += 1
            log.info("evicting the newest idle HTTP session of the busiest client (%d kept)", self.max_sessions)
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
