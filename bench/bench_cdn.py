"""A cold find_tool from a CDN: round trips, requests and bytes on the wire at 10,000 and 100,000 tools.

    python bench/bench_cdn.py [--sizes 10000,100000] [--tiers default,lexical] [--queries 12] [--latency-ms 30]
                              [--partition N] [--nprobe 2,4] [--reuse] [--work DIR]
    make bench-cdn

The default build partitions the tool vectors of catalogues of more than 2,000 tools (docs/search.md, "Vectors a
CDN can serve"; ``--partition N`` sets ``$TOOLCAT_VECTOR_PARTITION``, ``off`` for whole vectors). A 100,000-tool
build takes about 20 minutes: ``--reuse`` measures a build already in ``--work`` as it is.

For each size a generated catalogue (``gen_catalog.generate``) is built as a user builds it (``default``:
``toolcat.build.build`` with no embedder named, the default search tier; ``lexical``: ``embedder="none"``), and
``build/`` is served by a local static host that gzips what it sends, as a CDN does (:class:`CdnHandler`: gzip
level 6 for clients that accept it, an ETag on ``catalog.json``, each response held ``--latency-ms`` like a CDN
edge's round trip). For every query a FRESH reader opens the URL with an empty cache
(``Catalog.open(url, cache_dir=<new folder>)``) and runs ``find_tool``. What the find_tool cost (after the open,
which reads ``catalog.json`` and the manifest; the open + find_tool total, the cost of a first answer, is shown
beside it) is counted twice:

- by the reader, through its public ``Catalog.stats()`` (:class:`toolcat.reader.fetch.SourceStats`): requests,
  round trips (the files of one concurrent fetch count once) and body bytes as they crossed the wire;
- by the host, independently: requests, body bytes sent, and the *waves* of requests (a request that arrives
  while another is being answered joins that wave; one that arrives after every earlier answer went out starts
  a new one), which with the held responses is the number of round trips a client waited for in turn.

The model load of the default tier is paid once per process, before the timed queries (a warm-up query on its own
reader); its bytes are not in the figures. Prints one table per size against the issue's targets for the find_tool
(issue 33: <= 3 round trips and <= 150 KB at 10,000 tools, <= 6 and <= 400 KB at 100,000), judged on the median and on the worst query, with
the number of queries over the target and the bytes' 90th percentile, then where the bytes went by kind of file (:data:`KINDS`: index meta, term and doc
shards, vectors meta, cluster shards, the row table's directory, groups, pages and files). Builds and their vector cache
are kept under ``$TMPDIR/toolcat-bench-cdn`` and reused when nothing changed (``--fresh`` rebuilds).
"""

from __future__ import annotations

import argparse
import os
import random
import re
import resource
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_reader import StaticHandler
from gen_catalog import DOMAINS, OBJECTS, VERBS, generate

WORK = Path(tempfile.gettempdir()) / "toolcat-bench-cdn"
#: The issue's targets: (round trips, KB on the wire) for one cold find_tool, by catalogue size.
TARGETS = {10_000: (3, 150), 100_000: (6, 400)}
#: What each tier passes to ``build(..., embedder=...)``: None is a build with nothing named (the default tier); any
#: other name in ``--tiers`` is passed as the embedder spec itself (``terms``, ``minilm-onnx-f32``, ...).
TIERS: dict[str, str | None] = {"default": None, "lexical": "none"}


