"""Stored XSS in the docs site: hostile catalogue text, built by the real CLI, opened in headless Chromium.

Every payload calls ``alert(N)`` (N numbers the payload) or asks for a URL whose path holds
``xss-canary``; the browser test opens every page, fires mouse/focus events on every element,
clicks every link that is not http(s)/mailto, submits every form, and types into both search
boxes, then asserts that no dialog opened and no canary was requested. The fast tests parse the
generated HTML and check that nothing executable survived (no ``on*`` attributes, no
``javascript:``/``data:`` URLs, no script but the theme's, no iframe/object/form/style/meta).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import re
import threading
from dataclasses import dataclass
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from support import CHROMIUM, CHROMIUM_ARGS, write_tree

from toolcat.build.errors import BuildError
from toolcat.cli import main
from toolcat.site.hooks import content_security_policy
from toolcat.site.read import _check_name as check_name
from toolcat.site.text import SAFE_SCHEMES, author_html, theme_text, url_scheme

CANARY = "xss-canary"


@dataclass(frozen=True, slots=True)
class Payload:
    """One injection: its number (the argument of its ``alert``), where it was put, and the text."""

    number: int
    where: str
    text: str


PAYLOADS: list[Payload] = []


def inject(where: str, template: str) -> str:
    """Register a payload; ``{js}`` becomes ``alert(N)`` and ``{n}`` becomes N."""
    number = len(PAYLOADS) + 1
    text = template.replace("{js}", f"alert({number})").replace("{n}", str(number))
    PAYLOADS.append(Payload(number, where, text))
    return text


#: Raw HTML vectors: script elements, event handlers, dangerous URLs, framing, forms, CSS, mXSS.
HTML_VECTORS = (
    "<img src=x onerror={js}>",
    "<svg onload={js}>",
    "<script>{js}</script>",
    '<iframe srcdoc="<script>parent.{js}</script>"></iframe>',
    '<a href="jav&#x09;ascript:{js}">tab-link-{n}</a>',
    "<details open ontoggle={js}>d{n}</details>",
    "<style>@import url(/xss-canary-style-{n}.css); body {background: url(/xss-canary-bg-{n})}</style>",
    '<form action="/xss-canary-form-{n}"><button>go{n}</button></form>',
    '<meta http-equiv="refresh" content="0;url=/xss-canary-meta-{n}">',
    '<object data="data:text/html,<script>parent.{js}</script>"></object>',
    "<math><mtext><table><mglyph><style><img src=x onerror={js}>",
    "<input autofocus onfocus={js}>",
    '<base href="/xss-canary-base-{n}/">',
    "<video><source onerror={js}></video>",
    '<noscript><p title="</noscript><img src=x onerror={js}>"></noscript>',
    "<!--><img src=x onerror={js}>-->",
    '<a href="vbscript:msgbox({n})">vb{n}</a>',
    '<link rel="stylesheet" href="/xss-canary-link-{n}.css">',
    '<embed src="javascript:{js}">',
    '<a href="https://example.org" onmouseover="{js}">hover{n}</a>',
    '<img src="/xss-canary-img-{n}.png" style="x:expression({js})">',
    "<body onload={js}>",
)

#: Markdown vectors: attr_list, reference definitions, link schemes, fences, admonition titles.
MARKDOWN_VECTORS = (
    "tick ` <img src=x onerror={js}> done",
    "``x` <img src=x onerror={js}>`",
    "![pic{n}](https://example.invalid/p{n}.png){ onerror={js} }",
    "[ref link {n}][evil{n}]\n\n[evil{n}]: javascript:{js}",
    "[hover {n}](https://example.org/{n}){ onmouseover={js} }",
    "[js {n}](javascript:{js})",
    "[js {n}](JaVaScRiPt:{js})",
    "[js {n}](<javascript:{js}>)",
    "[js {n}](jav&#x09;ascript:{js})",
    "[js {n}](javascript&#58;{js})",
    "[js {n}](&#106;avascript:{js})",
    "[data {n}](data:text/html,<script>{js}</script>)",
    "[data {n}][d{n}]\n\n[d{n}]: data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "[vb {n}](vbscript:msgbox)",
    "![img {n}](javascript:{js})",
    "A paragraph {n} with attributes\n{: onclick={js} onmouseover={js} }",
    '[title {n}](https://example.org "x\\" onmouseover=\\"{js}")',
    "<javascript:{js}>",
    '<https://example.org/"onmouseover="{js}>',
    "*emphasis {n}*{: onmouseover={js} }",
    "```<img src=x onerror={js}>\n<script>{js}</script>\n",
    "```{.python onclick={js}}\ncode {n}\n```",
    '!!! note "<img src=x onerror={js}>"\n    admonition {n}',
    '??? note "<img src=x onerror={js}>"\n    details {n}',
    "Clobber {n}\n{: #toolcat-search data-catalog=/xss-canary-catalog-{n}/catalog.json }",
    '=== "<img src=x onerror={js}>"\n\n    tab {n}',
    "Entity text &lt;img src=x onerror={js}&gt; stays text",
)

#: Plain-field vectors: attribute break-outs, RCDATA break-outs, entity text, Markdown link syntax.
FIELD_VECTORS = (
    "<img src=x onerror={js}>",
    '"><svg onload={js}>',
    "' onmouseover='{js}' x='",
    "</title><script>{js}</script>",
    "&lt;/title&gt;&lt;script&gt;{js}&lt;/script&gt;",
    "</script><script>{js}</script>",
    "[x{n}](javascript:{js})",
    "x{n} { onclick={js} }",
)


def _markdown_payloads(where: str) -> str:
    blocks = [inject(where, vector) for vector in MARKDOWN_VECTORS]
    blocks += [inject(where, vector) for vector in HTML_VECTORS]
    return "Hostile payload text.\n\n" + "\n\n".join(blocks) + "\n"


def _field(where: str, index: int) -> str:
    return inject(where, FIELD_VECTORS[index % len(FIELD_VECTORS)])


def xss_tree() -> dict[str, object]:
    """A catalogue whose every author-controlled field carries an injection."""
    PAYLOADS.clear()
    fields = iter(range(1_000))
    args = {
        _field(f"argument name {i}", i): {
            "type": "string",
            "description": _field("argument description", next(fields)),
            "enum": [_field("enum value", next(fields)), _field("enum value", next(fields))],
            "default": _field("default", next(fields)),
            "title": _field("argument title", next(fields)),
            "format": _field("format", next(fields)),
        }
        for i in range(len(FIELD_VECTORS))
    }
    markdown_tool = {
        "id": "evil.markdown",
        "summary": "Payload " + inject("summary", "tick ` <img src=x onerror={js}> and [s{n}](javascript:{js})"),
        "description": _markdown_payloads("tool description"),
        "when_to_use": _markdown_payloads("when_to_use"),
        "kind": "read",
        "tags": ["payload", *(_field("tool tag", i) for i in range(len(FIELD_VECTORS)))],
        "policy": {
            "do": [inject("policy do", v) for v in MARKDOWN_VECTORS[:8]],
            "dont": [inject("policy dont", v) for v in HTML_VECTORS[:8]],
            "edge_cases": [inject("policy edge case", v) for v in FIELD_VECTORS],
        },
        "args_schema": {"type": "object", "properties": args},
        "result_schema": {
            "type": "object",
            "properties": {
                _field("result field", i): {"type": "integer", "description": _field("result description", i)}
                for i in range(3)
            },
        },
        "examples": [
            {
                "description": _markdown_payloads("example description"),
                "args": {
                    _field("example arg name", i): _field("example arg value", i + 1) for i in range(len(FIELD_VECTORS))
                },
            },
        ],
        "errors": [{"code": "BAD", "when": _field("error when", i)} for i in range(len(FIELD_VECTORS))],
    }
    fields_tool = {
        "id": "evil.fields",
        "summary": "Payload " + _field("summary", 0),
        "description": "Payload tool two.",
        "kind": "write",
        "deprecated": _field("deprecated text", 1),
        "version": "1.0.0",
        "tags": ["payload"],
        "args_schema": {"type": "object", "properties": {"q": {"type": "string", "pattern": _field("pattern", 2)}}},
    }
    skill_body = (
        "# Evil skill\n\n"
        + inject("skill body fence line", "```<img src=x onerror={js}>\n<script>{js}</script>\n")
        + "\n\n## Toolcat Search\n\nA heading whose slug is the search box's id.\n\n"
        + "## "
        + inject("skill heading", "<img src=x onerror={js}>")
        + "\n\n"
        + "Read [the guide](references/guide.md), not [the page](references/page.html) "
        + "or ![the icon](references/icon.svg).\n\n"
        + _markdown_payloads("skill body")
    )
    quote_name = inject("resource file name", 'x" onmouseover="{js}" y=".md')
    angle_name = inject("resource file name", "<img src=x onerror={js}>.md")
    return {
        "_node.yaml": {
            "title": "Evil catalogue " + _field("root title", 0),
            "summary": inject("root summary", 'Root [r{n}](javascript:{js}) <img src=x onerror={js}> " x'),
        },
        "evil/_node.yaml": {
            "title": inject("node title (nav)", "<img src=x onerror={js}>"),
            "summary": _markdown_payloads("node summary"),
            "tags": [_field("node tag", i) for i in range(len(FIELD_VECTORS))],
        },
        "evil/tools.yaml": {"tools": [markdown_tool, fields_tool]},
        **{
            f"titles/t{i}/_node.yaml": {
                "title": " ".join(_field("node title", j) for j in range(4 * i, 4 * i + 4)),
                "summary": " ".join(_field("node summary", j) for j in range(4 * i, 4 * i + 4)),
            }
            for i in range(2)
        },
        "titles/_node.yaml": {"title": _field("node title", 4)},
        "titles/t0/tools.yaml": {
            "tools": [
                {
                    "id": "titles.probe",
                    "summary": "Probe.",
                    "description": "Probe.",
                    "args_schema": {"type": "object", "properties": {}},
                }
            ]
        },
        "skills/_node.yaml": {"title": "Skills"},
        "skills/evil-skill/SKILL.md": (
            "---\nname: evil-skill\ndescription: "
            + _yaml_scalar(inject("skill description", "Evil <img src=x onerror={js}> [d{n}](javascript:{js})"))
            + "\nlicense: "
            + _yaml_scalar(_field("skill license", 3))
            + "\nmetadata:\n  owner: "
            + _yaml_scalar(_field("skill metadata", 0))
            + "\n---\n"
            + skill_body
        ),
        "skills/evil-skill/references/guide.md": "A guide.\n",
        "skills/evil-skill/references/page.html": inject("active resource file", "<script>{js}</script>\n"),
        "skills/evil-skill/references/icon.svg": inject(
            "active resource file", '<svg xmlns="http://www.w3.org/2000/svg" onload="{js}"></svg>\n'
        ),
        f"skills/evil-skill/references/{quote_name}": "quote\n",
        f"skills/evil-skill/references/{angle_name}": "angle\n",
    }


def _yaml_scalar(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


@pytest.fixture(scope="module")
def xss_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The hostile catalogue compiled by `toolcat build` and turned into a site by `toolcat site`."""
    root = tmp_path_factory.mktemp("xss")
    src = write_tree(root / "src", xss_tree())
    runner = CliRunner()
    built = runner.invoke(main, ["build", str(src), "--out", str(root / "build")])
    assert built.exit_code == 0, built.output
    site = runner.invoke(main, ["site", "--build", str(root / "build"), "--project", str(root / "project")])
    assert site.exit_code == 0, site.output
    return root / "build" / "site"


