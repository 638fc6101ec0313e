"""The docs site: artifacts → mkdocs project → `mkdocs build --strict` → build/site, with no broken links."""

from __future__ import annotations

import html
import json
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from click.testing import CliRunner
from support import REPO, write_tree

import toolcat.site.render as site_module
from toolcat.build import build
from toolcat.build.errors import BuildError
from toolcat.cli import main
from toolcat.reader.search import ranking
from toolcat.reader.search import searcher as search
from toolcat.site.read import ARTIFACTS_DIR, read_build
from toolcat.site.render import build_site, render_project
from toolcat.site.schema import schema_rows
from toolcat.site.text import LinkPolicy, author_html

NESTED_SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "description": "What to look for.", "minLength": 1},
        "mode": {"type": "string", "enum": ["fast", "exact"], "default": "fast"},
        "filter": {
            "type": "object",
            "properties": {
                "owner": {"type": "string"},
                "since": {"type": "string", "format": "date-time"},
            },
            "required": ["owner"],
        },
        "sort": {"type": "array", "items": {"$ref": "#/$defs/sort_key"}},
        "limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}], "default": None},
    },
    "required": ["query"],
    "$defs": {
        "sort_key": {
            "type": "object",
            "properties": {"field": {"type": "string", "enum": ["name", "date"]}, "desc": {"type": "boolean"}},
            "required": ["field"],
        },
    },
}


def small_tree() -> dict[str, object]:
    """A catalogue with two levels, a DAG category, nested schemas, hostile text and a skill with resources."""
    return {
        "_node.yaml": {"title": "Small catalogue", "summary": "For site tests."},
        "code/_node.yaml": {"title": "Code", "summary": "Code tools.", "tags": ["code"]},
        "code/refactor/_node.yaml": {"title": "Refactoring", "summary": "Rename things."},
        "code/refactor/tools.yaml": {
            "tools": [
                {
                    "id": "refactor.rename_symbol",
                    "summary": "Rename a symbol across a project.",
                    "description": "Renames every reference. Ignores <script>alert(1)</script> and [a link](nowhere.md).",
                    "args_schema": {
                        "type": "object",
                        "properties": {
                            "symbol": {"type": "string", "description": "Name | with a pipe"},
                            "language": {"type": "string", "enum": ["python", "typescript", "go"]},
                        },
                        "required": ["symbol", "language"],
                    },
                    "result_schema": {"type": "object", "properties": {"edits": {"type": "integer"}}},
                    "examples": [{"description": "Rename a class.", "args": {"symbol": "Foo", "language": "python"}}],
                    "policy": {
                        "do": ["Preview first."],
                        "dont": ["Rename public APIs silently."],
                        "edge_cases": ["Dynamic imports are missed."],
                    },
                    "when_to_use": "You want to rename a function everywhere.",
                    "kind": "write",
                    "tags": ["rename", "refactor"],
                }
            ]
        },
        "search/_node.yaml": {"title": "Search", "summary": "Find things."},
        "search/tools.yaml": {
            "tools": [
                {
                    "id": "code.search",
                    "summary": "Search code.",
                    "description": "Search code with filters.",
                    "args_schema": NESTED_SCHEMA,
                    "categories": ["code"],
                    "optional": True,
                }
            ]
        },
        "skills/_node.yaml": {"title": "Skills", "summary": "Agent skills."},
        "skills/release-notes/SKILL.md": (
            "---\nname: release-notes\ndescription: Write release notes from merged changes. Use when cutting a release.\n"
            "license: MIT\n---\n# Release notes\n\nRead [the template](references/template.md) and the "
            "[`style guide`](references/style.md), then [jump](#steps) or [nowhere](#missing).\n\n## Steps\n\n"
            "1. Collect merged changes.\n\n```markdown\n# not a heading [x](y.md)\n```\n"
        ),
        "skills/release-notes/references/template.md": "# Template\n\nSee [other](other.md).\n",
        "skills/release-notes/references/style.md": "Be brief.\n",
    }


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002 - HTMLParser's signature
        values = dict(attrs)
        if values.get("id"):
            self.ids.add(str(values["id"]))
        for key in ("href", "src"):
            if values.get(key):
                self.links.append(str(values[key]))


