"""What a replica of ``toolcat serve`` needs behind a load balancer: health, readiness, drain, one version per answer.

* ``GET /healthz``: 200 while the process serves HTTP (alive).
* ``GET /readyz``: 200 when the catalogue is loaded, the state store answers and the replica is not
  draining; 503 with the reason otherwise (a load balancer stops sending it work).
* **Drain** (:class:`Drain`): on SIGTERM the replica turns not-ready, answers every new ``/mcp``
  request with HTTP 503, ``Retry-After: 1`` and a JSON-RPC error saying it is draining (a load
  balancer retries it on another replica), lets the calls in flight finish (at most ``drain_seconds``),
  then stops.
* **One version per answer** (:class:`VersionGate`): a reload waits for the calls in flight and new
  calls wait for the reload, so no answer mixes two catalogue versions; each answer names the
  registry_version it was read from (``_meta`` of the MCP result).
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio.to_thread

from ..format.envelope import ReaderError
from . import telemetry

log = logging.getLogger(__name__)

#: Seconds a draining replica waits for its calls in flight before it stops anyway.
DRAIN_SECONDS = 20.0
#: The key of the MCP result's ``_meta`` that names the registry_version the answer was read from.
VERSION_META_KEY = "toolcat.dev/registry_version"


class VersionGate:
    """A readers-writer lock with writer preference, in the event loop: calls read one catalogue version, a reload writes."""

    def __init__(self) -> None:
        self._cond = asyncio.Condition()
        self._readers = 0
        self._writing = False
        self._writers_waiting = 0

    @asynccontextmanager
    async def reading(self) -> AsyncIterator[None]:
        """Hold the current version while one call runs (it waits while a reload runs or waits)."""
        async with self._cond:
            await self._cond.wait_for(lambda: not self._writing and not self._writers_waiting)
            self._readers += 1
        try:
            yield
        finally:
            async with self._cond:
                self._readers -= 1
                self._cond.notify_all()

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[None]:
        """Hold every call off while a reload runs (it starts once the calls in flight finished)."""
        async with self._cond:
            self._writers_waiting += 1
            await self._cond.wait_for(lambda: not self._writing and not self._readers)
            self._writers_waiting -= 1
            self._writing = True
        try:
            yield
        finally:
            async with self._cond:
                self._writing = False
                self._cond.notify_all()


class Drain:
    """ASGI middleware: health and readiness endpoints, the count of requests in flight, refusal while draining."""

    def __init__(self, app: Any, ready: Callable[[], str | None], drain_seconds: float = DRAIN_SECONDS) -> None:
        self.app = app
        self.ready = ready  # None when ready, else why not
        self.drain_seconds = drain_seconds
        self.draining = False
        #: set once a signal drained the server: the process then exits without joining abandoned call threads
        self.signalled = False
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        """Answer /healthz and /readyz; refuse /mcp while draining; count the requests in flight."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if path == "/healthz":
            await _json(send, 200, {"status": "alive"})
            return
        if path == "/readyz":
            reason = (
                "draining: finishing the calls in flight"
                if self.draining
                else await anyio.to_thread.run_sync(self.ready)
            )
            await _json(
                send,
                503 if reason else 200,
                {"status": "not ready", "reason": reason} if reason else {"status": "ready"},
            )
            return
        if self.draining:
            await _json(send, 503, _draining_error(), retry_after=True)
            return
        self.in_flight += 1
        self._idle.clear()
        try:
            await self.app(scope, receive, send)
        finally:
            self.in_flight -= 1
            if self.in_flight == 0:
                self._idle.set()

    async def drain(self) -> int:
        """Refuse new requests and wait (at most ``drain_seconds``) for those in flight; returns how many remained."""
        self.draining = True
        log.info("draining: %d request(s) in flight", self.in_flight)
        try:
            await asyncio.wait_for(self._idle.wait(), self.drain_seconds)
        except TimeoutError:
            log.warning("drain: %d request(s) still in flight after %g s; stopping", self.in_flight, self.drain_seconds)
        return self.in_flight


def _draining_error() -> dict[str, Any]:
    """The JSON-RPC error a draining replica answers: retryable, and says so."""
    return {
        "jsonrpc": "2.0",
        "id": None,
        "error": {
            "code": -32000,
            "message": "this toolcat replica is shutting down (draining); retry the request, another replica answers",
            "data": {"code": "UNAVAILABLE", "retryable": True, "retry_after_s": 1},
        },
    }


async def _json(send: Any, status: int, body: dict[str, Any], *, retry_after: bool = False) -> None:
    data = json.dumps(body).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    if retry_after:
        headers.append((b"retry-after", b"1"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


def readiness(catalog_version: Callable[[], str], ping: Callable[[], None]) -> Callable[[], str | None]:
    """The readiness check of a replica: a loaded catalogue and a state store that answers."""

    def check() -> str | None:
        if not catalog_version():
            return "no catalogue loaded"
        try:
            ping()
        except ReaderError as exc:
            return exc.message
        return None

    return check


def drain_on_sigterm(server: Any, drain: Drain) -> None:
    """On SIGTERM (and SIGINT): drain, then tell uvicorn to stop (call once the server has started)."""
    loop = asyncio.get_running_loop()

    async def stop() -> None:
        await drain.drain()
        drain.signalled = True
        server.should_exit = True

    def on_signal() -> None:
        if not drain.draining:
            loop.create_task(stop())  # noqa: RUF006 - the server outlives it; uvicorn exits when it sets should_exit

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)


def exit_after_drain(drain: Drain) -> None:
    """After a signal drained the server: exit 0 now, without waiting for threads of calls already abandoned.

    A call cut at ``--call-timeout`` has had its answer (UNAVAILABLE) and keeps a worker thread until its handler
    returns; a normal interpreter exit would join it. uvicorn's own signal handling ends such a process by
    re-raising the signal; a drained replica exits 0 instead, having let every call in flight finish or time out,
    and having sent the spans and metrics it still held to the OTLP endpoint.
    """
    if drain.signalled:
        telemetry.flush()  # os._exit skips the OpenTelemetry SDK's atexit export of what it still holds
        logging.shutdown()
        os._exit(0)
