"""The build, top to bottom: fingerprint → load → assemble → plan → write.

Each stage is a plain function of the previous stage's value; only the last one
writes, and only after everything else succeeded.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import logging
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import FORMAT_VERSION, __version__
from ..format.analyzer import ANALYZER_VERSION
from . import tokens
from .artifacts import Contributor
from .errors import Diagnostic, Severity, SourceError
from .model import CompiledCatalog
from .plan import plan
from .sources.assemble import assemble
from .sources.load import fingerprint, load
from .sources.tools import FileResult
from .write import ENTRY, WriteResult, build_lock, read_state, tmp_prefix, write_build

log = logging.getLogger(__name__)


@functools.cache
def code_fingerprint() -> str:
    """sha256 of toolcat's own code, schemas and prompt templates: the build's output depends on them.

    Part of the incremental-build settings, so that changed compiler code (a development checkout, or
    an upgrade that kept the version number) is never mistaken for "up to date".
    """
    templates = importlib.import_module("toolcat.templates")  # package data, shipped from the top-level templates/

    digest = hashlib.sha256()
    package = Path(__file__).resolve().parents[1]  # the toolcat package
    for root in (package, Path(str(templates.__file__)).resolve().parent / "prompts"):
        for file in sorted(root.rglob("*")):
            if (
                file.is_file()
                and file.suffix in {".py", ".json", ".j2", ".md", ".jinja", ".txt", ".xml"}
                and "__pycache__" not in file.parts
            ):
                digest.update(file.relative_to(root.parent).as_posix().encode("utf-8") + b"\0")
                digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


def default_contributors(embedder: str | None = None) -> tuple[list[Contributor], list[Contributor]]:
    """The stages that add to every build: (in order, beside them).

    In order: the search index, then (with ``embedder``, a spec of :mod:`toolcat.format.embedding`) the semantic
    tier's vectors (:mod:`toolcat.build.contributors.vectors`), which follow the index's doc ids. Beside them: the prompt sections
    and the provider exports, which read only the catalogue and the specs (:mod:`toolcat.build.parallel` runs them in a
    forked worker for a large catalogue). They are passed to :func:`toolcat.build.plan.plan` as mkdocs passes
    plugins; none imports the planner. Each module is imported only when a build runs.
    """
    from .contributors.exports.contribute import contribute as exports_contribute  # noqa: PLC0415 - build only
    from .contributors.index.texts import contribute as index_contribute  # noqa: PLC0415 - scikit-learn, build only
    from .contributors.prompts import contribute as prompts_contribute  # noqa: PLC0415 - jinja2, build only

    stages: list[Contributor] = [index_contribute]
    if embedder:
        from .contributors.vectors import contributor as vectors_contributor  # noqa: PLC0415 - [semantic] extra, build only

        stages.append(vectors_contributor(embedder))
    return stages, [prompts_contribute, exports_contribute]


@dataclass(frozen=True, slots=True)
class BuildResult:
    """What ``toolcat build`` reports."""

    registry_version: str
    up_to_date: bool
    counts: dict[str, int]
    warnings: list[Diagnostic] = field(default_factory=list)
    write: WriteResult | None = None
    seconds: float = 0.0

    def summary(self) -> str:
        """The short summary printed after a build."""
        counts = ", ".join(f"{self.counts.get(k, 0)} {k}" for k in ("nodes", "tools", "skills"))
        if self.up_to_date:
            return f"up to date: registry_version {self.registry_version} ({counts}); 0 files written"
        assert self.write is not None  # noqa: S101 - set whenever not up to date
        return (
            f"built registry_version {self.registry_version}: {counts}; "
            f"{self.write.files_written} files written, {self.write.files_kept} unchanged, "
            f"{self.write.files_removed} removed ({self.write.total_files} in the build) in {self.seconds:.2f}s"
        )


def _cache_from_state(state: dict[str, Any]) -> dict[str, Any]:
    cache: dict[str, Any] = {}
    for digest, (rel, raw) in state.get("cache", {}).items():
        if not isinstance(raw.get("tools_json"), str):
            continue  # an older state: its key order was lost, so the file is loaded again
        diagnostics = [Diagnostic(**{**d, "severity": Severity(d["severity"])}) for d in raw["diagnostics"]]
        cache[digest] = (rel, FileResult(tools=json.loads(raw["tools_json"]), diagnostics=diagnostics))
    return cache


def _cache_to_state(cache: dict[str, Any], live: set[str]) -> dict[str, Any]:
    return {
        # the tools as a JSON string: the state is written with sorted keys, and a tool's key order (its
        # arguments' order, shown in prompts and docs) must come back as the source had it
        digest: [
            rel,
            {
                "tools_json": json.dumps(result.tools, ensure_ascii=False, separators=(",", ":")),
                "diagnostics": [d.as_dict() for d in result.diagnostics],
            },
        ]
        for digest, (rel, result) in sorted(cache.items())
        if digest in live
    }


def compile_catalog(
    src: Path,
    *,
    strict: bool = False,
    cache: dict[str, Any] | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[CompiledCatalog, list[Diagnostic]]:
    """Load and check the sources; raise :class:`SourceError` with every problem when invalid."""
    loaded = load(src, cache, progress)
    catalog, diags = assemble(loaded)
    if diags.failed(strict=strict):
        problems = diags.sorted() if strict else [d for d in diags.sorted() if d.severity is Severity.ERROR]
        raise SourceError(problems, strict=strict)
    return catalog, diags.sorted()


def _read_private(out: Path, name: str) -> bytes | None:
    """A build-private file of the last build (a cache: missing or unreadable only costs time)."""
    try:
        return (out / name).read_bytes()
    except OSError:
        return None


def _counts(catalog: CompiledCatalog) -> dict[str, int]:
    return {
        "nodes": len(catalog.nodes),
        "tools": sum(1 for t in catalog.tools.values() if t.skill is None),
        "skills": len(catalog.skills),
    }


def build(
    src: Path,
    out: Path,
    *,
    strict: bool = False,
    force: bool = False,
    progress: Callable[[int], None] | None = None,
    extra: list[Contributor] | None = None,
    embedder: str | None = None,
) -> BuildResult:
    """Compile ``src`` into ``out``; raises :class:`SourceError` (nothing written) on invalid input.

    ``embedder``: a spec for the semantic tier (``none`` turns it off); by default ``search.embedder`` in
    ``SRC/toolcat.yaml``, else the default embedder when it is installed
    (:func:`toolcat.build.contributors.vectors.choose_embedder`).

    Concurrent builds into the same folder take turns (:func:`toolcat.build.write.build_lock`), and each
    first repairs what a build killed mid-swap left behind.
    """
    started = time.perf_counter()
    with build_lock(out):
        return _build_locked(
            src, out, strict=strict, force=force, progress=progress, extra=extra, started=started, embedder=embedder
        )


def _build_locked(
    src: Path,
    out: Path,
    *,
    strict: bool,
    force: bool,
    progress: Callable[[int], None] | None,
    extra: list[Contributor] | None,
    started: float,
    embedder: str | None = None,
) -> BuildResult:
    from .contributors.vectors import choose_embedder  # noqa: PLC0415 - numpy etc. only when vectors are built

    embedder = choose_embedder(src, embedder)
    state = read_state(out)
    input_hash, file_hashes = fingerprint(src)
    # anything that changes the bytes of a build for the same sources belongs here, so that an
    # upgrade of toolcat (or of its search analyzer) is never mistaken for "up to date"
    settings = {
        "generator": __version__,
        "format_version": FORMAT_VERSION,
        "strict": strict,
        "analyzer": ANALYZER_VERSION,
        "code": code_fingerprint(),
        **({"embedder": embedder} if embedder else {}),
    }
    if (
        not force
        and not extra
        and state.get("input_hash") == input_hash
        and state.get("settings") == settings
        and (out / ENTRY).is_file()
        and state.get("versions")
        and (out / state["versions"][0]["manifest"]["path"]).is_file()
    ):
        log.info("sources unchanged since the last build: nothing to do")
        return BuildResult(
            state["versions"][0]["registry_version"],
            True,
            state.get("counts", {}),
            seconds=time.perf_counter() - started,
        )
    same_settings = state.get("settings") == settings
    cache = _cache_from_state(state) if same_settings else {}
    tokens.begin(_read_private(out, tokens.CACHE_FILE) if same_settings else None)
    catalog, diagnostics = compile_catalog(src, strict=strict, cache=cache, progress=progress)
    # the index builds on the last good build's segment unless told to start afresh (docs/search.md, "Segments")
    previous = out if same_settings and not force and (out / ENTRY).is_file() else None
    stage = out.resolve().parent / f"{tmp_prefix(out.resolve())}stage{os.getpid()}"
    try:
        in_order, beside = default_contributors(embedder)
        planned = plan(
            catalog,
            [*in_order, *(extra or [])],
            beside=beside,
            previous=previous,
            out=out if (out / ENTRY).is_file() else None,
            stage=stage,
        )
        planned.private[tokens.CACHE_FILE] = tokens.saved()
        counts = _counts(catalog)
        new_state = {
            "input_hash": input_hash,
            "settings": settings,
            "counts": counts,
            "cache": _cache_to_state(cache, set(file_hashes.values())),
        }
        written = write_build(out, planned, state, new_state)
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # files staged past the memory budget (linked into the build)
    warnings = [d for d in diagnostics if d.severity is Severity.WARNING]
    return BuildResult(planned.registry_version, False, counts, warnings, written, time.perf_counter() - started)
