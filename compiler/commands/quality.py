"""``toolcat eval`` and ``toolcat lint``: how well the catalogue's search finds its tools."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from ..build.contributors.index.lint import LINT_THRESHOLD, confusable_pairs
from ..build.errors import CatalogError
from ..build.evals import EVAL_DEPTH, run_evals
from .flags import path_option


@click.command("eval")
@click.argument("src", default="catalog_src", type=click.Path(path_type=Path, exists=True, file_okay=False))
@path_option("--build", "build_dir", "Score this build (default: build SRC into a temporary folder first).")
@click.option("-v", "--verbose", is_flag=True, help="List every missed query.")
def eval_command(src: Path, build_dir: Path | None, verbose: bool) -> None:
    """Run the labelled queries in SRC/evals/*.yaml; exit 1 when recall@k or MRR is under the file's threshold."""
    if not sorted((src / "evals").glob("*.y*ml")):
        raise CatalogError(
            f"{src / 'evals'}: no eval files; add e.g. evals/search.yaml with k, min_recall, min_mrr, queries"
        )
    with tempfile.TemporaryDirectory(prefix="toolcat-eval-") as tmp:
        if build_dir is None:
            from ..build.pipeline import build  # noqa: PLC0415 - heavy

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


COMMANDS: list[click.Command] = [eval_command, lint]
