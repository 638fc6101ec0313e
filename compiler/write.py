"""Write a planned build atomically: a temporary folder beside ``out``, then a swap.

Content-hashed files already present in the previous build are hard-linked, not
rewritten, so a one-tool change writes only the files whose bytes changed. Files of
the last :data:`KEEP_VERSIONS` registry versions are kept so that readers pinned to a
recent version keep working. A failure at any point leaves ``out`` as it was.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler import FORMAT_VERSION
from compiler.canonical import dumps
from compiler.errors import BuildError
from compiler.plan import Plan

log = logging.getLogger(__name__)

ENTRY = "catalog.json"
STATE = ".toolcat-state.json"
KEEP_VERSIONS = 10
#: Folders of ``out`` that other commands own (the docs site); carried over unchanged.
CARRIED_FOLDERS = ("site",)


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
    return state if isinstance(state, dict) else {}


def _link_or_copy(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


def _entry_point(plan: Plan, versions: list[dict[str, Any]]) -> bytes:
    entry = {
        "artifact": "catalog",
        "format": "toolcat",
        "format_version": FORMAT_VERSION,
        "registry_version": plan.registry_version,
        "manifest": plan.manifest_ref,
        "versions": [{"registry_version": v["registry_version"], "manifest": v["manifest"]} for v in versions],
    }
    return json.dumps(entry, sort_keys=True, indent=2, ensure_ascii=False).encode("utf-8") + b"\n"


def write_build(out: Path, plan: Plan, state: dict[str, Any], new_state: dict[str, Any]) -> WriteResult:
    """Write ``plan`` into ``out`` through a temporary folder; ``new_state`` is saved beside it."""
    out = out.resolve()
    tmp = out.parent / f".{out.name}.tmp-{os.getpid()}"
    old = out.parent / f".{out.name}.old-{os.getpid()}"
    previous = [v for v in state.get("versions", []) if v.get("registry_version") != plan.registry_version]
    versions = [{"registry_version": plan.registry_version, "manifest": plan.manifest_ref,
                 "files": sorted(plan.files)}, *previous][:KEEP_VERSIONS]
    keep: set[str] = set()
    for version in versions[1:]:
        keep.update(version.get("files", []))
    keep -= set(plan.files)
    written = kept = 0
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for rel, data in sorted(plan.files.items()):
            target = tmp / rel
            existing = out / rel
            if existing.is_file() and existing.stat().st_size == len(data):
                _link_or_copy(existing, target)
                kept += 1
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
            written += 1
        for rel in sorted(keep):
            if (out / rel).is_file():
                _link_or_copy(out / rel, tmp / rel)
        for folder in CARRIED_FOLDERS:
            if (out / folder).is_dir():
                shutil.copytree(out / folder, tmp / folder, copy_function=os.link)
        (tmp / ENTRY).write_bytes(_entry_point(plan, versions))
        new_state = {**new_state, "versions": versions}
        (tmp / STATE).write_bytes(dumps(new_state))
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not write the build into {tmp}: {exc}. The previous build in {out} is untouched."
        raise BuildError(msg) from exc
    removed = 0
    if out.exists():
        previous_files = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
        now = {p.relative_to(tmp).as_posix() for p in tmp.rglob("*") if p.is_file()}
        removed = len(previous_files - now)
        try:
            out.rename(old)
        except OSError as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            msg = f"could not move the previous build {out} aside: {exc}. It is untouched."
            raise BuildError(msg) from exc
    try:
        tmp.rename(out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            old.rename(out)
        shutil.rmtree(tmp, ignore_errors=True)
        msg = f"could not move the new build into place: {exc}. The previous build is restored."
        raise BuildError(msg) from exc
    shutil.rmtree(old, ignore_errors=True)
    total = sum(1 for p in out.rglob("*") if p.is_file() and "site" not in p.relative_to(out).parts[:1])
    return WriteResult(written, kept, removed, total)
