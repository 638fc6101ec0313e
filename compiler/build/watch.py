"""``toolcat build --watch``: build, then build again in the same process each time the sources change.

A catalogue's author edits with the watcher running, as with ``mkdocs serve``. A rebuild is the one-shot build
(:func:`toolcat.build.pipeline.build`) called again: the same bytes, the same errors, the same lock and writer.
What the process keeps warm between builds is what any process keeps once it has built: its imports, the
embedder's onnxruntime session (:func:`toolcat.engines.embedding.load_embedder`), compiled schema validators and
templates; :func:`prime` loads before the next fork what the forked worker would otherwise load anew each build.
Nothing of a build's state or sources is kept: each rebuild reads them from disk, so a build made in between by
another process (or by hand) is built on, never overwritten with stale output.

Changes are found by polling (stdlib only, no thread: the build's forked worker needs a process with no other
thread, :func:`toolcat.build.sources.load.fork_is_safe`): every :data:`POLL_SECONDS` the files the build reads
(every file under the source folder but hidden ones and ``__pycache__``, as :func:`toolcat.build.sources.load.fingerprint`
walks them; ``toolcat.yaml`` is one of them) are listed with their ``lstat``. A change starts a rebuild once the
tree has been quiet for :data:`QUIET_SECONDS` (an editor's burst of writes, a ``git checkout``: one rebuild). At
10,000 tools (541 files) a poll takes about 3 ms CPU; the interval grows so that polling never takes more than
:data:`POLL_SHARE` of a core on a bigger tree.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

#: How often the sources are checked for a change (seconds), at least.
POLL_SECONDS = 0.2
#: A rebuild starts once the sources have not changed for this long (a burst of saves is one rebuild).
QUIET_SECONDS = 0.1
#: Polling takes at most this share of one core: the interval grows with what a poll costs.
POLL_SHARE = 0.02
#: A wait checks whether the watch was stopped this often (seconds).
NAP_SECONDS = 0.05

#: A file's ``lstat`` as the watcher compares it: modification time (ns), size, inode, change time (ns), a link.
Stamp = tuple[int, int, int, int, bool]


def snapshot(src: Path, skip: str | None = None) -> dict[str, Stamp]:
    """Every file and symbolic link under ``src`` the build reads, by relative path, with its stamp.

    As :func:`toolcat.build.sources.load.fingerprint` walks: hidden names and ``__pycache__`` are left out,
    links are not followed. ``skip``: a folder left out too, by its path relative to ``src`` (``build``: the output
    folder, when it lies inside the sources).
    A folder that vanishes while it is listed (a save replacing it) is left out of this snapshot: the next one sees
    what took its place.
    """
    found: dict[str, Stamp] = {}
    pending = [(os.fspath(src), "")]
    while pending:
        folder, prefix = pending.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if name.startswith(".") or name == "__pycache__":
                continue
            try:
                is_link = entry.is_symlink()
                if not is_link and entry.is_dir():
                    if prefix + name != skip:
                        pending.append((entry.path, f"{prefix}{name}/"))
                    continue
                stat = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[prefix + name] = (stat.st_mtime_ns, stat.st_size, stat.st_ino, stat.st_ctime_ns, is_link)
    return found


def _age(changed: list[str], now: dict[str, Stamp]) -> float:
    """Seconds since the newest of ``changed`` was changed, by its change time (0 when one of them is gone).

    The change time (``st_ctime``) is set to the clock by every write, rename or ``touch`` (a copy that keeps an
    old modification time still gets a new change time): a change older than the quiet period needs no wait.
    """
    if any(rel not in now for rel in changed):
        return 0.0
    newest = max(now[rel][3] for rel in changed)
    return max(0.0, (time.time_ns() - newest) / 1e9)


def changes(before: dict[str, Stamp], after: dict[str, Stamp]) -> list[str]:
    """The files added, removed or changed between two snapshots, sorted."""
    return sorted(rel for rel in before.keys() | after.keys() if before.get(rel) != after.get(rel))


@dataclass(slots=True)
class Watcher:
    """Waits for the sources under ``src`` to change and settle; :meth:`request_stop` ends every wait at once.

    ``skip``: a folder under ``src`` not to watch, relative to it (the build's output, so its own writes start no
    rebuild).
    """

    src: Path
    skip: str | None = None
    poll: float = POLL_SECONDS
    quiet: float = QUIET_SECONDS
    #: Set (by a signal handler or another thread: :meth:`request_stop`) to end the watch.
    stopped: bool = False
    #: The snapshot the last build started from: a change is a difference from it.
    seen: dict[str, Stamp] = field(default_factory=dict)
    #: The CPU seconds of the last poll (the interval grows with it).
    poll_cpu: float = 0.0

    def request_stop(self) -> None:
        """End the watch: a wait under way returns None within :data:`NAP_SECONDS`, and no build follows.

        A plain flag, not a :class:`threading.Event`: a signal handler may set it while the main thread is inside
        any call (an event's ``set`` takes a lock the interrupted code may hold).
        """
        self.stopped = True

    def _sleep(self, seconds: float) -> bool:
        """Sleep ``seconds`` in naps, waking at once when stopped; whether the watch was stopped."""
        until = time.monotonic() + seconds
        while not self.stopped:
            left = until - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, NAP_SECONDS))
        return True

    def mark(self) -> None:
        """Take the snapshot a build is about to read: what changes after this starts another build."""
        self.seen = self._snapshot()

    def _snapshot(self) -> dict[str, Stamp]:
        started = time.process_time()
        found = snapshot(self.src, self.skip)
        self.poll_cpu = time.process_time() - started
        return found

    def interval(self) -> float:
        """Seconds until the next poll: :attr:`poll`, or longer so that polling stays under :data:`POLL_SHARE`."""
        return max(self.poll, self.poll_cpu / POLL_SHARE)

    def wait(self) -> list[str] | None:
        """Block until the sources differ from :attr:`seen` and have been quiet for :attr:`quiet` seconds.

        Returns what changed (relative paths, sorted) and takes the settled tree as :attr:`seen`; None once
        :attr:`stopped` is set. Settled: the newest change is :attr:`quiet` seconds old by its files' change time
        (most saves are, by the next poll), else no other change came in a further wait until it is. A change
        undone before it settled (a file saved and put back as it was) starts no build.
        """
        while not self._sleep(self.interval()):
            now = self._snapshot()
            while now != self.seen:
                wait = self.quiet - _age(changes(self.seen, now), now)
                if wait > 0:  # the newest change is younger than the quiet period: see whether more follow
                    if self._sleep(wait):
                        return None
                    again = self._snapshot()
                    if again != now:
                        now = again
                        continue
                changed, self.seen = changes(self.seen, now), now
                return changed
        return None


def watch(watcher: Watcher, build_once: Callable[[list[str]], bool]) -> int:
    """Build, then build again after each settled change until the watch is stopped; the number of builds.

    ``build_once(changed)`` runs one build (``changed`` is empty for the first) and says whether it succeeded;
    it reports its own errors, which do not end the watch. The snapshot is taken before each build, so a change
    made while it runs starts the next one.
    """
    builds = 0
    changed: list[str] = []
    while True:
        if not changed:
            watcher.mark()
        build_once(changed)
        builds += 1
        if watcher.stopped:
            return builds
        waited = watcher.wait()
        if waited is None:
            return builds
        changed = waited


def describe_changes(changed: list[str], few: int = 3) -> str:
    """``a/tools.yaml changed`` or ``3 files changed (a, b, c)`` for the rebuild's line."""
    if len(changed) == 1:
        return f"{changed[0]} changed"
    shown = ", ".join(changed[:few]) + (", ..." if len(changed) > few else "")
    return f"{len(changed)} files changed ({shown})"


def prime() -> None:
    """Load, in this process, what each build's forked worker would otherwise load again: templates, the tokenizer.

    The worker is a fork of this process, so what is loaded here before the fork is there already (issue 33:
    a watched rebuild's worker skips compiling the prompt templates and loading the tokenizer's vocabulary).
    """
    from . import tokens  # noqa: PLC0415 - build only
    from .contributors.prompts import environment  # noqa: PLC0415 - jinja2, build only

    env = environment()
    for name in env.list_templates():
        env.get_template(name)
    tokens.load()
