"""The ``mcp`` handler kind: run a catalogue tool on an upstream MCP server.

A tool spec's ``handler: {type: mcp, command: [...] | "cmd string", url: "http://...", tool: "name",
env?: {...}, cwd?: "..."}`` names the server (which runs only when the host allows exactly that command,
env and cwd, or that url: :mod:`toolcat.reader.execution.network`) (a command to start over stdio, or a streamable
HTTP URL) and the upstream tool. Calls go through a session of the official SDK client that
is kept open for the next calls to the same server (:class:`UpstreamPool`); a call sends the
validated args and returns the tool's ``structuredContent`` (or its text, parsed as JSON
when it is JSON). An upstream ``isError`` result becomes an
``UPSTREAM_ERROR`` envelope carrying the upstream text; a server that cannot be reached is
``UNAVAILABLE``.

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
import shlex
import sys
import threading
from collections.abc import Callable
from typing import Any

from ..format.envelope import ReaderError
from ..reader.execution.policy import env_values, mcp_target, redacted_handler
from ..reader.execution.runners import ExecContext

log = logging.getLogger(__name__)

#: Seconds allowed on top of the call timeout to start an upstream server and shake hands.
STARTUP_SECONDS = 20.0
#: Seconds given to the pooled sessions to close at exit.
CLOSE_SECONDS = 3.0
#: Seconds a pooled session has to answer the ping that precedes its reuse.
PING_SECONDS = 5.0
#: Command names replaced by the running interpreter, so ``[python, server.py]`` works in a venv.
PYTHON_NAMES = ("python", "python3")


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
    if argv[0] in PYTHON_NAMES:
        argv[0] = sys.executable
    return argv


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

        try:
            async with opener() as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
                await session.initialize()
                entry.session = session
                entry.ready.set_result(None)
                await entry.stop.wait()
        except BaseException as exc:  # handed to the waiting call, or the server went away
            if not entry.ready.done():
                entry.ready.set_exception(exc if isinstance(exc, Exception) else ConnectionError(str(exc)))
            log.debug("upstream session %s ended", key, exc_info=True)
        finally:
            self._drop(key, entry)

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
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    name = str(handler.get("tool") or tool_id.rsplit(".", 1)[-1])
    argv = server_command(handler, tool_id)
    url = handler.get("url")
    if argv is not None:
        env = {str(k): str(v) for k, v in (handler.get("env") or {}).items()}
        cwd = handler.get("cwd")
        values = env_values(env, tool_id)  # ${NAME} references read from the host's environment
        params = StdioServerParameters(command=argv[0], args=argv[1:], env=values or None, cwd=cwd)
        return ("stdio", tuple(argv), tuple(sorted(env.items())), cwd), lambda: stdio_client(params), name
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return ("http", url), lambda: streamable_http_client(url), name
    raise ReaderError(
        "NOT_EXECUTABLE", f"the mcp handler of {tool_id} needs a command or an http(s) url", help_path=tool_id
    )


POOL = UpstreamPool()


def close_upstreams() -> None:
    """Close the pooled upstream sessions now (they reopen on the next call)."""
    POOL.close()


def run_mcp(ctx: ExecContext) -> Any:
    """The registered ``mcp`` handler: a blocking call on a pooled session to the upstream server.

    The server must be one the host allows (``ctx.policy``: its exact command, env and cwd, or its
    url); the reader checks that before it calls a handler, and this checks it again.
    """
    refusal = ctx.policy.refusal(ctx.tool_id, ctx.handler)
    if refusal is not None:
        raise refusal
    where = mcp_target(ctx.handler)
    try:
        result = POOL.call(ctx.handler, ctx.tool_id, ctx.args, ctx.timeout)
    except ReaderError:
        raise
    except TimeoutError:
        raise ReaderError(
            "UNAVAILABLE",
            f"the upstream MCP server of {ctx.tool_id} did not answer in time",
            help_path=ctx.tool_id,
            details={"timeout_s": ctx.timeout + STARTUP_SECONDS},
        ) from None
    except Exception as exc:
        log.debug("mcp handler of %s failed", ctx.tool_id, exc_info=True)
        inner = _first_leaf(exc)
        if isinstance(inner, ReaderError):
            raise inner from None
        if isinstance(inner, TimeoutError):
            raise ReaderError(
                "UNAVAILABLE",
                f"the upstream MCP server of {ctx.tool_id} did not answer in time",
                help_path=ctx.tool_id,
                details={"timeout_s": ctx.timeout + STARTUP_SECONDS},
            ) from None
        raise ReaderError(
            "UNAVAILABLE",
            f"cannot reach the upstream MCP server of {ctx.tool_id}: {type(inner).__name__}: {inner}",
            help_path=ctx.tool_id,
            details={"handler": redacted_handler(ctx.handler)},
            hints=["Check the handler's command or url; the server must speak MCP over stdio or streamable HTTP."],
        ) from None
    if result.is_error:
        name = ctx.handler.get("tool") or ctx.tool_id.rsplit(".", 1)[-1]
        text = "\n".join(str(getattr(b, "text", "")) for b in result.content if getattr(b, "type", None) == "text")
        raise ReaderError(
            "UPSTREAM_ERROR",
            f"{where} answered {name} with an error: {text[:500] or 'no message'}",
            details={"upstream_tool": name, "text": text, "structured": result.structured_content},
            help_path=ctx.tool_id,
            hints=["Read the upstream message, fix the arguments and retry."],
            next_action={"op": "tool_help", "args": {"path": ctx.tool_id, "format": "full"}},
        )
    return result_value(result)


def _first_leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside nested exception groups (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc
