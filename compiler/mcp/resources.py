"""The skills of a served catalogue as MCP resources: their URIs, the resource list, and reading one.

``toolcat://skills/<name>`` is a skill's SKILL.md body (level 2) and ``toolcat://skills/<name>/<path>`` one
file bundled with it (level 3); contents are read only when a client asks.
:class:`toolcat.mcp.server.CatalogServer` answers ``resources/list``, ``resources/templates/list`` and
``resources/read`` with these.
"""

from __future__ import annotations

import base64
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError

from ..format.envelope import is_error
from ..format.types import Json
from ..reader.catalog import Catalog

SKILL_SCHEME = "toolcat://skills/"
#: More skills than this are not walked for resources/list (each needs its spec).
MAX_LISTED_SKILLS = 500


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


def _skills(catalog: Catalog) -> list[Json]:
    listing = catalog.tool_list()
    if is_error(listing):
        return []
    return [row for row in listing.get("tools", []) if row.get("type") == "skill"][:MAX_LISTED_SKILLS]


def skill_resources(catalog: Catalog) -> list[types.Resource]:
    """Level 2 and level 3 of every skill, as resources (their contents are read on demand)."""
    out: list[types.Resource] = []
    for row in _skills(catalog):
        described = catalog.tool_describe(row["name"])
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


def resource_templates() -> types.ListResourceTemplatesResult:
    """The ``resources/templates/list`` answer: a skill (level 2) and one file bundled with it (level 3)."""
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


def read_resource(catalog: Catalog, uri: str) -> types.ReadResourceResult:
    """The contents of a skill URI; an unknown URI or skill is a protocol error naming what exists."""
    parsed = parse_skill_uri(uri)
    if parsed is None:
        raise MCPError(
            types.INVALID_PARAMS,
            f"Unknown resource {uri!r:.200}: toolcat serves skill://<name>/<path> (skills/list names them), "
            f"{SKILL_SCHEME}<name> and {SKILL_SCHEME}<name>/<path>",
        )
    name, resource = parsed
    if resource is None:
        described = catalog.tool_describe(name)
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
    return skill_file(catalog, name, resource, uri)


def skill_file(catalog: Catalog, name: str, path: str, uri: str) -> types.ReadResourceResult:
    """One bundled file of skill ``name`` as ``uri``'s contents: text when it decodes as UTF-8, else a blob."""
    found = catalog.read_skill_resource(name, path)
    if is_error(found):
        raise MCPError(types.INVALID_PARAMS, found["error"]["message"], data=found["error"])
    media = found.get("media_type")
    if "content" in found:
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=media, text=str(found["content"]))]
        )
    blob = str(found.get("content_base64") or base64.b64encode(b"").decode("ascii"))
    return types.ReadResourceResult(contents=[types.BlobResourceContents(uri=uri, mime_type=media, blob=blob)])
