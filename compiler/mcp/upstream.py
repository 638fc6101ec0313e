"""The ``mcp`` handler kind: run a catalogue tool on an upstream MCP server.

A tool spec's ``handler: {type: mcp, command: [...] | "cmd string", url: "http://...", tool: "name",
env?: {...}, cwd?: "..."}`` names the server (which runs only when the host allows exactly that command,
env and cwd, or that url: :mod:`toolcat.reader.execution.network`) (a command to start over stdio, or a streamable
HTTP URL) and the upstream tool. Calls go through a session of the official SDK client that
is kept open for the next calls to the same server (:class:`UpstreamPool`); a call sends the
validated args and returns the tool's ``structuredContent`` (or its text, parsed as JSON
when it is JSON). An upstream ``isError`` result becomes an
``UPSTREAM_ERROR`` envelope carrying the upstream text; a server that cannot be reached is
``UNAVAILABLE``, and one that does not answer in time is ``UNAVAILABLE`` saying it timed out
(``details.reason: "timeout"``).

Bounds: each call has ``ctx.timeout`` seconds (the host's ``--timeout``), or less when the handler
names its own ``timeout``; a result is at most :data:`MAX_RESULT_BLOCKS` content blocks and
:data:`MAX_RESULT_BYTES` of text. A server that fails to start is not restarted at once: the next
attempts wait a backoff that doubles from :data:`BACKOFF_SECONDS` to :data:`MAX_BACKOFF_SECONDS`, and
resets once a session has stayed up :data:`STABLE_SECONDS`. An upstream's stderr goes to this
module's log (debug level), never to the CLI's output. Messages name an upstream by its program
name, or its URL's host and path, only (:func:`~toolcat.reader.execution.policy.server_label`): its
arguments, env values and URL query may hold secrets.

:func:`run_mcp` is the handler: toolcat declares it as the entry point ``mcp`` of the group
``toolcat.handlers`` (pyproject.toml), which the reader loads the first time a spec needs an ``mcp``
handler (:mod:`toolcat.reader.execution.handlers`). Importing this module registers nothing.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import json
import logging
import os
import shlex
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from ..format.envelope import ReaderError
from ..format.errors import ToolcatError
from ..format.interpreter import interpreter_argv
from ..reader.execution.policy import REDACTED, env_values, server_label
from ..reader.execution.runners import ExecContext

log = logging.getLogger(__name__)

#: Seconds allowed on top of the call timeout to start an upstream server and shake hands.
STARTUP_SECONDS = 20.0
#: Seconds given to the pooled sessions to close at exit.
CLOSE_SECONDS = 3.0
#: Seconds a pooled session has to answer the ping that precedes its reuse.
PING_SECONDS = 5.0
#: A result with more content blocks than this is refused (the SDK has parsed it; nothing more is built).
MAX_RESULT_BLOCKS = 10_000
#: A result whose text (and structured content) is larger than this is refused.
MAX_RESULT_BYTES = 8 * 1024 * 1024
#: The first wait before restarting an upstream server that failed to start; it doubles on each failure.
BACKOFF_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 60.0
#: A session that stayed up this long resets its server's backoff.
STABLE_SECONDS = 30.0
#: Upstream stderr lines longer than this are cut in the log.
_STDERR_LINE = 2000


def safe_handler(handler: dict[str, Any]) -> dict[str, Any]:
    """What an error's details may show of an mcp handler: type, tool, the server's label, env names (values redacted)."""
    out: dict[str, Any] = {"type": "mcp", "server": server_label(handler)}
    if isinstance(handler.get("tool"), str):
        out["tool"] = handler["tool"]
    if isinstance(handler.get("env"), dict) and handler["env"]:
        out["env"] = dict.fromkeys(sorted(map(str, handler["env"])), REDACTED)
    return out


def call_seconds(handler: dict[str, Any], host_seconds: float) -> float:
    """The handler's own ``timeout`` when it is a positive number below the host's, else the host's."""
    own = handler.get("timeout")
    if isinstance(own, int | float) and not isinstance(own, bool) and 0 < own < host_seconds:
        return float(own)
    return host_seconds


@dataclass(slots=True)
class Backoff:
    """Restart pacing of one upstream server: failures in a row, and when the next start may be tried."""

    failures: int = 0
    not_before: float = 0.0

    def failed(self, now: float) -> None:
        """One more failed start: wait twice as long before the next."""
        self.failures += 1
        self.not_before = now + min(MAX_BACKOFF_SECONDS, BACKOFF_SECONDS * 2 ** (self.failures - 1))

    def wait(self, now: float) -> float:
        """Seconds until a start may be tried (0: now)."""
        return max(0.0, self.not_before - now)


