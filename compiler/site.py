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

import functools
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
from urllib.parse import quote, unquote

import jinja2
import markupsafe
import yaml

from . import FORMAT_VERSION
from .aliases import PROVIDERS
from .errors import BuildError
from .reader.envelope import ReaderError
from .reader.schema_text import type_text
from .reader.source import FolderSource
from .write import build_lock, exchange

log = logging.getLogger(__name__)

NodePath = tuple[str, ...]
Ref = dict[str, Any]

ENTRY = "catalog.json"
#: Where the verified copy of the build's current version lives inside the site.
ARTIFACTS_DIR = "artifacts"
#: Suffixes mkdocs would turn into pages: skill files with them are never put in ``docs/``.
PAGE_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")
MAX_SCHEMA_DEPTH = 6


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
        isinstance(value, dict)
        and isinstance(value.get("path"), str)
        and isinstance(value.get("sha256"), str)
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
        self.source = FolderSource(root)
        self.files: dict[str, bytes] = {}
        self.parsed: dict[str, Any] = {}

    def read(self, ref: Ref, *, held_by: str) -> bytes:
        path: str = ref["path"]
        if path in self.files:
            return self.files[path]
        try:  # the reader's own folder source: clean ref paths, size cap, no symlinks, sha256
            data = self.source.fetch(ref)
        except ReaderError as err:
            what = "integrity check failed" if err.code == "INTEGRITY" else "cannot be read"
            raise BuildError(
                f"{self.root / path}: {what}: {err.message} (held by {held_by}); "
                "rebuild the catalogue with `toolcat build --force`"
            ) from None
        self.files[path] = data
        return data

    def json(self, ref: Ref, *, held_by: str) -> Any:
        path = ref["path"]
        if path not in self.parsed:
            try:
                self.parsed[path] = json.loads(self.read(ref, held_by=held_by))
            except ValueError as exc:
                raise BuildError(
                    f"{self.root / path}: not valid JSON ({exc}); rebuild with `toolcat build --force`"
                ) from exc
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


#: Names that become page file names, URL paths and HTML ids; ``toolcat build`` only writes names like these.
_SAFE_NAMES = {
    "node name": re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*"),
    "tool id": re.compile(r"[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)*"),
    "skill name": re.compile(r"[A-Za-z0-9]+(-[A-Za-z0-9]+)*"),
}


def _check_name(kind: str, value: Any, held_by: str) -> str:
    if not isinstance(value, str) or len(value) > 128 or not _SAFE_NAMES[kind].fullmatch(value):
        raise BuildError(
            f"{held_by}: {kind} {value!r} is not one toolcat builds (it becomes a file name, URL and "
            "HTML id on the site); rebuild the catalogue with `toolcat build --force`"
        )
    return value


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
        path = tuple(_check_name("node name", part, ref["path"]) for part in shard["path"])
        if path in nodes:
            continue
        pointers = list(shard["tools"])
        for page_ref in shard.get("pages", []):
            pointers.extend(files.json(page_ref, held_by=ref["path"])["tools"])
        nodes[path] = NodeData(
            path,
            shard.get("title", ""),
            shard.get("summary", ""),
            tuple(shard.get("tags", [])),
            tuple(shard.get("children", [])),
            tuple(pointers),
            int(shard.get("tool_count", 0)),
        )
        pending.extend((child["ref"], ref["path"]) for child in reversed(shard.get("children", [])))
        for pointer in pointers:
            tool_id = _check_name("tool id", pointer["tool_id"], ref["path"])
            if tool_id in specs:
                continue
            spec = files.json(pointer["spec"], held_by=ref["path"])
            specs[tool_id] = spec
            spec_refs[tool_id] = pointer["spec"]
            skill = spec.get("skill")
            if skill:
                _check_name("skill name", skill["name"], pointer["spec"]["path"])
                body = files.read(skill["body"], held_by=pointer["spec"]["path"]).decode("utf-8")
                skills[skill["name"]] = SkillData(
                    skill["name"],
                    dict(skill.get("frontmatter", {})),
                    body,
                    skill["body"],
                    tuple(skill.get("resources", [])),
                )
    log.info(
        "read build %s: %d nodes, %d tools, %d files verified",
        manifest.get("registry_version"),
        len(nodes),
        len(specs),
        len(files.files),
    )
    return BuildData(
        entry, manifest, dict(sorted(nodes.items())), dict(sorted(specs.items())), spec_refs, skills, files.files
    )


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
    """The type as the agent reads it (:func:`toolcat.reader.schema_text.type_text`), plus a const or a format."""
    node = _resolve(schema, root, depth)
    if "const" in node:
        return f"const {json.dumps(node['const'], ensure_ascii=False)}"
    label = type_text(schema, root, depth)
    if isinstance(node.get("format"), str):
        label += f" ({node['format']})"
    return label


