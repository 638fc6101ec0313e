"""Working, stdlib-only handlers for the tools of the bundled example catalogue.

Each public handler has the signature ``def name(args: dict[str, Any]) -> dict[str, Any]``:
it takes the tool's *validated* arguments (schema defaults applied; every handler
also falls back to the same defaults itself, so it can be called directly) and
returns a JSON-serialisable dict that matches the tool's ``result_schema``.
Failures are reported by raising ordinary exceptions:

* ``PermissionError``: a path escapes the sandbox, or an operation is refused.
* ``FileNotFoundError`` / ``FileExistsError`` / ``IsADirectoryError``: file system states.
* ``LookupError``: an unknown task, project, comment or symbol.
* ``ValueError``: arguments that are well-formed but cannot be honoured.

Groups of handlers:

* ``file_*``: the ``file.*`` tools, confined to a sandbox directory the host names: the
  ``sandbox`` option of the reader (``Catalog.open(..., sandbox=DIR)``, ``toolcat serve
  --sandbox DIR``), else the environment variable ``TOOLCAT_SANDBOX``. Without one they refuse
  (NOT_AUTHORIZED); they never fall back to the working directory, which an MCP client may
  have set to ``/``. Every path is resolved (symlinks included) and rejected if it lands
  outside that root, and so is a path whose name alone (before symlinks) leaves it.
* ``onto_*``: the ``onto.task.*``, ``onto.project.*`` and ``onto.comment.*`` work-tracking
  tools over an in-memory store. The module starts with a small demo data set so the
  catalogue's examples work out of the box; :func:`reset_store` empties the store (or
  restores the demo data with ``seed=True``). Ids come from deterministic counters:
  after ``reset_store()`` the first task created is ``T-0001``, the first project
  ``P-0001`` and the first comment ``C-0001``.
* ``util_*``: clock and time zones (:mod:`zoneinfo`), safe arithmetic (an :mod:`ast`
  walker, never ``eval``), JSON path queries, word counts, extractive summaries, diffs.
* ``refactor_rename_symbol``: a whole-word rename across the source files of one
  language under a project root (inside the sandbox), with a ``dry_run`` preview.
"""

from __future__ import annotations

import ast
import copy
import datetime as dt
import difflib
import fnmatch
import keyword
import math
import mimetypes
import operator
import os
import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

__all__ = [
    "SANDBOX_ENV",
    "file_copy",
    "file_delete",
    "file_dir",
    "file_move",
    "file_read",
    "file_search",
    "file_stat",
    "file_write",
    "onto_comment_add",
    "onto_comment_list",
    "onto_project_archive",
    "onto_project_create",
    "onto_project_get",
    "onto_project_list",
    "onto_project_update",
    "onto_task_create",
    "onto_task_delete",
    "onto_task_get",
    "onto_task_list",
    "onto_task_search",
    "onto_task_update",
    "refactor_rename_symbol",
    "reset_store",
    "sandbox_root",
    "seed_demo_data",
    "util_json_query",
    "util_math_eval",
    "util_text_diff",
    "util_text_summarize",
    "util_text_word_count",
    "util_time_convert",
    "util_time_now",
]

JSONDict = dict[str, Any]

# ---------------------------------------------------------------------------
# Sandbox
# ---------------------------------------------------------------------------

SANDBOX_ENV = "TOOLCAT_SANDBOX"

#: Directories that searches and renames never descend into.
SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        "dist",
        "build",
        "target",
        "vendor",
    }
)

MAX_READ_BYTES = 10 * 1024 * 1024
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set (for keyword tables)."""
    return frozenset(text.split())


def sandbox_root() -> Path:
    """The directory every ``file.*`` path is confined to: the reader's ``sandbox`` option, else ``$TOOLCAT_SANDBOX``.

    Without either, NOT_AUTHORIZED: the working directory is never used (an MCP client may start
    the server in ``/``).
    """
    from ..reader.envelope import ReaderError  # noqa: PLC0415 - the reader is stdlib-only and light
    from ..reader.trust import current_sandbox  # noqa: PLC0415

    raw = current_sandbox() or os.environ.get(SANDBOX_ENV, "").strip()
    if not raw:
        raise ReaderError(
            "NOT_AUTHORIZED", "the file.* tools have no sandbox folder on this host, so they touch no file",
            hints=[(f"The host names the folder these tools may use: set {SANDBOX_ENV}=/path/to/folder, or open the "
                    "catalogue with Catalog.open(..., sandbox='/path/to/folder') (toolcat serve/exec --sandbox DIR)."),
                   "Tell the user file access is not set up; do not retry."],
        )
    return Path(raw).resolve()


def _resolve(path: str, root: Path) -> Path:
    """``path`` (relative to ``root``, or absolute inside it) resolved; refuse escapes."""
    if "\x00" in path:
        raise ValueError("path contains a NUL character")
    target = (root / path).resolve()
    if target != root and root not in target.parents:
        raise PermissionError(
            f"path {path!r} resolves to {target}, outside the sandbox root {root}; "
            f"use a path inside the root (set {SANDBOX_ENV} to change the root)"
        )
    return target


def _unresolved(path: str, root: Path) -> Path:
    """The path as named (symlinks not followed), for lstat-style questions; refuse names that leave the root.

    ``link/../../x`` can resolve inside the root (through a symlink) while its name points outside.
    """
    named = Path(os.path.normpath(root / path))
    if named != root and root not in named.parents:
        raise PermissionError(
            f"path {path!r} names {named}, outside the sandbox root {root}; use a path inside the root"
        )
    return named


def _rel(target: Path, root: Path) -> str:
    rel = target.relative_to(root).as_posix()
    return rel or "."


def _iso_mtime(timestamp: float) -> str:
    return dt.datetime.fromtimestamp(timestamp, tz=dt.UTC).isoformat(timespec="seconds")


def _kind(path: Path) -> str:
    if path.is_symlink():
        return "symlink"
    if path.is_dir():
        return "directory"
    if path.is_file():
        return "file"
    return "other"


def _is_hidden(name: str) -> bool:
    return name.startswith(".") and name not in (".", "..")


def _looks_binary(sample: bytes) -> bool:
    return b"\x00" in sample


def _require_exists(target: Path, shown: str) -> None:
    if not target.exists():
        raise FileNotFoundError(f"no such file or directory: {shown!r}")


# ---------------------------------------------------------------------------
# file.*
# ---------------------------------------------------------------------------


def file_read(args: JSONDict) -> JSONDict:
    """``file.read``: a text file's content, optionally a window of lines."""
    root = sandbox_root()
    shown = str(args["path"])
    target = _resolve(shown, root)
    _require_exists(target, shown)
    if target.is_dir():
        raise IsADirectoryError(f"{shown!r} is a directory; use file.dir to list it")
    encoding = str(args.get("encoding", "utf-8"))
    start_line = int(args.get("start_line", 1))
    max_lines = int(args.get("max_lines", 2000))
    size = target.stat().st_size
    if size > MAX_READ_BYTES:
        raise ValueError(f"{shown!r} is {size} bytes; file.read reads at most {MAX_READ_BYTES} bytes")
    data = target.read_bytes()
    if _looks_binary(data[:8192]):
        raise ValueError(f"{shown!r} looks like a binary file; file.read returns text only")
    text = data.decode(encoding)
    lines = text.splitlines(keepends=True)
    window = lines[start_line - 1 : start_line - 1 + max_lines]
    end_line = start_line - 1 + len(window)
    return {
        "path": _rel(target, root),
        "content": "".join(window),
        "encoding": encoding,
        "start_line": start_line,
        "end_line": end_line,
        "total_lines": len(lines),
        "truncated": end_line < len(lines),
        "size_bytes": size,
    }