def _stderr_to_log(label: str) -> TextIO:
    """A writable file whose lines go to this module's log (debug), for an upstream server's stderr."""
    read_fd, write_fd = os.pipe()

    def pump() -> None:
        with os.fdopen(read_fd, "r", encoding="utf-8", errors="replace") as lines:
            for line in lines:
                log.debug("upstream %s stderr: %s", label, line.rstrip()[:_STDERR_LINE])

    threading.Thread(target=pump, name="toolcat-mcp-stderr", daemon=True).start()
    return os.fdopen(write_fd, "w", encoding="utf-8")


def server_command(handler: dict[str, Any], tool_id: str) -> list[str] | None:
    """The argv of a stdio upstream server (``python`` means this interpreter), or None for a URL."""
    command = handler.get("command")
    if command is None:
        return None
    if isinstance(command, str):
        argv = shlex.split(command)
    elif isinstance(command, list) and all(isinstance(part, str) for part in command):
        argv = list(command)
    else:
        raise ReaderError(
            "NOT_EXECUTABLE",
            f"the mcp handler of {tool_id} has a command that is neither a string nor a list of strings",
            help_path=tool_id,
        )
    if not argv:
        raise ReaderError("NOT_EXECUTABLE", f"the mcp handler of {tool_id} has an empty command", help_path=tool_id)
    return interpreter_argv(argv)  # python means this interpreter, as for `toolcat import mcp --command`


def result_size_problem(result: Any) -> str | None:
    """Why a CallToolResult is too large to hand on (too many blocks, too much text), else None."""
    blocks = len(result.content)
    if blocks > MAX_RESULT_BLOCKS:
        return f"{blocks} content blocks (at most {MAX_RESULT_BLOCKS})"
    size = 0
    for block in result.content:
        size += len(getattr(block, "text", "") or "") + len(getattr(block, "data", "") or "")
        if size > MAX_RESULT_BYTES:
            return f"more than {MAX_RESULT_BYTES} bytes of content (at most {MAX_RESULT_BYTES})"
    if result.structured_content is not None and len(json.dumps(result.structured_content)) > MAX_RESULT_BYTES:
        return f"structured content of more than {MAX_RESULT_BYTES} bytes"
    return None


def result_value(result: Any) -> Any:
    """A CallToolResult as a JSON value: structuredContent, else the text (parsed when it is JSON)."""
    if result.structured_content is not None:
        return result.structured_content
    texts = [block.text for block in result.content if getattr(block, "type", None) == "text"]
    others = [
        block.model_dump(mode="json", by_alias=True, exclude_none=True)
        for block in result.content
        if getattr(block, "type", None) != "text"
    ]
    if len(texts) == 1 and not others:
        try:
            return json.loads(texts[0])
        except ValueError:
            return {"text": texts[0]}
    out: dict[str, Any] = {"text": "\n".join(texts)}
    if others:
        out["content"] = others
    return out


class _Session:
    """One upstream server's session, owned by a task on the pool's event loop until it is stopped."""

    def __init__(self) -> None:
        self.session: Any = None
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.task: asyncio.Task[None] | None = None


