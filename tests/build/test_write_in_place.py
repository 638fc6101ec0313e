"""An incremental build written into its folder in place (issue 33): the swap's files, only the new ones made.

``toolcat.build.write._write_in_place`` adds a build's new (content-named) files beside the last build's and commits
through a journal; these tests hold it to the folder swap's result and to its rollback and recovery.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from support import killed_build

from toolcat.build import build
from toolcat.build import write as write_module
from toolcat.build.errors import BuildError


def _snapshot(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder``, state included."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _edit(src: Path, n: int) -> None:
    """Append to the summary of the first tool of the first tools file (a one-tool edit)."""
    path = min(src.rglob("tools.yaml"))
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["tools"][0]["summary"] += f" (edited {n})"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")


def test_an_edit_in_place_writes_the_files_and_state_the_folder_swap_writes(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three edits: in place (the folder itself kept) and swapped give the same files, state and counts each time."""
    src, out, swapped = example_src_copy, tmp_path / "build", tmp_path / "swapped"
    build(src, out, embedder="none")
    shutil.copytree(out, swapped)
    folder = out.stat().st_ino
    for n in range(3):
        _edit(src, n)
        monkeypatch.setattr(write_module.FAULTS, "swap", "")
        here = build(src, out, embedder="none")
        monkeypatch.setattr(write_module.FAULTS, "swap", "renames")  # the two-rename folder swap
        there = build(src, swapped, embedder="none")
        assert out.stat().st_ino == folder, "written in place, not swapped"
        assert _snapshot(out) == _snapshot(swapped)
        assert here.write == there.write
        assert here.write is not None
        assert 0 < here.write.files_written < here.write.total_files
    assert len(json.loads((out / "catalog.json").read_text())["versions"]) == 4
    assert not list(out.glob(".toolcat-pending*"))