def file_write(args: JSONDict) -> JSONDict:
    """``file.write``: overwrite (atomically), append to, or create a text file."""
    root = sandbox_root()
    shown = str(args["path"])
    target = _resolve(shown, root)
    mode = str(args.get("mode", "overwrite"))
    encoding = str(args.get("encoding", "utf-8"))
    create_parents = bool(args.get("create_parents", True))
    existed = target.exists()
    if existed and target.is_dir():
        raise IsADirectoryError(f"{shown!r} is a directory")
    if mode == "create_only" and existed:
        raise FileExistsError(f"{shown!r} already exists and mode is create_only")
    if not target.parent.exists():
        if not create_parents:
            raise FileNotFoundError(f"parent directory of {shown!r} does not exist (create_parents is false)")
        target.parent.mkdir(parents=True, exist_ok=True)
    data = str(args["content"]).encode(encoding)
    if mode == "append":
        with target.open("ab") as handle:
            handle.write(data)
    else:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
            if existed:
                Path(tmp_name).chmod(target.stat().st_mode & 0o7777)
            Path(tmp_name).replace(target)
        except BaseException:
            Path(tmp_name).unlink(missing_ok=True)
            raise
    return {
        "path": _rel(target, root),
        "bytes_written": len(data),
        "created": not existed,
        "size_bytes": target.stat().st_size,
    }


def _walk(
    directory: Path, *, recursive: bool, max_depth: int, include_hidden: bool, skip_dirs: frozenset[str] = frozenset()
) -> Iterator[tuple[Path, int]]:
    """Entries under ``directory`` (sorted, depth-first), with their depth (1 = direct child)."""
    stack: list[tuple[Path, int]] = [(directory, 0)]
    while stack:
        current, depth = stack.pop()
        try:
            children = sorted(current.iterdir(), key=lambda p: p.name)
        except PermissionError:
            continue
        subdirs: list[tuple[Path, int]] = []
        for child in children:
            if not include_hidden and _is_hidden(child.name):
                continue
            yield child, depth + 1
            if (
                recursive
                and depth + 1 < max_depth
                and child.is_dir()
                and not child.is_symlink()
                and child.name not in skip_dirs
            ):
                subdirs.append((child, depth + 1))
        stack.extend(reversed(subdirs))


def file_dir(args: JSONDict) -> JSONDict:
    """``file.dir``: list a directory, optionally recursively and filtered by a glob."""
    root = sandbox_root()
    shown = str(args.get("path", "."))
    target = _resolve(shown, root)
    _require_exists(target, shown)
    if not target.is_dir():
        raise NotADirectoryError(f"{shown!r} is not a directory; use file.stat or file.read")
    recursive = bool(args.get("recursive", False))
    max_depth = int(args.get("max_depth", 3)) if recursive else 1
    include_hidden = bool(args.get("include_hidden", False))
    pattern = args.get("glob")
    max_entries = int(args.get("max_entries", 500))
    entries: list[JSONDict] = []
    truncated = False
    for child, _depth in _walk(target, recursive=recursive, max_depth=max_depth, include_hidden=include_hidden):
        if pattern and not fnmatch.fnmatch(child.name, str(pattern)):
            continue
        if len(entries) >= max_entries:
            truncated = True
            break
        kind = _kind(child)
        info = child.lstat()
        entries.append(
            {
                "path": child.relative_to(root).as_posix(),
                "name": child.name,
                "type": kind,
                "size_bytes": info.st_size if kind == "file" else None,
                "modified": _iso_mtime(info.st_mtime),
            }
        )
    return {"path": _rel(target, root), "entries": entries, "count": len(entries), "truncated": truncated}


def file_stat(args: JSONDict) -> JSONDict:
    """``file.stat``: type, size, times and permissions of one path."""
    root = sandbox_root()
    shown = str(args["path"])
    target = _resolve(shown, root)
    named = _unresolved(shown, root)
    _require_exists(target, shown)
    info = target.stat()
    kind = "directory" if target.is_dir() else "file" if target.is_file() else "other"
    mime = mimetypes.guess_type(target.name)[0] if kind == "file" else None
    return {
        "path": _rel(target, root),
        "type": kind,
        "is_symlink": named.is_symlink(),
        "size_bytes": info.st_size,
        "modified": _iso_mtime(info.st_mtime),
        "permissions": oct(info.st_mode & 0o777),
        "mime_type": mime,
    }


