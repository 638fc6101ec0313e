"""The docs site: read a build folder's artifacts, render an mkdocs project, build it into ``build/site``.

The site is generated from the *artifacts*, never from the sources: ``catalog.json`` →
manifest → node shards (and their pages) → tool specs → skill bodies and resources, each
checked against the sha256 held by the file that pointed to it. That keeps the format
honest: whatever the site shows, any reader of the published files can show too.

Pipeline (each stage a function of the previous value; only the last writes ``out``):
``read_build(build) -> BuildData`` → ``render_project(data, project)`` (Markdown pages from
``templates/site``, ``mkdocs.yml``, static files) → ``mkdocs build --strict`` into a
temporary folder beside ``out`` → swap. A failed site build leaves the previous site as it was.

This module renders, writes, builds and swaps; reading and verifying the build is in
:mod:`.site_read`, schema tables in :mod:`.site_schema`, untrusted text → safe HTML in
:mod:`.site_text`, the pages, nav and ``mkdocs.yml`` in :mod:`.site_pages`, and the mkdocs
hooks (nh3 over each page, the Content-Security-Policy) in :mod:`.site_hooks`. Every name
is re-exported here: the generated hook file imports its ``on_*`` functions from this module.
"""

from __future__ import annotations

import contextlib
import functools
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from ..build.errors import BuildError
from ..build.progress import Reporter, listening, phase, report, reporting
from ..build.write import build_lock, exchange
from ..format import settings
from . import incremental as site_incremental
from .hooks import (
    HOOKS_FILE,
    HOOKS_SOURCE,
    PROGRESS_FILE_ENV,
)
from .pages import (
    OVERRIDES_DIR,
    _environment,
    _home_page,
    _render_all_nodes,
    _skill_page,
    mkdocs_config,
)
from .read import (
    ARTIFACTS_DIR,
    ENTRY,
    BuildData,
    read_build,
)

__all__ = [
    "SiteProject",
    "SiteResult",
    "_swap_in",
    "_write_artifacts",
    "build_site",
    "render_project",
    "run_mkdocs",
    "serve_site",
    "write_project",
]

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- rendering


@dataclass(frozen=True, slots=True)
class SiteProject:
    """A rendered mkdocs project: pages and static files relative to ``docs/``, plus the config."""

    pages: dict[str, str]
    static: dict[str, bytes]
    config: dict[str, Any]
    #: The theme's overridden templates, relative to the project's ``overrides/`` (mkdocs' ``custom_dir``).
    overrides: dict[str, bytes]


def render_project(data: BuildData) -> SiteProject:
    """Every page of the site, rendered in memory (nothing written); the pages themselves are :mod:`.site_pages`."""
    env = _environment()
    pages: dict[str, str] = {"index.md": _home_page(data, env)}
    pages.update(_render_all_nodes(data))
    skill_tools = {spec["skill"]["name"]: tool_id for tool_id, spec in data.specs.items() if spec.get("skill")}
    for name, skill in data.skills.items():
        pages[f"skills/{name}.md"] = _skill_page(skill, skill_tools[name], data, env)
    static: dict[str, bytes] = {}
    assets = resources.files("toolcat.templates").joinpath("site", "assets")
    for item in assets.iterdir():
        if item.is_file():
            static[f"assets/{item.name}"] = item.read_bytes()
    partials = resources.files("toolcat.templates").joinpath("site", "overrides", "partials")
    overrides = {
        f"partials/{item.name}": item.read_bytes() for item in partials.iterdir() if item.name.endswith(".html")
    }
    return SiteProject(pages, static, mkdocs_config(data), dict(sorted(overrides.items())))


# --------------------------------------------------------------------------- writing


