#!/usr/bin/env python3
"""Summarise a unified diff (from stdin or a file) and flag mechanical red flags.

Usage:
    git diff origin/main...HEAD | python diff_stats.py
    python diff_stats.py change.diff

Prints changed lines per file (largest first) and, for added lines only, leads worth
a closer look: debug output, TODO/FIXME markers, possible secrets, skipped tests.
They are leads for the reviewer, not findings. Exit status is always 0.
"""

# ruff: noqa: T201  (a command-line tool: printing is its output)

from __future__ import annotations

import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path

FLAGS: list[tuple[str, re.Pattern[str]]] = [
    ("debug output", re.compile(r"\b(print\(|console\.log\(|fmt\.Println\(|System\.out\.print|debugger;|breakpoint\(\))")),
    ("todo marker", re.compile(r"\b(TODO|FIXME|XXX|HACK)\b")),
    ("possible secret", re.compile(r"(?i)(api[_-]?key|secret|passw(or)?d|token)\s*[:=]\s*['\"][^'\"]{8,}['\"]|AKIA[0-9A-Z]{16}|-----BEGIN [A-Z ]*PRIVATE KEY-----")),
    ("skipped test", re.compile(r"(@pytest\.mark\.skip|\bit\.skip\(|\bxit\(|\bdescribe\.skip\(|@Disabled|t\.Skip\()")),
    ("broad except", re.compile(r"except\s*(Exception)?\s*:\s*(pass)?\s*$|catch\s*\(\s*\w*\s*\)\s*\{\s*\}")),
]
LARGE_FILE_LINES = 400


def main() -> int:
    """Read the diff named on the command line (or stdin) and print the summary."""
    if len(sys.argv) > 1:
        with Path(sys.argv[1]).open(encoding="utf-8", errors="replace") as handle:
            return report(handle)
    return report(sys.stdin)


def report(stream: Iterable[str]) -> int:
    """Print per-file line counts and red-flag leads for the diff lines in ``stream``."""
    added: dict[str, int] = defaultdict(int)
    removed: dict[str, int] = defaultdict(int)
    leads: list[str] = []
    path = "?"
    new_line = 0
    for raw in stream:
        line = raw.rstrip("\n")
        if line.startswith("+++ "):
            path = line[4:].removeprefix("b/")
            continue
        if line.startswith("--- "):
            continue
        hunk = re.match(r"@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@", line)
        if hunk:
            new_line = int(hunk.group(1))
            continue
        if line.startswith("+"):
            added[path] += 1
            for label, pattern in FLAGS:
                if pattern.search(line[1:]):
                    leads.append(f"{path}:{new_line}: {label}: {line[1:].strip()[:100]}")
            new_line += 1
        elif line.startswith("-"):
            removed[path] += 1
        elif line.startswith(" "):
            new_line += 1
    files = sorted(set(added) | set(removed), key=lambda p: -(added[p] + removed[p]))
    print(f"{len(files)} files, +{sum(added.values())} -{sum(removed.values())}")
    for name in files:
        size = added[name] + removed[name]
        marker = "  <- large, review in detail" if size >= LARGE_FILE_LINES else ""
        print(f"  {added[name]:>5} + {removed[name]:>5} -  {name}{marker}")
    print(f"\n{len(leads)} leads")
    for lead in leads:
        print(f"  {lead}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