def _search_regex(pattern: str, *, fixed: bool, ignore_case: bool) -> Any:
    """The agent's pattern compiled in RE2 (linear time: no pattern can freeze the gateway)."""
    from ..reader import regex  # noqa: PLC0415 - imports google-re2 on the first search only
    from ..reader.envelope import ReaderError  # noqa: PLC0415

    try:
        return regex.compile_pattern(re.escape(pattern) if fixed else pattern, ignore_case=ignore_case)
    except regex.PatternError as exc:
        raise ReaderError(
            "VALIDATION_ERROR", f"pattern {pattern!r} {exc.reason}", help_path="file.search",
            details={"field_errors": [{"field": "pattern", "message": exc.reason,
                                       "expected": "an RE2 regular expression (no lookaround or backreferences)"}]},
            hints=[regex.AGENT_HINT if isinstance(exc, regex.UnsupportedPatternError) else exc.hint],
            next_action={"op": "tool_help", "args": {"path": "file.search", "format": "full"}},
        ) from None


def file_search(args: JSONDict) -> JSONDict:
    """``file.search``: grep-like search of text files, with optional context lines."""
    root = sandbox_root()
    shown = str(args.get("path", "."))
    base = _resolve(shown, root)
    _require_exists(base, shown)
    regex = _search_regex(str(args["pattern"]), fixed=bool(args.get("fixed_string", False)),
                          ignore_case=not args.get("case_sensitive", False))
    include = str(args.get("include", "*"))
    include_hidden = bool(args.get("include_hidden", False))
    max_results = int(args.get("max_results", 100))
    context = int(args.get("context_lines", 0))

    if base.is_file():
        candidates: list[Path] = [base]
    else:
        candidates = [
            p
            for p, _ in _walk(base, recursive=True, max_depth=64, include_hidden=include_hidden, skip_dirs=SKIP_DIRS)
            if p.is_file() and not p.is_symlink()
        ]
    matches: list[JSONDict] = []
    scanned = 0
    matched_files: set[str] = set()
    truncated = False
    for path in candidates:
        rel = path.relative_to(root).as_posix()
        if not (fnmatch.fnmatch(path.name, include) or fnmatch.fnmatch(rel, include)):
            continue
        try:
            if path.stat().st_size > MAX_SEARCH_FILE_BYTES:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        if _looks_binary(data[:8192]):
            continue
        scanned += 1
        lines = data.decode("utf-8", errors="replace").splitlines()
        for index, line in enumerate(lines):
            found = regex.search(line)
            if found is None:
                continue
            if len(matches) >= max_results:
                truncated = True
                break
            matched_files.add(rel)
            matches.append(
                {
                    "path": rel,
                    "line": index + 1,
                    "column": found.start() + 1,
                    "text": line,
                    "before": lines[max(0, index - context) : index],
                    "after": lines[index + 1 : index + 1 + context],
                }
            )
        if truncated:
            break
    return {
        "matches": matches,
        "files_scanned": scanned,
        "files_matched": len(matched_files),
        "truncated": truncated,
    }


def file_move(args: JSONDict) -> JSONDict:
    """``file.move``: move or rename a file or directory inside the sandbox."""
    root = sandbox_root()
    src_shown, dst_shown = str(args["source"]), str(args["destination"])
    source = _resolve(src_shown, root)
    destination = _resolve(dst_shown, root)
    _require_exists(source, src_shown)
    if source == root:
        raise PermissionError("refusing to move the sandbox root")
    if source == destination:
        raise ValueError("source and destination are the same path")
    if source.is_dir() and source in destination.parents:
        raise ValueError(f"cannot move directory {src_shown!r} into itself")
    overwritten = False
    if destination.exists():
        if not args.get("overwrite", False):
            raise FileExistsError(f"{dst_shown!r} already exists (pass overwrite: true to replace it)")
        if destination.is_dir():
            raise IsADirectoryError(f"refusing to overwrite directory {dst_shown!r}")
        destination.unlink()
        overwritten = True
    if not destination.parent.exists():
        if not args.get("create_parents", True):
            raise FileNotFoundError(f"parent directory of {dst_shown!r} does not exist")
        destination.parent.mkdir(parents=True, exist_ok=True)
    kind = "directory" if source.is_dir() else "file"
    shutil.move(str(source), str(destination))
    return {
        "source": _rel(source, root),
        "destination": _rel(destination, root),
        "type": kind,
        "overwritten": overwritten,
    }


def file_copy(args: JSONDict) -> JSONDict:
    """``file.copy``: copy a file, or a directory tree with ``recursive: true``."""
    root = sandbox_root()
    src_shown, dst_shown = str(args["source"]), str(args["destination"])
    source = _resolve(src_shown, root)
    destination = _resolve(dst_shown, root)
    _require_exists(source, src_shown)
    if destination.exists() and not args.get("overwrite", False):
        raise FileExistsError(f"{dst_shown!r} already exists (pass overwrite: true to replace it)")
    destination.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        if not args.get("recursive", False):
            raise IsADirectoryError(f"{src_shown!r} is a directory; pass recursive: true to copy it")
        if source in destination.parents or source == destination:
            raise ValueError(f"cannot copy directory {src_shown!r} into itself")
        shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True)
        files = [p for p in destination.rglob("*") if p.is_file()]
        return {
            "source": _rel(source, root),
            "destination": _rel(destination, root),
            "files_copied": len(files),
            "bytes_copied": sum(p.stat().st_size for p in files),
        }
    if destination.is_dir():
        raise IsADirectoryError(f"destination {dst_shown!r} is a directory; name the target file")
    shutil.copy2(source, destination)
    return {
        "source": _rel(source, root),
        "destination": _rel(destination, root),
        "files_copied": 1,
        "bytes_copied": destination.stat().st_size,
    }


def file_delete(args: JSONDict) -> JSONDict:
    """``file.delete``: delete a file, an empty directory, or a tree with ``recursive``."""
    root = sandbox_root()
    shown = str(args["path"])
    target = _resolve(shown, root)
    named = _unresolved(shown, root)
    if root in (target, named):
        raise PermissionError("refusing to delete the sandbox root")
    if not named.exists() and not named.is_symlink():
        if args.get("missing_ok", False):
            return {"path": shown, "deleted": False, "type": None, "files_removed": 0}
        raise FileNotFoundError(f"no such file or directory: {shown!r}")
    rel = named.relative_to(root).as_posix()
    if named.is_symlink() or named.is_file():
        kind = "symlink" if named.is_symlink() else "file"
        named.unlink()
        return {"path": rel, "deleted": True, "type": kind, "files_removed": 1}
    contents = list(named.rglob("*"))
    if contents and not args.get("recursive", False):
        raise OSError(
            f"directory {shown!r} is not empty ({len(contents)} entries); "
            "pass recursive: true to delete it with its contents"
        )
    removed = sum(1 for p in contents if p.is_file() or p.is_symlink())
    shutil.rmtree(named)
    return {"path": rel, "deleted": True, "type": "directory", "files_removed": removed}


