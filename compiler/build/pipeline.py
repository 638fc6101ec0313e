"""The build, top to bottom: config → fingerprint → load → assemble → plan → write.

Each stage is a plain function of the previous stage's value; only the last one
writes, and only after everything else succeeded. Each reports its progress
(:mod:`toolcat.build.progress`): load, check, specs, index, prompts, exports, write.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import hashlib
import importlib
import json
import logging
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..format.analyzer import ANALYZER_VERSION
from ..format.version import FORMAT_VERSION, __version__
from . import tokens
from .artifacts import Contributor
from .config import TERMS_SPEC, BuildConfig, read_config
from .errors import Diagnostic, Severity, SourceError
from .model import CompiledCatalog
from .plan import plan
from .progress import Reporter, describe, phase, report, reporting
from .sources.assemble import assemble
from .sources.load import fingerprint, load
from .sources.tools import FileResult
from .write import ENTRY, WriteResult, build_lock, first_few, read_state, tmp_prefix, write_build

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
    if embedder == TERMS_SPEC:
        from .contributors.index.texts import contribute_expanded  # noqa: PLC0415 - scikit-learn, build only

        return [contribute_expanded], [prompts_contribute, exports_contribute]
    if embedder:
        from .contributors.vectors import contributor as vectors_contributor  # noqa: PLC0415 - [semantic] extra, build only

        head = VectorHeadStart(embedder)
        stages = [head.before(index_contribute), head.after(vectors_contributor(embedder))]
    return stages, [prompts_contribute, exports_contribute]


class VectorHeadStart:
    """Embeds a fresh build's texts while the search index is fitted (issue 29), into the vector cache.

    The vectors follow the index's doc ids, so their stage runs after the index's; but the texts do not depend
    on the index. For a build with no previous build to build on (an empty vector cache is likely),
    :meth:`before` starts a thread that embeds every tool's and node's text the cache lacks (each text alone, as
    the vectors stage does: the same rows) and saves the cache; :meth:`after` waits for it, and the vectors stage
    then finds every row cached. The thread starts inside the index's stage, after
    :func:`toolcat.build.parallel.run_beside` forked its worker (forking a threaded process is unsafe), and embeds
    on the build's embedding threads (``$TOOLCAT_EMBED_THREADS``, else one per core). It stops between chunks
    when the index fails. Any error is left to the vectors stage, which embeds what is missing itself.
    """

    #: Texts embedded per call (the thread checks for a stop between calls), and the fewest worth a thread.
    CHUNK = 512
    FROM_TEXTS = 64
    #: How often the vectors phase reports the head start's progress while it waits for it.
    REPORT_SECONDS = 0.25

    def __init__(self, embedder: str) -> None:
        self.embedder = embedder
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        #: The texts to embed (tools' and nodes') and how many have a row so far, once the thread has counted them.
        self.total = 0
        self.ready = 0

    def before(self, index: Contributor) -> Contributor:
        """The index stage, starting the head start first (same name and module: it reports as the index)."""

        @functools.wraps(index)
        def run(catalog: CompiledCatalog, artifacts: Any, specs: Any) -> None:
            if artifacts.previous is None:
                self.thread = threading.Thread(target=self._embed, args=(catalog,), name="toolcat-head-start")
                self.thread.start()
            try:
                index(catalog, artifacts, specs)
            except BaseException:
                self.stop.set()
                self.join()
                raise

        return run

    def after(self, vectors: Contributor) -> Contributor:
        """The vectors stage, once the head start is done (its progress reported as the vectors phase meanwhile)."""

        @functools.wraps(vectors)
        def run(catalog: CompiledCatalog, artifacts: Any, specs: Any) -> None:
            while self.thread is not None and self.thread.is_alive():
                if self.total:  # texts with a row so far; the phase ends when the vectors stage has written
                    report("vectors", min(self.ready, self.total - 1), self.total)
                self.thread.join(self.REPORT_SECONDS)
            self.join()
            vectors(catalog, artifacts, specs)

        return run

    def join(self) -> None:
        """Wait for the head start, when one runs."""
        if self.thread is not None:
            self.thread.join()
            self.thread = None

    def _embed(self, catalog: CompiledCatalog) -> None:
        from ..engines.embedding import load_embedder  # noqa: PLC0415 - [semantic] extra, build only
        from .contributors.index.texts import tool_embed_text, tool_order  # noqa: PLC0415 - build only
        from .contributors.vectors import VectorCache, node_embed_text, text_key  # noqa: PLC0415 - loaded on the one path that needs it

        try:
            cache = VectorCache(load_embedder(self.embedder))
            texts = [tool_embed_text(t, catalog) for t in tool_order(catalog)]
            texts += [node_embed_text(catalog.nodes[p], catalog) for p in sorted(catalog.nodes)]
            missing = list({text_key(t): t for t in texts if text_key(t) not in cache.rows}.values())
            if len(missing) < self.FROM_TEXTS:
                return
            had = len(texts) - len(missing)
            self.ready, self.total = had, len(texts)
            for first in range(0, len(missing), self.CHUNK):
                if self.stop.is_set():
                    break

                def embedded(count: int, before: int = had + first) -> None:
                    self.ready = before + count  # read by the vectors phase's reports (an int: no lock needed)

                cache.embed(missing[first : first + self.CHUNK], embedded)
            cache.save()
        except Exception:  # the vectors stage embeds (and reports) what is missing itself
            log.debug("vector head start failed; the vectors stage embeds what is missing", exc_info=True)


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


#: The tools files' results this process last took from a state (:func:`_cache_from_state`), by file digest: the
#: entry's text as the state held it, and the result parsed from it. A process that builds again (``toolcat build
#: --watch``, issue 33) does not parse an entry again while the state it reads from disk holds the same text.
_parsed: dict[str, tuple[str, list[Any], FileResult]] = {}


def _cache_from_state(state: dict[str, Any]) -> dict[str, Any]:
    """The loaded sources' results the last build kept, by file digest: (path, FileResult, its entry in the state).

    The entry is written back as it was while the file is unchanged (:func:`_cache_to_state`): 10,000 tools are not
    dumped again for a one-tool edit (issue 33). An entry whose text equals (character for character) the one this
    process parsed last is not parsed again: the build reads the state from disk each time, so what is kept is what
    the disk says (a build made by another process in between changes the entries, which are then parsed).
    """
    global _parsed  # noqa: PLW0603 - replaced whole, so builds in other threads see one or the other
    cache: dict[str, Any] = {}
    parsed: dict[str, tuple[str, list[Any], FileResult]] = {}
    for digest, entry in state.get("cache", {}).items():
        rel, raw = entry
        text = raw.get("tools_json")
        if not isinstance(text, str):
            continue  # an older state: its key order was lost, so the file is loaded again
        kept = _parsed.get(digest)
        if kept is None or kept[0] != text or kept[1] != raw["diagnostics"]:
            diagnostics = [Diagnostic(**{**d, "severity": Severity(d["severity"])}) for d in raw["diagnostics"]]
            kept = (text, raw["diagnostics"], FileResult(tools=json.loads(text), diagnostics=diagnostics))
        parsed[digest] = kept
        cache[digest] = (rel, kept[2], entry)
    _parsed = parsed
    return cache


def _cache_to_state(cache: dict[str, Any], live: set[str]) -> dict[str, Any]:
    return {
        # the tools as a JSON string: the state is written with sorted keys, and a tool's key order (its
        # arguments' order, shown in prompts and docs) must come back as the source had it
        digest: (
            kept[2]
            if len(kept) > 2
            else [
                kept[0],
                {
                    "tools_json": json.dumps(kept[1].tools, ensure_ascii=False, separators=(",", ":")),
                    "diagnostics": [d.as_dict() for d in kept[1].diagnostics],
                },
            ]
        )
        for digest, kept in sorted(cache.items())
        if digest in live
    }


def compile_catalog(
    src: Path,
    *,
    strict: bool = False,
    cache: dict[str, Any] | None = None,
    config: BuildConfig | None = None,
    file_hashes: dict[str, str] | None = None,
) -> tuple[CompiledCatalog, list[Diagnostic]]:
    """Load and check the sources; raise :class:`SourceError` with every problem when invalid.

    ``config`` is the catalogue's settings as :func:`toolcat.build.config.read_config` read them (read here when
    not given); their problems are reported with the sources'. ``file_hashes``: the sources' per-file hashes
    (:func:`toolcat.build.sources.load.fingerprint`) when already computed. Progress goes to the reporter of
    :func:`toolcat.build.progress.reporting`, when one is active.
    """
    config = config if config is not None else read_config(src)
    loaded = load(src, cache, config, file_hashes=file_hashes)
    catalog, diags = assemble(loaded)
    diags.extend(list(config.diagnostics))
    domains, unknown = config.discovery_domains(sorted({t.namespace for t in catalog.tools.values()}))
    diags.extend(unknown)
    if domains:  # per-domain discovery tools (seed 002): the exports contributor writes them
        catalog = replace(catalog, discover_domains=domains)
    if config.pinned:  # servers list the pinned tools by default (the manifest's discovery.pinned)
        catalog = replace(catalog, pin_tools=True)
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
    progress: Reporter | None = None,
    extra: list[Contributor] | None = None,
    embedder: str | None = None,
    config: BuildConfig | None = None,
) -> BuildResult:
    """Compile ``src`` into ``out``; raises :class:`SourceError` (nothing written) on invalid input.

    ``config``: the catalogue's settings (:func:`toolcat.build.config.read_config`, read once here when not given).
    ``embedder``: a spec for the semantic tier (``none`` turns it off); by default ``search.embedder`` in
    ``SRC/toolcat.yaml`` (or ``.yml``), else the default embedder when it is installed
    (:func:`toolcat.build.contributors.vectors.choose_embedder`). ``progress``: called as each phase advances
    (:mod:`toolcat.build.progress`).

    Concurrent builds into the same folder take turns (:func:`toolcat.build.write.build_lock`), and each
    first repairs what a build killed mid-swap left behind.
    """
    started = time.perf_counter()
    config = config if config is not None else read_config(src)
    from .contributors.vectors import choose_embedder  # noqa: PLC0415 - numpy etc. only when vectors are built

    with build_lock(out), reporting(progress), fewer_collections():
        return _build_locked(
            src,
            out,
            strict=strict,
            force=force,
            extra=extra,
            started=started,
            embedder=choose_embedder(config, embedder),
            config=config,
        )


#: The cyclic garbage collector's thresholds during a build (:func:`fewer_collections`).
BUILD_GC_THRESHOLDS = (100_000, 50, 1000)


@contextlib.contextmanager
def fewer_collections() -> Iterator[None]:
    """Run the build with the cyclic garbage collector's thresholds raised, then put them back.

    A build holds millions of long-lived objects (the catalogue, its specs, the memo's entries) and makes few
    reference cycles; with the default thresholds each full collection walks them all again: about 0.8 of a one-tool
    edit's 4.4 CPU-s at 10,000 tools went to collecting (issue 33), with the same peak memory either way. Reference
    counting still frees everything that holds no cycle, and a collection still runs every 100,000 allocations.
    """
    before = gc.get_threshold()
    gc.set_threshold(*BUILD_GC_THRESHOLDS)
    try:
        yield
    finally:
        gc.set_threshold(*before)


def _missing_files(out: Path, state: dict[str, Any]) -> list[str]:
    """The files of the last build's version (its state's list) that ``out`` no longer holds, in the list's order.

    A build whose sources are unchanged does nothing, unless a file was deleted since (by hand, a sync, a full disk):
    then "up to date" would leave a build whose manifest names a file no reader can fetch (``toolcat verify``'s
    "referenced but missing"). One ``stat`` a file: about 30,000 at 10,000 tools.
    """
    files = state["versions"][0].get("files")
    at = f"{out}{os.sep}"
    return [str(rel) for rel in files if not os.path.isfile(at + str(rel))] if isinstance(files, list) else []  # noqa: PTH113 - a str path, one per file


def _build_locked(
    src: Path,
    out: Path,
    *,
    strict: bool,
    force: bool,
    extra: list[Contributor] | None,
    started: float,
    embedder: str | None,
    config: BuildConfig,
) -> BuildResult:
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
        **_partition_setting(),
    }
    unchanged = (
        not extra
        and not config.failed
        and state.get("input_hash") == input_hash
        and state.get("settings") == settings
        and (out / ENTRY).is_file()
        and state.get("versions")
        and (out / state["versions"][0]["manifest"]["path"]).is_file()
    )
    missing = _missing_files(out, state) if unchanged and not force else []
    if missing:
        log.warning(
            "%d file(s) of the last build in %s are gone (%s): building it again from the sources",
            len(missing),
            out,
            first_few(missing, 3),
        )
        force = True  # the last build's files are not all there: nothing of it is carried
    elif unchanged and not force:
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
    catalog, diagnostics = compile_catalog(src, strict=strict, cache=cache, config=config, file_hashes=file_hashes)
    # the index builds on the last good build's segment unless told to start afresh (docs/search.md, "Segments")
    previous = out if same_settings and not force and (out / ENTRY).is_file() else None
    stage = out.resolve().parent / f"{tmp_prefix(out.resolve())}stage{os.getpid()}"
    try:
        in_order, beside = default_contributors(embedder)
        tools = len(catalog.tools)
        counts = _counts(catalog)
        describe({"tools": counts["tools"], "skills": counts["skills"]})  # the phases' lines count as the summary
        report("specs", 0, tools)
        planned = plan(
            catalog,
            [_specs_done(tools), *_reported(in_order, tools), *(extra or [])],
            beside=_reported(beside, tools),
            previous=previous,
            out=out if (out / ENTRY).is_file() else None,
            stage=stage,
        )
        for name in _phase_names(beside):  # run in a forked worker, which does not report: finished by now
            report(name, tools, tools)
        planned.private[tokens.CACHE_FILE] = tokens.saved()
        new_state = {
            "input_hash": input_hash,
            "settings": settings,
            "counts": counts,
            "cache": _cache_to_state(cache, set(file_hashes.values())),
        }
        with phase("write", len(planned.files)):
            written = write_build(out, planned, state, new_state)
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # files staged past the memory budget (linked into the build)
    warnings = [d for d in diagnostics if d.severity is Severity.WARNING]
    return BuildResult(planned.registry_version, False, counts, warnings, written, time.perf_counter() - started)


def _partition_setting() -> dict[str, int]:
    """The vector partition threshold when one is set (it changes a big build's vectors): part of the build's settings."""
    from .contributors.vectors import partition_min  # noqa: PLC0415 - the build side of the vectors, build only

    threshold = partition_min()
    return {} if threshold is None else {"vector_partition": threshold}


#: The progress phase of each default contributor, by module (:mod:`toolcat.build.progress`).
_PHASES = {"index.texts": "index", "prompts": "prompts", "exports.contribute": "exports", "vectors": "vectors"}


def _phase_name(contributor: Contributor) -> str:
    module = getattr(contributor, "__module__", "") or ""
    return _PHASES.get(module.removeprefix("toolcat.build.contributors."), getattr(contributor, "__name__", "stage"))


def _phase_names(contributors: list[Contributor]) -> list[str]:
    return [_phase_name(c) for c in contributors]


def _reported(contributors: list[Contributor], tools: int) -> list[Contributor]:
    """The contributors, each reporting its phase (``tools`` items) as it starts and ends."""

    def wrap(contribute: Contributor, name: str) -> Contributor:
        def run(catalog: CompiledCatalog, artifacts: Any, specs: Any) -> None:
            with phase(name, tools):
                contribute(catalog, artifacts, specs)

        return run

    # the index reports its own steps (toolcat.build.contributors.index.texts), the vectors their texts as they
    # are embedded (toolcat.build.contributors.vectors)
    return [c if _phase_name(c) in ("index", "vectors") else wrap(c, _phase_name(c)) for c in contributors]


def _specs_done(tools: int) -> Contributor:
    """A first contributor that only reports the ``specs`` phase (tool specs, node shards, lookups) as done."""

    def done(catalog: CompiledCatalog, artifacts: Any, specs: Any) -> None:  # noqa: ARG001 - a contributor's signature
        report("specs", tools, tools)

    return done
