"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): ``skills/list`` and ``skills/get``.

``skills/list`` names each skill the policy lets the client see (name, description, the URI of its
SKILL.md); ``skills/get`` gives one skill's file manifest: every file with its path, size, media type,
``sha256:`` digest and the ``toolcat://skills/`` URI that ``resources/read`` answers. The digests are
the build's own content hashes, read from the skill's stored spec at serve time (the build writes no
extra manifest), so a client can check each file it reads. Both results carry the same cache hints as
the other lists. The methods are registered with the SDK's public ``Server.add_request_handler``
(the SDK's ``Extension`` class belongs to its high-level ``MCPServer``, which toolcat does not use).
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict

from ..format.envelope import is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from .resources import MAX_LISTED_SKILLS, skill_uri

EXTENSION_ID = "io.modelcontextprotocol/skills"
SKILL_FILE = "SKILL.md"


class SkillsListParams(types.PaginatedRequestParams):
    """``skills/list`` params: an optional cursor (one page holds every skill up to the listing bound)."""

    model_config = ConfigDict(extra="allow")


class SkillsGetParams(types.RequestParams):
    """``skills/get`` params: the skill's name."""

    model_config = ConfigDict(extra="allow")
    name: str


def skill_rows(catalog: Catalog) -> list[Json]:
    """The skills this catalogue lists to the client (the reader applies the policy), at most the listing bound."""
    listing = catalog.tool_list()
    if is_error(listing):
        return []
    return [row for row in listing.get("tools", []) if row.get("type") == "skill"][:MAX_LISTED_SKILLS]


def list_skills(catalog: Catalog) -> dict[str, Any]:
    """The ``skills/list`` result (without cache hints)."""
    skills = []
    for row in skill_rows(catalog):
        described = catalog.tool_describe(row["name"])
        skill = described.get("skill") if not is_error(described) else None
        if not isinstance(skill, dict):
            continue
        name = str(skill.get("name") or row["name"])
        description = str(described.get("description") or row.get("summary") or "")
        skills.append({"name": name, "description": description, "uri": skill_uri(name)})
    return {"skills": skills}


def _file(name: str, path: str, ref: Any, media_type: Any) -> Json | None:
    if not isinstance(ref, dict) or not isinstance(ref.get("sha256"), str):
        return None
    entry: Json = {
        "path": path,
        "size": int(ref.get("bytes", 0)),
        "digest": f"sha256:{ref['sha256']}",
        "uri": skill_uri(name) if path == SKILL_FILE else skill_uri(name, path),
    }
    if isinstance(media_type, str):
        entry["mimeType"] = media_type
    return entry


def get_skill(catalog: Catalog, name: str) -> dict[str, Any]:
    """The ``skills/get`` result: the skill and its file manifest; an unknown skill is a protocol error."""
    described = catalog.tool_describe(name)
    skill = described.get("skill") if not is_error(described) else None
    if not isinstance(skill, dict):
        names = ", ".join(s["name"] for s in list_skills(catalog)["skills"][:20]) or "none"
        raise MCPError(types.INVALID_PARAMS, f"No skill named {name!r:.120}; skills/list names them ({names})")
    tool_id = str(described.get("tool_id") or name)
    _, spec = catalog.store.spec(tool_id)
    raw = spec.get("skill")
    stored: dict[str, Any] = raw if isinstance(raw, dict) else {}
    skill_name = str(skill.get("name") or name)
    files = [_file(skill_name, SKILL_FILE, stored.get("body"), "text/markdown")]
    files += [
        _file(skill_name, str(res.get("path")), res.get("ref"), res.get("media_type"))
        for res in stored.get("resources") or []
        if isinstance(res, dict) and isinstance(res.get("path"), str)
    ]
    description = described.get("description") or described.get("summary") or ""
    return {
        "skill": {
            "name": skill_name,
            "description": str(description),
            "uri": skill_uri(skill_name),
            "files": [f for f in files if f is not None],
        }
    }
