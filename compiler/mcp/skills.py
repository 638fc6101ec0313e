"""The Skills extension (SEP-2640, ``io.modelcontextprotocol/skills``): skill files as ``skill://`` resources.

Matched against the extension's stable specification (modelcontextprotocol/ext-skills,
``specification/stable/skills.mdx``, written against protocol revision 2026-07-28) and FastMCP's
client (``fastmcp.skills``), which verifies every file it reads:

* each file of a skill is a resource ``skill://<name>/<path>``; the skill is addressed by its
  ``skill://<name>/SKILL.md`` (the last skill-path segment is the skill's ``name``);
* ``skills/list {cursor?}`` → ``{skills: [Skill], nextCursor?}`` and ``skills/get {uri}`` →
  ``{skill: Skill}``, where a ``Skill`` is ``{uri, frontmatter, resources: [{uri, digest, size}]}``:
  the frontmatter as a JSON object and a complete manifest (SKILL.md first) with ``sha256:<hex>``
  digests of each file's raw bytes; both results say ``resultType: "complete"`` and carry cache hints;
* ``resources/directory/read {uri, cursor?}`` (declared with ``directoryRead: true``) lists the direct
  children of a skill's root (``skill://<name>``) or of one of its folders: files with their resource
  metadata, folders as ``inode/directory``;
* an unknown skill, a URI that is no directory and a bad cursor are ``-32602`` (Invalid params).

The ``SKILL.md`` served is the file as its author wrote it: the build keeps its bytes (``skill.skill_md``,
docs/format.md), so its digest and size are the build's content hash of the author's file, like every other
file of the skill. A build from before that field has only the frontmatter (a JSON object) and the body: for
it the file is written from the two (``---``, one ``"key": <JSON value>`` line per frontmatter field, which
any YAML reader reads back as the same object, ``---``, then the body) and its digest taken over those bytes.
The methods are registered with the SDK's public ``Server.add_request_handler`` (its ``Extension`` class
belongs to the high-level ``MCPServer``, which toolcat does not use). ``capabilities.extensions`` exists only
from protocol 2026-07-28 on: the SDK's 2025-11-25 codec has no such field, so a handshake-era client is not
told of the extension (MCP Inspector's skills check answers ``skills_unsupported`` there), though the
methods answer in both eras.
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any
from urllib.parse import quote, unquote

import mcp_types as types
from mcp.shared.exceptions import MCPError
from pydantic import ConfigDict

from ..format.envelope import is_error
from ..format.types import Json
from ..reader.catalog import Catalog
from .resources import MAX_LISTED_SKILLS, skill_file

__all__ = [
    "DIRECTORY_MIME",
    "EXTENSION_ID",
    "SETTINGS",
    "SKILL_FILE",
    "SKILL_SCHEME",
    "DirectoryReadParams",
    "SkillsGetParams",
    "SkillsListParams",
    "directory_read",
    "get_skill",
    "list_skills",
    "read_skill_file",
    "skill_file_uri",
    "skill_md_resources",
    "skill_templates",
]

EXTENSION_ID = "io.modelcontextprotocol/skills"
#: The extension's settings in ``capabilities.extensions``: this server answers ``resources/directory/read``.
SETTINGS: dict[str, Any] = {"directoryRead": True}
SKILL_SCHEME = "skill://"
SKILL_FILE = "SKILL.md"
DIRECTORY_MIME = "inode/directory"
#: Skills per ``skills/list`` page (each entry needs its spec and its SKILL.md body read).
LIST_PAGE = 50
#: Children per ``resources/directory/read`` page.
DIRECTORY_PAGE = 200
#: Characters a YAML reader refuses or folds as line breaks unescaped (JSON escapes the C0 controls already).
_YAML_UNPRINTABLE = re.compile("[\x7f-\x9f\u2028\u2029\ud800-\udfff\ufffe\uffff]")


class SkillsListParams(types.PaginatedRequestParams):
    """``skills/list`` params: an optional cursor from the previous page."""

    model_config = ConfigDict(extra="allow")


class SkillsGetParams(types.RequestParams):
    """``skills/get`` params: the URI of the skill's SKILL.md."""

    model_config = ConfigDict(extra="allow")
    uri: str


class DirectoryReadParams(types.PaginatedRequestParams):
    """``resources/directory/read`` params: the directory's URI and an optional cursor."""

    model_config = ConfigDict(extra="allow")
    uri: str


def skill_file_uri(name: str, path: str = SKILL_FILE) -> str:
    """``skill://<name>/<path>``: one file of a skill (``SKILL.md`` by default); ``path=""`` is the skill's root."""
    base = SKILL_SCHEME + quote(name, safe="")
    return f"{base}/{quote(path, safe='/')}" if path else base