def broken_links(site: Path) -> list[tuple[str, str]]:
    """Every local href/src (and #fragment) in the site's HTML pages that points nowhere."""
    parsed: dict[Path, _Links] = {}

    def parse(page: Path) -> _Links:
        if page not in parsed:
            parser = _Links()
            parser.feed(page.read_text(encoding="utf-8"))
            parsed[page] = parser
        return parsed[page]

    broken = []
    for page in sorted(site.rglob("*.html")):
        if ARTIFACTS_DIR in page.relative_to(site).parts:
            continue
        for link in parse(page).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//"):
                continue
            base = site if parts.path.startswith("/") else page.parent
            target = (base / unquote(parts.path).lstrip("/")).resolve() if parts.path else page
            if target.is_dir():
                target /= "index.html"
            if not target.is_file() or (
                parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in parse(target).ids
            ):
                broken.append((page.relative_to(site).as_posix(), link))
    return broken


def text_of(page: str) -> str:
    """The visible text of an HTML page (tags removed, entities decoded)."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


@pytest.fixture(scope="module")
def small_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The small catalogue built and turned into a site once for this module."""
    root = tmp_path_factory.mktemp("small")
    src = write_tree(root / "src", small_tree())
    build(src, root / "build")
    build_site(root / "build", project_dir=root / "project")
    return root


def test_schema_rows_flatten_nested_objects_arrays_refs_and_variants():
    """Nested objects become a.b, arrays of objects a[].b, local $refs resolve, anyOf joins types."""
    rows = {row.name: row for row in schema_rows(NESTED_SCHEMA)}
    assert rows["query"].required
    assert rows["query"].constraints == "length ≥ 1"  # the notation of tool_help and the prompts
    assert rows["mode"].enum == ("fast", "exact")
    assert rows["mode"].default == "fast"
    assert rows["filter"].type == "object"
    assert not rows["filter"].required
    assert rows["filter.owner"].required
    assert not rows["filter.since"].required
    assert rows["filter.since"].type == "string (date-time)"
    assert rows["sort"].type == "array of object"
    assert rows["sort[].field"].enum == ("name", "date")
    assert rows["sort[].field"].required
    assert rows["limit"].type == "integer | null"
    assert rows["limit"].default == "null"


def test_schema_rows_handle_array_results_and_missing_schemas():
    """A result that is an array of objects is flattened as []. rows; no schema gives no rows."""
    rows = schema_rows({"type": "array", "items": {"type": "object", "properties": {"id": {"type": "string"}}}})
    assert [r.name for r in rows] == ["[].id"]
    assert schema_rows(None) == []


def test_author_html_escapes_html_and_rewrites_links():
    """Raw HTML shows as text, unknown relative links become text, resource links point to the file, code is untouched."""
    text = author_html(
        "<b>x</b> [`ref`](ref.md) [gone](gone.md) [web](https://e.org) [top](#top) [bad](#bad) `<i>[k](k.md)`",
        policy=LinkPolicy({"ref.md": "../artifacts/ref.md"}, frozenset({"top"})),
    )
    assert "&lt;b&gt;x&lt;/b&gt;" in text
    assert '<a href="../artifacts/ref.md" rel="noopener noreferrer"><code>ref</code></a>' in text
    assert 'gone<span class="tc-target"> (<code>gone.md</code>)</span>' in text
    assert 'href="gone.md"' not in text
    assert '<a href="https://e.org" rel="noopener noreferrer">web</a>' in text
    assert '<a href="#top"' in text
    assert 'href="#bad"' not in text
    assert "<span>bad</span>" in text
    assert "<code>&lt;i&gt;[k](k.md)</code>" in text


def test_author_html_shifts_headings_with_ids_and_skips_fenced_code():
    """Skill body headings move down a level and get ids and permalinks; fenced code is left alone."""
    text = author_html("# A\n```\n# not\n```\n## B", shift=1, heading_ids=True)
    assert text.startswith('<h2 id="a">A<a class="headerlink" href="#a"')
    assert "<code># not</code>" in text
    assert '<h3 id="b">B' in text


