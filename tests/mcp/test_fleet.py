"""The fleet with real parts: Debian's Redis, three `toolcat serve --transport http` replicas per dialect, HAProxy.

HAProxy balances roundrobin with no stickiness, so consecutive requests of one client land on different
replicas. Skipped with the reason where redis-server or haproxy is missing (`make fleet` installs them).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from fleet_support import MISSING, SKIP_REASON, Replica, call, get, haproxy, load_run, redis_server
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]

DIALECTS = ("gateway", "spec", "namespaced")


@pytest.fixture(scope="module")
def fleet(example_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Redis, three replicas of each dialect sharing it, and HAProxy in front of each pool."""
    folder = tmp_path_factory.mktemp("fleet")
    with redis_server() as redis, contextlib.ExitStack() as stack:
        pools = {d: [Replica(example_build, redis.url, d) for _ in range(3)] for d in DIALECTS}
        for replicas in pools.values():
            for replica in replicas:
                stack.callback(replica.stop)
        for replicas in pools.values():
            for replica in replicas:
                replica.wait()
        urls = stack.enter_context(haproxy(pools, folder))
        _wait_ready(urls["gateway"])
        yield {"redis": redis, "pools": pools, "urls": urls}


def _wait_ready(url: str, seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, http.client.HTTPException, RuntimeError, KeyError):
            if call(url, "tool_help", {"path": "root"})["result"]["structuredContent"]["ok"]:
                return
        time.sleep(0.2)
    raise TimeoutError(f"{url} did not answer within {seconds} s")


def _content(result: Any) -> dict[str, Any]:
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def _flow(url: str, dialect: str) -> list[dict[str, Any]]:
    """The seeds' discovery flow of one dialect, one request per step, through the load balancer."""
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        steps: list[dict[str, Any]] = []
        if dialect == "gateway":
            steps.append(_content(await session.call_tool("tool_help", {"path": "root"})))
            steps.append(_content(await session.call_tool("tool_help", {"path": "util.math"})))
            steps.append(
                _content(await session.call_tool("tool_exec", {"op": "util.math.eval", "args": {"expression": "6*7"}}))
            )
        elif dialect == "spec":
            steps.append(_content(await session.call_tool("list", {})))
            steps.append(_content(await session.call_tool("search_nodes", {"query": "arithmetic"})))
            steps.append(_content(await session.call_tool("expand_tool", {"tool_id": "util.math.eval"})))
            steps.append(
                _content(
                    await session.call_tool("call_tool", {"tool_id": "util.math.eval", "args": {"expression": "6*7"}})
                )
            )
        else:
            steps.append(_content(await session.call_tool("tool_list", {})))
            steps.append(
                _content(await session.call_tool("find_tool", {"purpose": "evaluate an arithmetic expression"}))
            )
            described = _content(await session.call_tool("tool_describe", {"name": "util.math.eval"}))
            steps.append(described)
            steps.append(_content(await session.call_tool(described["alias"], {"expression": "6*7"})))
        return steps


@pytest.mark.parametrize("dialect", DIALECTS)
def test_the_seed_flows_pass_through_a_non_sticky_balancer(fleet: dict[str, Any], dialect: str) -> None:
    """Each dialect's flow succeeds step by step while roundrobin spreads its requests over three replicas."""
    steps = anyio.run(_flow, fleet["urls"][dialect], dialect)
    assert all(step.get("ok") is True for step in steps), json.dumps(steps)[:600]
    assert steps[-1]["result"]["result"] == 42


#: One client's key (the toolcat_client cookie a replica issues): its retries replay on any replica.
CLIENT = "0123456789abcdef0123456789abcdef"


def test_an_idempotent_retry_on_another_replica_replays_and_runs_once(fleet: dict[str, Any]) -> None:
    """The same keyed call sent to all three replicas at once runs once; every other answer is the replay."""
    replicas = fleet["pools"]["gateway"]
    key = f"fleet-{time.time_ns()}"
    arguments = {"op": "util.math.eval", "args": {"expression": "20 + 22"}, "idempotency_key": key}
    answers: list[dict[str, Any]] = []

    async def send_all() -> None:
        async def one(url: str) -> None:
            answer = await anyio.to_thread.run_sync(call, url, "tool_exec", arguments, 30.0, CLIENT)
            answers.append(answer["result"]["structuredContent"])

        async with anyio.create_task_group() as group:
            for replica in replicas:
                group.start_soon(one, replica.url)

    anyio.run(send_all)
    retry = call(replicas[1].url, "tool_exec", arguments, client=CLIENT)["result"]["structuredContent"]
    answers.append(retry)
    assert all(a["ok"] and a["result"]["result"] == 42 for a in answers)
    assert sum(1 for a in answers if not a["meta"].get("replayed")) == 1
    assert retry["meta"]["replayed"] is True


