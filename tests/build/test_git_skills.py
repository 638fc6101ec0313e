"""Skills from Git (skills_from in toolcat.yaml): pinned commits, fetched by git at build time, recorded, cached."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support import SKILL_MD, git_in, write_tree

from toolcat.build import build, compile_catalog
from toolcat.build.errors import SourceError
from toolcat.reader import Catalog

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _repo(root: Path, body: str = "Write the summary first.") -> tuple[Path, str]:
    """A local repository with one skill under skills/; its path and the commit id."""
    repo = root / "upstream"
    write_tree(
        repo,
        {
            "skills/brief-writer/SKILL.md": SKILL_MD.format(
                name="brief-writer", description="Writes one-page briefs. Use for summaries.", body=body
            ),
            "skills/brief-writer/references/style.md": "Short sentences.\n",
            "README.md": "# skills\n",
        },
    )
    git_in(repo, "init", "-q", "-b", "main")
    git_in(repo, "add", "-A")
    git_in(repo, "commit", "-q", "-m", "skills")
    return repo, git_in(repo, "rev-parse", "HEAD")


def _catalogue(root: Path, entry: dict) -> Path:
    return write_tree(
        root / "src",
        {
            "_node.yaml": {"title": "C", "summary": "Git skills."},
            "toolcat.yaml": {"skills_from": [entry]},
            "misc/tools.yaml": {"tools": [{"id": "misc.ping", "summary": "Ping.", "args_schema": {"type": "object"}}]},
        },
    )


@pytest.fixture(autouse=True)
def git_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "git-cache"
    monkeypatch.setenv("TOOLCAT_GIT_CACHE", str(cache))
    return cache


def test_skills_from_a_pinned_commit_are_built_and_recorded(tmp_path: Path) -> None:
    """A skill of a local repository at a pinned commit is served under `into`, and the manifest records url+commit."""
    repo, commit = _repo(tmp_path)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills/", "into": "skills/community"})
    out = tmp_path / "build"
    build(src, out)
    cat = Catalog.open(out)
    assert [p["tool_id"] for p in cat.list(["skills", "community"])["tools"]] == ["task.brief_writer"]
    assert cat.tool_exec("task.brief_writer", {})["result"]["instructions"] == "Write the summary first.\n"
    assert (
        cat.tool_exec("task.brief_writer", {"resource": "references/style.md"})["result"]["content"]
        == "Short sentences.\n"
    )
    assert cat.manifest["sources"] == {
        "git": [
            {
                "url": str(repo),
                "commit": commit,
                "path": "skills",
                "into": "skills/community",
                "skills": ["brief-writer"],
            }
        ]
    }


def test_the_pin_holds_when_the_repository_moves_on(tmp_path: Path) -> None:
    """A new commit upstream changes nothing: the build serves the pinned commit's skill."""
    repo, commit = _repo(tmp_path)
    (repo / "skills/brief-writer/SKILL.md").write_text(
        SKILL_MD.format(name="brief-writer", description="Changed.", body="Changed body."), encoding="utf-8"
    )
    git_in(repo, "commit", "-q", "-am", "later")
    catalog, _ = compile_catalog(_catalogue(tmp_path, {"git": f"file://{repo}", "commit": commit, "path": "skills"}))
    assert catalog.tools["task.brief_writer"].skill.body == "Write the summary first.\n"


def test_a_fetched_commit_is_reused_from_the_cache_without_git(tmp_path: Path, git_cache: Path) -> None:
    """Once fetched, a commit is read from the cache keyed by URL and commit: the repository may vanish."""
    repo, commit = _repo(tmp_path)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"})
    compile_catalog(src)
    assert len([p for p in git_cache.iterdir() if not p.name.startswith(".")]) == 1
    shutil.rmtree(repo)
    catalog, _ = compile_catalog(src)
    assert "task.brief_writer" in catalog.tools