def _pages(site: Path) -> list[Path]:
    return sorted(p for p in site.rglob("*.html") if "artifacts" not in p.relative_to(site).parts)


# --------------------------------------------------------------------------- static checks

#: Elements that never belong in the site's HTML (the theme uses none of them).
FORBIDDEN_TAGS = {
    "iframe",
    "frame",
    "frameset",
    "object",
    "embed",
    "applet",
    "form",
    "base",
    "style",
    "math",
    "noscript",
    "video",
    "audio",
    "source",
    "portal",
    "textarea",
    "select",
    "button",
    "template",
}
URL_ATTRIBUTES = {
    "href",
    "src",
    "action",
    "formaction",
    "data",
    "poster",
    "srcset",
    "xlink:href",
    "background",
    "cite",
    "longdesc",
    "ping",
}


class _Audit(HTMLParser):
    """Collects everything executable or dangerous in one page (tags and rel only inside <article>, the content)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.csp: list[str] = []
        self._in_script: dict[str, str | None] | None = None
        self._script_text: list[str] = []
        self._article = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self._article += tag == "article"
        if tag == "meta" and values.get("http-equiv") == "Content-Security-Policy":
            self.csp.append(values.get("content") or "")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if name in URL_ATTRIBUTES and value is not None:
                scheme = urlsplit(value.strip()).scheme.lower()
                if scheme not in {"", "http", "https", "mailto"}:
                    self.problems.append(f"<{tag} {name}={value!r}>")
            if name in {"srcdoc", "style"} and tag != "svg" and value and ("url(" in value or "expression" in value):
                self.problems.append(f"<{tag} {name}={value!r}>")
            if name == "srcdoc":
                self.problems.append(f"<{tag} srcdoc>")
        if tag in FORBIDDEN_TAGS and self._article:
            self.problems.append(f"<{tag}>")
        if tag == "meta" and (values.get("http-equiv") or "").lower() == "refresh":
            self.problems.append("<meta http-equiv=refresh>")
        if tag == "a" and self._article and urlsplit(values.get("href") or "").scheme in {"http", "https"}:
            rel = (values.get("rel") or "").split()
            if "noopener" not in rel or "noreferrer" not in rel:
                self.problems.append(f"external link without rel=noopener noreferrer: {values.get('href')}")
        if tag == "script":
            self._in_script = values
            self._script_text = []

    def handle_data(self, data: str) -> None:
        if self._in_script is not None:
            self._script_text.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._article -= tag == "article"
        if tag == "script" and self._in_script is not None:
            self.scripts.append((self._in_script, "".join(self._script_text)))
            self._in_script = None


#: How mkdocs-material's own inline scripts begin (partials/javascripts/*.html).
THEME_SCRIPT_STARTS = ("__md_scope=new URL(", "var palette=__md_get(", "var target=document.getElementById(")


def _theme_script(attrs: dict[str, str | None], text: str, csp: list[str]) -> bool:
    """A script mkdocs-material or toolcat puts on every page, and (if inline) allowed by the page's CSP hash."""
    src = attrs.get("src")
    if src is not None:
        return re.fullmatch(r"(\.\./)*/?assets/[\w./-]+\.js", src) is not None and not text.strip()
    if attrs.get("type") == "application/json" and attrs.get("id") == "__config":
        return "</" not in text
    digest = base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
    return text.startswith(THEME_SCRIPT_STARTS) and len(csp) == 1 and f"'sha256-{digest}'" in csp[0]


