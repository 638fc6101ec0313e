"""The ``mcp`` handler kind: run a catalogue tool on an upstream MCP server.

A tool spec's ``handler: {type: mcp, command: [...] | "cmd string", url: "http://...", tool: "name",
env?: {...}, cwd?: "..."}`` names the server (a command to start over stdio, or a streamable
HTTP URL) and the upstream tool. Each call opens a session with the official SDK client,
calls the tool with the validated args and returns its ``structuredContent`` (or its text,
parsed as JSON when it is JSON). An upstream ``isError`` result becomes an
``UPSTREAM_ERROR`` envelope carrying the upstream text; a server that cannot be reached is
``UNAVAILABLE``.

Importing this module registers the handler with :func:`compiler.reader.execute.register_handler`;
the reader imports it lazily the first time it meets an ``mcp`` handler.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
import shlex
import sys
from typing import Any

from compiler.reader.envelope import ReaderError
from compiler.reader.execute import ExecContext, register_handler

log = logging.getLogger(__name__)

#: Seconds allowed on top of the call timeout to start an upstream server and shake hands.
STARTUP_SECONDS = 20.0
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
        raise ReaderError("NOT_EXECUTABLE", f"the mcp handler of {tool_id} has a command that is neither a string "
                                            "nor a list of strings", help_path=tool_id)
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
    others = [block.model_dump(mode="json", by_alias=True, exclude_none=True)
              for block in result.content if getattr(block, "type", None) != "text"]
    if len(texts) == 1 and not others:
        try:
            return json.loads(texts[0])
        except ValueError:
            return {"text": texts[0]}
    out: dict[str, Any] = {"text": "\n".join(texts)}
    if others:
        out["content"] = others
    return out


async def call_upstream(handler: dict[str, Any], tool_id: str, args: dict[str, Any],
                        timeout: float) -> Any:  # noqa: ASYNC109 - the reader's per-call timeout (anyio.fail_after)
    """Open a session on the upstream server, call its tool, close; returns the result value."""
    import anyio  # noqa: PLC0415 - only with the mcp SDK installed
    from mcp import ClientSession  # noqa: PLC0415
    from mcp.client.stdio import StdioServerParameters, stdio_client  # noqa: PLC0415
    from mcp.client.streamable_http import streamable_http_client  # noqa: PLC0415

    name = handler.get("tool") or tool_id.rsplit(".", 1)[-1]
    argv = server_command(handler, tool_id)
    url = handler.get("url")
    if argv is None and not (isinstance(url, str) and url.startswith(("http://", "https://"))):
        raise ReaderError("NOT_EXECUTABLE", f"the mcp handler of {tool_id} needs a command or an http(s) url",
                          help_path=tool_id)
    where = " ".join(argv) if argv is not None else str(url)
    with anyio.fail_after(timeout + STARTUP_SECONDS):
        if argv is not None:
            env = {str(k): str(v) for k, v in (handler.get("env") or {}).items()}
            params = StdioServerParameters(command=argv[0], args=argv[1:], env=env or None, cwd=handler.get("cwd"))
            transport: Any = stdio_client(params)
        else:
            transport = streamable_http_client(str(url))
        async with transport as (read_stream, write_stream), ClientSession(read_stream, write_stream) as session:
            await session.initialize()
            result = await session.call_tool(str(name), args, read_timeout_seconds=timeout)
    if result.is_error:
        text = "\n".join(str(getattr(b, "text", "")) for b in result.content if getattr(b, "type", None) == "text")
        raise ReaderError(
            "UPSTREAM_ERROR", f"{where} answered {name} with an error: {text[:500] or 'no message'}",
            details={"upstream_tool": name, "text": text, "structured": result.structured_content},
            help_path=tool_id, hints=["Read the upstream message, fix the arguments and retry."],
            next_action={"op": "tool_help", "args": {"path": tool_id, "format": "full"}},
        )
    return result_value(result)


def run_mcp(ctx: ExecContext) -> Any:
    """The registered ``mcp`` handler: a blocking call (it runs its own event loop when none is running here)."""
    import anyio  # noqa: PLC0415

    def run() -> Any:
        return anyio.run(call_upstream, ctx.handler, ctx.tool_id, ctx.args, ctx.timeout)

    try:
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return run()
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:  # an event loop runs in this thread
            return pool.submit(run).result()
    except ReaderError:
        raise
    except TimeoutError:
        raise ReaderError("UNAVAILABLE", f"the upstream MCP server of {ctx.tool_id} did not answer in time",
                          help_path=ctx.tool_id, details={"timeout_s": ctx.timeout + STARTUP_SECONDS}) from None
    except Exception as exc:
        log.debug("mcp handler of %s failed", ctx.tool_id, exc_info=True)
        inner = _first_leaf(exc)
        if isinstance(inner, ReaderError):
            raise inner from None
        raise ReaderError(
            "UNAVAILABLE", f"cannot reach the upstream MCP server of {ctx.tool_id}: {type(inner).__name__}: {inner}",
            help_path=ctx.tool_id, details={"handler": {k: v for k, v in ctx.handler.items() if k != "env"}},
            hints=["Check the handler's command or url; the server must speak MCP over stdio or streamable HTTP."],
        ) from None


def _first_leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside nested exception groups (task groups wrap errors)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


register_handler("mcp", run_mcp)
