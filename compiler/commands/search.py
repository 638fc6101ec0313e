"""``toolcat search``, ``toolcat eval`` and ``toolcat lint``: query a build, score labelled queries, find confusable tools."""

from __future__ import annotations

import json
import logging
import math
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import click

from ..errors import CatalogError

log = logging.getLogger(__name__)

EVAL_DEPTH = 10
LINT_THRESHOLD = 0.8


def open_searcher(location: Path | str, cache_dir: str | None = None) -> Any:
    """The :class:`~toolcat.reader.search.Searcher` of a build folder or URL, read by the reader (hash-checked)."""
    from ..reader import Catalog, ReaderError  # noqa: PLC0415 - keeps --help fast

    try:
        return Catalog.open(location if isinstance(location, str) else Path(location), cache_dir=cache_dir).searcher()
    except ReaderError as exc:
        _fail_envelope(exc.envelope())


def _fail_envelope(result: dict[str, Any]) -> NoReturn:
    error = result["error"]
    lines = [f"{error['code']}: {error['message']}", *[f"  hint: {h}" for h in error["hints"]]]
    if error.get("next_action"):
        lines.append(f"  next: {json.dumps(error['next_action'])}")
    raise CatalogError("\n".join(lines))


@click.command()
@click.argument("query")
@click.option("--in", "category", default="", help="Search only under this category path (a/b or a.b).")
@click.option(
    "--build",
    "build_dir",
    default="build",
    type=click.Path(path_type=Path),
    show_default=True,
    help="The build folder to search.",
)
@click.option("--url", default=None, help="Search a published build at this http(s) base URL instead.")
@click.option("--cache-dir", default=None, help="Cache folder for --url (default $TOOLCAT_CACHE or ~/.cache/toolcat).")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 50), help="How many results.")
@click.option("--json", "as_json", is_flag=True, help="Print the result (pointers + confidence) as JSON.")
def search(
    query: str, category: str, build_dir: Path, url: str | None, cache_dir: str | None, limit: int, as_json: bool
) -> None:
    """Rank the tools of a build for QUERY and print their pointers."""
    result = open_searcher(url or build_dir, cache_dir).search_tool_by_category(query, category, limit=limit)
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        if result.get("ok") is False:
            raise SystemExit(1)
        return
    if result.get("ok") is False:
        _fail_envelope(result)
    for rank, item in enumerate(result["results"], start=1):
        click.echo(
            f"{rank:>2}. {item['confidence']:.3f}  {item['tool_id']:<32} {'/'.join(item['path']):<24} {item['summary']}"
        )


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
    from ..parse import (  # noqa: PLC0415 - build extra
        MAX_SOURCE_BYTES,
        DuplicateKeyError,
        SourceFileError,
        SourceParseError,
        parse_text,
        read_source,
    )

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
    searcher = open_searcher(build_dir)
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


@click.command("eval")
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--build",
    "build_dir",
    default=None,
    type=click.Path(path_type=Path),
    help="Score this build (default: build SRC into a temporary folder first).",
)
@click.option("-v", "--verbose", is_flag=True, help="List every missed query.")
def eval_command(src: Path, build_dir: Path | None, verbose: bool) -> None:
    """Run the labelled queries in SRC/evals/*.yaml; exit 1 when recall@k or MRR is under the file's threshold."""
    if not sorted((src / "evals").glob("*.y*ml")):
        raise CatalogError(
            f"{src / 'evals'}: no eval files; add e.g. evals/search.yaml with k, min_recall, min_mrr, queries"
        )
    with tempfile.TemporaryDirectory(prefix="toolcat-eval-") as tmp:
        if build_dir is None:
            from ..build import build  # noqa: PLC0415 - heavy

            build_dir = Path(tmp) / "build"
            build(src, build_dir)
        reports = run_evals(src, build_dir)
    failed = False
    for report in reports:
        verdict = "ok" if report.passed else "FAIL"
        click.echo(
            f"{verdict:<4} {report.file}: {report.queries} queries, recall@{report.k} {report.recall:.3f} "
            f"(min {report.min_recall:.2f}), MRR@{max(report.k, EVAL_DEPTH)} {report.mrr:.3f} (min {report.min_mrr:.2f})"
        )
        if verbose or not report.passed:
            for query, expect, got in report.misses:
                click.echo(f"     miss: {query!r} expected {', '.join(expect)}; top: {', '.join(got) or '-'}")
        failed = failed or not report.passed
    if failed:
        raise SystemExit(1)


def confusable_pairs(src: Path, threshold: float = LINT_THRESHOLD) -> list[tuple[str, str, float]]:
    """Tool pairs whose index vectors (the combined word + character score) are at least ``threshold`` alike."""
    from ..build import compile_catalog  # noqa: PLC0415 - heavy
    from ..index import SPACE_WEIGHTS, tool_order, tool_text  # noqa: PLC0415
    from ..reader.search import ANALYZERS  # noqa: PLC0415

    catalog, _ = compile_catalog(src)
    order = tool_order(catalog)
    if len(order) < 2:
        return []
    from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415

    texts = [tool_text(t, catalog) for t in order]
    combined = None
    for name, weight in SPACE_WEIGHTS.items():
        matrix = TfidfVectorizer(analyzer=ANALYZERS[name], sublinear_tf=True).fit_transform(texts)
        sims = (matrix @ matrix.T) * weight
        combined = sims if combined is None else combined + sims
    assert combined is not None  # noqa: S101 - SPACE_WEIGHTS is not empty
    coo = combined.tocoo()
    pairs = [
        (order[i].id, order[j].id, float(v))
        for i, j, v in zip(coo.row, coo.col, coo.data, strict=True)
        if i < j and v >= threshold and not math.isclose(v, 0.0)
    ]
    return sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))


@click.command()
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path, exists=True, file_okay=False))
@click.option(
    "--threshold",
    default=LINT_THRESHOLD,
    show_default=True,
    type=click.FloatRange(0.0, 1.0),
    help="Report pairs at least this similar.",
)
@click.option("--strict", is_flag=True, help="Exit 1 when any confusable pair is found.")
def lint(src: Path, threshold: float, strict: bool) -> None:
    """Warn about confusable tools: pairs whose texts are so alike that search cannot tell them apart."""
    pairs = confusable_pairs(src, threshold)
    for left, right, similarity in pairs:
        click.echo(
            f"warning: {left} and {right} are confusable (similarity {similarity:.3f}); "
            "make their summaries say how they differ"
        )
    click.echo(f"{len(pairs)} confusable pair(s) at similarity >= {threshold:.2f}")
    if strict and pairs:
        raise SystemExit(1)


COMMANDS: list[click.Command] = [search, eval_command, lint]