CONSTRAINT_LABELS = (
    ("minimum", "≥"),
    ("exclusiveMinimum", ">"),
    ("maximum", "≤"),
    ("exclusiveMaximum", "<"),
    ("minLength", "min length"),
    ("maxLength", "max length"),
    ("minItems", "min items"),
    ("maxItems", "max items"),
    ("pattern", "pattern"),
    ("multipleOf", "multiple of"),
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
            rows.append(
                SchemaRow(
                    name=f"{prefix}{name}",
                    type=type_label(prop, root, depth),
                    required=name in required,
                    default=_json_value(prop["default"]) if "default" in prop else None,
                    enum=tuple(_json_value(v) for v in enum) if isinstance(enum, list) else (),
                    constraints=_constraints(prop),
                    description=str(prop.get("description", "") or prop.get("title", "")),
                )
            )
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


# --------------------------------------------------------------------------- untrusted text → safe HTML
#
# Every string in the artifacts was written by a catalogue author (tool YAML, _node.yaml, SKILL.md
# of a third-party skill) and is untrusted. None of it reaches mkdocs' Markdown parser:
# - author Markdown is rendered here by Python-Markdown with raw HTML switched off and without
#   attr_list / md_in_html, its links and images are rewritten by policy, then nh3 (ammonia) keeps
#   only an allow-list of tags, attributes, classes and URL schemes; the result enters the page as
#   a raw HTML block, which Python-Markdown passes through untouched;
# - every other value is escaped: Jinja autoescape for HTML, ``cell`` for Markdown text;
# - titles that mkdocs-material prints without escaping (nav, <title>, header) are neutralised;
# - mkdocs runs nh3 again over each page's content (``on_page_content``, a wider allow-list that
#   keeps the theme's own markup), and every page carries a Content-Security-Policy that allows
#   only the theme's own inline scripts (by sha256) and no inline event handlers or javascript: URLs.

#: URL schemes author links and images may use; relative URLs are rewritten or dropped by policy.
SAFE_SCHEMES = frozenset({"http", "https", "mailto"})
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
#: Browsers drop tabs and newlines anywhere in a URL and trim C0 controls and spaces around it.
_URL_JUNK = re.compile(r"[\x00-\x20\x7f]+")
ADMONITION_TYPES = frozenset(
    {
        "note",
        "abstract",
        "summary",
        "tldr",
        "info",
        "todo",
        "tip",
        "hint",
        "important",
        "success",
        "check",
        "done",
        "question",
        "help",
        "faq",
        "warning",
        "caution",
        "attention",
        "failure",
        "fail",
        "missing",
        "danger",
        "error",
        "bug",
        "example",
        "quote",
        "cite",
    }
)
#: Tags author Markdown may produce (what Python-Markdown, tables, admonitions, details and fences emit).
FRAGMENT_TAGS = frozenset(
    {
        "a",
        "abbr",
        "b",
        "blockquote",
        "br",
        "code",
        "dd",
        "del",
        "details",
        "div",
        "dl",
        "dt",
        "em",
        "h1",
        "h2",
        "h3",
        "h4",
        "h5",
        "h6",
        "hr",
        "i",
        "img",
        "ins",
        "kbd",
        "li",
        "mark",
        "ol",
        "p",
        "pre",
        "s",
        "samp",
        "small",
        "span",
        "strong",
        "sub",
        "summary",
        "sup",
        "table",
        "tbody",
        "td",
        "tfoot",
        "th",
        "thead",
        "tr",
        "u",
        "ul",
    }
)
_HEADINGS = tuple(f"h{level}" for level in range(1, 7))
FRAGMENT_ATTRIBUTES: dict[str, set[str]] = {
    "a": {"href", "title", "class"},
    "img": {"src", "alt", "title"},
    "ol": {"start"},
    "td": {"style", "colspan", "rowspan"},
    "th": {"style", "colspan", "rowspan"},
    "code": {"class"},
    "pre": {"class"},
    "div": {"class"},
    "p": {"class"},
    "details": {"class", "open"},
    "span": {"class"},
    **{tag: {"id"} for tag in _HEADINGS},
}
_CODE_CLASS = re.compile(r"^language-[A-Za-z0-9_+#.-]{1,40}$")
_FRAGMENT_CLASSES: dict[str, frozenset[str]] = {
    "a": frozenset({"headerlink"}),
    "pre": frozenset({"highlight"}),
    "p": frozenset({"admonition-title"}),
    "div": ADMONITION_TYPES | {"admonition"},
    "details": ADMONITION_TYPES,
    "span": frozenset({"tc-target"}),
}
#: Page ids author headings must not take: the theme's (``__*``) and toolcat's own.
RESERVED_IDS = frozenset({"toolcat-search", "toolcat-search-input", "toolcat-search-results", "toolcat-search-status"})


def url_scheme(url: str) -> str:
    """The scheme a browser would see in ``url`` (entities decoded, whitespace and controls dropped), lowercased."""
    match = _SCHEME.match(_URL_JUNK.sub("", html.unescape(url)))
    return match.group(0)[:-1].lower() if match else ""


def _fragment_class(tag: str, attribute: str, value: str) -> str | None:
    """nh3 attribute filter: author HTML keeps only the classes its own renderer gives (no theme classes)."""
    if attribute != "class":
        return value
    allowed = _FRAGMENT_CLASSES.get(tag, frozenset())
    kept = [name for name in value.split() if name in allowed or (tag == "code" and _CODE_CLASS.match(name))]
    return " ".join(kept) or None


@functools.cache
def _fragment_cleaner() -> Any:
    import nh3  # noqa: PLC0415 - only site builds sanitise

    return nh3.Cleaner(
        tags=FRAGMENT_TAGS,
        attributes=FRAGMENT_ATTRIBUTES,
        attribute_filter=_fragment_class,
        url_schemes=SAFE_SCHEMES,
        link_rel="noopener noreferrer",
        filter_style_properties={"text-align"},
        strip_comments=True,
    )


def sanitize_fragment(fragment: str) -> str:
    """nh3 with the author allow-list: no script, style, form, frame, event handler or non-http(s)/mailto URL."""
    return str(_fragment_cleaner().clean(fragment))


@dataclass(frozen=True, slots=True)
class LinkPolicy:
    """Where author links may point: published resource files (by their path in the skill) and in-page anchors."""

    resources: dict[str, str] = field(default_factory=dict)
    reserved_ids: frozenset[str] = frozenset()


def _target(target: str, policy: LinkPolicy, anchors: set[str]) -> str | None:
    """The URL an author link or image keeps, or None when it must become text."""
    scheme = url_scheme(target)
    decoded = html.unescape(target).strip()
    if scheme:
        return decoded if scheme in SAFE_SCHEMES else None
    if decoded.startswith("#"):
        return decoded if unquote(decoded[1:]) in anchors else None
    if decoded.startswith(("/", "\\")):  # site-absolute or protocol-relative: nothing an author can know about
        return None
    clean = posixpath.normpath(unquote(decoded.split("#", 1)[0].split("?", 1)[0]))
    return policy.resources.get(clean)


def _author_markdown() -> Any:
    """A Python-Markdown for untrusted text: raw HTML off, no attr_list/md_in_html, links and headings by policy."""
    from xml.etree import ElementTree as ET  # noqa: PLC0415

    import markdown  # type: ignore[import-untyped]  # noqa: PLC0415 - a dependency of mkdocs, only needed here
    from markdown.extensions import toc  # type: ignore[import-untyped]  # noqa: PLC0415
    from markdown.treeprocessors import Treeprocessor  # type: ignore[import-untyped]  # noqa: PLC0415

    class AuthorPolicy(Treeprocessor):  # type: ignore[misc]  # Python-Markdown is untyped
        """Shift headings (ids and permalinks when asked), then keep or neutralise every link and image."""

        policy = LinkPolicy()
        shift = 0
        heading_ids = False

        def run(self, root: Any) -> None:
            anchors = set(self.policy.reserved_ids)
            used = set(self.policy.reserved_ids) | RESERVED_IDS
            for el in root.iter():
                if el.tag in _HEADINGS:
                    el.tag = f"h{min(6, int(el.tag[1]) + self.shift)}"
                    if self.heading_ids:
                        name = toc.strip_tags(toc.render_inner_html(el, self.md))
                        slug = toc.slugify(html.unescape(name), "-").lstrip("_") or "section"
                        el.set("id", toc.unique(slug, used))
                        anchors.add(el.get("id"))
                        link = ET.SubElement(
                            el, "a", {"class": "headerlink", "href": f"#{el.get('id')}", "title": "Permanent link"}
                        )
                        link.text = "\u00b6"
            for el in list(root.iter()):
                attribute = {"a": "href", "img": "src"}.get(el.tag)
                if attribute is None:
                    continue
                raw = el.get(attribute, "")
                kept = _target(raw, self.policy, anchors)
                if kept is not None:
                    el.set(attribute, kept)
                    continue
                label = el.get("alt", "") if el.tag == "img" else None
                el.tag = "span"
                el.attrib.clear()
                if label is not None:
                    el.text = label
                if raw and not html.unescape(raw).strip().startswith("#"):
                    note = ET.SubElement(el, "span", {"class": "tc-target"})
                    note.text = " ("
                    shown = ET.SubElement(note, "code")
                    shown.text = raw
                    shown.tail = ")"

    md = markdown.Markdown(
        extensions=["tables", "admonition", "pymdownx.details", "pymdownx.superfences", "pymdownx.highlight"],
        extension_configs={"pymdownx.highlight": {"use_pygments": False}},
    )
    md.preprocessors.deregister("html_block")  # raw HTML is text, shown escaped
    md.inlinePatterns.deregister("html")
    md.treeprocessors.register(AuthorPolicy(md), "toolcat_policy", -1)  # after 'unescape', so hrefs are final
    return md


@functools.cache
def _markdown_instance() -> Any:
    return _author_markdown()


#: One line of text with nothing Markdown or HTML would read as markup: escaped directly (most summaries).
_PLAIN = re.compile(r"[A-Za-z\"'(][^`*_\[\]<>&!\\#{}~|\n\r\t]*")


def author_html(text: Any, *, policy: LinkPolicy | None = None, shift: int = 0, heading_ids: bool = False) -> str:
    """Untrusted author Markdown rendered and sanitised into an HTML fragment safe to put in a page."""
    text = "" if text is None else str(text)
    stripped = text.strip()
    if not stripped:
        return ""
    if _PLAIN.fullmatch(stripped):
        return f"<p>{html.escape(stripped, quote=False)}</p>"
    md = _markdown_instance()
    processor = md.treeprocessors["toolcat_policy"]
    processor.policy, processor.shift, processor.heading_ids = policy or LinkPolicy(), shift, heading_ids
    md.reset()
    return sanitize_fragment(md.convert(text.replace("\x00", "")))


def _markup(value: str) -> markupsafe.Markup:
    return markupsafe.Markup(value)  # noqa: S704 - every caller passes escaped or nh3-sanitised HTML


def md_block(
    text: Any, *, css: str = "", policy: LinkPolicy | None = None, shift: int = 4, heading_ids: bool = False
) -> markupsafe.Markup:
    """Author Markdown as a raw HTML block for a Markdown page (by default headings go below the tool's h4)."""
    fragment = author_html(text, policy=policy, shift=shift, heading_ids=heading_ids)
    classes = html.escape(f"tc-md {css}".strip())
    return _markup(f'<div class="{classes}">\n{fragment}\n</div>' if fragment else "")


#: Characters Markdown reads as syntax (links, emphasis, code, attr_list, tables, HTML), as entities.
_MARKDOWN_SPECIAL = str.maketrans({c: f"&#{ord(c)};" for c in "\\`*_{}[]<>&|\"'!#~"})


def cell(value: Any) -> markupsafe.Markup:
    """Plain text made inert in Markdown and HTML: every syntax character becomes an entity."""
    text = "" if value is None else str(value)
    return _markup(text.translate(_MARKDOWN_SPECIAL).replace("\r", "").replace("\n", "<br>"))


def code(value: Any) -> markupsafe.Markup:
    """Inline code that survives table cells and odd characters."""
    return _markup(f"<code>{cell(value)}</code>")


_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")


def html_text(value: Any) -> markupsafe.Markup:
    """Short author text as HTML for raw-HTML tables: escaped, with `code` and **bold** kept.

    The big tables are emitted as raw HTML blocks, which Python-Markdown passes through
    without inline parsing: that is most of the speed-up for 10,000-tool catalogues.
    """
    text = html.escape("" if value is None else str(value), quote=True).replace("\r", "")
    text = _INLINE_CODE.sub(r"<code>\1</code>", text)
    return _markup(_BOLD.sub(r"<strong>\1</strong>", text).replace("\n\n", "<br>").replace("\n", " "))


#: What mkdocs-material prints unescaped (nav, <title>, header, meta description) must hold no markup at all:
#: ``<`` and ``&`` are followed by a WORD JOINER (U+2060), so they can open neither a tag nor a character
#: reference and still read as themselves; quotes become typographic ones.
_THEME_NEUTRAL = str.maketrans({"<": "<\u2060", "&": "&\u2060", '"': "\u201d", "'": "\u2019"})


def theme_text(value: Any) -> str:
    """A title or description made inert for the theme, on one line.

    mkdocs-material renders nav titles, page titles and the site name without escaping, and
    through ``striptags`` (which decodes entities) in ``<title>``, so neither raw text nor
    entities are safe there. A ``<`` or ``&`` followed by U+2060 starts no markup in any of
    those contexts, and a quote that is not ASCII ends no attribute.
    """
    return " ".join(("" if value is None else str(value)).translate(_THEME_NEUTRAL).split())


def _quote_url(url: str) -> str:
    """A relative URL built from artifact paths, percent-encoded so no quote, space or angle bracket survives."""
    path, hash_mark, fragment = url.partition("#")
    return quote(path, safe="/") + hash_mark + quote(fragment, safe="")


# --------------------------------------------------------------------------- rendering


def page_of(path: NodePath) -> str:
    """The Markdown page of a node, relative to ``docs/``; the root is the home page."""
    return "index.md" if not path else f"nodes/{'.'.join(path)}.md"


def _relative(target: str, from_page: str) -> str:
    """Relative link between two files of ``docs/`` (POSIX paths)."""
    return posixpath.relpath(target, posixpath.dirname(from_page) or ".")


def _html_target(link: str) -> str:
    """The built URL of a page link (``use_directory_urls: false``), percent-encoded: ``a.md#x`` → ``a.html#x``."""
    page, hash_mark, anchor = link.partition("#")
    return _quote_url((page[:-3] + ".html" if page.endswith(".md") else page) + hash_mark + anchor)


@dataclass(frozen=True, slots=True)
class SiteProject:
    """A rendered mkdocs project: pages and static files relative to ``docs/``, plus the config."""

    pages: dict[str, str]
    static: dict[str, bytes]
    config: dict[str, Any]


def _md_filter(text: Any, css: str = "", *, wrap: bool = True) -> markupsafe.Markup:
    """Author Markdown for a page: a sanitised HTML block (``wrap``) or bare fragment (a list item's body)."""
    if not wrap:
        return _markup(author_html(text, shift=4))
    return md_block(text, css=css)


def _environment() -> jinja2.Environment:
    """Jinja for Markdown pages: autoescape on, so a value is HTML-escaped unless a filter made it Markup."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("toolcat.templates", "site"),
        undefined=jinja2.StrictUndefined,
        autoescape=True,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["cell"] = cell
    env.filters["code"] = code
    env.filters["html"] = html_text
    env.filters["page_url"] = _html_target
    env.filters["url"] = _quote_url
    env.filters["md"] = _md_filter
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
            {
                "description": ex.get("description", ""),
                "call": json.dumps({"tool": tool_id, "args": ex.get("args", {})}, indent=2, ensure_ascii=False),
            }
            for ex in spec.get("examples", [])
        ],
        "errors": list(spec.get("errors", [])),
        "aliases": [(p, spec.get("aliases", {}).get(p, "")) for p in PROVIDERS if p in spec.get("aliases", {})],
        "tokens": spec.get("tokens", {}),
        "annotations": spec.get("annotations") or {},
        "handler": (spec.get("handler") or {}).get("type", "none (the host runs it)"),
        "categories": [
            {"title": " / ".join(c) or "root", "link": _relative(page_of(c), page)}
            for c in homes[1:]
            if c in data.nodes
        ],
        "spec_link": artifact_link,
        "spec_bytes": ref["bytes"],
        "skill": None
        if not skill
        else {
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
        crumbs.append(
            {
                "title": (node.title if node and node.title else (prefix[-1] if prefix else "Home")),
                "link": _relative(page_of(prefix), page),
            }
        )
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
        listed.append(
            {
                **pointer,
                "link": link,
                "home_here": home == node.path,
                "required": len((spec.get("args_schema") or {}).get("required", []) or []),
            }
        )
    sections = [
        _tool_view(data.specs[p["tool_id"]], data.spec_refs[p["tool_id"]], page, data)
        for p in node.pointers
        if tuple(data.specs[p["tool_id"]].get("path", [])) == node.path
    ]
    children = [
        {**child, "link": _relative(page_of(tuple(child["path"])), page)}
        for child in node.children
        if tuple(child["path"]) in data.nodes
    ]
    title = node.title or (node.path[-1] if node.path else "Catalogue")
    return {
        "node": node,
        "title": title,
        "page_title": theme_text(title),
        "crumbs": _breadcrumbs(node.path, page, data),
        "children": children,
        "listed": listed,
        "tools": sections,
    }


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
        **_node_context(root, data),
        manifest=data.manifest,
        entry=data.entry,
        namespaces=_namespaces(data),
        skills=sorted(data.skills.values(), key=lambda s: s.name),
        skill_tools={s["skill"]["name"]: tid for tid, s in data.specs.items() if s.get("skill")},
        entry_link=f"{ARTIFACTS_DIR}/{ENTRY}",
    )


#: Files a browser renders as a document that can run script (HTML, SVG, XML): published for readers, never linked.
ACTIVE_SUFFIXES = (
    ".html",
    ".htm",
    ".xhtml",
    ".xht",
    ".shtml",
    ".svg",
    ".svgz",
    ".xml",
    ".xsl",
    ".xslt",
    ".mht",
    ".mhtml",
)
ACTIVE_MEDIA_TYPES = frozenset(
    {
        "text/html",
        "application/xhtml+xml",
        "image/svg+xml",
        "text/xml",
        "application/xml",
        "text/xsl",
        "application/xslt+xml",
    }
)


def active_content(path: str, media_type: str) -> bool:
    """Whether a browser opening this resource file from the site's origin could run script in it."""
    kind = media_type.partition(";")[0].strip().lower()
    return path.lower().endswith(ACTIVE_SUFFIXES) or kind in ACTIVE_MEDIA_TYPES


def _skill_page(skill: SkillData, tool_id: str, data: BuildData, env: jinja2.Environment) -> str:
    page = f"skills/{skill.name}.md"
    spec = data.specs[tool_id]
    home = tuple(spec.get("path", []))
    links = {
        posixpath.normpath(res["path"]): _quote_url(_relative(f"{ARTIFACTS_DIR}/{res['ref']['path']}", page))
        for res in skill.resources
        if not active_content(res["path"], res.get("media_type", ""))
    }
    # the page's own headings keep their ids; body headings that would clash get a suffix
    from markdown.extensions.toc import slugify  # type: ignore[import-untyped]  # noqa: PLC0415 - mkdocs dependency

    page_ids = frozenset({slugify(skill.name, "-"), "metadata", "resources", "instructions"})
    body = md_block(skill.body, policy=LinkPolicy(links, page_ids), shift=1, heading_ids=True)
    resources = [
        {
            "path": res["path"],
            "media_type": res.get("media_type", ""),
            "bytes": res["ref"]["bytes"],
            "link": links.get(posixpath.normpath(res["path"])),
        }
        for res in skill.resources
    ]
    metadata = [
        (key, value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True))
        for key, value in sorted(skill.frontmatter.items())
    ]
    return env.get_template("skill.md.j2").render(
        skill=skill,
        page_title=theme_text(skill.name),
        tool_id=tool_id,
        spec=spec,
        metadata=metadata,
        body=body,
        resources=resources,
        home_link=_relative(page_of(home), page) + f"#{tool_id}",
        home_title=" / ".join(home) or "root",
        body_link=_relative(f"{ARTIFACTS_DIR}/{skill.body_ref['path']}", page),
        spec_link=_relative(f"{ARTIFACTS_DIR}/{data.spec_refs[tool_id]['path']}", page),
    )


