"""Docs site build time: generated catalogues of 1,000 and 10,000 tools, and the real corpus.

Run: ``make bench-site`` (or ``.venv/bin/python bench/bench_site.py [--sizes 1000,10000] [--no-corpus]``).
Each row: the catalogue build (``toolcat build``) and the site build split into reading and
verifying the artifacts, rendering the Markdown pages, and ``mkdocs build --strict``.
Targets (issue 16): a full 10,000-tool site in under 30 s, and under 5 s after a one-tool change (the
"one-tool change" rows: the summary of one tool edited, the catalogue rebuilt, the site built over the last).
"""

from __future__ import annotations

import argparse
import logging
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_site_src import write_corpus_tree
from gen_catalog import generate

from toolcat.build import build
from toolcat.site.render import build_site

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
TARGET_SECONDS_10K = 30.0
TARGET_EDIT_SECONDS_10K = 5.0


def _row(label: str, src: Path, work: Path) -> tuple[str, int, int, float, float, float, float, float, int]:
    started = time.perf_counter()
    build(src, work / "build")
    catalogue_seconds = time.perf_counter() - started
    result = build_site(work / "build")
    total = result.seconds_read + result.seconds_render + result.seconds_mkdocs
    size = sum(p.stat().st_size for p in result.out.rglob("*") if p.is_file())
    return (
        label,
        result.tools,
        result.pages,
        catalogue_seconds,
        result.seconds_read,
        result.seconds_render,
        result.seconds_mkdocs,
        total,
        size,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sizes", default="1000,10000", help="comma-separated generated catalogue sizes")
    parser.add_argument("--no-corpus", action="store_true", help="skip the real-corpus row")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)  # the corpus skills' size warnings are not this table's subject
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-site-") as tmp:
        for n in [int(s) for s in args.sizes.split(",") if s]:
            work = Path(tmp) / f"gen{n}"
            generate(work / "src", n)
            rows.append(_row(f"generated {n:,}", work / "src", work))
            edited = min(p for p in (work / "src").rglob("*.yaml") if p.name != "_node.yaml")
            edited.write_text(edited.read_text().replace("summary: ", "summary: Edited. ", 1))
            rows.append(_row(f"generated {n:,}, one-tool change", work / "src", work))
        if not args.no_corpus and CORPUS.is_dir():
            work = Path(tmp) / "corpus"
            tree = write_corpus_tree(CORPUS, work / "src")
            rows.append(_row(f"corpus ({tree.skills} skills)", work / "src", work))
            print(
                f"corpus: {tree.tools} GitHub MCP tools, {tree.skills} skills; skipped {len(tree.skipped_invalid)} "
                f"that toolcat rejects and {len(tree.skipped_duplicate)} duplicate names"
            )
        elif not args.no_corpus:
            print(f"corpus row skipped: {CORPUS} is absent")
    header = (
        "catalogue",
        "tools",
        "pages",
        "toolcat build s",
        "read+verify s",
        "render s",
        "mkdocs s",
        "site total s",
        "s per 1k tools",
        "site MB",
    )
    print(" | ".join(header))
    print(" | ".join("---" for _ in header))
    for label, tools, pages, cat_s, read_s, render_s, mk_s, total, size in rows:
        per_k = total / max(tools, 1) * 1000
        print(
            f"{label} | {tools} | {pages} | {cat_s:.1f} | {read_s:.1f} | {render_s:.1f} | {mk_s:.1f} | {total:.1f} | "
            f"{per_k:.1f} | {size / 1e6:.1f}"
        )
    for label, target in (
        ("generated 10,000", TARGET_SECONDS_10K),
        ("generated 10,000, one-tool change", TARGET_EDIT_SECONDS_10K),
    ):
        row = next((r for r in rows if r[0] == label), None)
        if row is not None:
            verdict = "meets" if row[7] < target else "MISSES"
            print(f"{label}: site in {row[7]:.1f} s: {verdict} the {target:.0f} s target ({row[7] / target:.2f}x)")


if __name__ == "__main__":
    main()
