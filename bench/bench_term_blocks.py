"""What splitting long postings by doc-id block would save a cold query's term bytes (a simulation, nothing built).

    python bench/bench_term_blocks.py BUILD [--splits 4096:4096,8192:8192,2048:2048] [--queries 36]

BUILD is a built catalogue folder (e.g. ``bench_cdn.py --sizes 100000``'s ``build100000-default``). For each of
``bench_cdn.queries(n)`` the lexical reader's exact top 50 is ranked, and every posting the query reads (its words,
their bundled n-grams, the n-grams of the words the index lacks) is weighed as a static host would send it:

- whole: every weight of every posting (gzipped JSON, as in a term shard);
- split ``T:S``: a posting of more than ``T`` ids keeps its ids and each block's largest weight (blocks of ``S`` doc
  ids) in the term shard, and its weights go to block files. A block is read when it holds a document whose upper
  bound (the weights known from postings of at most ``T`` ids, plus, for each split posting holding it, that block's
  largest weight times the term's query weight) reaches the 50th best lower bound (the known weights only): no other
  document can enter the top 50, so the answers are the same (rank-safe), for one more round.

Prints the weights' KB a query (mean) and the blocks a query reads (median) per split (docs/search.md, "Term bytes at
100,000 tools"). The ids and block maxima are counted at 8 bytes a block; file and request overheads are not.
"""

from __future__ import annotations

import argparse
import gzip
import heapq
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cdn import queries

from toolcat.reader.search.ranking import IndexReader

TOP = 50


def gz(values: list[float]) -> int:
    """Gzipped bytes of ``values`` as JSON."""
    return len(gzip.compress(json.dumps(values, separators=(",", ":")).encode(), 6))


def postings(reader: IndexReader, query: str) -> list[tuple[float, Any]]:
    """(query factor, posting) of every distinct posting the query's lexical score reads."""
    part = reader._part("tools")  # noqa: SLF001 - a simulation over the reader's own postings
    seen: dict[int, list[Any]] = {}
    for space in part.spaces:
        for _, weight, posting in reader._space_terms("tools", part, space, query):  # noqa: SLF001 - as above
            factor = float(space["weight"]) * weight
            if id(posting) in seen:
                seen[id(posting)][0] += factor
            else:
                seen[id(posting)] = [factor, posting]
    return [(factor, posting) for factor, posting in seen.values()]


def weigh(terms: list[tuple[float, Any]], longest: int, size: int) -> tuple[int, int, int]:
    """(bytes whole, bytes split, blocks read) of one query's postings for the split ``longest:size``."""
    whole = split = 0
    lower: dict[int, float] = {}
    blocked = []
    for factor, posting in terms:
        data = gz(posting.weights)
        whole += data
        if len(posting.ids) <= longest:
            split += data
            for doc, weight in zip(posting.ids, posting.weights, strict=True):
                lower[doc] = lower.get(doc, 0.0) + factor * weight
            continue
        maxima: dict[int, float] = {}
        for doc, weight in zip(posting.ids, posting.weights, strict=True):
            maxima[doc // size] = max(maxima.get(doc // size, 0.0), weight)
        split += 8 * len(maxima)
        blocked.append((factor, posting, maxima))
    theta = heapq.nlargest(TOP, lower.values())[-1] if len(lower) >= TOP else 0.0
    upper = dict(lower)
    for factor, posting, maxima in blocked:
        for doc in posting.ids:
            upper[doc] = upper.get(doc, 0.0) + factor * maxima[doc // size]
    reachable = {doc for doc, bound in upper.items() if bound >= theta - 1e-9}
    blocks = 0
    for _, posting, _ in blocked:
        read = {doc // size for doc in posting.ids if doc in reachable}
        blocks += len(read)
        split += gz([w for doc, w in zip(posting.ids, posting.weights, strict=True) if doc // size in read])
    return whole, split, blocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path, help="a built catalogue folder")
    parser.add_argument("--splits", default="4096:4096,8192:8192,2048:2048", help="T:S pairs (longest inline, block)")
    parser.add_argument("--queries", type=int, default=36)
    args = parser.parse_args()
    root: Path = args.build
    manifest_ref = json.loads((root / "catalog.json").read_text(encoding="utf-8"))["manifest"]
    manifest = json.loads((root / manifest_ref["path"]).read_text(encoding="utf-8"))

    def fetch(ref: dict[str, Any]) -> Any:
        return json.loads((root / ref["path"]).read_bytes())

    texts = queries(args.queries)
    per_query = []
    for text in texts:
        reader = IndexReader(manifest, fetch)
        reader._ranked("tools", text, None, TOP)  # noqa: SLF001 - the exact top 50 decodes every posting it reads
        per_query.append(postings(reader, text))
    print(f"| split T:S | weights KB a query, whole | split | blocks read a query (median) | {len(texts)} queries |")
    print("|---|---|---|---|---|")
    for pair in args.splits.split(","):
        longest, size = (int(x) for x in pair.split(":"))
        rows = [weigh(terms, longest, size) for terms in per_query]
        whole = sum(r[0] for r in rows) / len(rows) / 1024
        split = sum(r[1] for r in rows) / len(rows) / 1024
        print(f"| {longest}:{size} | {whole:.1f} | {split:.1f} | {statistics.median(r[2] for r in rows):.0f} | |")


if __name__ == "__main__":
    main()
