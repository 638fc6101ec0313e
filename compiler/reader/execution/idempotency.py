"""Idempotency keys: a retried call with the same key and arguments gets the first answer back.

Keys are scoped per client: the same key from two clients names two calls, so one client can
neither replay another's answer nor learn, from a CONFLICT, which tool another called. A server
that serves several clients through one catalogue runs each call inside :func:`client_scope`
(``toolcat serve`` does, per MCP connection); a host using :class:`~toolcat.reader.catalog.Catalog`
directly for several users does the same.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import threading
import time
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

from ...format.envelope import ReaderError, is_error
from ...format.types import Json

#: Idempotency keys kept per session, the JSON bytes of their answers in all and for one, and for how long.
IDEMPOTENCY_MAX_KEYS = 10_000


IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024


IDEMPOTENCY_MAX_ENTRY_BYTES = 1024 * 1024


IDEMPOTENCY_TTL_SECONDS = 24 * 3600.0


_CLIENT: contextvars.ContextVar[str] = contextvars.ContextVar("toolcat_client", default="")


@contextmanager
def client_scope(client: str) -> Iterator[None]:
    """Make ``client`` the owner of the idempotency keys used inside this block (this thread or task only)."""
    token = _CLIENT.set(str(client))
    try:
        yield
    finally:
        _CLIENT.reset(token)


def scoped(key: str) -> str:
    """``key`` as the store holds it: prefixed by the current client (:func:`client_scope`)."""
    return f"{_CLIENT.get()}\x00{key}"


#: Errors a retry may cure: their answers are not kept for idempotency keys, so a retry runs again.
TRANSIENT_CODES = frozenset({"UNAVAILABLE", "INTERNAL"})


def conflict(key: str, first_op: str, tool_id: str) -> ReaderError:
    """CONFLICT: ``key`` was kept for another call (another op, or other arguments), in every store."""
    return ReaderError(
        "CONFLICT",
        f"idempotency_key {key!r} was already used for a different call",
        details={"first_op": first_op},
        help_path=tool_id,
        hints=["Use a new key for a new operation; reuse a key only to retry the same call."],
        next_action={"op": "help", "args": {"path": tool_id}},
    )


def record_text(answer: Json) -> str:
    """An answer as the JSON text a store keeps (and measures against its byte caps)."""
    return json.dumps(answer, ensure_ascii=False, default=repr)


class KeptAnswers(ABC):
    """The replay rules every idempotency store shares; a store supplies where answers are kept (load, save).

    ``get`` replays the answer kept for a key (CONFLICT when the key was kept for another call); ``put`` keeps an
    answer unless it is a transient error (:data:`TRANSIENT_CODES`, so a retry runs again) or larger than
    ``max_entry_bytes`` (then it says so in ``warnings``). Keys are scoped to the calling client (:func:`scoped`).
    """

    max_entry_bytes: int

    @abstractmethod
    def load(self, stored: str) -> tuple[str, str, str] | None:
        """(tool_id, args digest, answer JSON text) kept under the scoped key ``stored``, or None."""

    @abstractmethod
    def save(self, stored: str, tool_id: str, digest: str, text: str, size: int) -> None:
        """Keep one answer under the scoped key ``stored``, then expire and evict beyond the TTL and the caps."""

    def get(self, key: str, tool_id: str, args_digest: str) -> Json | None:
        """A copy of the answer kept for ``key``; None when there is none; CONFLICT for another call's key."""
        found = self.load(scoped(key))
        if found is None:
            return None
        first_op, first_args, text = found
        if (first_op, first_args) != (tool_id, args_digest):
            raise conflict(key, first_op, tool_id)
        answer: Json = json.loads(text)
        return answer

    def put(self, key: str, tool_id: str, args_digest: str, answer: Json, warnings: list[str]) -> None:
        """Keep ``answer`` for ``key`` unless it is a transient error or too large (then say so in ``warnings``)."""
        if is_error(answer) and answer["error"].get("code") in TRANSIENT_CODES:
            return
        text = record_text(answer)
        stored = scoped(key)
        size = len(text.encode("utf-8")) + len(stored) + len(tool_id) + len(args_digest)
        if size > self.max_entry_bytes:
            warnings.append(
                f"the answer ({size} bytes) is larger than the {self.max_entry_bytes} bytes kept per "
                f"idempotency key, so it was not kept: a retry with idempotency_key {key!r} runs again"
            )
            return
        self.save(stored, tool_id, args_digest, text, size)


