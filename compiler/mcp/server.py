"""An MCP server over a published catalogue: one dialect's discovery tools, prompts and skills.

The server exposes only the 2-5 discovery tools of the chosen dialect (their names,
descriptions, input and output schemas and annotations come from
:mod:`toolcat.reader.dialects`, the source the provider exports use too). A call runs
the matching :class:`toolcat.reader.Catalog` method in a worker thread and answers
with the result as JSON text plus ``structuredContent``; an error envelope from the
reader becomes an ``isError: true`` result carrying the envelope, and so does an input
that breaks the tool's input schema (so the model can correct itself). An unknown
tool name is a protocol error (``-32602``); malformed requests are rejected by the SDK.

The chosen dialect's system prompt is an MCP prompt; skills are MCP resources
(``toolcat://skills/<name>`` is level 2, ``toolcat://skills/<name>/<path>`` level 3),
read only when a client asks. A watcher polls the catalogue (a folder's catalog.json
mtime, or ``Catalog.refresh()`` for a URL); when a new registry_version is published it
swaps it in and tells every client that the tool and resource lists changed.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.context import HandlerResult, ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError

from .. import __version__
from ..reader import Catalog, error_envelope, is_error
from ..reader.dialects import DiscoveryTool, dialect_tools
from ..reader.envelope import ReaderError
from ..reader.field_errors import field_errors
from ..reader.schemaguard import MAX_ARGS_DEPTH, too_deep

log = logging.getLogger(__name__)

Json = dict[str, Any]

SKILL_SCHEME = "toolcat://skills/"
SYSTEM_PROMPT = "system_prompt"
TOOLS_PROMPT = "tools_prompt"
#: Folders are polled often (a stat is cheap); URLs less often (each poll is a conditional GET).
FOLDER_POLL_SECONDS = 1.0
URL_POLL_SECONDS = 30.0
#: Legacy (handshake) sessions kept for change notifications; the oldest are forgotten beyond this.
MAX_TRACKED_SESSIONS = 10_000
#: More skills than this are not walked for resources/list (each needs its spec).
MAX_LISTED_SKILLS = 500


@dataclass(frozen=True, slots=True)
class ServeOptions:
    """How ``toolcat serve`` runs: which catalogue, which dialect, which transport."""

    location: str
    dialect: str = "gateway"
    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    read_only: bool = False
    audit: str | None = None
    poll_seconds: float | None = None
    cache_dir: str | None = None
    #: Which handlers run (``Catalog.open(allow_handlers=)``); None: a folder's all, a URL's none.
    allow_handlers: dict[str, list[Any]] | None = None
    #: ``sha256:<hex>`` of the manifest file to serve (kept across refreshes).
    pin: str | None = None
    #: Folder the file.* tools work in (else $TOOLCAT_SANDBOX).
    sandbox: str | None = None


def _json_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _input_errors(tool: DiscoveryTool, arguments: Json) -> list[Json]:
    """Field errors of ``arguments`` against the tool's input schema (empty when valid)."""
    deep = too_deep(arguments, MAX_ARGS_DEPTH)
    if deep is not None:  # jsonschema recurses (and its messages repr the value): refuse before validating
        return [
            {
                "field": deep.removeprefix("$.") or "$",
                "message": f"nested deeper than {MAX_ARGS_DEPTH} lists/objects (or contains itself)",
                "expected": f"at most {MAX_ARGS_DEPTH} levels",
            }
        ]
    return field_errors(_validator(tool.name, tool.dialect).iter_errors(arguments), unexpected="argument")


@functools.cache
def _validator(name: str, dialect: str) -> Any:
    """The compiled input-schema validator of one discovery tool (jsonschema is a build-side dependency)."""
    from jsonschema import Draft202012Validator  # noqa: PLC0415 - loaded on the first call only

    tool = next(t for t in dialect_tools(dialect) if t.name == name)
    return Draft202012Validator(tool.input_schema)


def input_error_envelope(tool: DiscoveryTool, errors: list[Json]) -> Json:
    """The envelope answering arguments that break a discovery tool's input schema."""
    names = ", ".join(e["field"] for e in errors)
    return error_envelope(
        "VALIDATION_ERROR",
        f"{len(errors)} invalid argument(s) for {tool.name}: {names}",
        details={"field_errors": errors, "input_schema": tool.input_schema},
        hints=[f"Call {tool.name} again with arguments that match its input schema (details.input_schema)."],
        help_path="root",
    )


