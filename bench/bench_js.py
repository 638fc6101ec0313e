"""Benchmark the TypeScript reader (js/) beside the Python reader: bundle sizes, and a cold find_tool over HTTP.

Sizes: for each entry point's minified build (js/dist/min, ``js/scripts/bundle.mjs``), the bytes loaded before its
first call (the entry and the chunks it imports) and those loaded on first use (``await import``), minified and
gzip -9; and the whole (the full entry, every chunk it loads, and the adapters). The budget is the main entry's first figure.

For the example catalogue and a generated 1,000-tool catalogue (bench/gen_catalog.py; ``--size N`` for another),
served by a local gzip-capable host on 127.0.0.1 that counts the bytes it sends: each reader opens the catalogue
cold and runs one find_tool per query. Reported per reader: requests, round trips (requests waited for in turn),
KB on the wire (counted by the server, gzipped when the client asked), KB decoded, and median wall time (the
TypeScript figure is measured inside Node, without its process start). Needs js/dist (``make js``).
Run: ``.venv/bin/python bench/bench_js.py`` (``make bench-js``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))

from gen_catalog import generate  # noqa: E402

from toolcat import Catalog  # noqa: E402
from toolcat.build import build  # noqa: E402

JS = REPO / "js"
MINIFIED = JS / "dist" / "min"
BUDGET_KB = 15.0
WORK = Path(tempfile.gettempdir()) / "toolcat-bench-js"
QUERIES = [
    "read the contents of a text file",
    "rename a function across the codebase",
    "upload a report to a bucket",
    "send an email to the team",
    "schedule a meeting next week",
]
#: Runs each query cold in Node and prints [{query, ms, stats}].
NODE_SCRIPT = """
import { Catalog } from %s;
const [url, ...queries] = process.argv.slice(2);
const out = [];
for (const query of queries) {
  const started = performance.now();
  const catalog = await Catalog.open(url);
  const answer = await catalog.findTool(query, 5);
  out.push({ query, ms: performance.now() - started, stats: catalog.stats(), names: answer.matches.map((m) => m.name) });
}
console.log(JSON.stringify(out));
"""


class _GzipHost(BaseHTTPRequestHandler):
    """Serves a build folder, gzipping JSON for clients that ask, and counts the bytes it sends."""

    server: Any

    def log_message(self, *args: object) -> None:
        """Quiet."""

    def do_GET(self) -> None:
        """The file, gzipped when asked for."""
        file = self.server.root / self.path.lstrip("/").split("?", 1)[0]
        if not file.is_file():
            self.send_error(404)
            return
        data = file.read_bytes()
        self.send_response(200)
        if "gzip" in self.headers.get("Accept-Encoding", ""):
            data = gzip.compress(data, 6, mtime=0)
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        with self.server.lock:
            self.server.sent += len(data)


def _serve(root: Path) -> Any:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _GzipHost)
    server.daemon_threads = True
    server.root, server.sent, server.lock = root, 0, threading.Lock()
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _python(url: str, server: Any, queries: list[str]) -> list[dict[str, Any]]:
    out = []
    for i, query in enumerate(queries):
        cache = WORK / "cache" / f"{time.time_ns()}-{i}"
        server.sent = 0
        started = time.perf_counter()
        catalog = Catalog.open(url, cache_dir=cache)
        catalog.find_tool(query, 5)
        out.append({"ms": (time.perf_counter() - started) * 1000, "stats": catalog.stats(), "wire": server.sent})
        shutil.rmtree(cache, ignore_errors=True)
    return out


def _node(url: str, server: Any, queries: list[str]) -> list[dict[str, Any]]:
    script = WORK / "bench.mjs"
    script.write_text(NODE_SCRIPT % json.dumps((JS / "dist" / "index.js").as_uri()), encoding="utf-8")
    out = []
    for query in queries:  # one process per query, so that the server's byte count is per query
        server.sent = 0
        done = subprocess.run(["node", str(script), url, query], capture_output=True, text=True, check=True)
        row = json.loads(done.stdout)[0]
        row["wire"] = server.sent
        out.append(row)
    return out


def _gz(data: bytes) -> int:
    return len(gzip.compress(data, 9, mtime=0))


def _sizes() -> list[list[str]]:
    """The size table: per entry, then the whole package (each file once)."""
    listing = json.loads((MINIFIED / "sizes.json").read_text(encoding="utf-8"))
    rows = [["entry", "before the first call: min KB", "min+gz KB", "on first use: min KB", "min+gz KB"]]
    for name, entry in listing.items():
        cells = [name]
        for when in ("eager", "lazy"):
            data = [(MINIFIED / f).read_bytes() for f in entry[when]]
            cells += [f"{sum(len(d) for d in data) / 1024:.1f}", f"{sum(_gz(d) for d in data) / 1024:.1f}"]
        rows.append(cells)
    # everything a page can load: the full entry (the main one's code and more), its chunks, and the adapters
    files = {
        f
        for name in ("toolcat-reader-full", "toolcat-reader-adapters")
        for f in listing[name]["eager"] + listing[name]["lazy"]
    }
    whole = [(MINIFIED / f).read_bytes() for f in sorted(files)]
    rows.append(
        [
            "whole (full + chunks + adapters)",
            f"{sum(len(d) for d in whole) / 1024:.1f}",
            f"{sum(_gz(d) for d in whole) / 1024:.1f}",
            "",
            "",
        ]
    )
    return rows


def _print_table(rows: list[list[str]]) -> None:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip())


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r["stats"][key] if key in r["stats"] else r[key] for r in rows)


def main() -> None:
    """Print the size table and the side-by-side cold find_tool table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--size", type=int, default=1000, help="tools in the generated catalogue (default 1000)")
    args = parser.parse_args()
    if shutil.which("node") is None or not (MINIFIED / "sizes.json").is_file():
        sys.exit("needs node and js/dist: run `make js` first")
    WORK.mkdir(parents=True, exist_ok=True)
    print(
        f"TypeScript reader, minified ESM per entry point (js/dist/min; budget: main entry {BUDGET_KB:.0f} KB min+gz)"
    )
    _print_table(_sizes())
    print()
    catalogues = {"example": WORK / "example"}
    build(REPO / "catalog_src", catalogues["example"])
    generated = WORK / f"gen{args.size}"
    if not (generated / "catalog.json").is_file():
        build(generate(WORK / f"src{args.size}", args.size), generated)
    catalogues[f"{args.size:,} generated"] = generated
    header = [
        "catalogue",
        "reader",
        "requests",
        "round trips",
        "KB on the wire (gzip)",
        "KB decoded",
        "median ms",
        "same answers",
    ]
    rows = [header]
    for label, folder in catalogues.items():
        server = _serve(folder)
        url = f"http://127.0.0.1:{server.server_address[1]}/"
        queries = QUERIES if label == "example" else [" ".join(q.split()[:3]) for q in QUERIES]
        py = _python(url, server, queries)
        js = _node(url, server, queries)
        names = [
            [m["name"] for m in Catalog.open(url, cache_dir=WORK / "cache" / "x").find_tool(q, 5)["matches"]]
            for q in queries
        ]
        same = sum(n == r["names"] for n, r in zip(names, js, strict=True))
        for reader, result in (("Python", py), ("TypeScript", js)):
            rows.append(
                [
                    label,
                    reader,
                    f"{_median(result, 'requests'):.0f}",
                    f"{_median(result, 'round_trips'):.0f}",
                    f"{statistics.median(r['wire'] for r in result) / 1024:.1f}",
                    f"{_median(result, 'bytes_decoded') / 1024:.1f}",
                    f"{statistics.median(r['ms'] for r in result):.1f}",
                    f"{same}/{len(queries)}" if reader == "TypeScript" else "",
                ]
            )
        server.shutdown()
        server.server_close()
    print(f"cold open + find_tool over HTTP (medians over {len(QUERIES)} queries; gzip host on 127.0.0.1)")
    _print_table(rows)


if __name__ == "__main__":
    main()
