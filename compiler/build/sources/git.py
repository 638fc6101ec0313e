"""Skills from Git (seed 004's "nice to have"): ``skills_from`` in ``SRC/toolcat.yaml``, fetched at build time only.

```yaml
skills_from:
  - git: https://github.com/acme/agent-skills.git   # https, ssh, git, file URLs or a local path
    commit: 3f9c2d1e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d    # a full commit id: branches and tags are refused
    path: skills/                                    # the folder of the repository holding skill folders
    into: skills/community                           # the catalogue node they are filed under (default: skills)
```

Each entry is fetched by ``git`` itself (``fetch --depth 1`` of the commit, else of every ref), with a
time limit, no hooks (``core.hooksPath=/dev/null``), no prompts, only the ``https``, ``ssh``, ``git`` and
``file`` transports (``ext::`` would run a command) and no credentials in the URL, into a cache keyed by
URL and commit (``$TOOLCAT_GIT_CACHE``, else ``$XDG_CACHE_HOME/toolcat/git``, else ``~/.cache/toolcat/git``).
A cached checkout is reused without touching the network. Every folder holding a ``SKILL.md`` under
``path`` is then checked as a local skill is (:func:`toolcat.build.sources.skills.check_skill`, with the
same size and symlink rules), its diagnostics located at ``<url>@<commit12>/<file>``. The build records
each entry (url, commit, path, into, the skills it gave) in ``manifest["sources"]["git"]``; the reader
never fetches from Git.

The key is read here from the raw ``toolcat.yaml`` mapping; ``compiler/build/config.py``'s
``BuildConfig`` is expected to grow a ``skills_from`` field holding the same list.
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ...format import settings
from ...format.json_paths import child_path
from ..errors import Diagnostic, Severity
from .limits import SourceParseError
from .parse import MAX_SOURCE_BYTES, MappingError, Parsed, SourceFileError, parse_text, read_source
from .skills import SkillResult, check_skill

__all__ = ["CONFIG_KEY", "GIT_TIMEOUT_SECONDS", "GitSkills", "GitSource", "cache_root", "load_git_skills"]

log = logging.getLogger(__name__)

CONFIG_KEY = "skills_from"
GIT_TIMEOUT_SECONDS = 120
COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
NODE_PART = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
ALLOWED_SCHEMES = frozenset({"https", "ssh", "git", "file"})
#: What git may use to reach a remote; ``ext`` and ``fd`` would run commands.
ALLOWED_PROTOCOLS = "https:ssh:git:file"
ENTRY_FIELDS = frozenset({"git", "commit", "path", "into"})
DONE_MARK = ".toolcat-fetched"


@dataclass(frozen=True, slots=True)
class GitSource:
    """One checked ``skills_from`` entry."""

    url: str
    commit: str
    path: str
    into: tuple[str, ...]

    @property
    def label(self) -> str:
        """How diagnostics name a file of this source: ``<url>@<commit12>``."""
        return f"{self.url}@{self.commit[:12]}"

    def cache_key(self) -> str:
        """The cache folder's name: a hash of URL and commit."""
        return hashlib.sha256(f"{self.url}\0{self.commit}".encode()).hexdigest()[:24]


@dataclass(slots=True)
class GitSkills:
    """What ``skills_from`` added: skills, the nodes they are filed under, the provenance and the diagnostics."""

    skills: list[SkillResult] = field(default_factory=list)
    nodes: list[tuple[str, ...]] = field(default_factory=list)
    provenance: list[dict[str, Any]] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    #: The config file the entries came from (``toolcat.yaml`` or ``toolcat.yml``).
    config: str = "toolcat.yaml"


def cache_root() -> Path:
    """Where fetched commits are kept: ``$TOOLCAT_GIT_CACHE``, else the user's cache folder."""
    if configured := settings.get("TOOLCAT_GIT_CACHE"):
        return Path(configured)
    return settings.cache_home() / "git"


def _config(src: Path) -> tuple[Parsed, str] | None:
    for name in ("toolcat.yaml", "toolcat.yml"):
        if os.path.lexists(src / name):
            data = read_source(src / name, MAX_SOURCE_BYTES, src).decode("utf-8")
            return parse_text(data, is_json=False), name
    return None