# ---------------------------------------------------------------------------
# onto.*: work tracking over an in-memory store
# ---------------------------------------------------------------------------

TASK_STATUSES = ("todo", "in_progress", "blocked", "in_review", "done", "cancelled")
CLOSED_STATUSES = frozenset({"done", "cancelled"})
PRIORITY_RANK = {"urgent": 0, "high": 1, "medium": 2, "low": 3}
AGENT_IDENTITY = "agent@acme.example"

_STORE: dict[str, Any] = {}


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def reset_store(seed: bool = False) -> None:
    """Empty the work-tracking store and its id counters; ``seed=True`` loads the demo data."""
    _STORE.clear()
    _STORE.update(
        {
            "projects": {},
            "tasks": {},
            "comments": {},
            "counters": {"P": 0, "T": 0, "C": 0},
        }
    )
    if seed:
        seed_demo_data()


def _next_id(prefix: str) -> str:
    counters: dict[str, int] = _STORE["counters"]
    counters[prefix] += 1
    return f"{prefix}-{counters[prefix]:04d}"


def seed_demo_data() -> None:
    """Add the demo projects, tasks and comments the catalogue's examples refer to."""
    stamp = "2026-11-02T09:00:00+00:00"
    projects = [
        (
            "PAY",
            "Payments platform",
            "Card and wallet payments: checkout API, ledger, reconciliation.",
            "maria.lopez@acme.example",
            "active",
            "2027-03-31",
        ),
        (
            "WEB",
            "Website redesign",
            "New marketing site on the design system, with localisation.",
            "sam.okafor@acme.example",
            "active",
            "2027-01-15",
        ),
        (
            "OPS",
            "Infrastructure cost reduction",
            "Cut cloud spend 20% by rightsizing and storage tiering.",
            "li.wei@acme.example",
            "on_hold",
            None,
        ),
    ]
    for key, name, description, owner, status, target in projects:
        pid = _next_id("P")
        _STORE["projects"][pid] = {
            "id": pid,
            "key": key,
            "name": name,
            "description": description,
            "owner": owner,
            "status": status,
            "target_date": target,
            "created_at": stamp,
            "updated_at": stamp,
            "archived_at": None,
        }
    tasks = [
        (
            "P-0001",
            "Retry failed card captures with exponential backoff",
            (
                "Captures that fail with a 5xx from the acquirer are dropped. Add a retry queue "
                "(max 5 attempts, jittered backoff) and alert after the last failure."
            ),
            "in_progress",
            "high",
            "dev.patel@acme.example",
            ["backend", "reliability"],
            "2026-12-04",
        ),
        (
            "P-0001",
            "Reconcile ledger against the acquirer settlement file",
            "Nightly job comparing ledger entries with the settlement CSV; report mismatches to #payments-ops.",
            "todo",
            "medium",
            None,
            ["backend", "finance"],
            "2026-12-18",
        ),
        (
            "P-0001",
            "Checkout API returns 500 on expired 3-D Secure session",
            "Expired 3DS sessions raise an unhandled exception instead of a 409 with a retry hint.",
            "todo",
            "urgent",
            "dev.patel@acme.example",
            ["bug", "checkout"],
            "2026-11-27",
        ),
        (
            "P-0002",
            "Migrate pricing page to the design system",
            "Rebuild the pricing page with DS components; keep the existing URLs and analytics events.",
            "in_review",
            "medium",
            "sam.okafor@acme.example",
            ["frontend"],
            "2026-12-11",
        ),
        (
            "P-0002",
            "Add German and French translations for the landing page",
            "Strings are in locales/en.json; translations come from the localisation vendor.",
            "blocked",
            "low",
            None,
            ["frontend", "i18n"],
            None,
        ),
        (
            "P-0003",
            "Move cold log archives to the infrequent-access storage tier",
            "Log buckets older than 90 days are on the standard tier. Add a lifecycle rule.",
            "todo",
            "medium",
            "li.wei@acme.example",
            ["infra", "cost"],
            None,
        ),
    ]
    for project_id, title, description, status, priority, assignee, labels, due in tasks:
        tid = _next_id("T")
        _STORE["tasks"][tid] = {
            "id": tid,
            "project_id": project_id,
            "title": title,
            "description": description,
            "status": status,
            "priority": priority,
            "assignee": assignee,
            "labels": labels,
            "due_date": due,
            "created_at": stamp,
            "updated_at": stamp,
        }
    cid = _next_id("C")
    _STORE["comments"][cid] = {
        "id": cid,
        "task_id": "T-0001",
        "author": "maria.lopez@acme.example",
        "body": "Please cap total retry time at 10 minutes so captures stay inside the auth window.",
        "created_at": stamp,
    }


def _task(task_id: str) -> JSONDict:
    task: JSONDict | None = _STORE["tasks"].get(task_id)
    if task is None:
        raise LookupError(f"task {task_id!r} not found")
    return task


def _project(project_id: str) -> JSONDict:
    project: JSONDict | None = _STORE["projects"].get(project_id)
    if project is None:
        raise LookupError(f"project {project_id!r} not found")
    return project


def _writable_project(project_id: str) -> JSONDict:
    project = _project(project_id)
    if project["status"] == "archived":
        raise PermissionError(f"project {project_id!r} is archived; its tasks are read-only")
    return project


def _public(entity: JSONDict) -> JSONDict:
    return copy.deepcopy(entity)


def _task_sort_key(sort: str) -> Callable[[JSONDict], Any]:
    if sort == "priority":
        return lambda t: (PRIORITY_RANK[t["priority"]], t["id"])
    if sort == "due_date":
        return lambda t: (t["due_date"] is None, t["due_date"] or "", t["id"])
    return lambda t: (t[sort], t["id"])


