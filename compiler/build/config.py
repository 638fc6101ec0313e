"""The build's settings: ``SRC/toolcat.yaml`` (or ``SRC/toolcat.yml``), read once, under the source limits.

:func:`read_config` parses the file with :func:`toolcat.build.sources.parse.parse_file` (so it is held to
the same size, alias and nesting limits, and reports the same located errors as every source file) and checks
it against :data:`OPTIONS`, the one declaration of what the file may say: an unknown key is a warning with a
did-you-mean (an error under ``--strict``), a value of the wrong type an error, and both files at once an
error. The pipeline reads it once and hands the :class:`BuildConfig` to every stage that needs a setting.
"""

from __future__ import annotations

import difflib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engines.embedding import BUNDLED_MINILM, ONNX_MINILM, STATIC_MINILM
from ..format.json_paths import child_path
from .errors import Diagnostic, Severity, SourceError
from .sources.kinds import CONFIG_FILES
from .sources.parse import MAX_SOURCE_BYTES, Parsed, parse_file

log = logging.getLogger(__name__)

#: The names the settings file may have at the source root; at most one of them may exist.
#: Every key the settings file may hold: section → option → what it takes (docs/sources.md, "Build settings").
OPTIONS: dict[str, dict[str, str]] = {
    "search": {
        "embedder": "an embedder spec (minilm-tools, the default; minilm-onnx, minilm, static-minilm, terms, "
        "onnx:FOLDER, st:NAME_OR_PATH, model2vec:NAME_OR_PATH, a model folder) or none",
    },
    "discovery": {
        "per_domain": "true (a discover_<namespace>_tools tool per namespace), false, or a list of namespaces "
        '(seed 002; docs/mcp.md, "Per-domain discovery tools")',
        "pinned": "true (an MCP server lists the pinned, always_load, tools beside the discovery tools) or false "
        "(the default: only the discovery tools, seed 001; a host's --pinned decides per server)",
    },
    # a list, not a section: build/sources/git.py checks its entries, with located errors of its own
    "skills_from": {"*": "a list of {git: URL, commit: SHA, path: folder, into: node} (docs/sources.md)"},
}
#: The learned term expansion's spec (``--embedder terms``, opt-in): expansion postings in the index, no vectors (docs/search.md).
TERMS_SPEC = "terms"
#: Values of ``search.embedder`` (and ``--embedder``) that turn the semantic tier off.
OFF = ("", "none", "off", "false")
_SPEC_PREFIXES = ("st:", "model2vec:", "onnx:")


@dataclass(frozen=True, slots=True)
class BuildConfig:
    """What ``SRC/toolcat.yaml`` says, checked; ``diagnostics`` holds what was wrong with it (empty when fine)."""

    #: ``search.embedder``: the semantic tier's embedder spec, None for no vectors
    embedder: str | None = None
    #: whether the file names ``search.embedder`` at all (``none`` included): else the build's default applies
    embedder_named: bool = False
    #: the settings file it was read from, relative to the source root (None: no file)
    file: str | None = None
    diagnostics: tuple[Diagnostic, ...] = ()
    #: ``discovery.per_domain``: True for every namespace, else the namespaces named, each with its (line, column)
    per_domain: bool | tuple[tuple[str, int | None, int | None], ...] = False
    #: ``discovery.pinned``: servers list the pinned (always_load) tools beside the discovery tools by default
    pinned: bool = False
    #: ``skills_from`` as written (None: absent); :mod:`toolcat.build.sources.git` checks its entries
    skills_from: Any = None
    #: the parsed settings file (for the line and column of a JSON path), None without one
    parsed: Parsed | None = field(default=None, compare=False, repr=False)

    def where(self, json_path: str) -> tuple[int | None, int | None]:
        """Line and column of ``json_path`` in the settings file ((None, None) when unknown)."""
        return self.parsed.where(json_path) if self.parsed is not None else (None, None)

    def discovery_domains(self, namespaces: list[str]) -> tuple[tuple[str, ...], list[Diagnostic]]:
        """The namespaces that get a ``discover_<namespace>_tools`` tool, and an error for each named one absent."""
        if self.per_domain is True:
            return tuple(sorted(namespaces)), []
        if not self.per_domain:
            return (), []
        problems = [
            Diagnostic(
                Severity.ERROR,
                self.file or CONFIG_FILES[0],
                f"discovery.per_domain names {name!r}, which is not a namespace of this catalogue",
                line=line,
                column=column,
                json_path=f"$.discovery.per_domain[{index}]",
                expected="a namespace: " + ", ".join(namespaces),
                got=repr(name),
                code="unknown_namespace",
                hint=f"Did you mean '{close[0]}'?"
                if (close := difflib.get_close_matches(name, namespaces, n=1))
                else "A namespace is a tool id's first segment (file of file.read).",
            )
            for index, (name, line, column) in enumerate(self.per_domain)
            if name not in namespaces
        ]
        return tuple(sorted({name for name, _, _ in self.per_domain if name in namespaces})), problems

    @property
    def failed(self) -> bool:
        """True when the file has an error (a build must stop, whatever ``--strict`` says)."""
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    def embedder_for(self, override: str | None) -> str | None:
        """The embedder to build with: ``override`` (``--embedder``; ``none`` turns it off), else ``search.embedder``."""
        if override is not None:
            return None if override.strip().lower() in OFF else override.strip()
        return self.embedder


