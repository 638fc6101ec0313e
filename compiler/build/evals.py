"""``toolcat eval``'s engine: score ``SRC/evals/*.yaml`` against a build."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import CatalogError

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


def _load_eval(path: Path, src: Path) -> dict[str, Any]:
    """One eval file, read with the same limits as every source file (size, aliases, nesting, numbers)."""
    from .sources.limits import SourceParseError  # noqa: PLC0415 - yaml only when evals run
    from .sources.parse import MAX_SOURCE_BYTES, DuplicateKeyError, SourceFileError, parse_text, read_source  # noqa: PLC0415

    try:
        data = parse_text(read_source(path, MAX_SOURCE_BYTES, src).decode("utf-8"), is_json=False).data
    except SourceFileError as exc:
        raise CatalogError(f"{path}: {exc.message}. {exc.hint}") from None
    except SourceParseError as exc:
        where = f"{path}:{exc.line}:{exc.column}" if exc.line else str(path)
        raise CatalogError(f"{where}: {exc.message}. {exc.hint}") from None
    except DuplicateKeyError as exc:
        line = exc.places[0][1] if exc.places else 0
        raise CatalogError(f"{path}:{line}: a mapping names the same key twice") from None
    except UnicodeDecodeError as exc:
        raise CatalogError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not isinstance(data, dict) or not isinstance(data.get("queries"), list):
        raise CatalogError(
            f"{path}: an eval file is a mapping with 'queries: [{{query, expect}}]' (and k, min_recall, min_mrr)"
        )
    for index, item in enumerate(data["queries"]):
        if not isinstance(item, dict) or not isinstance(item.get("query"), str) or not item.get("expect"):
            raise CatalogError(
                f"{path}: $.queries[{index}] needs 'query' (text) and 'expect' (a tool id or a list of ids)"
            )
    return data


def run_evals(src: Path, build_dir: Path) -> list[EvalReport]:
    """Score every ``SRC/evals/*.yaml`` against the build in ``build_dir``."""
    from ..format.envelope import ReaderError  # noqa: PLC0415 - the reader, only to read the finished build
    from ..reader.catalog import Catalog  # noqa: PLC0415

    try:
        searcher = Catalog.open(Path(build_dir)).searcher()
    except ReaderError as exc:
        raise CatalogError(f"{build_dir}: {exc.message}") from None
    reports = []
    for path in sorted((src / "evals").glob("*.y*ml")):
        data = _load_eval(path, src)
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
