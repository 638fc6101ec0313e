"""The ``refactor.rename_symbol`` tool of the example catalogue: a whole-word rename across one language's source files.

The project root must lie inside the sandbox (see :mod:`toolcat.examples._shared`). Symlinked files
are skipped, since rewriting one could write outside the sandbox; ``dry_run`` (the default) only
previews the diff.
"""

from __future__ import annotations

import difflib
import keyword
import os
import re
from pathlib import Path

from ._shared import SKIP_DIRS, JSONDict, require_exists, resolve_in_sandbox, sandbox_root, words

__all__ = ["LANGUAGE_EXTENSIONS", "MAX_DIFF_PREVIEW", "detect_language", "refactor_rename_symbol"]

LANGUAGE_EXTENSIONS: dict[str, tuple[str, ...]] = {
    "py": (".py", ".pyi"),
    "ts": (".ts", ".tsx", ".mts", ".cts"),
    "js": (".js", ".jsx", ".mjs", ".cjs"),
    "go": (".go",),
    "java": (".java",),
}
_RESERVED: dict[str, frozenset[str]] = {
    "py": frozenset(keyword.kwlist),
    "js": words(
        "break case catch class const continue debugger default delete do else export extends finally "
        "for function if import in instanceof new return super switch this throw try typeof var void "
        "while with yield let static enum await null true false"
    ),
    "go": words(
        "break case chan const continue default defer else fallthrough for func go goto if import "
        "interface map package range return select struct switch type var"
    ),
    "java": words(
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
        found.extend(
            Path(directory) / name
            for name in sorted(filenames)
            if name.endswith(extensions) and not (Path(directory) / name).is_symlink()
        )
    return found


def _mentions(path: Path, word: re.Pattern[str]) -> bool:
    try:
        return bool(word.search(path.read_text(encoding="utf-8")))
    except (UnicodeDecodeError, OSError):
        return False


def detect_language(project: Path, symbol: str) -> str:
    """The language whose source files under ``project`` mention ``symbol`` most (000: ``language`` is optional).

    Ties go to the first language of :data:`LANGUAGE_EXTENSIONS`; a symbol no source file mentions is a LookupError.
    """
    word = re.compile(rf"(?<![\w$]){re.escape(symbol)}(?![\w$])")
    counts = {
        language: sum(1 for path in _source_files(project, extensions) if _mentions(path, word))
        for language, extensions in LANGUAGE_EXTENSIONS.items()
    }
    best = max(counts, key=lambda language: counts[language])
    if not counts[best]:
        raise LookupError(f"symbol {symbol!r} not found in any source file under {project.name!r}")
    return best


def refactor_rename_symbol(args: JSONDict) -> JSONDict:
    """``refactor.rename_symbol``: whole-word rename across one language's files (detected when not given); dry run by default."""
    root = sandbox_root()
    shown = str(args["project_root"])
    project = resolve_in_sandbox(shown, root)
    require_exists(project, shown)
    if not project.is_dir():
        raise NotADirectoryError(f"project_root {shown!r} is not a directory")
    symbol, new_name = str(args["symbol"]), str(args["new_name"])
    language = str(args["language"]) if args.get("language") else detect_language(project, symbol)
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
        "language": language,
    }