def test_payload_tree_is_big_enough():
    """The hostile tree carries well over a hundred distinct injections across every author field."""
    xss_tree()
    assert len(PAYLOADS) >= 150
    assert len({p.where for p in PAYLOADS}) >= 30


def test_generated_html_has_nothing_executable(xss_site: Path):
    """No page has an on* attribute, a non-http(s)/mailto URL, a foreign script, or a frame/form/style/meta refresh."""
    problems: dict[str, list[str]] = {}
    for page in _pages(xss_site):
        audit = _Audit()
        audit.feed(page.read_text(encoding="utf-8"))
        foreign = [
            f"<script {attrs}>{text[:80]}" for attrs, text in audit.scripts if not _theme_script(attrs, text, audit.csp)
        ]
        if len(audit.csp) != 1 or "'unsafe-inline'" in audit.csp[0].split("script-src", 1)[1].split(";", 1)[0]:
            foreign.append(f"Content-Security-Policy missing or allowing inline script: {audit.csp}")
        if audit.problems or foreign:
            problems[page.relative_to(xss_site).as_posix()] = audit.problems + foreign
    assert problems == {}


def test_active_resource_files_are_published_but_never_linked(xss_site: Path):
    """A skill's .html/.svg resource is in the artifacts (readers need it) but no page links or embeds it."""
    assert list((xss_site / "artifacts").rglob("page.html"))
    assert list((xss_site / "artifacts").rglob("icon.svg"))
    for page in _pages(xss_site):
        text = page.read_text(encoding="utf-8")
        assert 'page.html"' not in text
        assert 'icon.svg"' not in text


