"""The site's mkdocs hooks (run inside mkdocs): nh3 over every page's content, a Content-Security-Policy on each page.

mkdocs loads the generated ``toolcat_hooks.py`` beside ``mkdocs.yml``, which imports the
``on_*`` functions from this module.
"""

from __future__ import annotations

import functools
import re
from importlib import resources
from typing import Any

from ..build.errors import BuildError
from ..format import settings
from .text import FRAGMENT_TAGS, SAFE_SCHEMES, url_scheme

#: The hook module written beside ``mkdocs.yml``; mkdocs loads it by path and calls its ``on_*`` functions.
HOOKS_FILE = "toolcat_hooks.py"
HOOKS_SOURCE = (
    '"""mkdocs hooks of a toolcat site (generated): sanitise page content, add a Content-Security-Policy."""\n\n'
    "from toolcat.site.hooks import on_page_content, on_post_page, on_post_template  # noqa: F401\n"
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
    import base64  # noqa: PLC0415 - stdlib, imported on first use
    import hashlib  # noqa: PLC0415 - stdlib, imported on first use

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


#: A file ``toolcat site`` names for the progress display: each converted page appends one byte to it.
PROGRESS_FILE_ENV = "TOOLCAT_SITE_PROGRESS_FILE"


def on_page_content(html: str, page: Any, config: Any, files: Any) -> str:  # noqa: ARG001 - mkdocs' hook signature
    """mkdocs hook: every page's rendered content goes through nh3 before the theme wraps it (and is counted)."""
    clean = sanitize_page(html)
    progress = settings.get(PROGRESS_FILE_ENV)
    if progress:
        with open(progress, "ab") as counter:  # noqa: PTH123 - one byte per page, appended by any worker
            counter.write(b".")
    return clean


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