@pytest.mark.parametrize(
    ("entry", "code", "words"),
    [
        ({"git": "/srv/repo", "commit": "main"}, "git_unpinned", "full commit id"),
        ({"git": "/srv/repo", "commit": "v1.2.0"}, "git_unpinned", "full commit id"),
        ({"git": "https://user:hunter2@example.com/r.git", "commit": "a" * 40}, "git_credentials", "credentials"),
        ({"git": "ext::sh -c touch% /tmp/pwned", "commit": "a" * 40}, "git_url", "transport"),
        ({"git": "--upload-pack=touch /tmp/pwned", "commit": "a" * 40}, "git_url", "transport"),
        ({"git": "/srv/repo", "commit": "a" * 40, "path": "../outside"}, "git_path", "relative folder"),
        ({"git": "/srv/repo", "commit": "a" * 40, "branch": "main"}, "unknown_field", "branch"),
    ],
)
def test_bad_entries_are_refused_with_a_located_error(tmp_path: Path, entry: dict, code: str, words: str) -> None:
    """Unpinned refs, credentials in the URL, command transports and escaping paths fail at toolcat.yaml:line."""
    src = _catalogue(tmp_path, entry)
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    problems = [d for d in caught.value.diagnostics if d.code == code]
    assert problems, str(caught.value)
    assert problems[0].file == "toolcat.yaml"
    assert problems[0].line is not None
    assert words in str(caught.value)
    assert "hunter2" not in str(caught.value)
    assert not Path("/tmp/pwned").exists()


def test_a_commit_missing_upstream_is_a_located_fetch_error(tmp_path: Path) -> None:
    """A pinned commit the repository does not have fails the build naming the entry, and leaves no cache folder."""
    repo, _ = _repo(tmp_path)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": "0123456789abcdef0123456789abcdef01234567"})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    fetch = [d for d in caught.value.diagnostics if d.code == "git_fetch"]
    assert fetch
    assert fetch[0].json_path == "$.skills_from[0].commit"
    lines = (src / "toolcat.yaml").read_text(encoding="utf-8").splitlines()
    assert lines[fetch[0].line - 1].lstrip("- ").startswith("commit:")
    assert not [p for p in Path(os.environ["TOOLCAT_GIT_CACHE"]).iterdir() if not p.name.startswith(".")]


def test_git_runs_no_hooks_from_the_users_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A post-checkout hook installed by the user's init.templateDir does not run: core.hooksPath is /dev/null."""
    repo, commit = _repo(tmp_path)
    home = tmp_path / "home"
    hooks = home / "template" / "hooks"
    hooks.mkdir(parents=True)
    marker = tmp_path / "hook-ran"
    (hooks / "post-checkout").write_text(f"#!/bin/sh\ntouch {marker}\n", encoding="utf-8")
    (hooks / "post-checkout").chmod(0o755)
    (home / ".gitconfig").write_text(f"[init]\n\ttemplateDir = {home / 'template'}\n", encoding="utf-8")
    monkeypatch.setenv("HOME", str(home))
    catalog, _ = compile_catalog(_catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills"}))
    assert "task.brief_writer" in catalog.tools
    assert not marker.exists()


def test_skills_from_is_a_known_setting(tmp_path):
    """``skills_from`` in toolcat.yaml is a setting the config knows: no unknown-key warning, so --strict accepts it."""
    from toolcat.build.config import read_config  # noqa: PLC0415

    (tmp_path / "toolcat.yaml").write_text("skills_from: []\nsearch: {embedder: none}\n", encoding="utf-8")
    config = read_config(tmp_path)
    assert [d.code for d in config.diagnostics] == []
    (tmp_path / "toolcat.yaml").write_text("skill_from: []\n", encoding="utf-8")
    assert [d.code for d in read_config(tmp_path).diagnostics] == ["unknown_setting"]


def test_the_settings_file_is_read_once_under_the_source_limits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build with ``skills_from`` reads toolcat.yaml once (through the limited reader), and git.py takes the parsed list."""
    from toolcat.build.sources import parse  # noqa: PLC0415 - the module whose reader is counted

    repo, commit = _repo(tmp_path)
    src = _catalogue(tmp_path, {"git": str(repo), "commit": commit, "path": "skills/", "into": "skills/community"})
    reads: list[str] = []
    real = parse.read_source

    def counted(path: Path, limit: int, root: Path) -> bytes:
        reads.append(Path(path).name)
        return real(path, limit, root)

    monkeypatch.setattr(parse, "read_source", counted)
    catalog, _ = compile_catalog(src)
    assert "task.brief_writer" in catalog.tools
    assert reads.count("toolcat.yaml") == 1
    source = (Path(__file__).parents[2] / "compiler" / "build" / "sources" / "git.py").read_text(encoding="utf-8")
    assert 'toolcat.yaml"' not in source
    assert "read_source" not in source
