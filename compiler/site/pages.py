"""The site's pages: node, home and skill pages rendered from ``templates/site`` with Jinja, the nav and ``mkdocs.yml``.

Every value an author wrote goes through a filter of :mod:`.site_text` (escaped, or rendered
and sanitised); the templates only arrange them.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import posixpath
import threading
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import jinja2
import markupsafe

from ..format.aliases import PROVIDERS
from ..format.types import Ref
from .hooks import HOOKS_FILE
from .read import ARTIFACTS_DIR, ENTRY, BuildData, NodeData, NodePath, SkillData
from .schema import schema_rows, type_label
from .text import LinkPolicy, _markup, _quote_url, author_html, cell, code, html_text, md_block, theme_text

#: The folder beside ``mkdocs.yml`` holding the theme's overridden templates (toolcat's search box in the header).
OVERRIDES_DIR = "overrides"
#: Suffixes mkdocs would turn into pages: skill files with them are never put in ``docs/``.
PAGE_SUFFIXES = (".md", ".markdown", ".mdown", ".mkdn", ".mkd")


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


def _in_author_order(schema: dict[str, Any], order: Any) -> dict[str, Any]:
    """``schema`` with its top-level properties in the spec's ``arg_order`` (the stored keys are sorted)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or not isinstance(order, list):
        return schema
    ordered = {name: properties[name] for name in order if isinstance(name, str) and name in properties}
    return {**schema, "properties": {**ordered, **properties}}


def _tool_view(spec: dict[str, Any], ref: Ref, page: str, data: BuildData) -> dict[str, Any]:
    """Everything one tool section shows, prepared so the template stays simple."""
    tool_id = spec["tool_id"]
    args_schema = _in_author_order(spec.get("args_schema") or {}, spec.get("arg_order"))
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
        bucket["skills" if spec.get("skill") else "tools"] += 1  # agents count with skills, as the build does
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
        # the section's own page titled here too: a dirty (incremental) mkdocs build reads only changed pages,
        # and an untitled nav entry takes its title from the page it did not read
        return {title: [{title: page_of(path)}, *(entry(k) for k in kids)]}

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
            "custom_dir": OVERRIDES_DIR,
            "font": False,
            "features": [
                "navigation.indexes",
                "navigation.top",
                "navigation.tracking",
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
        # one search box: toolcat's, in the header (the theme's lunr search ranked pages, not tools)
        "plugins": [],
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


#: From this many node pages on, they are rendered on every core (forked workers: same pages, same order).
PARALLEL_RENDER_PAGES = 64
_RENDERING: list[BuildData] = []  # the data forked renderers read (set just before the pool forks)


def _render_nodes(paths: list[NodePath]) -> list[str]:
    data = _RENDERING[0]
    env = _environment()
    return [env.get_template("node.md.j2").render(**_node_context(data.nodes[p], data)) for p in paths]


def _render_all_nodes(data: BuildData) -> dict[str, str]:
    paths = [path for path in data.nodes if path]
    workers = min(2, os.cpu_count() or 1)
    _RENDERING[:] = [data]
    try:
        if (
            workers < 2
            or len(paths) < PARALLEL_RENDER_PAGES
            or multiprocessing.get_start_method(allow_none=False) != "fork"
            or threading.active_count() > 1  # forking a threaded process (a server) is unsafe
        ):
            texts = _render_nodes(paths)
        else:
            size = -(-len(paths) // (4 * workers))
            chunks = [paths[i : i + size] for i in range(0, len(paths), size)]
            with ProcessPoolExecutor(max_workers=workers) as pool:
                texts = [text for chunk in pool.map(_render_nodes, chunks) for text in chunk]
    finally:
        _RENDERING.clear()
    return {page_of(path): text for path, text in zip(paths, texts, strict=True)}