def onto_task_list(args: JSONDict) -> JSONDict:
    """``onto.task.list``: filter, sort and page through tasks."""
    tasks: list[JSONDict] = list(_STORE["tasks"].values())
    if args.get("project_id"):
        _project(str(args["project_id"]))
        tasks = [t for t in tasks if t["project_id"] == args["project_id"]]
    statuses = args.get("status")
    if statuses:
        tasks = [t for t in tasks if t["status"] in statuses]
    if args.get("assignee"):
        tasks = [t for t in tasks if t["assignee"] == args["assignee"]]
    labels = args.get("labels")
    if labels:
        tasks = [t for t in tasks if set(labels) <= set(t["labels"])]
    if args.get("due_before"):
        tasks = [t for t in tasks if t["due_date"] is not None and t["due_date"] < args["due_before"]]
    sort = str(args.get("sort", "updated_at"))
    descending = str(args.get("order", "desc")) == "desc"
    tasks.sort(key=_task_sort_key(sort))
    if descending:
        tasks.reverse()
    limit = int(args.get("limit", 50))
    cursor = args.get("cursor")
    try:
        offset = int(cursor) if cursor else 0
    except ValueError:
        raise ValueError(f"invalid cursor {cursor!r}: pass next_cursor from a previous page") from None
    page = tasks[offset : offset + limit]
    more = offset + limit < len(tasks)
    return {
        "tasks": [_public(t) for t in page],
        "total": len(tasks),
        "next_cursor": str(offset + limit) if more else None,
    }


_WORD = re.compile(r"[a-z0-9]+")


def onto_task_search(args: JSONDict) -> JSONDict:
    """``onto.task.search``: rank tasks by query terms in title, labels and description."""
    query = str(args["query"]).strip()
    terms = _WORD.findall(query.lower())
    project_id = args.get("project_id")
    if project_id:
        _project(str(project_id))
    include_closed = bool(args.get("include_closed", False))
    limit = int(args.get("limit", 20))
    scored: list[tuple[float, str, JSONDict]] = []
    for task in _STORE["tasks"].values():
        if project_id and task["project_id"] != project_id:
            continue
        if not include_closed and task["status"] in CLOSED_STATUSES:
            continue
        if task["id"].lower() == query.lower():
            scored.append((100.0, task["id"], task))
            continue
        title = Counter(_WORD.findall(task["title"].lower()))
        body = Counter(_WORD.findall(task["description"].lower()))
        labels = {label.lower() for label in task["labels"]}
        score = 0.0
        for term in terms:
            score += 3.0 * title[term] + 2.0 * (term in labels) + 1.0 * body[term]
        if score > 0:
            scored.append((score, task["id"], task))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return {
        "results": [{"task": _public(t), "score": s} for s, _, t in scored[:limit]],
        "total": len(scored),
    }


def onto_task_get(args: JSONDict) -> JSONDict:
    """``onto.task.get``: one task by id."""
    return _public(_task(str(args["task_id"])))


def onto_task_create(args: JSONDict) -> JSONDict:
    """``onto.task.create``: create a task in an existing, non-archived project."""
    project_id = str(args["project_id"])
    _writable_project(project_id)
    title = str(args["title"]).strip()
    if not title:
        raise ValueError("title must not be blank")
    stamp = _now()
    tid = _next_id("T")
    task = {
        "id": tid,
        "project_id": project_id,
        "title": title,
        "description": str(args.get("description", "")),
        "status": str(args.get("status", "todo")),
        "priority": str(args.get("priority", "medium")),
        "assignee": args.get("assignee"),
        "labels": sorted(set(args.get("labels", []))),
        "due_date": args.get("due_date"),
        "created_at": stamp,
        "updated_at": stamp,
    }
    _STORE["tasks"][tid] = task
    return _public(task)


_TASK_FIELDS = ("title", "description", "status", "priority", "assignee", "labels", "due_date", "project_id")


def onto_task_update(args: JSONDict) -> JSONDict:
    """``onto.task.update``: change only the fields given."""
    task = _task(str(args["task_id"]))
    _writable_project(task["project_id"])
    changes = {name: args[name] for name in _TASK_FIELDS if name in args}
    if not changes:
        raise ValueError("nothing to update: pass at least one field besides task_id")
    if "project_id" in changes:
        _writable_project(str(changes["project_id"]))
    if "labels" in changes:
        changes["labels"] = sorted(set(changes["labels"]))
    if "title" in changes and not str(changes["title"]).strip():
        raise ValueError("title must not be blank")
    task.update(changes)
    task["updated_at"] = _now()
    return _public(task)


def onto_task_delete(args: JSONDict) -> JSONDict:
    """``onto.task.delete``: delete a task and its comments."""
    task_id = str(args["task_id"])
    task = _task(task_id)
    _writable_project(task["project_id"])
    del _STORE["tasks"][task_id]
    doomed = [cid for cid, c in _STORE["comments"].items() if c["task_id"] == task_id]
    for cid in doomed:
        del _STORE["comments"][cid]
    return {"id": task_id, "deleted": True, "comments_deleted": len(doomed)}


def onto_comment_add(args: JSONDict) -> JSONDict:
    """``onto.comment.add``: add a Markdown comment to a task."""
    task = _task(str(args["task_id"]))
    _writable_project(task["project_id"])
    body = str(args["body"]).strip()
    if not body:
        raise ValueError("body must not be blank")
    cid = _next_id("C")
    comment = {"id": cid, "task_id": task["id"], "author": AGENT_IDENTITY, "body": body, "created_at": _now()}
    _STORE["comments"][cid] = comment
    notify = bool(args.get("notify_assignee", True))
    notified = [task["assignee"]] if notify and task["assignee"] else []
    return {"comment": _public(comment), "notified": notified}


def onto_comment_list(args: JSONDict) -> JSONDict:
    """``onto.comment.list``: a task's comments, oldest or newest first."""
    task = _task(str(args["task_id"]))
    comments = [c for c in _STORE["comments"].values() if c["task_id"] == task["id"]]
    comments.sort(key=lambda c: (c["created_at"], c["id"]), reverse=str(args.get("order", "asc")) == "desc")
    limit = int(args.get("limit", 50))
    return {"comments": [_public(c) for c in comments[:limit]], "total": len(comments)}


