"""Every environment variable toolcat reads, declared in one place (as Pagefind's ``options.rs`` and FastMCP's ``settings.py``).

Nothing else in toolcat reads ``os.environ``: ``tests/test_structure.py`` fails on a read anywhere else (the
pass-throughs to child processes are listed there). A setting is read when it is asked for, not at import, so a
host (or a test) that sets one before a call sees it. ``docs/settings.md`` is generated from :data:`SETTINGS`
(``python -m toolcat.format.settings``), and a test keeps the two equal.

Where files live (XDG Base Directory):

- **caches** (downloaded catalogue files, built model graphs, vectors, Git checkouts): :func:`cache_home`, that is
  ``$TOOLCAT_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolcat``, else ``~/.cache/toolcat``; each kind in its own folder
  below it (``models/``, ``git/``, ...), which a kind's own variable may move (``$TOOLCAT_GIT_CACHE``).
- **state** (``toolcat serve``'s SQLite file): :func:`state_home`, ``$XDG_STATE_HOME/toolcat``, else
  ``~/.local/state/toolcat``.

Variables a *catalogue or host names* (a handler's ``${SECRET}``, ``serve --token-env NAME``, ``import mcp --env``)
are not settings: they are read verbatim through :func:`named` and never logged.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

__all__ = [
    "SETTINGS",
    "Setting",
    "cache_home",
    "child_environ",
    "flag_off",
    "get",
    "markdown_table",
    "named",
    "named_variables",
    "positive_int",
    "set_default",
    "state_home",
]


@dataclass(frozen=True, slots=True)
class Setting:
    """One environment variable: its name, its default as the docs show it, and one line on what it does."""

    name: str
    default: str
    doc: str
    #: who sets it: ``user`` (a person or a host), ``internal`` (toolcat itself, for a child process it starts)
    audience: str = "user"


SETTINGS: tuple[Setting, ...] = (
    Setting(
        "TOOLCAT_CACHE_DIR",
        "`$XDG_CACHE_HOME/toolcat`, else `~/.cache/toolcat`",
        "The cache home: the reader's verified files, built model graphs (`models/`), Git checkouts (`git/`).",
    ),
    Setting(
        "TOOLCAT_CACHE", "unset", "The deprecated name of `TOOLCAT_CACHE_DIR` (read with a warning when that is unset)."
    ),
    Setting("XDG_CACHE_HOME", "`~/.cache`", "The XDG cache folder; toolcat's cache home is `toolcat/` below it."),
    Setting(
        "XDG_STATE_HOME",
        "`~/.local/state`",
        "The XDG state folder; `toolcat serve` keeps its SQLite state in `toolcat/`.",
    ),
    Setting("TOOLCAT_GIT_CACHE", "`<cache home>/git`", "Where `skills_from` keeps fetched commits."),
    Setting(
        "TOOLCAT_EMBEDDER",
        "unset (the default tier when installed)",
        "A machine's default embedder when neither `--embedder` nor `search.embedder` names one (`none`: lexical).",
    ),
    Setting(
        "TOOLCAT_EMBEDDERS",
        "unset",
        "Comma-separated embedder specs a reader may load beyond the built-in ones (a catalogue is data).",
    ),
    Setting(
        "TOOLCAT_SEMANTIC", "on", "`0`, `off`, `no` or `false`: readers ignore a build's vectors (lexical answers)."
    ),
    Setting(
        "TOOLCAT_LEARNED_FUSION",
        "on",
        "`0`, `off`, `no` or `false`: readers fuse the lexical and semantic scores with the hand-tuned constants instead"
        ' of the learned model (docs/search.md, "Learned fusion"); on, the learned model of the default embedder'
        " (`minilm-tools`) applies; `all`: the opt-in ones too (the base MiniLM's, `minilm-onnx`, and the lexical tier's), each with its"
        " own weak bar.",
    ),
    Setting("TOOLCAT_QUERY_THREADS", "1", "Threads a query embedding runs on (a reader shares the host's cores)."),
    Setting("TOOLCAT_EMBED_THREADS", "every core", "Threads a build embeds documents on."),
    Setting("TOOLCAT_EMBED_BF16", "1", "`0`: a sentence-transformers build embeds in float32 instead of bf16."),
    Setting(
        "TOOLCAT_VECTOR_CACHE_MB",
        "1024",
        "The vector cache's size cap in MB (`<cache home>/vectors/`): past it, builds remove the least recently used shards.",
    ),
    Setting(
        "TOOLCAT_VECTOR_PARTITION",
        "2000",
        "A number N: builds of more than N tools partition their tool vectors into clusters a query reads a few of,"
        " with a row table for its lexical candidates; `0` or `off`: no build partitions (docs/search.md"
        ' "Vectors a CDN can serve").',
    ),
    Setting("TOOLCAT_BUILD_WORKERS", "unset", "`1`: a build never forks a worker process beside the main one."),
    Setting(
        "TOOLCAT_SANDBOX",
        "unset",
        "The folder the example handlers (`file.*`, `refactor.*`) may touch, when `--sandbox` does not name one.",
    ),
    Setting("TOOLCAT_STATE_PASSWORD", "unset", "The Redis password of `serve --state redis://...` (never in the URL)."),
    Setting("OTEL_EXPORTER_OTLP_ENDPOINT", "unset", "Where `toolcat serve` sends OpenTelemetry spans and metrics."),
    Setting(
        "TOOLCAT_SITE_PROGRESS_FILE",
        "unset",
        "Set by `toolcat site` for its mkdocs child: each converted page appends one byte to this file.",
        audience="internal",
    ),
)

_BY_NAME = {setting.name: setting for setting in SETTINGS}
_OFF = ("0", "off", "no", "false")


def get(name: str) -> str:
    """The value of the declared setting ``name``, stripped ("" when unset); an undeclared name is a bug (KeyError)."""
    if name not in _BY_NAME:
        msg = f"{name} is not a declared toolcat setting: add it to toolcat.format.settings.SETTINGS"
        raise KeyError(msg)
    return os.environ.get(name, "").strip()


def flag_off(name: str) -> bool:
    """Whether the declared setting ``name`` turns something off (``0``, ``off``, ``no``, ``false``)."""
    return get(name).lower() in _OFF


def positive_int(name: str, default: int) -> int:
    """The declared setting ``name`` as a positive integer, else ``default`` (unset, not a number, or under 1)."""
    try:
        value = int(get(name) or default)
    except ValueError:
        return default
    return value if value > 0 else default


def named(name: str) -> str | None:
    """A variable a catalogue or host names (a secret by reference): its value, or None when unset or empty."""
    return os.environ.get(name) or None


def named_variables() -> Mapping[str, str]:
    """The environment as a read-only mapping, for looking up the variables a catalogue or host names."""
    return os.environ


def child_environ(*, drop_prefix: str | None = None, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment for a child process it starts (less the variables starting ``drop_prefix``)."""
    env = {k: v for k, v in os.environ.items() if drop_prefix is None or not k.startswith(drop_prefix)}
    env.update(extra or {})
    return env