class _Entries:
    """Checks the ``skills_from`` entries of one config file, collecting located errors."""

    def __init__(self, parsed: Parsed, rel: str, out: GitSkills) -> None:
        self.parsed, self.rel, self.out = parsed, rel, out

    def error(self, json_path: str, message: str, **kw: Any) -> None:
        line, column = self.parsed.where(json_path)
        self.out.diagnostics.append(
            Diagnostic(Severity.ERROR, self.rel, message, line=line, column=column, json_path=json_path, **kw)
        )

    def url(self, value: Any, at: str) -> str | None:
        if not isinstance(value, str) or not value.strip():
            self.error(
                at,
                "'git' must be a repository URL",
                got=repr(value)[:80],
                code="wrong_type",
                expected="https://host/owner/repo.git, ssh://..., file:///path or an absolute path",
            )
            return None
        url = value.strip()
        parts = urlsplit(url)
        scheme = parts.scheme.lower() if "://" in url else ("file" if url.startswith("/") else "")
        if url.startswith("-") or scheme not in ALLOWED_SCHEMES:
            self.error(
                at,
                f"repository URL {url!r} uses a transport toolcat does not run",
                code="git_url",
                expected=f"a URL with one of {', '.join(sorted(ALLOWED_SCHEMES))}, or an absolute path",
                got=repr(url)[:80],
                hint="scp-style git@host:repo and ext:: are refused; write ssh://git@host/repo.",
            )
            return None
        if parts.password is not None or (scheme in ("https", "git") and parts.username):
            self.error(
                at,
                "the repository URL carries credentials",
                code="git_credentials",
                expected="a URL without user:password@",
                got="a URL with credentials",
                hint="Let git's credential helper or an SSH key authenticate; never write a secret here.",
            )
            return None
        return url

    def commit(self, value: Any, at: str) -> str | None:
        if isinstance(value, str) and COMMIT.match(value.strip().lower()):
            return value.strip().lower()
        self.error(
            at,
            "'commit' must pin a full commit id",
            code="git_unpinned",
            got=repr(value)[:80],
            expected="the 40 (or 64) hex digits of a commit",
            hint="Branches and tags move; run `git rev-parse <ref>` in the repository and paste the id.",
        )
        return None

    def folder(self, value: Any, at: str) -> str | None:
        text = "" if value is None else value
        if isinstance(text, str) and not text.startswith("/") and ".." not in Path(text).parts and "\\" not in text:
            return text.strip("/")
        self.error(
            at,
            "'path' must be a relative folder inside the repository",
            code="git_path",
            got=repr(value)[:80],
            expected="e.g. skills/ (no leading /, no ..)",
        )
        return None

    def node(self, value: Any, at: str) -> tuple[str, ...] | None:
        text = "skills" if value is None else value
        parts = tuple(p for p in text.split("/") if p) if isinstance(text, str) else ()
        if parts and all(NODE_PART.match(p) for p in parts):
            return parts
        self.error(
            at,
            "'into' must be a node path of the catalogue",
            code="git_into",
            got=repr(value)[:80],
            expected="folder names of lowercase letters, digits, '-' or '_', joined by '/', e.g. skills/community",
        )
        return None

    def entry(self, raw: Any, at: str) -> GitSource | None:
        if not isinstance(raw, dict):
            self.error(
                at,
                "each skills_from entry must be a mapping",
                code="wrong_type",
                expected="{git: URL, commit: SHA, path: skills/}",
                got=type(raw).__name__,
            )
            return None
        for key in sorted(set(raw) - ENTRY_FIELDS, key=str):
            self.error(
                child_path(at, str(key)),
                f"unknown skills_from field {key!r}",
                code="unknown_field",
                expected=", ".join(sorted(ENTRY_FIELDS)),
            )
        url = self.url(raw.get("git"), child_path(at, "git"))
        commit = self.commit(raw.get("commit"), child_path(at, "commit"))
        path = self.folder(raw.get("path"), child_path(at, "path"))
        into = self.node(raw.get("into"), child_path(at, "into"))
        if url is None or commit is None or path is None or into is None or set(raw) - ENTRY_FIELDS:
            return None
        return GitSource(url, commit, path, into)


def git_sources(src: Path, out: GitSkills) -> list[GitSource]:
    """The checked ``skills_from`` entries of ``SRC/toolcat.yaml`` (errors go to ``out.diagnostics``)."""
    try:
        found = _config(src)
    except (SourceFileError, SourceParseError, MappingError, UnicodeDecodeError):
        return []  # the config file's own problems are reported where it is read for the build's settings
    if found is None or not isinstance(found[0].data, dict) or found[0].data.get(CONFIG_KEY) is None:
        return []
    parsed, rel = found
    out.config = rel
    entries = _Entries(parsed, rel, out)
    raw = parsed.data[CONFIG_KEY]
    if not isinstance(raw, list):
        entries.error(
            f"$.{CONFIG_KEY}",
            "skills_from must be a list",
            code="wrong_type",
            expected="- {git: URL, commit: SHA, path: skills/}",
            got=type(raw).__name__,
        )
        return []
    checked = [entries.entry(item, f"$.{CONFIG_KEY}[{index}]") for index, item in enumerate(raw)]
    return [source for source in checked if source is not None]