class _Report:
    """Collects the located diagnostics of one settings file."""

    def __init__(self, rel: str, parsed: Parsed) -> None:
        self.rel = rel
        self.parsed = parsed
        self.items: list[Diagnostic] = []

    def add(self, severity: Severity, json_path: str, message: str, **kw: Any) -> None:
        line, column = self.parsed.where(json_path)
        self.items.append(Diagnostic(severity, self.rel, message, line=line, column=column, json_path=json_path, **kw))

    def unknown(self, keys: list[str], known: list[str], path: str, what: str) -> None:
        for key in sorted(set(keys) - set(known)):
            close = difflib.get_close_matches(key, known, n=1)
            self.add(
                Severity.WARNING,
                child_path(path, key),
                f"unknown {what} '{key}' is ignored",
                expected=", ".join(known),
                got=repr(key),
                code="unknown_setting",
                hint=f"Did you mean '{close[0]}'?" if close else f"{what.capitalize()}s: {', '.join(known)}.",
            )


def known_embedder(spec: str) -> bool:
    """Whether ``spec`` has the shape of an embedder spec (a name, a prefixed spec or an existing folder)."""
    low = spec.strip().lower()
    return (
        low in (*BUNDLED_MINILM, *ONNX_MINILM, STATIC_MINILM, TERMS_SPEC)
        or low.startswith(_SPEC_PREFIXES)
        or Path(spec).expanduser().is_dir()
    )


def _embedder(value: Any, report: _Report) -> str | None:
    path = "$.search.embedder"
    if value is None or value is False or (isinstance(value, str) and value.strip().lower() in OFF):
        return None
    if not isinstance(value, str):
        report.add(
            Severity.ERROR,
            path,
            "'embedder' must be an embedder spec or none",
            expected=OPTIONS["search"]["embedder"],
            got=type(value).__name__,
            code="wrong_type",
            hint="Write search: {embedder: minilm}, or embedder: none for no vectors.",
        )
        return None
    if not known_embedder(value):
        names = [*ONNX_MINILM, *BUNDLED_MINILM, STATIC_MINILM, TERMS_SPEC]
        close = difflib.get_close_matches(value.strip().lower(), names, n=1)
        report.add(
            Severity.ERROR,
            path,
            f"unknown embedder {value!r}",
            expected=OPTIONS["search"]["embedder"],
            got=repr(value),
            code="unknown_embedder",
            hint=f"Did you mean '{close[0]}'?"
            if close
            else "Use minilm-tools (the default), minilm-onnx, minilm, static-minilm, terms, onnx:FOLDER, "
            "st:NAME_OR_PATH, model2vec:NAME_OR_PATH or the path of a model folder.",
        )
        return None
    return value.strip()


def _section(data: dict[str, Any], name: str, report: _Report) -> dict[str, Any]:
    value = data.get(name)
    if value is None:
        return {}
    if not isinstance(value, dict):
        report.add(
            Severity.ERROR,
            child_path("$", name),
            f"'{name}' must be a mapping",
            expected="{" + ", ".join(f"{k}: ..." for k in OPTIONS[name]) + "}",
            got=type(value).__name__,
            code="wrong_type",
        )
        return {}
    report.unknown([str(k) for k in value], list(OPTIONS[name]), child_path("$", name), f"{name} setting")
    return value


