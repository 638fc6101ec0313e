"""Prompts and exports in a forked worker beside the index (issue 16): the same bytes as in turn, counts kept."""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest

from toolcat.build import build, tokens
from toolcat.build import parallel as side
from toolcat.build.contributors import prompts
from toolcat.build.memo import memo_file


def _files(root: Path) -> dict[Path, bytes]:
    return {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file()}


class Pids:
    """The pids the prompt contributor ran in, noted in a file (a forked worker's appends would stay there)."""

    def __init__(self, file: Path) -> None:
        self.file = file

    def __call__(self) -> list[int]:
        """The pids noted so far."""
        return [int(line) for line in self.file.read_text().split()] if self.file.is_file() else []

    def clear(self) -> None:
        """Forget them."""
        self.file.unlink(missing_ok=True)


@pytest.fixture
def forking(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Pids:
    """The side worker on for the example catalogue; notes the pid the prompt contributor ran in."""
    monkeypatch.setattr(side, "SIDE_FROM_TOOLS", 1)
    monkeypatch.setattr(threading, "active_count", lambda: 1)  # other tests' servers may still run
    monkeypatch.setattr(side.os, "cpu_count", lambda: 2)
    pids = Pids(tmp_path / "pids.txt")
    real = prompts.contribute

    def noting(*args: Any) -> None:
        with pids.file.open("a") as handle:
            handle.write(f"{os.getpid()}\n")
        real(*args)

    monkeypatch.setattr(prompts, "contribute", noting)
    return pids


def test_a_build_with_the_side_worker_writes_the_bytes_of_one_without(
    tmp_path: Path, example_src_copy: Path, forking: Pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Full build and one-tool rebuild: every file (memo and token counts included) equals the in-turn build's."""
    build(example_src_copy, tmp_path / "beside")
    assert forking(), "the prompt contributor did not run"
    assert os.getpid() not in forking(), "the side contributors ran in this process"
    with monkeypatch.context() as serial:
        serial.setenv("TOOLCAT_BUILD_WORKERS", "1")
        build(example_src_copy, tmp_path / "in-turn")
    assert _files(tmp_path / "beside") == _files(tmp_path / "in-turn")
    assert (tmp_path / "beside" / memo_file("export.openai")).is_file()
    assert (tmp_path / "beside" / tokens.CACHE_FILE).stat().st_size > 1000, "the worker's counts came back"

    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    forking.clear()
    build(example_src_copy, tmp_path / "beside")
    assert forking()
    assert os.getpid() not in forking()
    with monkeypatch.context() as serial:
        serial.setenv("TOOLCAT_BUILD_WORKERS", "1")
        build(example_src_copy, tmp_path / "in-turn")
    assert _files(tmp_path / "beside") == _files(tmp_path / "in-turn")


def test_an_error_in_the_side_worker_fails_the_build_and_keeps_the_last_one(
    tmp_path: Path, example_src_copy: Path, forking: Pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A side contributor that raises fails the build with its error; the last good build stays as it was."""
    out = tmp_path / "build"
    build(example_src_copy, out)
    before = _files(out)
    from toolcat.build.contributors.exports import contribute as export_build  # noqa: PLC0415

    def broken(*_: Any) -> None:
        raise ValueError("exports broke")

    monkeypatch.setattr(export_build, "contribute", broken)
    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    with pytest.raises(ValueError, match="exports broke"):
        build(example_src_copy, out)
    assert _files(out) == before
    assert not [p for p in tmp_path.iterdir() if p.name not in {"build", "catalog_src", "pids.txt"}], "no staging left"


def test_the_workers_files_come_back_staged_not_as_bytes(
    tmp_path: Path, example_src_copy: Path, forking: Pids, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker writes its new files to the staging folder; only their paths come back through the pipe (issue 33).

    At 10,000 tools a one-tool edit's worker made 30 MB of sections and provider files, pickled back and written again.
    """
    from toolcat.build.filestore import FileStore  # noqa: PLC0415 - the store the worker's files are adopted into

    adopted: list[Any] = []
    real = FileStore.adopt

    def noting(self: FileStore, path: str, origin: Any) -> None:
        adopted.append(origin)
        real(self, path, origin)

    monkeypatch.setattr(FileStore, "adopt", noting)
    build(example_src_copy, tmp_path / "beside")
    assert forking(), "the prompt contributor did not run"
    assert len(adopted) > 10
    assert all(isinstance(origin, Path) for origin in adopted), [type(o) for o in adopted]
