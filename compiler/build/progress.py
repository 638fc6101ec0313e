"""Progress of a build or a site build, phase by phase, with real counts: what the CLI's progress display reads.

A stage reports ``(phase, done, total)`` as its work advances: ``load`` and ``check`` per tools file, ``index``
per step of its fit (texts; then for tools and nodes: analyse, fit words, fit chars, write), ``specs``,
``prompts``, ``exports`` and ``write`` when they start and finish (with the tools or files they cover), and the site's ``site read``, ``site render``, ``site mkdocs`` and ``site publish``. Nothing listens
unless a caller wraps the work in :func:`reporting`; a forked worker (the tools-file checks, the prompts and
exports run beside the index) never reports, so only the process that listens draws.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator

#: ``reporter(phase, done, total)``: called with ``done == 0`` when a phase starts and ``done == total`` when it ends.
Reporter = Callable[[str, int, int], None]

_listener: list[tuple[int, Reporter]] = []  # (the pid that listens, its reporter): at most one


@contextlib.contextmanager
def reporting(reporter: Reporter | None) -> Iterator[None]:
    """Send the reports of the work done inside the block to ``reporter`` (None: nobody listens)."""
    if reporter is None:
        yield
        return
    _listener.append((os.getpid(), reporter))
    try:
        yield
    finally:
        _listener.pop()


def listening() -> bool:
    """Whether reports reach anybody (in this process): work done only to report can be skipped otherwise."""
    return bool(_listener) and _listener[-1][0] == os.getpid()


def report(phase: str, done: int, total: int) -> None:
    """Tell the listener (if any, and only in its own process) that ``phase`` has done ``done`` of ``total``."""
    if _listener and _listener[-1][0] == os.getpid():
        _listener[-1][1](phase, done, total)


def describe(kinds: dict[str, int]) -> None:
    """Say how the items of the tool phases split by kind (``{"tools": 83, "skills": 8}``), as the summary counts them.

    A listener with a ``describe`` method gets it (the CLI's display then writes ``83 tools and 8 skills``).
    """
    if listening():
        note = getattr(_listener[-1][1], "describe", None)
        if callable(note):
            note(dict(kinds))


@contextlib.contextmanager
def phase(name: str, total: int) -> Iterator[None]:
    """Report ``name`` as started (0 of ``total``) on entry and finished (``total`` of ``total``) on success."""
    report(name, 0, total)
    yield
    report(name, total, total)
