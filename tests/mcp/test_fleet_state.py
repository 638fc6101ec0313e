"""serve's state stores (memory, SQLite, Redis): exactly-once idempotency across replicas, caps, clear failures."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fleet_support import REDIS, redis_server

from toolcat.format.envelope import ReaderError
from toolcat.mcp.state import StateStore, open_state
from toolcat.mcp.state.base import SharedIdempotency

needs_redis = pytest.mark.skipif(
    REDIS is None, reason="redis-server not installed (make fleet installs it where apt can)"
)


@pytest.fixture(scope="module")
def redis_url() -> Iterator[str]:
    if REDIS is None:
        pytest.skip("redis-server not installed (make fleet installs it where apt can)")
    with redis_server() as server:
        yield server.url


def _replicas(kind: str, tmp_path: Path, redis_url: str | None, **limits: float) -> list[StateStore]:
    """Two stores on the same shared state, as two replicas would open it."""
    spec = f"sqlite:{tmp_path / 'state.db'}" if kind == "sqlite" else str(redis_url)
    stores = [open_state(spec, **limits) for _ in range(2)]
    if kind == "redis":
        import redis  # noqa: PLC0415

        redis.Redis.from_url(spec).flushdb()
    return stores


def _run_once(store: StateStore, key: str, runs: list[int], answers: list[object]) -> None:
    """What Session._run_once does with a key: lock, replay or run, keep."""
    records = store.idempotency
    with records.lock(key):
        first = records.get(key, "util.math.eval", "digest")
        if first is not None:
            answers.append(("replayed", first))
            return
        runs.append(1)
        body = {"result": {"n": len(runs)}}
        records.put(key, "util.math.eval", "digest", body, [])
        answers.append(("ran", body))


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=needs_redis)])
def test_racing_replicas_run_a_keyed_call_exactly_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Twelve calls with one idempotency key, spread over two replicas' stores at once: one runs, eleven replay it."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    stores = _replicas(kind, tmp_path, url)
    runs: list[int] = []
    answers: list[object] = []
    threads = [threading.Thread(target=_run_once, args=(stores[i % 2], "k-race", runs, answers)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert runs == [1]
    assert sorted(kind for kind, _ in answers) == ["ran"] + ["replayed"] * 11
    assert {str(body) for _, body in answers} == {str({"result": {"n": 1}})}


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=needs_redis)])
def test_a_retry_while_the_first_call_runs_elsewhere_is_in_progress(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """A replica that finds the key claimed waits, then answers IN_PROGRESS (retryable) instead of running it."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    first, second = _replicas(kind, tmp_path, url, wait_seconds=0.3)
    with first.idempotency.lock("k-busy"), pytest.raises(ReaderError) as caught, second.idempotency.lock("k-busy"):
        pytest.fail("the second replica ran while the first held the key")
    assert caught.value.code == "IN_PROGRESS"
    assert "retry" in " ".join(caught.value.hints).lower()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=needs_redis)])
def test_shared_records_keep_todays_caps_and_conflicts(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """Beyond max_keys the oldest answer goes; a reused key for another call is CONFLICT; transient errors are not kept."""
    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    store = _replicas(kind, tmp_path, url, max_keys=3)[0]
    records = store.idempotency
    assert isinstance(records, SharedIdempotency)
    for n in range(5):
        records.put(f"k{n}", "t", "d", {"result": n}, [])
    assert len(records) == 3
    assert records.get("k0", "t", "d") is None
    assert records.get("k4", "t", "d") == {"result": 4}
    with pytest.raises(ReaderError) as caught:
        records.get("k4", "other.tool", "d")
    assert caught.value.code == "CONFLICT"
    records.put("k-transient", "t", "d", {"ok": False, "error": {"code": "UNAVAILABLE", "message": "x"}}, [])
    assert records.get("k-transient", "t", "d") is None


def test_memory_state_is_todays_in_process_store() -> None:
    """--state memory is not shared (HTTP keeps handshake sessions) and keeps answers like a lone server."""
    store = open_state("memory")
    assert store.shared is False
    store.idempotency.put("k", "t", "d", {"result": 1}, [])
    assert store.idempotency.get("k", "t", "d") == {"result": 1}


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("postgres://db/1", "memory, sqlite:PATH or redis[s]://HOST:PORT/DB"),
        ("sqlite:", "needs a file path"),
        ("redis://:hunter2@127.0.0.1:6379/0", "TOOLCAT_STATE_PASSWORD"),
        ("redis://127.0.0.1:6379/x", "database is a number"),
    ],
)
def test_a_bad_state_spec_says_the_accepted_forms(spec: str, says: str) -> None:
    """--state that is not memory, sqlite:PATH or redis://HOST:PORT/DB fails with the fix; a password is never echoed."""
    with pytest.raises(ValueError, match="--state") as caught:
        open_state(spec)
    assert says in str(caught.value)
    assert "hunter2" not in str(caught.value)


@needs_redis
def test_an_unreachable_redis_is_a_clear_retryable_error(tmp_path: Path) -> None:
    """With Redis down a keyed call fails with UNAVAILABLE naming the store, and readiness says why; nothing hangs."""
    with redis_server() as server:
        url = server.url
    store = open_state(url)  # the server is gone now
    with pytest.raises(ReaderError) as caught, store.idempotency.lock("k"):
        pass
    assert caught.value.code == "UNAVAILABLE"
    assert url in caught.value.message
    with pytest.raises(ReaderError, match="cannot be reached"):
        store.ping()


@pytest.mark.parametrize("kind", ["sqlite", pytest.param("redis", marks=needs_redis)])
def test_shared_keys_belong_to_the_client_that_sent_them(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    """The same key from two clients names two calls on every replica: no replay of another client's answer, no CONFLICT."""
    from toolcat.reader.execution.idempotency import client_scope  # noqa: PLC0415

    url = request.getfixturevalue("redis_url") if kind == "redis" else None
    first, second = _replicas(kind, tmp_path, url)
    with client_scope("http:alice"), first.idempotency.lock("k"):
        first.idempotency.put("k", "util.math.eval", "alice-args", {"result": "alice's"}, [])
    with client_scope("http:bob"), second.idempotency.lock("k"):
        assert second.idempotency.get("k", "util.math.eval", "bob-args") is None
    with client_scope("http:alice"):
        assert second.idempotency.get("k", "util.math.eval", "alice-args") == {"result": "alice's"}