class UpstreamPool:
    """Long-lived sessions to upstream MCP servers, one per server, shared by every call in this process.

    Starting a stdio server and shaking hands takes about a second; a pooled session answers the next
    calls in milliseconds. The sessions live on an event loop in a daemon thread; a session whose
    server dies (or that a call leaves in doubt) is dropped and reopened by the next call. Everything
    is closed at interpreter exit, or by :func:`close_upstreams`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sessions: dict[tuple[Any, ...], _Session] = {}
        self._backoff: dict[tuple[Any, ...], Backoff] = {}
        self._at_exit = False

    def call(self, handler: dict[str, Any], tool_id: str, args: dict[str, Any], timeout: float) -> Any:
        """Call the handler's upstream tool (blocking); returns the ``CallToolResult``."""
        with self._lock:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="toolcat-mcp-upstreams", daemon=True).start()
                self._loop = loop
                if not self._at_exit:
                    atexit.register(self.close)
                    self._at_exit = True
            loop = self._loop
        future = asyncio.run_coroutine_threadsafe(self._call(handler, tool_id, args, seconds=timeout), loop)
        try:
            return future.result(timeout + STARTUP_SECONDS + 1)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError from None

    async def _call(self, handler: dict[str, Any], tool_id: str, args: dict[str, Any], *, seconds: float) -> Any:
        key, opener, name = _server(handler, tool_id)
        entry = await self._live(key, opener, seconds)
        try:
            return await asyncio.wait_for(
                entry.session.call_tool(name, args, read_timeout_seconds=seconds), seconds + 1
            )
        except BaseException:
            self._drop(key, entry)  # a server that died during the call, or a call in doubt: start afresh next time
            raise

    async def _live(self, key: tuple[Any, ...], opener: Callable[[], Any], seconds: float) -> _Session:
        """A ready session to the server: the pooled one when it still answers a ping, else a new one."""
        entry = self._sessions.get(key)
        if entry is not None and entry.ready.done() and not entry.stop.is_set():
            try:
                await asyncio.wait_for(entry.session.send_ping(), PING_SECONDS)
            except Exception:  # the server went away since the last call: the tool call itself was not sent
                log.debug("upstream session %s does not answer a ping; reopening", key, exc_info=True)
                self._drop(key, entry)
            else:
                return entry
        entry = self._sessions.get(key)
        if entry is None:
            wait = self._backoff.get(key, Backoff()).wait(time.monotonic())
            if wait > 0:
                raise RestartPending(wait)
            entry = self._sessions[key] = _Session()
            entry.task = asyncio.ensure_future(self._serve(key, entry, opener))
        try:
            await asyncio.wait_for(asyncio.shield(entry.ready), seconds + STARTUP_SECONDS)
        except BaseException:
            self._drop(key, entry)
            raise
        return entry

    async def _serve(self, key: tuple[Any, ...], entry: _Session, opener: Callable[[], Any]) -> None:
        from mcp import ClientSession  # noqa: PLC0415 - only with the mcp SDK installed

        started = time.monotonic()
        try:
            async with opener() as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
                await session.initialize()
                entry.session = session
                entry.ready.set_result(None)
                await entry.stop.wait()
        except BaseException as exc:  # handed to the waiting call, or the server went away
            if not entry.ready.done():
                self._backoff.setdefault(key, Backoff()).failed(time.monotonic())
                entry.ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
            log.debug("upstream session %s ended", key[0], exc_info=True)
        finally:
            if entry.ready.done() and entry.ready.exception() is None:
                self._settle_backoff(key, time.monotonic() - started, died=not entry.stop.is_set())
            self._drop(key, entry)

    def _settle_backoff(self, key: tuple[Any, ...], uptime: float, *, died: bool) -> None:
        """A session that ran: sustained uptime forgets past failures; a server that died soon paces its restart."""
        if uptime >= STABLE_SECONDS:
            self._backoff.pop(key, None)
        elif died:
            self._backoff.setdefault(key, Backoff()).failed(time.monotonic())

    def _drop(self, key: tuple[Any, ...], entry: _Session) -> None:
        entry.stop.set()
        if self._sessions.get(key) is entry:
            del self._sessions[key]

    def close(self) -> None:
        """Close every session (their stdio servers exit) and stop the loop."""
        with self._lock:
            loop, self._loop = self._loop, None
        if loop is None:
            return

        async def close_all() -> None:
            entries = list(self._sessions.values())
            for entry in entries:
                entry.stop.set()
            tasks = [entry.task for entry in entries if entry.task is not None]
            if tasks:
                await asyncio.wait(tasks, timeout=CLOSE_SECONDS)

        try:
            asyncio.run_coroutine_threadsafe(close_all(), loop).result(CLOSE_SECONDS + 1)
        except Exception:  # best effort at exit
            log.debug("closing upstream sessions failed", exc_info=True)
        self._sessions.clear()  # a session that did not close in time belongs to the stopped loop: forget it
        loop.call_soon_threadsafe(loop.stop)


def _server(handler: dict[str, Any], tool_id: str) -> tuple[tuple[Any, ...], Callable[[], Any], str]:
    """(pool key, transport opener, upstream tool name) of a handler; NOT_EXECUTABLE when it names no server."""
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415 - mcp is an optional extra
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415 - mcp is an optional extra

    name = str(handler.get("tool") or tool_id.rsplit(".", 1)[-1])
    argv = server_command(handler, tool_id)
    url = handler.get("url")
    if argv is not None:
        env = {str(k): str(v) for k, v in (handler.get("env") or {}).items()}
        cwd = handler.get("cwd")
        values = env_values(env, tool_id)  # ${NAME} references read from the host's environment
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=values or None, cwd=cwd)
        label = server_label(handler)

        def open_stdio() -> Any:
            return stdio_client(params, errlog=_stderr_to_log(label))

        return ("stdio", tuple(argv), tuple(sorted(env.items())), cwd), open_stdio, name
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return ("http", url), lambda: streamable_http_client(url), name
    raise ReaderError(
        "NOT_EXECUTABLE", f"the mcp handler of {tool_id} needs a command or an http(s) url", help_path=tool_id
    )


