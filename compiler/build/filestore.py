"""The planned files of a build, by path, without holding a 100,000-tool build in memory (docs/architecture.md, "What an incremental build reuses").

A build plans hundreds of megabytes of files at that scale. :class:`FileStore` keeps a file

* as a note only, when the last build already has it (same content-hashed path, same size): the writer
  links it from there, as it always did;
* in memory while the files held stay under a budget;
* beyond that, in a staging folder beside the output (named like the writer's temporary folder, so a
  killed build's leftovers are removed by :func:`toolcat.build.write.recover`).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, MutableMapping
from pathlib import Path

#: Bytes of planned files held in memory before the rest goes to the staging folder.
MEMORY_BUDGET = 128 * 1024 * 1024


class FileStore(MutableMapping[str, bytes]):
    """Planned files by relative path; :meth:`origin` says where the writer finds each one."""

    def __init__(self, existing: Path | None = None, stage: Path | None = None, budget: int | None = None) -> None:
        self.existing = existing
        self.stage = stage
        self.budget = MEMORY_BUDGET if budget is None else budget
        self._memory: dict[str, bytes] = {}
        self._disk: dict[str, Path] = {}
        self._held = 0

    def __setitem__(self, path: str, data: bytes) -> None:
        self.pop(path, None)
        if self.existing is not None:
            known = self.existing / path
            try:
                if known.is_file() and known.stat().st_size == len(data):
                    self._disk[path] = known
                    return
            except OSError:
                pass
        if self.stage is not None and self._held + len(data) > self.budget:
            staged = self.stage / path
            staged.parent.mkdir(parents=True, exist_ok=True)
            staged.write_bytes(data)
            self._disk[path] = staged
            return
        self._memory[path] = data
        self._held += len(data)

    def __getitem__(self, path: str) -> bytes:
        if path in self._memory:
            return self._memory[path]
        return self._disk[path].read_bytes()

    def __delitem__(self, path: str) -> None:
        if path in self._memory:
            self._held -= len(self._memory.pop(path))
        else:
            del self._disk[path]

    def __iter__(self) -> Iterator[str]:
        yield from self._memory
        yield from self._disk

    def __len__(self) -> int:
        return len(self._memory) + len(self._disk)

    def __contains__(self, path: object) -> bool:
        return path in self._memory or path in self._disk

    def adopt(self, path: str, origin: bytes | Path) -> None:
        """Take a file another planner made (a forked worker): its bytes, or the file it noted or staged."""
        if isinstance(origin, Path):
            self.pop(path, None)
            self._disk[path] = origin
        else:
            self[path] = origin

    def origin(self, path: str) -> bytes | Path:
        """The file's bytes, or the file to link it from (the last build's copy, or the staged one)."""
        return self._memory[path] if path in self._memory else self._disk[path]

    def staged(self, path: str) -> bool:
        """True when the file was written to the staging folder (it is new to the output)."""
        # a prefix of the path's text, not Path.is_relative_to: called for each of a build's 25,000 files (issue 33)
        found = self._disk.get(path) if self.stage is not None else None
        return found is not None and (str(found) + os.sep).startswith(str(self.stage) + os.sep)
