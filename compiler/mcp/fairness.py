"""A fair share of ``toolcat serve`` for every client (issue 36): a global bound on calls, a share per identity.

Identities cost a client nothing (a new MCP session, a new connection, a dropped cookie), so a bound per
identity alone lets ten of them fill every worker. :class:`FairShares` bounds the calls running in the
whole server (``total``, ``--max-calls``) and those of one identity (``share``, ``--client-calls``); the
last quarter of the slots (:data:`RESERVE_FRACTION`) is kept for identities running nothing, and when a
slot frees it goes to the waiting identity that holds the fewest. So a client with nothing running is
served at once while the busy identities number fewer than ``(total - reserve) / share + reserve``
(14 for the defaults: 32 slots, shares of 4, 8 kept), and first when a slot frees otherwise.

A call cut at its time limit answers its client at once and frees its place among the ``total`` calls
running, but its worker thread (Python cannot stop one) still counts against its identity's share
until it really ends, and against :data:`MAX_ABANDONED` such threads in all. So a client whose calls
hang never has more than ``share`` threads, other clients keep the running slots, and the server never
has more than ``total + MAX_ABANDONED`` call threads (before issue 36 one session grew the pool to 362).

:func:`run_sync` is how the MCP call path starts a worker thread: under the slot of the call in effect
(a context variable set by :meth:`FairShares.slot`), else as a plain abandoned-on-cancel thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.to_thread

__all__ = ["MAX_CALLS", "FairShares", "Slot", "run_sync"]

T = TypeVar("T")

#: Calls the whole server runs at once, whoever sends them (``--max-calls``).
MAX_CALLS = 32
#: Threads of calls already cut at their time limit that may still run, in all (then new calls wait).
MAX_ABANDONED = 64
#: The share of ``total`` kept for identities with nothing running (a newcomer is served at once).
RESERVE_FRACTION = 4


@dataclass(eq=False, slots=True)
class Slot:
    """One identity's right to run one call: released when the call's task and every thread it started are done."""

    shares: FairShares
    identity: str
    loop: asyncio.AbstractEventLoop
    holders: int = 1
    abandoned: bool = False

    def hold(self) -> None:
        """A worker thread starts under this slot."""
        self.holders += 1

    def drop(self) -> None:
        """A thread is done with the slot (on the event loop)."""
        self.holders -= 1
        if self.holders == 0:
            self.shares.release(self.identity, abandoned=self.abandoned)

    def task_done(self) -> None:
        """The call answered (or was cut): its running slot is free; a thread still running is abandoned."""
        self.holders -= 1
        if self.holders == 0:
            self.shares.release(self.identity, abandoned=False)
        else:
            self.abandoned = True
            self.shares.abandon()

    def drop_from_thread(self) -> None:
        """A worker thread is done: hand the release to the event loop (the loop may have moved on)."""
        with contextlib.suppress(RuntimeError):  # a closed loop: the server is gone, and its bookkeeping with it
            self.loop.call_soon_threadsafe(self.drop)


@dataclass(eq=False, slots=True)
class _Waiter:
    identity: str
    order: int
    event: anyio.Event = field(default_factory=anyio.Event)
    granted: bool = False


_CURRENT: ContextVar[Slot | None] = ContextVar("toolcat_call_slot", default=None)


class FairShares:
    """At most ``total`` calls at once, at most ``share`` per identity; a free slot goes to the least served."""

    def __init__(self, total: int = MAX_CALLS, share: int = 4, max_abandoned: int = MAX_ABANDONED) -> None:
        if total < 1 or share < 1 or max_abandoned < 0:
            raise ValueError("the call bounds must be at least 1")
        self.total = total
        self.share = min(share, total)
        self.max_abandoned = max_abandoned
        #: slots only an identity with nothing running may take
        self.reserve = total // RESERVE_FRACTION
        #: slots per identity: its running calls and the threads of its calls already cut
        self.held: dict[str, int] = {}
        #: running calls, and threads of cut calls still running
        self.in_use = 0
        self.abandoned = 0
        self.waiting: list[_Waiter] = []
        self._order = itertools.count()

    def running(self, identity: str) -> int:
        """Slots ``identity`` holds (calls waited on, and threads of calls already cut at their limit)."""
        return self.held.get(identity, 0)

    def _take(self, identity: str) -> None:
        self.held[identity] = self.held.get(identity, 0) + 1
        self.in_use += 1

    def abandon(self) -> None:
        """A call was cut while its thread runs on: its running slot is free, the thread counts as abandoned."""
        self.in_use -= 1
        self.abandoned += 1
        self._grant()

    def release(self, identity: str, *, abandoned: bool = False) -> None:
        """Give back one slot of ``identity`` and hand free slots to the waiting identities that hold the fewest."""
        left = self.held.get(identity, 0) - 1
        if left > 0:
            self.held[identity] = left
        else:
            self.held.pop(identity, None)
        if abandoned:
            self.abandoned -= 1
        else:
            self.in_use -= 1
        self._grant()

    def _grant(self) -> None:
        while self.in_use < self.total and self.abandoned < self.max_abandoned and self.waiting:
            open_to_all = self.in_use < self.total - self.reserve
            eligible = [
                w
                for w in self.waiting
                if self.held.get(w.identity, 0) < self.share and (open_to_all or self.held.get(w.identity, 0) == 0)
            ]
            if not eligible:
                return
            chosen = min(eligible, key=lambda w: (self.held.get(w.identity, 0), w.order))
            self.waiting.remove(chosen)
            self._take(chosen.identity)
            chosen.granted = True
            chosen.event.set()

    async def acquire(self, identity: str) -> None:
        """Wait for a slot for ``identity`` (cancellable: a cancelled wait holds nothing)."""
        waiter = _Waiter(identity, next(self._order))
        self.waiting.append(waiter)
        self._grant()
        if waiter.granted:
            return
        try:
            await waiter.event.wait()
        except BaseException:
            if waiter.granted:  # granted in the same tick it was cancelled: give it back
                self.release(identity)
            else:
                self.waiting.remove(waiter)
            raise

    @asynccontextmanager
    async def slot(self, identity: str) -> AsyncIterator[Slot]:
        """Hold a slot for one call; threads started by :func:`run_sync` inside keep it until they end."""
        await self.acquire(identity)
        held = Slot(self, identity, asyncio.get_running_loop())
        token = _CURRENT.set(held)
        try:
            yield held
        finally:
            _CURRENT.reset(token)
            held.task_done()


async def run_sync(function: Callable[[], T]) -> T:
    """Run ``function`` in a worker thread under the current call's slot (abandoned, not awaited, on cancel)."""
    held = _CURRENT.get()
    if held is None:
        return await anyio.to_thread.run_sync(function, abandon_on_cancel=True)
    held.hold()
    lock = threading.Lock()
    state = {"started": False, "cancelled": False}

    def work() -> Any:
        with lock:
            if state["cancelled"]:  # cut before the thread began: nothing runs, the slot is already dropped
                return None
            state["started"] = True
        try:
            return function()
        finally:
            held.drop_from_thread()

    try:
        result: T = await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
    except BaseException:
        with lock:
            never_ran = not state["started"]
            state["cancelled"] = never_ran
        if never_ran:
            held.drop()
        raise
    return result