def write_project(project: SiteProject, folder: Path) -> Path:
    """Write the mkdocs project (``mkdocs.yml`` + ``docs/``) into ``folder``; returns the config path."""
    docs = folder / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    for rel, text in project.pages.items():
        target = docs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for rel, data in project.static.items():
        target = docs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    theme = folder / OVERRIDES_DIR
    if theme.exists():
        shutil.rmtree(theme)
    for rel, data in project.overrides.items():
        target = theme / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    (folder / HOOKS_FILE).write_text(HOOKS_SOURCE, encoding="utf-8")
    config = folder / "mkdocs.yml"
    config.write_text(yaml.safe_dump(project.config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return config


def _write_artifacts(data: BuildData, site_dir: Path) -> None:
    """Publish the verified current version beside the pages, so the site is also a catalogue URL.

    An incremental site starts from links to the previous site's artifacts: a file already there (same
    content-hashed path and size) stays, others are written as new files (never into a linked one), and
    files of other versions are removed.
    """
    root = site_dir / ARTIFACTS_DIR
    if root.is_dir():
        for folder, _, names in os.walk(root, topdown=False):
            for name in names:
                path = Path(folder) / name
                if path.relative_to(root).as_posix() not in data.files:
                    path.unlink()
            if folder != str(root) and not any(Path(folder).iterdir()):
                Path(folder).rmdir()
    for rel, blob in data.files.items():
        target = root / rel
        if target.is_file() and target.stat().st_size == len(blob):
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.unlink(missing_ok=True)
        target.write_bytes(blob)
    entry = {
        **data.entry,
        "versions": [
            v
            for v in data.entry.get("versions", [])
            if v.get("manifest", {}).get("path") == data.entry["manifest"]["path"]
        ],
    }
    (root / ENTRY).unlink(missing_ok=True)
    (root / ENTRY).write_text(json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


#: ``python -m mkdocs`` for a dirty build: mkdocs warns that a dirty build is one (which ``--strict`` would
#: count as a failure); toolcat merges what a dirty build leaves out (:mod:`.site_incremental`), so that one
#: warning is dropped and every other one still fails the build.
_MKDOCS_DIRTY = (
    "import logging, sys\n"
    "class _Dirty(logging.Filter):\n"
    "    def filter(self, record): return \"'dirty' build\" not in record.getMessage()\n"
    "logging.getLogger('mkdocs.commands.build').addFilter(_Dirty())\n"
    "from mkdocs.__main__ import cli\n"
    "cli()\n"
)


#: From this many pages on, a full site is built by one mkdocs process per core (:mod:`.site_incremental`).
PARALLEL_MKDOCS_PAGES = 100


def run_mkdocs(config: Path, site_dir: Path, *, dirty: bool = False) -> None:
    """``mkdocs build --strict`` in a child process; any warning (a broken link) fails the build.

    ``dirty``: only the pages whose Markdown is newer than their HTML (:mod:`.site_incremental`).
    """
    command = [
        sys.executable,
        *(["-c", _MKDOCS_DIRTY] if dirty else ["-m", "mkdocs"]),
        "build",
        "--strict",
        *(["--dirty"] if dirty else []),
        "--config-file",
        str(config),
        "--site-dir",
        str(site_dir),
    ]
    # the sitemap's dates come from SOURCE_DATE_EPOCH when set: a fixed default keeps two
    # builds of the same catalogue byte-identical (CI may pass the commit time instead)
    env = {
        "SOURCE_DATE_EPOCH": "0",
        **settings.child_environ(),
        "NO_MKDOCS_2_WARNING": "1",
        "DISABLE_MKDOCS_2_WARNING": "true",
        **_MKDOCS_ENV,
    }
    # the generated hooks import toolcat.site.hooks from the same interpreter's installed toolcat
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        problems = "\n".join(
            line
            for line in (proc.stderr + proc.stdout).splitlines()
            if line.startswith(("WARNING", "ERROR", "Aborted", "Error", "Config value"))
        )
        raise BuildError(
            f"mkdocs build --strict failed for {config}:\n{problems}\nthe previous site (if any) was left as it was"
        )


@dataclass(frozen=True, slots=True)
class SiteResult:
    """What ``toolcat site`` reports."""

    out: Path
    registry_version: str
    pages: int
    tools: int
    skills: int
    files: int
    seconds_read: float
    seconds_render: float
    seconds_mkdocs: float

    def summary(self) -> str:
        """One line for the CLI."""
        total = self.seconds_read + self.seconds_render + self.seconds_mkdocs
        return (
            f"site for registry_version {self.registry_version}: {self.pages} pages, {self.tools} tools, "
            f"{self.skills} skills, {self.files} artifacts published, in {self.out} ({total:.1f}s: read "
            f"{self.seconds_read:.1f}s, render {self.seconds_render:.1f}s, mkdocs {self.seconds_mkdocs:.1f}s)"
        )


#: Extra environment of the mkdocs processes (the progress file while somebody listens).
_MKDOCS_ENV: dict[str, str] = {}
#: How often the pages mkdocs has written are counted for the progress display.
PAGE_COUNT_SECONDS = 0.5


@contextlib.contextmanager
def _counting_pages(fresh: Path, total: int) -> Iterator[None]:
    """Report ``site mkdocs`` progress in two steps per page: converted, then written.

    mkdocs runs in child processes and first converts every page, then writes them all, so its progress is
    read from the disk: the hooks append a byte to a counter file per page converted
    (:data:`toolcat.site.hooks.PROGRESS_FILE_ENV`), and a page is written once its HTML has bytes (the
    parallel build's placeholders are empty). Only while somebody listens.
    """
    if not listening():
        yield
        return
    stop = threading.Event()
    converted = fresh.parent / "converted.count"  # the hooks append a byte per page converted
    converted.write_bytes(b"")
    _MKDOCS_ENV[PROGRESS_FILE_ENV] = str(converted)

    def count() -> None:
        while not stop.wait(PAGE_COUNT_SECONDS):
            written = sum(_pages_written(folder) for folder in (fresh, *fresh.parent.glob(f"{fresh.name}.part*")))
            with contextlib.suppress(OSError):
                written += converted.stat().st_size
            report("site mkdocs", min(written, 2 * total - 1), 2 * total)

    counter = threading.Thread(target=count, name="toolcat-site-pages", daemon=True)
    counter.start()
    try:
        yield
    finally:
        stop.set()
        counter.join()
        _MKDOCS_ENV.pop(PROGRESS_FILE_ENV, None)


def _pages_written(folder: Path) -> int:
    """The HTML pages with content under ``folder`` (files may vanish while it counts: a part folder is removed)."""
    written = 0
    with contextlib.suppress(OSError):
        for page in folder.rglob("*.html"):
            with contextlib.suppress(OSError):
                written += page.stat().st_size > 0
    return written


def _run_mkdocs_for(config: Path, fresh: Path, out: Path, changed: set[str] | None, pages: int) -> None:
    """mkdocs over every page (on both cores for a large site), or over the ``changed`` ones of the site in ``out``."""
    workers = min(2, os.cpu_count() or 1)
    if changed is None and pages >= PARALLEL_MKDOCS_PAGES and workers > 1:
        site_incremental.parallel_build(config, fresh, functools.partial(run_mkdocs, dirty=True), workers)
    elif changed is None:
        run_mkdocs(config, fresh)
    else:  # only the pages whose Markdown changed go through mkdocs (docs/site.md, "Incremental builds")
        site_incremental.prepare(config.parent, out, fresh, changed)
        if changed:
            run_mkdocs(config, fresh, dirty=True)


def _swap_in(fresh: Path, out: Path, old: Path) -> None:
    """Put ``fresh`` in place of ``out`` in one step where the kernel can (the previous site ends up in ``fresh``)."""
    if out.exists() and exchange(fresh, out):
        return
    if out.exists():
        out.rename(old)
    try:
        fresh.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise


def build_site(
    build_dir: Path, out: Path | None = None, *, project_dir: Path | None = None, progress: Reporter | None = None
) -> SiteResult:
    """Read ``build_dir``, render the mkdocs project and build it into ``out`` (default ``build_dir/site``).

    The site is built in a temporary folder beside ``out`` and swapped in only when
    ``mkdocs build --strict`` succeeded, so a failure leaves the previous site untouched. ``progress`` is
    told of each phase (:mod:`toolcat.build.progress`): site read, render, mkdocs, publish. It holds the build's
    lock (:func:`toolcat.build.write.build_lock`) from the read to the swap.
    """
    # the build's own lock too (on the folder holding the build): a build of the catalogue and a site of it take
    # turns, so the site reads a whole build and a build never links a site/ folder being swapped
    held = build_lock(build_dir) if build_dir.is_dir() else contextlib.nullcontext()
    with reporting(progress), held:
        return _build_site(build_dir, out, project_dir)


def _build_site(build_dir: Path, out: Path | None, project_dir: Path | None) -> SiteResult:
    build_dir = build_dir.resolve()
    out = (out if out is not None else build_dir / "site").resolve()
    project_dir = project_dir.resolve() if project_dir is not None else None
    started = time.perf_counter()
    data = read_build(build_dir)
    read_done = time.perf_counter()
    with phase("site render", len(data.nodes) + len(data.skills)):
        project = render_project(data)
    theme = {f"{OVERRIDES_DIR}/{rel}": data for rel, data in project.overrides.items()}
    rendered = site_incremental.fingerprint(project.pages, {**project.static, **theme}, project.config)
    render_done = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    with build_lock(out):  # site builds into one folder take turns; leftovers of a killed one are removed first
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        try:
            config = write_project(project, project_dir if project_dir is not None else work / "project")
            fresh = work / "site"
            changed = site_incremental.changed_pages(rendered, out) if out.is_dir() else None
            with phase("site mkdocs", 2 * (len(project.pages) if changed is None else len(changed))):
                if changed is None:  # a full build: its pages are counted as mkdocs writes them
                    with _counting_pages(fresh, len(project.pages)):
                        _run_mkdocs_for(config, fresh, out, changed, len(project.pages))
                else:
                    _run_mkdocs_for(config, fresh, out, changed, len(project.pages))
            with phase("site publish", len(data.files)):
                _write_artifacts(data, fresh)
                site_incremental.save(fresh, rendered)
            mkdocs_done = time.perf_counter()
            _swap_in(fresh, out, work / "old")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    result = SiteResult(
        out,
        str(data.manifest.get("registry_version", "")),
        len(project.pages),
        sum(1 for s in data.specs.values() if not s.get("skill")),  # agents count with skills, as the build does
        len(data.skills),
        len(data.files),
        read_done - started,
        render_done - read_done,
        mkdocs_done - render_done,
    )
    log.info("%s", result.summary())
    return result


def serve_site(site_dir: Path, port: int, announce: Callable[[str], object] = print) -> None:
    """Serve a built site on 127.0.0.1 with the stdlib HTTP server until interrupted."""
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer  # noqa: PLC0415 - stdlib, imported on first use

    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            """Published artifacts are data: never rendered as a document of the site's origin."""
            if self.path.lstrip("/").startswith(f"{ARTIFACTS_DIR}/"):
                self.send_header("Content-Security-Policy", "sandbox; default-src 'none'")
                self.send_header("X-Content-Type-Options", "nosniff")
            super().end_headers()

    handler = functools.partial(Handler, directory=str(site_dir))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        announce(f"serving {site_dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            announce("stopped")
