"""The change watcher: notices a new registry_version, swaps it in, and tells every client.

It polls the catalogue (a folder's catalog.json stat, or ``Catalog.refresh()`` for a URL: a conditional GET);
when a new version is published it refreshes under the version gate (the calls in flight finish on the old
version), lets the server read its tools again, and announces the change twice: ``list_changed``
notifications to each handshake-era session it tracked, and events on the subscription bus
(``subscriptions/listen``) for 2026-07-28 clients.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)

from ..format.envelope import ReaderError
from ..format.types import Json
from ..reader.catalog import Catalog
from . import fleet

__all__ = ["FOLDER_POLL_SECONDS", "MAX_TRACKED_SESSIONS", "URL_POLL_SECONDS", "ChangeWatcher"]

log = logging.getLogger(__name__)

#: Folders are polled often (a stat is cheap); URLs less often (each poll is a conditional GET).
FOLDER_POLL_SECONDS = 1.0
URL_POLL_SECONDS = 30.0
#: Legacy (handshake) sessions kept for change notifications; the oldest are forgotten beyond this.
MAX_TRACKED_SESSIONS = 10_000

#: A folder's catalog.json (mtime, size), or None for a URL or a file that cannot be read.
Stamp = tuple[int, int] | None


@dataclass
class ChangeWatcher:
    """Polls one catalogue for new registry versions and announces them to every client."""

    catalog: Catalog
    gate: fleet.VersionGate
    #: what the server reads again for a new version (its tools), before clients are told
    on_change: Callable[[], None]
    #: the folder whose catalog.json is watched; None for a URL (each poll is ``Catalog.refresh()``)
    watch_path: Path | None = None
    #: seconds between polls (0: none); None: :data:`FOLDER_POLL_SECONDS` for a folder, else :data:`URL_POLL_SECONDS`
    poll_seconds: float | None = None
    bus: InMemorySubscriptionBus = field(default_factory=InMemorySubscriptionBus)
    #: the handshake-era sessions to notify, by id (at most :data:`MAX_TRACKED_SESSIONS`)
    _sessions: dict[int, ServerSession] = field(default_factory=dict)
    #: new versions swapped in so far
    changes: int = 0
    #: the seconds between polls in effect (``poll_seconds``, or its default for a folder or a URL)
    interval: float = field(init=False, default=0.0)

    def __post_init__(self) -> None:
        default = FOLDER_POLL_SECONDS if self.watch_path is not None else URL_POLL_SECONDS
        self.interval = default if self.poll_seconds is None else self.poll_seconds

    async def track_sessions(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[HandlerResult]],
    ) -> HandlerResult:
        """Middleware: remember each handshake-era connection (once, at notifications/initialized) to notify it."""
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            if len(self._sessions) >= MAX_TRACKED_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[id(ctx.session)] = ctx.session
        return result

    async def notify_changed(self) -> int:
        """Tell every client that tools, resources and prompts changed; returns how many sessions were reached."""
        reached = 0
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
                reached += 1
            except Exception as exc:
                log.debug("dropping a closed MCP session: %s", exc)
                self._sessions.pop(key, None)
        for event in (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged()):
            await self.bus.publish(event)
        return reached

    def _stamp(self) -> Stamp:
        if self.watch_path is None:
            return None
        try:
            stat = (self.watch_path / "catalog.json").stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    async def check_for_update(self, last: Stamp) -> tuple[bool, Stamp]:
        """Refresh when the folder's catalog.json changed (or always, for a URL); True when a new version loaded."""
        stamp = self._stamp()
        if self.watch_path is not None and stamp == last:
            return False, last
        previous = self.catalog.registry_version
        try:
            async with self.gate.writing():  # fleet (docs/deploy.md): the calls in flight finish on the old version
                changed = await anyio.to_thread.run_sync(self.catalog.refresh)
        except ReaderError as exc:
            log.warning("cannot refresh the catalogue (%s): still serving %s", exc.message, previous)
            return False, last
        if changed:
            self.changes += 1
            self.on_change()
            reached = await self.notify_changed()
            log.info(
                "registry_version %s -> %s; notified %d session(s)", previous, self.catalog.registry_version, reached
            )
        return changed, stamp

    async def watch(self) -> None:
        """Poll for new registry versions until cancelled."""
        last = self._stamp()
        while True:
            await anyio.sleep(self.interval)
            try:
                _, last = await self.check_for_update(last)
            except Exception:
                log.exception("the catalogue watcher failed; it keeps polling")

    @asynccontextmanager
    async def lifespan(self, _server: Server[Any]) -> AsyncIterator[Json]:
        """The server's lifespan: the watcher polls while the server runs (not at all when ``poll_seconds`` is 0)."""
        async with anyio.create_task_group() as group:
            if self.interval > 0:
                group.start_soon(self.watch)
            yield {}
            group.cancel_scope.cancel()