def _task_summary(project_id: str) -> JSONDict:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    tasks = [t for t in _STORE["tasks"].values() if t["project_id"] == project_id]
    open_tasks = [t for t in tasks if t["status"] not in CLOSED_STATUSES]
    return {
        "total": len(tasks),
        "open": len(open_tasks),
        "done": sum(1 for t in tasks if t["status"] == "done"),
        "overdue": sum(1 for t in open_tasks if t["due_date"] is not None and t["due_date"] < today),
    }


def onto_project_list(args: JSONDict) -> JSONDict:
    """``onto.project.list``: projects by status, owner and name."""
    status = str(args.get("status", "active"))
    projects: list[JSONDict] = list(_STORE["projects"].values())
    if status != "all":
        projects = [p for p in projects if p["status"] == status]
    if args.get("owner"):
        projects = [p for p in projects if p["owner"] == args["owner"]]
    if args.get("query"):
        needle = str(args["query"]).lower()
        projects = [p for p in projects if needle in p["name"].lower() or needle in p["key"].lower()]
    projects.sort(key=lambda p: p["key"])
    limit = int(args.get("limit", 50))
    return {"projects": [_public(p) for p in projects[:limit]], "total": len(projects)}


def onto_project_get(args: JSONDict) -> JSONDict:
    """``onto.project.get``: one project, with task counts unless turned off."""
    project = _public(_project(str(args["project_id"])))
    if args.get("include_task_summary", True):
        project["task_summary"] = _task_summary(project["id"])
    return project


def onto_project_create(args: JSONDict) -> JSONDict:
    """``onto.project.create``: a new active project with a unique key."""
    key = str(args["key"])
    if any(p["key"] == key for p in _STORE["projects"].values()):
        raise FileExistsError(f"a project with key {key!r} already exists")
    stamp = _now()
    pid = _next_id("P")
    project = {
        "id": pid,
        "key": key,
        "name": str(args["name"]).strip(),
        "description": str(args.get("description", "")),
        "owner": str(args["owner"]),
        "status": "active",
        "target_date": args.get("target_date"),
        "created_at": stamp,
        "updated_at": stamp,
        "archived_at": None,
    }
    _STORE["projects"][pid] = project
    return _public(project)


def onto_project_update(args: JSONDict) -> JSONDict:
    """``onto.project.update``: change only the fields given (not the key, not archiving)."""
    project = _writable_project(str(args["project_id"]))
    changes: JSONDict = {n: args[n] for n in ("name", "description", "owner", "status", "target_date") if n in args}
    if not changes:
        raise ValueError("nothing to update: pass at least one field besides project_id")
    project.update(changes)
    project["updated_at"] = _now()
    return _public(project)


def onto_project_archive(args: JSONDict) -> JSONDict:
    """``onto.project.archive``: make a project read-only, optionally cancelling open tasks."""
    project = _project(str(args["project_id"]))
    if project["status"] == "archived":
        return {"project": _public(project), "cancelled_task_ids": []}
    open_tasks = sorted(
        (
            t
            for t in _STORE["tasks"].values()
            if t["project_id"] == project["id"] and t["status"] not in CLOSED_STATUSES
        ),
        key=lambda t: t["id"],
    )
    if open_tasks and not args.get("cancel_open_tasks", False):
        raise ValueError(
            f"project {project['id']} has {len(open_tasks)} open task(s); close or move them, "
            "or pass cancel_open_tasks: true"
        )
    stamp = _now()
    for task in open_tasks:
        task["status"] = "cancelled"
        task["updated_at"] = stamp
    project["status"] = "archived"
    project["archived_at"] = stamp
    project["updated_at"] = stamp
    return {"project": _public(project), "cancelled_task_ids": [t["id"] for t in open_tasks]}


reset_store(seed=True)


# ---------------------------------------------------------------------------
# util.time.*
# ---------------------------------------------------------------------------


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown IANA time zone {name!r} (e.g. 'Europe/Berlin', 'America/New_York', 'UTC')") from None


def _describe(moment: dt.datetime, zone_name: str) -> JSONDict:
    offset = moment.utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    hours, mins = divmod(abs(minutes), 60)
    dst = moment.dst()
    return {
        "timezone": zone_name,
        "iso8601": moment.isoformat(timespec="seconds"),
        "unix_seconds": int(moment.timestamp()),
        "utc_offset": f"{sign}{hours:02d}:{mins:02d}",
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M:%S"),
        "weekday": moment.strftime("%A"),
        "is_dst": bool(dst),
    }


def util_time_now(args: JSONDict) -> JSONDict:
    """``util.time.now``: the current date and time in an IANA time zone."""
    name = str(args.get("timezone", "UTC"))
    return _describe(dt.datetime.now(_zone(name)), name)


def util_time_convert(args: JSONDict) -> JSONDict:
    """``util.time.convert``: a timestamp expressed in another time zone."""
    raw = str(args["time"])
    try:
        moment = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is not an ISO 8601 date-time (e.g. 2026-11-24T15:30:00+01:00)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=_zone(str(args.get("from_timezone", "UTC"))))
    target = str(args["to_timezone"])
    result = _describe(moment.astimezone(_zone(target)), target)
    result["input"] = raw
    return result


# ---------------------------------------------------------------------------
# util.math.eval
# ---------------------------------------------------------------------------

_MAX_EXPONENT = 10_000
_MAX_RESULT_BITS = 4_096


def _safe_pow(base: Any, exponent: Any) -> Any:
    if isinstance(exponent, int | float) and abs(exponent) > _MAX_EXPONENT:
        raise ValueError(f"exponent {exponent} is too large (limit {_MAX_EXPONENT})")
    if (
        isinstance(base, int)
        and isinstance(exponent, int)
        and exponent > 0
        and abs(base).bit_length() * exponent > _MAX_RESULT_BITS
    ):
        raise ValueError("result would be too large")
    return operator.pow(base, exponent)