POOL = UpstreamPool()


def close_upstreams() -> None:
    """Close the pooled upstream sessions now (they reopen on the next call)."""
    POOL.close()


class RestartPending(ToolcatError):  # noqa: N818 - a state, not a failure of this call's own
    """The upstream server failed to start recently; the next start waits ``seconds`` more."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"restarting in {seconds:.1f} s")
        self.seconds = seconds


def run_mcp(ctx: ExecContext) -> Any:
    """The registered ``mcp`` handler: a blocking call on a pooled session to the upstream server.

    The server must be one the host allows (``ctx.policy``: its exact command, env and cwd, or its
    url); the reader checks that before it calls a handler, and this checks it again.
    """
    refusal = ctx.policy.refusal(ctx.tool_id, ctx.handler)
    if refusal is not None:
        raise refusal
    seconds = call_seconds(ctx.handler, ctx.timeout)
    try:
        result = POOL.call(ctx.handler, ctx.tool_id, ctx.args, seconds)
    except ReaderError:
        raise
    except Exception as exc:  # every failure of the call becomes an envelope
        raise _call_failure(ctx, exc, seconds) from None
    problem = result_size_problem(result)
    if problem is not None:
        raise ReaderError(
            "UPSTREAM_ERROR",
            f"{server_label(ctx.handler)} answered {ctx.tool_id} with a result too large to use: {problem}",
            details={"reason": "too_large", "max_blocks": MAX_RESULT_BLOCKS, "max_bytes": MAX_RESULT_BYTES},
            help_path=ctx.tool_id,
            hints=["Ask for less: narrow the query or page through the results."],
        )
    if result.is_error:
        name = ctx.handler.get("tool") or ctx.tool_id.rsplit(".", 1)[-1]
        text = "\n".join(str(getattr(b, "text", "")) for b in result.content if getattr(b, "type", None) == "text")
        raise ReaderError(
            "UPSTREAM_ERROR",
            f"{server_label(ctx.handler)} answered {name} with an error: {text[:500] or 'no message'}",
            details={"upstream_tool": name, "text": text[:MAX_ERROR_TEXT], "structured": result.structured_content},
            help_path=ctx.tool_id,
            hints=["Read the upstream message, fix the arguments and retry."],
            next_action={"op": "tool_help", "args": {"path": ctx.tool_id, "format": "full"}},
        )
    return result_value(result)


#: Of an upstream error's text, this much is kept in the envelope.
MAX_ERROR_TEXT = 20_000


def _call_failure(ctx: ExecContext, exc: BaseException, seconds: float) -> ReaderError:
    """The envelope error of a failed upstream call: timed out, restarting, or not reachable."""
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415 - only with the mcp SDK installed
    from mcp_types import REQUEST_TIMEOUT  # noqa: PLC0415 - same

    log.debug("mcp handler of %s failed", ctx.tool_id, exc_info=exc)
    inner = _first_leaf(exc)
    if isinstance(inner, ReaderError):
        return inner
    label = server_label(ctx.handler)
    timed_out = isinstance(inner, TimeoutError) or (isinstance(inner, MCPError) and inner.error.code == REQUEST_TIMEOUT)
    if timed_out:
        return ReaderError(
            "UNAVAILABLE",
            f"{label} did not answer {ctx.tool_id} within {seconds:g} s (timed out)",
            help_path=ctx.tool_id,
            details={"reason": "timeout", "timeout_s": seconds},
            hints=["Retry later, or with a smaller request; the host can raise the limit with --timeout."],
        )
    if isinstance(inner, RestartPending):
        return ReaderError(
            "UNAVAILABLE",
            f"{label} failed to start recently; toolcat tries again in {inner.seconds:.1f} s",
            help_path=ctx.tool_id,
            details={"reason": "restarting", "retry_after_s": round(inner.seconds, 1)},
            hints=[f"Retry after {inner.seconds:.0f} s."],
        )
    return ReaderError(
        "UNAVAILABLE",
        f"cannot reach the upstream MCP server of {ctx.tool_id} ({label}): {type(inner).__name__}",
        help_path=ctx.tool_id,
        details={"reason": "unreachable", "handler": safe_handler(ctx.handler)},
        hints=["Check the handler's command or url; the server must speak MCP over stdio or streamable HTTP."],
    )


def _first_leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside nested exception groups (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
