"""serve's own state behind one interface: ``memory``, ``sqlite:PATH`` (one host) or ``redis://HOST:PORT/DB`` (many).

The face of the package: :func:`state_spec` says which store ``serve`` uses when ``--state`` is not
given, :func:`open_state` opens what ``--state`` names, :func:`http_stateless` says whether the HTTP
transport keeps MCP sessions; :class:`StateStore` is the interface (:mod:`.base`); one module per
backend (:mod:`.memory`, :mod:`.sqlite`, :mod:`.redis`); :class:`WorkingSets` keeps the namespaced
dialect's per-client state in a store (:mod:`.working`).

The default (docs/deploy.md, "State"): over HTTP, SQLite in a per-user file named after the catalogue
(:func:`default_state_path`), so several serve processes of one catalogue on one host share their
idempotency records and audit; over stdio, memory (a stdio server is one client's private process:
there is nothing to share, and a shared file would let independent clients replay each other's keys).
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path
from typing import Any

from ...format import settings
from .base import StateStore
from .working import StoredWorkingSet, WorkingSets

__all__ = [
    "StateStore",
    "StoredWorkingSet",
    "WorkingSets",
    "default_state_path",
    "http_stateless",
    "open_state",
    "state_spec",
]

log = logging.getLogger(__name__)

#: The environment variable of the per-user state folder (XDG Base Directory); ``~/.local/state`` when unset.
STATE_HOME_ENV = "XDG_STATE_HOME"


def default_state_path(location: str) -> Path:
    """The per-user SQLite file of one catalogue: ``$XDG_STATE_HOME/toolcat/serve-<hash>.sqlite``.

    ``<hash>`` is the first 16 hex digits of the sha256 of the catalogue's location (a folder's absolute
    path, or the URL as given), so every serve process of one catalogue finds the same file, and two
    catalogues never share one. It is never inside the catalogue folder.
    """
    is_url = location.startswith(("http://", "https://"))
    key = location if is_url else str(Path(location).resolve())
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    return settings.state_home() / f"serve-{digest}.sqlite"


def state_spec(spec: str | None, location: str, transport: str) -> str:
    """The ``--state`` serve uses: ``spec`` when given, else sqlite at :func:`default_state_path` (HTTP) or memory.

    The default folder is created (mode 0700) when missing; when it cannot be, serve warns and keeps its state in
    memory rather than refusing to start. A ``sqlite:`` file inside a local catalogue folder is a ValueError:
    toolcat never writes into the catalogue it reads (a rebuild would swap the file away).
    """
    if spec is None:
        if transport != "http":
            return "memory"
        path = default_state_path(location)
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            log.warning(
                "cannot create %s (%s): serve's state is kept in memory; give --state sqlite:PATH to share it",
                path.parent,
                exc.strerror or exc,
            )
            return "memory"
        spec = f"sqlite:{path}"
    _refuse_inside_catalogue(spec, location)
    return spec


def _refuse_inside_catalogue(spec: str, location: str) -> None:
    if not spec.startswith("sqlite:") or location.startswith(("http://", "https://")):
        return
    path = Path(spec.removeprefix("sqlite:").removeprefix("//")).resolve()
    if path.is_relative_to(Path(location).resolve()):
        raise ValueError(
            f"--state {spec!r} is inside the catalogue folder {location}: toolcat never writes into the catalogue "
            "it serves (a rebuild replaces that folder); put the file elsewhere, e.g. --state sqlite:/var/lib/toolcat/state.db"
        )


def http_stateless(stateless: bool | None, store: StateStore) -> bool:
    """Whether the HTTP transport answers without MCP sessions: as the operator said, else when the store spans hosts.

    Stateful (the default for memory and sqlite): one process keeps each handshake-era client's session, so it can
    push ``list_changed`` notifications and list a client's described tools. Stateless (``--stateless``, and the
    default for redis): any replica answers any request, so a balancer needs no stickiness.
    """
    return store.many_hosts if stateless is None else stateless


def open_state(spec: str, **limits: Any) -> StateStore:
    """The store ``--state`` names; ValueError saying the accepted forms for anything else.

    ``limits`` go to the shared idempotency records (``wait_seconds``, ``lease_seconds``, the caps).
    """
    text = spec.strip()
    if text == "memory":
        from .memory import MemoryState  # noqa: PLC0415 - one backend per process

        return MemoryState()
    if text.startswith("sqlite:"):
        path = text.removeprefix("sqlite:").removeprefix("//")
        if not path:
            raise ValueError("--state sqlite: needs a file path, e.g. --state sqlite:/var/lib/toolcat/state.db")
        from .sqlite import SqliteState  # noqa: PLC0415 - one backend per process

        return SqliteState(path, **limits)
    if text.startswith(("redis://", "rediss://")):
        from .redis import RedisState  # noqa: PLC0415 - one backend per process (needs the [fleet] extra)

        return RedisState(text, **limits)
    raise ValueError(
        f"--state {spec!r} is not a state store: use memory, sqlite:PATH or redis[s]://HOST:PORT/DB "
        "(docs/deploy.md, 'State')"
    )
