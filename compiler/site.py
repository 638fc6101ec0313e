"""The docs site: read a build folder's artifacts, render an mkdocs project, build it into ``build/site``.

The site is generated from the *artifacts*, never from the sources: ``catalog.json`` →
manifest → node shards (and their pages) → tool specs → skill bodies and resources, each
checked against the sha256 held by the file that pointed to it. That keeps the format
honest: whatever the site shows, any reader of the published files can show too.

Pipeline (each stage a function of the previous value; only the last writes ``out``):
``read_build(build) -> BuildData`` → ``render_project(data, project)`` (Markdown pages from
``templates/site``, ``mkdocs.yml``, static files) → ``mkdocs build --strict`` into a
temporary folder beside ``out`` → swap. A failed site build leaves the previous site as it was.
"""

from __future__ import annotations

import html
import json
import logging
import os
import posixpath
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import yaml

from compiler import FORMAT_VERSION
from compiler.canonical import sha256
from compiler.errors import BuildError

log = logging.getLogger(__name__)

NodePath = tuple[str, ...]
Ref = dict[str, Any]

ENTRY = "catalog.json"
#: Where the verified copy of the build's current version lives inside the site.
ARTIFACTS_DIR = "artifacts"
#: Suffixes mkdocs would turn into pages: skill files with them are never put in ``docs/``.
PAGE_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
MAX_SCHEMA_DEPTH = 6
PROVIDER_ORDER = ("openai", "anthropic", "gemini")


# --------------------------------------------------------------------------- reading


@dataclass(frozen=True, slots=True)
class NodeData:
    """One ontology node as its shard (and its extra pages) describe it."""

    path: NodePath
    title: str
    summary: str
    tags: tuple[str, ...]
    children: tuple[dict[str, Any], ...]
    pointers: tuple[dict[str, Any], ...]
    tool_count: int


@dataclass(frozen=True, slots=True)
class SkillData:
    """A skill's level-2 body and level-3 resources, as published."""

    name: str
    frontmatter: dict[str, Any]
    body: str
    body_ref: Ref
    resources: tuple[dict[str, Any], ...]


@dataclass(frozen=True, slots=True)
class BuildData:
    """Everything the site shows, read and verified from one build folder."""

    entry: dict[str, Any]
    manifest: dict[str, Any]
    nodes: dict[NodePath, NodeData]
    specs: dict[str, dict[str, Any]]
    spec_refs: dict[str, Ref]
    skills: dict[str, SkillData]
    #: Every file reachable from the manifest (verified), by its path relative to the build.
    files: dict[str, bytes] = field(default_factory=dict)


def _is_ref(value: Any) -> bool:
    return (
        isinstance(value, dict) and isinstance(value.get("path"), str) and isinstance(value.get("sha256"), str)
        and isinstance(value.get("bytes"), int)
    )


def _refs_in(value: Any) -> Iterator[Ref]:
    """Every ref anywhere inside a JSON value."""
    if _is_ref(value):
        yield value
    if isinstance(value, dict):
        for item in value.values():
            yield from _refs_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from _refs_in(item)