def _safe_factorial(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value > 170:
        raise ValueError("factorial takes an integer from 0 to 170")
    return math.factorial(value)


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: _safe_pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
    "sqrt": math.sqrt,
    "cbrt": math.cbrt,
    "exp": math.exp,
    "log": math.log,
    "log10": math.log10,
    "log2": math.log2,
    "sin": math.sin,
    "cos": math.cos,
    "tan": math.tan,
    "asin": math.asin,
    "acos": math.acos,
    "atan": math.atan,
    "atan2": math.atan2,
    "degrees": math.degrees,
    "radians": math.radians,
    "hypot": math.hypot,
    "floor": math.floor,
    "ceil": math.ceil,
    "factorial": _safe_factorial,
}
_CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e, "tau": math.tau}


def _evaluate(node: ast.AST) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body)
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise TypeError(f"unsupported literal {node.value!r}; only numbers are allowed")
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left), _evaluate(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_evaluate(node.operand))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ValueError(f"unknown name {node.id!r}; constants are {', '.join(sorted(_CONSTANTS))}")
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS or node.keywords:
            allowed = ", ".join(sorted(_FUNCTIONS))
            raise ValueError(f"unsupported function call; allowed functions: {allowed}")
        return _FUNCTIONS[node.func.id](*(_evaluate(arg) for arg in node.args))
    raise ValueError(f"unsupported syntax: {type(node).__name__}")


def util_math_eval(args: JSONDict) -> JSONDict:
    """``util.math.eval``: evaluate an arithmetic expression without ``eval``."""
    expression = str(args["expression"])
    try:
        # "2^10" means a power to most people; rewriting the text keeps ** precedence
        tree = ast.parse(expression.strip().replace("^", "**"), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse expression: {exc.msg}") from None
    if sum(1 for _ in ast.walk(tree)) > 200:
        raise ValueError("expression is too complex (more than 200 syntax nodes)")
    try:
        value = _evaluate(tree)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except OverflowError:
        raise ValueError("result is too large to represent") from None
    except TypeError as exc:
        raise ValueError(f"invalid expression: {exc}") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError("result is not a finite number")
    if isinstance(value, int) and abs(value) >= 2**63:
        try:
            value = float(value)
        except OverflowError:
            raise ValueError("result is too large to represent") from None
    precision = args.get("precision")
    if precision is not None and isinstance(value, float):
        value = round(value, int(precision))
    formatted = f"{value:,.{int(precision)}f}" if precision is not None else f"{value:,}"
    return {"expression": expression, "result": value, "formatted": formatted}


# ---------------------------------------------------------------------------
# util.json.query
# ---------------------------------------------------------------------------

_WILDCARD = object()
_SEGMENT = re.compile(
    r"""\.?(?P<name>[A-Za-z_$@][\w$@-]*|\d+|\*)"""
    r"""|\[(?:(?P<index>-?\d+)|(?P<star>\*)|"(?P<dq>[^"]*)"|'(?P<sq>[^']*)')\]"""
)


def _parse_path(path: str) -> list[Any]:
    text = path.strip()
    text = text.removeprefix("$")
    segments: list[Any] = []
    position = 0
    while position < len(text):
        found = _SEGMENT.match(text, position)
        if found is None or found.end() == position:
            raise ValueError(f"cannot parse path {path!r} at character {position + 1}")
        if found["name"] is not None:
            name = found["name"]
            segments.append(_WILDCARD if name == "*" else name)
        elif found["index"] is not None:
            segments.append(int(found["index"]))
        elif found["star"] is not None:
            segments.append(_WILDCARD)
        else:
            segments.append(found["dq"] if found["dq"] is not None else found["sq"])
        position = found.end()
    return segments


def _step(value: Any, segment: Any) -> list[Any]:
    if segment is _WILDCARD:
        if isinstance(value, dict):
            return list(value.values())
        if isinstance(value, list):
            return list(value)
        return []
    if isinstance(value, dict):
        key = str(segment)
        return [value[key]] if key in value else []
    if isinstance(value, list):
        try:
            index = int(segment)
        except (TypeError, ValueError):
            return []
        if -len(value) <= index < len(value):
            return [value[index]]
    return []


def util_json_query(args: JSONDict) -> JSONDict:
    """``util.json.query``: pick values out of JSON with a dotted path (``items[0].name``, ``*``)."""
    path = str(args["path"])
    segments = _parse_path(path)
    current: list[Any] = [args["data"]]
    for segment in segments:
        current = [found for value in current for found in _step(value, segment)]
    if any(segment is _WILDCARD for segment in segments):
        return {"path": path, "found": bool(current), "value": current, "match_count": len(current)}
    if current:
        return {"path": path, "found": True, "value": current[0], "match_count": 1}
    return {"path": path, "found": False, "value": args.get("default"), "match_count": 0}


# ---------------------------------------------------------------------------
# util.text.*
# ---------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"""(?:(?<=[.!?])|(?<=[.!?]["')\]]))\s+(?=["'(\[]?[A-Z0-9])""")
_STOPWORDS = _words(
    "a an and are as at be been but by can could did do does for from had has have he her his i if in "
    "into is it its it's just more most my no not of on or our she so than that the their them then "
    "there these they this those to too was we were what when which who will with would you your"
)


def _sentences(text: str) -> list[str]:
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip()):
        flat = " ".join(block.split())
        out.extend(s.strip() for s in _SENTENCE_END.split(flat) if s.strip())
    return out


def util_text_summarize(args: JSONDict) -> JSONDict:
    """``util.text.summarize``: an extractive summary (lead sentences or the most salient ones)."""
    text = str(args["text"])
    limit = int(args.get("max_sentences", 3))
    strategy = str(args.get("strategy", "lead"))
    sentences = _sentences(text)
    if strategy == "salient" and len(sentences) > limit:
        freq = Counter(w for w in _WORD.findall(text.lower()) if w not in _STOPWORDS and len(w) > 2)

        def score(sentence: str) -> float:
            words = [w for w in _WORD.findall(sentence.lower()) if w in freq]
            return sum(freq[w] for w in words) / (len(words) + 3)

        ranked = sorted(range(len(sentences)), key=lambda i: (-score(sentences[i]), i))
        chosen = [sentences[i] for i in sorted(ranked[:limit])]
    else:
        chosen = sentences[:limit]
    summary = " ".join(chosen)
    return {
        "summary": summary,
        "sentences": chosen,
        "strategy": strategy,
        "source_sentences": len(sentences),
        "compression_ratio": round(len(summary) / len(text), 3) if text else 1.0,
    }


