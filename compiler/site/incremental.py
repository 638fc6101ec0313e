"""Rebuilding the docs site incrementally (docs/site.md): only the pages whose Markdown changed go through mkdocs.

A site keeps ``.toolcat-pages.json``: a hash of everything every page depends on (the mkdocs config and nav,
the static files, the hooks, toolcat's code, the mkdocs and theme versions) and a hash of each page's
Markdown. The next site build of the same output renders the project (cheap), and when only pages changed:

* the previous site is copied into the fresh folder (the published artifacts are linked: they are never
  written in place);
* unchanged pages get an old modification time and changed ones a new one, and ``mkdocs build --dirty``
  renders only the changed pages (mkdocs compares the Markdown's mtime with the HTML's).

The site has no per-page search index to merge: its one search box is toolcat's own, over the published
artifacts (the theme's search plugin is off, docs/site.md).

Anything else (the nav, the config, a new or removed page, another toolcat) means a full build. The result
is byte-identical to a full build of the same catalogue (``tests/test_site_incremental.py``).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from importlib import metadata
from pathlib import Path
from typing import Any

import yaml

from .hooks import HOOKS_SOURCE
from .read import ARTIFACTS_DIR as ARTIFACTS

PAGES_FILE = ".toolcat-pages.json"
#: Past this share of changed pages a full build is as quick, and simpler.
MAX_CHANGED_SHARE = 0.5
#: Files a dirty mkdocs build may write again: copied (never linked) from the previous site.
_REWRITTEN = (".html", ".xml", ".gz", ".json")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def fingerprint(pages: dict[str, str], static: dict[str, bytes], config: dict[str, Any]) -> dict[str, Any]:
    """What the site was rendered from: one hash for everything shared, one per page."""
    from ..build.pipeline import code_fingerprint  # noqa: PLC0415 - toolcat's own code, hashed once per process

    shared = {
        "config": yaml.safe_dump(config, sort_keys=False, allow_unicode=True),
        "hooks": HOOKS_SOURCE,
        "static": {rel: _sha(data) for rel, data in sorted(static.items())},
        "code": code_fingerprint(),
        "mkdocs": metadata.version("mkdocs"),
        "material": metadata.version("mkdocs-material"),
    }
    return {
        "shared": _sha(json.dumps(shared, sort_keys=True).encode()),
        "pages": {rel: _sha(text.encode("utf-8")) for rel, text in sorted(pages.items())},
    }


def changed_pages(current: dict[str, Any], previous_site: Path) -> set[str] | None:
    """The pages to render again over ``previous_site``, or None when the site must be built whole."""
    try:
        before = json.loads((previous_site / PAGES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(before, dict) or before.get("shared") != current["shared"]:
        return None
    if set(before.get("pages", {})) != set(current["pages"]) or not isinstance(before.get("files"), list):
        return None
    if not all((previous_site / rel).is_file() for rel in before["files"]):
        return None
    changed = {rel for rel, digest in current["pages"].items() if before["pages"].get(rel) != digest}
    return changed if len(changed) <= MAX_CHANGED_SHARE * len(current["pages"]) else None


def prepare(project_dir: Path, previous_site: Path, fresh: Path, changed: set[str]) -> None:
    """Copy the previous site into ``fresh`` and set the Markdown mtimes so mkdocs --dirty renders ``changed``.

    Only the files the previous build made are taken (and its published artifacts, which the caller brings
    up to date): anything else in the folder is left behind, as a full build would.
    """
    before = json.loads((previous_site / PAGES_FILE).read_text(encoding="utf-8"))
    artifacts = previous_site / ARTIFACTS
    kept = [Path(folder, name).relative_to(previous_site) for folder, _, names in os.walk(artifacts) for name in names]
    for rel in [*map(Path, before["files"]), *kept]:
        target = fresh / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if rel.name.endswith(_REWRITTEN) and rel.parts[0] != ARTIFACTS:
            shutil.copy2(previous_site / rel, target)  # mkdocs may write it again: never into the old site's file
        else:
            os.link(previous_site / rel, target)
    docs = project_dir / "docs"
    later = max((p.stat().st_mtime for p in fresh.rglob("*.html")), default=0.0) + 60
    for path in docs.rglob("*"):
        if path.is_file():
            stamp = later if path.relative_to(docs).as_posix() in changed else 0.0
            os.utime(path, (stamp, stamp))


def _url(rel: str) -> str:
    """A page's URL as the search index spells it (``use_directory_urls: false``)."""
    return rel.removesuffix(".md") + ".html"


def save(fresh: Path, current: dict[str, Any]) -> None:
    """Record what the site in ``fresh`` was rendered from, and the files mkdocs made (not the artifacts)."""
    files = sorted(
        Path(folder, name).relative_to(fresh).as_posix()
        for folder, _, names in os.walk(fresh)
        for name in names
        if Path(folder, name).relative_to(fresh).parts[0] not in (ARTIFACTS, PAGES_FILE)
    )
    record = {**current, "files": files}
    (fresh / PAGES_FILE).write_text(json.dumps(record, sort_keys=True, indent=1) + "\n", encoding="utf-8")


def documentation_order(docs: Path) -> list[str]:
    """The pages (``.md``, relative) in the order mkdocs builds them (``mkdocs.structure.files.get_files``)."""
    from mkdocs.structure.files import _file_sort_key  # noqa: PLC0415 - the site extra

    order = []
    for folder, dirnames, filenames in os.walk(docs):
        dirnames.sort()
        filenames.sort(key=_file_sort_key)
        rel = Path(folder).relative_to(docs)
        order += [(rel / name).as_posix() for name in filenames if name.endswith(".md")]
    return order


def parallel_build(config: Path, fresh: Path, run: Callable[[Path, Path], None], workers: int) -> None:
    """A full build made of ``workers`` dirty builds running at once, each rendering every ``workers``-th page.

    Each build gets placeholder pages (newer than their Markdown, so mkdocs skips them) for the pages of the
    others; the real pages are then gathered into ``fresh``, which gives the bytes of a single full build
    (``tests/site/test_site_incremental.py``).
    """
    docs = config.parent / "docs"
    order = documentation_order(docs)
    for rel in order:
        os.utime(docs / rel, (0.0, 0.0))
    shares = [order[i::workers] for i in range(workers)]
    folders = [fresh, *(fresh.parent / f"{fresh.name}.part{i}" for i in range(1, workers))]
    for folder, share in zip(folders, shares, strict=True):
        mine = set(share)
        for rel in order:
            if rel not in mine:
                placeholder = folder / _url(rel)
                placeholder.parent.mkdir(parents=True, exist_ok=True)
                placeholder.write_bytes(b"")
    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(lambda folder: run(config, folder), folders))
    for folder, share in zip(folders[1:], shares[1:], strict=True):
        for rel in share:
            shutil.copy2(folder / _url(rel), fresh / _url(rel))
    for folder in folders[1:]:
        shutil.rmtree(folder, ignore_errors=True)
