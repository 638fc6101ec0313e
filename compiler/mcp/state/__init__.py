"""serve's own state behind one interface: ``memory``, ``sqlite:PATH`` (one host) or ``redis://HOST:PORT/DB`` (many).

The face of the package: :func:`open_state` reads ``--state``; :class:`StateStore` is the interface
(:mod:`.base`); one module per backend (:mod:`.memory`, :mod:`.sqlite`, :mod:`.redis`).
"""

from __future__ import annotations

from typing import Any

from .base import StateStore

__all__ = ["StateStore", "open_state"]


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
    if text.startswith("redis://"):
        from .redis import RedisState  # noqa: PLC0415 - one backend per process (needs the [fleet] extra)

        return RedisState(text, **limits)
    raise ValueError(
        f"--state {spec!r} is not a state store: use memory, sqlite:PATH or redis://HOST:PORT/DB "
        "(docs/deploy.md, 'State')"
    )