@dataclass
class HostLog:
    """What the host answered: one (arrived, answered, body bytes, path) per request."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[tuple[float, float, int, str]] = field(default_factory=list)

    def take(self, at_least: int = 0, wait: float = 2.0) -> list[tuple[float, float, int, str]]:
        """The requests so far, and start afresh; first waiting (up to ``wait`` s) until ``at_least`` are logged.

        A response is logged once its body is sent, which can be after the client already has it: without the wait,
        the open's manifest was counted in the find_tool's bytes (the host's "other" files) for some queries.
        """
        deadline = time.perf_counter() + wait
        while len(self.requests) < at_least and time.perf_counter() < deadline:
            time.sleep(0.005)
        with self.lock:
            out, self.requests = self.requests, []
        return out


class CdnHandler(StaticHandler):
    """bench_reader's static host as a CDN: gzip for clients that accept it, each request logged in ``log``."""

    compress = True
    log: HostLog
    protocol_version = "HTTP/1.0"

    def served(self, arrived: float, size: int, path: str) -> None:
        """Log the request: when it arrived and was answered, its body bytes and path."""
        with self.log.lock:
            self.log.requests.append((arrived, time.perf_counter(), size, path))


@contextmanager
def cdn(folder: Path, latency: float) -> Iterator[tuple[str, HostLog]]:
    """Serve ``folder`` on 127.0.0.1 as a gzip CDN; yields (base URL, the host's log)."""
    log = HostLog()
    handler = type("Handler", (CdnHandler,), {"directory": folder.resolve(), "delay": latency, "log": log})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/", log
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def waves(requests: list[tuple[float, float, int, str]]) -> int:
    """Round trips as the host saw them: groups of requests that overlapped in time, one after the other."""
    count, end = 0, float("-inf")
    for arrived, answered, _, _ in sorted(requests):
        if arrived > end:
            count += 1
            end = answered
        else:
            end = max(end, answered)
    return count


def queries(n: int, seed: int = 1) -> list[str]:
    """``n`` requests worded as a user writes them, over the generated catalogue's verbs, objects and domains."""
    rng = random.Random(seed)
    phrases = {
        "list": "list all",
        "get": "get one",
        "create": "create a new",
        "update": "change an",
        "delete": "remove the",
        "search": "find",
        "export": "export",
        "archive": "archive old",
        "restore": "bring back a deleted",
        "share": "share a",
        "count": "how many",
        "sync": "sync",
    }
    out = ["upload a report to a bucket"]
    while len(out) < n:
        verb = rng.choice(list(VERBS))
        out.append(f"{phrases[verb]} {rng.choice(OBJECTS)}s in {rng.choice(DOMAINS)}")
    return out[:n]


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and its finished children (user + system)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def built(n: int, tier: str, work: Path, *, fresh: bool = False, reuse: bool = False) -> tuple[Path, float | None]:
    """The build of a generated ``n``-tool catalogue for ``tier`` (made or brought up to date), and its CPU seconds.

    The CPU seconds are None when the build was already up to date (kept from an earlier run), or, with ``reuse``
    (``--reuse``), when a build is there at all: it is measured as it is, not brought up to date (a 100,000-tool
    build of the same sources still compiles them all to find that out).
    """
    from toolcat.build import build  # noqa: PLC0415 - the tree under test (the side-by-side bench sets it)

    src = work / f"src{n}"
    if fresh:
        shutil.rmtree(src, ignore_errors=True)
    if not (src / "_node.yaml").is_file():
        generate(src, n)
    partition = os.environ.get("TOOLCAT_VECTOR_PARTITION", "").strip()
    out = work / f"build{n}-{tier}{f'-p{partition}' if partition else ''}"
    if fresh:
        shutil.rmtree(out, ignore_errors=True)
    if reuse and (out / "catalog.json").is_file():
        return out, None
    started = cpu_seconds()
    result = build(src, out, embedder=TIERS.get(tier, tier))
    return out, None if result.up_to_date else cpu_seconds() - started


#: What each file a find_tool fetched is, by its path in the build (the first pattern that matches): the byte
#: breakdown the bench prints per kind.
KINDS = (
    ("index meta", re.compile(r"index/meta\.")),
    ("term shards", re.compile(r"index/\w+\.(words|chars)")),
    ("doc shards", re.compile(r"index/\w+\.(docs|d\d)")),
    ("other index files", re.compile(r"index/")),
    ("vectors meta", re.compile(r"vectors/meta\.")),
    ("cluster shards", re.compile(r"vectors/tools\.(c\d|clusters\.)")),
    ("cluster pages", re.compile(r"vectors/tools\.clusterpages\.")),
    ("row directory and groups", re.compile(r"vectors/tools\.rowgroups")),
    ("row pages", re.compile(r"vectors/tools\.(rowpages|rows\.\w+/p\d)")),  # -8: a bucket's pages beside its files
    ("row files", re.compile(r"vectors/tools\.rows\.")),
    ("node vectors", re.compile(r"vectors/nodes")),
    ("other vectors", re.compile(r"vectors/")),
    ("other", re.compile(r"")),
)


def kind_of(path: str) -> str:
    """The kind of a fetched file (:data:`KINDS`) from its path."""
    path = path.lstrip("/")
    return next(name for name, pattern in KINDS if pattern.match(path))


def cold_find(url: str, query: str, log: HostLog) -> dict[str, Any]:
    """One fresh reader (empty cache): open ``url`` and find_tool ``query``; what that cost on the wire."""
    from toolcat.reader import Catalog  # noqa: PLC0415 - the tree under test

    log.take()
    with tempfile.TemporaryDirectory(prefix="toolcat-cdn-cache-") as cache:
        catalog = Catalog.open(url, cache_dir=cache)
        opened = catalog.stats()
        at_open = log.take(opened["requests"])
        searched = time.perf_counter()
        answer = catalog.find_tool(query)
        done = time.perf_counter()
        stats = catalog.stats()
    seen = log.take(stats["requests"] - opened["requests"])
    hits = answer.get("matches") or []
    return {
        "ok": answer.get("ok") is True,
        "top": [h.get("name") for h in hits[:5] if isinstance(h, dict)],
        "tier": "lexical" if str(stats.get("search_tier", "")).startswith("lexical") else stats.get("search_tier", ""),
        "requests": stats["requests"] - opened["requests"],
        "round_trips": stats["round_trips"] - opened["round_trips"],
        "bytes": stats["bytes_downloaded"] - opened["bytes_downloaded"],
        "bytes_decoded": stats["bytes_decoded"] - opened["bytes_decoded"],
        "host_requests": len(seen),
        "host_bytes": sum(size for _, _, size, _ in seen),
        "host_waves": waves(seen),
        "vector_bytes": sum(size for _, _, size, path in seen if path.startswith("vectors/")),
        "row_bytes": sum(size for _, _, size, path in seen if path.lstrip("/").startswith("vectors/tools.row")),
        "kinds": {name: sum(size for _, _, size, path in seen if kind_of(path) == name) for name, _ in KINDS},
        "kind_files": {name: sum(kind_of(path) == name for _, _, _, path in seen) for name, _ in KINDS},
        "wall_ms": (done - searched) * 1000,
        "open_round_trips": opened["round_trips"],
        "open_bytes": opened["bytes_downloaded"],
        "open_host_bytes": sum(size for _, _, size, _ in at_open),
        "total_round_trips": stats["round_trips"],
        "total_bytes": stats["bytes_downloaded"],
    }


def measure(folder: Path, texts: list[str], latency: float) -> list[dict[str, Any]]:
    """Every query of ``texts`` through a fresh reader on a gzip CDN serving ``folder``."""
    with cdn(folder, latency) as (url, log):
        cold_find(url, "warm up the model", log)  # the model loads once per process: not in the figures
        return [cold_find(url, text, log) for text in texts]


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """p50 and max of each figure over the queries."""
    out: dict[str, Any] = {"queries": len(runs), "failed": sum(not r["ok"] for r in runs), "tier": runs[0]["tier"]}
    keys = (
        "round_trips",
        "requests",
        "bytes",
        "host_requests",
        "host_bytes",
        "host_waves",
        "vector_bytes",
        "row_bytes",
    )
    for key in (*keys, "open_round_trips", "open_bytes", "total_round_trips", "total_bytes"):
        values = [r[key] for r in runs]
        out[key] = (statistics.median(values), max(values))
    out["wall_ms"] = (statistics.median(r["wall_ms"] for r in runs), max(r["wall_ms"] for r in runs))
    out["bytes_p90"] = (
        statistics.quantiles([r["bytes"] for r in runs], n=10, method="inclusive")[-1] if len(runs) > 1 else 0
    )
    out["runs"] = [(r["round_trips"], r["bytes"]) for r in runs]
    out["kinds"] = {
        name: (
            statistics.mean(r["kinds"][name] for r in runs),
            max(r["kinds"][name] for r in runs),
            statistics.mean(r["kind_files"][name] for r in runs),
        )
        for name, _ in KINDS
    }
    return out


def verdict(n: int, s: dict[str, Any]) -> str:
    """Met or missed, against the issue's target for this size: at the median and on the worst query."""
    target = TARGETS.get(n)
    if target is None:
        return ""

    def met(at: int) -> str:
        return "met" if s["round_trips"][at] <= target[0] and s["bytes"][at] / 1000 <= target[1] else "MISSED"

    over = sum(trips > target[0] or size / 1000 > target[1] for trips, size in s["runs"])
    return (
        f"p50 {met(0)}, max {met(1)}; {over} of {len(s['runs'])} queries over it (<= {target[0]} round trips,"
        f" <= {target[1]} KB; KB p90 {s['bytes_p90'] / 1000:.1f})"
    )


def row(label: str, n: int, s: dict[str, Any]) -> list[str]:
    """One table row of a summary."""

    def pair(key: str, scale: float = 1.0, digits: int = 0) -> str:
        p50, top = s[key]
        return f"{p50 / scale:.{digits}f} / {top / scale:.{digits}f}"

    return [
        label,
        pair("round_trips"),
        pair("host_waves"),
        pair("requests"),
        pair("bytes", 1000, 1),
        pair("host_bytes", 1000, 1),
        pair("vector_bytes", 1000, 1),
        pair("row_bytes", 1000, 1),
        pair("wall_ms"),
        f"{pair('total_round_trips')} rt, {pair('total_bytes', 1000, 1)} KB",
        verdict(n, s),
    ]


HEADER = [
    "tier (search tier the reader used)",
    "round trips p50 / max (reader)",
    "round trips p50 / max (host's waves)",
    "requests p50 / max",
    "KB on the wire p50 / max",
    "KB sent (host)",
    "of which vectors/ KB",
    "of which the row table KB",
    "wall ms p50 / max",
    "open + find_tool: round trips, KB (p50 / max)",
    "find_tool's target (p50, max over the queries)",
]


def print_table(title: str, rows: list[list[str]]) -> None:
    """A markdown table under a title."""
    print(f"\n{title}\n")
    print("| " + " | ".join(HEADER) + " |")
    print("|" + "---|" * len(HEADER))
    for r in rows:
        print("| " + " | ".join(r) + " |")


def print_kinds(title: str, labelled: list[tuple[str, dict[str, Any]]]) -> None:
    """Where a find_tool's bytes went: KB on the wire per kind of file (mean / max over the queries, files)."""
    print(f"\n{title}\n")
    print("| kind of file | " + " | ".join(label for label, _ in labelled) + " |")
    print("|---|" + "---|" * len(labelled))
    for name, _ in KINDS:
        cells = [s["kinds"][name] for _, s in labelled]
        if any(top for _, top, _ in cells):
            print(
                f"| {name} | "
                + " | ".join(f"{mean / 1000:.1f} / {top / 1000:.1f} ({files:.1f})" for mean, top, files in cells)
                + " |"
            )
    totals = [statistics.mean([sum(s["kinds"][n][0] for n, _ in KINDS)]) for _, s in labelled]
    print("| total (mean) | " + " | ".join(f"{t / 1000:.1f}" for t in totals) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000", help="tools in the generated catalogues")
    parser.add_argument(
        "--tiers", default="default,lexical", help="comma-separated: " + ", ".join(TIERS) + ", or an --embedder spec"
    )
    parser.add_argument("--queries", type=int, default=12, help="queries per size, each through a fresh reader")
    parser.add_argument("--latency-ms", type=float, default=30.0, help="each response held this long (a CDN edge)")
    parser.add_argument(
        "--partition",
        default=None,
        help="partition the tool vectors of builds of more than this many tools ($TOOLCAT_VECTOR_PARTITION)",
    )
    parser.add_argument(
        "--nprobe", default="", help="clusters a partitioned build's queries read, e.g. 1,2,4 (default: the meta's)"
    )
    parser.add_argument("--fresh", action="store_true", help="rebuild from scratch instead of reusing $TMPDIR builds")
    parser.add_argument(
        "--reuse",
        action="store_true",
        help="measure a build already in --work as it is, without bringing it up to date",
    )
    parser.add_argument("--work", type=Path, default=WORK, help="where the builds and their vector cache are kept")
    args = parser.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("TOOLCAT_CACHE_DIR", str(args.work / "cache"))
    if args.partition is not None:
        os.environ["TOOLCAT_VECTOR_PARTITION"] = args.partition
    texts = queries(args.queries)
    from toolcat.reader.search import semantic  # noqa: PLC0415 - the tree under test (the side-by-side bench sets it)

    for n in (int(size) for size in args.sizes.split(",") if size.strip()):
        rows, kinds = [], []
        for tier in (t for t in args.tiers.split(",") if t):
            started = time.perf_counter()
            folder, cpu = built(n, tier, args.work, fresh=args.fresh, reuse=args.reuse)
            took = time.perf_counter() - started
            made = f"built in {took:.0f}s, CPU {cpu:.0f}s" if cpu is not None else "kept from an earlier run"
            for nprobe in [int(p) for p in args.nprobe.split(",") if p.strip()] or [None]:
                semantic.NPROBE = nprobe
                s = summary(measure(folder, texts, args.latency_ms / 1000))
                failed = f", {s['failed']} FAILED" if s["failed"] else ""
                probe = "" if nprobe is None else f", nprobe {nprobe}"
                rows.append(row(f"{tier} ({s['tier'] or 'no search'}{probe}; {made}{failed})", n, s))
                kinds.append((f"{tier}{probe}", s))
            semantic.NPROBE = None
        print_table(
            f"### Cold find_tool from a gzip CDN, {n:,} tools ({len(texts)} queries, a fresh reader each, "
            f"{args.latency_ms:.0f} ms per response; find_tool after Catalog.open, then both)",
            rows,
        )
        print_kinds(
            f"Where the find_tool's bytes went, {n:,} tools: KB on the wire, mean / max over the queries (files a query)",
            kinds,
        )


if __name__ == "__main__":
    main()