def _nav(data: BuildData) -> list[Any]:
    def entry(path: NodePath) -> Any:
        node = data.nodes[path]
        title = theme_text(node.title or path[-1])
        kids = [tuple(c["path"]) for c in node.children if tuple(c["path"]) in data.nodes]
        if not kids:
            return {title: page_of(path)}
        return {title: [page_of(path), *(entry(k) for k in kids)]}

    root = data.nodes.get(())
    nav: list[Any] = [{"Home": "index.md"}]
    if root is not None:
        nav.extend(entry(tuple(c["path"])) for c in root.children if tuple(c["path"]) in data.nodes)
    if data.skills:
        nav.append({"Skill pages": [{theme_text(name): f"skills/{name}.md"} for name in sorted(data.skills)]})
    return nav


def mkdocs_config(data: BuildData) -> dict[str, Any]:
    """The ``mkdocs.yml`` of the site: mkdocs-material, offline (no web fonts), strict link checks."""
    manifest = data.manifest
    return {
        "site_name": theme_text(manifest.get("title")) or "toolcat catalogue",
        "site_description": theme_text(manifest.get("summary")),
        "docs_dir": "docs",
        "use_directory_urls": False,
        "strict": True,
        "theme": {
            "name": "material",
            "font": False,
            "features": [
                "navigation.indexes",
                "navigation.top",
                "navigation.tracking",
                "search.highlight",
                "search.suggest",
                "content.code.copy",
                "toc.follow",
            ],
            "palette": [
                {
                    "scheme": "default",
                    "primary": "indigo",
                    "accent": "indigo",
                    "toggle": {"icon": "material/brightness-4", "name": "Dark mode"},
                },
                {
                    "scheme": "slate",
                    "primary": "indigo",
                    "accent": "indigo",
                    "toggle": {"icon": "material/brightness-7", "name": "Light mode"},
                },
            ],
        },
        "plugins": [{"search": {"separator": r"[\s\-_.]+"}}],
        "markdown_extensions": [
            "tables",
            "attr_list",
            "admonition",
            {"toc": {"permalink": True, "toc_depth": 2}},
            # Pygments per example block dominated big builds; the theme styles plain code blocks well.
            {"pymdownx.highlight": {"use_pygments": False}},
            "pymdownx.details",
            "pymdownx.superfences",
            {"pymdownx.tabbed": {"alternate_style": True}},
        ],
        "extra_css": ["assets/toolcat.css"],
        "extra_javascript": ["assets/toolcat-search.js"],
        "validation": {
            "omitted_files": "warn",
            "absolute_links": "warn",
            "unrecognized_links": "warn",
            "anchors": "warn",
        },
        "nav": _nav(data),
        "hooks": [HOOKS_FILE],
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
    assets = resources.files("toolcat.templates").joinpath("site", "assets")
    for item in assets.iterdir():
        if item.is_file():
            static[f"assets/{item.name}"] = item.read_bytes()
    return SiteProject(pages, static, mkdocs_config(data))


# --------------------------------------------------------------------------- mkdocs hooks (run inside mkdocs)

#: The hook module written beside ``mkdocs.yml``; mkdocs loads it by path and calls its ``on_*`` functions.
HOOKS_FILE = "toolcat_hooks.py"
HOOKS_SOURCE = (
    '"""mkdocs hooks of a toolcat site (generated): sanitise page content, add a Content-Security-Policy."""\n\n'
    "from toolcat.site import on_page_content, on_post_page, on_post_template  # noqa: F401\n"
)
#: Tags the theme's Markdown extensions and toolcat's templates put in page content (tabs, admonitions, tables).
PAGE_TAGS = FRAGMENT_TAGS | {"input", "label", "caption", "colgroup", "col", "figure", "figcaption"}
PAGE_ATTRIBUTES: dict[str, set[str]] = {
    "*": {"class", "id", "title", "lang", "dir", "aria-label", "aria-hidden"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "ol": {"start"},
    "details": {"open"},
    "td": {"style", "colspan", "rowspan"},
    "th": {"style", "colspan", "rowspan"},
    "div": {"data-tabs", "data-catalog"},
    "label": {"for"},
    "input": {"id", "name", "checked", "placeholder", "autocomplete", "aria-label"},
}
#: ``Content-Security-Policy`` of every page; the theme's inline scripts are allowed by hash, nothing else inline.
CSP = (
    "default-src 'self'; script-src 'self' {hashes}; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: https: http:; font-src 'self' data:; connect-src 'self'; worker-src 'self'; "
    "object-src 'none'; frame-src 'none'; base-uri 'none'; form-action 'none'"
)
_SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script\s*>", re.DOTALL | re.IGNORECASE)
_CHARSET = re.compile(r"<meta charset=\"[^\"]*\">", re.IGNORECASE)


@functools.cache
def _page_cleaner() -> Any:
    import nh3  # noqa: PLC0415 - only site builds sanitise

    return nh3.Cleaner(
        tags=PAGE_TAGS,
        attributes=PAGE_ATTRIBUTES,
        url_schemes=SAFE_SCHEMES,
        link_rel="noopener noreferrer",
        tag_attribute_values={"input": {"type": {"radio", "checkbox", "search"}}},
        filter_style_properties={"text-align"},
        strip_comments=True,
    )


def sanitize_page(content: str) -> str:
    """nh3 over a whole page's content: keeps the theme's and toolcat's markup, drops anything executable."""
    return str(_page_cleaner().clean(content))


@functools.cache
def _theme_scripts() -> tuple[re.Pattern[str], ...]:
    """The inline scripts of mkdocs-material's ``partials/javascripts``, as exact patterns.

    Their only Jinja expression (the site's base URL) matches a relative path; every other
    character must be the theme's own.
    """
    folder = resources.files("material").joinpath("templates", "partials", "javascripts")
    patterns = []
    for item in sorted(folder.iterdir(), key=lambda i: i.name):
        if item.name.endswith(".html"):
            for body in re.findall(r"<script>(.*?)</script>", item.read_text(encoding="utf-8"), re.DOTALL):
                parts = re.split(r"\{\{.*?\}\}", body)
                patterns.append(re.compile(r"[\w./-]*".join(re.escape(part) for part in parts)))
    return tuple(patterns)


def content_security_policy(document: str, where: str) -> str:
    """The page with a CSP ``<meta>`` first in its ``<head>``; an inline script that is not the theme's is refused."""
    import base64  # noqa: PLC0415
    import hashlib  # noqa: PLC0415

    hashes: list[str] = []
    for attrs, body in _SCRIPT.findall(document):
        src = re.search(r"\bsrc=\"([^\"]*)\"", attrs)
        if src is not None:
            if url_scheme(src.group(1)) or src.group(1).startswith("//") or body.strip():
                raise BuildError(f"{where}: a script from {src.group(1)!r} is not one of the site's own files")
            continue
        if re.search(r"\btype=\"application/json\"", attrs):
            continue  # data (the theme's __config), never executed
        if not any(pattern.fullmatch(body) for pattern in _theme_scripts()):
            raise BuildError(
                f"{where}: an inline script that is not mkdocs-material's own ({body[:60]!r}…); refusing to publish it"
            )
        digest = base64.b64encode(hashlib.sha256(body.encode("utf-8")).digest()).decode("ascii")
        hashes.append(f"'sha256-{digest}'")
    meta = f'<meta http-equiv="Content-Security-Policy" content="{CSP.format(hashes=" ".join(dict.fromkeys(hashes)))}">'
    charset = _CHARSET.search(document)
    if charset is None:
        raise BuildError(f"{where}: no <meta charset> to put the Content-Security-Policy after")
    return document[: charset.end()] + meta + document[charset.end() :]


def _plugin_error(exc: BuildError) -> Exception:
    from mkdocs.exceptions import PluginError  # noqa: PLC0415 - only inside mkdocs

    return PluginError(str(exc))


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001 - mkdocs' hook signature
    """mkdocs hook: every page's rendered content goes through nh3 before the theme wraps it."""
    return sanitize_page(html)


def on_post_page(output: str, page: Any, config: Any) -> str:  # noqa: ARG001 - mkdocs' hook signature
    """mkdocs hook: the finished page gets its Content-Security-Policy (or the build stops)."""
    try:
        return content_security_policy(output, page.file.src_uri)
    except BuildError as exc:
        raise _plugin_error(exc) from exc


def on_post_template(output_content: str, template_name: str, config: Any) -> str:  # noqa: ARG001 - mkdocs' hook signature
    """mkdocs hook: the theme's own HTML pages (404.html) get the same policy."""
    if not template_name.endswith(".html"):
        return output_content
    try:
        return content_security_policy(output_content, template_name)
    except BuildError as exc:
        raise _plugin_error(exc) from exc


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
    (folder / HOOKS_FILE).write_text(HOOKS_SOURCE, encoding="utf-8")
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
    entry = {
        **data.entry,
        "versions": [
            v
            for v in data.entry.get("versions", [])
            if v.get("manifest", {}).get("path") == data.entry["manifest"]["path"]
        ],
    }
    (root / ENTRY).write_text(json.dumps(entry, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")


def run_mkdocs(config: Path, site_dir: Path) -> None:
    """``mkdocs build --strict`` in a child process; any warning (a broken link) fails the build."""
    command = [
        sys.executable,
        "-m",
        "mkdocs",
        "build",
        "--strict",
        "--config-file",
        str(config),
        "--site-dir",
        str(site_dir),
    ]
    # the sitemap's dates come from SOURCE_DATE_EPOCH when set: a fixed default keeps two
    # builds of the same catalogue byte-identical (CI may pass the commit time instead)
    env = {"SOURCE_DATE_EPOCH": "0", **os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    # the generated hooks import toolcat.site from the same interpreter's installed toolcat
    proc = subprocess.run(command, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        problems = "\n".join(
            line
            for line in (proc.stderr + proc.stdout).splitlines()
            if line.startswith(("WARNING", "ERROR", "Aborted", "Error", "Config value"))
        )
        raise BuildError(
            f"mkdocs build --strict failed for {config}:\n{problems}\nthe previous site (if any) was left as it was"
        )


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
        return (
            f"site for registry_version {self.registry_version}: {self.pages} pages, {self.tools} tools, "
            f"{self.skills} skills, {self.files} artifacts published, in {self.out} ({total:.1f}s: read "
            f"{self.seconds_read:.1f}s, render {self.seconds_render:.1f}s, mkdocs {self.seconds_mkdocs:.1f}s)"
        )


def _swap_in(fresh: Path, out: Path, old: Path) -> None:
    """Put ``fresh`` in place of ``out`` in one step where the kernel can (the previous site ends up in ``fresh``)."""
    if out.exists() and exchange(fresh, out):
        return
    if out.exists():
        out.rename(old)
    try:
        fresh.rename(out)
    except OSError:
        if old.exists():
            old.rename(out)
        raise


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
    with build_lock(out):  # site builds into one folder take turns; leftovers of a killed one are removed first
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
        try:
            config = write_project(project, project_dir if project_dir is not None else work / "project")
            fresh = work / "site"
            run_mkdocs(config, fresh)
            _write_artifacts(data, fresh)
            mkdocs_done = time.perf_counter()
            _swap_in(fresh, out, work / "old")
        finally:
            shutil.rmtree(work, ignore_errors=True)
    result = SiteResult(
        out,
        str(data.manifest.get("registry_version", "")),
        len(project.pages),
        sum(1 for s in data.specs.values() if s.get("type") != "skill"),
        len(data.skills),
        len(data.files),
        read_done - started,
        render_done - read_done,
        mkdocs_done - render_done,
    )
    log.info("%s", result.summary())
    return result


def serve_site(site_dir: Path, port: int, announce: Callable[[str], object] = print) -> None:
    """Serve a built site on 127.0.0.1 with the stdlib HTTP server until interrupted."""
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer  # noqa: PLC0415

    class Handler(SimpleHTTPRequestHandler):
        def end_headers(self) -> None:
            """Published artifacts are data: never rendered as a document of the site's origin."""
            if self.path.lstrip("/").startswith(f"{ARTIFACTS_DIR}/"):
                self.send_header("Content-Security-Policy", "sandbox; default-src 'none'")
                self.send_header("X-Content-Type-Options", "nosniff")
            super().end_headers()

    handler = functools.partial(Handler, directory=str(site_dir))
    with ThreadingHTTPServer(("127.0.0.1", port), handler) as server:
        announce(f"serving {site_dir} on http://127.0.0.1:{server.server_address[1]}/ (Ctrl-C stops)")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            announce("stopped")
