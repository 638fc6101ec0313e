"""The shapes of flag the commands share, declared once: bounded numbers, repeatable values, paths, KEY=VALUE.

Each helper returns a ``click.option`` decorator (or parses what one gave), so that a flag's rules read the same
in every command: a number's range and shown default, a path's kind (a folder, a file, either), a repeatable
flag's metavar, and one error for a pair that is not ``KEY=VALUE``, naming the flag and never the value (it
may be a secret).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Literal

import click

__all__ = ["SECONDS", "bounded", "key_value", "key_values", "path_option", "repeatable"]

#: The range of a timeout in seconds (a handler's, a tools/call's).
SECONDS = click.FloatRange(min=0.1, max=3600)

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

_PATH_KINDS: dict[str, dict[str, bool]] = {"any": {}, "file": {"dir_okay": False}, "folder": {"file_okay": False}}


def bounded(flag: str, kind: click.ParamType[Any], default: float | None, help_: str) -> Decorator:
    """A number within ``kind``'s range (``click.IntRange``/``FloatRange``); its default shown when it has one."""
    return click.option(flag, type=kind, default=default, show_default=default is not None or None, help=help_)


def repeatable(flag: str, dest: str, metavar: str, help_: str) -> Decorator:
    """A flag given any number of times; the command gets the values as a tuple named ``dest``."""
    return click.option(flag, dest, multiple=True, metavar=metavar, help=help_)


def path_option(
    flag: str,
    dest: str,
    help_: str,
    *,
    default: str | None = None,
    kind: Literal["any", "file", "folder"] = "any",
    exists: bool = False,
) -> Decorator:
    """A path (a ``Path``): a folder, a file or either, that must exist or not; its default shown when it has one."""
    return click.option(
        flag,
        dest,
        type=click.Path(path_type=Path, exists=exists, **_PATH_KINDS[kind]),
        default=default,
        show_default=default is not None or None,
        help=help_,
    )


def key_value(
    pair: str, hint: str, form: str = "KEY=VALUE", example: str = "project_id=P-0001", *, value_required: bool = False
) -> tuple[str, str]:
    """``KEY=VALUE`` split at the first ``=`` (the key stripped); BadParameter naming the flag, never the value."""
    key, sep, value = pair.partition("=")
    if not sep or not key.strip() or (value_required and not value):
        raise click.BadParameter(f"{key[:40]!r} is not {form}, e.g. {example}", param_hint=hint)
    return key.strip(), value


def key_values(
    pairs: Iterable[str], hint: str, form: str, example: str, *, value_required: bool = False
) -> dict[str, str]:
    """Repeated ``KEY=VALUE`` flags as a mapping (a later key wins), each checked by :func:`key_value`."""
    return dict(key_value(pair, hint, form, example, value_required=value_required) for pair in pairs)
