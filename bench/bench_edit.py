"""Warm one-tool edits of a big catalogue (issue 33: <= 3 s at 10,000 tools), side by side for several toolcats.

    python bench/bench_edit.py [--tools 10000 | --src DIR] [--edits 5] [--inside 2]
                               [--toolcat PATH ...] [--watch PATH ...] [--work DIR] [--alternate]

For each ``--toolcat`` (a ``toolcat`` executable; default: this checkout's, and several give a side-by-side run,
e.g. main's venv and a branch's) the sources (``--src``, else a generated catalogue of ``--tools``) are copied, built
once from nothing, then edited ``--edits`` times (the summary of the first tool of the first ``tools.yaml``, as the
lead's ``edit.py`` does) and ``--inside`` times (a tool of that file inside the partitioned k-means' sample,
``vectors.sampled``), each edit followed by ``toolcat build SRC --out OUT`` in a new process, as a user runs it: its
wall time, its CPU time (user + sys of the process and its forked worker) and the files it wrote. The vector cache is
``$TOOLCAT_CACHE_DIR`` (set it to a warm one: the first build embeds what it lacks). Every toolcat runs with
``OMP_NUM_THREADS=1``. Prints a table a row per edit and the machine's CPU and load. ``--work``: keep the copies and
builds there (else a temporary folder, removed). ``--alternate``: after the builds from nothing, make each edit with
every toolcat in turn, so a shared machine's changing load falls on each alike.

``--watch PATH`` (repeatable) adds a side run as one ``PATH build SRC --out OUT --watch`` process for all its
edits (issue 33, the watched edit): its first build is the build from nothing; each edit is timed from the moment
the edited file is written to the moment the watcher prints the rebuild's summary line (so the wall time includes
the watcher's polling and its quiet period), and its CPU is the watcher process's (user + sys, its reaped forked
workers included, from ``/proc/PID/stat``) over that time. After the last edit the watcher is stopped with SIGINT
(its exit status is checked), and the published files of every side's build are compared with the first side's.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search_scale import cpu_name  # noqa: E402
from gen_catalog import generate  # noqa: E402

from toolcat.build.contributors import vectors  # noqa: E402

SUMMARY = re.compile(r"(\d+) files written, (\d+) unchanged, (\d+) removed \((\d+) in the build\) in ([\d.]+)s")


def first_tools_file(src: Path) -> Path:
    """The file the edits change: the first ``tools.yaml`` in path order."""
    return min(src.rglob("tools.yaml"))


def edit(src: Path, index: int) -> str:
    """Append `` (edited)`` to the summary of tool ``index`` of the first tools file; its id."""
    path = first_tools_file(src)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tools"][index]["summary"] += " (edited)"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return str(data["tools"][index]["id"])


def sampled_index(src: Path, out: Path) -> int | None:
    """A tool of the first tools file inside the k-means sample of the build ``out`` (None: no sample)."""
    tools = yaml.safe_load(first_tools_file(src).read_text(encoding="utf-8"))["tools"]
    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    live = int(json.loads((out / entry["manifest"]["path"]).read_text(encoding="utf-8"))["counts"]["tools"])
    denominator = vectors.sample_denominator(live, max(1, round(live**0.5)))
    if denominator == 1:
        return None
    return next((i for i, tool in enumerate(tools) if vectors.sampled([str(tool["id"])], denominator)), None)


def timed(toolcat: str, src: Path, out: Path) -> dict[str, float]:
    """``toolcat build src --out out`` in a new process: wall s, CPU s, files written, and the build's own seconds."""
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [toolcat, "build", str(src), "--out", str(out)], capture_output=True, text=True, env=env, check=False
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{toolcat} build failed:\n{done.stderr[-2000:]}")
    found = SUMMARY.search(done.stdout + done.stderr)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {
        "wall": wall,
        "cpu": cpu,
        "written": float(found.group(1)) if found else -1,
        "seconds": float(found.group(5)) if found else -1,
    }


