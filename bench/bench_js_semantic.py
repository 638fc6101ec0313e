"""Benchmark the semantic tier in TypeScript beside Python's: first query (model load) and warm find_tool cost.

The example catalogue is built as ``toolcat build`` builds it (MiniLM vectors) and its model published beside it
(``--publish-model``); both readers open it over HTTP on 127.0.0.1 (a fresh Python process and a fresh Node
process, each with one onnxruntime thread), answer the example's labelled queries once each with ``find_tool``
(the first query loads the model), and report the first query's wall time, then the median and p90 wall and CPU
milliseconds per warm query. Node runs onnxruntime-node (``js/node_modules``, ``make js``); ``--web`` runs
onnxruntime-web's WebAssembly build in Node instead. Needs js/dist (``make js``) and the default tier (``make build``).
Run: ``OMP_NUM_THREADS=1 .venv/bin/python bench/bench_js_semantic.py`` (prints a table; the CPU: ``lscpu``).

``--cold BUILD``: the cold cost instead, on a default build (e.g. a 10,000-tool one from ``bench/bench_cdn.py``),
its model published into a scratch folder beside links to the build: for each query, a fresh Python reader (empty
cache) and a fresh Node process each open the catalogue over HTTP and answer one ``find_tool``; printed per query,
both readers' requests, round trips and KB decoded (the model is not counted: it is no catalogue file), and whether
their top-5 ids agree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support import serve_folder  # noqa: E402

from toolcat.build import build  # noqa: E402
from toolcat.build.published_model import publish_build_model  # noqa: E402

JS = REPO / "js"
#: The Node side: opens the catalogue with the model, then one findTool per query, timed inside the process.
NODE_SCRIPT = """
import { Catalog } from "./dist/index.js";
let s = ""; for await (const c of process.stdin) s += c;
const { url, queries, web } = JSON.parse(s);
const model = { url: "model/model.json", ...(web ? { ort: await import("onnxruntime-web") } : {}) };
const t0 = performance.now();
const catalog = await Catalog.open(url, { model });
const rows = [];
for (const q of queries) {
  const cpu = process.cpuUsage(); const t = performance.now();
  await catalog.findTool(q, 5);
  const used = process.cpuUsage(cpu);
  rows.push([performance.now() - t, (used.user + used.system) / 1000]);
}
process.stdout.write(JSON.stringify({ open: performance.now() - t0 - rows.reduce((a, r) => a + r[0], 0), rows, tier: catalog.stats().search_tier }));
"""
#: The Python side, in its own process (a first query that loads the model, as Node's does).
PY_SCRIPT = """
import json, sys, time
from toolcat import Catalog
data = json.loads(sys.stdin.read())
t0 = time.perf_counter()
catalog = Catalog.open(data["url"])
opened = time.perf_counter() - t0
rows = []
for q in data["queries"]:
    c, t = time.process_time(), time.perf_counter()
    catalog.find_tool(q, 5)
    rows.append([(time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000])
print(json.dumps({"open": opened * 1000, "rows": rows, "tier": catalog.stats().get("search_tier")}))
"""


def _queries() -> list[str]:
    out = []
    for path in sorted((REPO / "catalog_src" / "evals").glob("*.yaml")):
        out += [str(item["query"]) for item in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]]
    return out


def _run(cmd: list[str], payload: dict[str, Any], cwd: Path) -> dict[str, Any]:
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run(cmd, input=json.dumps(payload), capture_output=True, text=True, cwd=cwd, env=env, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _row(name: str, result: dict[str, Any]) -> list[str]:
    rows = result["rows"]
    warm = rows[1:]
    wall = sorted(r[0] for r in warm)
    cpu = sorted(r[1] for r in warm)
    p90 = wall[int(0.9 * (len(wall) - 1))]
    return [
        name,
        str(result["tier"]),
        f"{rows[0][0]:.0f}",
        f"{statistics.median(wall):.1f}",
        f"{p90:.1f}",
        f"{statistics.median(cpu):.1f}",
        str(len(warm)),
    ]


#: The cold queries of ``--cold`` (requests as agents and people write them).
COLD_QUERIES = [
    "upload a report to a bucket",
    "send an email with an attachment",
    "list open issues",
    "read the contents of a text file",
    "rename a function across the codebase",
    "schedule a meeting next week",
    "convert currency amounts",
    "translate text into french",
]


def cold(node: str, build_dir: Path, queries: list[str]) -> None:
    """Per query, cold: both readers' requests, round trips and KB decoded for one find_tool (``--cold``)."""
    from toolcat import Catalog  # noqa: PLC0415 - the Python reader, side by side

    root = Path(tempfile.mkdtemp(prefix="bench-js-semantic-cold-"))
    try:
        site = root / "site"
        site.mkdir()
        for entry in build_dir.iterdir():  # the build, linked; the model published beside it
            (site / entry.name).symlink_to(entry.resolve())
        publish_build_model(build_dir, site / "model")
        head = ["query", "py requests", "py trips", "py KB", "ts requests", "ts trips", "ts KB", "same top 5"]
        table = [head]
        with serve_folder(site) as url:
            for i, query in enumerate(queries):
                catalog = Catalog.open(url, cache_dir=root / f"cache{i}")
                py_names = [m["name"] for m in catalog.find_tool(query, 5)["matches"]]
                py = catalog.stats()
                payload = {
                    "url": url,
                    "calls": [["findTool", query, 5]],
                    "options": {"model": {"url": "model/model.json"}},
                }
                got = _run([node, str(JS / "scripts" / "parity-runner.mjs")], payload, JS)
                ts, ts_names = got["stats"], [m["name"] for m in got["answers"][0]["matches"]]
                table.append(
                    [
                        query[:40],
                        *(str(s[k]) for s in (py,) for k in ("requests", "round_trips")),
                        f"{py['bytes_decoded'] / 1000:.1f}",
                        *(str(s[k]) for s in (ts,) for k in ("requests", "round_trips")),
                        f"{ts['bytes_decoded'] / 1000:.1f}",
                        "yes" if ts_names == py_names else "NO",
                    ]
                )
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for r in table:
            print("  ".join(cell.ljust(width) for cell, width in zip(r, widths, strict=True)))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    """Build, publish, serve; time both readers; print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--web", action="store_true", help="run onnxruntime-web (WebAssembly) in Node")
    parser.add_argument("--cold", type=Path, metavar="BUILD", help="cold round trips on a default build instead")
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None or not (JS / "dist" / "index.js").is_file():
        sys.exit("node and js/dist are needed: make js")
    if args.cold is not None:
        cold(node, args.cold, COLD_QUERIES)
        return
    root = Path(tempfile.mkdtemp(prefix="bench-js-semantic-"))
    try:
        os.environ.pop("TOOLCAT_EMBEDDER", None)
        build(REPO / "catalog_src", root / "build")
        publish_build_model(root / "build", root / "build" / "model")
        queries = _queries()
        with serve_folder(root / "build") as url:
            py = _run([sys.executable, "-c", PY_SCRIPT], {"url": url, "queries": queries}, REPO)
            js = _run(
                [node, "--input-type=module", "-e", NODE_SCRIPT], {"url": url, "queries": queries, "web": args.web}, JS
            )
        head = ["reader", "tier", "first query ms", "warm p50 ms", "warm p90 ms", "warm CPU p50 ms", "queries"]
        table = [head, _row("python", py), _row("node" + (" (onnxruntime-web)" if args.web else ""), js)]
        widths = [max(len(r[i]) for r in table) for i in range(len(head))]
        for r in table:
            print("  ".join(cell.ljust(width) for cell, width in zip(r, widths, strict=True)))
        print(f"warm p50 ratio node/python: {float(table[2][3]) / float(table[1][3]):.2f}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
