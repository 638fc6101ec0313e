"""``toolcat site``: build the browsable docs site from a build folder, and optionally serve it."""

from __future__ import annotations

import logging
from pathlib import Path

import click

log = logging.getLogger(__name__)


@click.command("site")
@click.option(
    "--build",
    "build_dir",
    default="build",
    show_default=True,
    type=click.Path(path_type=Path),
    help="The build folder to read (what `toolcat build` wrote).",
)
@click.option(
    "--out",
    "out",
    default=None,
    type=click.Path(path_type=Path),
    help="Where the HTML site goes [default: BUILD/site].",
)
@click.option(
    "--project",
    "project_dir",
    default=None,
    type=click.Path(path_type=Path),
    help="Also keep the generated mkdocs project (mkdocs.yml + docs/) in this folder.",
)
@click.option("--serve", is_flag=True, help="Serve the site on 127.0.0.1 after building it (Ctrl-C stops).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port for --serve.")
def site(build_dir: Path, out: Path | None, project_dir: Path | None, serve: bool, port: int) -> None:
    """Generate the mkdocs site of a catalogue build and build it with `mkdocs build --strict`."""
    from ..site.render import build_site, serve_site  # noqa: PLC0415 - heavy imports only when building

    try:
        result = build_site(build_dir, out, project_dir=project_dir)
    except OSError as exc:  # a full disk or a read-only folder: a diagnostic, not a traceback
        where = f" {exc.filename}" if exc.filename else ""
        msg = f"could not write the site{where}: {exc.strerror or exc}. Free some space or choose another --out."
        raise click.ClickException(msg) from None
    click.echo(result.summary())
    if serve:
        serve_site(result.out, port, announce=click.echo)


COMMANDS: list[click.Command] = [site]
