"""The ``file.*`` tools of the example catalogue: read, write, list, stat, search, move, copy and delete files.

Every path is confined to the sandbox folder the host names (see :mod:`toolcat.examples._shared`):
the reader's ``sandbox`` option, else ``TOOLCAT_SANDBOX``; without one each handler refuses with
NOT_AUTHORIZED and never falls back to the working directory. ``file.search`` compiles the agent's
pattern in RE2 (linear time), so no pattern can freeze the gateway.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import mimetypes
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ._shared import SKIP_DIRS, JSONDict, name_in_sandbox, relative, require_exists, resolve_in_sandbox, sandbox_root

__all__ = [
    "MAX_READ_BYTES",
    "MAX_SEARCH_FILE_BYTES",
    "file_copy",
    "file_delete",
    "file_dir",
    "file_move",
    "file_read",
    "file_search",
    "file_stat",
    "file_write",
]

MAX_READ_BYTES = 10 * 1024 * 1024
MAX_SEARCH_FILE_BYTES = 2 * 1024 * 1024


class _Match(Protocol):
    """The part of an RE2 match object file.search uses."""

    def start(self) -> int: ...


class _Pattern(Protocol):
    """The part of a compiled RE2 pattern file.search uses."""

    def search(self, text: str) -> _Match | None: ...


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


def file_read(args: JSONDict) -> JSONDict:
    """``file.read``: a text file's content, optionally a window of lines."""
    root = sandbox_root()
    shown = str(args["path"])
    target = resolve_in_sandbox(shown, root)
    require_exists(target, shown)
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
        "path": relative(target, root),
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
    target = resolve_in_sandbox(shown, root)
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
        "path": relative(target, root),
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
    target = resolve_in_sandbox(shown, root)
    require_exists(target, shown)
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
    return {"path": relative(target, root), "entries": entries, "count": len(entries), "truncated": truncated}


def file_stat(args: JSONDict) -> JSONDict:
    """``file.stat``: type, size, times and permissions of one path."""
    root = sandbox_root()
    shown = str(args["path"])
    target = resolve_in_sandbox(shown, root)
    named = name_in_sandbox(shown, root)
    require_exists(target, shown)
    info = target.stat()
    kind = "directory" if target.is_dir() else "file" if target.is_file() else "other"
    mime = mimetypes.guess_type(target.name)[0] if kind == "file" else None
    return {
        "path": relative(target, root),
        "type": kind,
        "is_symlink": named.is_symlink(),
        "size_bytes": info.st_size,
        "modified": _iso_mtime(info.st_mtime),
        "permissions": oct(info.st_mode & 0o777),
        "mime_type": mime,
    }


def _search_regex(pattern: str, *, fixed: bool, ignore_case: bool) -> _Pattern:
    """The agent's pattern compiled in RE2 (linear time: no pattern can freeze the gateway)."""
    from ..engines import regex  # noqa: PLC0415 - imports google-re2 on the first search only
    from ..format.envelope import ReaderError  # noqa: PLC0415 - the example handlers load the reader's pieces only when a handler runs

    try:
        compiled: _Pattern = regex.compile_pattern(re.escape(pattern) if fixed else pattern, ignore_case=ignore_case)
    except regex.PatternError as exc:
        raise ReaderError(
            "VALIDATION_ERROR",
            f"pattern {pattern!r} {exc.reason}",
            help_path="file.search",
            details={
                "field_errors": [
                    {
                        "field": "pattern",
                        "message": exc.reason,
                        "expected": "an RE2 regular expression (no lookaround or backreferences)",
                    }
                ]
            },
            hints=[regex.AGENT_HINT if isinstance(exc, regex.UnsupportedPatternError) else exc.hint],
            next_action={"op": "tool_help", "args": {"path": "file.search", "format": "full"}},
        ) from None
    return compiled


