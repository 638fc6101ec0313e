"""The docs site in a real browser: headless Debian Chromium driven by Playwright, site served on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import sync_playwright
from support import CHROMIUM, CHROMIUM_ARGS, serve_folder

from toolcat.format.analyzer import STOP_WORDS, analyze_words
from toolcat.reader import Catalog
from toolcat.site.read import read_build
from toolcat.site.render import build_site

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def served_site(example_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The example catalogue's site, built once and served by http.server on 127.0.0.1 (port 0)."""
    site = tmp_path_factory.mktemp("browser") / "site"
    build_site(example_build, site)
    with serve_folder(site) as url:
        yield url, site


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Headless Debian Chromium, or a skip saying why."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium (`make browser`) to run the browser tests")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh page that records console errors and failed requests."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    opened = context.new_page()
    opened.errors = []
    opened.on("console", lambda msg: opened.errors.append(msg.text) if msg.type == "error" else None)
    opened.on("pageerror", lambda exc: opened.errors.append(str(exc)))
    opened.on("requestfailed", lambda req: opened.errors.append(f"request failed: {req.url}"))
    try:
        yield opened
    finally:
        context.close()


def _rename_symbol_home(example_build: Path) -> list[str]:
    data = read_build(example_build)
    if "refactor.rename_symbol" not in data.specs:
        pytest.skip("catalog_src has no refactor.rename_symbol yet")
    return list(data.specs["refactor.rename_symbol"]["path"])


def test_navigate_from_home_to_rename_symbol_arguments(served_site, page, example_build: Path, tmp_path: Path):
    """From the home page, clicking through the nodes reaches refactor.rename_symbol and its language enum values."""
    base, _ = served_site
    home_path = _rename_symbol_home(example_build)
    page.goto(base)
    assert "registry" in page.locator("article").inner_text().lower()
    for depth in range(1, len(home_path) + 1):
        target = ".".join(home_path[:depth]) + ".html"
        page.locator(f'article a[href="{target}"], article a[href$="/{target}"]').first.click()
        page.wait_for_load_state()
        assert page.url.endswith(target)
    page.locator('article a[href="#refactor.rename_symbol"]').first.click()
    assert page.url.endswith("#refactor.rename_symbol")
    heading = page.locator('[id="refactor.rename_symbol"]')
    assert heading.is_visible()
    table = page.locator('[id="refactor.rename_symbol"] ~ table.tc-args').first
    row = table.locator("tr", has=page.locator("td:first-child code", has_text="language"))
    assert row.count() == 1
    values = row.locator("td:nth-child(5) code").all_inner_texts()
    enum = read_build(example_build).specs["refactor.rename_symbol"]["args_schema"]["properties"]["language"]["enum"]
    assert values == [str(v) for v in enum]
    assert len(values) >= 2
    assert page.locator(".tc-crumbs a").count() >= 1
    page.screenshot(path=str(tmp_path / "rename_symbol.png"), full_page=False)
    assert (tmp_path / "rename_symbol.png").stat().st_size > 10_000
    assert page.errors == []


def test_own_tfidf_search_box_finds_tool_by_paraphrase(served_site, page, tmp_path: Path):
    """The header's search box (a JavaScript reader of toolcat's index) finds rename_symbol from a paraphrase."""
    base, _ = served_site
    page.goto(base)
    box = page.locator("#toolcat-search-input")
    box.fill("rename a function across the codebase")
    first = page.locator("#toolcat-search-results li a.tc-hit").first
    first.wait_for(timeout=15_000)
    hits = page.locator("#toolcat-search-results li a.tc-hit").all_inner_texts()
    assert "refactor.rename_symbol" in hits[:3], hits
    assert "sha256" in page.locator("#toolcat-search-status").inner_text()
    page.screenshot(path=str(tmp_path / "search.png"))
    page.locator("#toolcat-search-results a", has_text="refactor.rename_symbol").click()
    page.wait_for_load_state()
    assert page.url.endswith("#refactor.rename_symbol")
    assert page.errors == []


