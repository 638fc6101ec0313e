"""Skills from Git (seed 004's "nice to have"): ``skills_from`` in ``SRC/toolcat.yaml``, fetched at build time only.

```yaml
skills_from:
  - git: https://github.com/acme/agent-skills.git   # https, ssh, git, file URLs or a local path
    commit: 3f9c2d1e8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d    # a full commit id: branches and tags are refused
    path: skills/                                    # the folder of the repository holding skill folders
    into: skills/community                           # the catalogue node they are filed under (default: skills)
```

Each entry is fetched by ``git`` itself (``fetch --depth 1`` of the commit, else of every ref), with no
hooks (``core.hooksPath=/dev/null``), no prompts, only the ``https``, ``ssh``, ``git`` and ``file``
transports (``ext::`` would run a command) and no credentials anywhere in the URL (user part, query
string, fragment), into a private cache keyed by URL and commit (``$TOOLCAT_GIT_CACHE``, else
``$XDG_CACHE_HOME/toolcat/git``, else ``~/.cache/toolcat/git``). Limits (issue 36):

* one deadline, :data:`GIT_TIMEOUT_SECONDS`, for every entry of ``skills_from`` together (a silent host
  costs it once, not once per git command and entry); a failed fetch is remembered for
  :data:`FAILURE_SECONDS` (in the cache folder), so the next builds in that window fail at once;
* a commit whose files come to more than :data:`MAX_CHECKOUT_BYTES` (or :data:`MAX_CHECKOUT_FILES`
  files) is refused before it is checked out (``git ls-tree -l``);
* a cached checkout is used only when git confirms it is the pinned commit: ``HEAD`` is the commit and
  every file's content hashes (``git hash-object``) to the commit's tree, with no file added; else it
  is fetched again;
* nothing under ``path`` may be, or pass through, a symbolic link: ``path`` itself, a folder on the way
  to it, a skill folder or a file (the files are checked as a local skill's are).

Every folder holding a ``SKILL.md`` under ``path`` is then checked as a local skill is
(:func:`toolcat.build.sources.skills.check_skill`, with the same size and symlink rules), its diagnostics
located at ``<url>@<commit12>/<file>``. The build records each entry (url, commit, path, into, the skills
it gave) in ``manifest["sources"]["git"]``; the reader never fetches from Git.

The settings file is read once, by :func:`toolcat.build.config.read_config` (under the source limits); this
module takes the list as written from ``BuildConfig.skills_from`` and locates its errors with that one parse.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...format import settings
from ...format.errors import ToolcatError
from ...format.json_paths import child_path
from ..errors import Diagnostic, Severity
from .kinds import CONFIG_FILES
from .parse import Parsed
from .skills import SkillResult, check_skill

if TYPE_CHECKING:  # build/config.py imports this package's parse and kinds modules: no import at run time
    from ..config import BuildConfig

__all__ = [
    "CONFIG_KEY",
    "FAILURE_SECONDS",
    "GIT_TIMEOUT_SECONDS",
    "MAX_CHECKOUT_BYTES",
    "MAX_CHECKOUT_FILES",
    "GitSkills",
    "GitSource",
    "cache_root",
    "load_git_skills",
]

log = logging.getLogger(__name__)

CONFIG_KEY = "skills_from"
#: Seconds every git command of one build's ``skills_from`` may take together (one deadline for all entries).
GIT_TIMEOUT_SECONDS = 120.0
#: A failed fetch is answered from memory (the cache folder) for this long: a build loop does not hammer a dead host.
FAILURE_SECONDS = 120.0
#: The files of one pinned commit may come to at most this many bytes, and this many files (checked before checkout).
MAX_CHECKOUT_BYTES = 64 * 1024 * 1024
MAX_CHECKOUT_FILES = 20_000
COMMIT = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
NODE_PART = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
ALLOWED_SCHEMES = frozenset({"https", "ssh", "git", "file"})
#: What git may use to reach a remote; ``ext`` and ``fd`` would run commands.
ALLOWED_PROTOCOLS = "https:ssh:git:file"
ENTRY_FIELDS = frozenset({"git", "commit", "path", "into"})
#: Inside ``.git``: a checkout without it is not finished. It lives under ``.git`` so it is no file of the tree.
DONE_MARK = "toolcat-fetched"
FAILED_PREFIX = ".failed-"


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
    config: str = CONFIG_FILES[0]


def cache_root() -> Path:
    """Where fetched commits are kept: ``$TOOLCAT_GIT_CACHE``, else the user's cache folder."""
    if configured := settings.get("TOOLCAT_GIT_CACHE"):
        return Path(configured)
    return settings.cache_home() / "git"


