"""Incremental search index (issue 16): a base segment kept as it is, plus a delta segment for what changed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from support import REPO, serve_folder

from toolcat.build import build
from toolcat.build.contributors.index import segments as index_delta
from toolcat.build.contributors.index import shards
from toolcat.build.errors import BuildError
from toolcat.build.verify import verify_build
from toolcat.format.index_format import proven_doc
from toolcat.format.vector_format import proven_body
from toolcat.reader import Catalog
from toolcat.site.read import read_build

EVALS = REPO / "catalog_src" / "evals" / "search.yaml"


def _meta(out: Path) -> dict[str, Any]:
    entry = json.loads((out / "catalog.json").read_text())
    manifest = json.loads((out / entry["manifest"]["path"]).read_text())
    return json.loads((out / manifest["index"]["path"]).read_text())


def _base_files(out: Path) -> set[str]:
    meta = _meta(out)
    return {ref["path"] for part in ("tools", "nodes") for ref in index_delta.part_files(meta[part], out)}


def _edit(src: Path, rel: str, old: str, new: str) -> None:
    file = src / rel
    text = file.read_text(encoding="utf-8")
    assert old in text, f"{old!r} not in {rel}"
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def _names(catalog: Catalog, query: str, category: str | None = None) -> list[str]:
    if category is None:
        answer = catalog.find_tool(query)
        assert answer["ok"], answer
        return [m["name"] for m in answer["matches"]]
    answer = catalog.search_tool_by_category(query, [category])
    if not answer["ok"]:
        assert answer["error"]["code"] == "NO_MATCH_IN_CATEGORY", answer
        return []
    return [r["tool_id"] for r in answer["results"]]


@pytest.fixture
def built(example_src_copy: Path, tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "build"
    build(example_src_copy, out)
    return example_src_copy, out


def test_one_tool_edit_writes_a_delta_and_keeps_the_base(built: tuple[Path, Path]) -> None:
    """A summary edit keeps every base index file and finds the tool by its new words at once."""
    src, out = built
    before = _base_files(out)
    _edit(src, "files/tools.yaml", "summary: ", "summary: Wombat-proof ")
    result = build(src, out)
    meta = _meta(out)
    assert "delta" in meta["tools"], "the edit should land in a delta segment"
    assert _base_files(out) == before
    assert result.write is not None
    assert result.write.files_written < 50
    assert _names(Catalog.open(out), "wombat proof")[0].startswith("file.")
    assert verify_build(out).ok


def test_delta_answers_stay_close_to_a_full_build(built: tuple[Path, Path], tmp_path: Path) -> None:
    """After a few edits, every eval query's relevance is within 0.01 of a full build's; a merge makes them equal."""
    src, out = built
    _edit(src, "files/tools.yaml", "summary: ", "summary: Quickly and safely ")
    _edit(src, "storage/buckets/tools.yaml", "summary: ", "summary: Quickly and safely ")
    _edit(src, "utilities/compute/tools.yaml", "summary: ", "summary: Quickly ")
    build(src, out)
    assert "delta" in _meta(out)["tools"]
    full = tmp_path / "full"
    build(src, full)
    queries = [q["query"] for q in yaml.safe_load(EVALS.read_text())["queries"]]
    incremental, fresh = Catalog.open(out), Catalog.open(full)
    for query in queries:
        a = {m["name"]: m["relevance"] for m in incremental.find_tool(query, limit=5)["matches"]}
        b = {m["name"]: m["relevance"] for m in fresh.find_tool(query, limit=5)["matches"]}
        assert next(iter(a)) == next(iter(b)), query
        for name in a.keys() & b.keys():
            assert abs(a[name] - b[name]) <= 0.01, (query, name)
    build(src, out, force=True)  # a merge: one segment, the same bytes as a build from nothing
    assert "delta" not in _meta(out)["tools"]
    assert _meta(out) == _meta(full)


def test_reverting_an_edit_gives_the_original_bytes(built: tuple[Path, Path]) -> None:
    """When the sources are back to the base's, the index is the base alone, byte for byte."""
    src, out = built
    original = _meta(out)
    file = src / "files" / "tools.yaml"
    text = file.read_text(encoding="utf-8")
    _edit(src, "files/tools.yaml", "summary: ", "summary: Temporary ")
    build(src, out)
    assert _meta(out) != original
    file.write_text(text, encoding="utf-8")
    build(src, out)
    assert _meta(out) == original


