"""How the reader commands talk to a terminal: where a catalogue comes from, and one renderer of envelopes.

stdout carries only the answer (the JSON envelope with ``--json``, the readable form otherwise), so that it can
be piped into another program; notes, warnings and errors go to stderr. Every reader command (``show``,
``help``, ``exec``, ``list``, ``search``, ``prompt``, ``export``, ``stats``) takes ``--build`` as a build folder
or the http(s) base URL of a published one; ``--url`` is kept as a hidden alias of it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any

import click

from ..format.types import Json

#: Longest rendering of one detail value (a server's answer body can be large): the rest is elided.
MAX_DETAIL_CHARS = 2000
#: Details rendered by a dedicated line, not by the generic ``key: value`` one.
_SHOWN_APART = ("field_errors", "suggestions")


def is_url(location: str) -> bool:
    """Whether a ``--build`` value names a published build (http or https) rather than a folder."""
    return location.startswith(("http://", "https://"))


def location_options(fn: Callable[..., None]) -> Callable[..., None]:
    """``--build FOLDER|URL`` (default ``build``), ``--cache-dir``, and ``--url`` as a hidden alias of ``--build``."""
    fn = click.option(
        "--cache-dir",
        default=None,
        help="Cache folder for a URL build (default $TOOLCAT_CACHE_DIR or ~/.cache/toolcat).",
    )(fn)
    fn = click.option("--url", default=None, hidden=True, help="The same as --build URL (kept for older scripts).")(fn)
    return click.option(
        "--build",
        "build_dir",
        default="build",
        show_default=True,
        help="A build folder (the one holding catalog.json) or the http(s) base URL of a published build.",
    )(fn)


def open_catalog(location: str, cache_dir: str | None = None, **options: Any) -> Any:
    """``Catalog.open(location)``; a catalogue that cannot be opened is a clean error (exit 1) rendered as one."""
    from ..format.envelope import ReaderError  # noqa: PLC0415 - keeps `toolcat --help` fast
    from ..reader.catalog import Catalog  # noqa: PLC0415 - keeps `toolcat --help` fast

    try:
        return Catalog.open(location, cache_dir=cache_dir, **options)
    except ReaderError as exc:
        raise click.ClickException(render_error(exc.envelope())) from None


def _detail_text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=repr)
    text = " ".join(text.split())
    return text if len(text) <= MAX_DETAIL_CHARS else text[:MAX_DETAIL_CHARS] + f"… ({len(text):,} characters)"


def _detail_lines(details: Json) -> list[str]:
    lines = []
    for item in details.get("field_errors") or []:
        expected = f" (expected {item['expected']})" if item.get("expected") else ""
        lines.append(f"  - {item.get('field')}: {item.get('message')}{expected}")
    if details.get("suggestions"):
        lines.append("  did you mean: " + ", ".join(map(str, details["suggestions"])))
    lines += [
        f"  {key}: {_detail_text(value)}"
        for key, value in details.items()
        if key not in _SHOWN_APART and value not in (None, "", [], {})
    ]
    return lines


def render_error(envelope: Json) -> str:
    """An error envelope for a person: code and message, then every detail (a server's reason), hints and next step."""
    error = envelope.get("error") or {}
    lines = [f"{error.get('code')}: {error.get('message')}"]
    details = error.get("details")
    if isinstance(details, dict):
        lines += _detail_lines(details)
    lines.extend(f"  hint: {hint}" for hint in error.get("hints") or [])
    if error.get("next_action"):
        lines.append(f"  next: {json.dumps(error['next_action'], ensure_ascii=False)}")
    if error.get("help_path") and error.get("help_path") != "root":
        lines.append(f"  help: toolcat help {error['help_path']}")
    return "\n".join(lines)


def warnings_of(envelope: Json) -> list[str]:
    """The notes an answer carries (``meta.warnings``), whether it succeeded or not."""
    meta = envelope.get("meta")
    return [str(w) for w in meta.get("warnings") or []] if isinstance(meta, dict) else []


def emit(envelope: Json, as_json: bool, render: Callable[[Json], str]) -> None:
    """Print an answer: the envelope as JSON, or ``render`` of it, on stdout; warnings and errors on stderr.

    An error envelope exits with status 1 (its JSON still goes to stdout with ``--json``).
    """
    failed = envelope.get("ok") is False
    if not as_json:
        for warning in warnings_of(envelope):
            click.echo(f"warning: {warning}", err=True)
    if as_json:
        click.echo(json.dumps(envelope, indent=2, ensure_ascii=False, default=repr))
    elif failed:
        click.echo(render_error(envelope), err=True)
    else:
        click.echo(render(envelope))
    if failed:
        sys.exit(1)
