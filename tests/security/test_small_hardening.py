"""Small hardening items of issue 36: private state files, rediss://, context off the command line, cursors."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.exceptions import MCPError

from toolcat.cli import main
from toolcat.mcp import skills
from toolcat.mcp.state import open_state
from toolcat.mcp.state.redis import parse_redis_url


def test_a_sqlite_state_file_is_created_private(tmp_path: Path) -> None:
    """A new --state sqlite: file is 0600 (it keeps answers, a file.read's content among them)."""
    path = tmp_path / "state.db"
    store = open_state(f"sqlite:{path}")
    store.idempotency.count()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    for extra in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        if extra.exists():
            assert stat.S_IMODE(extra.stat().st_mode) & 0o077 == 0


def test_a_readable_state_file_of_ours_is_made_private(tmp_path: Path) -> None:
    """A state file an older release left 0644 is made 0600 before it is used."""
    path = tmp_path / "state.db"
    path.touch(mode=0o644)
    path.chmod(0o644)
    open_state(f"sqlite:{path}")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.skipif(os.getuid() != 0, reason="needs root to give a file to another user")
def test_a_state_file_of_another_user_is_refused(tmp_path: Path) -> None:
    """serve never keeps answers in a file another user owns (they could read or plant them)."""
    path = tmp_path / "state.db"
    path.touch(mode=0o600)
    os.chown(path, 65534, 65534)
    with pytest.raises(ValueError, match="another user"):
        open_state(f"sqlite:{path}")


def test_rediss_urls_are_accepted_and_passwords_still_refused() -> None:
    """rediss:// (TLS) is a Redis store; a password in it is refused as in redis://."""
    assert parse_redis_url("rediss://cache.internal:6380/2") == "rediss://cache.internal:6380/2"
    with pytest.raises(ValueError, match="password"):
        parse_redis_url("rediss://:hunter2@cache.internal:6380/0")


def test_context_values_come_from_a_file_or_the_environment(
    example_build: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--context-file and --context-env give the host's context without putting the value on the command line."""
    import click  # noqa: PLC0415

    from toolcat.commands.reader import context_from, context_option  # noqa: PLC0415

    seen: dict[str, object] = {}

    @click.command()
    @context_option
    def probe(context_pairs: tuple[str, ...] = ()) -> None:
        seen["context"] = context_from(context_pairs)

    secret_file = tmp_path / "context"
    secret_file.write_text("# the host's values\nproject_id=P-0001\n\napi_token=from-file\n", encoding="utf-8")
    monkeypatch.setenv("MY_TOKEN", "from-env")
    runner = CliRunner()
    result = runner.invoke(probe, ["--context-file", str(secret_file), "--context-env", "api_token=MY_TOKEN"])
    assert result.exit_code == 0, result.output
    assert seen["context"] == {"project_id": "P-0001", "api_token": "from-env"}
    missing = runner.invoke(probe, ["--context-env", "api_token=NOT_SET_ANYWHERE"])
    assert missing.exit_code == 2
    assert "NOT_SET_ANYWHERE" in missing.output
    bad = tmp_path / "bad"
    bad.write_text("no equals sign here\n", encoding="utf-8")
    refused = runner.invoke(probe, ["--context-file", str(bad)])
    assert refused.exit_code == 2
    assert "line 1" in refused.output
    serve_help = runner.invoke(main, ["serve", "--help"])
    assert "--context-file" in serve_help.output
    assert "--context-env" in serve_help.output


@settings(max_examples=300, deadline=None)
@given(
    cursor=st.one_of(
        st.text(max_size=20),
        st.sampled_from(["²", "٣", "1" * 5000, "9" * 30, "-1", " 1", "1.0", "0x10"]),
    )
)
def test_every_malformed_cursor_is_invalid_params(cursor: str) -> None:
    """Any cursor that is not a short ASCII offset within the list is -32602, never another exception."""
    valid = cursor.isascii() and cursor.isdigit() and len(cursor) <= 12 and int(cursor) <= 100
    if valid:
        assert skills._offset(cursor, 100) == int(cursor)
        return
    with pytest.raises(MCPError) as caught:
        skills._offset(cursor, 100)
    assert caught.value.error.code == -32602
    assert len(caught.value.error.message) < 200
