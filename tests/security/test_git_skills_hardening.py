"""Git skills stay inside their checkout (issue 36): no links out, a verified cache, a size cap, one deadline, no secrets."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import SKILL_MD, git_in, write_tree

from toolcat.build import build, compile_catalog
from toolcat.build.errors import SourceError
from toolcat.build.sources import git as git_source

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _skill(name: str, body: str = "Write the summary first.") -> str:
    return SKILL_MD.format(name=name, description=f"The {name} skill. Use for tests.", body=body)


def _commit(repo: Path) -> str:
    git_in(repo, "init", "-q", "-b", "main")
    git_in(repo, "add", "-A")
    git_in(repo, "commit", "-q", "-m", "skills")
    return git_in(repo, "rev-parse", "HEAD")


def _catalogue(root: Path, *entries: dict) -> Path:
    return write_tree(
        root / "src",
        {
            "_node.yaml": {"title": "C", "summary": "Git skills."},
            "toolcat.yaml": {"skills_from": list(entries)},
            "misc/tools.yaml": {"tools": [{"id": "misc.ping", "summary": "Ping.", "args_schema": {"type": "object"}}]},
        },
    )


def _secret_folder(root: Path) -> Path:
    """A folder of the build machine holding a skill and a token, outside any repository."""
    return write_tree(root / "secret", {"leak/SKILL.md": _skill("leak"), "leak/token.txt": "TOKEN-abc123\n"})


def _errors(src: Path) -> SourceError:
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    return caught.value


@pytest.fixture(autouse=True)
def git_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "git-cache"
    monkeypatch.setenv("TOOLCAT_GIT_CACHE", str(cache))
    return cache


def test_a_path_that_is_a_link_out_of_the_checkout_is_refused(tmp_path: Path) -> None:
    """`path` committed as a symbolic link to a folder of the build machine publishes nothing from it."""
    secret = _secret_folder(tmp_path)
    repo = tmp_path / "upstream"
    repo.mkdir()
    (repo / "skills").symlink_to(secret)
    commit = _commit(repo)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"})
    error = _errors(src)
    assert [d.code for d in error.diagnostics] == ["git_symlink"], str(error)
    assert "skills" in str(error)
    assert "symbolic link" in str(error)
    assert "TOKEN-abc123" not in str(error)
    out = tmp_path / "build"
    with pytest.raises(SourceError):
        build(src, out)
    assert not any("TOKEN" in p.read_text(errors="replace") for p in out.rglob("*") if p.is_file())


def test_a_link_to_the_root_folder_is_a_clean_error(tmp_path: Path) -> None:
    """A `path` linking to / is one located diagnostic, at once: the file system is never walked."""
    repo = tmp_path / "upstream"
    repo.mkdir()
    (repo / "skills").symlink_to("/")
    (repo / "README.md").write_text("x\n", encoding="utf-8")
    commit = _commit(repo)
    started = time.monotonic()
    error = _errors(_catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills/"}))
    assert time.monotonic() - started < 60
    problem = next(d for d in error.diagnostics if d.code == "git_symlink")
    assert problem.file == "toolcat.yaml"
    assert problem.json_path == "$.skills_from[0].path"


def test_a_skill_folder_or_parent_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    """A link among the skill folders (or a folder on the way to `path`) is refused, naming the link."""
    secret = _secret_folder(tmp_path)
    repo = write_tree(tmp_path / "upstream", {"skills/real/SKILL.md": _skill("real")})
    (repo / "skills" / "linked").symlink_to(secret / "leak")
    (repo / "nested").symlink_to(secret)
    commit = _commit(repo)
    error = _errors(_catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"}))
    assert any(d.code == "git_symlink" and "skills/linked" in d.message for d in error.diagnostics), str(error)
    error = _errors(_catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "nested/leak"}))
    assert any(d.code == "git_symlink" and "nested" in d.message for d in error.diagnostics), str(error)


def test_an_edited_cached_checkout_is_not_published_under_the_pinned_commit(tmp_path: Path, git_cache: Path) -> None:
    """git checks the cached checkout against the commit: an edited file (same size) is refetched, never served."""
    repo = write_tree(tmp_path / "upstream", {"skills/brief/SKILL.md": _skill("brief", "Original body.")})
    commit = _commit(repo)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"})
    compile_catalog(src)
    cached = next(git_cache.glob("*/skills/brief/SKILL.md"))
    stat = cached.stat()
    cached.write_text(_skill("brief", "Evil! body."), encoding="utf-8")
    os.utime(cached, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # the same size and time: only content tells
    (cached.parent / "extra.md").write_text("planted\n", encoding="utf-8")
    catalog, _ = compile_catalog(src)
    assert catalog.tools["task.brief"].skill.body == "Original body.\n"
    # and without the repository, the edited cache is an error, not a publication
    next(git_cache.glob("*/skills/brief/SKILL.md")).write_text(_skill("brief", "Evil! body."), encoding="utf-8")
    shutil.rmtree(repo)
    error = _errors(src)
    assert any(d.code == "git_fetch" for d in error.diagnostics), str(error)


def test_a_checkout_larger_than_the_cap_is_refused_before_it_is_written(
    tmp_path: Path, git_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit whose files come to more than the checkout cap is refused, and no checkout is left in the cache."""
    monkeypatch.setattr(git_source, "MAX_CHECKOUT_BYTES", 100_000)
    repo = write_tree(
        tmp_path / "upstream", {"skills/brief/SKILL.md": _skill("brief"), "data/zeros.bin": b"\0" * 400_000}
    )
    commit = _commit(repo)
    error = _errors(_catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"}))
    problem = next(d for d in error.diagnostics if d.code == "git_fetch")
    assert "100,000" in problem.message
    assert "too large" in problem.message
    assert not list(git_cache.glob("*/data/zeros.bin"))


def _silent_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` on PATH that counts its runs and then hangs, as a silent host makes git hang."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    runs = tmp_path / "runs"
    (bin_dir / "git").write_text(f"#!/bin/sh\necho run >> {runs}\nexec sleep 300\n", encoding="utf-8")
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return runs


def test_one_deadline_covers_every_entry_and_failures_are_cached(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three entries on a silent host share one deadline, and the next build within the window runs no git."""
    monkeypatch.setattr(git_source, "GIT_TIMEOUT_SECONDS", 3.0)
    runs = _silent_git(tmp_path, monkeypatch)
    entries = [{"git": f"https://silent{i}.example/r.git", "commit": f"{i}" * 40} for i in range(1, 4)]
    src = _catalogue(tmp_path, *entries)
    started = time.monotonic()
    error = _errors(src)
    took = time.monotonic() - started
    assert took < 3.0 * 3, f"{took:.1f} s: each entry got its own time limit"
    fetches = [d for d in error.diagnostics if d.code == "git_fetch"]
    assert len(fetches) == 3, str(error)
    assert all("3 s" in d.message for d in fetches), str(error)
    first_runs = len(runs.read_text().splitlines())
    error = _errors(src)
    assert len(runs.read_text().splitlines()) == first_runs, "a failure seconds ago ran git again"
    assert all("retried after" in d.message for d in error.diagnostics if d.code == "git_fetch"), str(error)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    token=st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789_-", min_size=6, max_size=40),
    form=st.sampled_from(
        [
            "https://example.com/r.git?access_token={t}",
            "https://example.com/r.git?x=1&private_token={t}",
            "https://example.com/r.git#{t}",
            "https://{t}@example.com/r.git",
            "https://u:{t}@example.com/r.git",
            "ssh://git:{t}@example.com/r.git",
            "git://example.com/r.git?{t}",
            "file:///srv/r.git?token={t}",
        ]
    ),
)
def test_no_credentials_anywhere_in_a_url(tmp_path: Path, token: str, form: str) -> None:
    """A token in the user part, the query string or the fragment is refused, and never shown in the error."""
    src = _catalogue(tmp_path / token, {"git": form.format(t=token), "commit": "a" * 40})
    error = _errors(src)
    assert [d.code for d in error.diagnostics] == ["git_credentials"], str(error)
    assert token not in str(error)