def parse_skill_file_uri(uri: str) -> tuple[str, str] | None:
    """(skill name, path inside the skill, ``""`` for its root) of a ``skill://`` URI; None for any other."""
    if not uri.startswith(SKILL_SCHEME):
        return None
    name, _, path = uri[len(SKILL_SCHEME) :].partition("/")
    name, path = unquote(name), unquote(path).strip("/")
    if not name or any(part in {".", ".."} for part in path.split("/")):
        return None
    return name, path


def _yaml_line(key: str, value: Any) -> str:
    text = f"{json.dumps(key, ensure_ascii=False)}: {json.dumps(value, ensure_ascii=False, sort_keys=True)}"
    return _YAML_UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def skill_md(frontmatter: Json, body: str) -> bytes:
    """A SKILL.md written from a stored frontmatter (one JSON-valued YAML line per field) and body.

    Only for builds that do not keep the author's file (``skill.skill_md``): those serve its bytes.
    """
    lines = ["---", *(_yaml_line(k, frontmatter[k]) for k in sorted(frontmatter)), "---", ""]
    return ("\n".join(lines) + body).encode("utf-8", "surrogatepass")


class _Skill:
    """One skill as the extension shows it: its stored spec section and its SKILL.md bytes."""

    def __init__(self, name: str, stored: Json, body: str, authored: bytes | None = None) -> None:
        self.name = name
        raw = stored.get("skill_md_frontmatter") if authored is not None else None
        raw = raw if isinstance(raw, dict) else stored.get("frontmatter")  # the served file's own, when it is kept
        self.frontmatter: Json = dict(raw) if isinstance(raw, dict) else {}
        self.frontmatter.setdefault("name", name)
        self.frontmatter.setdefault("description", "")
        self.markdown = authored if authored is not None else skill_md(self.frontmatter, body)
        listed = stored.get("resources")
        self.files: list[Json] = [
            res
            for res in (listed if isinstance(listed, list) else [])
            if isinstance(res, dict)
            and isinstance(res.get("path"), str)
            and isinstance(res.get("ref"), dict)
            and isinstance(res["ref"].get("sha256"), str)
        ]

    @property
    def uri(self) -> str:
        return skill_file_uri(self.name)

    def entry(self) -> Json:
        """The extension's ``Skill`` entry: URI, frontmatter and the complete file manifest, SKILL.md first."""
        manifest = [
            {
                "uri": self.uri,
                "digest": "sha256:" + hashlib.sha256(self.markdown).hexdigest(),
                "size": len(self.markdown),
            }
        ]
        manifest += [
            {
                "uri": skill_file_uri(self.name, res["path"]),
                "digest": f"sha256:{res['ref']['sha256']}",
                "size": int(res["ref"].get("bytes", 0)),
            }
            for res in self.files
        ]
        return {"uri": self.uri, "frontmatter": self.frontmatter, "resources": manifest}

    def paths(self) -> dict[str, str | None]:
        """Every file of the skill by its path, with its media type."""
        out: dict[str, str | None] = {SKILL_FILE: "text/markdown"}
        for res in self.files:
            media = res.get("media_type")
            out[res["path"]] = media if isinstance(media, str) else None
        return out


def _load(catalog: Catalog, ref: str, name: str | None = None) -> _Skill | None:
    """A skill the policy lets the client see, by tool id or skill ``name``; None when there is none.

    Given ``name``, the skill found must carry that name (a tool id or an alias does not address a skill URI).
    """
    described = catalog.tool_describe(ref)
    skill = described.get("skill") if not is_error(described) else None
    if not isinstance(skill, dict):
        return None
    found = str(skill.get("name") or ref)
    if name is not None and found != name:
        return None
    _, spec = catalog.store.spec(str(described.get("tool_id") or ref))
    raw = spec.get("skill")
    stored: Json = raw if isinstance(raw, dict) else {}
    source = stored.get("skill_md")
    authored = catalog.fetch_bytes(source) if isinstance(source, dict) else None  # checked against its sha256
    return _Skill(found, stored, str(skill.get("body", "")), authored)


def skill_ids(catalog: Catalog) -> list[str]:
    """The tool ids of the skills this catalogue lists to the client (the reader applies the policy)."""
    listing = catalog.tool_list()
    if is_error(listing):
        return []
    return [str(row["name"]) for row in listing.get("tools", []) if row.get("type") == "skill"][:MAX_LISTED_SKILLS]


def _offset(cursor: str | None, total: int) -> int:
    if cursor is None:
        return 0
    # ASCII digits only ("²" is a digit to str.isdigit, not to int), and short: 5,000 digits are no offset either
    if not (cursor.isascii() and cursor.isdigit()) or len(cursor) > 12 or int(cursor) > total:
        raise MCPError(types.INVALID_PARAMS, f"Invalid cursor {cursor!r:.40}: pass a nextCursor this server returned")
    return int(cursor)