def output_schema(tool: DiscoveryTool) -> dict[str, Any]:
    """The outputSchema the server declares: dialects.py's, the single source for every export."""
    return tool.output_schema


def mcp_tool(tool: DiscoveryTool) -> dict[str, Any]:
    """The ``tools/list`` entry of a discovery tool."""
    return {**tool.as_mcp(), "outputSchema": output_schema(tool)}


def fallback_system_prompt(dialect: str, manifest: Json) -> str:
    """A system prompt written from the dialect's tool definitions, for builds without prompt sections."""
    counts = manifest.get("counts") or {}
    lines = [
        (
            f'You can use the tool catalogue "{manifest.get("title") or "catalogue"}" '
            f"({counts.get('tools', 0)} tools, {counts.get('skills', 0)} skills) through {len(dialect_tools(dialect))} "
            "discovery tools. Do not guess tool ids or argument names: browse or search, read a tool's "
            "definition, then run it. Every error carries help_path and next_action: follow them and retry."
        ),
        "",
    ]
    lines.extend(f"- {tool.name}: {tool.description}" for tool in dialect_tools(dialect))
    return "\n".join(lines)


def skill_uri(name: str, resource: str | None = None) -> str:
    """``toolcat://skills/<name>`` (level 2) or ``toolcat://skills/<name>/<resource>`` (level 3)."""
    base = SKILL_SCHEME + quote(name, safe="")
    return base if resource is None else f"{base}/{quote(resource, safe='/')}"


def parse_skill_uri(uri: str) -> tuple[str, str | None] | None:
    """(skill name, resource path or None) for a skill URI; None for any other URI."""
    if not uri.startswith(SKILL_SCHEME):
        return None
    name, _, resource = uri[len(SKILL_SCHEME) :].partition("/")
    if not name:
        return None
    return unquote(name), (unquote(resource) if resource else None)