def test_read_build_verifies_every_reachable_file(small_site: Path):
    """Reading the build walks catalog.json → manifest → nodes → specs → skill files, all verified."""
    data = read_build(small_site / "build")
    assert set(data.specs) == {"refactor.rename_symbol", "code.search", "task.release_notes", "task.list"}
    assert ("code", "refactor") in data.nodes
    assert "release-notes" in data.skills
    assert len(data.skills["release-notes"].resources) == 2
    assert data.entry["manifest"]["path"] in data.files
    assert len(data.files) >= len(data.specs) + len(data.nodes) + 3


def test_site_has_no_broken_links(small_site: Path):
    """Every local link and anchor in the built HTML resolves (beyond what mkdocs --strict checks)."""
    site = small_site / "build" / "site"
    assert (site / "index.html").is_file()
    assert broken_links(site) == []


def test_tool_section_shows_arguments_enum_policy_examples_aliases_and_tokens(small_site: Path):
    """A tool's section has its deep-link anchor, argument table with enums, result, examples, policy, aliases, cost."""
    page = (small_site / "build" / "site" / "nodes" / "code.refactor.html").read_text(encoding="utf-8")
    assert 'id="refactor.rename_symbol"' in page
    for value in ("python", "typescript", "go"):
        assert f"<code>{value}</code>" in page
    assert "Name &#124; with a pipe" in page or "Name | with a pipe" in page
    assert "<code>edits</code>" in page
    assert '"tool": "refactor.rename_symbol"' in text_of(page)
    assert "Preview first." in page
    assert "Rename public APIs silently." in page
    assert "Dynamic imports are missed." in page
    assert "You want to rename a function everywhere." in page
    assert "refactor_rename_symbol" in page
    assert re.search(r"pointer <strong>\d+</strong>, full spec <strong>\d+</strong>", page)
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;" in page
    assert "Code</a> \u203a" in page  # breadcrumbs back to the parent node


def test_argument_table_keeps_the_authors_order(small_site: Path):
    """The arguments table lists symbol before language, as the source does (the stored schema's keys are sorted)."""
    page = (small_site / "build" / "site" / "nodes" / "code.refactor.html").read_text(encoding="utf-8")
    table = page[page.index('class="tc-table tc-args"') :]
    assert table.index("<code>symbol</code>") < table.index("<code>language</code>")


def test_every_page_has_one_search_box_in_its_header_and_no_theme_search(small_site: Path):
    """toolcat's search box sits in the header of every page, pointing at the site's artifacts; lunr's is gone."""
    site = small_site / "build" / "site"
    pages = [p for p in site.rglob("*.html") if p.relative_to(site).parts[0] != ARTIFACTS_DIR]
    assert len(pages) > 3
    for page in pages:
        text = page.read_text(encoding="utf-8")
        header = text[text.index("<header") : text.index("</header>")]
        assert text.count('id="toolcat-search"') == 1, page
        assert 'id="toolcat-search-input"' in header, page
        depth = len(page.relative_to(site).parts) - 1
        relative = "../" * depth + "artifacts/catalog.json"
        expected = "/artifacts/catalog.json" if page.name == "404.html" else relative  # 404 is served from anywhere
        assert f'data-catalog="{expected}"' in header, page
        assert "md-search" not in text, page
    assert not (site / "search").exists()
    config = render_project(read_build(small_site / "build")).config
    assert config["plugins"] == []


def test_full_spec_link_serves_the_verified_artifact(small_site: Path):
    """The 'Full spec JSON' link of a tool is the content-hashed spec file itself, byte for byte."""
    site = small_site / "build" / "site"
    page = (site / "nodes" / "code.refactor.html").read_text(encoding="utf-8")
    link = re.search(r'href="(\.\./artifacts/tools/refactor\.rename_symbol\.[0-9a-f]+\.json)"', page)
    assert link is not None
    published = (site / "nodes" / link.group(1)).resolve()
    original = small_site / "build" / link.group(1).removeprefix("../artifacts/")
    assert published.read_bytes() == original.read_bytes()
    assert json.loads(published.read_bytes())["tool_id"] == "refactor.rename_symbol"


def test_dag_category_lists_tool_and_links_to_its_home(small_site: Path):
    """A tool listed under an extra category appears in that node's table, linked to its home node's anchor."""
    page = (small_site / "build" / "site" / "nodes" / "code.html").read_text(encoding="utf-8")
    assert 'href="search.html#code.search"' in page
    nested = (small_site / "build" / "site" / "nodes" / "search.html").read_text(encoding="utf-8")
    assert "<code>sort[].field</code>" in nested
    assert "<code>filter.owner</code>" in nested