def _page(rows: list[Any], cursor: str | None, size: int) -> tuple[list[Any], Json]:
    start = _offset(cursor, len(rows))
    end = start + size
    return rows[start:end], ({"nextCursor": str(end)} if end < len(rows) else {})


def list_skills(catalog: Catalog, cursor: str | None = None) -> Json:
    """The ``skills/list`` result (without cache hints): one page of complete skill entries."""
    ids, more = _page(skill_ids(catalog), cursor, LIST_PAGE)
    loaded = [_load(catalog, tool_id) for tool_id in ids]
    return {"resultType": "complete", "skills": [s.entry() for s in loaded if s is not None], **more}


def _skill_at(catalog: Catalog, uri: str) -> tuple[_Skill, str]:
    parsed = parse_skill_file_uri(uri)
    skill = _load(catalog, parsed[0], parsed[0]) if parsed is not None else None
    if parsed is None or skill is None:
        raise MCPError(
            types.INVALID_PARAMS,
            f"No skill is served at {uri!r:.200}; skills/list gives the URIs of the skills this server serves",
        )
    return skill, parsed[1]


def get_skill(catalog: Catalog, uri: str) -> Json:
    """The ``skills/get`` result (without cache hints); a URI that is no skill's SKILL.md is ``-32602``."""
    skill, path = _skill_at(catalog, uri)
    if path != SKILL_FILE:
        raise MCPError(
            types.INVALID_PARAMS,
            f"skills/get takes a skill's SKILL.md URI ({skill.uri}), not {uri!r:.200}",
        )
    return {"resultType": "complete", "skill": skill.entry()}


def read_skill_file(catalog: Catalog, uri: str) -> types.ReadResourceResult:
    """``resources/read`` of a ``skill://`` file: SKILL.md as served in the manifest, or a bundled file."""
    skill, path = _skill_at(catalog, uri)
    if path == SKILL_FILE:
        text = skill.markdown.decode("utf-8", "surrogatepass")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type="text/markdown", text=text)]
        )
    if path not in skill.paths():
        kind = "a directory resource: resources/directory/read lists it" if _children(skill, path) else "no file"
        raise MCPError(types.INVALID_PARAMS, f"{uri!r:.200} is {kind} of skill {skill.name}")
    return skill_file(catalog, skill.name, path, uri)


def _children(skill: _Skill, folder: str) -> list[Json]:
    """The direct children of one folder of a skill (``""``: its root), files then folders, each sorted."""
    prefix = f"{folder}/" if folder else ""
    files: list[Json] = []
    folders: set[str] = set()
    sizes = {res["path"]: int(res["ref"].get("bytes", 0)) for res in skill.files}
    sizes[SKILL_FILE] = len(skill.markdown)
    for path, media in skill.paths().items():
        if not path.startswith(prefix):
            continue
        head, sep, _ = path[len(prefix) :].partition("/")
        if sep:
            folders.add(head)
            continue
        entry: Json = {"uri": skill_file_uri(skill.name, path), "name": head, "size": sizes[path]}
        if media:
            entry["mimeType"] = media
        files.append(entry)
    files.sort(key=lambda e: str(e["name"]))
    dirs = [
        {"uri": skill_file_uri(skill.name, prefix + head), "name": head, "mimeType": DIRECTORY_MIME}
        for head in sorted(folders)
    ]
    return files + dirs


def directory_read(catalog: Catalog, uri: str, cursor: str | None = None) -> Json:
    """The ``resources/directory/read`` result: one page of a skill folder's direct children."""
    skill, path = _skill_at(catalog, uri)
    children = _children(skill, path)
    if not children:  # an empty folder is never stored, so this path is a file or nothing
        raise MCPError(types.INVALID_PARAMS, f"{uri!r:.200} is not a directory resource")
    rows, more = _page(children, cursor, DIRECTORY_PAGE)
    return {"resultType": "complete", "resources": rows, **more}


def skill_md_resources(catalog: Catalog) -> list[types.Resource]:
    """The ``skill://<name>/SKILL.md`` resource of each listed skill (name and description from its frontmatter)."""
    out = []
    for tool_id in skill_ids(catalog):
        skill = _load(catalog, tool_id)
        if skill is None:
            continue
        out.append(
            types.Resource(
                uri=skill.uri,
                name=skill.name,
                title=f"Skill {skill.name}",
                mime_type="text/markdown",
                description=str(skill.frontmatter.get("description") or ""),
                size=len(skill.markdown),
            )
        )
    return out


def skill_templates() -> list[types.ResourceTemplate]:
    """The ``skill://`` resource templates: any file of a skill (SKILL.md and its bundled files)."""
    return [
        types.ResourceTemplate(
            uri_template=SKILL_SCHEME + "{name}/{+path}",
            name="skill-file",
            description="One file of a skill (Skills extension): SKILL.md, or a file it bundles.",
        )
    ]
