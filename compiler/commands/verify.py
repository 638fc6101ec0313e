"""``toolcat verify``: check a build folder before deploying it."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("build_dir", default="build", type=click.Path(path_type=Path))
def verify(build_dir: Path) -> None:
    """Check that every file of BUILD_DIR is reachable, matches its hash and validates against its schema."""
    from ..build.verify import verify_build  # noqa: PLC0415 - keeps --help fast

    report = verify_build(build_dir)
    for problem in report.problems:
        click.echo(problem, err=True)
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(report.kinds.items()))
    if not report.ok:
        raise click.ClickException(f"{len(report.problems)} problem(s) in {report.files_checked} files checked")
    click.echo(f"ok: {report.files_checked} files checked ({kinds})")


COMMANDS = [verify]
