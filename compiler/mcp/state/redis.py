"""``--state redis://HOST:PORT/DB``: serve's state in a Redis server that replicas on many hosts share.

The ``redis`` client library (the ``[fleet]`` extra), imported when this backend is chosen. A claim is
``SET claim NX PX lease`` (atomic: one replica wins); an answer is kept with its TTL as the key's own
expiry, and a Lua script keeps the caps (max keys, max bytes: the oldest go first) in one atomic step,
timed by the Redis server's clock so replicas' clocks need not agree. The working sets are keys with
a TTL; audit records go to a capped stream. A password comes from ``$TOOLCAT_STATE_PASSWORD``, never
from the URL (which is shown in logs and errors). Every Redis failure is ReaderError UNAVAILABLE;
the client reconnects on its own once the server is back.
"""

from __future__ import annotations

import json
import logging
from typing import Any
from urllib.parse import urlsplit

from ...format import settings
from ...format.types import Json
from ...reader.audit import AuditLog, AuditSink
from .base import (
    CLIENT_TTL_SECONDS,
    MAX_AUDIT_RECORDS,
    MAX_CLIENTS,
    PASSWORD_ENV,
    ClientStates,
    SharedIdempotency,
    StateStore,
    StoredAudit,
    unavailable,
)

log = logging.getLogger(__name__)

#: Every key this backend writes starts with this.
PREFIX = "toolcat:"
#: Seconds to connect and to wait for one answer: a dead server must fail a call quickly, not hang it.
SOCKET_SECONDS = 2.0

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# KEYS: record, index (zset key -> time), sizes (hash), bytes (counter); ARGV: key, value, size, ttl, max_keys,
# max_bytes, record prefix. Times are the server's.
_SAVE = """
local t = redis.call('time')
local now = tonumber(t[1]) + tonumber(t[2]) / 1000000
local key, size, ttl = ARGV[1], tonumber(ARGV[3]), tonumber(ARGV[4])
local max_keys, max_bytes, prefix = tonumber(ARGV[5]), tonumber(ARGV[6]), ARGV[7]
local function drop(k)
  local s = redis.call('hget', KEYS[3], k)
  if s then redis.call('incrby', KEYS[4], -tonumber(s)) end
  redis.call('hdel', KEYS[3], k)
  redis.call('zrem', KEYS[2], k)
  redis.call('del', prefix .. k)
end
drop(key)
redis.call('set', KEYS[1], ARGV[2], 'PX', math.floor(ttl * 1000))
redis.call('zadd', KEYS[2], now, key)
redis.call('hset', KEYS[3], key, size)
redis.call('incrby', KEYS[4], size)
for _, k in ipairs(redis.call('zrangebyscore', KEYS[2], '-inf', '(' .. (now - ttl))) do drop(k) end
while redis.call('zcard', KEYS[2]) > max_keys or tonumber(redis.call('get', KEYS[4]) or '0') > max_bytes do
  local oldest = redis.call('zrange', KEYS[2], 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
end
return 1
"""


def parse_redis_url(url: str) -> str:
    """``redis://`` or ``rediss://`` (TLS) ``HOST[:PORT][/DB]`` checked; ValueError (with the fix) for another shape.

    TLS verifies the server's certificate against the system's CAs (redis-py's default for ``rediss``).
    """
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss") or not parts.hostname:
        raise ValueError(
            f"--state {url!r}: a Redis store is redis://HOST:PORT/DB (or rediss:// over TLS), "
            "e.g. redis://127.0.0.1:6379/0"
        )
    if parts.password or parts.username:
        raise ValueError(
            f"--state: put no user or password in the Redis URL (it is shown in logs); set ${PASSWORD_ENV} instead"
        )
    database = parts.path.strip("/") or "0"
    if not database.isdigit() or parts.query or parts.fragment:
        raise ValueError(f"--state {url!r}: the Redis database is a number, as in redis://HOST:PORT/0")
    return f"{parts.scheme}://{parts.hostname}:{parts.port or 6379}/{database}"


