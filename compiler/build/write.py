"""Write a planned build atomically: a temporary folder beside ``out``, then a swap; or, on a build, in place.

Content-hashed files already present in the previous build are hard-linked, not
rewritten, so a one-tool change writes only the files whose bytes changed. An incremental
build goes further (:func:`_write_in_place`, issue 33): every published file but the entry
point is named by its content, so it adds its new files to ``out`` itself and commits
through a journal, rather than linking the 30,000 files of ten versions into a new folder
and removing the old one; the result is the swap's, file for file. Files of
the last :data:`KEEP_VERSIONS` registry versions are kept so that readers pinned to a
recent version keep working. A failure at any point leaves ``out`` as it was.

The swap is one step where the kernel offers it (Linux ``renameat2(RENAME_EXCHANGE)``
swaps the new folder and ``out``), two renames elsewhere. A build holds a lock for its
whole run (:func:`build_lock`), and first repairs what a killed build may have left:
``out`` missing after the first of the two renames, temporary and moved-aside folders.

``out`` is toolcat's only when it holds a build (``catalog.json`` or the private state): an
existing folder that holds anything else is refused, never emptied. Inside a build, a file
toolcat did not write (one a user or another tool put there, such as setuptools' ``build/lib``)
is carried into the new build untouched and named in a warning; only files a build wrote are
ever removed. The state lists every file a build wrote (``written``) so the next build knows.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import json
import logging
import os
import shutil
import signal
import stat
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import FORMAT_VERSION
from ..format.canonical import dumps
from .errors import BuildError
from .plan import Plan

log = logging.getLogger(__name__)

ENTRY = "catalog.json"
STATE = ".toolcat-state.json"
KEEP_VERSIONS = 10
#: Folders of ``out`` that other commands own (the docs site); carried over unchanged.
CARRIED_FOLDERS = ("site",)


@dataclass(slots=True)
class Faults:
    """Test-only fault injection, set in-process (never read from the environment).

    ``crash_at`` kills the build process with SIGKILL at a named point of the swap (``before-swap``,
    ``after-exchange``, ``between-renames``); ``swap`` = ``renames`` forces the two-rename swap.
    tests/security/test_build_hardening.py proves crash recovery with them, in a child process that sets them.
    """

    crash_at: str = ""
    swap: str = ""


FAULTS = Faults()

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
#: renameat2's system call number, for a C library without the wrapper (glibc < 2.28).
_RENAMEAT2_SYSCALL = {"x86_64": 316, "aarch64": 276}


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What a write did."""

    files_written: int
    files_kept: int
    files_removed: int
    total_files: int