def _git(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run git with no hooks, no prompts, no system config and only the allowed transports, within the time limit."""
    env = {
        **settings.child_environ(drop_prefix="GIT_"),
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    command = [
        "git",
        "-c",
        "core.hooksPath=/dev/null",
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "advice.detachedHead=false",
        *args,
    ]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=GIT_TIMEOUT_SECONDS, check=False
    )


def _fetch(source: GitSource, target: Path) -> str | None:
    """Check ``source`` out into ``target`` (a fresh folder); None, or what went wrong."""
    steps = [
        ["init", "-q", "."],
        ["fetch", "-q", "--depth", "1", "--", source.url, source.commit],
    ]
    for step in steps:
        done = _git(step, target)
        if done.returncode != 0:
            if step[0] != "fetch":
                return done.stderr.strip()
            # a server that refuses to serve a commit by id: fetch every ref, then look for it
            whole = _git(["fetch", "-q", "--", source.url, "+refs/*:refs/toolcat/*"], target)
            if whole.returncode != 0:
                return whole.stderr.strip() or done.stderr.strip()
    checkout = _git(["checkout", "-q", "--detach", source.commit], target)
    if checkout.returncode != 0:
        return checkout.stderr.strip() or f"commit {source.commit} is not in the repository"
    head = _git(["rev-parse", "HEAD"], target)
    if head.stdout.strip() != source.commit:
        return f"checked out {head.stdout.strip()!r}, not the pinned commit"
    return None


def checkout(source: GitSource, cache: Path) -> Path | str:
    """The cached checkout of ``source`` (fetched once), or a message saying why it could not be fetched."""
    final = cache / source.cache_key()
    if (final / DONE_MARK).is_file():
        return final
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=cache))
    try:
        problem = _fetch(source, staging)
    except subprocess.TimeoutExpired:
        problem = f"git took longer than {GIT_TIMEOUT_SECONDS}s"
    except OSError as exc:
        problem = f"git could not run: {exc.strerror or exc}"
    if problem is not None:
        shutil.rmtree(staging, ignore_errors=True)
        return problem
    (staging / DONE_MARK).write_text(f"{source.url}\n{source.commit}\n", encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    return final


def _located(result: SkillResult, label: str) -> SkillResult:
    """A skill checked inside a checkout, with its files named ``<url>@<commit12>/<file>``."""
    diagnostics = [dataclasses.replace(d, file=f"{label}/{d.file}") for d in result.diagnostics]
    record = None if result.record is None else {**result.record, "file": f"{label}/{result.record['file']}"}
    return SkillResult(record=record, diagnostics=diagnostics)


def _skill_folders(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p.parent for p in folder.rglob("SKILL.md") if ".git" not in p.relative_to(folder).parts)


def parsed_where(src: Path, rel: str, json_path: str) -> tuple[int | None, int | None]:
    """Line and column of ``json_path`` in the config file (read again: only on the rare fetch failure)."""
    try:
        return parse_text((src / rel).read_text(encoding="utf-8"), is_json=False).where(json_path)
    except (OSError, SourceParseError, MappingError, UnicodeDecodeError):
        return None, None


def load_git_skills(src: Path) -> GitSkills:
    """Fetch (or reuse) every ``skills_from`` entry of ``SRC/toolcat.yaml`` and check the skills it holds."""
    out = GitSkills()
    sources = git_sources(src, out)
    for index, source in enumerate(sources):
        fetched = checkout(source, cache_root())
        if isinstance(fetched, str):
            at = f"$.{CONFIG_KEY}[{index}].commit"
            line, column = parsed_where(src, out.config, at)
            out.diagnostics.append(
                Diagnostic(
                    Severity.ERROR,
                    out.config,
                    f"could not fetch {source.label}: {fetched[:400]}",
                    line=line,
                    column=column,
                    json_path=at,
                    code="git_fetch",
                    hint="Check the URL, that the commit exists there, and that git can reach the host.",
                )
            )
            continue
        folders = _skill_folders(fetched / source.path)
        results = [_located(check_skill(fetched, folder, source.into), source.label) for folder in folders]
        out.skills.extend(results)
        out.nodes.append(source.into)
        out.provenance.append(
            {
                "url": source.url,
                "commit": source.commit,
                "path": source.path,
                "into": "/".join(source.into),
                "skills": sorted(r.record["name"] for r in results if r.record is not None),
            }
        )
        log.info("%s: %d skill(s) from %s", source.label, len(folders), source.path or "the repository root")
    return out