def util_text_word_count(args: JSONDict) -> JSONDict:
    """``util.text.word_count``: words, characters, sentences and reading time."""
    text = str(args["text"])
    wpm = int(args.get("words_per_minute", 238))
    words = len(text.split())
    return {
        "words": words,
        "characters": len(text),
        "characters_no_spaces": sum(1 for c in text if not c.isspace()),
        "lines": len(text.splitlines()),
        "sentences": len(_sentences(text)),
        "paragraphs": len([b for b in re.split(r"\n\s*\n", text) if b.strip()]),
        "reading_time_minutes": round(words / wpm, 1),
    }


def util_text_diff(args: JSONDict) -> JSONDict:
    """``util.text.diff``: a unified diff between two texts."""
    original, modified = str(args["original"]), str(args["modified"])
    if args.get("ignore_whitespace", False):

        def norm(s: str) -> list[str]:
            return [" ".join(line.split()) + "\n" for line in s.splitlines()]

        old_lines, new_lines = norm(original), norm(modified)
    else:
        old_lines, new_lines = original.splitlines(keepends=True), modified.splitlines(keepends=True)
    diff_lines = list(
        difflib.unified_diff(
            old_lines,
            new_lines,
            fromfile=str(args.get("from_label", "original")),
            tofile=str(args.get("to_label", "modified")),
            n=int(args.get("context_lines", 3)),
        )
    )
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in diff_lines)
    added = sum(1 for line in diff_lines if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff_lines if line.startswith("-") and not line.startswith("---"))
    return {"diff": diff, "identical": not diff_lines, "added_lines": added, "removed_lines": removed}


# ---------------------------------------------------------------------------
# refactor.rename_symbol
# ---------------------------------------------------------------------------

LANGUAGE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "py": (".py", ".pyi"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "js": (".js", ".jsx", ".mjs", ".cjs"),
    "go": (".go",),
    "java": (".java",),
}
_RESERVED: dict[str, frozenset[str]] = {
    "py": frozenset(keyword.kwlist),
    "js": _words(
        "break case catch class const continue debugger default delete do else export extends finally "
        "for function if import in instanceof new return super switch this throw try typeof var void "
        "while with yield let static enum await null true false"
    ),
    "go": _words(
        "break case chan const continue default defer else fallthrough for func go goto if import "
        "interface map package range return select struct switch type var"
    ),
    "java": _words(
        "abstract assert boolean break byte case catch char class const continue default do double "
        "else enum extends final finally float for goto if implements import instanceof int interface "
        "long native new package private protected public return short static strictfp super switch "
        "synchronized this throw throws transient try void volatile while true false null"
    ),
}
_RESERVED["ts"] = _RESERVED["js"] | frozenset(["interface", "type", "implements", "private", "protected", "public"])
MAX_DIFF_PREVIEW = 50_000


def _source_files(project: Path, extensions: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    for directory, dirnames, filenames in os.walk(project):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.startswith("."))
        # a symlinked file may point outside the sandbox: rewriting it would write there
        found.extend(Path(directory) / name for name in sorted(filenames)
                     if name.endswith(extensions) and not (Path(directory) / name).is_symlink())
    return found


def refactor_rename_symbol(args: JSONDict) -> JSONDict:
    """``refactor.rename_symbol``: whole-word rename across one language's files; dry run by default."""
    root = sandbox_root()
    shown = str(args["project_root"])
    project = _resolve(shown, root)
    _require_exists(project, shown)
    if not project.is_dir():
        raise NotADirectoryError(f"project_root {shown!r} is not a directory")
    symbol, new_name, language = str(args["symbol"]), str(args["new_name"]), str(args["language"])
    dry_run = bool(args.get("dry_run", True))
    if language not in LANGUAGE_EXTENSIONS:
        raise ValueError(f"unsupported language {language!r}; use one of {', '.join(LANGUAGE_EXTENSIONS)}")
    if symbol == new_name:
        raise ValueError("new_name is the same as symbol")
    if new_name in _RESERVED[language]:
        raise ValueError(f"{new_name!r} is a reserved word in {language}")
    ident = r"\w$" if language in ("js", "ts") else r"\w"
    pattern = re.compile(rf"(?<![{ident}]){re.escape(symbol)}(?![{ident}])")
    clash = re.compile(rf"(?<![{ident}]){re.escape(new_name)}(?![{ident}])")

    changed: list[tuple[Path, str, str]] = []
    replacements = 0
    clashes: list[str] = []
    for path in _source_files(project, LANGUAGE_EXTENSIONS[language]):
        try:
            with path.open(encoding="utf-8", newline="") as handle:
                original = handle.read()
        except (UnicodeDecodeError, OSError):
            continue
        if clash.search(original):
            clashes.append(path.relative_to(root).as_posix())
        updated, count = pattern.subn(new_name, original)
        if count:
            replacements += count
            changed.append((path, original, updated))
    if not changed:
        exts = ", ".join(LANGUAGE_EXTENSIONS[language])
        raise LookupError(f"symbol {symbol!r} not found in any {exts} file under {shown!r}")

    preview_parts: list[str] = []
    for path, original, updated in changed:
        rel = path.relative_to(root).as_posix()
        preview_parts.extend(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                updated.splitlines(keepends=True),
                fromfile=f"a/{rel}",
                tofile=f"b/{rel}",
            )
        )
    preview = "".join(line if line.endswith("\n") else line + "\n" for line in preview_parts)
    if len(preview) > MAX_DIFF_PREVIEW:
        preview = preview[:MAX_DIFF_PREVIEW] + "\n... (diff truncated)\n"
    if not dry_run:
        for path, _original, updated in changed:
            with path.open("w", encoding="utf-8", newline="") as handle:
                handle.write(updated)
    warnings = [
        "Textual rename: occurrences inside strings and comments were renamed too; review the diff.",
    ]
    if clashes:
        warnings.append(
            f"{new_name!r} already appears in {len(clashes)} file(s), e.g. {clashes[0]}: "
            "check for shadowing or duplicate definitions."
        )
    return {
        "changed_files": [p.relative_to(root).as_posix() for p, _, _ in changed],
        "diff_preview": preview,
        "replacements": replacements,
        "applied": not dry_run,
        "warnings": warnings,
    }
