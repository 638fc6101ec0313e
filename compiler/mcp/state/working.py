"""The namespaced dialect's per-client state, kept in serve's state store: each client's working set.

What is left of per-client state after issue 24 (any tool the policy allows is callable by its alias,
described or not) is the **working set**: the tools a handshake-era client described, which its
``tools/list`` shows and whose arrival it hears as ``notifications/tools/list_changed``. It is keyed
by what the protocol carries, the client's ``Mcp-Session-Id`` (``http:<id>``; ``stdio`` for the one
stdio client). A stateless request (2026-07-28, or any request to ``serve --stateless``) carries no
session, so it has no working set: its ``tools/list`` is the public one and it calls described tools
by alias on any replica.

Each client's set is one list of records in :class:`~.base.ClientStates` (memory, SQLite or Redis),
most recently described or called last, at most ``WORKING_SET_SIZE`` tools; the store keeps at most ``MAX_CLIENTS`` clients for
``CLIENT_TTL_SECONDS`` after their last change. Every record names the registry_version it was
described under, and a read drops records of any other version: after a reload no client sees a
tool the new version may have changed or removed, without one replica wiping another's records.

The working set is a convenience (the call works without it), so a store that cannot be reached
never fails a request: the set reads as empty and an addition is skipped, with one warning.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ...format.envelope import ReaderError
from ...format.types import Json
from ..discovery import WORKING_SET_SIZE, CatalogTool
from .base import ClientStates

log = logging.getLogger(__name__)


def tool_record(tool: CatalogTool, version: str) -> Json:
    """A described tool as the JSON record a store keeps."""
    return {
        "registry_version": version,
        "name": tool.name,
        "tool_id": tool.tool_id,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "annotations": tool.annotations,
    }


def record_tool(record: Json) -> CatalogTool | None:
    """The tool a record holds, or None for a record that is not one (a store shared with another release)."""
    try:
        return CatalogTool(
            str(record["name"]),
            str(record["tool_id"]),
            str(record["description"]),
            dict(record["input_schema"]),
            dict(record["annotations"]),
        )
    except (KeyError, TypeError, ValueError):
        return None


class StoredWorkingSet:
    """One client's described tools, read from and written to the store (the face of discovery.WorkingSet)."""

    def __init__(self, sets: WorkingSets, client: str) -> None:
        self.sets, self.client = sets, client

    def _records(self) -> list[Json]:
        version = self.sets.version()
        try:
            kept = self.sets.clients.load(self.client)
        except ReaderError as exc:
            self.sets.warn(exc)
            return []
        return [r for r in kept if isinstance(r, dict) and r.get("registry_version") == version]

    def add(self, tool: CatalogTool) -> bool:
        """Keep ``tool`` callable and listed; True when the client's list of tools changed."""
        records = self._records()
        known = next((record_tool(r) for r in records if r.get("name") == tool.name), None)
        records = [r for r in records if r.get("name") != tool.name]
        records.append(tool_record(tool, self.sets.version()))
        changed = known != tool or len(records) > self.sets.size
        try:
            self.sets.clients.save(self.client, records[-self.sets.size :])
        except ReaderError as exc:
            self.sets.warn(exc)
            return False
        return changed

    def get(self, name: str) -> CatalogTool | None:
        """The described tool called ``name`` (marked as just used: the least recently used leave first), or None."""
        records = self._records()
        found = next((r for r in records if r.get("name") == name), None)
        if found is None:
            return None
        if records[-1] is not found:  # a write only when the order changes
            try:
                self.sets.clients.save(self.client, [*(r for r in records if r is not found), found])
            except ReaderError as exc:
                self.sets.warn(exc)
        return record_tool(found)

    def tools(self) -> list[CatalogTool]:
        """The described tools, least recently used first."""
        return [tool for tool in map(record_tool, self._records()) if tool is not None]

    def clear(self) -> None:
        """Forget this client's tools."""
        try:
            self.sets.clients.save(self.client, [])
        except ReaderError as exc:
            self.sets.warn(exc)


class WorkingSets:
    """Every client's working set in one :class:`ClientStates`, for the registry_version ``version()`` names."""

    def __init__(self, clients: ClientStates, version: Callable[[], str], size: int = WORKING_SET_SIZE) -> None:
        self.clients, self.version, self.size = clients, version, size
        self._warned = False

    def of(self, client: str) -> StoredWorkingSet:
        """The working set of one client (by its session key)."""
        return StoredWorkingSet(self, client)

    def warn(self, exc: ReaderError) -> None:
        """Say once that the store cannot keep working sets (requests go on without them)."""
        if not self._warned:
            log.warning("working sets unavailable, tools/list shows no described tools: %s", exc.message)
            self._warned = True
