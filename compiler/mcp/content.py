"""What a client reads beside the tools: the dialect's prompts, the skills as resources, the Skills extension.

The answers themselves are written in :mod:`.prompts`, :mod:`.resources` and :mod:`.skills`; this part
answers the MCP methods with them (``prompts/*``, ``resources/*``, ``skills/list``, ``skills/get``,
``resources/directory/read``), off the event loop where they read the catalogue, each marked with the
public cache hint of :mod:`.caching` (fixed by the registry_version).
"""

from __future__ import annotations

from typing import Any

import anyio.to_thread
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from ..format.types import Json
from ..reader.catalog import Catalog
from . import prompts, resources, skills
from .caching import public, public_json

__all__ = ["CatalogContent"]


class CatalogContent:
    """The prompts and skill resources of one catalogue in one dialect, as MCP handlers."""

    def __init__(self, catalog: Catalog, dialect: str) -> None:
        self.catalog = catalog
        self.dialect = dialect

    def add_skills_extension(self, server: Server[Any]) -> None:
        """Serve the Skills extension's methods on ``server`` and announce the extension."""
        server.add_request_handler("skills/list", skills.SkillsListParams, self.list_skills)
        server.add_request_handler("skills/get", skills.SkillsGetParams, self.get_skill)
        server.add_request_handler("resources/directory/read", skills.DirectoryReadParams, self.read_directory)
        server.extensions[skills.EXTENSION_ID] = dict(skills.SETTINGS)

    # -- prompts ------------------------------------------------------------------------------
    async def list_prompts(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        """``prompts/list``: the system prompt and the tools-for-a-task prompt."""
        return public(prompts.list_prompts(self.dialect))

    async def get_prompt(
        self, _ctx: ServerRequestContext[Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        """``prompts/get``; an unknown prompt or bad arguments are a protocol error."""
        return await prompts.get_prompt(self.catalog, self.dialect, params)

    def system_prompt(self) -> str:
        """The dialect's system prompt from the build's prompt sections, else one written from the dialect."""
        return prompts.system_prompt(self.catalog, self.dialect)

    # -- resources (skills) -------------------------------------------------------------------
    def skill_resources(self) -> list[types.Resource]:
        """Every skill's ``skill://<name>/SKILL.md`` (Skills extension), then its level 2 and 3 as ``toolcat://``."""
        return skills.skill_md_resources(self.catalog) + resources.skill_resources(self.catalog)

    async def list_resources(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        """``resources/list``: the skills' resources."""
        found = await anyio.to_thread.run_sync(self.skill_resources)
        return public(types.ListResourcesResult(resources=found))

    async def list_templates(
        self, _ctx: ServerRequestContext[Any], _params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: the Skills extension's templates, then the ``toolcat://`` ones."""
        listed = resources.resource_templates()
        return public(listed, resource_templates=skills.skill_templates() + listed.resource_templates)

    async def read_resource_request(
        self, _ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        """``resources/read`` of a skill URI."""
        return public(await anyio.to_thread.run_sync(self.read_resource, str(params.uri)))

    def read_resource(self, uri: str) -> types.ReadResourceResult:
        """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
        if uri.startswith(skills.SKILL_SCHEME):
            return skills.read_skill_file(self.catalog, uri)
        return resources.read_resource(self.catalog, uri)

    # -- the Skills extension -----------------------------------------------------------------
    async def list_skills(self, _ctx: ServerRequestContext[Any], params: skills.SkillsListParams) -> Json:
        """``skills/list``: one page of the catalogue's skills."""
        return public_json(await anyio.to_thread.run_sync(skills.list_skills, self.catalog, params.cursor))

    async def get_skill(self, _ctx: ServerRequestContext[Any], params: skills.SkillsGetParams) -> Json:
        """``skills/get``: one skill's SKILL.md and its files."""
        return public_json(await anyio.to_thread.run_sync(skills.get_skill, self.catalog, params.uri))

    async def read_directory(self, _ctx: ServerRequestContext[Any], params: skills.DirectoryReadParams) -> Json:
        """``resources/directory/read``: one page of a skill folder's entries (no cache hint: a page of a walk)."""
        return await anyio.to_thread.run_sync(skills.directory_read, self.catalog, params.uri, params.cursor)