def _check(rel: str, parsed: Parsed) -> BuildConfig:
    report = _Report(rel, parsed)
    data = parsed.data
    if data is None:
        return BuildConfig(file=rel, parsed=parsed)
    if not isinstance(data, dict):
        report.add(
            Severity.ERROR,
            "$",
            f"{rel} must be a mapping of settings",
            expected="search: {embedder: ...}",
            got=type(data).__name__,
            code="wrong_type",
        )
        return BuildConfig(file=rel, diagnostics=tuple(report.items))
    report.unknown([str(k) for k in data], list(OPTIONS), "$", "setting")
    search = _section(data, "search", report)
    embedder = _embedder(search.get("embedder"), report)
    discovery = _section(data, "discovery", report)
    per_domain = _per_domain(discovery.get("per_domain", False), report)
    pinned = discovery.get("pinned", False)
    if not isinstance(pinned, bool):
        report.add(
            Severity.ERROR,
            "$.discovery.pinned",
            "'pinned' must be true or false",
            expected=OPTIONS["discovery"]["pinned"],
            got=repr(pinned)[:80],
            code="wrong_type",
            hint="Write discovery: {pinned: true} to list the pinned tools beside the discovery tools.",
        )
        pinned = False
    return BuildConfig(
        embedder=embedder,
        embedder_named="embedder" in search,
        file=rel,
        diagnostics=tuple(report.items),
        per_domain=per_domain,
        pinned=pinned,
        skills_from=data.get("skills_from"),
        parsed=parsed,
    )


#: The longest namespace a per-domain tool can carry: ``discover_<namespace>_tools`` within 64 characters.
MAX_DOMAIN = 64 - len("discover__tools")


def _per_domain(value: Any, report: _Report) -> bool | tuple[tuple[str, int | None, int | None], ...]:
    """``discovery.per_domain``: a bool, or a list of namespace names (each with its line and column)."""
    path = "$.discovery.per_domain"
    if isinstance(value, bool):
        return value
    names = value if isinstance(value, list) else None
    if names is None or not all(isinstance(n, str) and 0 < len(n) <= MAX_DOMAIN for n in names):
        report.add(
            Severity.ERROR,
            path,
            "'per_domain' must be true, false or a list of namespaces",
            expected=OPTIONS["discovery"]["per_domain"],
            got=repr(value)[:80],
            code="wrong_type",
            hint=f"Write discovery: {{per_domain: true}}, or per_domain: [file, code] (names up to {MAX_DOMAIN} "
            "characters).",
        )
        return False
    return tuple((str(n), *report.parsed.where(f"{path}[{i}]")) for i, n in enumerate(names))


def read_config(src: Path) -> BuildConfig:
    """The settings of the catalogue in ``src``; defaults when it has no settings file."""
    present = [name for name in CONFIG_FILES if (src / name).exists() or (src / name).is_symlink()]
    if not present:
        return BuildConfig()
    if len(present) > 1:
        both = Diagnostic(
            Severity.ERROR,
            present[1],
            f"both {present[0]} and {present[1]} exist; toolcat reads one settings file",
            expected="one of toolcat.yaml, toolcat.yml",
            got="both",
            code="two_config_files",
            hint=f"Merge them into {present[0]} and delete {present[1]}.",
        )
        return BuildConfig(file=present[0], diagnostics=(both,))
    parsed = parse_file(src / present[0], MAX_SOURCE_BYTES, src)
    if isinstance(parsed, list):
        return BuildConfig(file=present[0], diagnostics=tuple(parsed))
    return _check(present[0], parsed)


def configured_embedder(src: Path, override: str | None = None) -> str | None:
    """The embedder spec: ``override`` (``--embedder``; ``none`` turns it off), else ``search.embedder`` in the settings.

    Raises :class:`SourceError` when the settings file has an error.
    """
    if override is not None:
        return BuildConfig().embedder_for(override)
    config = read_config(src)
    if config.failed:
        raise SourceError([d for d in config.diagnostics if d.severity is Severity.ERROR])
    return config.embedder
