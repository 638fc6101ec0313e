"""MCP over stdio that answers every line: bounded framing and JSON-RPC errors before the SDK sees a message.

The SDK's ``stdio_server`` reads unbounded lines and hands a line it cannot parse to the
session as an exception, which is logged and dropped: a client that sent garbage, a
JSON-RPC batch or a request nested deeper than pydantic's parser allows (about 200
levels) never gets a reply and waits forever. This transport frames stdin itself: a line
is at most :data:`MAX_LINE_BYTES` (a longer one is discarded as it streams, keeping only
its first bytes to find its id), nested at most :data:`MAX_DEPTH` levels, strict UTF-8
JSON; each bad line gets the JSON-RPC 2.0 error (``-32700`` parse error, ``-32600``
invalid request, ``-32602`` invalid params) with the request's id when it can be read,
and the server keeps serving. A bad notification or response gets no reply, as JSON-RPC
says. Valid messages go to the SDK's session unchanged. stdin and stdout are claimed with
:func:`claim_std_stream` (public ``os`` calls only, no SDK internals): the wire moves to a private
duplicate of the descriptor, and fd 1 then points at stderr (fd 0 at /dev/null), so a handler that
prints cannot corrupt the protocol stream.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, BinaryIO, cast

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)

#: A longer line is refused (and discarded as it streams, so memory stays bounded).
MAX_LINE_BYTES = 4 * 1024 * 1024
#: Deeper JSON is refused; MCP messages are shallow (a tool's arguments sit at level 3).
MAX_DEPTH = 64
#: Of an over-long line, the first bytes kept to find the request's id.
ID_PREFIX_BYTES = 64 * 1024
READ_CHUNK_BYTES = 64 * 1024
#: Lines longer than this are checked in a worker thread, so the event loop keeps serving.
INLINE_CHECK_BYTES = 64 * 1024
_MESSAGE_PREVIEW = 200
_INTERESTING = re.compile(r'"|[\[{]+|[\]}]+')
_SPACE = re.compile(r"\s*")


@dataclass(frozen=True, slots=True)
class Oversize:
    """A line longer than the limit: its first bytes and its full length."""

    prefix: bytes
    size: int


@dataclass(frozen=True, slots=True)
class Reply:
    """A JSON-RPC error this transport answers itself, for a line the SDK must not see."""

    id: str | int | None
    code: int
    message: str

    def to_json(self) -> str:
        """The error response as one JSON line (without the newline)."""
        return json.dumps(
            {"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}},
            ensure_ascii=False,
            separators=(",", ":"),
        )


@dataclass(frozen=True, slots=True)
class Drop:
    """A line that gets no reply (a blank line, or a bad notification or response), and why."""

    reason: str


class LineFramer:
    """Splits a byte stream on newlines into lines of at most ``max_bytes``; a longer line becomes :class:`Oversize`."""

    def __init__(self, max_bytes: int = MAX_LINE_BYTES, prefix_bytes: int = ID_PREFIX_BYTES) -> None:
        self.max_bytes = max_bytes
        self.prefix_bytes = prefix_bytes
        self._buffer = bytearray()
        self._dropping: bytes | None = None
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[bytes | Oversize]:
        """The lines ``chunk`` completes; the unfinished tail is kept (or counted, when already too long)."""
        lines: list[bytes | Oversize] = []
        start = 0
        while True:
            newline = chunk.find(b"\n", start)
            end = newline if newline >= 0 else len(chunk)
            if self._dropping is not None:
                self._dropped += end - start
            else:
                self._buffer += chunk[start:end]
                if len(self._buffer) > self.max_bytes:
                    self._dropping = bytes(self._buffer[: self.prefix_bytes])
                    self._dropped = len(self._buffer)
                    self._buffer.clear()
            if newline < 0:
                return lines
            lines.append(self._take())
            start = newline + 1

    def finish(self) -> list[bytes | Oversize]:
        """At end of input: the last line when it had no newline."""
        if self._dropping is None and not self._buffer:
            return []
        return [self._take()]

    def _take(self) -> bytes | Oversize:
        if self._dropping is not None:
            line: bytes | Oversize = Oversize(self._dropping, self._dropped)
            self._dropping, self._dropped = None, 0
            return line
        line = bytes(self._buffer)
        self._buffer.clear()
        return line


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _depth(value: Any) -> int:
    """How deeply ``value`` nests lists and objects, measured without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in children if isinstance(child, dict | list))
    return deepest


