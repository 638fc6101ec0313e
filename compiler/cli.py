"""The ``toolcat`` command line: each command parses its options and makes one call."""

from __future__ import annotations

import logging
import sys

import click

from . import __version__

log = logging.getLogger(__name__)


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


def _register_command_modules() -> None:
    """Add the commands of every module in :mod:`toolcat.commands` (sorted by module name)."""
    import importlib  # noqa: PLC0415 - stdlib, imported on first use
    import pkgutil  # noqa: PLC0415 - stdlib, imported on first use

    from . import commands  # noqa: PLC0415 - loaded by the command that needs it: keeps the CLI's start and --help fast

    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        module = importlib.import_module(f"toolcat.commands.{info.name}")
        for command in getattr(module, "COMMANDS", []):
            main.add_command(command)


_register_command_modules()

if __name__ == "__main__":  # pragma: no cover
    main()