class CatalogServer:
    """The MCP server of one catalogue and one dialect; transports call :meth:`run_stdio` or :meth:`run_http`."""

    def __init__(
        self,
        catalog: Catalog,
        dialect: str = "gateway",
        *,
        poll_seconds: float | None = None,
        watch_path: Path | None = None,
    ) -> None:
        self.catalog = catalog
        self.dialect = dialect
        self.tools = dialect_tools(dialect)
        self.by_name = {tool.name: tool for tool in self.tools}
        self.watch_path = watch_path
        self.poll_seconds = (
            poll_seconds
            if poll_seconds is not None
            else (FOLDER_POLL_SECONDS if watch_path is not None else URL_POLL_SECONDS)
        )
        self.bus = InMemorySubscriptionBus()
        self._sessions: dict[int, ServerSession] = {}
        self.changes = 0
        self.server: Server[Any] = Server(
            "toolcat",
            version=__version__,
            title=f"toolcat ({dialect} dialect)",
            instructions=self._instructions(),
            lifespan=self._lifespan,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_templates,
            on_read_resource=self._read_resource,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.server.middleware.append(self._track_sessions)

    # -- options ----------------------------------------------------------------------------
    def initialization_options(self) -> Any:
        """The initialize result: tools, prompts and resources, each announcing list changes."""
        return self.server.create_initialization_options(
            NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
        )

    def _instructions(self) -> str:
        manifest = self.catalog.manifest
        names = ", ".join(tool.name for tool in self.tools)
        return (
            f"{manifest.get('title') or 'A tool catalogue'}: {manifest.get('summary') or ''} "
            f"Discover and run its tools with {names}; the prompt '{SYSTEM_PROMPT}' explains the workflow."
        ).strip()

    # -- tools --------------------------------------------------------------------------------
    async def _list_tools(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool.model_validate(mcp_tool(tool)) for tool in self.tools])

    async def _call_tool(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.CallToolRequestParams,
    ) -> types.CallToolResult:
        tool = self.by_name.get(params.name)
        if tool is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown tool: {params.name!r:.120}",
                data={"tools": [t.name for t in self.tools]},
            )
        arguments = dict(params.arguments or {})
        result = await self.call(tool, arguments)
        failed = is_error(result) or result.get("ok") is False
        return types.CallToolResult(
            content=[types.TextContent(text=_json_text(result))], structured_content=result, is_error=failed
        )

    async def call(self, tool: DiscoveryTool, arguments: Json) -> Json:
        """Validate ``arguments`` against the tool's input schema, then run its Catalog method in a thread."""
        errors = _input_errors(tool, arguments)
        if errors:
            return input_error_envelope(tool, errors)
        method: Callable[..., Json] = getattr(self.catalog, tool.method)
        result = await anyio.to_thread.run_sync(functools.partial(method, **arguments))
        if not isinstance(result, dict):
            return error_envelope("INTERNAL", f"{tool.method} returned {type(result).__name__}, not an object")
        return result

    # -- prompts ------------------------------------------------------------------------------
    async def _list_prompts(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(
            prompts=[
                types.Prompt(
                    name=SYSTEM_PROMPT,
                    title="toolcat system prompt",
                    description=f"How to discover and run this catalogue's tools with the {self.dialect} "
                    "dialect: paste it into the system prompt.",
                ),
                types.Prompt(
                    name=TOOLS_PROMPT,
                    title="Tools for a task",
                    description="The catalogue's tools that matter for a task, within a token budget.",
                    arguments=[
                        types.PromptArgument(name="task", description="What the agent has to do.", required=True),
                        types.PromptArgument(
                            name="budget_tokens", description="Token budget (default 1500).", required=False
                        ),
                    ],
                ),
            ]
        )

    async def _get_prompt(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.GetPromptRequestParams,
    ) -> types.GetPromptResult:
        if params.name == SYSTEM_PROMPT:
            text = await anyio.to_thread.run_sync(self.system_prompt)
            return types.GetPromptResult(
                description=f"System prompt for the {self.dialect} dialect",
                messages=[types.PromptMessage(role="user", content=types.TextContent(text=text))],
            )
        if params.name == TOOLS_PROMPT:
            args = params.arguments or {}
            task = args.get("task", "")
            budget_text = args.get("budget_tokens") or "1500"
            if not task.strip() or not budget_text.isdigit():
                raise MCPError(
                    types.INVALID_PARAMS,
                    "tools_prompt needs a non-empty 'task' and an integer 'budget_tokens' (for example \"1500\")",
                )
            section = await anyio.to_thread.run_sync(
                functools.partial(self.catalog.prompt_section, task, int(budget_text))
            )
            if is_error(section):
                raise MCPError(types.INTERNAL_ERROR, section["error"]["message"], data=section["error"])
            return types.GetPromptResult(
                description=f"Tools for: {task[:80]}",
                messages=[
                    types.PromptMessage(role="user", content=types.TextContent(text=str(section.get("text", ""))))
                ],
            )
        raise MCPError(
            types.INVALID_PARAMS,
            f"Unknown prompt: {params.name!r:.120}",
            data={"prompts": [SYSTEM_PROMPT, TOOLS_PROMPT]},
        )

    def system_prompt(self) -> str:
        """The dialect's system prompt from the build's prompt sections, else one written from the dialect."""
        prompts = self.catalog.manifest.get("prompts")
        if isinstance(prompts, dict) and isinstance(prompts.get("index"), dict):
            try:
                index = self.catalog.fetch_json(prompts["index"])
                sections = index.get("sections") if isinstance(index, dict) else None
                section = sections.get(f"system.{self.dialect}") if isinstance(sections, dict) else None
                if isinstance(section, dict) and isinstance(section.get("ref"), dict):
                    return self.catalog.fetch_bytes(section["ref"]).decode("utf-8")
            except ReaderError as exc:
                log.warning("cannot read the build's system prompt (%s); using the built-in one", exc.message)
        return fallback_system_prompt(self.dialect, self.catalog.manifest)

    # -- resources (skills) -------------------------------------------------------------------
    def _skills(self) -> list[Json]:
        listing = self.catalog.tool_list()
        if is_error(listing):
            return []
        return [row for row in listing.get("tools", []) if row.get("type") == "skill"][:MAX_LISTED_SKILLS]

    def skill_resources(self) -> list[types.Resource]:
        """Level 2 and level 3 of every skill, as resources (their contents are read on demand)."""
        out: list[types.Resource] = []
        for row in self._skills():
            described = self.catalog.tool_describe(row["name"])
            skill = described.get("skill") if not is_error(described) else None
            if not isinstance(skill, dict):
                continue
            name = str(skill.get("name") or row["name"])
            out.append(
                types.Resource(
                    uri=skill_uri(name),
                    name=name,
                    title=f"Skill {name} (SKILL.md)",
                    mime_type="text/markdown",
                    description=str(row.get("summary") or ""),
                    size=len(str(skill.get("body", "")).encode("utf-8")),
                )
            )
            resources = skill.get("resources")
            out.extend(
                types.Resource(
                    uri=skill_uri(name, str(res.get("path"))),
                    name=f"{name}/{res.get('path')}",
                    mime_type=res["media_type"] if isinstance(res.get("media_type"), str) else None,
                    size=res["bytes"] if type(res.get("bytes")) is int and res["bytes"] >= 0 else None,
                    description=f"A file bundled with skill {name}; read it only when SKILL.md calls for it.",
                )
                for res in (resources if isinstance(resources, list) else [])
                if isinstance(res, dict) and isinstance(res.get("path"), str)
            )
        return out

    async def _list_resources(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=await anyio.to_thread.run_sync(self.skill_resources))

    async def _list_templates(
        self,
        _ctx: ServerRequestContext[Any],
        _params: types.PaginatedRequestParams | None,
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=SKILL_SCHEME + "{name}",
                    name="skill",
                    description="A skill's instructions (SKILL.md body, level 2).",
                    mime_type="text/markdown",
                ),
                types.ResourceTemplate(
                    uri_template=SKILL_SCHEME + "{name}/{+path}",
                    name="skill-resource",
                    description="One file bundled with a skill (level 3).",
                ),
            ]
        )

    async def _read_resource(
        self,
        _ctx: ServerRequestContext[Any],
        params: types.ReadResourceRequestParams,
    ) -> types.ReadResourceResult:
        return await anyio.to_thread.run_sync(self.read_resource, str(params.uri))

    def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
        parsed = parse_skill_uri(uri)
        if parsed is None:
            raise MCPError(
                types.INVALID_PARAMS,
                f"Unknown resource {uri!r:.200}: toolcat serves {SKILL_SCHEME}<name> and {SKILL_SCHEME}<name>/<path>",
            )
        name, resource = parsed
        if resource is None:
            described = self.catalog.tool_describe(name)
            if is_error(described) or not isinstance(described.get("skill"), dict):
                raise MCPError(
                    types.INVALID_PARAMS,
                    f"No skill named {name!r:.120}",
                    data=described.get("error") if is_error(described) else None,
                )
            body = str(described["skill"].get("body", ""))
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=body)]
            )
        found = self.catalog.read_skill_resource(name, resource)
        if is_error(found):
            raise MCPError(types.INVALID_PARAMS, found["error"]["message"], data=found["error"])
        media = found.get("media_type")
        if "content" in found:
            return types.ReadResourceResult(
                contents=[types.TextResourceContents(uri=uri, mime_type=media, text=str(found["content"]))]
            )
        blob = str(found.get("content_base64") or base64.b64encode(b"").decode("ascii"))
        return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=media, blob=blob)])

    # -- change notifications -----------------------------------------------------------------
    async def _track_sessions(
        self,
        ctx: ServerRequestContext[Any, Any],
        call_next: Callable[[ServerRequestContext[Any, Any]], Awaitable[HandlerResult]],
    ) -> HandlerResult:
        """Remember each handshake-era connection (once, at notifications/initialized) to notify it later."""
        result = await call_next(ctx)
        if ctx.method == "notifications/initialized":
            if len(self._sessions) >= MAX_TRACKED_SESSIONS:
                self._sessions.pop(next(iter(self._sessions)))
            self._sessions[id(ctx.session)] = ctx.session
        return result

    async def notify_changed(self) -> int:
        """Tell every client that tools, resources and prompts changed; returns how many sessions were reached."""
        reached = 0
        for key, session in list(self._sessions.items()):
            try:
                await session.send_tool_list_changed()
                await session.send_resource_list_changed()
                await session.send_prompt_list_changed()
                reached += 1
            except Exception as exc:
                log.debug("dropping a closed MCP session: %s", exc)
                self._sessions.pop(key, None)
        for event in (ToolsListChanged(), ResourcesListChanged(), PromptsListChanged()):
            await self.bus.publish(event)
        return reached

    def _stamp(self) -> tuple[int, int] | None:
        if self.watch_path is None:
            return None
        try:
            stat = (self.watch_path / "catalog.json").stat()
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    async def check_for_update(self, last: tuple[int, int] | None) -> tuple[bool, tuple[int, int] | None]:
        """Refresh when the folder's catalog.json changed (or always, for a URL); True when a new version loaded."""
        stamp = self._stamp()
        if self.watch_path is not None and stamp == last:
            return False, last
        previous = self.catalog.registry_version
        try:
            changed = await anyio.to_thread.run_sync(self.catalog.refresh)
        except ReaderError as exc:
            log.warning("cannot refresh the catalogue (%s): still serving %s", exc.message, previous)
            return False, last
        if changed:
            self.changes += 1
            reached = await self.notify_changed()
            log.info(
                "registry_version %s -> %s; notified %d session(s)", previous, self.catalog.registry_version, reached
            )
        return changed, stamp

    async def watch(self) -> None:
        """Poll for new registry versions until cancelled."""
        last = self._stamp()
        while True:
            await anyio.sleep(self.poll_seconds)
            try:
                _, last = await self.check_for_update(last)
            except Exception:
                log.exception("the catalogue watcher failed; it keeps polling")

    @asynccontextmanager
    async def _lifespan(self, _server: Server[Any]) -> AsyncIterator[Json]:
        async with anyio.create_task_group() as group:
            if self.poll_seconds > 0:
                group.start_soon(self.watch)
            yield {}
            group.cancel_scope.cancel()

    # -- transports ---------------------------------------------------------------------------
    async def run_stdio(self) -> None:
        """Serve one client over stdin/stdout until it closes them."""
        from .stdio import stdio_transport  # noqa: PLC0415 - answers bad lines the SDK would drop

        async with stdio_transport() as (read_stream, write_stream):
            await self.server.run(read_stream, write_stream, self.initialization_options())

    def http_app(self, host: str = "127.0.0.1") -> Any:
        """The Starlette app of the streamable HTTP transport, at ``/mcp``."""
        return self.server.streamable_http_app(host=host, json_response=True)

    async def run_http(self, host: str, port: int, ready: Callable[[str], None] | None = None) -> None:
        """Serve streamable HTTP on host:port (``/mcp``) until cancelled; ``ready`` gets the URL once bound."""
        import uvicorn  # noqa: PLC0415

        config = uvicorn.Config(
            self.http_app(host), host=host, port=port, log_level="warning", lifespan="on", timeout_graceful_shutdown=2
        )
        server = uvicorn.Server(config)
        task = asyncio.create_task(server.serve())
        while not server.started and not task.done():  # noqa: ASYNC110 - uvicorn's `started` is a flag, not an event
            await asyncio.sleep(0.02)
        if server.started and ready is not None:
            bound = server.servers[0].sockets[0].getsockname()[1] if server.servers else port
            ready(f"http://{host}:{bound}/mcp")
        await task