def _shown(url: str) -> str:
    """``url`` without what may be a secret (user part, query, fragment), for messages."""
    parts = urlsplit(url)
    if "://" not in url:
        return url.split("?", 1)[0].split("#", 1)[0]
    host = parts.netloc.rsplit("@", 1)[-1]
    return f"{parts.scheme}://{host}{parts.path}"


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
                got=repr(_shown(url))[:80],
                hint="scp-style git@host:repo and ext:: are refused; write ssh://git@host/repo.",
            )
            return None
        try:
            password, username = parts.password, parts.username
        except ValueError:  # an unparsable port or netloc: refuse as credentials would be, without echoing it
            password, username = "?", "?"
        if password is not None or (scheme in ("https", "git", "file") and username) or "?" in url or "#" in url:
            self.error(
                at,
                "the repository URL carries credentials, or a query string or fragment that may hold them",
                code="git_credentials",
                expected="a URL without user:password@, ?query or #fragment (ssh://git@host/repo is fine)",
                got="a URL with credentials, a query or a fragment (not shown)",
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


def git_sources(config: BuildConfig, out: GitSkills) -> list[GitSource]:
    """The checked ``skills_from`` entries of the build's settings (errors go to ``out.diagnostics``)."""
    if config.skills_from is None or config.parsed is None or config.file is None:
        return []  # no entries (a settings file with errors is reported where it is read: build/config.py)
    parsed, rel = config.parsed, config.file
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


class _Deadline:
    """One time limit shared by every git command of a build's ``skills_from``."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic()

    def message(self) -> str:
        return f"git ran out of time: every skills_from fetch of a build shares one {self.seconds:g} s limit"


class _OutOfTimeError(ToolcatError):
    """The shared deadline passed (the git command was killed, with every process it started); caught in this module."""


def _git(args: list[str], cwd: Path, deadline: _Deadline, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run git with no hooks, no prompts, no system config and only the allowed transports, before the deadline.

    git runs in its own process group, killed whole at the deadline (a transport helper holding the pipes
    open would otherwise outlive it).
    """
    left = deadline.left()
    if left <= 0:
        raise _OutOfTimeError
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
        "core.fsmonitor=false",
        "-c",
        "protocol.ext.allow=never",
        "-c",
        "advice.detachedHead=false",
        *args,
    ]
    with subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    ) as process:
        try:
            out, err = process.communicate(stdin, timeout=left)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):  # it ended between the timeout and the kill
                os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise _OutOfTimeError from None
    return subprocess.CompletedProcess(command, process.returncode, out, err)


def _tree(commit: str, cwd: Path, deadline: _Deadline) -> dict[str, tuple[str, str, int]] | str:
    """``{path: (mode, object id, size)}`` of every file of ``commit`` (``git ls-tree -r -l``), or what went wrong."""
    listed = _git(["ls-tree", "-r", "-l", "-z", "--full-tree", commit], cwd, deadline)
    if listed.returncode != 0:
        return listed.stderr.strip() or f"cannot list the files of {commit}"
    files: dict[str, tuple[str, str, int]] = {}
    for entry in listed.stdout.split("\0"):
        if not entry:
            continue
        head, _, name = entry.partition("\t")
        mode, kind, oid, size = head.split()
        if kind == "blob":
            files[name] = (mode, oid, int(size))
    return files


def _too_large(files: dict[str, tuple[str, str, int]]) -> str | None:
    total = sum(size for _, _, size in files.values())
    if total > MAX_CHECKOUT_BYTES or len(files) > MAX_CHECKOUT_FILES:
        return (
            f"the commit is too large: {len(files):,} files, {total:,} bytes; a skills_from checkout may hold "
            f"at most {MAX_CHECKOUT_FILES:,} files and {MAX_CHECKOUT_BYTES:,} bytes"
        )
    return None


def _fetch(source: GitSource, target: Path, deadline: _Deadline) -> str | None:
    """Check ``source`` out into ``target`` (a fresh folder); None, or what went wrong."""
    steps = [
        ["init", "-q", "."],
        ["fetch", "-q", "--depth", "1", "--", source.url, source.commit],
    ]
    for step in steps:
        done = _git(step, target, deadline)
        if done.returncode != 0:
            if step[0] != "fetch":
                return done.stderr.strip()
            # a server that refuses to serve a commit by id: fetch every ref, then look for it
            whole = _git(["fetch", "-q", "--", source.url, "+refs/*:refs/toolcat/*"], target, deadline)
            if whole.returncode != 0:
                return whole.stderr.strip() or done.stderr.strip()
    files = _tree(source.commit, target, deadline)
    if isinstance(files, str):
        return files
    if (problem := _too_large(files)) is not None:
        return problem
    checkout = _git(["checkout", "-q", "--detach", source.commit], target, deadline)
    if checkout.returncode != 0:
        return checkout.stderr.strip() or f"commit {source.commit} is not in the repository"
    return _verify(source.commit, target, deadline)


