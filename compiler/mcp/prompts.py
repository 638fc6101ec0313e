"""The MCP prompts of a served catalogue: the dialect's system prompt and the tools for a task.

``system_prompt`` comes from the build's prompt sections when it has them, else it is written from the
dialect's tool definitions; ``tools_prompt`` is :meth:`toolcat.reader.Catalog.prompt_section` for a task
within a token budget. :class:`toolcat.mcp.server.CatalogServer` answers ``prompts/list`` and
``prompts/get`` with these.
"""

from __future__ import annotations

import functools
import logging

import anyio.to_thread
import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..format.dialects import served_tools, traits
from ..format.envelope import ReaderError, is_error
from ..format.types import Json
from ..reader.catalog import Catalog

log = logging.getLogger(__name__)


SYSTEM_PROMPT = "system_prompt"
TOOLS_PROMPT = "tools_prompt"


def fallback_system_prompt(dialect: str, manifest: Json, domains: list[str] | None = None) -> str:
    """A system prompt written from the dialect's tools (002's per-domain ones too), for builds without sections."""
    counts = manifest.get("counts") or {}
    tools = served_tools(dialect, domains or [])
    lines = [
        (
            f'You can use the tool catalogue "{manifest.get("title") or "catalogue"}" '
            f"({counts.get('tools', 0)} tools, {counts.get('skills', 0)} skills) through {len(tools)} "
            "discovery tools. Do not guess tool ids or argument names: browse or search, read a tool's "
            "definition, then run it. Every error carries help_path and next_action: follow them and retry."
        ),
        "",
    ]
    lines.extend(f"- {tool.name}: {tool.description}" for tool in tools)
    if traits(dialect).describe_gates:
        lines += [
            "",
            (
                "A tool you described becomes callable by its alias (the server announces it with "
                "tools/list_changed); call it directly with arguments that match its schema. When it is not in "
                "your tool list (no session), call tool_call(name, arguments) instead."
            ),
        ]
    return "\n".join(lines)


def system_prompt(catalog: Catalog, dialect: str) -> str:
    """The dialect's system prompt from the build's prompt sections, else one written from the dialect.

    Either way it names the ``discover_<domain>_tools`` the server offers (seed 002): a build older than the
    sections that name them gets a line added. Under a policy that hides tools (allowed namespaces, read-only) the
    build's prompt, written for the whole catalogue (it names every namespace), is not served: the one written
    from the dialect names no tool.
    """
    text = _built_system_prompt(catalog, dialect)
    domains = catalog.discovery_domains() if traits(dialect).domain_discovery else []
    if text is None:
        return fallback_system_prompt(dialect, catalog.manifest, domains)
    missing = [f"discover_{d}_tools" for d in domains if f"discover_{d}_tools" not in text]
    if missing:
        text += (
            "\n\nPer-domain discovery: " + ", ".join(missing) + " list a domain's tools; with tool=name, one tool's "
            "details and usage.\n"
        )
    return text


def _built_system_prompt(catalog: Catalog, dialect: str) -> str | None:
    """The build's ``system.<dialect>`` prompt section, or None when the build has none (or it cannot be read)."""
    prompts = catalog.manifest.get("prompts")
    if catalog.session.filters:
        return None
    if isinstance(prompts, dict) and isinstance(prompts.get("index"), dict):
        try:
            index = catalog.fetch_json(prompts["index"])
            sections = index.get("sections") if isinstance(index, dict) else None
            section = sections.get(f"system.{dialect}") if isinstance(sections, dict) else None
            if isinstance(section, dict) and isinstance(section.get("ref"), dict):
                return catalog.fetch_bytes(section["ref"]).decode("utf-8")
        except ReaderError as exc:
            log.warning("cannot read the build's system prompt (%s); using the built-in one", exc.message)
    return None


def list_prompts(dialect: str) -> types.ListPromptsResult:
    """The ``prompts/list`` answer: the system prompt and the tools-for-a-task prompt."""
    return types.ListPromptsResult(
        prompts=[
            types.Prompt(
                name=SYSTEM_PROMPT,
                title="toolcat system prompt",
                description=f"How to discover and run this catalogue's tools with the {dialect} "
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


async def get_prompt(catalog: Catalog, dialect: str, params: types.GetPromptRequestParams) -> types.GetPromptResult:
    """The ``prompts/get`` answer; an unknown prompt or bad arguments are a protocol error (``-32602``)."""
    if params.name == SYSTEM_PROMPT:
        text = await anyio.to_thread.run_sync(system_prompt, catalog, dialect)
        return types.GetPromptResult(
            description=f"System prompt for the {dialect} dialect",
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
        section = await anyio.to_thread.run_sync(functools.partial(catalog.prompt_section, task, int(budget_text)))
        if is_error(section):
            raise MCPError(types.INTERNAL_ERROR, section["error"]["message"], data=section["error"])
        return types.GetPromptResult(
            description=f"Tools for: {task[:80]}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(text=str(section.get("text", ""))))],
        )
    raise MCPError(
        types.INVALID_PARAMS,
        f"Unknown prompt: {params.name!r:.120}",
        data={"prompts": [SYSTEM_PROMPT, TOOLS_PROMPT]},
    )