def test_skill_page_renders_metadata_body_and_resource_links(small_site: Path):
    """A skill page shows its frontmatter, its rendered body with resource links, and links every resource file."""
    site = small_site / "build" / "site"
    page = (site / "skills" / "release-notes.html").read_text(encoding="utf-8")
    assert "<code>license</code>" in page
    assert "MIT" in page
    assert 'id="steps"' in page
    assert 'href="#steps"' in page
    assert 'href="#missing"' not in page
    assert "references/template.md" in page
    assert "references/style.md" in page
    links = re.findall(r'href="(\.\./artifacts/skills/[^"]+)"', page)
    assert any(link.endswith("references/template.md") for link in links)
    for link in links:
        assert (site / "skills" / link).resolve().is_file()


def test_home_page_shows_counts_namespaces_and_agent_usage(small_site: Path):
    """The home page states the registry_version, counts per namespace, and how an agent uses the catalogue."""
    site = small_site / "build" / "site"
    page = (site / "index.html").read_text(encoding="utf-8")
    data = read_build(small_site / "build")
    assert data.manifest["registry_version"] in page
    assert "<code>refactor</code>" in page
    assert "<code>task</code>" in page
    assert "from toolcat import Catalog" in page
    entry = json.loads((site / ARTIFACTS_DIR / "catalog.json").read_text(encoding="utf-8"))
    assert entry["manifest"] == data.entry["manifest"]


def test_mkdocs_config_is_offline_material_and_strict(small_site: Path):
    """The generated mkdocs.yml pins the material theme with web fonts off and strict link validation."""
    project = render_project(read_build(small_site / "build"))
    assert project.config["theme"]["name"] == "material"
    assert project.config["theme"]["font"] is False
    assert project.config["strict"] is True
    assert project.config["validation"]["anchors"] == "warn"
    home = (small_site / "build" / "site" / "index.html").read_text(encoding="utf-8")
    assert "fonts.googleapis.com" not in home
    assert "fonts.gstatic.com" not in home


def test_tampered_artifact_fails_and_keeps_the_old_site(tmp_path: Path, make_tree):
    """A spec file that no longer matches its hash stops the site build; the previous site stays as it was."""
    src = make_tree(small_tree())
    out = tmp_path / "build"
    build(src, out)
    build_site(out)
    before = (out / "site" / "index.html").read_bytes()
    spec = next((out / "tools").glob("code.search.*.json"))
    spec.write_bytes(spec.read_bytes().replace(b"Search code.", b"Search c0de."))
    with pytest.raises(BuildError, match="integrity check failed"):
        build_site(out)
    assert (out / "site" / "index.html").read_bytes() == before
    assert not list(out.glob(".site.tmp-*"))


def test_site_swap_is_one_step_and_cleans_what_a_killed_build_left(tmp_path: Path, make_tree):
    """A rebuild exchanges the site folder in one step (same folder, new content) and removes stale temp folders."""
    src = make_tree(small_tree())
    out = tmp_path / "build"
    build(src, out)
    build_site(out)
    stale = out / ".site.tmp-killed"
    (stale / "site").mkdir(parents=True)
    (out / "site" / "marker.txt").write_text("from the previous site")
    build_site(out)
    assert not stale.exists()
    assert not (out / "site" / "marker.txt").exists()
    assert (out / "site" / "index.html").is_file()
    assert not list(out.glob(".site.*"))


def test_strict_mkdocs_failure_keeps_the_old_site(tmp_path: Path, make_tree, monkeypatch: pytest.MonkeyPatch):
    """When mkdocs --strict rejects the project (a nav entry to a missing page), the old site is left in place."""
    src = make_tree(small_tree())
    out = tmp_path / "build"
    build(src, out)
    build_site(out)
    before = (out / "site" / "index.html").read_bytes()
    real_config = site_module.mkdocs_config

    def broken_config(data: site_module.BuildData) -> dict[str, object]:
        config = real_config(data)
        config["nav"] = [*config["nav"], {"Gone": "nodes/does-not-exist.md"}]
        return config

    monkeypatch.setattr(site_module, "mkdocs_config", broken_config)
    with pytest.raises(BuildError, match="mkdocs build --strict failed"):
        build_site(out)
    assert (out / "site" / "index.html").read_bytes() == before