def test_every_answer_names_its_registry_version(fleet: dict[str, Any]) -> None:
    """Each replica's answer carries the registry_version it was read from, and all replicas agree."""
    versions = {
        call(r.url, "tool_help", {"path": "root"})["result"]["_meta"]["toolcat.dev/registry_version"]
        for r in fleet["pools"]["gateway"]
    }
    assert len(versions) == 1
    assert next(iter(versions))


def test_a_bounded_load_run_has_no_failed_call(fleet: dict[str, Any]) -> None:
    """50 clients for 10 s through the balancer: every call answers ok."""
    report = load_run(fleet["urls"]["gateway"], clients=50, seconds=10)
    print(
        f"\n3 replicas, 50 clients x 10 s: {report['ok']} calls, {report['throughput']:.0f}/s, p50 {report['p50_ms']:.1f} ms, p95 {report['p95_ms']:.1f} ms"
    )
    assert report["failures"] == []
    assert report["ok"] > 50


def test_health_and_readiness_follow_the_state_store(fleet: dict[str, Any]) -> None:
    """/healthz is alive and /readyz ready; with Redis stopped calls fail clearly and readyz says why; both recover."""
    replica = fleet["pools"]["gateway"][0]
    base = replica.url.removesuffix("/mcp")
    assert get(base, "/healthz") == (200, {"status": "alive"})
    assert get(base, "/readyz")[0] == 200
    redis = fleet["redis"]
    redis.stop()
    try:
        status, body = get(base, "/readyz")
        assert status == 503
        assert redis.url in body["reason"]
        keyed = {"op": "util.math.eval", "args": {"expression": "1+1"}, "idempotency_key": "during-outage"}
        failed = call(replica.url, "tool_exec", keyed)["result"]["structuredContent"]
        assert failed["error"]["code"] == "UNAVAILABLE"
        assert "retry" in " ".join(failed["error"]["hints"]).lower()
        assert replica.process.poll() is None  # nothing crashed
    finally:
        redis.start()
    deadline = time.monotonic() + 15
    while get(base, "/readyz")[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.2)
    recovered = call(replica.url, "tool_exec", keyed)["result"]["structuredContent"]
    assert recovered["ok"] is True


def test_killing_a_replica_mid_load_fails_only_its_calls_in_flight(fleet: dict[str, Any]) -> None:
    """SIGKILL one replica during a load run: at most the calls in flight on it fail, and each is retryable."""
    victim = fleet["pools"]["gateway"][2]
    clients = 20
    report = load_run(fleet["urls"]["gateway"], clients=clients, seconds=4, during=lambda: victim.stop("kill"))
    assert len(report["failures"]) <= clients  # one call in flight per client at most
    # a call cut mid-answer by the kill: a 50x from HAProxy, a refused connection, or a body cut short
    assert all(("HTTP 50" in f) or ("Error" in f) or ("IncompleteRead" in f) for f in report["failures"]), report[
        "failures"
    ]
    retried = call(fleet["urls"]["gateway"], "tool_exec", {"op": "util.math.eval", "args": {"expression": "2*21"}})
    assert retried["result"]["structuredContent"]["result"]["result"] == 42


def test_sigterm_stops_an_idle_replica_cleanly(example_build: Path, tmp_path: Path) -> None:
    """A ready replica told to stop drains (nothing in flight) and exits with 0, its port closed.

    What a drain does with calls in flight is pinned in test_fleet_units.py.
    """
    replica = Replica(
        example_build, f"sqlite:{tmp_path / 'state.db'}", "gateway", "--stateless", "--drain-seconds", "5"
    )
    try:
        replica.wait()
        base = replica.url.removesuffix("/mcp")
        assert get(base, "/readyz") == (200, {"status": "ready"})
        assert call(replica.url, "tool_help", {"path": "root"})["result"]["structuredContent"]["ok"]
        replica.process.send_signal(15)
        assert replica.process.wait(15) == 0
        with pytest.raises(ConnectionRefusedError):
            get(base, "/healthz")
    finally:
        replica.stop("kill")
