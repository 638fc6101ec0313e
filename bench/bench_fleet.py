"""Throughput and latency of `toolcat serve` behind HAProxy: 1 replica and 3 replicas sharing Redis, side by side.

Needs Debian's redis-server and haproxy (`make fleet`). Each run: CLIENTS threads call tool_exec
(util.math.eval on the example catalogue) through the balancer for SECONDS; a failed call is any
transport failure or an answer that is not ok. Prints one row per fleet size.

    make bench-fleet                         # 200 clients x 30 s
    FLEET_CLIENTS=50 FLEET_SECONDS=10 make bench-fleet
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "mcp"))

from fleet_support import MISSING, SKIP_REASON, Replica, haproxy, load_run, redis_server

from toolcat.build import build

REPO = Path(__file__).resolve().parent.parent
CLIENTS = int(os.environ.get("FLEET_CLIENTS", "200"))
SECONDS = float(os.environ.get("FLEET_SECONDS", "30"))


def run(build_dir: Path, replicas: int, folder: Path) -> dict[str, object]:
    with redis_server() as redis, contextlib.ExitStack() as stack:
        pool = [Replica(build_dir, redis.url) for _ in range(replicas)]
        for replica in pool:
            stack.callback(replica.stop)
        for replica in pool:
            replica.wait()
        urls = stack.enter_context(haproxy({"gateway": pool}, folder))
        load_run(urls["gateway"], clients=4, seconds=1)  # warm up every replica
        return load_run(urls["gateway"], clients=CLIENTS, seconds=SECONDS)


def main() -> None:
    if MISSING:
        print(f"skipped: {SKIP_REASON}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        build_dir = folder / "build"
        build(REPO / "catalog_src", build_dir)
        print(f"{CLIENTS} clients x {SECONDS:g} s through HAProxy (roundrobin), state in Redis, {os.cpu_count()} cores")
        print(f"{'replicas':>8} {'calls':>8} {'failed':>7} {'calls/s':>8} {'p50 ms':>8} {'p95 ms':>8}")
        for replicas in (1, 3):
            r = run(build_dir, replicas, folder)
            failures = r["failures"]
            assert isinstance(failures, list)
            print(
                f"{replicas:>8} {r['calls']:>8} {len(failures):>7} {r['throughput']:>8.0f} "
                f"{r['p50_ms']:>8.1f} {r['p95_ms']:>8.1f}"
            )
            kinds = Counter(str(f)[:90] for f in failures)
            for kind, count in kinds.most_common(3):
                print(f"{'':>8} {count} x {kind}")


if __name__ == "__main__":
    main()