def test_js_reader_scores_match_the_python_reader(served_site, page, example_build: Path):
    """The browser's TF-IDF scores equal the Python reader's for the same query (same format, same maths)."""
    base, _ = served_site
    catalog = Catalog.open(str(example_build))
    query = "rename a function across the codebase"
    expected = catalog.find_tool(query, limit=5)
    assert expected["ok"], expected
    page.goto(base)
    results = page.evaluate(
        "q => new window.toolcatSearch.Reader('artifacts/catalog.json').search(q, 5)"
        ".then(rs => rs.map(r => [r.pointer.tool_id, r.score]))",
        query,
    )
    assert [tool_id for tool_id, _ in results] == [m["name"] for m in expected["matches"]]
    for (_, score), match in zip(results, expected["matches"], strict=True):
        assert abs(score - match["relevance"]) < 1e-3
    tricky = "Copy s3 objects to EC2: getHTTPResponse2, renaming the files' indices — déjà vu"
    stop_words = sorted(STOP_WORDS)
    js_words = page.evaluate("([t, s]) => window.toolcatSearch.analyzeWords(t, new Set(s))", [tricky, stop_words])
    assert js_words == analyze_words(tricky)
    assert page.errors == []


def test_header_search_is_the_one_box_and_ranks_file_delete_first(served_site, page):
    """Typing "delete a file" into the header box of a node page ranks file.delete first; the theme's search is gone."""
    base, site = served_site
    page.goto(base + "nodes/coding.html")
    assert page.locator("input.md-search__input").count() == 0
    assert not (site / "search" / "search_index.json").exists()
    header_box = page.locator("header #toolcat-search-input")
    assert header_box.is_visible()
    assert page.locator("#toolcat-search-input").count() == 1
    # one input event, so one search: typed key by key, a pause over the box's 120 ms debounce on a busy machine
    # shows the results of "delete" (a prefix) first, and the first hit read there is not the full query's
    header_box.fill("delete a file")
    first = page.locator("header #toolcat-search-results li a.tc-hit").first
    first.wait_for(timeout=15_000)
    assert first.inner_text() == "file.delete"
    assert "sha256" in page.locator("#toolcat-search-status").inner_text()
    first.click()  # the result's link is resolved from the site's root, not from the node page
    page.wait_for_load_state()
    assert page.url.endswith("nodes/files.html#file.delete"), page.url
    assert page.errors == []


def test_no_page_is_wider_than_a_phone(served_site, browser):
    """At 390 px every page of the example site fits the viewport: wide tables scroll inside themselves."""
    base, site = served_site
    pages = sorted(
        p.relative_to(site).as_posix() for p in site.rglob("*.html") if p.relative_to(site).parts[0] != "artifacts"
    )
    context = browser.new_context(viewport={"width": 390, "height": 844})
    phone = context.new_page()
    try:
        too_wide = {}
        for rel in pages:
            phone.goto(base + rel)
            width = phone.evaluate("document.documentElement.scrollWidth")
            if width > 390:
                too_wide[rel] = width
        phone.goto(base + "nodes/coding.refactoring.html")
        overflow = phone.locator("table.tc-args").first.evaluate("t => getComputedStyle(t).overflowX")
    finally:
        context.close()
    assert len(pages) > 20
    assert too_wide == {}
    assert overflow == "auto"


def test_skill_page_shows_metadata_body_and_resources(served_site, page, example_build: Path):
    """A skill page renders its metadata table, its Markdown body as HTML, and links to its resource files."""
    base, site = served_site
    data = read_build(example_build)
    if not data.skills:
        pytest.skip("catalog_src has no skills yet")
    skill = max(data.skills.values(), key=lambda s: len(s.resources))
    page.goto(f"{base}skills/{skill.name}.html")
    article = page.locator("article")
    assert skill.name in article.locator("h1").inner_text()
    assert article.locator("table").first.locator("code", has_text="description").count() == 1
    assert article.locator("h2, h3").count() >= 3
    for resource in skill.resources:
        link = article.locator(f'a[href$="/{resource["path"]}"]').first
        assert link.count() == 1
        response = page.request.get(link.evaluate("a => a.href"))
        assert response.status == 200
        assert response.body() == (site / "artifacts" / resource["ref"]["path"]).read_bytes()
    assert page.errors == []