class Watched:
    """A ``toolcat build --watch`` process and the lines it prints (stdout: one summary a build)."""

    TICKS = os.sysconf("SC_CLK_TCK")

    def __init__(self, toolcat: str, src: Path, out: Path) -> None:
        env = {**os.environ, "OMP_NUM_THREADS": "1"}
        self.process = subprocess.Popen(
            [toolcat, "build", str(src), "--out", str(out), "--watch"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        self.errors: list[str] = []
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines), daemon=True).start()
        threading.Thread(target=self._read_errors, daemon=True).start()

    @staticmethod
    def _read(stream: object, into: queue.Queue[tuple[float, str]]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.put((time.perf_counter(), line))

    def _read_errors(self) -> None:
        for line in self.process.stderr:  # type: ignore[union-attr]
            self.errors.append(line)

    def cpu(self) -> float:
        """The watcher's CPU seconds so far: its own and its reaped children's (the build's forked workers)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / self.TICKS

    def summary(self, timeout: float = 600) -> tuple[float, str]:
        """The next build's summary line and when it was printed; exits the bench when the build failed."""
        at, line = self.lines.get(timeout=timeout)
        if not SUMMARY.search(line) and not line.startswith("up to date"):
            raise SystemExit(f"the watched build did not succeed: {line}\n{''.join(self.errors[-40:])}")
        return at, line

    def stop(self) -> int:
        """Stop the watcher as Ctrl-C does; its exit status."""
        self.process.send_signal(signal.SIGINT)
        return self.process.wait(timeout=600)


def watched_row(watcher: Watched, src: Path, number: int, plan: list[tuple[str, int]]) -> list[str]:
    """Make edit ``number`` in the watched side's sources; time it until the watcher's summary line."""
    where, index = plan[number - 1]
    before = watcher.cpu()
    tool = edit(src, index)
    written = time.perf_counter()
    at, line = watcher.summary()
    time.sleep(0.05)  # the forked worker is reaped by the end of the build; its CPU is counted by now
    found = SUMMARY.search(line)
    return [
        "watch",
        f"edit {number}: {tool} ({where})",
        f"{at - written:.2f}",
        f"{watcher.cpu() - before:.2f}",
        found.group(5) if found else "",
        found.group(1) if found else "0",
    ]


def published(out: Path) -> dict[str, bytes]:
    """The files of a build but its private ones (``.toolcat-*``), by relative path."""
    return {
        path.relative_to(out).as_posix(): path.read_bytes()
        for path in out.rglob("*")
        if path.is_file() and not path.name.startswith(".toolcat-")
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tools", type=int, default=10_000, help="generated tools, without --src")
    parser.add_argument("--src", type=Path, default=None, help="the sources to copy and edit")
    parser.add_argument("--edits", type=int, default=5, help="edits of a tool outside the k-means sample")
    parser.add_argument("--inside", type=int, default=2, help="edits of a tool inside the sample")
    parser.add_argument("--toolcat", action="append", default=None, help="a toolcat executable (repeat to compare)")
    parser.add_argument(
        "--watch", action="append", default=[], help="a toolcat run as one `build --watch` process (repeatable)"
    )
    parser.add_argument("--work", type=Path, default=None, help="where the copies and builds go (kept)")
    parser.add_argument(
        "--alternate",
        action="store_true",
        help="edit by edit, each toolcat in turn (else one toolcat's edits after another's)",
    )
    args = parser.parse_args()
    toolcats = args.toolcat or ([] if args.watch else [str(Path(sys.executable).with_name("toolcat"))])
    if args.work is not None:
        run(args, toolcats, args.work)
        return
    with tempfile.TemporaryDirectory(prefix="bench-edit-") as work:
        run(args, toolcats, Path(work))


def run(args: argparse.Namespace, toolcats: list[str], work: Path) -> None:
    """Build and edit with each toolcat (one-shot, then watched) in ``work``, then print the table."""
    source = args.src
    if source is None:
        source = work / f"generated{args.tools}"
        if not source.is_dir():
            generate(source, args.tools)
    sides = [(toolcat, False) for toolcat in toolcats] + [(toolcat, True) for toolcat in args.watch]
    rows: dict[int, list[list[str]]] = {side: [] for side in range(len(sides))}
    plans: dict[int, list[tuple[str, int]]] = {}
    watchers: dict[int, Watched] = {}
    for side, (toolcat, watched) in enumerate(sides):
        src, out = work / f"src-{side}", work / f"out-{side}"
        shutil.rmtree(src, ignore_errors=True)
        shutil.rmtree(out, ignore_errors=True)
        shutil.copytree(source, src)
        if watched:
            started = time.perf_counter()
            watchers[side] = Watched(toolcat, src, out)
            at, _ = watchers[side].summary()
            fresh = {"wall": at - started, "cpu": watchers[side].cpu()}
        else:
            fresh = timed(toolcat, src, out)
        inside = sampled_index(src, out)
        name = f"{toolcat} --watch" if watched else toolcat
        rows[side].append([name, "a build from nothing", f"{fresh['wall']:.2f}", f"{fresh['cpu']:.2f}", "", ""])
        plans[side] = [("outside the sample", 0)] * args.edits
        plans[side] += [("inside the sample", inside)] * (args.inside if inside is not None else 0)
        if not args.alternate:
            for number in range(1, len(plans[side]) + 1):
                rows[side].append(side_row(sides, watchers, work, side, number, plans[side]))
    if args.alternate:  # edit by edit, each toolcat in turn: a shared machine's load falls on both alike
        for number in range(1, max(len(plan) for plan in plans.values()) + 1):
            for side in range(len(sides)):
                if number <= len(plans[side]):
                    rows[side].append(side_row(sides, watchers, work, side, number, plans[side]))
    stopped = {side: watcher.stop() for side, watcher in watchers.items()}
    print(f"CPU: {cpu_name()}; load average (1 min) at the end: {os.getloadavg()[0]:.1f}; work: {work}")
    print("| toolcat | build | wall s | CPU s | the build's own s | files written |\n|---|---|---|---|---|---|")
    for side_rows in rows.values():
        for row in side_rows:
            print("| " + " | ".join(row) + " |")
    for side, status in stopped.items():
        print(f"watcher {side} ({sides[side][0]}) stopped by SIGINT: exit status {status}")
    if len(sides) > 1:
        first = published(work / "out-0")
        for side in range(1, len(sides)):
            other = published(work / f"out-{side}")
            differ = sorted(rel for rel in first.keys() | other.keys() if first.get(rel) != other.get(rel))
            print(
                f"published files of side {side} against side 0: {len(other)} files, {len(differ)} differ {differ[:5]}"
            )


def side_row(
    sides: list[tuple[str, bool]],
    watchers: dict[int, Watched],
    work: Path,
    side: int,
    number: int,
    plan: list[tuple[str, int]],
) -> list[str]:
    """Edit ``number`` on one side: a watched side's watcher rebuilds, a one-shot side runs ``toolcat build``."""
    if side in watchers:
        return watched_row(watchers[side], work / f"src-{side}", number, plan)
    return edit_row(sides[side][0], work, side, number, plan)


def edit_row(toolcat: str, work: Path, side: int, number: int, plan: list[tuple[str, int]]) -> list[str]:
    """Make edit ``number`` of ``plan`` in side ``side``'s sources, build, and the table's row for it."""
    src, out = work / f"src-{side}", work / f"out-{side}"
    where, index = plan[number - 1]
    tool = edit(src, index)
    got = timed(toolcat, src, out)
    return [
        toolcat,
        f"edit {number}: {tool} ({where})",
        f"{got['wall']:.2f}",
        f"{got['cpu']:.2f}",
        f"{got['seconds']:.2f}",
        f"{int(got['written'])}",
    ]


if __name__ == "__main__":
    main()