def set_default(name: str, value: str) -> None:
    """Set ``name`` for this process and its children unless already set (``HF_HUB_OFFLINE``, ``PYTHONUNBUFFERED``)."""
    os.environ.setdefault(name, value)


def cache_home() -> Path:
    """toolcat's cache home: ``$TOOLCAT_CACHE_DIR``, else ``$XDG_CACHE_HOME/toolcat``, else ``~/.cache/toolcat``.

    ``$TOOLCAT_CACHE`` (the old name) is read when ``$TOOLCAT_CACHE_DIR`` is unset, with a warning.
    """
    chosen, old = get("TOOLCAT_CACHE_DIR"), get("TOOLCAT_CACHE")
    if old:
        use = "it is ignored: TOOLCAT_CACHE_DIR is set" if chosen else "rename it to TOOLCAT_CACHE_DIR"
        log.warning("$TOOLCAT_CACHE is deprecated; %s", use)
    if chosen or old:
        return Path(chosen or old).expanduser()
    xdg = get("XDG_CACHE_HOME")
    return Path(xdg).expanduser() / "toolcat" if xdg else Path.home() / ".cache" / "toolcat"


def state_home() -> Path:
    """The folder toolcat keeps state in: ``$XDG_STATE_HOME/toolcat``, else ``~/.local/state/toolcat``."""
    xdg = get("XDG_STATE_HOME")
    return (Path(xdg).expanduser() if xdg else Path.home() / ".local" / "state") / "toolcat"


def markdown_table(settings: tuple[Setting, ...] = SETTINGS) -> str:
    """The settings as the Markdown table docs/settings.md carries."""
    rows = ["| variable | default | what it does |", "|---|---|---|"]
    rows += [
        f"| `{s.name}` | {s.default} | {s.doc}{' (internal)' if s.audience == 'internal' else ''} |" for s in settings
    ]
    return "\n".join(rows) + "\n"


_Writer = Callable[[str], object]


def _main(write: _Writer = sys.stdout.write) -> None:
    write(markdown_table())


if __name__ == "__main__":
    _main()