def _blob_id(data: bytes, commit: str) -> str:
    """A blob's object id as git computes it (sha1, or sha256 for a sha256 repository's 64-digit ids)."""
    digest = hashlib.sha256 if len(commit) == 64 else hashlib.sha1
    return digest(b"blob %d\0" % len(data) + data).hexdigest()


def _working_files(target: Path) -> dict[str, Path]:
    """Every file and link of a checkout's working tree (links never followed), by path; ``.git`` left out."""
    found: dict[str, Path] = {}
    for folder, dirs, names in os.walk(target):
        base = Path(folder)
        if base == target:
            dirs[:] = [d for d in dirs if d != ".git"]
        for name in names + [d for d in dirs if (base / d).is_symlink()]:
            found[(base / name).relative_to(target).as_posix()] = base / name
    return found


def _same_files(found: dict[str, Path], files: dict[str, tuple[str, str, int]], commit: str) -> str | None:
    """None when the working tree has exactly the commit's paths and kinds, and the same link targets; else why.

    The content of regular files is compared next, by git's own hash.
    """
    if extra := sorted(set(found) - set(files)):
        return f"the checkout holds {len(extra)} file(s) the commit does not, e.g. {extra[0]!r}"
    if missing := sorted(set(files) - set(found)):
        return f"the checkout lacks {len(missing)} file(s) of the commit, e.g. {missing[0]!r}"
    for rel, path in found.items():
        if files[rel][0] == "120000":
            if not path.is_symlink() or _blob_id(os.fsencode(path.readlink()), commit) != files[rel][1]:
                return f"{rel!r} differs from the commit"
        elif path.is_symlink() or not path.is_file():
            return f"{rel!r} is not a regular file, as the commit says it is"
    return None


def _verify(commit: str, target: Path, deadline: _Deadline) -> str | None:
    """None when the checkout in ``target`` is exactly ``commit``: HEAD, and each file's content by git's hash.

    Every file of the working tree (links included, never followed) must be a file of the commit's tree with
    the same object id, computed by ``git hash-object --no-filters`` (not the index's size and time, which an
    edit can keep); a file the commit lacks fails it too.
    """
    head = _git(["rev-parse", "--verify", "HEAD^{commit}"], target, deadline)
    if head.returncode != 0 or head.stdout.strip() != commit:
        return f"the checkout's HEAD is {head.stdout.strip()[:64]!r}, not the pinned commit"
    files = _tree(commit, target, deadline)
    if isinstance(files, str):
        return files
    found = _working_files(target)
    if (problem := _same_files(found, files, commit)) is not None:
        return problem
    regular = [rel for rel in sorted(found) if files[rel][0] != "120000"]
    hashed = _git(
        ["hash-object", "--no-filters", "--stdin-paths"], target, deadline, stdin="".join(f"{r}\n" for r in regular)
    )
    ids = hashed.stdout.split()
    if hashed.returncode != 0 or len(ids) != len(regular):
        return hashed.stderr.strip() or "git could not hash the checkout's files"
    for rel, oid in zip(regular, ids, strict=True):
        if oid != files[rel][1]:
            return f"{rel!r} differs from the commit"
    return None


def _failed_file(cache: Path, source: GitSource) -> Path:
    return cache / f"{FAILED_PREFIX}{source.cache_key()}"


