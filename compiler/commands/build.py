"""``toolcat build`` and ``toolcat validate``: compile catalog_src into a build folder, or only check it."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import click

from ..build.errors import Diagnostic
from .progress import PhaseDisplay, wanted

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
def build(
    src: Path, out: Path, strict: bool, force: bool, as_json: bool, embedder: str | None, publish_model: Path | None
) -> None:
    """Compile SRC (default catalog_src) into versioned artifacts in --out (default build)."""
    from ..build.pipeline import build as run_build  # noqa: PLC0415 - heavy imports only when building
    from ..engines.embedding import EmbedderError  # noqa: PLC0415 - loaded by the command that needs it

    with _progress(src) as progress:
        try:
            result = run_build(src, out, strict=strict, force=force, progress=progress, embedder=embedder)
        except EmbedderError as err:
            raise click.ClickException(f"--embedder: {err.message}; {err.hint}") from err
    if publish_model is not None:
        from ..build.published_model import publish_build_model  # noqa: PLC0415 - only when publishing the model

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
