"""The sandbox that confines every path of the example handlers, and the small helpers several of them share.

The ``file.*`` and ``refactor.*`` handlers touch only a sandbox directory the host names: the
``sandbox`` option of the reader (``Catalog.open(..., sandbox=DIR)``, ``toolcat serve --sandbox
DIR``), else the environment variable ``TOOLCAT_SANDBOX``. Without one they refuse
(NOT_AUTHORIZED); they never fall back to the working directory, which an MCP client may have set
to ``/``. Every path is resolved (symlinks included) and rejected if it lands outside that root
(:func:`resolve_in_sandbox`), and so is a path whose name alone, before symlinks, leaves it
(:func:`name_in_sandbox`).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..format import settings

#: A handler's arguments and its result: a JSON object.
JSONDict = dict[str, Any]

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

#: A lowercase word, for term counting (task search, salient summaries).
WORD = re.compile(r"[a-z0-9]+")


def term_score(terms: list[str], title: str, body: str, labels: Iterable[str] = ()) -> float:
    """How well a record matches query ``terms``: 3 per hit in its title, 2 per term among its labels, 1 per body hit."""
    in_title = Counter(WORD.findall(title.lower()))
    in_body = Counter(WORD.findall(body.lower()))
    tags = {label.lower() for label in labels}
    return sum(3.0 * in_title[term] + 2.0 * (term in tags) + 1.0 * in_body[term] for term in terms)


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of ``text``, as a set (for keyword tables)."""
    return frozenset(text.split())


def sandbox_root() -> Path:
    """The directory every ``file.*`` path is confined to: the reader's ``sandbox`` option, else ``$TOOLCAT_SANDBOX``.

    Without either, NOT_AUTHORIZED: the working directory is never used (an MCP client may start
    the server in ``/``).
    """
    from ..format.envelope import ReaderError  # noqa: PLC0415 - the reader is stdlib-only and light
    from ..reader.execution.policy import current_sandbox  # noqa: PLC0415 - the example handlers load the reader's pieces only when a handler runs

    raw = current_sandbox() or settings.get(SANDBOX_ENV)
    if not raw:
        raise ReaderError(
            "NOT_AUTHORIZED",
            "the file.* tools have no sandbox folder on this host, so they touch no file",
            hints=[
                (
                    f"The host names the folder these tools may use: set {SANDBOX_ENV}=/path/to/folder, or open the "
                    "catalogue with Catalog.open(..., sandbox='/path/to/folder') (toolcat serve/exec --sandbox DIR)."
                ),
                "Tell the user file access is not set up; do not retry.",
            ],
        )
    return Path(raw).resolve()


def resolve_in_sandbox(path: str, root: Path) -> Path:
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


def name_in_sandbox(path: str, root: Path) -> Path:
    """The path as named (symlinks not followed), for lstat-style questions; refuse names that leave the root.

    ``link/../../x`` can resolve inside the root (through a symlink) while its name points outside.
    """
    named = Path(os.path.normpath(root / path))
    if named != root and root not in named.parents:
        raise PermissionError(
            f"path {path!r} names {named}, outside the sandbox root {root}; use a path inside the root"
        )
    return named


def relative(target: Path, root: Path) -> str:
    """``target`` as a POSIX path relative to ``root`` (``.`` for the root itself)."""
    rel = target.relative_to(root).as_posix()
    return rel or "."


def require_exists(target: Path, shown: str) -> None:
    """FileNotFoundError naming ``shown`` (the path as the agent wrote it) unless ``target`` exists."""
    if not target.exists():
        raise FileNotFoundError(f"no such file or directory: {shown!r}")
