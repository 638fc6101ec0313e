"""Docs site build time: generated catalogues of 1,000 and 10,000 tools, and the real corpus.

Run: ``make bench-site`` (or ``.venv/bin/python bench/bench_site.py [--sizes 1000,10000] [--no-corpus]``).
Each row: the catalogue build (``toolcat build``) and the site build split into reading and
verifying the artifacts, rendering the Markdown pages, and ``mkdocs build --strict``.
The target is 10,000 tools in under 120 s for the site.
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
from toolcat.site import build_site

CORPUS = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
TARGET_SECONDS_10K = 120.0


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
    big = [r for r in rows if r[1] >= 10_000]
    if big:
        verdict = "meets" if big[0][7] < TARGET_SECONDS_10K else "MISSES"
        print(
            f"10,000-tool site in {big[0][7]:.1f} s: {verdict} the {TARGET_SECONDS_10K:.0f} s target "
            f"({big[0][7] / TARGET_SECONDS_10K:.2f}x of budget)"
        )


if __name__ == "__main__":
    main()
