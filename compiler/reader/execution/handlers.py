"""Which function runs a handler type: per-catalogue handlers, registered ones, then installed entry points.

A spec's ``handler: {type: kind}`` runs through the first of:

1. the ``handlers={kind: fn}`` a host passed to ``Catalog.open`` (that catalogue only);
2. :func:`register_handler` (the built-in ``python``, ``http`` and ``skill``, or a host's own);
3. an entry point ``kind`` in the group ``toolcat.handlers`` of an installed distribution, loaded the
   first time a spec needs that type (toolcat declares ``mcp = "toolcat.mcp.upstream:run_mcp"``).

So the reader never imports a handler's client library itself. A type none of them provides is
NOT_EXECUTABLE naming the type (and, for a type toolcat ships as an extra, the extra to install).
Stdlib only; :mod:`importlib.metadata` is imported only when an entry point is looked up.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from ...format.envelope import ReaderError

#: The entry-point group installed distributions declare handler types in.
ENTRY_POINT_GROUP = "toolcat.handlers"
#: Handler types toolcat ships behind an extra: the module the handler needs, and the extra that installs it.
EXTRAS: dict[str, tuple[str, str]] = {"mcp": ("mcp", "toolcat[mcp]")}

#: A handler takes an :class:`~toolcat.reader.execution.runners.ExecContext` and returns a JSON-able result.
Handler = Callable[[Any], Any]
HANDLERS: dict[str, Handler] = {}
_DISCOVERED: dict[str, Handler] = {}
_lock = threading.Lock()


def register_handler(kind: str, handler: Handler) -> None:
    """Make ``handler`` run tools whose spec says ``handler: {type: kind}`` (in every catalogue)."""
    HANDLERS[kind] = handler


def _entry_point(kind: str) -> Any:
    """The installed entry point for ``kind`` in :data:`ENTRY_POINT_GROUP`, or None."""
    from importlib.metadata import entry_points  # noqa: PLC0415 - only when a spec needs an unknown type

    return next((ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name == kind), None)


def _missing_module(kind: str) -> str | None:
    """The module a shipped handler type needs when it is not installed, else None."""
    needed = EXTRAS.get(kind)
    if needed is None:
        return None
    from importlib.util import find_spec  # noqa: PLC0415 - stdlib, imported on first use

    try:
        return None if find_spec(needed[0]) is not None else needed[0]
    except (ImportError, ValueError):
        return needed[0]


def available(kind: str, local: dict[str, Handler] | None = None) -> bool:
    """Whether a handler of type ``kind`` can run here (nothing is imported to tell)."""
    if (local and kind in local) or kind in HANDLERS or kind in _DISCOVERED:
        return True
    try:
        return _entry_point(kind) is not None and _missing_module(kind) is None
    except Exception:  # a broken distribution's metadata: the type is not available
        return False


def _not_executable(kind: str, tool_id: str, reason: str, local: dict[str, Handler] | None) -> ReaderError:
    extra = EXTRAS.get(kind)
    if extra:
        hints = [f"pip install '{extra[1]}' in the host's environment, then reopen the catalogue."]
    else:
        hints = [
            (
                f"Install a package that provides the {kind!r} handler (entry point group {ENTRY_POINT_GROUP!r}), "
                f"or pass Catalog.open(..., handlers={{{kind!r}: fn}})."
            )
        ]
    known = sorted({*HANDLERS, *_DISCOVERED, *(local or {})})
    return ReaderError(
        "NOT_EXECUTABLE",
        f"this reader has no {kind!r} handler to run {tool_id}: {reason}",
        help_path=tool_id,
        details={"handler": kind, "known": known},
        hints=hints,
    )


def find_handler(kind: str, tool_id: str, local: dict[str, Handler] | None = None) -> Handler:
    """The function that runs ``kind``; NOT_EXECUTABLE naming the type when none is registered or installed."""
    if local and kind in local:
        return local[kind]
    found = HANDLERS.get(kind) or _DISCOVERED.get(kind)
    if found is not None:
        return found
    with _lock:
        if kind in _DISCOVERED:
            return _DISCOVERED[kind]
        try:
            point = _entry_point(kind)
        except Exception as exc:
            raise _not_executable(kind, tool_id, f"the installed handlers cannot be listed ({exc})", local) from None
        if point is None:
            reason = "no handler of this type is registered or installed"
            raise _not_executable(kind, tool_id, reason, local)
        missing = _missing_module(kind)
        if missing is not None:
            raise _not_executable(kind, tool_id, f"it needs the {missing!r} package, which is not installed", local)
        try:
            handler = point.load()
        except Exception as exc:  # ImportError, AttributeError, or whatever the module raises on import
            raise _not_executable(
                kind, tool_id, f"its entry point {point.value!r} does not load ({type(exc).__name__}: {exc})", local
            ) from None
        if not callable(handler):
            raise _not_executable(kind, tool_id, f"its entry point {point.value!r} is not callable", local)
        _DISCOVERED[kind] = handler
        return _DISCOVERED[kind]
