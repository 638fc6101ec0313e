"""``toolcat site``: build the browsable docs site from a build folder, and optionally serve it."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import click

from .flags import path_option
from .progress import PhaseDisplay, wanted

log = logging.getLogger(__name__)


#: Show the site's progress from this many tools on (a smaller site builds in a few seconds).
PROGRESS_FROM_TOOLS = 300


def _large(build_dir: Path) -> bool:
    """Whether the build holds enough tools for its site to take a while (its manifest's counts; else no).

    Only a display decision: the site build reads and verifies every file itself.
    """
    try:
        entry = json.loads((build_dir / "catalog.json").read_text(encoding="utf-8"))
        manifest = json.loads((build_dir / str(entry["manifest"]["path"])).read_text(encoding="utf-8"))
        counts = manifest.get("counts") or {}
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return False
    return isinstance(counts, dict) and int(counts.get("tools", 0) or 0) >= PROGRESS_FROM_TOOLS


@click.command("site")
@path_option("--build", "build_dir", "The build folder to read (what `toolcat build` wrote).", default="build")
@path_option("--out", "out", "Where the HTML site goes [default: BUILD/site].")
@path_option("--project", "project_dir", "Also keep the generated mkdocs project (mkdocs.yml + docs/) in this folder.")
@click.option("--serve", is_flag=True, help="Serve the site on 127.0.0.1 after building it (Ctrl-C stops).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port for --serve.")
def site(build_dir: Path, out: Path | None, project_dir: Path | None, serve: bool, port: int) -> None:
    """Generate the mkdocs site of a catalogue build and build it with `mkdocs build --strict`."""
    from ..site.render import build_site, serve_site  # noqa: PLC0415 - heavy imports only when building

    display = PhaseDisplay() if wanted() and _large(build_dir) else None
    try:
        result = build_site(build_dir, out, project_dir=project_dir, progress=display)
    except OSError as exc:  # a full disk or a read-only folder: a diagnostic, not a traceback
        where = f" {exc.filename}" if exc.filename else ""
        msg = f"could not write the site{where}: {exc.strerror or exc}. Free some space or choose another --out."
        raise click.ClickException(msg) from None
    finally:
        if display is not None:
            display.close()
    click.echo(result.summary())
    if serve:
        serve_site(result.out, port, announce=click.echo)


COMMANDS: list[click.Command] = [site]
