#!/usr/bin/env python3
"""Group commit subjects by Conventional Commits type for release notes.

Usage:
    python group_commits.py commits.txt      # lines: "<sha> <subject>"
    git log --format='%h %s' v1.0.0..v1.1.0 | python group_commits.py

Prints Markdown sections (Breaking, Features, Fixes, Performance, Other), one entry
per commit with its short sha. Refactors, tests, CI, chores, docs and reverted pairs
are counted but not listed, since they rarely belong in user-facing notes.
"""

# ruff: noqa: T201  (a command-line tool: printing is its output)

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

CONVENTIONAL = re.compile(r"^(?P<type>[a-z]+)(?:\((?P<scope>[^)]+)\))?(?P<bang>!)?: (?P<text>.+)$")
TASK_ID = re.compile(r"\b[A-Z][A-Z0-9]*-\d+\b")
REVERT = re.compile(r'^Revert "(?P<subject>.+)"$')
SECTIONS = {"breaking": "Breaking changes", "feat": "Features", "fix": "Fixes", "perf": "Performance"}
HIDDEN = {"refactor", "test", "tests", "ci", "build", "chore", "docs", "style"}
KEYWORDS = [("fix", re.compile(r"(?i)\b(fix|fixes|fixed|bug|crash|error)\b")),
            ("feat", re.compile(r"(?i)\b(add|adds|added|support|introduce|new)\b"))]


def classify(subject: str) -> tuple[str, str]:
    """Return (type, entry text) for a commit subject; breaking changes get type "breaking"."""
    match = CONVENTIONAL.match(subject)
    if match:
        kind = match["type"]
        text = match["text"]
        if match["scope"]:
            text = f"{match['scope']}: {text}"
        if match["bang"] or "BREAKING CHANGE" in subject:
            return "breaking", text
        return kind, text
    for kind, pattern in KEYWORDS:
        if pattern.search(subject):
            return kind, subject
    return "other", subject


def main() -> int:
    """Read "<sha> <subject>" lines from the file named on the command line, or stdin."""
    if len(sys.argv) > 1:
        lines = Path(sys.argv[1]).read_text(encoding="utf-8").splitlines()
    else:
        lines = sys.stdin.read().splitlines()
    commits = [line.strip().split(" ", 1) for line in lines if line.strip()]
    subjects = [(parts[0], parts[1] if len(parts) > 1 else "") for parts in commits]
    reverted = {m["subject"] for _, s in subjects if (m := REVERT.match(s))}
    groups: dict[str, list[str]] = defaultdict(list)
    hidden = 0
    for sha, subject in subjects:
        if subject in reverted or REVERT.match(subject):
            hidden += 1
            continue
        kind, text = classify(subject)
        if kind in HIDDEN:
            hidden += 1
            continue
        tasks = sorted(t for t in set(TASK_ID.findall(subject)) if t not in text)
        suffix = f" ({', '.join(tasks)})" if tasks else ""
        groups[kind if kind in SECTIONS else "other"].append(f"- {text}{suffix} `{sha}`")
    for kind, title in [*SECTIONS.items(), ("other", "Other (classify or drop)")]:
        if groups.get(kind):
            print(f"## {title}\n")
            print("\n".join(groups[kind]))
            print()
    print(f"<!-- {len(subjects)} commits, {hidden} not listed (internal or reverted) -->")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