def test_missing_build_says_how_to_fix(tmp_path: Path):
    """Pointing the site at a folder without catalog.json tells the user to run toolcat build."""
    with pytest.raises(BuildError, match="toolcat build"):
        build_site(tmp_path / "nothing")


def test_cli_site_command_builds_into_out(small_site: Path, tmp_path: Path):
    """`toolcat site --build B --out O` builds the site into O and prints a summary."""
    result = CliRunner().invoke(main, ["site", "--build", str(small_site / "build"), "--out", str(tmp_path / "web")])
    assert result.exit_code == 0, result.output
    assert "pages" in result.output
    assert (tmp_path / "web" / "skills" / "release-notes.html").is_file()


@pytest.mark.slow
def test_example_catalogue_site_builds_strict(example_build: Path, tmp_path: Path):
    """The example catalogue's site builds with --strict, links resolve, and rename_symbol shows its language enum."""
    out = tmp_path / "site"
    result = build_site(example_build, out)
    assert result.tools >= 1
    assert broken_links(out) == []
    data = read_build(example_build)
    if "refactor.rename_symbol" not in data.specs:
        pytest.skip("catalog_src has no refactor.rename_symbol yet")
    home = tuple(data.specs["refactor.rename_symbol"]["path"])
    page = (out / "nodes" / f"{'.'.join(home)}.html").read_text(encoding="utf-8")
    assert 'id="refactor.rename_symbol"' in page
    enum = next(
        iter(r.enum for r in schema_rows(data.specs["refactor.rename_symbol"]["args_schema"]) if r.name == "language")
    )
    assert enum
    assert all(f"<code>{value}</code>" in page for value in enum)


@pytest.mark.slow
@pytest.mark.corpus
def test_corpus_github_tools_and_skills_site_builds_strict(corpus: Path, tmp_path: Path):
    """A sample of the real GitHub MCP tools and public skills builds a strict site with no broken links."""
    sys.path.insert(0, str(REPO / "bench"))
    from corpus_site_src import write_corpus_tree  # noqa: PLC0415 - bench/ is put on sys.path just above

    tree = write_corpus_tree(corpus, tmp_path / "src", tool_limit=40, skill_limit=30)
    print(
        f"corpus sample: {tree.tools} tools, {tree.skills} skills, skipped {len(tree.skipped_invalid)} invalid, "
        f"{len(tree.skipped_duplicate)} duplicate"
    )
    assert tree.tools == 40
    assert tree.skills == 30
    build(tree.root, tmp_path / "build")
    result = build_site(tmp_path / "build")
    assert result.tools == 41  # and the generated task.list
    assert result.skills == 30
    assert broken_links(tmp_path / "build" / "site") == []
    page = (tmp_path / "build" / "site" / "nodes" / "github.html").read_text(encoding="utf-8")
    assert 'id="github.actions_get"' in page


def test_two_site_builds_are_byte_identical(small_site: Path, tmp_path: Path):
    """Building the site of the same build twice gives the same bytes (sitemap dates included)."""
    build_site(small_site / "build", out=tmp_path / "again", project_dir=tmp_path / "project")
    first = small_site / "build" / "site"
    second = tmp_path / "again"
    files = sorted(p.relative_to(first).as_posix() for p in first.rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(second).as_posix() for p in second.rglob("*") if p.is_file())
    differing = [f for f in files if (first / f).read_bytes() != (second / f).read_bytes()]
    assert differing == []


def test_js_reader_thresholds_are_the_python_readers() -> None:
    """The site's search drops the same hits as the Python reader: its constants equal search.py's."""
    js = (REPO / "templates/site/assets/toolcat-search.js").read_text()
    found = {name: float(value) for name, value in re.findall(r"\b(MIN_[A-Z_]+) = ([0-9.]+)", js)}
    assert found == {
        "MIN_CHAR_ONLY_SCORE": ranking.MIN_CHAR_ONLY_SCORE,
        "MIN_RELEVANCE": search.MIN_RELEVANCE,
        "MIN_RELATIVE": search.MIN_RELATIVE,
    }
