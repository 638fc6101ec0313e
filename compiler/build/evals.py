"""``toolcat eval``'s engine: score ``SRC/evals/*.yaml`` against a build."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CatalogError, Diagnostic, Severity, SourceError

EVAL_DEPTH = 10


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The scores of one eval file."""

    file: str
    k: int
    queries: int
    recall: float
    mrr: float
    min_recall: float
    min_mrr: float
    misses: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...]

    @property
    def passed(self) -> bool:
        """True when both scores reach the file's thresholds."""
        return self.recall >= self.min_recall and self.mrr >= self.min_mrr


def _fraction(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1


#: The optional settings of an eval file and what each must be (a wrong one used to end in a traceback).
_SETTINGS = {
    "k": lambda value: isinstance(value, int) and not isinstance(value, bool) and value >= 1,
    "min_recall": _fraction,
    "min_mrr": _fraction,
}
_SETTING_TEXT = {
    "k": "'k' must be a whole number of results, at least 1",
    "min_recall": "'min_recall' must be a number from 0 to 1",
    "min_mrr": "'min_mrr' must be a number from 0 to 1",
}


def _eval_error(
    path: Path, src: Path, message: str, where: tuple[int | None, int | None], json_path: str
) -> SourceError:
    line, column = where
    diagnostic = Diagnostic(
        Severity.ERROR,
        path.relative_to(src).as_posix(),
        message,
        line=line,
        column=column,
        json_path=json_path,
        hint="An eval file is {queries: [{query: text, expect: tool id or [ids]}], k, min_recall, min_mrr}: "
        "see docs/search.md.",
        code="bad_eval",
    )
    return SourceError([diagnostic])


def load_eval(path: Path, src: Path) -> dict[str, Any]:
    """One eval file, read like every source file (size, aliases, nesting, numbers).

    Raises :class:`SourceError` with located diagnostics when the file cannot be read or has the wrong shape.
    """
    from .sources.parse import MAX_SOURCE_BYTES, parse_file  # noqa: PLC0415 - yaml only when evals run

    parsed = parse_file(path, MAX_SOURCE_BYTES, src)
    if isinstance(parsed, list):
        raise SourceError(parsed)
    data = parsed.data
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        where = "$.queries" if isinstance(data, dict) and "queries" in data else "$"
        raise _eval_error(
            path, src, "an eval file is a mapping with 'queries: [{query, expect}]'", parsed.where(where), where
        )
    for index, item in enumerate(data["queries"]):
        if not isinstance(item, dict) or not isinstance(item.get("query"), str) or not item.get("expect"):
            where = f"$.queries[{index}]"
            raise _eval_error(
                path,
                src,
                "needs 'query' (text) and 'expect' (a tool id or a list of ids)",
                parsed.where(where),
                where,
            )
    for key, valid in _SETTINGS.items():
        if key in data and not valid(data[key]):
            where = f"$.{key}"
            raise _eval_error(path, src, _SETTING_TEXT[key], parsed.where(where), where)
    return data


def run_evals(src: Path, build_dir: Path) -> list[EvalReport]:
    """Score every ``SRC/evals/*.yaml`` against the build in ``build_dir``."""
    from ..format.envelope import ReaderError  # noqa: PLC0415 - the reader, only to read the finished build
    from ..reader.catalog import Catalog  # noqa: PLC0415 - loaded on the one path that needs it

    try:
        searcher = Catalog.open(Path(build_dir)).searcher()
    except ReaderError as exc:
        raise CatalogError(f"{build_dir}: {exc.message}") from None
    reports = []
    for path in sorted((src / "evals").glob("*.y*ml")):
        data = load_eval(path, src)
        k = int(data.get("k", 5))
        hits = 0
        reciprocal = 0.0
        misses = []
        for item in data["queries"]:
            expect = (item["expect"],) if isinstance(item["expect"], str) else tuple(item["expect"])
            ranked = [p["tool_id"] for p, _, _ in searcher.rank_tools(item["query"], limit=max(k, EVAL_DEPTH))]
            rank = next((i for i, tool_id in enumerate(ranked) if tool_id in expect), None)
            if rank is not None and rank < k:
                hits += 1
            else:
                misses.append((item["query"], expect, tuple(ranked[:3])))
            if rank is not None:
                reciprocal += 1.0 / (rank + 1)
        count = len(data["queries"]) or 1
        reports.append(
            EvalReport(
                path.name,
                k,
                len(data["queries"]),
                hits / count,
                reciprocal / count,
                float(data.get("min_recall", 0.0)),
                float(data.get("min_mrr", 0.0)),
                tuple(misses),
            )
        )
    return reports
