"""``toolcat build`` and ``toolcat validate``: compile catalog_src into a build folder, or only check it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..build.errors import Diagnostic
from .progress import PhaseDisplay, wanted

if TYPE_CHECKING:
    from ..build.pipeline import BuildResult

#: Show a progress bar when the tools files weigh more than this (a few hundred tools).
PROGRESS_THRESHOLD_BYTES = 256 * 1024


def _print_warnings(warnings: list[Diagnostic], quiet: bool) -> None:
    if warnings and not quiet:
        for diagnostic in warnings:
            click.echo(diagnostic.render(), err=True)
        click.echo(f"{len(warnings)} warning(s); --strict turns them into errors.", err=True)


@contextlib.contextmanager
def _progress(src: Path) -> Iterator[PhaseDisplay | None]:
    """Phase-by-phase progress on stderr for builds of more than a few hundred tools (none under ``-q``)."""
    from ..build.sources.kinds import TOOL_SUFFIXES  # noqa: PLC0415 - keeps --help fast
    from ..build.sources.load import source_files  # noqa: PLC0415 - keeps --help fast

    if not src.is_dir() or not wanted():
        yield None
        return
    total = sum(p.stat().st_size for p in source_files(src) if p.suffix in TOOL_SUFFIXES)
    if total <= PROGRESS_THRESHOLD_BYTES:
        yield None
        return
    display = PhaseDisplay()
    try:
        yield display
    finally:
        display.close()


@click.command()
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path))
@click.option(
    "--out", "out", default="build", type=click.Path(path_type=Path), show_default=True, help="Output folder."
)
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option(
    "--force",
    is_flag=True,
    help="Rebuild from scratch even when the sources did not change (this also merges the search index into one segment).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--embedder",
    default=None,
    help="Semantic tier: minilm-tools (the default: MiniLM with the tool-retrieval adapter), minilm-onnx (the base "
    "MiniLM), minilm-onnx-f32, onnx:FOLDER, minilm, static-minilm, st:NAME_OR_PATH, model2vec:NAME_OR_PATH or a "
    "model folder; 'none' for none. Default: search.embedder in SRC/toolcat.yaml, else $TOOLCAT_EMBEDDER, else "
    "minilm-tools when installed (docs/search.md).",
)
@click.option(
    "--publish-model",
    "publish_model",
    default=None,
    type=click.Path(path_type=Path),
    help="Also write the embedder the vectors were made with into this folder (model.json, the ONNX graph, the "
    "vocabulary: about 58 MB) for the TypeScript reader's semantic tier (js/README.md).",
)
@click.option(
    "--watch",
    is_flag=True,
    help="Build, then keep watching SRC (toolcat.yaml included) and build again in this process on each change, "
    "until Ctrl-C. A failed build prints its errors, leaves the last good build as it was and keeps watching.",
)
def build(
    src: Path,
    out: Path,
    strict: bool,
    force: bool,
    as_json: bool,
    embedder: str | None,
    publish_model: Path | None,
    watch: bool,
) -> None:
    """Compile SRC (default catalog_src) into versioned artifacts in --out (default build)."""
    if watch:
        if as_json or publish_model is not None:
            raise click.UsageError("--watch takes neither --json nor --publish-model")
        _watch(src, out, strict=strict, force=force, embedder=embedder)
        return
    result = _build_once(src, out, strict=strict, force=force, embedder=embedder)
    if publish_model is not None:
        from ..build.published_model import publish_build_model  # noqa: PLC0415 - only when publishing the model
        from ..engines.embedding import EmbedderError  # noqa: PLC0415 - loaded by the command that needs it

        try:
            publish_build_model(out, publish_model)
        except EmbedderError as err:
            raise click.ClickException(f"--publish-model: {err.message}; {err.hint}") from err
    if as_json:
        click.echo(
            json.dumps(
                {
                    "registry_version": result.registry_version,
                    "up_to_date": result.up_to_date,
                    "counts": result.counts,
                    "files_written": result.write.files_written if result.write else 0,
                    "warnings": [w.as_dict() for w in result.warnings],
                },
                indent=2,
            )
        )
        return
    _print_warnings(result.warnings, quiet=False)
    click.echo(result.summary())


def _build_once(src: Path, out: Path, *, strict: bool, force: bool, embedder: str | None) -> BuildResult:
    """One build, with its progress display; an embedder that cannot be loaded is a one-line error."""
    from ..build.pipeline import build as run_build  # noqa: PLC0415 - heavy imports only when building
    from ..engines.embedding import EmbedderError  # noqa: PLC0415 - loaded by the command that needs it

    with _progress(src) as progress:
        try:
            return run_build(src, out, strict=strict, force=force, progress=progress, embedder=embedder)
        except EmbedderError as err:
            raise click.ClickException(f"--embedder: {err.message}; {err.hint}") from err


def _watch(src: Path, out: Path, *, strict: bool, force: bool, embedder: str | None) -> None:
    """``--watch``: build, then build again on each settled change of SRC until Ctrl-C (or SIGTERM); exit 0.

    A first Ctrl-C during a build lets it finish (a build stopped half-way is repaired by the next one, but is
    not left to it), then exits; a second stops it at once. Errors of a build are printed as a one-shot build
    prints them, and the watch goes on.
    """
    from ..build import watch as watching  # noqa: PLC0415 - build only

    if not src.is_dir():  # a typo: the one-shot build's error and exit 1, not a watch of nothing
        _build_once(src, out, strict=strict, force=force, embedder=embedder)
    inside = out.resolve().is_relative_to(src.resolve())  # its own writes start no rebuild
    watcher = watching.Watcher(src, skip=out.resolve().relative_to(src.resolve()).as_posix() if inside else None)
    building = False
    me = os.getpid()

    def stop(signum: int, frame: object) -> None:  # noqa: ARG001 - a signal handler's signature
        if os.getpid() != me:  # a forked worker of the build inherits the handler: the watcher decides
            return
        if watcher.stopped:
            raise KeyboardInterrupt
        watcher.request_stop()
        if building:  # written at once, unbuffered: the build may be inside a write to stderr
            with contextlib.suppress(OSError):
                os.write(sys.stderr.fileno(), b"stopping once this build is done (Ctrl-C again to stop now)\n")

    def build_once(changed: list[str]) -> bool:
        nonlocal building
        what = f"{watching.describe_changes(changed)}: " if changed else ""
        building = True
        try:
            result = _build_once(src, out, strict=strict, force=force and not changed, embedder=embedder)
        except click.ClickException as exc:
            exc.show()
            click.echo(
                f"{what}build failed: the last good build in {out} is as it was; "
                f"watching {src} for changes (Ctrl-C stops)",
                err=True,
            )
            return False
        finally:
            building = False
        _print_warnings(result.warnings, quiet=False)
        took = f" in {result.seconds:.2f}s" if result.up_to_date else ""  # a build's summary has its seconds
        click.echo(f"{what}{result.summary()}{took}")
        if not changed and not watcher.stopped:
            click.echo(f"watching {src} for changes (Ctrl-C stops)", err=True)
        return True

    watching.prime()  # once, before the first build: what each build's forked worker then finds loaded
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        watching.watch(watcher, build_once)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    click.echo("stopped watching", err=True)


@click.command()
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as JSON.")
def validate(src: Path, strict: bool, as_json: bool) -> None:
    """Check SRC without writing anything; exit 1 when it is invalid."""
    from ..build.pipeline import compile_catalog  # noqa: PLC0415 - heavy imports only when needed

    catalog, diagnostics = compile_catalog(src, strict=strict)
    warnings = [d for d in diagnostics if d.severity.value == "warning"]
    if as_json:
        click.echo(json.dumps({"ok": True, "diagnostics": [d.as_dict() for d in diagnostics]}, indent=2))
        return
    _print_warnings(warnings, quiet=False)
    tools = sum(1 for t in catalog.tools.values() if t.skill is None)
    click.echo(f"valid: {len(catalog.nodes)} nodes, {tools} tools, {len(catalog.skills)} skills")


COMMANDS: list[click.Command] = [build, validate]