def test_payload_text_is_shown_as_text(xss_site: Path):
    """Hostile text is not lost: the skill page shows the script payload and the nav title as visible text."""
    skill = (xss_site / "skills" / "evil-skill.html").read_text(encoding="utf-8")
    assert "&lt;script&gt;" in skill
    home = (xss_site / "index.html").read_text(encoding="utf-8")
    title = next(p for p in PAYLOADS if p.where == "node title (nav)")
    assert f"onerror=alert({title.number})" in home


# --------------------------------------------------------------------------- in the browser


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
        """Keep the test output clean."""


FIRE_EVENTS_JS = """() => {
  const types = ["mouseover", "mouseenter", "mousemove", "mousedown", "mouseup", "mouseout", "mouseleave",
                 "pointerover", "pointerenter", "focus", "focusin", "blur", "toggle", "animationstart",
                 "transitionend", "load", "error", "click"];
  let fired = 0;
  for (const el of document.querySelectorAll("body *")) {
    if (el.closest("a[href]") && el.closest("a[href]").protocol.match(/^https?:$/)) continue;  // would navigate
    for (const type of types) {
      if (type === "click" && el.matches("a, a *, button, input, label, summary")) continue;
      el.dispatchEvent(new Event(type, {bubbles: false}));
      fired += 1;
    }
  }
  const clicked = [];
  for (const a of document.querySelectorAll("a[href], area[href]")) {
    if (!/^(https?|mailto):$/.test(a.protocol)) { clicked.push(a.getAttribute("href")); a.click(); }
  }
  for (const form of document.querySelectorAll("article form")) { clicked.push("form " + form.action); form.requestSubmit(); }
  return {fired, clicked};
}"""