class RedisIdempotency(SharedIdempotency):
    """Claims as NX keys with a lease, answers as expiring keys, the caps kept by one script."""

    def __init__(self, state: RedisState, **limits: Any) -> None:
        super().__init__(**limits)
        self.state = state
        self._release = state.client.register_script(_RELEASE)
        self._save = state.client.register_script(_SAVE)

    def claim(self, key: str, token: str) -> bool:
        """``SET NX PX``: True when this call took the key."""
        lease = int(self.lease_seconds * 1000)
        return bool(self.state.call(lambda r: r.set(f"{PREFIX}claim:{key}", token, nx=True, px=lease)))

    def release(self, key: str, token: str) -> None:
        """Delete the claim if it is still ours."""
        self.state.call(lambda _r: self._release(keys=[f"{PREFIX}claim:{key}"], args=[token]))

    def load(self, key: str) -> tuple[str, str, str] | None:
        """The kept answer (the key expires with the TTL)."""
        raw = self.state.call(lambda r: r.get(f"{PREFIX}idem:{key}"))
        if raw is None:
            return None
        tool_id, digest, text = json.loads(raw)
        return str(tool_id), str(digest), str(text)

    def save(self, key: str, tool_id: str, digest: str, text: str, size: int) -> None:
        """Keep the answer and apply the caps, atomically."""
        value = json.dumps([tool_id, digest, text], ensure_ascii=False)
        keys = [f"{PREFIX}idem:{key}", f"{PREFIX}idem-index", f"{PREFIX}idem-sizes", f"{PREFIX}idem-bytes"]
        args: list[str | int | float] = [
            key,
            value,
            size,
            self.ttl_seconds,
            self.max_keys,
            self.max_bytes,
            f"{PREFIX}idem:",
        ]
        self.state.call(lambda _r: self._save(keys=keys, args=args))

    def count(self) -> int:
        """Answers kept."""
        return int(self.state.call(lambda r: r.zcard(f"{PREFIX}idem-index")))


class RedisClients(ClientStates):
    """Working sets as expiring keys, the newest MAX_CLIENTS of them."""

    def __init__(self, state: RedisState) -> None:
        self.state = state

    def load(self, client: str) -> list[Json]:
        """The client's records (empty once expired)."""
        raw = self.state.call(lambda r: r.get(f"{PREFIX}client:{client}"))
        records: list[Json] = json.loads(raw) if raw is not None else []
        return records

    def save(self, client: str, records: list[Json]) -> None:
        """Replace the client's records; the least recently changed clients leave beyond MAX_CLIENTS."""

        def run(r: Any) -> None:
            pipe = r.pipeline()
            pipe.set(f"{PREFIX}client:{client}", json.dumps(records), px=int(CLIENT_TTL_SECONDS * 1000))
            pipe.zadd(f"{PREFIX}clients", {client: float(r.time()[0])})
            pipe.execute()
            for old, _ in r.zpopmin(f"{PREFIX}clients", max(0, int(r.zcard(f"{PREFIX}clients")) - MAX_CLIENTS)):
                r.delete(f"{PREFIX}client:{old.decode() if isinstance(old, bytes) else old}")

        self.state.call(run)

    def clear_all(self) -> None:
        """Forget every client's records."""

        def run(r: Any) -> None:
            for client in r.zrange(f"{PREFIX}clients", 0, -1):
                r.delete(f"{PREFIX}client:{client.decode() if isinstance(client, bytes) else client}")
            r.delete(f"{PREFIX}clients")

        self.state.call(run)


class RedisAudit(StoredAudit):
    """Audit records in a capped stream (``XADD ... MAXLEN ~``); a failed write is logged once."""

    def __init__(self, state: RedisState, session_id: str) -> None:
        super().__init__(session_id)
        self.state = state

    def keep(self, line: str) -> None:
        """Add the line to the stream, trimmed to about MAX_AUDIT_RECORDS."""
        self.state.call(lambda r: r.xadd(f"{PREFIX}audit", {"line": line}, maxlen=MAX_AUDIT_RECORDS, approximate=True))


class RedisState(StateStore):
    """serve's state in one Redis database, shared by every replica that names it."""

    shared = True
    many_hosts = True

    def __init__(self, url: str, **limits: Any) -> None:
        import redis  # noqa: PLC0415 - the [fleet] extra, needed only for this backend

        self.name = parse_redis_url(url)
        self._errors: tuple[type[BaseException], ...] = (redis.RedisError,)
        self.client = redis.Redis.from_url(
            self.name,
            password=settings.get(PASSWORD_ENV) or None,
            socket_timeout=SOCKET_SECONDS,
            socket_connect_timeout=SOCKET_SECONDS,
            health_check_interval=10,
            retry_on_timeout=False,
        )
        self.idempotency = RedisIdempotency(self, **limits)
        self.clients = RedisClients(self)

    def call(self, run: Any) -> Any:
        """``run(client)``, any Redis failure turned into ReaderError UNAVAILABLE (the pool reconnects later)."""
        try:
            return run(self.client)
        except self._errors as exc:
            raise unavailable(self.name, exc) from exc

    def audit_sink(self, session_id: str, path: str | None) -> AuditSink | None:
        """The --audit file when given, else the ``toolcat:audit`` stream."""
        return AuditLog(path, session_id) if path is not None else RedisAudit(self, session_id)

    def audit_records(self) -> list[Json]:
        """Every audit record kept, oldest first."""
        entries = self.call(lambda r: r.xrange(f"{PREFIX}audit"))
        return [json.loads(fields[b"line"]) for _, fields in entries]

    def ping(self) -> None:
        """PING; UNAVAILABLE when Redis does not answer."""
        self.call(lambda r: r.ping())

    def close(self) -> None:
        """Close the connection pool."""
        try:
            self.client.close()
        except self._errors as exc:
            log.debug("closing the Redis client: %s", exc)
