"""The progress display of ``toolcat build`` and ``toolcat site``: one line per phase, with real counts, on stderr.

On a terminal the current phase's line is redrawn as its count advances (at most every
:data:`REDRAW_SECONDS`, and always when a phase starts or ends) and kept when the phase ends;
elsewhere (a log, CI) each phase prints a single line when it ends. ``-q`` turns it off.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

import click

#: What each phase counts (:mod:`toolcat.build.progress`).
UNITS = {
    "load": "files read",
    "check": "files checked",
    "specs": "tools",
    "index": "steps",
    "prompts": "tools",
    "exports": "tools",
    "vectors": "texts",
    "write": "files",
    "site read": "tool specs verified",
    "site render": "pages",
    "site mkdocs": "page steps (convert, write)",
    "site publish": "files",
}
#: Least time between two redraws of the same phase on a terminal.
REDRAW_SECONDS = 0.1
BAR_WIDTH = 24


def wanted() -> bool:
    """Whether the command should show progress: not under ``-q``."""
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx is not None else None
    return not (root is not None and root.params.get("quiet"))


class PhaseDisplay:
    """A :data:`toolcat.build.progress.Reporter` that draws on ``stream`` (stderr by default)."""

    def __init__(self, stream: TextIO | None = None, *, tty: bool | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.current: str | None = None
        self.ended: set[str] = set()
        self.started = 0.0
        self.drawn = 0.0
        #: How the tool phases' items split by kind (``{"tools": 83, "skills": 8}``), once the build says so.
        self.kinds: dict[str, int] = {}

    def describe(self, kinds: dict[str, int]) -> None:
        """Take the split of the tool phases' items (:func:`toolcat.build.progress.describe`)."""
        self.kinds = {kind: count for kind, count in kinds.items() if count}

    def _count(self, phase: str, done: int) -> str:
        """``83 tools and 8 skills`` when a tool phase has done all its items and the split is known; else ``91 tools``."""
        unit = UNITS.get(phase, "items")
        if unit == "tools" and self.kinds and done == sum(self.kinds.values()):
            return " and ".join(f"{count:,} {kind}" for kind, count in self.kinds.items())
        return f"{done:,} {unit}"

    def __call__(self, phase: str, done: int, total: int) -> None:
        """Take one report: a new phase starts a line, progress redraws it, the end finishes it."""
        now = time.perf_counter()
        finished = done >= total
        if phase in self.ended:
            return  # a phase ends once
        if phase != self.current and finished and done > 0:  # its start went unseen: it ran in a worker process
            self._finish_open_line()
            self.stream.write(f"{phase}: {self._count(phase, done)} (done beside the previous phase)\n")
            self.stream.flush()
            self.ended.add(phase)
            return
        if phase != self.current:
            self._finish_open_line()
            self.current, self.started, self.drawn = phase, now, 0.0
        if self.tty and (finished or done == 0 or now - self.drawn >= REDRAW_SECONDS):
            self.stream.write("\r" + self._line(phase, done, total, now) + ("\n" if finished else ""))
            self.stream.flush()
            self.drawn = now
        elif finished and not self.tty:
            self.stream.write(self._line(phase, done, total, now) + "\n")
            self.stream.flush()
        if finished:
            self.current = None
            self.ended.add(phase)

    def close(self) -> None:
        """End a line a failed phase left open."""
        self._finish_open_line()

    def _finish_open_line(self) -> None:
        if self.current is not None and self.tty and self.drawn:
            self.stream.write("\n")
            self.stream.flush()
        self.current = None

    def _line(self, phase: str, done: int, total: int, now: float) -> str:
        unit = UNITS.get(phase, "items")
        seconds = now - self.started
        if not self.tty:
            return f"{phase}: {self._count(phase, done)} in {seconds:.2f}s"
        filled = BAR_WIDTH if total <= 0 else BAR_WIDTH * min(done, total) // total
        percent = 100 if total <= 0 else 100 * min(done, total) // total
        bar = "#" * filled + "-" * (BAR_WIDTH - filled)
        return f"{phase:<12} [{bar}] {percent:>3}%  {done:,}/{total:,} {unit}  {seconds:.1f}s\033[K"
