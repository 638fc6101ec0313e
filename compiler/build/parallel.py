"""Contributors that run beside the others, in a forked process, so a large build uses both cores (docs/architecture.md, "What an incremental build reuses").

The prompt sections and the provider exports read only the compiled catalogue and the tool specs, and write
only their own files, manifest entries and per-tool memo kinds. For a large catalogue :func:`run_beside`
forks a worker for them while the search index is fitted here; the worker's new files come back as files it
staged in the staging folder (never as bytes through the pipe), which the writer links like any other staged
file. The result is the same bytes as running them in turn (``tests/test_side.py``).

They run here, in turn, when the catalogue is small (a fork costs more than it saves) or very large (the
fork's copy of the catalogue would cost more memory than the time it saves is worth), when there is no
staging folder, one core, no ``fork`` start method, or other threads in the process (forking a threaded
process, a server that rebuilds, is unsafe).
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format import settings
from . import tokens
from .artifacts import ArtifactSet, Contributor, Specs
from .filestore import FileStore
from .memo import ToolMemo
from .sources.load import fork_is_safe

if TYPE_CHECKING:
    from .model import CompiledCatalog

#: From this many tools a build forks a worker for the side contributors...
SIDE_FROM_TOOLS = 2_000
#: ...and up to this many: the worker is a fork of a process holding the whole catalogue, and the pages it
#: touches are copied. At 100,000 tools that copy would take the build past 2 GB (the worker peaked at 1.7 GB
#: beside the build's 1.8), while one process stays at 1.75 GB and well inside the 3-minute target.
SIDE_UP_TO_TOOLS = 50_000


@dataclass(frozen=True, slots=True)
class _Job:
    catalog: CompiledCatalog
    specs: Specs
    contributors: Sequence[Contributor]
    previous: Path | None
    out: Path | None
    stage: Path


#: What the forked worker runs: set just before the fork (the worker inherits it; nothing is pickled in).
_job: _Job | None = None


def _work() -> tuple[
    dict[str, bytes | Path], dict[str, Any], dict[str, bytes | Path], dict[str, Any], dict[bytes, int]
]:
    assert _job is not None  # noqa: S101 - set before the fork
    job = _job
    # every new file goes to the staging folder (a budget of 0), and the writer links it from there: sent back as
    # bytes, the 30 MB of sections and provider files a one-tool edit at 10,000 tools writes were pickled here,
    # unpickled into new memory there and written by the writer (issue 33)
    side = ArtifactSet(
        files=FileStore(job.out, job.stage, budget=0), previous=job.previous, memo=ToolMemo(job.previous, job.stage)
    )
    for contribute in job.contributors:
        contribute(job.catalog, side, job.specs)
    files = {path: side.files.origin(path) for path in side.files}
    return files, side.manifest, {**side.private, **side.memo.close_all()}, dict(side.carried), tokens.used()


def _parallel(catalog: CompiledCatalog, stage: Path | None) -> bool:
    return (
        stage is not None
        and SIDE_FROM_TOOLS <= len(catalog.tools) <= SIDE_UP_TO_TOOLS
        and (os.cpu_count() or 1) >= 2
        and fork_is_safe()
        and settings.get("TOOLCAT_BUILD_WORKERS") != "1"
    )


def run_beside(
    catalog: CompiledCatalog,
    artifacts: ArtifactSet,
    specs: Specs,
    side: Sequence[Contributor],
    main: Callable[[], None],
    *,
    out: Path | None,
    stage: Path | None,
) -> None:
    """Run ``main()`` here and the ``side`` contributors beside it (forked when it pays), merged into ``artifacts``."""
    global _job  # noqa: PLW0603 - handed to the forked worker through the fork itself
    if not side or not _parallel(catalog, stage):
        main()
        for contribute in side:
            contribute(catalog, artifacts, specs)
        return
    assert stage is not None  # noqa: S101 - _parallel checked it
    _job = _Job(catalog, specs, side, artifacts.previous, out, stage / "side")
    try:
        with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("fork")) as pool:
            future: Future[Any] = pool.submit(_work)
            main()
            files, manifest, private, carried, counts = future.result()
    finally:
        _job = None
    for path, origin in files.items():
        artifacts.files.adopt(path, origin)
    artifacts.manifest.update(manifest)
    artifacts.private.update(private)
    artifacts.carried.update(carried)
    tokens.adopt(counts)  # the next build finds the worker's counts in .toolcat-tokens.bin too
