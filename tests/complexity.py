"""The per-function complexity ratchet: every function over ruff's limits, by file and qualified name, with its score.

ruff's C901 (cyclomatic complexity over 10) and PLR0915 (over 50 statements) are on for new code through this
ratchet: ``tests/complexity_baseline.json`` records each existing offender's score, and a function that is new
to the list, or scores worse than its entry, fails. A function that got better or went away only needs its
entry lowered (``--update`` rewrites the file from today's scores and never raises one).

    python tests/complexity.py            # check; exit 1 naming each new or worse offender (pre-commit runs this)
    python tests/complexity.py --update   # lower the baseline to today's scores (new offenders are not added)

``tests/test_structure.py::test_complexity_only_goes_down`` runs the same check in the suite.
"""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SOURCE = REPO / "compiler"
BASELINE = REPO / "tests" / "complexity_baseline.json"
#: ruff's rules the ratchet holds, and the limits they use (pyproject's defaults: 10 and 50)
RULES = ("C901", "PLR0915")
#: No function may exceed this complexity, baseline or not (issue 37).
HARD_LIMIT = 20

Scores = dict[str, dict[str, dict[str, int]]]


def _ruff() -> Path:
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        msg = "ruff is not installed (the [dev] extra)"
        raise FileNotFoundError(msg)
    return ruff


def _qualnames(file: Path) -> dict[int, str]:
    """Each function's def line → its qualified name (``Class.method``, ``outer.inner``)."""
    names: dict[int, str] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    names[child.lineno] = name
                    for decorator in child.decorator_list:  # ruff may report a decorated def at its decorator
                        names.setdefault(decorator.lineno, name)
                visit(child, name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(file.read_text(encoding="utf-8")), "")
    return names


def measure(source: Path = SOURCE) -> Scores:
    """Today's offenders: ``{file: {qualname: {rule: score}}}`` (score = complexity, or statement count)."""
    out = subprocess.run(
        [str(_ruff()), "check", str(source), "--select", ",".join(RULES), "--output-format", "json", "--no-cache"],
        capture_output=True,
        text=True,
        check=False,
        cwd=REPO,
    ).stdout
    scores: Scores = {}
    names: dict[Path, dict[int, str]] = {}
    for item in json.loads(out):
        file = Path(item["filename"]).resolve()
        where = names.setdefault(file, _qualnames(file))
        row = item["location"]["row"]
        name = where.get(row, f"<line {row}>")
        number = re.search(r"\((\d+) > \d+\)", item["message"])
        if number is None:
            continue
        entry = scores.setdefault(file.relative_to(REPO).as_posix(), {}).setdefault(name, {})
        entry[item["code"]] = max(entry.get(item["code"], 0), int(number.group(1)))
    return scores


def problems(now: Scores, baseline: Scores) -> list[str]:
    """Each function that is a new offender, scores worse than its baseline entry, or is over :data:`HARD_LIMIT`."""
    found = []
    for file, functions in sorted(now.items()):
        for name, rules in sorted(functions.items()):
            allowed = baseline.get(file, {}).get(name)
            for rule, score in sorted(rules.items()):
                if allowed is None or rule not in allowed:
                    found.append(f"{file}: {name} is a new {rule} offender ({score}); split it by meaning")
                elif score > allowed[rule]:
                    found.append(f"{file}: {name} got worse on {rule}: {score} > {allowed[rule]} (the baseline)")
                if rule == "C901" and score > HARD_LIMIT and allowed is not None and allowed.get(rule, 0) <= HARD_LIMIT:
                    found.append(f"{file}: {name} has complexity {score}, over the hard limit {HARD_LIMIT}")
    return found


def lowered(now: Scores, baseline: Scores) -> Scores:
    """The baseline with every entry lowered to today's score and gone entries dropped (never raised, never added)."""
    out: Scores = {}
    for file, functions in baseline.items():
        for name, rules in functions.items():
            for rule, allowed in rules.items():
                score = now.get(file, {}).get(name, {}).get(rule)
                if score is not None:
                    out.setdefault(file, {}).setdefault(name, {})[rule] = min(score, allowed)
    return out


def dumps(scores: Scores) -> str:
    """The baseline file's text: sorted, one function per line, so a diff shows what moved."""
    lines = ["{"]
    files = sorted(scores)
    for i, file in enumerate(files):
        lines.append(f"  {json.dumps(file)}: {{")
        names = sorted(scores[file])
        for j, name in enumerate(names):
            comma = "," if j < len(names) - 1 else ""
            lines.append(f"    {json.dumps(name)}: {json.dumps(scores[file][name], sort_keys=True)}{comma}")
        lines.append("  }" + ("," if i < len(files) - 1 else ""))
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    """Check (or, with ``--update``, lower) the baseline; print each problem; 1 when there is one."""
    baseline: Scores = json.loads(BASELINE.read_text(encoding="utf-8"))
    now = measure()
    if "--update" in argv:
        BASELINE.write_text(dumps(lowered(now, baseline)), encoding="utf-8")
    found = problems(now, baseline)
    for line in found:
        print(line)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