class IdempotencyStore(KeptAnswers):
    """The first answer to each idempotency key, replayed when the same call is retried; bounded and expiring.

    A retry with the key of an earlier call gets that call's answer (a success, or a deterministic
    error) without running again; the same key with another op or other args is CONFLICT. Transient
    errors (:data:`TRANSIENT_CODES`) are not kept, so a retry runs again. At most ``max_keys`` answers
    and ``max_bytes`` of JSON are kept, each for ``ttl_seconds``; the oldest go first. An answer larger
    than ``max_entry_bytes`` is not kept (the call says so in a warning). Calls with the same key run
    one at a time.
    """

    def __init__(
        self,
        *,
        max_keys: int = IDEMPOTENCY_MAX_KEYS,
        max_bytes: int = IDEMPOTENCY_MAX_BYTES,
        max_entry_bytes: int = IDEMPOTENCY_MAX_ENTRY_BYTES,
        ttl_seconds: float = IDEMPOTENCY_TTL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_keys, self.max_bytes, self.max_entry_bytes = max_keys, max_bytes, max_entry_bytes
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.bytes = 0
        #: key -> (tool_id, sha256 of the canonical args, the answer as JSON text, its size, when it was kept)
        self._entries: OrderedDict[str, tuple[str, str, str, int, float]] = OrderedDict()
        self._guard = threading.Lock()
        self._locks: dict[str, list[Any]] = {}  # key -> [lock, callers holding or waiting]: only keys in use

    def __len__(self) -> int:
        return len(self._entries)

    @contextmanager
    def lock(self, key: str | None) -> Iterator[None]:
        """Hold the key while its call runs (a concurrent retry waits, then replays); nothing for no key."""
        if key is None:
            yield
            return
        key = scoped(key)
        with self._guard:
            slot = self._locks.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            with slot[0]:
                yield
        finally:
            with self._guard:
                slot[1] -= 1
                if slot[1] == 0:
                    del self._locks[key]

    def load(self, stored: str) -> tuple[str, str, str] | None:
        """The answer kept under ``stored`` and not expired."""
        with self._guard:
            self._expire()
            found = self._entries.get(stored)
        return None if found is None else found[:3]

    def save(self, stored: str, tool_id: str, digest: str, text: str, size: int) -> None:
        """Keep one answer; the oldest go first beyond ``max_keys``, ``max_bytes`` and the TTL."""
        with self._guard:
            self._entries[stored] = (tool_id, digest, text, size, self.clock())
            self.bytes += size
            self._expire()
            while self._entries and (len(self._entries) > self.max_keys or self.bytes > self.max_bytes):
                self._pop_oldest()

    def _expire(self) -> None:
        oldest = self.clock() - self.ttl_seconds
        while self._entries and next(iter(self._entries.values()))[4] < oldest:
            self._pop_oldest()

    def _pop_oldest(self) -> None:
        _, entry = self._entries.popitem(last=False)
        self.bytes -= entry[3]


class IdempotencyRecords(Protocol):
    """Where a session keeps idempotency records: :class:`IdempotencyStore`, or a store shared by replicas.

    ``toolcat serve --state`` picks one (toolcat.mcp.state).
    """

    def lock(self, key: str | None) -> contextlib.AbstractContextManager[None]:
        """Claim ``key`` while its call runs; a concurrent call with it waits, then replays (or is IN_PROGRESS)."""
        ...

    def get(self, key: str, tool_id: str, args_digest: str) -> Json | None:
        """The answer kept for ``key``; None when there is none; CONFLICT for another call's key."""
        ...

    def put(self, key: str, tool_id: str, args_digest: str, answer: Json, warnings: list[str]) -> None:
        """Keep ``answer`` for ``key`` (not a transient error, not one too large)."""
        ...
