"""Build progress that tracks the work: frames spread over a real build under a pty.

Elsewhere one line per phase, and nothing under -q.
"""

from __future__ import annotations

import io
import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import REPO

from toolcat.commands.progress import PhaseDisplay

PHASES = ("load", "check", "specs", "index", "prompts", "exports", "write")


@pytest.fixture(scope="module")
def generated_src(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3,000-tool catalogue from bench/gen_catalog.py (deterministic)."""
    sys.path.insert(0, str(REPO / "bench"))
    try:
        from gen_catalog import generate  # noqa: PLC0415 - the benchmark's generator, not a package
    finally:
        sys.path.remove(str(REPO / "bench"))
    src = tmp_path_factory.mktemp("progress") / "src"
    generate(src, 3_000)
    return src


def _build_under_pty(src: Path, out: Path) -> tuple[list[tuple[float, str]], float, int]:
    """Run `toolcat build --force` with stderr on a pty: (arrival time, frame) for each frame, duration, exit code."""
    primary, secondary = pty.openpty()
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolcat.cli", "build", str(src), "--out", str(out), "--force"],
        stdout=subprocess.DEVNULL,
        stderr=secondary,
        stdin=subprocess.DEVNULL,
    )
    os.close(secondary)
    frames: list[tuple[float, str]] = []  # (when its first character arrived, the frame's text)
    current: list[str] = []
    since = 0.0
    while True:
        ready, _, _ = select.select([primary], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(primary, 65536).decode("utf-8", errors="replace")
            except OSError:  # the child closed the pty
                chunk = ""
            if not chunk and proc.poll() is not None:
                break
            now = time.perf_counter() - started
            for piece in re.split(r"([\r\n])", chunk):
                if piece in ("\r", "\n"):
                    if "".join(current).strip():
                        frames.append((since, "".join(current)))
                    current = []
                elif piece:
                    since = since if current else now
                    current.append(piece)
        elif proc.poll() is not None:
            break
    code = proc.wait(timeout=600)
    duration = time.perf_counter() - started
    os.close(primary)
    return frames, duration, code


@pytest.mark.slow
def test_progress_frames_spread_across_the_build_under_a_pty(generated_src: Path, tmp_path: Path) -> None:
    """Under a pty the bar advances while the work runs: frames arrive over the build, not in one burst at one moment."""
    frames, duration, code = _build_under_pty(generated_src, tmp_path / "build")
    assert code == 0, frames[-5:]
    bars = [(t, f) for t, f in frames if "[" in f and "%" in f]
    seen = [phase for phase in PHASES if any(f.startswith(phase) for _, f in frames)]
    assert seen == list(PHASES), seen
    times = [t for t, _ in bars]
    span = times[-1] - times[0]
    window = 0.1 * duration
    densest = max(sum(1 for t in times if start <= t < start + window) for start in times)
    # the old bar: every frame within a few milliseconds, then silence for most of the build
    assert span >= 0.5 * duration, (span, duration)
    assert densest <= 0.6 * len(times), (densest, len(times), times)
    check_frames = [f for _, f in bars if f.startswith("check")]
    assert len(check_frames) >= 3, check_frames  # per file checked, not only start and end


@pytest.mark.slow
def test_without_a_tty_each_phase_prints_one_line_and_q_prints_none(generated_src: Path, tmp_path: Path) -> None:
    """Piped stderr gets a single line per phase with its count; -q prints no progress at all."""
    command = [
        sys.executable,
        "-m",
        "toolcat.cli",
        "build",
        str(generated_src),
        "--out",
        str(tmp_path / "b"),
        "--force",
    ]
    piped = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    lines = piped.stderr.splitlines()
    for phase in PHASES:
        mine = [line for line in lines if line.startswith(f"{phase}: ")]
        assert len(mine) == 1, (phase, lines)
    assert "\r" not in piped.stderr
    assert re.search(r"^specs: 3,000 tools", piped.stderr, re.MULTILINE)
    quiet = subprocess.run(
        [sys.executable, "-m", "toolcat.cli", "-q", *command[3:]], capture_output=True, text=True, check=True
    )
    assert not any(line.startswith(f"{p}: ") for p in PHASES for line in quiet.stderr.splitlines()), quiet.stderr
    assert "built registry_version" in quiet.stdout


def test_display_redraws_one_line_per_phase_on_a_terminal() -> None:
    """On a terminal a phase's line is redrawn in place and ended once; a phase done in a worker says so."""
    stream = io.StringIO()
    display = PhaseDisplay(stream, tty=True)
    display("check", 0, 4)
    display("check", 4, 4)
    display("prompts", 10, 10)
    text = stream.getvalue()
    assert text.count("\n") == 2
    assert "\rcheck" in text
    assert "4/4 files checked" in text
    assert "prompts: 10 tools (done beside the previous phase)" in text


def test_display_leaves_no_line_open_after_a_failure() -> None:
    """A phase that never finished (the build failed) gets its line ended on close, so the error starts a new line."""
    stream = io.StringIO()
    display = PhaseDisplay(stream, tty=True)
    display("load", 0, 3)
    display.close()
    assert stream.getvalue().endswith("\n")


@pytest.mark.slow
def test_site_prints_its_phases_with_counts(generated_src: Path, tmp_path: Path) -> None:
    """`toolcat site` of a large build prints read, render, mkdocs (convert + write per page) and publish lines."""
    out = tmp_path / "build"
    subprocess.run(
        [sys.executable, "-m", "toolcat.cli", "-q", "build", str(generated_src), "--out", str(out)],
        capture_output=True,
        check=True,
        timeout=600,
    )
    done = subprocess.run(
        [sys.executable, "-m", "toolcat.cli", "site", "--build", str(out)],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    lines = done.stderr.splitlines()
    pages = int(re.search(r"(\d+) pages", done.stdout).group(1))
    assert any(line.startswith("site read: 3,000 ") for line in lines), lines
    assert any(line.startswith(f"site render: {pages:,} pages") for line in lines), lines
    assert any(line.startswith(f"site mkdocs: {2 * pages:,} page steps") for line in lines), lines
    assert any(line.startswith("site publish: ") for line in lines), lines


def test_tool_phases_count_tools_and_skills_as_the_summary_does(tmp_path: Path) -> None:
    """The example build's specs/prompts/exports lines say '83 tools and 8 skills', the summary's figures, not 91 tools."""
    from support import EXAMPLE_SRC  # noqa: PLC0415

    command = [sys.executable, "-m", "toolcat.cli", "build", str(EXAMPLE_SRC), "--out", str(tmp_path / "b")]
    piped = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    summary = re.search(r"(\d+) tools, (\d+) skills;", piped.stdout)
    assert summary is not None, piped.stdout
    tools, skills = int(summary.group(1)), int(summary.group(2))
    assert skills > 0
    lines = {line.split(": ", 1)[0]: line for line in piped.stderr.splitlines() if ": " in line}
    for phase in ("specs", "prompts", "exports"):
        assert lines[phase].startswith(f"{phase}: {tools} tools and {skills} skills in "), lines[phase]
    assert f"{tools + skills} tools" not in piped.stderr


def test_display_without_a_split_or_with_one_kind_says_tools() -> None:
    """Without a described split, or with no skills, a tool phase's line is '<n> tools'; a mismatching count too."""
    stream = io.StringIO()
    display = PhaseDisplay(stream, tty=False)
    display("specs", 0, 5)
    display("specs", 5, 5)
    display.describe({"tools": 3000, "skills": 0})
    display("prompts", 0, 3000)
    display("prompts", 3000, 3000)
    display.describe({"tools": 4, "skills": 1})
    display("write", 0, 5)
    display("write", 5, 5)
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith("specs: 5 tools in ")
    assert lines[1].startswith("prompts: 3,000 tools in ")
    assert lines[2].startswith("write: 5 files in ")
