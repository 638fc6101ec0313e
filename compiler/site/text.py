"""Untrusted author text made safe for the site: Markdown rendered by policy, sanitised by nh3, or escaped."""

from __future__ import annotations

import functools
import html
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, unquote

import markupsafe

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
    from xml.etree import ElementTree as ET  # noqa: PLC0415 - stdlib, imported on first use

    import markdown  # type: ignore[import-untyped]  # noqa: PLC0415 - a dependency of mkdocs, only needed here
    from markdown.extensions import toc  # type: ignore[import-untyped]  # noqa: PLC0415 - markdown is an optional extra
    from markdown.treeprocessors import Treeprocessor  # type: ignore[import-untyped]  # noqa: PLC0415 - markdown is an optional extra

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