HOVER_JS = """() => Array.from(document.querySelectorAll("article a, article img, article [title]"))
  .map(el => el.getBoundingClientRect()).filter(r => r.width && r.height)
  .map(r => [r.x + r.width / 2, r.y + r.height / 2 + window.scrollY])"""


def _hover_article_links(page: Any) -> None:
    """Move the real mouse over every link and image of the article, in a viewport as tall as the page."""
    height = page.evaluate("() => document.documentElement.scrollHeight")
    page.set_viewport_size({"width": 1280, "height": min(max(900, height), 30_000)})
    for x, y in page.evaluate(HOVER_JS)[:200]:
        page.mouse.move(x, y)
    page.set_viewport_size({"width": 1280, "height": 900})


def _search_both_boxes(page: Any, base: str) -> None:
    """Type into the site's one search box (toolcat's, in the header): it lists hostile tools without running them."""
    page.goto(base + "index.html", wait_until="load", timeout=10_000)
    for query in ("payload tool", "onerror"):
        page.locator("#toolcat-search-input").fill(query)
        page.locator("#toolcat-search-results li").first.wait_for(timeout=10_000)
        assert "evil." in page.locator("#toolcat-search-results").inner_text()
        page.evaluate(FIRE_EVENTS_JS.replace("body *", "#toolcat-search-results *"))
        page.wait_for_timeout(300)