def file_search(args: JSONDict) -> JSONDict:
    """``file.search``: grep-like search of text files, with optional context lines."""
    root = sandbox_root()
    shown = str(args.get("path", "."))
    base = resolve_in_sandbox(shown, root)
    require_exists(base, shown)
    regex = _search_regex(
        str(args["pattern"]),
        fixed=bool(args.get("fixed_string", False)),
        ignore_case=not args.get("case_sensitive", False),
    )
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


@dataclass(frozen=True, slots=True)
class _Transfer:
    """A move or copy inside the sandbox: the existing ``source``, the ``destination``, and their names as given."""

    root: Path
    source: Path
    destination: Path
    src_shown: str
    dst_shown: str

    @classmethod
    def of(cls, args: JSONDict) -> _Transfer:
        """Both paths of ``args`` resolved inside the sandbox; FileNotFoundError unless the source exists."""
        root = sandbox_root()
        src_shown, dst_shown = str(args["source"]), str(args["destination"])
        transfer = cls(
            root, resolve_in_sandbox(src_shown, root), resolve_in_sandbox(dst_shown, root), src_shown, dst_shown
        )
        require_exists(transfer.source, src_shown)
        return transfer

    def may_replace(self, args: JSONDict) -> bool:
        """Whether the destination exists and ``overwrite`` allows replacing it; FileExistsError if it does not."""
        if not self.destination.exists():
            return False
        if not args.get("overwrite", False):
            raise FileExistsError(f"{self.dst_shown!r} already exists (pass overwrite: true to replace it)")
        return True

    def answer(self, **facts: object) -> JSONDict:
        """The handler's answer: both paths relative to the sandbox, then ``facts``."""
        return {
            "source": relative(self.source, self.root),
            "destination": relative(self.destination, self.root),
            **facts,
        }


def file_move(args: JSONDict) -> JSONDict:
    """``file.move``: move or rename a file or directory inside the sandbox."""
    move = _Transfer.of(args)
    source, destination = move.source, move.destination
    if source == move.root:
        raise PermissionError("refusing to move the sandbox root")
    if source == destination:
        raise ValueError("source and destination are the same path")
    if source.is_dir() and source in destination.parents:
        raise ValueError(f"cannot move directory {move.src_shown!r} into itself")
    overwritten = move.may_replace(args)
    if overwritten:
        if destination.is_dir():
            raise IsADirectoryError(f"refusing to overwrite directory {move.dst_shown!r}")
        destination.unlink()
    if not destination.parent.exists():
        if not args.get("create_parents", True):
            raise FileNotFoundError(f"parent directory of {move.dst_shown!r} does not exist")
        destination.parent.mkdir(parents=True, exist_ok=True)
    kind = "directory" if source.is_dir() else "file"
    shutil.move(str(source), str(destination))
    return move.answer(type=kind, overwritten=overwritten)


def file_copy(args: JSONDict) -> JSONDict:
    """``file.copy``: copy a file, or a directory tree with ``recursive: true``."""
    copy = _Transfer.of(args)
    source, destination = copy.source, copy.destination
    copy.may_replace(args)
    destination.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        if not args.get("recursive", False):
            raise IsADirectoryError(f"{copy.src_shown!r} is a directory; pass recursive: true to copy it")
        if source in destination.parents or source == destination:
            raise ValueError(f"cannot copy directory {copy.src_shown!r} into itself")
        shutil.copytree(source, destination, dirs_exist_ok=True, symlinks=True)
        files = [p for p in destination.rglob("*") if p.is_file()]
        return copy.answer(files_copied=len(files), bytes_copied=sum(p.stat().st_size for p in files))
    if destination.is_dir():
        raise IsADirectoryError(f"destination {copy.dst_shown!r} is a directory; name the target file")
    shutil.copy2(source, destination)
    return copy.answer(files_copied=1, bytes_copied=destination.stat().st_size)


def file_delete(args: JSONDict) -> JSONDict:
    """``file.delete``: delete a file, an empty directory, or a tree with ``recursive``."""
    root = sandbox_root()
    shown = str(args["path"])
    target = resolve_in_sandbox(shown, root)
    named = name_in_sandbox(shown, root)
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
