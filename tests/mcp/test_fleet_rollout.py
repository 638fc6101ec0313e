"""A fleet through a rebuild and a rolling stop: three replicas sharing Redis behind HAProxy (no stickiness).

* a rebuild of the folder the replicas serve: every answer names one registry_version, and all replicas
  move to the new one within the reload interval (``--poll``);
* SIGTERM to one replica while calls run on it: those calls finish, new calls go to the other replicas
  (HAProxy retries the draining replica's 503) or get the retryable refusal, and the replica exits 0.

Skipped with the reason where redis-server or haproxy is missing (`make fleet` installs them).
"""

from __future__ import annotations

import contextlib
import http.client
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from fleet_support import MISSING, SKIP_REASON, Replica, call, haproxy, redis_server
from support import write_tree

from toolcat.build import build

pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(MISSING), reason=SKIP_REASON)]

POLL_SECONDS = 0.5  # fleet_support.Replica serves with --poll 0.5
VERSION = "toolcat.dev/registry_version"
SLOW_MODULE = '''"""A python handler that takes its time (the fleet's drain test)."""
import time


def nap(args):
    time.sleep(float(args["seconds"]))
    return {"slept": float(args["seconds"])}
'''


def _tree(summary: str) -> dict[str, Any]:
    """A two-tool catalogue; ``summary`` changes the registry_version."""
    schema = {"type": "object", "properties": {"expression": {"type": "string"}}, "required": ["expression"]}
    tools = [
        {"id": "fleet.math.eval", "summary": summary, "kind": "read", "args_schema": schema},
        {
            "id": "fleet.slow.nap",
            "summary": "Sleep for a while, then answer.",
            "kind": "read",
            "args_schema": {"type": "object", "properties": {"seconds": {"type": "number", "maximum": 10}}},
            "handler": "fleet_slow:nap",
        },
    ]
    tools[0]["handler"] = "toolcat.examples.util:util_math_eval"
    return {
        "_node.yaml": {"title": "Fleet", "summary": "A catalogue the fleet rebuilds."},
        "fleet/_node.yaml": {"title": "Fleet tools", "summary": "Arithmetic and a slow tool."},
        "fleet/tools.yaml": {"tools": tools},
    }


@pytest.fixture(scope="module")
def rollout(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """A private build served by three gateway replicas (Redis state, the slow handler importable) behind HAProxy."""
    root = tmp_path_factory.mktemp("rollout")
    write_tree(root / "handlers", {"fleet_slow.py": SLOW_MODULE})
    src, out = root / "src", root / "build"
    build(write_tree(src, _tree("Evaluate an arithmetic expression.")), out)
    env = {"PYTHONPATH": str(root / "handlers")}
    with redis_server() as redis, contextlib.ExitStack() as stack:
        pool = [Replica(out, redis.url, "gateway", "--drain-seconds", "15", env=env) for _ in range(3)]
        for replica in pool:
            stack.callback(replica.stop, "kill")
        for replica in pool:
            replica.wait()
        urls = stack.enter_context(haproxy({"gateway": pool}, root))
        yield {"src": src, "out": out, "pool": pool, "url": urls["gateway"]}


def _exec(url: str, expression: str = "6*7") -> tuple[str, str]:
    """One tool_exec: (the version its _meta names, the version its envelope names)."""
    answer = call(url, "tool_exec", {"op": "fleet.math.eval", "args": {"expression": expression}})["result"]
    assert answer["structuredContent"]["ok"] is True, answer
    return answer["_meta"][VERSION], answer["structuredContent"]["meta"]["registry_version"]


def test_replicas_converge_on_a_rebuilt_catalogue_within_the_reload_interval(rollout: dict[str, Any]) -> None:
    """Rebuild the served folder: each answer names one version, and every replica answers the new one within --poll."""
    pool: list[Replica] = rollout["pool"]
    old = {_exec(r.url) for r in pool}
    assert len(old) == 1
    ((old_version, _),) = old
    build(write_tree(rollout["src"], _tree("Evaluate an arithmetic expression, exactly.")), rollout["out"])
    swapped = time.monotonic()
    seen: dict[int, list[str]] = {r.port: [] for r in pool}
    converged: dict[int, float] = {}
    while len(converged) < len(pool) and time.monotonic() - swapped < 15:
        for replica in pool:
            named, enveloped = _exec(replica.url)
            assert named == enveloped  # one version inside one answer
            seen[replica.port].append(named)
            if named != old_version and replica.port not in converged:
                converged[replica.port] = time.monotonic() - swapped
        time.sleep(0.05)
    new_versions = {versions[-1] for versions in seen.values()}
    assert len(new_versions) == 1
    assert new_versions != {old_version}
    for versions in seen.values():  # once on the new version, a replica never answers the old one again
        assert old_version not in versions[versions.index(versions[-1]) :]
    slowest = max(converged.values())
    print(f"\nreplicas converged {sorted(round(s, 2) for s in converged.values())} s after the swap (--poll 0.5)")
    assert slowest <= POLL_SECONDS + 1.5  # the poll interval, plus a loaded 2-core machine's scheduling
    through = {_exec(rollout["url"]) for _ in range(6)}
    assert through == {(versions[-1], versions[-1]) for versions in seen.values()}


def _refused_retryably(exc: BaseException) -> bool:
    return isinstance(exc, RuntimeError) and "HTTP 503" in str(exc) and "retry" in str(exc)


def test_sigterm_during_calls_finishes_them_and_new_calls_go_elsewhere(rollout: dict[str, Any]) -> None:
    """SIGTERM one replica with slow calls in flight: they all answer ok, new calls through HAProxy succeed, exit 0."""
    victim: Replica = rollout["pool"][0]
    slow_answers: list[Any] = []
    lock = threading.Lock()

    def slow_call() -> None:
        try:
            answer = call(victim.url, "tool_exec", {"op": "fleet.slow.nap", "args": {"seconds": 2}})
            outcome: Any = answer["result"]["structuredContent"]
        except (OSError, http.client.HTTPException, RuntimeError) as exc:
            outcome = exc
        with lock:
            slow_answers.append(outcome)

    in_flight = [threading.Thread(target=slow_call) for _ in range(4)]
    for thread in in_flight:
        thread.start()
    time.sleep(0.5)  # the four calls are running on the victim
    victim.process.terminate()
    time.sleep(0.2)
    with pytest.raises(RuntimeError) as refused:  # the victim itself refuses new work, retryably
        call(victim.url, "tool_exec", {"op": "fleet.math.eval", "args": {"expression": "1"}})
    through_balancer: list[Any] = []
    for n in range(12):
        try:
            through_balancer.append(_exec(rollout["url"], f"{n}+1"))
        except (OSError, http.client.HTTPException, RuntimeError) as exc:
            through_balancer.append(exc)
    for thread in in_flight:
        thread.join(30)
    assert victim.process.wait(20) == 0
    assert _refused_retryably(refused.value), refused.value
    assert len(slow_answers) == 4
    assert all(isinstance(a, dict) and a["ok"] and a["result"] == {"slept": 2.0} for a in slow_answers), slow_answers
    failed = [a for a in through_balancer if isinstance(a, BaseException)]
    assert all(_refused_retryably(f) for f in failed), failed  # at worst the retryable refusal
    assert len(failed) < len(through_balancer)  # and most went to the other replicas
