"""The site's JavaScript reader over a paged base + delta index: the same hits and scores as the Python reader."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import CHROMIUM, EXAMPLE_SRC, serve_folder

from toolcat.build import build
from toolcat.build.contributors.index import shards
from toolcat.reader import Catalog
from toolcat.site.render import build_site

pytestmark = [pytest.mark.browser, pytest.mark.slow]


@pytest.fixture(scope="module")
def delta_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The example catalogue with a paged doc table and an edit (a delta segment), its site served on 127.0.0.1."""
    root = tmp_path_factory.mktemp("delta_site")
    src, out, site = root / "src", root / "build", root / "site"
    shutil.copytree(EXAMPLE_SRC, src)
    saved = shards.PAGES_FROM, shards.PAGE_SIZE
    shards.PAGES_FROM, shards.PAGE_SIZE = 1, 2  # a paged doc table, as big catalogues have
    try:
        build(src, out)
        tools = src / "files" / "tools.yaml"
        text = tools.read_text(encoding="utf-8")
        tools.write_text(text.replace("summary: ", "summary: Wombat-safe ", 1), encoding="utf-8")
        build(src, out)
    finally:
        shards.PAGES_FROM, shards.PAGE_SIZE = saved
    manifest = json.loads((out / json.loads((out / "catalog.json").read_text())["manifest"]["path"]).read_text())
    meta = json.loads((out / manifest["index"]["path"]).read_text())
    assert "delta" in meta["tools"], "the edit is a delta"
    assert "doc_pages" in meta["tools"], "the doc table is paged"
    build_site(out, site)
    with serve_folder(site) as url:
        yield url, out


def test_js_reader_reads_the_delta_like_the_python_reader(delta_site: tuple[str, Path]) -> None:
    """Hits and scores agree for a query only the delta can answer and for ones spanning base and delta."""
    if not CHROMIUM.is_file():
        pytest.skip(f"{CHROMIUM} is absent: install Debian's chromium (`make browser`) to run the browser tests")
    from playwright.sync_api import sync_playwright  # noqa: PLC0415 - only where the browser runs

    base, out = delta_site
    catalog = Catalog.open(str(out))
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox", "--headless=new"])
        try:
            page = browser.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(base)
            for query in ("wombat safe", "read a file", "rename a function across the codebase", "list files"):
                expected = catalog.find_tool(query, limit=5)
                assert expected["ok"], expected
                results = page.evaluate(
                    "q => new window.toolcatSearch.Reader('artifacts/catalog.json').search(q, 5)"
                    ".then(rs => rs.map(r => [r.pointer.tool_id, r.score]))",
                    query,
                )
                assert [t for t, _ in results] == [m["name"] for m in expected["matches"]], query
                for (_, score), match in zip(results, expected["matches"], strict=True):
                    assert abs(score - match["relevance"]) < 1e-3, query
            assert errors == []
        finally:
            browser.close()
    assert catalog.find_tool("wombat safe", limit=1)["matches"][0]["name"].startswith("file.")