@pytest.mark.browser
@pytest.mark.slow
def test_no_payload_runs_in_chromium(xss_site: Path):
    """Every page opened, hovered, clicked and searched in Chromium: no alert, no canary request, no injected script."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium (`make browser`) to run the browser tests")
    from playwright.sync_api import Error as PlaywrightError  # noqa: PLC0415 - only the browser tests need it
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    handler = functools.partial(_QuietHandler, directory=str(xss_site))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/"
    dialogs: list[str] = []
    canaries: list[str] = []
    clicked: dict[str, list[str]] = {}
    failures: list[str] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 900})

            def route(route: Any) -> None:
                url = route.request.url
                if CANARY in url:
                    canaries.append(url)
                if urlsplit(url).hostname != "127.0.0.1" or CANARY in url:
                    route.abort()  # nothing leaves the machine; external images simply fail
                else:
                    route.continue_()

            context.route("**/*", route)
            page = context.new_page()
            page.on("dialog", lambda dialog: (dialogs.append(f"{page.url}: {dialog.message}"), dialog.dismiss()))
            page.on("console", lambda msg: dialogs.append(msg.text) if "xss" in msg.text.lower() else None)
            for html_page in _pages(xss_site):
                rel = html_page.relative_to(xss_site).as_posix()
                try:
                    page.goto(base + rel, wait_until="load", timeout=10_000)
                    _hover_article_links(page)
                    result = page.evaluate(FIRE_EVENTS_JS)
                    page.wait_for_timeout(50)
                except PlaywrightError as exc:  # a page that navigates itself away (meta refresh) fails here
                    failures.append(f"{rel}: {exc.message.splitlines()[0]}")
                    continue
                if result["clicked"]:
                    clicked[rel] = result["clicked"]
            try:
                _search_both_boxes(page, base)
            except PlaywrightError as exc:
                failures.append(f"search: {exc.message.splitlines()[0]}")
            context.close()
            browser.close()
    finally:
        server.shutdown()
        server.server_close()
    ran = sorted({int(m.rsplit(": ", 1)[-1]) for m in dialogs if m.rsplit(": ", 1)[-1].isdigit()})
    report = [f"{p.number} ({p.where}): {p.text[:60]!r}" for p in PAYLOADS if p.number in ran]
    assert (dialogs, report, canaries, clicked, failures) == ([], [], [], {}, [])


# --------------------------------------------------------------------------- the pieces, fast


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        " javascript:alert(1)",
        "jav&#x09;ascript:alert(1)",
        "jav\tascript:alert(1)",
        "java\nscript:alert(1)",
        "&#106;avascript:alert(1)",
        "javascript&#58;alert(1)",
        "\x01javascript:alert(1)",
        "vbscript:msgbox",
        "data:text/html,<script>alert(1)</script>",
    ],
)
def test_dangerous_urls_never_survive_author_markdown(url: str):
    """Whatever way a dangerous scheme is spelt, the link or image becomes text: no href or src carries it."""
    rendered = author_html(f"[link]({url}) ![img]({url})\n\n[ref][r]\n\n[r]: {url}")
    assert "href=" not in rendered
    assert "src=" not in rendered
    assert url_scheme(url) not in SAFE_SCHEMES


def test_theme_text_cannot_open_markup():
    """Titles for the theme start no tag, no character reference and end no attribute, yet read the same."""
    for vector in (*FIELD_VECTORS, *HTML_VECTORS):
        text = theme_text(vector.replace("{js}", "alert(1)").replace("{n}", "1"))
        assert not re.search(r"<[A-Za-z/!?]", text)
        assert not re.search(r"&[A-Za-z0-9#]", text)
        assert '"' not in text
        assert "'" not in text
    assert theme_text("A & B <c>").replace("\u2060", "") == "A & B <c>"


def test_a_foreign_inline_script_stops_the_site_build():
    """A page whose HTML holds an inline script that is not the theme's own is refused, not published."""
    head = '<html><head><meta charset="utf-8">'
    theme = (
        "<script>var target=document.getElementById(location.hash.slice(1));target&&target.name&&"
        '(target.checked=target.name.startsWith("__tabbed_"))</script>'
    )
    page = content_security_policy(head + theme + "</head></html>", "page.html")
    assert "Content-Security-Policy" in page
    assert "'sha256-" in page
    with pytest.raises(BuildError, match="not mkdocs-material's own"):
        content_security_policy(head + "<script>alert(1)</script></head></html>", "page.html")
    with pytest.raises(BuildError, match="not one of the site's own files"):
        content_security_policy(head + '<script src="https://evil.example/x.js"></script></head>', "page.html")


def test_names_toolcat_never_builds_stop_the_site():
    """A node, tool or skill name that could carry markup (a hand-made build) stops the site build."""
    with pytest.raises(BuildError, match="is not one toolcat builds"):
        check_name("node name", '"><img src=x onerror=alert(1)>', "nodes/x.json")
    assert check_name("tool id", "refactor.rename_symbol", "nodes/x.json") == "refactor.rename_symbol"
