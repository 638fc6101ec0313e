"""The one interface of ``toolcat serve``'s own state, and what every shared backend has in common.

serve keeps three kinds of state beside the catalogue it reads (which is immutable and needs none):

* **idempotency records**: the first answer to each ``idempotency_key``, replayed on a retry;
* **per-client state**: the namespaced dialect's working set of described tools, by the client's MCP
  session (:mod:`.working`; a stateless request has no session and so no per-client state);
* **the audit sink**: one record per operation.

:class:`StateStore` holds the three. ``memory`` (:mod:`.memory`) keeps them in the process, as a lone
server always did; ``sqlite:PATH`` (:mod:`.sqlite`) in one file that several processes on one host
share; ``redis://HOST:PORT/DB`` (:mod:`.redis`) in a Redis server that replicas on many hosts share.

Keys are the calling client's (:func:`~toolcat.reader.execution.idempotency.client_scope`, as in the
in-process store): the same key from two clients names two calls, on every replica.

Exactly once across replicas: :class:`SharedIdempotency` claims a key atomically (a lease the backend
expires if its holder dies) before the call runs; a replica that finds the key claimed waits for the
answer and replays it, or, past ``wait_seconds``, answers ``IN_PROGRESS`` (retry later with the same
key). It never runs the tool a second time while the claim or the answer lives. The TTL and the caps
are the in-process store's (:mod:`toolcat.reader.execution.idempotency`).

Errors: a store that cannot be reached raises :class:`ReaderError` ``UNAVAILABLE`` (a retry may cure
it), which the reader turns into the call's envelope; nothing here raises anything else to a caller.
"""

from __future__ import annotations

import logging
import os
import time
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ...format.envelope import ReaderError
from ...format.types import Json
from ...reader.audit import AuditSink, audit_line
from ...reader.execution.idempotency import (
    IDEMPOTENCY_MAX_BYTES,
    IDEMPOTENCY_MAX_ENTRY_BYTES,
    IDEMPOTENCY_MAX_KEYS,
    IDEMPOTENCY_TTL_SECONDS,
    IdempotencyRecords,
    KeptAnswers,
    scoped,
)

log = logging.getLogger(__name__)

#: Seconds a replica holds a claim on a key without answering before another may take it (a dead holder).
CLAIM_LEASE_SECONDS = 60.0
#: Seconds a call waits for another replica's answer to the same key before it answers IN_PROGRESS.
CLAIM_WAIT_SECONDS = 15.0
#: How often a waiting call looks for the answer.
CLAIM_POLL_SECONDS = 0.05
#: Clients whose working sets a shared store keeps, and for how long after their last change.
MAX_CLIENTS = 10_000
CLIENT_TTL_SECONDS = 24 * 3600.0
#: Audit records a shared store keeps (the oldest go first); a file (--audit) keeps everything.
MAX_AUDIT_RECORDS = 100_000
#: The environment variable holding a Redis password (never part of --state, so never logged).
PASSWORD_ENV = "TOOLCAT_STATE_PASSWORD"  # noqa: S105 - the name of a variable, not a secret


def unavailable(store: str, exc: BaseException) -> ReaderError:
    """The error of a state store that cannot be reached: retryable, naming the store (never its password)."""
    return ReaderError(
        "UNAVAILABLE",
        f"serve's state store {store} cannot be reached ({type(exc).__name__}): nothing was run or kept",
        details={"state": store},
        hints=["Retry the same call in a few seconds (with the same idempotency_key, if it had one)."],
    )


def in_progress(key: str, tool_id: str, waited: float) -> ReaderError:
    """The answer to a retry whose first call is still running on another replica."""
    return ReaderError(
        "IN_PROGRESS",
        f"a call with idempotency_key {key!r} is still running (waited {waited:g} s for its answer)",
        details={"idempotency_key": key},
        help_path=tool_id,
        hints=["Retry the same call with the same idempotency_key later: it replays the answer once it exists."],
    )