def _readable_id(value: Any) -> str | int | None:
    """A JSON-RPC id MCP accepts (a string or an integer), else None."""
    if isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    return None


def top_level_id(text: str) -> str | int | None:
    """The ``id`` member of the top-level object in (possibly truncated or too deep) JSON text, else None.

    A linear scan: strings are skipped by the json module's C scanner, brackets only
    counted, and the value after a depth-1 ``"id":`` decoded when it is a string or a number.
    """
    decoder = json.JSONDecoder()
    depth = 0
    pos = 0
    try:
        while (match := _INTERESTING.search(text, pos)) is not None:
            found = match.group()
            if found == '"':
                key, pos = json.decoder.scanstring(text, match.end())  # type: ignore[attr-defined]
                after = _SPACE.match(text, pos)
                colon = after.end() if after else pos
                if depth == 1 and key == "id" and text.startswith(":", colon):
                    value_at = _SPACE.match(text, colon + 1)
                    start = value_at.end() if value_at else colon + 1
                    if text[start : start + 1] in {"[", "{"}:
                        return None
                    value, _ = decoder.raw_decode(text, start)
                    return _readable_id(value)
                continue
            depth += len(found) if found[0] in "[{" else -len(found)
            pos = match.end()
    except ValueError:
        return None
    return None


def check_line(line: bytes | Oversize) -> SessionMessage | Reply | Drop:
    """What to do with one line of stdin: hand a valid message to the SDK, answer an error, or drop it."""
    if isinstance(line, Oversize):
        text = line.prefix.decode("utf-8", errors="replace")
        return Reply(
            top_level_id(text),
            types.INVALID_REQUEST,
            f"Invalid request: a message of {line.size} bytes is longer than the {MAX_LINE_BYTES}-byte limit "
            "of this server; send smaller arguments",
        )
    stripped = line.strip()
    if not stripped:
        return Drop("blank line")
    try:
        text = stripped.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Reply(
            None,
            types.PARSE_ERROR,
            f"Parse error: the line is not UTF-8 ({exc.reason} at byte {exc.start}); "
            "send one UTF-8 JSON-RPC message per line",
        )
    try:
        message = json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        return _too_deep(top_level_id(text))
    except ValueError as exc:
        return Reply(
            None, types.PARSE_ERROR, f"Parse error: {str(exc)[:_MESSAGE_PREVIEW]}; send one JSON-RPC message per line"
        )
    if isinstance(message, list):
        return Reply(
            None,
            types.INVALID_REQUEST,
            "Invalid request: JSON-RPC batches (arrays) are not supported by MCP; send one message object per line",
        )
    if not isinstance(message, dict):
        return Reply(
            None, types.INVALID_REQUEST, f"Invalid request: a message is a JSON object, not {type(message).__name__}"
        )
    return _check_message(message)


def _too_deep(request_id: str | int | None) -> Reply:
    return Reply(
        request_id,
        types.INVALID_REQUEST,
        f"Invalid request: the message nests deeper than {MAX_DEPTH} levels; flatten its arguments",
    )


def _check_message(message: dict[str, Any]) -> SessionMessage | Reply | Drop:
    """A parsed JSON object: a request, notification or response the SDK accepts, or the error it deserves."""
    has_id = "id" in message
    request_id = _readable_id(message.get("id"))
    method = message.get("method")
    is_notification = "method" in message and not has_id
    is_response = "method" not in message and ("result" in message or "error" in message)
    if _depth(message) > MAX_DEPTH:
        return Drop("too deep") if is_notification or is_response else _too_deep(request_id)
    problem = None
    if message.get("jsonrpc") != "2.0":
        problem = "'jsonrpc' must be \"2.0\""
    elif has_id and request_id is None:
        problem = "'id' must be a string or an integer"
    elif "method" in message and not isinstance(method, str):
        problem = "'method' must be a string"
    elif "method" not in message and not is_response:
        problem = "a message needs 'method' (a request or notification) or 'result'/'error' (a response)"
    if problem is not None:
        if is_notification or is_response:
            return Drop(problem)
        return Reply(request_id, types.INVALID_REQUEST, f"Invalid request: {problem}")
    if "params" in message and not isinstance(message["params"], dict):
        if is_notification:
            return Drop("params is not an object")
        return Reply(
            request_id,
            types.INVALID_PARAMS,
            f"Invalid params: 'params' of {method!r:.80} must be an object, not {type(message['params']).__name__}",
        )
    try:
        parsed = types.jsonrpc_message_adapter.validate_python(message, by_name=False)
    except Exception as exc:
        first = str(exc).splitlines()
        detail = " ".join(first[:3])[:_MESSAGE_PREVIEW]
        if is_notification or is_response:
            return Drop(detail)
        return Reply(request_id, types.INVALID_REQUEST, f"Invalid request: {detail}")
    return SessionMessage(parsed)