def test_added_moved_and_deleted_tools(built: tuple[Path, Path]) -> None:
    """A new tool is found and scoped to its category, a moved one only under its new home, a deleted one nowhere."""
    src, out = built
    catalog = Catalog.open(out)
    assert "util.math.eval" in _names(catalog, "evaluate arithmetic expression", category="utilities")
    tools = yaml.safe_load((src / "utilities" / "compute" / "tools.yaml").read_text())
    first = tools["tools"][0] if isinstance(tools, dict) else tools[0]
    (src / "files" / "zz_added.yaml").write_text(
        yaml.safe_dump(
            {
                "tools": [
                    {
                        "id": "file.wombat_index",
                        "summary": "Build a wombat index of a folder tree",
                        "description": "Walks a folder and writes a wombat index file.",
                        "kind": "read",
                        "args_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    (src / "utilities" / "compute" / "tools.yaml").unlink()
    result = build(src, out)
    assert result.write is not None
    meta = _meta(out)
    assert meta["tools"].get("delta"), "a small change stays a delta"
    assert meta["tools"]["delta"]["deleted"], "the removed file's tools are deleted docs"
    catalog = Catalog.open(out)
    assert _names(catalog, "wombat index")[0] == "file.wombat_index"
    assert _names(catalog, "wombat index", category="files")[0] == "file.wombat_index"
    assert "file.wombat_index" not in _names(catalog, "wombat index", category="utilities")
    assert first["id"] not in _names(catalog, str(first["summary"]))
    nodes = catalog.search_nodes("wombat index")
    assert nodes["ok"]
    assert verify_build(out).ok


def test_a_big_change_merges(built: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A delta over its size limit is folded into a new base: one segment, equal to a build from nothing."""
    src, out = built
    monkeypatch.setattr(index_delta, "DELTA_MAX_DOCS", 1)
    _edit(src, "files/tools.yaml", "summary: ", "summary: One ")
    _edit(src, "storage/buckets/tools.yaml", "summary: ", "summary: Two ")
    build(src, out)
    full = tmp_path / "full"
    build(src, full)
    assert "delta" not in _meta(out)["tools"]
    assert _meta(out) == _meta(full)


def test_missing_base_file_means_a_full_build(built: tuple[Path, Path]) -> None:
    """A base file gone from the output folder is never linked: the build fits everything again."""
    src, out = built
    victim = min(_base_files(out))
    (out / victim).unlink()
    _edit(src, "files/tools.yaml", "summary: ", "summary: Again ")
    build(src, out)
    assert "delta" not in _meta(out)["tools"]
    assert (out / victim).is_file() or victim not in _base_files(out)
    assert _names(Catalog.open(out), "again")  # (the older version kept for pinned readers lost the file)


def test_corrupt_private_state_means_a_full_build(built: tuple[Path, Path]) -> None:
    """An unreadable .toolcat-index.json costs a full index build, never a failed or wrong one."""
    src, out = built
    (out / index_delta.INDEX_STATE).write_text("{not json", encoding="utf-8")
    _edit(src, "files/tools.yaml", "summary: ", "summary: Again ")
    build(src, out)
    assert "delta" not in _meta(out)["tools"]
    assert json.loads((out / index_delta.INDEX_STATE).read_text())["format"] == index_delta.STATE_FORMAT


@pytest.fixture
def http_root(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    root = tmp_path / "www"
    root.mkdir()
    with serve_folder(root) as url:
        yield root, url + "build/"


def test_delta_search_over_http_in_three_round_trips(built: tuple[Path, Path], http_root: tuple[Path, str]) -> None:
    """Over HTTP a search of a base + delta index reads in as many rounds as one segment: three for known words."""
    src, out = built
    root, url = http_root

    def rounds(query: str, cache: str) -> tuple[int, list[str]]:
        shutil.rmtree(root / "build", ignore_errors=True)
        shutil.copytree(out, root / "build")
        catalog = Catalog.open(url, cache_dir=root.parent / cache)
        opened = catalog.stats()["round_trips"]
        names = _names(catalog, query)
        return catalog.stats()["round_trips"] - opened, names

    single, _ = rounds("read the contents of a file", "c1")
    _edit(src, "files/tools.yaml", "summary: ", "summary: Safely read and ")
    build(src, out)
    assert "delta" in _meta(out)["tools"]
    delta, names = rounds("read the contents of a file", "c2")
    assert delta == single <= 3
    assert names[0] == "file.read"


def test_a_build_from_the_cache_writes_the_same_bytes(built: tuple[Path, Path]) -> None:
    """A forced rebuild that reads every source from the build cache writes no file: key order survives the cache."""
    src, out = built
    again = build(src, out, force=True)
    assert again.write is not None
    assert again.write.files_written == 0


@pytest.fixture
def paged(example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """The example catalogue with its doc table and term spaces paged (as catalogues of 2,048 tools and more have)."""
    monkeypatch.setattr(shards, "PAGES_FROM", 1)
    monkeypatch.setattr(shards, "PAGE_SIZE", 2)
    out = tmp_path / "build"
    build(example_src_copy, out)
    return example_src_copy, out


def test_paged_doc_table_keeps_the_meta_small_and_answers_alike(paged: tuple[Path, Path], example_build: Path) -> None:
    """Paged tables give the same answers as a ref per file, and toolcat verify checks every paged file."""
    _, out = paged
    pages = _meta(out)["tools"]["doc_pages"]
    assert "doc_shards" not in _meta(out)["tools"]
    assert _meta(out)["tools"]["doc_shard_size"] == shards.PAGED_DOC_SHARD_SIZE, "a paged table has small shards"
    assert len(pages["roots"]) == -(-pages["files"] // pages["per_page"]), "toolcat-index-4: a root a page"
    assert "pages" not in pages
    spaces = _meta(out)["tools"]["spaces"]
    assert all("term_pages" in space and "shards" not in space for space in spaces), "term shards paged too"
    paged_catalog, plain = Catalog.open(out), Catalog.open(example_build)
    queries = [q["query"] for q in yaml.safe_load(EVALS.read_text())["queries"]]
    for query in queries:
        assert paged_catalog.find_tool(query) == plain.find_tool(query)
    report = verify_build(out)
    assert report.ok, report.problems
    assert report.kinds.get("index_docs", 0) >= pages["files"]
    assert report.kinds.get("index_terms", 0) >= sum(space["term_pages"]["files"] for space in spaces)


def test_a_paged_doc_table_is_proven_shards_and_no_page_files(paged: tuple[Path, Path], tmp_path: Path) -> None:
    """toolcat-index-4: each doc shard carries its Merkle path to a root the meta lists; no page file is written.

    ``toolcat verify`` and the site's mirror check each shard's path: a shard changed after the build is reported.
    """
    _, out = paged
    meta = _meta(out)
    assert meta["format"] == "toolcat-index-4"
    table = meta["tools"]["doc_pages"]
    assert not list((out / "index").glob("tools.docs.p*")), "no doc page files"
    for number in range(table["files"]):
        ref = proven_doc(table, number)
        body = proven_body((out / ref["path"]).read_bytes(), ref["root"], ref["place"], ref["per_page"])
        assert json.loads(body)["first"] == number * meta["tools"]["doc_shard_size"]
    shards_paths = {proven_doc(table, number)["path"] for number in range(table["files"])}
    assert shards_paths <= set(read_build(out).files), "the site publishes every doc shard"
    bad = tmp_path / "bad"
    shutil.copytree(out, bad)
    shard = bad / proven_doc(table, 1)["path"]
    shard.write_bytes(shard.read_bytes().replace(b'"summary":"', b'"summary":"EVIL ', 1))
    report = verify_build(bad)
    assert not report.ok
    assert any(table["folder"] + "/d1.json" in problem and "root" in problem for problem in report.problems)
    with pytest.raises(BuildError, match=r"d1\.json: integrity check failed"):
        read_build(bad)


def test_a_doc_table_listing_too_few_pages_is_refused_when_read(paged: tuple[Path, Path]) -> None:
    """A meta whose doc table names fewer page roots (or pages) than its shards need is refused as a whole.

    A host serving a self-consistent catalogue it made (hashes and all) could otherwise send a search into an
    IndexError at the shard past the last root; the reader now says INTEGRITY when it opens the part.
    """
    from toolcat.reader.search.ranking import _Part  # noqa: PLC0415

    _, out = paged
    part = _meta(out)["tools"]
    table = part["doc_pages"]
    assert len(table["roots"]) == -(-table["files"] // table["per_page"]) > 1
    _Part(part)  # as built: read
    for short in ({**table, "roots": table["roots"][:-1]}, {**table, "files": table["files"] + table["per_page"]}):
        with pytest.raises(ValueError, match="lists"):
            _Part({**part, "doc_pages": short})


def test_proven_doc_shards_come_from_the_disk_cache_in_a_new_process(paged: tuple[Path, Path], tmp_path: Path) -> None:
    """A proven doc shard has no sha256 of its own: it is kept under its page's root and place, checked when read.

    A second reader with the same cache dir fetches none of them again; a kept copy changed on disk is refused by
    its path, dropped, and fetched again (the answer is the same).
    """
    _, out = paged
    query = "upload a report to a bucket"
    cache = tmp_path / "cache"
    seen: list[str] = []
    with serve_folder(out, seen) as url:
        first = Catalog.open(url, cache_dir=cache).find_tool(query)
        fetched = [p for p in seen if "/tools.docs." in p]
        assert fetched, "the first reader reads doc shards"
        kept = sorted((cache / "proven").rglob("*-*"))
        assert kept, "and keeps them"
        seen.clear()
        again = Catalog.open(url, cache_dir=cache)
        assert again.find_tool(query) == first
        assert not [p for p in seen if "/tools.docs." in p], "a new reader takes them from the disk cache"
        assert again.stats()["cache_hits"] >= len(fetched)
        kept[0].write_bytes(kept[0].read_bytes().replace(b'"', b"'", 1))  # changed: its path no longer checks
        seen.clear()
        assert Catalog.open(url, cache_dir=cache).find_tool(query) == first
    assert [p for p in seen if "/tools.docs." in p], "the changed copy was fetched again"


def test_doc_layout_pages_big_tool_parts_in_small_shards() -> None:
    """Small parts and every nodes part keep 32-doc shards listed in the meta; big tool parts 4 (8 from 50,000)."""
    assert shards.doc_layout("tools", 2_016) == (32, None)  # 63 shards of 32
    assert shards.doc_layout("nodes", 100_000) == (32, None)
    assert shards.doc_layout("tools", 2_017) == (4, 64)  # 64 shards of 32: paged, 505 of 4, pages of PAGE_SIZE
    assert shards.doc_layout("tools", 10_000) == (4, 64)  # 2,500 shards, √ = 50
    assert shards.doc_layout("tools", 49_999) == (4, 128)  # 12,500 shards, √ = 111.8
    assert shards.doc_layout("tools", 50_000) == (8, 128)  # from BIG_PAGED_FROM: 6,250 shards of 8, √ = 79.1
    assert shards.doc_layout("tools", 100_000) == (8, 128)  # 12,500 shards, √ = 111.8
    assert shards.doc_layout("tools", 8 * 16_384) == (8, 128)  # √ = 128 exactly
    assert shards.doc_layout("tools", 8 * 16_384 + 1) == (8, 256)


def test_paged_doc_shards_over_http_in_three_round_trips(paged: tuple[Path, Path], http_root: tuple[Path, str]) -> None:
    """A doc shard is fetched with its page in one round, and a tampered one is INTEGRITY, never used."""
    _, out = paged
    root, url = http_root
    shutil.copytree(out, root / "build")
    catalog = Catalog.open(url, cache_dir=root.parent / "cache")
    opened = catalog.stats()["round_trips"]
    assert _names(catalog, "read the contents of a file")[0] == "file.read"
    assert catalog.stats()["round_trips"] - opened <= 3
    folder = root / "build" / _meta(out)["tools"]["doc_pages"]["folder"]
    for shard in folder.glob("d*.json"):
        shard.write_bytes(shard.read_bytes().replace(b'"summary":"', b'"summary":"EVIL ', 1))
    fresh = Catalog.open(url, cache_dir=root.parent / "cache2")
    answer = fresh.find_tool("read the contents of a file")
    assert not answer["ok"]
    assert answer["error"]["code"] == "INTEGRITY"


def test_delta_on_a_paged_base(paged: tuple[Path, Path]) -> None:
    """An edit on a paged base keeps its pages and shards and writes a delta."""
    src, out = paged
    before = _base_files(out)
    assert any("/d0.json" in path for path in before)
    _edit(src, "files/tools.yaml", "summary: ", "summary: Wombat-proof ")
    build(src, out)
    assert "delta" in _meta(out)["tools"]
    assert _base_files(out) == before
    assert _names(Catalog.open(out), "wombat proof")[0].startswith("file.")
    assert verify_build(out).ok