def open_catalog(options: ServeOptions) -> Catalog:
    """Open the catalogue ``toolcat serve`` will serve (raises ReaderError when it cannot)."""
    return Catalog.open(
        options.location,
        options.cache_dir,
        read_only=options.read_only,
        audit=options.audit,
        allow_handlers=options.allow_handlers,
        pin=options.pin,
        sandbox=options.sandbox,
    )


def make_server(options: ServeOptions, catalog: Catalog | None = None) -> CatalogServer:
    """A :class:`CatalogServer` for ``options`` (opening the catalogue unless one is given)."""
    catalog = catalog or open_catalog(options)
    is_url = options.location.startswith(("http://", "https://"))
    watch_path = None if is_url else Path(options.location)
    return CatalogServer(catalog, options.dialect, poll_seconds=options.poll_seconds, watch_path=watch_path)


def serve(options: ServeOptions, ready: Callable[[str], None] | None = None) -> None:
    """Run the server with the chosen transport until the client (stdio) or a signal (http) stops it."""
    server = make_server(options)
    log.info(
        "serving %s (registry_version %s) with the %s dialect over %s",
        options.location,
        server.catalog.registry_version,
        options.dialect,
        options.transport,
    )
    if options.transport == "stdio":
        anyio.run(server.run_stdio)
    else:
        os.environ.setdefault("PYTHONUNBUFFERED", "1")
        asyncio.run(server.run_http(options.host, options.port, ready))
