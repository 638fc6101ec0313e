"""``--state memory``: serve's state in the process, as a lone server keeps it (lost on restart, not shared)."""

from __future__ import annotations

import time
from collections import OrderedDict

from ...format.types import Json
from ...reader.audit import AuditLog, AuditSink
from ...reader.execution.idempotency import IdempotencyStore
from .base import CLIENT_TTL_SECONDS, MAX_CLIENTS, ClientStates, StateStore


class MemoryClients(ClientStates):
    """Working sets by client key, in a dict: the oldest client leaves beyond MAX_CLIENTS or its TTL."""

    def __init__(self, max_clients: int = MAX_CLIENTS, ttl_seconds: float = CLIENT_TTL_SECONDS) -> None:
        self.max_clients, self.ttl_seconds = max_clients, ttl_seconds
        self._records: OrderedDict[str, tuple[float, list[Json]]] = OrderedDict()

    def load(self, client: str) -> list[Json]:
        """The records kept for ``client`` (empty when none or expired)."""
        found = self._records.get(client)
        if found is None or found[0] < time.monotonic() - self.ttl_seconds:
            return []
        return list(found[1])

    def save(self, client: str, records: list[Json]) -> None:
        """Replace ``client``'s records; the least recently changed client leaves beyond the cap."""
        self._records[client] = (time.monotonic(), list(records))
        self._records.move_to_end(client)
        while len(self._records) > self.max_clients:
            self._records.popitem(last=False)

    def clear_all(self) -> None:
        """Forget every client's records."""
        self._records.clear()


class MemoryState(StateStore):
    """Everything in this process: today's IdempotencyStore, a dict of working sets, the --audit file."""

    name = "memory"
    shared = False

    def __init__(self) -> None:
        self.idempotency = IdempotencyStore()
        self.clients = MemoryClients()

    def audit_sink(self, session_id: str, path: str | None) -> AuditSink | None:
        """The --audit file, or no audit at all (memory keeps no records of its own)."""
        return AuditLog(path, session_id) if path is not None else None

    def ping(self) -> None:
        """Memory always answers."""