class _VerifiedFiles:
    """Reads files of a build folder by ref, checking size and sha256 against the ref."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.files: dict[str, bytes] = {}
        self.parsed: dict[str, Any] = {}

    def read(self, ref: Ref, *, held_by: str) -> bytes:
        path: str = ref["path"]
        if path in self.files:
            return self.files[path]
        if path.startswith("/") or ".." in path.split("/"):
            raise BuildError(f"{held_by}: ref path {path!r} leaves the build folder; rebuild with `toolcat build --force`")
        try:
            data = (self.root / path).read_bytes()
        except OSError as exc:
            raise BuildError(
                f"{self.root / path}: missing, but {held_by} points to it ({exc.strerror}); "
                "rebuild the catalogue with `toolcat build --force`"
            ) from exc
        digest = sha256(data)
        if digest != ref["sha256"] or len(data) != ref["bytes"]:
            raise BuildError(
                f"{self.root / path}: integrity check failed: {held_by} expects sha256 {ref['sha256'][:16]}… "
                f"({ref['bytes']} bytes), the file has {digest[:16]}… ({len(data)} bytes); "
                "the build folder was modified: rebuild it with `toolcat build --force`"
            )
        self.files[path] = data
        return data

    def json(self, ref: Ref, *, held_by: str) -> Any:
        path = ref["path"]
        if path not in self.parsed:
            try:
                self.parsed[path] = json.loads(self.read(ref, held_by=held_by))
            except ValueError as exc:
                raise BuildError(f"{self.root / path}: not valid JSON ({exc}); rebuild with `toolcat build --force`") from exc
        return self.parsed[path]

    def mirror(self, start: Ref, *, held_by: str) -> None:
        """Read every file reachable from ``start``, following refs inside JSON artifacts."""
        pending: list[tuple[Ref, str]] = [(start, held_by)]
        while pending:
            ref, holder = pending.pop()
            if ref["path"] in self.files:
                continue
            if ref["path"].endswith(".json"):
                obj = self.json(ref, held_by=holder)
                pending.extend((inner, ref["path"]) for inner in _refs_in(obj))
            else:
                self.read(ref, held_by=holder)


def read_build(build_dir: Path) -> BuildData:
    """Read and verify the current version of the build in ``build_dir``."""
    entry_path = build_dir / ENTRY
    try:
        entry = json.loads(entry_path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise BuildError(f"{entry_path}: no build here ({exc.strerror}); run `toolcat build` first") from exc
    except ValueError as exc:
        raise BuildError(f"{entry_path}: not valid JSON ({exc}); rebuild with `toolcat build --force`") from exc
    if not isinstance(entry, dict) or entry.get("artifact") != "catalog" or not _is_ref(entry.get("manifest")):
        raise BuildError(f"{entry_path}: not a toolcat entry point (expected artifact 'catalog' with a manifest ref)")
    if entry.get("format_version") != FORMAT_VERSION:
        raise BuildError(
            f"{entry_path}: format_version {entry.get('format_version')!r}, this toolcat reads {FORMAT_VERSION}; "
            "rebuild the catalogue with this toolcat version"
        )
    files = _VerifiedFiles(build_dir)
    files.mirror(entry["manifest"], held_by=ENTRY)
    manifest = files.json(entry["manifest"], held_by=ENTRY)

    nodes: dict[NodePath, NodeData] = {}
    specs: dict[str, dict[str, Any]] = {}
    spec_refs: dict[str, Ref] = {}
    skills: dict[str, SkillData] = {}
    pending: list[tuple[Ref, str]] = [(manifest["root"], entry["manifest"]["path"])]
    while pending:
        ref, holder = pending.pop()
        shard = files.json(ref, held_by=holder)
        path = tuple(shard["path"])
        if path in nodes:
            continue
        pointers = list(shard["tools"])
        for page_ref in shard.get("pages", []):
            pointers.extend(files.json(page_ref, held_by=ref["path"])["tools"])
        nodes[path] = NodeData(path, shard.get("title", ""), shard.get("summary", ""), tuple(shard.get("tags", [])),
                               tuple(shard.get("children", [])), tuple(pointers), int(shard.get("tool_count", 0)))
        pending.extend((child["ref"], ref["path"]) for child in reversed(shard.get("children", [])))
        for pointer in pointers:
            tool_id = pointer["tool_id"]
            if tool_id in specs:
                continue
            spec = files.json(pointer["spec"], held_by=ref["path"])
            specs[tool_id] = spec
            spec_refs[tool_id] = pointer["spec"]
            skill = spec.get("skill")
            if skill:
                body = files.read(skill["body"], held_by=pointer["spec"]["path"]).decode("utf-8")
                skills[skill["name"]] = SkillData(skill["name"], dict(skill.get("frontmatter", {})), body,
                                                  skill["body"], tuple(skill.get("resources", [])))
    log.info("read build %s: %d nodes, %d tools, %d files verified",
             manifest.get("registry_version"), len(nodes), len(specs), len(files.files))
    return BuildData(entry, manifest, dict(sorted(nodes.items())), dict(sorted(specs.items())), spec_refs, skills,
                     files.files)


# --------------------------------------------------------------------------- JSON Schema → rows


@dataclass(frozen=True, slots=True)
class SchemaRow:
    """One row of an arguments or result table: a (possibly nested) property."""

    name: str
    type: str
    required: bool
    default: str | None
    enum: tuple[str, ...]
    constraints: str
    description: str


def _resolve(schema: Any, root: dict[str, Any], depth: int) -> dict[str, Any]:
    """Follow a local ``$ref`` (``#/$defs/X``, ``#/definitions/X``); anything else is shown as is."""
    while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and depth < MAX_SCHEMA_DEPTH:
        pointer = schema["$ref"]
        if not pointer.startswith("#/"):
            return schema
        target: Any = root
        for part in pointer[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")  # noqa: PLW2901 - JSON Pointer unescaping
            target = target.get(part) if isinstance(target, dict) else None
        if not isinstance(target, dict):
            return schema
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
        depth += 1
    return schema if isinstance(schema, dict) else {}


def _variants(schema: dict[str, Any]) -> list[dict[str, Any]]:
    for key in ("anyOf", "oneOf"):
        if isinstance(schema.get(key), list):
            return [v for v in schema[key] if isinstance(v, dict)]
    return []


def type_label(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> str:
    """A short human type: ``string``, ``integer | null``, ``array<object>``, ``string (date-time)``."""
    schema = _resolve(schema, root, depth)
    variants = _variants(schema)
    if variants and depth < MAX_SCHEMA_DEPTH:
        return " | ".join(dict.fromkeys(type_label(v, root, depth + 1) for v in variants))
    if "const" in schema:
        return f"const {json.dumps(schema['const'], ensure_ascii=False)}"
    kind = schema.get("type")
    if isinstance(kind, list):
        label = " | ".join(str(k) for k in kind)
    elif isinstance(kind, str):
        label = kind
    elif "enum" in schema:
        label = "enum"
    elif "properties" in schema:
        label = "object"
    else:
        label = "any"
    if label == "array" and isinstance(schema.get("items"), dict) and depth < MAX_SCHEMA_DEPTH:
        label = f"array<{type_label(schema['items'], root, depth + 1)}>"
    if isinstance(schema.get("format"), str):
        label += f" ({schema['format']})"
    return label


CONSTRAINT_LABELS = (
    ("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"), ("exclusiveMaximum", "<"),
    ("minLength", "min length"), ("maxLength", "max length"), ("minItems", "min items"), ("maxItems", "max items"),
    ("pattern", "pattern"), ("multipleOf", "multiple of"),
)


def _constraints(schema: dict[str, Any]) -> str:
    parts = [f"{label} {schema[key]}" for key, label in CONSTRAINT_LABELS if key in schema]
    if schema.get("uniqueItems") is True:
        parts.append("unique items")
    if schema.get("additionalProperties") is False and "properties" in schema:
        parts.append("no extra keys")
    return " · ".join(parts)


def _json_value(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def schema_rows(schema: dict[str, Any] | None, root: dict[str, Any] | None = None) -> list[SchemaRow]:
    """Flatten a JSON Schema's properties into rows: nested objects as ``a.b``, arrays of objects as ``a[].b``."""
    if not isinstance(schema, dict):
        return []
    root = root if root is not None else schema
    rows: list[SchemaRow] = []

    def walk(node: dict[str, Any], prefix: str, depth: int) -> None:
        node = _resolve(node, root, depth)
        for merged in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
            if isinstance(merged, dict):
                walk(merged, prefix, depth + 1)
        properties = node.get("properties")
        if not isinstance(properties, dict):
            return
        required = set(node.get("required", [])) if isinstance(node.get("required"), list) else set()
        for name, raw in properties.items():
            prop = _resolve(raw, root, depth)
            enum = prop.get("enum")
            if enum is None and isinstance(prop.get("items"), dict):
                enum = _resolve(prop["items"], root, depth).get("enum")
            rows.append(SchemaRow(
                name=f"{prefix}{name}",
                type=type_label(prop, root, depth),
                required=name in required,
                default=_json_value(prop["default"]) if "default" in prop else None,
                enum=tuple(_json_value(v) for v in enum) if isinstance(enum, list) else (),
                constraints=_constraints(prop),
                description=str(prop.get("description", "") or prop.get("title", "")),
            ))
            if depth >= MAX_SCHEMA_DEPTH:
                continue
            if isinstance(prop.get("properties"), dict) or isinstance(prop.get("allOf"), list):
                walk(prop, f"{prefix}{name}.", depth + 1)
            items = prop.get("items")
            if isinstance(items, dict):
                walk(items, f"{prefix}{name}[].", depth + 1)
            for variant in _variants(prop):
                walk(variant, f"{prefix}{name}.", depth + 1)

    top = _resolve(schema, root, 0)
    if isinstance(top.get("items"), dict) and "properties" not in top:
        walk(top["items"], "[].", 1)
    else:
        walk(top, "", 0)
    return rows


# --------------------------------------------------------------------------- Markdown hygiene

_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})")
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
_REF_DEF = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*(\S+).*$")
_HEADING = re.compile(r"^(#{1,6})(\s+.*)$")
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")


def _outside_code(text: str, fix_line: Any) -> str:
    """Apply ``fix_line(line, in_fence=False)`` to the prose of ``text``; code spans and fences are left alone."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(2)[0] == fence[0] and len(match.group(2)) >= len(fence):
                fence = None
            out.append(line)
            continue
        if match:
            fence = match.group(2)
            out.append(line)
            continue
        spans: list[str] = []

        def hide(span: re.Match[str], spans: list[str] = spans) -> str:
            spans.append(span.group(0))
            return f"\x00{len(spans) - 1}\x00"

        def show(match: re.Match[str], spans: list[str] = spans) -> str:
            return spans[int(match.group(1))]

        fixed = fix_line(_CODE_SPAN.sub(hide, line.replace("\x00", "")))
        out.append(re.sub("\x00(\\d+)\x00", show, fixed))
    return "\n".join(out)


def _escape_html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def markdown_text(text: str, links: dict[str, str] | None = None, anchors: set[str] | None = None) -> str:
    """Author Markdown made safe for the site.

    Raw HTML is escaped (third-party skills must not inject markup), and links that
    would break the site are neutralised: a relative link becomes a link to the
    published file when ``links`` maps it (a skill resource), else plain text; an
    in-page ``#anchor`` survives only if ``anchors`` holds it. Absolute http(s) and
    mailto links are kept.
    """
    links = links or {}

    def fix_link(match: re.Match[str]) -> str:
        bang, label, target = match.group(1), match.group(2), match.group(3)
        if _SCHEME.match(target) and target.split(":", 1)[0].lower() in {"http", "https", "mailto"}:
            return match.group(0)
        if target.startswith("#") and anchors is not None and target[1:] in anchors:
            return match.group(0)
        clean = target.split("#", 1)[0].removeprefix("./")
        if clean in links:
            inner = f'<img alt="{html.escape(label)}" src="{links[clean]}">' if bang else label
            return inner if bang else f'<a href="{links[clean]}">{label}</a>'
        return f"{label} (`{target}`)" if target and not target.startswith("#") else label

    def fix_line(segment: str) -> str:
        return _LINK.sub(fix_link, _escape_html(segment))

    def fix_ref_defs(line: str) -> str:
        match = _REF_DEF.match(line)
        if match and not _SCHEME.match(match.group(2)):
            return ""
        return line

    fixed = _outside_code(text, fix_line)
    return "\n".join(fix_ref_defs(line) for line in fixed.split("\n"))


def shift_headings(text: str, by: int) -> str:
    """Push Markdown ATX headings down ``by`` levels (outside code fences), capped at h6."""
    out: list[str] = []
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(2)[0] == fence[0]:
                fence = None
        elif match:
            fence = match.group(2)
        else:
            heading = _HEADING.match(line)
            if heading:
                line = "#" * min(6, len(heading.group(1)) + by) + heading.group(2)  # noqa: PLW2901 - rewritten line
        out.append(line)
    return "\n".join(out)


def heading_slugs(text: str) -> set[str]:
    """Slugs the ``toc`` extension gives the headings of ``text`` (for keeping valid in-page links)."""
    from markdown.extensions.toc import slugify  # type: ignore[import-untyped]  # noqa: PLC0415 - mkdocs dependency, only needed here

    slugs: set[str] = set()
    fence: str | None = None
    for line in text.split("\n"):
        match = _FENCE.match(line)
        if fence is not None:
            if match and match.group(2)[0] == fence[0]:
                fence = None
            continue
        if match:
            fence = match.group(2)
            continue
        heading = _HEADING.match(line)
        if heading:
            slugs.add(slugify(re.sub(r"[`*_]", "", heading.group(2).strip().rstrip("#").strip()), "-"))
    return slugs


def cell(value: Any) -> str:
    """A value made safe for one Markdown table cell."""
    text = "" if value is None else str(value)
    return _escape_html(text).replace("|", "&#124;").replace("\r", "").replace("\n", "<br>")


def code(value: Any) -> str:
    """Inline code that survives table cells and odd characters."""
    return f"<code>{cell(value)}</code>"


_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def html_text(value: Any) -> str:
    """Short author text as HTML for raw-HTML tables: escaped, with `code` and **bold** kept.

    The big tables are emitted as raw HTML blocks, which Python-Markdown passes through
    without inline parsing: that is most of the speed-up for 10,000-tool catalogues.
    """
    text = html.escape("" if value is None else str(value), quote=False).replace("\r", "")
    text = _INLINE_CODE.sub(r"<code>\1</code>", text)
    return _BOLD.sub(r"<strong>\1</strong>", text).replace("\n\n", "<br>").replace("\n", " ")


# --------------------------------------------------------------------------- rendering


def page_of(path: NodePath) -> str:
    """The Markdown page of a node, relative to ``docs/``; the root is the home page."""
    return "index.md" if not path else f"nodes/{'.'.join(path)}.md"


def _relative(target: str, from_page: str) -> str:
    """Relative link between two files of ``docs/`` (POSIX paths)."""
    return posixpath.relpath(target, posixpath.dirname(from_page) or ".")


def _html_target(link: str) -> str:
    """The built URL of a page link (``use_directory_urls: false``): ``a.md#x`` → ``a.html#x``."""
    page, hash_mark, anchor = link.partition("#")
    return (page[:-3] + ".html" if page.endswith(".md") else page) + hash_mark + anchor


@dataclass(frozen=True, slots=True)
class SiteProject:
    """A rendered mkdocs project: pages and static files relative to ``docs/``, plus the config."""

    pages: dict[str, str]
    static: dict[str, bytes]
    config: dict[str, Any]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("templates", "site"),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - the output is Markdown; values go through the cell/md filters
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cell"] = cell
    env.filters["code"] = code
    env.filters["html"] = html_text
    env.filters["page_url"] = _html_target
    env.filters["md"] = lambda text: markdown_text(str(text or ""))
    env.filters["pretty"] = lambda obj: json.dumps(obj, indent=2, ensure_ascii=False, sort_keys=True)
    env.filters["jsonv"] = _json_value
    return env


def _tool_view(spec: dict[str, Any], ref: Ref, page: str, data: BuildData) -> dict[str, Any]:
    """Everything one tool section shows, prepared so the template stays simple."""
    tool_id = spec["tool_id"]
    args_schema = spec.get("args_schema") or {}
    result_schema = spec.get("result_schema")
    skill = spec.get("skill")
    artifact_link = _relative(f"{ARTIFACTS_DIR}/{ref['path']}", page)
    homes = [tuple(spec.get("path", []))] + [tuple(c) for c in spec.get("categories", [])]
    return {
        "id": tool_id,
        "type": spec.get("type", "tool"),
        "summary": spec.get("summary", ""),
        "description": spec.get("description", ""),
        "kind": spec.get("kind", "read"),
        "optional": bool(spec.get("optional", False)),
        "deprecated": spec.get("deprecated", False),
        "version": spec.get("version"),
        "tags": list(spec.get("tags", [])),
        "when_to_use": spec.get("when_to_use", ""),
        "policy": {k: list(v) for k, v in (spec.get("policy") or {}).items() if v},
        "args": schema_rows(args_schema),
        "args_schema": args_schema,
        "result": schema_rows(result_schema) if result_schema else [],
        "result_schema": result_schema,
        "result_type": type_label(result_schema, result_schema) if isinstance(result_schema, dict) else "",
        "examples": [
            {"description": ex.get("description", ""),
             "call": json.dumps({"tool": tool_id, "args": ex.get("args", {})}, indent=2, ensure_ascii=False)}
            for ex in spec.get("examples", [])
        ],
        "errors": list(spec.get("errors", [])),
        "aliases": [(p, spec.get("aliases", {}).get(p, "")) for p in PROVIDER_ORDER if p in spec.get("aliases", {})],
        "tokens": spec.get("tokens", {}),
        "annotations": spec.get("annotations") or {},
        "handler": (spec.get("handler") or {}).get("type", "none (the host runs it)"),
        "categories": [
            {"title": " / ".join(c) or "root", "link": _relative(page_of(c), page)}
            for c in homes[1:] if c in data.nodes
        ],
        "spec_link": artifact_link,
        "spec_bytes": ref["bytes"],
        "skill": None if not skill else {
            "name": skill["name"],
            "link": _relative(f"skills/{skill['name']}.md", page),
            "level1_tokens": skill.get("level1_tokens", 0),
            "body_tokens": skill.get("body_tokens", 0),
            "resources": len(skill.get("resources", [])),
        },
    }


def _breadcrumbs(path: NodePath, page: str, data: BuildData) -> list[dict[str, str]]:
    crumbs = []
    for depth in range(len(path)):
        prefix = path[:depth]
        node = data.nodes.get(prefix)
        crumbs.append({"title": (node.title if node and node.title else (prefix[-1] if prefix else "Home")),
                       "link": _relative(page_of(prefix), page)})
    return crumbs


def _node_context(node: NodeData, data: BuildData) -> dict[str, Any]:
    """What ``_node_body.md.j2`` shows for a node: child nodes, the tools table, the tool sections."""
    page = page_of(node.path)
    listed = []
    for pointer in node.pointers:
        spec = data.specs[pointer["tool_id"]]
        home = tuple(spec.get("path", []))
        anchor = f"#{pointer['tool_id']}"
        link = anchor if home == node.path else _relative(page_of(home), page) + anchor
        listed.append({**pointer, "link": link, "home_here": home == node.path,
                       "required": len((spec.get("args_schema") or {}).get("required", []) or [])})
    sections = [
        _tool_view(data.specs[p["tool_id"]], data.spec_refs[p["tool_id"]], page, data)
        for p in node.pointers if tuple(data.specs[p["tool_id"]].get("path", [])) == node.path
    ]
    children = [
        {**child, "link": _relative(page_of(tuple(child["path"])), page)}
        for child in node.children if tuple(child["path"]) in data.nodes
    ]
    return {"node": node, "title": node.title or (node.path[-1] if node.path else "Catalogue"),
            "crumbs": _breadcrumbs(node.path, page, data), "children": children, "listed": listed,
            "tools": sections}


def _namespaces(data: BuildData) -> list[dict[str, Any]]:
    counts: dict[str, dict[str, int]] = {}
    for tool_id, spec in data.specs.items():
        bucket = counts.setdefault(tool_id.split(".", 1)[0], {"tools": 0, "skills": 0, "read": 0, "write": 0})
        bucket["skills" if spec.get("type") == "skill" else "tools"] += 1
        bucket["write" if spec.get("kind") == "write" else "read"] += 1
    return [{"name": name, **values} for name, values in sorted(counts.items())]


def _home_page(data: BuildData, env: jinja2.Environment) -> str:
    root = data.nodes.get((), NodeData((), "", "", (), (), (), 0))
    return env.get_template("index.md.j2").render(
        **_node_context(root, data), manifest=data.manifest, entry=data.entry, namespaces=_namespaces(data),
        skills=sorted(data.skills.values(), key=lambda s: s.name),
        skill_tools={s["skill"]["name"]: tid for tid, s in data.specs.items() if s.get("skill")},
        entry_link=f"{ARTIFACTS_DIR}/{ENTRY}",
    )


def _skill_page(skill: SkillData, tool_id: str, data: BuildData, env: jinja2.Environment) -> str:
    page = f"skills/{skill.name}.md"
    spec = data.specs[tool_id]
    home = tuple(spec.get("path", []))
    links = {
        res["path"]: _relative(f"{ARTIFACTS_DIR}/{res['ref']['path']}", page)
        for res in skill.resources
    }
    body = shift_headings(skill.body, 1)
    body = markdown_text(body, links, heading_slugs(body))
    resources = [
        {"path": res["path"], "media_type": res.get("media_type", ""), "bytes": res["ref"]["bytes"],
         "link": links[res["path"]]}
        for res in skill.resources
    ]
    metadata = [(key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True))
                for key, value in sorted(skill.frontmatter.items())]
    return env.get_template("skill.md.j2").render(
        skill=skill, tool_id=tool_id, spec=spec, metadata=metadata, body=body, resources=resources,
        home_link=_relative(page_of(home), page) + f"#{tool_id}", home_title=" / ".join(home) or "root",
        body_link=_relative(f"{ARTIFACTS_DIR}/{skill.body_ref['path']}", page),
        spec_link=_relative(f"{ARTIFACTS_DIR}/{data.spec_refs[tool_id]['path']}", page),
    )


def _nav(data: BuildData) -> list[Any]:
    def entry(path: NodePath) -> Any:
        node = data.nodes[path]
        title = node.title or path[-1]
        kids = [tuple(c["path"]) for c in node.children if tuple(c["path"]) in data.nodes]
        if not kids:
            return {title: page_of(path)}
        return {title: [page_of(path), *(entry(k) for k in kids)]}

    root = data.nodes.get(())
    nav: list[Any] = [{"Home": "index.md"}]
    if root is not None:
        nav.extend(entry(tuple(c["path"])) for c in root.children if tuple(c["path"]) in data.nodes)
    if data.skills:
        nav.append({"Skill pages": [{name: f"skills/{name}.md"} for name in sorted(data.skills)]})
    return nav


def mkdocs_config(data: BuildData) -> dict[str, Any]:
    """The ``mkdocs.yml`` of the site: mkdocs-material, offline (no web fonts), strict link checks."""
    manifest = data.manifest
    return {
        "site_name": manifest.get("title") or "toolcat catalogue",
        "site_description": manifest.get("summary") or "",
        "docs_dir": "docs",
        "use_directory_urls": False,
        "strict": True,
        "theme": {
            "name": "material",
            "font": False,
            "features": ["navigation.indexes", "navigation.top", "navigation.tracking", "search.highlight",
                         "search.suggest", "content.code.copy", "toc.follow"],
            "palette": [
                {"scheme": "default", "primary": "indigo", "accent": "indigo",
                 "toggle": {"icon": "material/brightness-4", "name": "Dark mode"}},
                {"scheme": "slate", "primary": "indigo", "accent": "indigo",
                 "toggle": {"icon": "material/brightness-7", "name": "Light mode"}},
            ],
        },
        "plugins": [{"search": {"separator": r"[\s\-_.]+"}}],
        "markdown_extensions": [
            "tables", "attr_list", "admonition",
            {"toc": {"permalink": True, "toc_depth": 2}},
            # Pygments per example block dominated big builds; the theme styles plain code blocks well.
            {"pymdownx.highlight": {"use_pygments": False}},
            "pymdownx.details", "pymdownx.superfences", {"pymdownx.tabbed": {"alternate_style": True}},
        ],
        "extra_css": ["assets/toolcat.css"],
        "extra_javascript": ["assets/toolcat-search.js"],
        "validation": {
            "omitted_files": "warn", "absolute_links": "warn", "unrecognized_links": "warn", "anchors": "warn",
        },
        "nav": _nav(data),
    }


def render_project(data: BuildData) -> SiteProject:
    """Every page of the site, rendered in memory (nothing written)."""
    env = _environment()
    pages: dict[str, str] = {"index.md": _home_page(data, env)}
    for path, node in data.nodes.items():
        if path:
            pages[page_of(path)] = env.get_template("node.md.j2").render(**_node_context(node, data))
    skill_tools = {spec["skill"]["name"]: tool_id for tool_id, spec in data.specs.items() if spec.get("skill")}
    for name, skill in data.skills.items():
        pages[f"skills/{name}.md"] = _skill_page(skill, skill_tools[name], data, env)
    static: dict[str, bytes] = {}
    assets = resources.files("templates").joinpath("site", "assets")
    for item in assets.iterdir():
        if item.is_file():
            static[f"assets/{item.name}"] = item.read_bytes()
    return SiteProject(pages, static, mkdocs_config(data))


# --------------------------------------------------------------------------- writing


def write_project(project: SiteProject, folder: Path) -> Path:
    """Write the mkdocs project (``mkdocs.yml`` + ``docs/``) into ``folder``; returns the config path."""
    docs = folder / "docs"
    if docs.exists():
        shutil.rmtree(docs)
    for rel, text in project.pages.items():
        target = docs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    for rel, data in project.static.items():
        target = docs / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    config = folder / "mkdocs.yml"
    config.write_text(yaml.safe_dump(project.config, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return config


def _write_artifacts(data: BuildData, site_dir: Path) -> None:
    """Publish the verified current version beside the pages, so the site is also a catalogue URL."""
    root = site_dir / ARTIFACTS_DIR
    for rel, blob in data.files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
    entry = {**data.entry, "versions": [v for v in data.entry.get("versions", [])
                                       if v.get("manifest", {}).get("path") == data.entry["manifest"]["path"]]}
    (root / ENTRY).write_text(json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def run_mkdocs(config: Path, site_dir: Path) -> None:
    """``mkdocs build --strict`` in a child process; any warning (a broken link) fails the build."""
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(config),
               "--site-dir", str(site_dir)]
    # the sitemap's dates come from SOURCE_DATE_EPOCH when set: a fixed default keeps two
    # builds of the same catalogue byte-identical (CI may pass the commit time instead)
    env = {"SOURCE_DATE_EPOCH": "0", **os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        problems = "\n".join(line for line in (proc.stderr + proc.stdout).splitlines()
                              if line.startswith(("WARNING", "ERROR", "Aborted", "Error", "Config value")))
        raise BuildError(f"mkdocs build --strict failed for {config}:\n{problems}\n"
                         f"the previous site (if any) was left as it was")


@dataclass(frozen=True, slots=True)
class SiteResult:
    """What ``toolcat site`` reports."""

    out: Path
    registry_version: str
    pages: int
    tools: int
    skills: int
    files: int
    seconds_read: float
    seconds_render: float
    seconds_mkdocs: float

    def summary(self) -> str:
        """One line for the CLI."""
        total = self.seconds_read + self.seconds_render + self.seconds_mkdocs
        return (f"site for registry_version {self.registry_version}: {self.pages} pages, {self.tools} tools, "
                f"{self.skills} skills, {self.files} artifacts published, in {self.out} ({total:.1f}s: read "
                f"{self.seconds_read:.1f}s, render {self.seconds_render:.1f}s, mkdocs {self.seconds_mkdocs:.1f}s)")


def build_site(build_dir: Path, out: Path | None = None, *, project_dir: Path | None = None) -> SiteResult:
    """Read ``build_dir``, render the mkdocs project and build it into ``out`` (default ``build_dir/site``).

    The site is built in a temporary folder beside ``out`` and swapped in only when
    ``mkdocs build --strict`` succeeded, so a failure leaves the previous site untouched.
    """
    build_dir = build_dir.resolve()
    out = (out if out is not None else build_dir / "site").resolve()
    project_dir = project_dir.resolve() if project_dir is not None else None
    started = time.perf_counter()
    data = read_build(build_dir)
    read_done = time.perf_counter()
    project = render_project(data)
    render_done = time.perf_counter()
    out.parent.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".site.tmp-", dir=out.parent))
    try:
        config = write_project(project, project_dir if project_dir is not None else work / "project")
        fresh = work / "site"
        run_mkdocs(config, fresh)
        _write_artifacts(data, fresh)
        mkdocs_done = time.perf_counter()
        old = work / "old"
        if out.exists():
            out.rename(old)
        try:
            fresh.rename(out)
        except OSError:
            if old.exists():
                old.rename(out)
            raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    result = SiteResult(out, str(data.manifest.get("registry_version", "")), len(project.pages),
                        sum(1 for s in data.specs.values() if s.get("type") != "skill"), len(data.skills),
                        len(data.files), read_done - started, render_done - read_done, mkdocs_done - render_done)
    log.info("%s", result.summary())
    return result


def serve_site(site_dir: Path, port: int, announce: Callable[[str], object] = print) -> None:
    """Serve a built site on 127.0.0.1 with the stdlib HTTP server until interrupted."""
    import functools  # noqa: PLC0415
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer  # noqa: PLC0415

    handler = functools.partial(SimpleHTTPRequestHandler, directory=str(site_dir))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        announce(f"serving {site_dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            announce("stopped")