class StoredAudit(ABC):
    """A shared store's audit sink: each record becomes one audit line; a failed write is logged once, never raised."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self._warned = False

    @abstractmethod
    def keep(self, line: str) -> None:
        """Write one audit line to the store (ReaderError UNAVAILABLE when it cannot be reached)."""

    def record(self, **fields: Any) -> None:
        """Keep one record; never raises."""
        try:
            self.keep(audit_line(self.session_id, **fields))
        except ReaderError as exc:
            if not self._warned:
                log.warning("cannot write the audit record: %s", exc.message)
                self._warned = True


class SharedIdempotency(KeptAnswers):
    """Idempotency records shared by replicas: claim, wait or replay; a backend supplies five primitives."""

    def __init__(
        self,
        *,
        max_keys: int = IDEMPOTENCY_MAX_KEYS,
        max_bytes: int = IDEMPOTENCY_MAX_BYTES,
        max_entry_bytes: int = IDEMPOTENCY_MAX_ENTRY_BYTES,
        ttl_seconds: float = IDEMPOTENCY_TTL_SECONDS,
        lease_seconds: float = CLAIM_LEASE_SECONDS,
        wait_seconds: float = CLAIM_WAIT_SECONDS,
    ) -> None:
        self.max_keys, self.max_bytes, self.max_entry_bytes = max_keys, max_bytes, max_entry_bytes
        self.ttl_seconds, self.lease_seconds, self.wait_seconds = ttl_seconds, lease_seconds, wait_seconds

    # -- what a backend supplies (each may raise ReaderError UNAVAILABLE) ----------------------------
    @abstractmethod
    def claim(self, key: str, token: str) -> bool:
        """Take ``key`` for ``token`` unless another live claim holds it; True when taken (atomic)."""

    @abstractmethod
    def release(self, key: str, token: str) -> None:
        """Drop the claim on ``key`` if ``token`` still holds it."""

    @abstractmethod
    def load(self, key: str) -> tuple[str, str, str] | None:
        """(tool_id, args digest, answer JSON text) kept for ``key`` and not expired, or None."""

    @abstractmethod
    def save(self, key: str, tool_id: str, digest: str, text: str, size: int) -> None:
        """Keep one answer, then expire and evict the oldest beyond the TTL and the caps."""

    @abstractmethod
    def count(self) -> int:
        """How many answers are kept."""

    # -- the reader's interface (IdempotencyRecords) ---------------------------------------------
    def __len__(self) -> int:
        return self.count()

    @contextmanager
    def lock(self, key: str | None) -> Iterator[None]:
        """Hold ``key`` while its call runs; replay an answer another replica kept; IN_PROGRESS past the wait."""
        if key is None:
            yield
            return
        token = os.urandom(12).hex()
        started = time.monotonic()
        stored = scoped(key)  # the calling client's key (client_scope): no client replays another's answer
        while True:
            if self.load(stored) is not None:  # answered (here or elsewhere): get() replays it, nothing runs
                yield
                return
            if self.claim(stored, token):
                break
            waited = time.monotonic() - started
            if waited >= self.wait_seconds:
                raise in_progress(key, "root", round(waited, 1))
            time.sleep(CLAIM_POLL_SECONDS)
        try:
            yield
        finally:
            try:
                self.release(stored, token)
            except ReaderError as exc:  # the lease expires on its own
                log.warning("cannot release idempotency claim: %s", exc.message)


class ClientStates(ABC):
    """Per-client state of the namespaced dialect: each client's working set, as a list of JSON records."""

    @abstractmethod
    def load(self, client: str) -> list[Json]:
        """The records kept for ``client`` (empty when none)."""

    @abstractmethod
    def save(self, client: str, records: list[Json]) -> None:
        """Replace ``client``'s records (bounded: at most MAX_CLIENTS clients, each for CLIENT_TTL_SECONDS)."""

    @abstractmethod
    def clear_all(self) -> None:
        """Forget every client's records (a new registry_version was loaded)."""


class StateStore(ABC):
    """serve's state: idempotency records, per-client state and the audit sink, in one backend."""

    #: ``memory``, ``sqlite:PATH`` or ``redis://HOST:PORT/DB`` (never a password).
    name: str
    #: True when other processes see the same state (sqlite, redis).
    shared: bool
    #: True when the store spans hosts (redis): serve's HTTP transport is then stateless unless told otherwise.
    many_hosts: bool = False
    idempotency: IdempotencyRecords
    clients: ClientStates

    @abstractmethod
    def audit_sink(self, session_id: str, path: str | None) -> AuditSink | None:
        """Where audit records go: the file ``path`` when given, else the store's own sink (None for memory)."""

    @abstractmethod
    def ping(self) -> None:
        """Return when the store answers; raise ReaderError UNAVAILABLE when it does not (for /readyz)."""

    def close(self) -> None:  # noqa: B027 - most backends have nothing to close
        """Release connections (the process is ending)."""