def _recent_failure(cache: Path, source: GitSource) -> str | None:
    """The message of a fetch of ``source`` that failed less than FAILURE_SECONDS ago, or None."""
    try:
        kept = json.loads(_failed_file(cache, source).read_text(encoding="utf-8"))
        age = time.time() - float(kept["at"])
        message = str(kept["message"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not 0 <= age < FAILURE_SECONDS:
        return None
    return f"{message} (this fetch failed {age:.0f} s ago; it is retried after {FAILURE_SECONDS:g} s)"


def _remember_failure(cache: Path, source: GitSource, message: str) -> None:
    with contextlib.suppress(OSError):  # a cache that cannot be written: the next build tries again
        _failed_file(cache, source).write_text(json.dumps({"at": time.time(), "message": message}), encoding="utf-8")


def _private_cache(cache: Path) -> str | None:
    """Create the cache folder (0700); a folder another user owns or may write is not used."""
    try:
        cache.mkdir(mode=0o700, parents=True, exist_ok=True)
        info = cache.stat()
    except OSError as exc:
        return f"cannot create the git cache {cache}: {exc.strerror or exc}"
    if info.st_uid != os.getuid() or info.st_mode & 0o022:
        return (
            f"the git cache {cache} is owned by another user or writable by others, so its checkouts cannot be "
            "trusted; chmod go-w it, or set TOOLCAT_GIT_CACHE to a private folder"
        )
    return None


def checkout(source: GitSource, cache: Path, deadline: _Deadline | None = None) -> Path | str:
    """The cached checkout of ``source`` (fetched once, verified by git on every use), or why it could not be had."""
    deadline = deadline or _Deadline(GIT_TIMEOUT_SECONDS)
    if (problem := _private_cache(cache)) is not None:
        return problem
    final = cache / source.cache_key()
    try:
        if (final / ".git" / DONE_MARK).is_file():
            stale = _verify(source.commit, final, deadline)
            if stale is None:
                return final
            log.warning("%s: the cached checkout is not the pinned commit (%s); fetching it again", source.label, stale)
    except _OutOfTimeError:
        return deadline.message()
    except OSError as exc:
        return f"cannot check the cached checkout: {exc.strerror or exc}"
    if (failed := _recent_failure(cache, source)) is not None:
        return failed
    staging = Path(tempfile.mkdtemp(prefix=".fetch-", dir=cache))
    try:
        problem = _fetch(source, staging, deadline)
    except _OutOfTimeError:
        problem = deadline.message()
    except OSError as exc:
        problem = f"git could not run: {exc.strerror or exc}"
    if problem is not None:
        shutil.rmtree(staging, ignore_errors=True)
        _remember_failure(cache, source, problem)
        return problem
    (staging / ".git" / DONE_MARK).write_text(f"{source.url}\n{source.commit}\n", encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    staging.rename(final)
    _failed_file(cache, source).unlink(missing_ok=True)
    return final


def _located(result: SkillResult, label: str) -> SkillResult:
    """A skill checked inside a checkout, with its files named ``<url>@<commit12>/<file>``."""
    diagnostics = [dataclasses.replace(d, file=f"{label}/{d.file}") for d in result.diagnostics]
    record = None if result.record is None else {**result.record, "file": f"{label}/{result.record['file']}"}
    return SkillResult(record=record, diagnostics=diagnostics)


def _link_in(root: Path, rel: str) -> str | None:
    """The first folder of ``rel`` (under ``root``) that is a symbolic link or leaves ``root``, or None."""
    here = root
    for part in Path(rel).parts:
        here = here / part
        if here.is_symlink():
            return here.relative_to(root).as_posix()
    if here.exists() and not here.resolve().is_relative_to(root.resolve()):
        return rel
    return None


def _skill_folders(root: Path, folder: Path) -> tuple[list[Path], list[str]]:
    """The folders holding a SKILL.md under ``folder``, and the links among its folders (never followed)."""
    found: list[Path] = []
    links: list[str] = []
    if not folder.is_dir():
        return found, links
    for place, dirs, names in os.walk(folder):
        base = Path(place)
        dirs[:] = sorted(d for d in dirs if d != ".git")
        links += [(base / d).relative_to(root).as_posix() for d in dirs if (base / d).is_symlink()]
        if "SKILL.md" in names:
            found.append(base)
    return sorted(found), sorted(links)


def _link_error(at_file: str, link: str, json_path: str | None = None, line: int | None = None) -> Diagnostic:
    return Diagnostic(
        Severity.ERROR,
        at_file,
        f"{link!r} is a symbolic link: skills_from never follows links, which could publish files of the build "
        "machine from outside the checkout",
        line=line,
        json_path=json_path,
        code="git_symlink",
        expected="a real folder of the repository",
        got=f"a symbolic link at {link}",
        hint="Point 'path' at the real folder, or replace the link in the repository with the folder it names.",
    )


def load_git_skills(config: BuildConfig) -> GitSkills:
    """Fetch (or reuse) every ``skills_from`` entry of the build's settings and check the skills it holds.

    ``config`` is :func:`toolcat.build.config.read_config`'s answer: the settings file is read once, under the
    source limits, and its entries' lines come from that one parse.
    """
    out = GitSkills()
    sources = git_sources(config, out)
    deadline = _Deadline(GIT_TIMEOUT_SECONDS)
    for index, source in enumerate(sources):
        fetched = checkout(source, cache_root(), deadline)
        if isinstance(fetched, str):
            at = f"$.{CONFIG_KEY}[{index}].commit"
            line, column = config.where(at)
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
        if (link := _link_in(fetched, source.path)) is not None:
            at = f"$.{CONFIG_KEY}[{index}].path"
            out.diagnostics.append(_link_error(out.config, link, at, config.where(at)[0]))
            continue
        folders, links = _skill_folders(fetched, fetched / source.path)
        if links:
            out.diagnostics.extend(_link_error(f"{source.label}/{link}", link) for link in links)
            continue
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