def read_state(out: Path) -> dict[str, Any]:
    """The previous build's state, or an empty one (a corrupt state only costs a full rebuild)."""
    try:
        state = json.loads((out / STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(state, dict):
        return {}
    if isinstance(state.get("versions"), list):
        state["versions"] = _versions_read(state["versions"])
    return state


def _versions_saved(versions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The versions as the state saves them: the first one's files listed, each next one's as what it adds and drops.

    Ten versions of a 10,000-tool build share most of their 25,000 files: listed whole they made the state 21 MB
    (issue 33); :func:`_versions_read` lists them again. A version read from the last state that follows the same
    version as there keeps the delta it was saved with (:data:`_READ_DELTA`): only the first two versions' lists are
    compared, not ten lists of 25,000 files.
    """
    saved: list[dict[str, Any]] = []
    for at, version in enumerate(versions):
        fields = {key: value for key, value in version.items() if key not in ("files", *_READ_DELTA)}
        if at == 0:
            saved.append({**fields, "files": sorted(set(version.get("files", [])))})
        elif _READ_DELTA[0] in version and version.get(_READ_DELTA[1]) == versions[at - 1].get("registry_version"):
            saved.append({**fields, "files_delta": version[_READ_DELTA[0]]})
        else:
            files, previous = set(version.get("files", [])), set(versions[at - 1].get("files", []))
            delta = {"added": sorted(files - previous), "dropped": sorted(previous - files)}
            saved.append({**fields, "files_delta": delta})
    return saved


#: What :func:`_versions_read` notes on a version read as a delta: the delta, and the registry version it follows.
_READ_DELTA = ("_read_delta", "_read_after")


def _versions_read(versions: list[Any]) -> list[Any]:
    """Each version with its ``files`` listed, from a state's (:func:`_versions_saved`, or listed whole before)."""
    read: list[Any] = []
    previous: set[str] | None = None
    for version in versions:
        delta = version.get("files_delta") if isinstance(version, dict) else None
        if isinstance(delta, dict) and previous is not None:
            previous = (previous - set(delta.get("dropped", []))) | set(delta.get("added", []))
            fields = {key: value for key, value in version.items() if key != "files_delta"}
            after = read[-1].get("registry_version") if isinstance(read[-1], dict) else None
            read.append({**fields, "files": list(previous), _READ_DELTA[0]: delta, _READ_DELTA[1]: after})
            continue
        if isinstance(version, dict) and isinstance(version.get("files"), list):
            previous = set(version["files"])
        read.append(version)
    return read


def tmp_prefix(out: Path) -> str:
    """The name prefix of a build's temporary folders beside ``out`` (:func:`recover` removes stale ones)."""
    return f".{out.name}.tmp-"


def _old_name(out: Path) -> str:
    return f".{out.name}.old-"


@functools.cache
def _renameat2() -> Callable[[bytes, bytes], int] | None:
    """``renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)`` through ctypes; None off Linux."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover - a Linux without a loadable C library
        return None
    wrapper = getattr(libc, "renameat2", None)
    if wrapper is not None:
        wrapper.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
        wrapper.restype = ctypes.c_int
        return lambda a, b: int(wrapper(_AT_FDCWD, a, _AT_FDCWD, b, _RENAME_EXCHANGE))
    number = _RENAMEAT2_SYSCALL.get(os.uname().machine)  # pragma: no cover - older C libraries
    if number is None:  # pragma: no cover
        return None
    syscall = libc.syscall  # pragma: no cover
    syscall.restype = ctypes.c_long  # pragma: no cover
    return lambda a, b: int(
        syscall(
            ctypes.c_long(number),
            ctypes.c_int(_AT_FDCWD),
            ctypes.c_char_p(a),  # pragma: no cover
            ctypes.c_int(_AT_FDCWD),
            ctypes.c_char_p(b),
            ctypes.c_uint(_RENAME_EXCHANGE),
        )
    )


def exchange(a: Path, b: Path) -> bool:
    """Swap the names of two existing paths in one atomic step; False where the system cannot.

    Linux's ``renameat2(RENAME_EXCHANGE)`` (3.15+, on ext4, xfs, btrfs, tmpfs, ...); a kernel or
    file system without it answers ENOSYS or EINVAL, and the caller falls back to two renames.
    """
    call = _renameat2()
    if call is None:
        return False
    if call(os.fsencode(a), os.fsencode(b)) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP):
        return False
    raise OSError(code, os.strerror(code), str(a), None, str(b))


def _crash_point(name: str) -> None:
    if FAULTS.crash_at == name:
        os.kill(os.getpid(), signal.SIGKILL)


#: The folders whose build lock this thread holds (:func:`build_lock`): taken again by the same thread, it is held.
_HELD = threading.local()


@contextlib.contextmanager
def build_lock(out: Path) -> Iterator[None]:
    """Hold ``out``'s build lock for a whole build, after repairing what a killed build left behind.

    The lock is an exclusive ``flock`` on the folder holding ``out`` (no lock file to leave
    behind; the kernel drops it when a process dies), so concurrent builds into one folder take
    turns, and whatever lies around under the temporary names belongs to no live build. A thread that
    holds the lock of that folder already (a docs site built beside the build whose lock it holds) holds it again
    at no cost; any other thread or process waits.
    """
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    held: set[str] = _HELD.__dict__.setdefault("folders", set())
    key = str(out.parent)
    if key in held:
        recover(out)
        recover_pending(out)
        yield
        return
    fd = os.open(out.parent, os.O_RDONLY)
    try:
        try:
            import fcntl  # noqa: PLC0415 - POSIX only; elsewhere builds are not serialised
        except ImportError:  # pragma: no cover
            fcntl = None  # type: ignore[assignment]
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                log.warning("another build into %s is running; waiting for it to finish", out)
                fcntl.flock(fd, fcntl.LOCK_EX)
        held.add(key)
        recover(out)
        recover_pending(out)
        yield
    finally:
        held.discard(key)
        os.close(fd)


def recover(out: Path) -> list[str]:
    """Put back the last good build if a crash left ``out`` missing, then remove stale temporary folders.

    Call it only while holding :func:`build_lock`. Returns what was done, for the log and tests.
    """
    out = out.resolve()
    return recover_aside(out, tmp_prefix(out), _old_name(out), "build", lambda old: (old / ENTRY).is_file())


def recover_aside(
    out: Path, tmp: str, old: str, what: str, restorable: Callable[[Path], bool] = lambda _old: True
) -> list[str]:
    """Repair what a swap that never finished left beside ``out``; the one recovery for every swap toolcat makes.

    When ``out`` is missing, the newest folder set aside as ``old*`` (and whole, says ``restorable``) is put back;
    then every ``tmp*`` and ``old*`` folder beside ``out`` is removed. Used by builds here and imports in
    :mod:`toolcat.importers.common`; only folders with those prefixes, never links, are touched. Returns what was done, each also logged as a warning.
    """
    done: list[str] = []
    if not out.parent.is_dir():
        return done
    aside = sorted(
        (p for p in out.parent.iterdir() if p.name.startswith((tmp, old)) and p.is_dir() and not p.is_symlink()),
        key=lambda p: (p.stat().st_mtime_ns, p.name),
    )
    if not out.exists():
        moved = [p for p in aside if p.name.startswith(old) and restorable(p)]
        if moved:
            moved[-1].rename(out)  # the newest previous one, set aside by a swap that never finished
            aside.remove(moved[-1])
            done.append(f"restored {out} from {moved[-1].name}")
    for path in aside:
        shutil.rmtree(path, ignore_errors=True)
        done.append(f"removed {path.name}")
    for line in done:
        log.warning("recovering from an interrupted %s: %s", what, line)
    return done


def _link_or_copy(src: Path | str, dst: Path | str) -> None:
    # paths as text: a build links 25,000-30,000 files, and pathlib's joins cost more than the links (issue 33)
    try:  # the folder is made on the first miss: one system call a file, not two (issue 29)
        os.link(src, dst)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(dst), exist_ok=True)  # noqa: PTH103, PTH120 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
        _link_or_copy_here(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _link_or_copy_here(src: Path | str, dst: Path | str) -> None:
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _carry(existing: str, target: str, size: int) -> None:
    """Link a file the plan keeps from the previous build (checked to be there, at its size)."""
    _check_carried(existing, size)
    _link_or_copy(existing, target)


def _check_carried(existing: str, size: int) -> None:
    """Raise OSError unless ``existing`` (kept from the previous build) is a file of ``size`` bytes."""
    try:
        found = os.stat(existing)  # noqa: PTH116 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
    except OSError:
        found = None
    if found is None or not stat.S_ISREG(found.st_mode) or found.st_size != size:
        msg = f"{existing} (kept from the previous build) is missing or changed; rebuild with --force"
        raise OSError(msg)


def _place_planned(plan: Plan, into: str, at: str) -> tuple[int, int]:
    """Put every planned file under ``into`` (the new folder): linked when ``at`` (the build) or a stage has it.

    Returns (files written, files kept). Paths are ``into``/``at`` joined as text (see :func:`_link_or_copy`).
    """
    written = kept = 0
    for rel in sorted(plan.files):
        target = into + rel
        data = plan.files.origin(rel)
        if isinstance(data, Path):  # the last build's copy, or a file the planner staged on disk
            _link_or_copy(data, target)
            staged = plan.files.staged(rel)
            written += staged
            kept += not staged
            continue
        existing = at + rel
        if os.path.isfile(existing) and os.stat(existing).st_size == len(data):  # noqa: PTH113, PTH116 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
            _link_or_copy(existing, target)
            kept += 1
            continue
        os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
        with open(target, "wb") as handle:  # noqa: PTH123 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
            handle.write(data)
        written += 1
    return written, kept


def _entry_point(plan: Plan, versions: list[dict[str, Any]]) -> bytes:
    entry = {
        "artifact": "catalog",
        "format": "toolcat",
        "format_version": FORMAT_VERSION,
        "registry_version": plan.registry_version,
        "manifest": plan.manifest_ref,
        "versions": [{"registry_version": v["registry_version"], "manifest": v["manifest"]} for v in versions],
    }
    return json.dumps(entry, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False).encode("utf-8") + b"\n"


def is_build(folder: Path) -> bool:
    """True when ``folder`` holds a toolcat build (its entry point or its private state)."""
    return (folder / ENTRY).is_file() or (folder / STATE).is_file()


def check_out(out: Path) -> None:
    """Refuse an ``out`` that exists and is not a toolcat build: a build replaces its folder, and must not empty another."""
    if out.exists() and not out.is_dir():
        msg = f"--out {out}: exists and is not a folder; choose a folder for the build"
        raise BuildError(msg)
    if out.is_dir() and not is_build(out) and any(out.iterdir()):
        shown = ", ".join(sorted(p.name for p in out.iterdir())[:3])
        msg = (
            f"--out {out}: the folder holds files that are not a toolcat build ({shown} ...); a build never replaces "
            "it. Choose an empty or new folder, or a previous build's folder."
        )
        raise BuildError(msg)


def owned_files(state: dict[str, Any]) -> set[str]:
    """The files of ``out`` a previous build wrote, by its state (older states: every version's files).

    Only ever compared with the text of paths found in ``out``, so an entry of a damaged state that is not text matches
    nothing: the lists are taken as they are (ten versions list 250,000 files at 10,000 tools), and only a list that
    holds something a set cannot hold is gone through entry by entry.
    """
    owned = {ENTRY, STATE}
    written = state.get("written")
    versions = state.get("versions", []) if isinstance(state.get("versions"), list) else []
    lists = [written] if isinstance(written, list) else []
    lists += [v["files"] for v in versions if isinstance(v, dict) and isinstance(v.get("files"), list)]
    for files in lists:
        try:
            owned.update(files)
        except TypeError:  # a damaged state's list holding a list or a dict
            owned.update(str(rel) for rel in files if isinstance(rel, str))
    return owned


def _foreign(
    out: Path, state: dict[str, Any], found: set[str] | None = None, owned: set[str] | None = None
) -> list[str]:
    """Files in ``out`` that no build wrote (private ``.toolcat-*`` files and the site are toolcat's).

    ``found``: every file of ``out`` (:func:`_files`), and ``owned``: :func:`owned_files` of ``state``, when the caller
    has them already.
    """
    if not out.is_dir():
        return []
    owned = owned_files(state) if owned is None else owned
    return sorted(
        rel
        for rel in (_files(out) if found is None else found)
        if rel not in owned
        and not rel.startswith(".toolcat-")
        and not any(rel.startswith(f"{folder}/") for folder in CARRIED_FOLDERS)
    )


def write_build(out: Path, plan: Plan, state: dict[str, Any], new_state: dict[str, Any]) -> WriteResult:
    """Write ``plan`` into ``out`` through a temporary folder; ``new_state`` is saved beside it."""
    out = out.resolve()
    check_out(out)
    before = _files(out) if out.is_dir() else set()  # listed once: the foreign files, and those this build removes
    owned = owned_files(state)
    foreign = _foreign(out, state, before, owned)
    tmp = out.parent / f"{tmp_prefix(out)}{os.getpid()}"
    old = out.parent / f"{_old_name(out)}{os.getpid()}"
    previous = [v for v in state.get("versions", []) if v.get("registry_version") != plan.registry_version]
    versions = [
        {
            "registry_version": plan.registry_version,
            "manifest": plan.manifest_ref,
            "files": sorted({*plan.files, *plan.carried}),
        },
        *previous,
    ][:KEEP_VERSIONS]
    if FAULTS.swap != "renames":  # the test-only two-rename swap needs the folder swap
        done = _write_in_place(out, plan, state, new_state, versions, before, foreign, owned)
        if done is not None:
            return done
    keep: set[str] = set()
    for version in versions[1:]:
        keep.update(version.get("files", []))
    keep -= {*plan.files, *plan.carried}
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        into, at = f"{tmp}{os.sep}", f"{out}{os.sep}"  # joined as text (see _link_or_copy)
        written, kept = _place_planned(plan, into, at)
        for rel, ref in sorted(plan.carried.items()):
            if rel not in plan.files:
                _carry(at + rel, into + rel, int(ref["bytes"]))
                kept += 1
        for name, data in sorted(plan.private.items()):
            if isinstance(data, Path):  # streamed to the staging folder (the per-tool memo)
                _link_or_copy(data, tmp / name)
            else:
                (tmp / name).write_bytes(data)
        for rel in sorted(keep):
            if os.path.isfile(at + rel):  # noqa: PTH113 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
                _link_or_copy(at + rel, into + rel)
        for folder in CARRIED_FOLDERS:
            if (out / folder).is_dir():
                shutil.copytree(out / folder, tmp / folder, copy_function=os.link)
        (tmp / ENTRY).write_bytes(_entry_point(plan, versions))
        in_versions = set().union(*(version["files"] for version in versions))
        listed = _files(tmp)
        written_files = sorted(
            rel for rel in listed - in_versions - {STATE} if not rel.startswith(tuple(f"{f}/" for f in CARRIED_FOLDERS))
        )
        for rel in foreign:  # never delete what toolcat did not write
            if not (tmp / rel).exists():
                _link_or_copy(out / rel, tmp / rel)
        _warn_foreign(out, foreign)
        new_state = {**new_state, "versions": _versions_saved(versions), "written": written_files}
        (tmp / STATE).write_bytes(dumps(new_state))
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not write the build into {tmp}: {exc}. The previous build in {out} is untouched."
        raise BuildError(msg) from exc
    now = listed | set(foreign) | {STATE}  # what _files(tmp) would list now: nothing else was added since
    removed = len(before - now)
    _swap(tmp, out, old)
    total = sum(1 for rel in now if not rel.startswith("site/"))
    return WriteResult(written, kept, removed, total)


def _files(root: Path) -> set[str]:
    """Every file under ``root``, relative (os.walk: a tenth of the time of Path.rglob on 100,000 files)."""
    found: set[str] = set()
    for folder, _, names in os.walk(root):
        prefix = Path(folder).relative_to(root).as_posix()
        found.update(names if prefix == "." else (f"{prefix}/{name}" for name in names))
    return found


def _swap(tmp: Path, out: Path, old: Path) -> None:
    """Put the finished build ``tmp`` in place of ``out``; the previous build ends up deleted."""
    _crash_point("before-swap")
    if not out.exists():
        _rename_into_place(tmp, out, old)
        return
    try:
        swapped = FAULTS.swap != "renames" and exchange(tmp, out)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not swap the new build into {out}: {exc}. The previous build is untouched."
        raise BuildError(msg) from exc
    if swapped:  # one step: ``out`` is the new build, ``tmp`` now holds the previous one
        _crash_point("after-exchange")
        shutil.rmtree(tmp, ignore_errors=True)
        return
    try:
        out.rename(old)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not move the previous build {out} aside: {exc}. It is untouched."
        raise BuildError(msg) from exc
    _crash_point("between-renames")  # a crash here leaves no ``out``: recover() puts ``old`` back
    _rename_into_place(tmp, out, old)
    shutil.rmtree(old, ignore_errors=True)


def _rename_into_place(tmp: Path, out: Path, old: Path) -> None:
    try:
        tmp.rename(out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            old.rename(out)
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not move the new build into place: {exc}. The previous build is restored."
        raise BuildError(msg) from exc


#: The journal of a build written into ``out`` itself (:func:`_write_in_place`); :func:`recover_pending` reads it.
PENDING = ".toolcat-pending.json"
#: The name prefix of the files such a build stages inside ``out`` before its commit (private files, state, entry).
PENDING_PREFIX = ".toolcat-pending-"
PENDING_FORMAT = "toolcat-pending-1"


def _write_in_place(
    out: Path,
    plan: Plan,
    state: dict[str, Any],
    new_state: dict[str, Any],
    versions: list[dict[str, Any]],
    before: set[str],
    foreign: list[str],
    owned: set[str],
) -> WriteResult | None:
    """Write an incremental build into ``out`` itself, adding only its new files; None when it cannot (issue 33).

    Every published file but the entry point is named by its content's hash (a file, or a folder of row files), and
    a name ``out`` already holds at the same size is the same file (the swap links it as such), so a build can add
    its new files beside the last one's without changing a file any version refers to. A journal
    (:data:`PENDING`) names them first; the private files, the state and the entry point are staged under
    :data:`PENDING_PREFIX` names; rewriting the journal as committed is the commit, after which they are renamed
    over and the files no kept version needs are removed. Before the commit a failure removes what was added (the
    last good build is as it was) and a killed build is rolled back by the next one (:func:`recover_pending`);
    after it, the next one finishes the commit. The folder then holds what the swap would have made: the same
    files, ``written`` and versions. None (the caller swaps) without a previous build and its version list, or
    when a new file's name is taken (a folder or another file there).
    """
    if not isinstance(state.get("versions"), list) or not state["versions"] or ENTRY not in before:
        return None
    found = _new_files(out, plan, before)
    if found is None:
        return None
    new, kept = found
    at = f"{out}{os.sep}"
    parents = {str(parent) for rel, _ in new for parent in Path(rel).parents if str(parent) != "."}
    folders = sorted(folder for folder in parents if not os.path.isdir(at + folder))  # noqa: PTH112 - a str path
    written_files = sorted(
        name for name in {ENTRY, *plan.private} if name not in plan.files and name not in plan.carried
    )
    new_owned = set().union(*(version["files"] for version in versions), written_files, (STATE,))
    drop = sorted(rel for rel in owned - new_owned if rel in before)
    staged = [*sorted(plan.private), STATE, ENTRY]  # renamed over in this order; the entry point last
    journal: dict[str, Any] = {
        "format": PENDING_FORMAT,
        "registry_version": plan.registry_version,
        "status": "prepare",
        "files": [rel for rel, _ in new],
        "folders": folders,
        "staged": staged,
        "drop": drop,
    }
    created: list[str] = []
    try:
        _save_journal(out, journal)
        _prepare(out, plan, new, created)
        (out / (PENDING_PREFIX + ENTRY)).write_bytes(_entry_point(plan, versions))
        saved = {**new_state, "versions": _versions_saved(versions), "written": written_files}
        (out / (PENDING_PREFIX + STATE)).write_bytes(dumps(saved))
        _crash_point("before-swap")
        _save_journal(out, {**journal, "status": "commit"})  # the commit: from here the next build finishes it
    except BaseException as exc:
        _roll_back(out, created, folders, staged)
        if isinstance(exc, OSError):
            msg = f"could not write the build into {out}: {exc}. The previous build in {out} is untouched."
            raise BuildError(msg) from exc
        raise
    _crash_point("after-exchange")
    try:
        _finish(out, staged, drop)
    except OSError as exc:
        msg = (
            f"the build of registry_version {plan.registry_version} was committed in {out}, but finishing it failed: "
            f"{exc}. Fix the cause and run the build again: it finishes the commit first."
        )
        raise BuildError(msg) from exc
    _warn_foreign(out, foreign)
    now = (before - set(drop)) | {rel for rel, _ in new} | {ENTRY, STATE, *plan.private}
    total = sum(1 for rel in now if not rel.startswith("site/"))
    return WriteResult(len(new), kept, len(before - now), total)


def _new_files(out: Path, plan: Plan, before: set[str]) -> tuple[list[tuple[str, bytes | str]], int] | None:
    """The planned files ``out`` lacks (path, and its bytes or the staged file to link), and how many it has.

    None when a planned name holds other bytes or a folder there; BuildError when a carried file is missing.
    """
    at = f"{out}{os.sep}"
    new: list[tuple[str, bytes | str]] = []
    kept = 0
    last = {at, f"{plan.files.existing}{os.sep}"}  # the last build's folder, as given and resolved
    for rel in sorted(plan.files):
        origin = plan.files.origin(rel)
        if isinstance(origin, Path):
            if str(origin).removesuffix(rel) in last and rel in before:  # the last build's copy
                kept += 1
                continue
            placed: bytes | str = str(origin)  # a file the planner staged
        else:
            placed = origin
            if rel in before:
                found = os.stat(at + rel)  # noqa: PTH116 - a str path: pathlib's joins cost more than the links of a build's 30,000 files
                if stat.S_ISREG(found.st_mode) and found.st_size == len(origin):  # the same file (as the swap has it)
                    kept += 1
                    continue
        if rel in before or os.path.lexists(at + rel):
            return None  # a file of other bytes, or a folder, where this one goes: the swap replaces it
        new.append((rel, placed))
    try:
        for rel, ref in sorted(plan.carried.items()):
            if rel not in plan.files:
                _check_carried(at + rel, int(ref["bytes"]))
                kept += 1
    except OSError as exc:
        msg = f"could not write the build into {out}: {exc}. The previous build in {out} is untouched."
        raise BuildError(msg) from exc
    return new, kept


def _prepare(out: Path, plan: Plan, new: list[tuple[str, bytes | str]], created: list[str]) -> None:
    """Make the new files (each noted in ``created`` first) and stage the private files under their pending names."""
    at = f"{out}{os.sep}"
    for rel, placed in new:
        created.append(rel)  # before it is made: a file half written is removed too
        try:
            if isinstance(placed, str):
                _link_new(placed, at + rel)
            else:
                _create(at + rel, placed)
        except FileExistsError:
            created.pop()  # made by someone else since it was looked for: not this build's to remove
            raise
    for name, data in sorted(plan.private.items()):
        if isinstance(data, Path):  # streamed to the staging folder (the per-tool memo)
            _link_or_copy(data, at + PENDING_PREFIX + name)
        else:
            (out / (PENDING_PREFIX + name)).write_bytes(data)


def first_few(names: list[str], few: int = 5) -> str:
    """The first ``few`` of ``names`` for a log line, joined by commas, with `` ...`` when there are more."""
    return ", ".join(names[:few]) + (" ..." if len(names) > few else "")


def _warn_foreign(out: Path, foreign: list[str]) -> None:
    if foreign:
        log.warning("kept %d file(s) in %s that toolcat did not write: %s", len(foreign), out, first_few(foreign))


def _create(target: str, data: bytes) -> None:
    """Write a new file (never over an existing one), making its folder on the first miss."""
    try:
        handle = open(target, "xb")  # noqa: PTH123, SIM115 - a str path: pathlib's joins cost more than the files of a build
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120 - a str path, as above
        handle = open(target, "xb")  # noqa: PTH123, SIM115 - as above
    with handle:
        handle.write(data)


def _link_new(source: str, target: str) -> None:
    """Link ``source`` as a new file (never over an existing one; copied where it cannot be linked)."""
    try:
        os.link(source, target)
    except FileNotFoundError:
        os.makedirs(os.path.dirname(target), exist_ok=True)  # noqa: PTH103, PTH120 - a str path, as above
        _link_new_here(source, target)
    except FileExistsError:
        raise
    except OSError:
        with open(source, "rb") as handle:  # noqa: PTH123 - a str path, as above
            _create(target, handle.read())


def _link_new_here(source: str, target: str) -> None:
    try:
        os.link(source, target)
    except FileExistsError:
        raise
    except OSError:
        with open(source, "rb") as handle:  # noqa: PTH123 - a str path, as above
            _create(target, handle.read())


def _save_journal(out: Path, journal: dict[str, Any]) -> None:
    """Write the journal whole or not at all (a staged copy renamed over)."""
    staged = out / (PENDING_PREFIX + "journal")
    staged.write_bytes(dumps(journal))
    staged.replace(out / PENDING)


def _remove(out: Path, rels: list[str], folders: list[str] | None = None) -> None:
    """Remove files of ``out`` (those gone already are fine), then ``folders`` (else the files' own) that emptied."""
    if folders is None:
        folders = sorted({str(parent) for rel in rels for parent in Path(rel).parents if str(parent) != "."})
    paths = [f"{out}{os.sep}{rel}" for rel in rels]
    if len(paths) < UNLINK_THREADS_FROM:
        for path in paths:
            _unlink(path)
    else:  # the last links of old files: each waits on the disk for the inode's blocks; several wait at once
        with ThreadPoolExecutor(UNLINK_THREADS, thread_name_prefix="toolcat-unlink") as pool:
            for _ in pool.map(_unlink, paths, chunksize=32):
                pass
    for folder in sorted(folders, key=lambda f: -f.count("/")):
        with contextlib.suppress(OSError):  # not empty: it holds other files
            (out / folder).rmdir()


#: Files removed by several threads from this many (:func:`_remove`), and how many threads.
UNLINK_THREADS_FROM = 64
UNLINK_THREADS = 8


def _unlink(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)  # noqa: PTH108 - a str path, as above


def _roll_back(out: Path, created: list[str], folders: list[str], staged: list[str]) -> None:
    """Undo a build written in place before its commit: its new files and folders, its staged files, the journal."""
    _remove(out, created, folders)
    for name in [*staged, "journal"]:
        with contextlib.suppress(FileNotFoundError):
            (out / (PENDING_PREFIX + name)).unlink()
    with contextlib.suppress(FileNotFoundError):
        (out / PENDING).unlink()


def _finish(out: Path, staged: list[str], drop: list[str]) -> None:
    """Complete a committed build: its staged files renamed over, the files no version needs removed, the journal gone."""
    for name in staged:
        with contextlib.suppress(FileNotFoundError):  # renamed already, by a build that died after it
            (out / (PENDING_PREFIX + name)).replace(out / name)
    _remove(out, drop)
    (out / PENDING).unlink()


def _journal_list(out: Path, journal: dict[str, Any], key: str) -> list[str]:
    """The journal's paths under ``key`` that name a place inside ``out``; any other is left alone, with a warning.

    The journal is a file in the build folder: a damaged or planted one must not make recovery remove or rename a
    file elsewhere (an absolute path, ``..``, or a path through a symbolic link that leaves ``out``).
    """
    values = journal.get(key, [])
    root = os.path.realpath(out)
    kept: list[str] = []
    for value in values if isinstance(values, list) else []:
        rel = str(value)
        parts = rel.split("/")
        plain = bool(rel) and "\\" not in rel and "\x00" not in rel and all(p not in ("", ".", "..") for p in parts)
        parent = os.path.realpath(os.path.join(root, *parts[:-1])) if plain else ""  # noqa: PTH118 - text, as realpath's
        if plain and (parent == root or parent.startswith(root + os.sep)):
            kept.append(rel)
        else:
            log.warning("recovering from an interrupted build: ignored %r in its journal (not a path in %s)", rel, out)
    return kept


def recover_pending(out: Path) -> list[str]:
    """Finish or undo a build written in place that was killed (:func:`_write_in_place`); call it holding the lock.

    Committed (the journal says so): its staged files are renamed over and the files it dropped removed. Not
    committed: the files it added (listed in the journal before they were made, and owned by no version of the
    last good build) and its staged files are removed. Returns what was done, each also logged as a warning.
    """
    out = out.resolve()
    path = out / PENDING
    if not path.is_file():
        return []
    try:
        journal = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        journal = None
    if not isinstance(journal, dict) or journal.get("format") != PENDING_FORMAT:
        journal = {"status": "prepare"}
    # staged names are the build's own top-level files: its private files, the state, the entry point
    staged = [
        n for n in _journal_list(out, journal, "staged") if "/" not in n and (n == ENTRY or n.startswith(".toolcat-"))
    ]
    if journal.get("status") == "commit":
        _finish(out, staged, _journal_list(out, journal, "drop"))
        done = f"finished the commit of registry_version {journal.get('registry_version')} in {out}"
    else:
        owned = owned_files(read_state(out))
        added = [rel for rel in _journal_list(out, journal, "files") if rel not in owned]
        _roll_back(out, added, _journal_list(out, journal, "folders"), staged)
        done = (
            f"removed the files of an unfinished build of registry_version {journal.get('registry_version')} in {out}"
        )
    log.warning("recovering from an interrupted build: %s", done)
    return [done]