def test_a_failure_before_the_commit_removes_what_it_added(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error after the new files are made: they, the staged files and the journal go; the folder is as before."""
    src, out = example_src_copy, tmp_path / "build"
    build(src, out, embedder="none")
    before = _snapshot(out)
    _edit(src, 1)

    def broken(out: Path, journal: dict[str, object]) -> None:
        if journal["status"] == "commit":
            raise OSError(28, "No space left on device")
        real(out, journal)

    real = write_module._save_journal
    monkeypatch.setattr(write_module, "_save_journal", broken)
    with pytest.raises(BuildError, match=r"previous build .* is untouched"):
        build(src, out, embedder="none")
    assert _snapshot(out) == before
    assert sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir()) == sorted(
        p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_dir() and any(p.iterdir())
    ), "no empty folder is left behind"


@pytest.mark.parametrize("crash_at", ["before-swap", "after-exchange"])
def test_a_build_killed_in_place_is_rolled_back_or_finished_by_the_next(
    example_src_copy: Path, tmp_path: Path, crash_at: str
) -> None:
    """Killed before the commit: the last build's files are all there, as they were; after it: the next build finishes it."""
    src, out = example_src_copy, tmp_path / "build"
    build(src, out, embedder="none")
    before = _snapshot(out)
    _edit(src, 1)
    killed_build(src, out, crash_at, "--embedder", "none", timeout=300)
    journal = json.loads((out / write_module.PENDING).read_text())
    assert journal["status"] == ("commit" if crash_at == "after-exchange" else "prepare")
    left = _snapshot(out)
    assert {p: left[p] for p in before} == before, "every file of the last build is as it was"
    assert set(left) - set(before) <= {*journal["files"], write_module.PENDING} | {
        write_module.PENDING_PREFIX + name for name in journal["staged"]
    }
    result = build(src, out, embedder="none")
    assert result.up_to_date == (crash_at == "after-exchange")  # that build was committed
    assert result.registry_version == journal["registry_version"], "the same build, made again or finished"
    assert not list(out.glob(".toolcat-pending*"))
    assert json.loads((out / "catalog.json").read_text())["registry_version"] == result.registry_version


def test_the_state_lists_the_first_versions_files_and_the_changes_of_the_others(
    example_src_copy: Path, tmp_path: Path
) -> None:
    """Saved as what each version adds and drops, read back as each version's files; an older state reads as before."""
    versions = [
        {"registry_version": "c", "files": ["a", "b", "d"]},
        {"registry_version": "b", "files": ["a", "b", "c"]},
        {"registry_version": "a", "files": ["c"]},
    ]
    saved = write_module._versions_saved(versions)
    assert saved[0] == versions[0]
    assert saved[1] == {"registry_version": "b", "files_delta": {"added": ["c"], "dropped": ["d"]}}
    assert saved[2] == {"registry_version": "a", "files_delta": {"added": [], "dropped": ["a", "b"]}}
    read = write_module._versions_read(json.loads(json.dumps(saved)))
    assert [sorted(v["files"]) for v in read] == [v["files"] for v in versions]
    assert write_module._versions_read(versions) == versions, "a state of whole lists reads as it is"
    src, out = example_src_copy, tmp_path / "build"
    for n in range(3):
        _edit(src, n)
        build(src, out, embedder="none")
    state = json.loads((out / ".toolcat-state.json").read_text())
    assert "files" in state["versions"][0]
    assert all("files_delta" in v and "files" not in v for v in state["versions"][1:])
    listed = write_module.owned_files(write_module.read_state(out))
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert {p for p in on_disk if not p.startswith(".toolcat-")} <= listed, "every published file is owned"


def test_older_versions_keep_the_deltas_they_were_saved_with_and_save_what_comparing_the_lists_saves(
    example_src_copy: Path, tmp_path: Path
) -> None:
    """A version read after the same version as before keeps its saved delta; one after another is compared afresh.

    Issue 33: comparing ten lists of 25,000 files took 0.08 CPU-s of an edit at 10,000 tools. A version between them
    dropped, the next one's delta is compared again; either way the bytes of comparing every list.
    """
    src, out = example_src_copy, tmp_path / "build"
    for n in range(4):
        _edit(src, n)
        build(src, out, embedder="none")
    read = write_module.read_state(out)["versions"]
    new = {"registry_version": "new", "manifest": {}, "files": [*read[0]["files"], "tools/new.json"]}

    def compared(versions: list[dict]) -> list[dict]:
        return write_module._versions_saved(
            [{k: v for k, v in x.items() if not k.startswith("_read")} for x in versions]
        )

    for versions in ([new, *read], [new, read[0], *read[2:]]):
        saved = write_module._versions_saved(versions)
        assert json.dumps(saved, sort_keys=True) == json.dumps(compared(versions), sort_keys=True)
        assert all(not k.startswith("_read") for v in saved for k in v)
    kept = write_module._versions_saved([new, *read])
    assert kept[2]["files_delta"] is read[1]["_read_delta"], "the saved delta is kept, not compared again"
    skipped = write_module._versions_saved([new, read[0], *read[2:]])
    assert skipped[2]["files_delta"] is not read[2]["_read_delta"], "it follows another version now: compared"


@pytest.mark.parametrize("status", ["prepare", "commit"])
def test_a_planted_journal_removes_nothing_outside_the_build(tmp_path: Path, status: str) -> None:
    """A journal naming paths outside the folder (absolute, ``..``, through a link) has recovery leave them alone."""
    out, outside = tmp_path / "build", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (outside / "keep.txt").write_text("mine", encoding="utf-8")
    (out / "away").symlink_to(outside, target_is_directory=True)
    (out / "own.json").write_text("{}", encoding="utf-8")
    names = [str(outside / "keep.txt"), "../outside/keep.txt", "away/keep.txt", "a/../../outside/keep.txt", "own.json"]
    journal = {"format": write_module.PENDING_FORMAT, "status": status, "registry_version": "x"}
    journal |= {"files": names, "drop": names, "folders": ["../outside", "away"], "staged": ["../outside/keep.txt"]}
    (out / write_module.PENDING).write_text(json.dumps(journal), encoding="utf-8")
    write_module.recover_pending(out)
    assert (outside / "keep.txt").read_text(encoding="utf-8") == "mine"
    assert outside.is_dir()
    assert not (out / "own.json").exists(), "a path inside the folder is still recovered"
    assert not (out / write_module.PENDING).exists()


def test_owned_files_takes_a_damaged_states_lists_without_failing() -> None:
    """Lists taken as they are (issue 33); one holding a list or a dict is gone through for its paths alone."""
    state = {
        "written": ["a.json", {"not": "a path"}, "b.json"],
        "versions": [{"files": ["c.json", ["x"]]}, {"files": ["d.json", 5]}, "junk"],
    }
    owned = write_module.owned_files(state)
    assert {"a.json", "b.json", "c.json", "d.json", write_module.ENTRY, write_module.STATE} <= owned
    assert "5" not in owned, "an entry that is not text claims no file"
