"""The ``toolcat`` command line: each command parses its options and makes one call."""

from __future__ import annotations

import contextlib
import json
import logging
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from . import __version__
from .errors import Diagnostic

log = logging.getLogger(__name__)

#: Show a progress bar when the tools files weigh more than this (a few hundred tools).
PROGRESS_THRESHOLD_BYTES = 256 * 1024


def _configure_logging(verbose: int, quiet: int) -> None:
    level = logging.WARNING - 10 * verbose + 10 * quiet
    logging.basicConfig(
        level=max(logging.DEBUG, level), format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr
    )


#: Which extra brings each optional top-level module, for the message of a command that needs it.
EXTRA_OF_MODULE = {
    **dict.fromkeys(("yaml", "frontmatter", "jinja2", "sklearn", "scipy", "numpy", "bpe_openai"), "build"),
    **dict.fromkeys(("jsonschema", "referencing", "re2"), "exec"),
    **dict.fromkeys(("mkdocs", "material", "markdown", "nh3"), "site"),
    **dict.fromkeys(("mcp", "mcp_types", "anyio", "uvicorn", "starlette"), "mcp"),
}

#: Commands whose extra is not the one of the first module they miss (site needs jinja2 too, but [site] brings all).
EXTRA_OF_COMMAND = {"site": "site", "serve": "mcp"}


class ToolcatGroup(click.Group):
    """The command group; a command whose optional dependency is missing says which extra to install."""

    def invoke(self, ctx: click.Context) -> object:
        """Run the command; a missing optional module becomes a one-line error naming its extra."""
        try:
            return super().invoke(ctx)
        except ModuleNotFoundError as exc:
            top = (exc.name or "").split(".")[0]
            extra = EXTRA_OF_MODULE.get(top)
            if extra is None:
                raise
            command = ctx.invoked_subcommand or "this command"
            extra = EXTRA_OF_COMMAND.get(command, extra)
            msg = (
                f"toolcat {command} needs the [{extra}] extra ({top} is not installed): "
                f"pip install 'toolcat[{extra}]' (or 'toolcat[all]')"
            )
            raise click.ClickException(msg) from None


@click.group(cls=ToolcatGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="toolcat")
@click.option("-v", "--verbose", count=True, help="More log output (repeatable).")
@click.option("-q", "--quiet", count=True, help="Less log output (repeatable).")
def main(verbose: int, quiet: int) -> None:
    """toolcat compiles tool definitions and Agent Skills into a static, searchable catalogue."""
    _configure_logging(verbose, quiet)


def _print_warnings(warnings: list[Diagnostic], quiet: bool) -> None:
    if warnings and not quiet:
        for diagnostic in warnings:
            click.echo(diagnostic.render(), err=True)
        click.echo(f"{len(warnings)} warning(s); --strict turns them into errors.", err=True)


@contextlib.contextmanager
def _progress(src: Path) -> Iterator[Callable[[int], None] | None]:
    """A progress bar on stderr for builds of more than a few hundred tools, by bytes of source read."""
    from .load import TOOL_SUFFIXES, source_files  # noqa: PLC0415 - keeps --help fast

    if not src.is_dir():
        yield None
        return
    total = sum(p.stat().st_size for p in source_files(src) if p.suffix in TOOL_SUFFIXES)
    if total <= PROGRESS_THRESHOLD_BYTES:
        yield None
        return
    with click.progressbar(length=total, label="compiling sources", file=sys.stderr) as bar:
        yield bar.update


@main.command()
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
    help="Semantic tier: minilm, static-minilm, st:NAME_OR_PATH, model2vec:NAME_OR_PATH or a model folder; "
    "'none' for none. Default: search.embedder in SRC/toolcat.yaml. Needs the [semantic] extra.",
)
def build(src: Path, out: Path, strict: bool, force: bool, as_json: bool, embedder: str | None) -> None:
    """Compile SRC (default catalog_src) into versioned artifacts in --out (default build)."""
    from .build import build as run_build  # noqa: PLC0415 - heavy imports only when building
    from .embedding import EmbedderError  # noqa: PLC0415

    with _progress(src) as progress:
        try:
            result = run_build(src, out, strict=strict, force=force, progress=progress, embedder=embedder)
        except EmbedderError as err:
            raise click.ClickException(f"--embedder: {err.message}; {err.hint}") from err
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


@main.command()
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--json", "as_json", is_flag=True, help="Print the diagnostics as JSON.")
def validate(src: Path, strict: bool, as_json: bool) -> None:
    """Check SRC without writing anything; exit 1 when it is invalid."""
    from .build import compile_catalog  # noqa: PLC0415 - heavy imports only when needed

    catalog, diagnostics = compile_catalog(src, strict=strict)
    warnings = [d for d in diagnostics if d.severity.value == "warning"]
    if as_json:
        click.echo(json.dumps({"ok": True, "diagnostics": [d.as_dict() for d in diagnostics]}, indent=2))
        return
    _print_warnings(warnings, quiet=False)
    tools = sum(1 for t in catalog.tools.values() if t.skill is None)
    click.echo(f"valid: {len(catalog.nodes)} nodes, {tools} tools, {len(catalog.skills)} skills")


def _register_command_modules() -> None:
    """Add the commands of every module in :mod:`toolcat.commands` (sorted by module name)."""
    import importlib  # noqa: PLC0415
    import pkgutil  # noqa: PLC0415

    from . import commands  # noqa: PLC0415

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"toolcat.commands.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            main.add_command(command)


_register_command_modules()

if __name__ == "__main__":  # pragma: no cover
    main()