def _divert_stdin() -> int:
    return os.open(os.devnull, os.O_RDONLY)


def _divert_stdout() -> int:
    try:
        return os.dup(2)
    except OSError:
        return os.open(os.devnull, os.O_WRONLY)


def claim_std_stream(fd: int, stream: Any, mode: str) -> tuple[BinaryIO, Callable[[], None] | None]:
    """Serve the wire from a private duplicate of ``fd`` and point ``fd`` elsewhere; returns (stream, undo).

    Stray writes to fd 1 (a handler's ``print``, a C library) then land on stderr, and stray reads of fd 0
    see end of file, instead of corrupting or stealing protocol bytes. When the descriptors cannot be
    duplicated (an embedded interpreter, a test's fake stream) the sys stream's buffer is served in place.
    """
    try:
        if stream.fileno() != fd:
            return stream.buffer, None
        private = os.dup(fd)
    except (AttributeError, OSError, ValueError):
        return stream.buffer, None
    diversion = _divert_stdin() if fd == 0 else _divert_stdout()
    with contextlib.suppress(OSError, ValueError):
        stream.flush()
    os.dup2(diversion, fd)
    os.close(diversion)
    wire = cast("BinaryIO", os.fdopen(private, mode))

    def undo() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, fd)
        with contextlib.suppress(OSError):
            wire.close()

    return wire, undo


@asynccontextmanager
async def stdio_transport(
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Serve MCP over stdin/stdout (or the given binary streams): yields the (read, write) streams for ``Server.run``."""
    release: list[Callable[[], None]] = []
    try:
        if stdin is None:
            stdin, undo = claim_std_stream(0, sys.stdin, "rb")
            if undo is not None:
                release.append(undo)
        if stdout is None:
            stdout, undo = claim_std_stream(1, sys.stdout, "wb")
            if undo is not None:
                release.append(undo)
        async with _serve_streams(stdin, stdout) as streams:
            yield streams
    finally:
        for undo in reversed(release):
            undo()


@asynccontextmanager
async def _serve_streams(stdin: BinaryIO, stdout: BinaryIO) -> AsyncIterator[tuple[Any, Any]]:
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    lock = anyio.Lock()

    async def write_line(text: str) -> None:
        data = (text + "\n").encode("utf-8")
        async with lock:
            await anyio.to_thread.run_sync(_write_all, stdout, data, abandon_on_cancel=True)

    async def handle(line: bytes | Oversize) -> None:
        size = line.size if isinstance(line, Oversize) else len(line)
        outcome = check_line(line) if size <= INLINE_CHECK_BYTES else await anyio.to_thread.run_sync(check_line, line)
        if isinstance(outcome, SessionMessage):
            await read_writer.send(outcome)
        elif isinstance(outcome, Reply):
            log.debug("answered a bad line with %d: %s", outcome.code, outcome.message)
            await write_line(outcome.to_json())
        else:
            log.debug("dropped a line without reply: %s", outcome.reason)

    reader_scope = anyio.CancelScope()

    async def read_stdin() -> None:
        framer = LineFramer()
        read = getattr(stdin, "read1", stdin.read)
        with reader_scope:
            async with read_writer:
                while chunk := await anyio.to_thread.run_sync(read, READ_CHUNK_BYTES, abandon_on_cancel=True):
                    for line in framer.feed(chunk):
                        await handle(line)
                for line in framer.finish():
                    await handle(line)

    async def write_stdout() -> None:
        async with write_reader:
            async for session_message in write_reader:
                await write_line(session_message.message.model_dump_json(by_alias=True, exclude_unset=True))

    async with anyio.create_task_group() as group:
        group.start_soon(read_stdin)
        group.start_soon(write_stdout)
        try:
            yield read_stream, write_stream
        finally:
            # The session has ended: stop reading, but let the writer flush the last responses.
            reader_scope.cancel()
            await write_stream.aclose()


def _write_all(stream: BinaryIO, data: bytes) -> None:
    stream.write(data)
    stream.flush()
