"""The reader over HTTP: a real ThreadingHTTPServer on 127.0.0.1 serving a real build."""

from __future__ import annotations

import gzip
import hashlib
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support import REPO, write_tree

from toolcat.build import build
from toolcat.reader import Catalog, ReaderError


class StaticServer:
    """Serves a folder with ETags on catalog.json; counts requests and bytes; injects faults per path.

    With ``compress = True`` it gzips bodies for clients that accept it, as static hosts and CDNs do.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.requests: list[str] = []
        self.bytes_sent = 0
        self.compress = False
        # path suffix -> "404" | "500" | "500once" | "truncate" | "hang" | "tamper" | "badgzip" | "brotli" | "bomb"
        self.faults: dict[str, str] = {}
        self.lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                rel = self.path.lstrip("/").split("?", 1)[0]
                with server.lock:
                    server.requests.append(rel)
                fault = next((f for suffix, f in server.faults.items() if rel.endswith(suffix)), None)
                if fault == "500once":
                    server.faults = {k: v for k, v in server.faults.items() if v != "500once"}
                    fault = "500"
                if fault in ("404", "500"):
                    self.send_error(int(fault))
                    return
                if fault == "hang":
                    time.sleep(3)
                    return
                file = server.root / rel
                if not file.is_file():
                    self.send_error(404)
                    return
                data = file.read_bytes()
                if fault == "tamper":
                    data = data.replace(b"e", b"E", 1)
                etag = '"' + hashlib.sha256(data).hexdigest()[:20] + '"'
                if rel == "catalog.json" and self.headers.get("If-None-Match") == etag:
                    self.send_response(304)
                    self.send_header("ETag", etag)
                    self.end_headers()
                    return
                encoding = None
                if fault == "badgzip":
                    data, encoding = b"this is not gzip", "gzip"
                elif fault == "brotli":
                    encoding = "br"
                elif fault == "bomb":
                    data, encoding = gzip.compress(b" " * 200_000, mtime=0), "gzip"  # ~250 bytes on the wire
                elif server.compress and "gzip" in self.headers.get("Accept-Encoding", ""):
                    data, encoding = gzip.compress(data, mtime=0), "gzip"
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if encoding:
                    self.send_header("Content-Encoding", encoding)
                if rel == "catalog.json":
                    self.send_header("ETag", etag)
                self.end_headers()
                body = data[: len(data) // 2] if fault == "truncate" else data
                with server.lock:  # counted before the write: the client may read its stats as soon as it has the body
                    server.bytes_sent += len(body)
                self.wfile.write(body)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def reset(self) -> None:
        """Forget the requests and bytes counted so far."""
        with self.lock:
            self.requests.clear()
            self.bytes_sent = 0

    def close(self) -> None:
        """Stop serving."""
        self.httpd.shutdown()
        self.httpd.server_close()


def _source(extra_tool: bool = False) -> dict:
    tools = [
        {
            "id": f"net.thing.op{i}",
            "summary": f"Operate on things, variant {i}",
            "description": "x",
            "tags": ["net"],
            "args_schema": {"type": "object"},
        }
        for i in range(5)
    ]
    if extra_tool:
        tools.append(
            {
                "id": "net.thing.added",
                "summary": "A tool added in the second release",
                "description": "x",
                "args_schema": {"type": "object"},
            }
        )
    return {
        "_node.yaml": {"title": "HTTP test", "summary": "served over http"},
        "net/_node.yaml": {"title": "Net", "summary": "Network tools."},
        "net/tools.yaml": {"tools": tools},
        "local/_node.yaml": {"title": "Local", "summary": "Python tools."},
        "local/tools.yaml": {
            "tools": [
                {
                    "id": "local.echo",
                    "summary": "Echo",
                    "description": "x",
                    "handler": "json:dumps",
                    "args_schema": {"type": "object"},
                }
            ]
        },
    }


@pytest.fixture
def site(tmp_path: Path):
    src = write_tree(tmp_path / "src", _source())
    build(src, tmp_path / "build")
    server = StaticServer(tmp_path / "build")
    yield server, tmp_path
    server.close()


def test_open_and_root_list_cost_three_requests(site):
    """Opening and listing the root over HTTP costs catalog.json + manifest + root shard, all counted."""
    server, tmp = site
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    out = catalog.list()
    assert out["ok"]
    assert [n["name"] for n in out["nodes"]] == ["local", "net"]
    assert len(server.requests) == 3
    assert server.requests[0] == "catalog.json"
    assert catalog.stats()["bytes_downloaded"] == server.bytes_sent


def test_gzip_bodies_are_inflated_verified_and_cached(site):
    """A host that gzips: the reader asks for it, counts the compressed bytes, verifies and caches the inflated file."""
    server, tmp = site
    server.compress = True
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    assert catalog.list()["ok"]
    assert catalog.expand_tool("net.thing.op1")["ok"]
    stats = catalog.stats()
    assert stats["bytes_downloaded"] == server.bytes_sent
    assert stats["bytes_downloaded"] < stats["bytes_decoded"]
    cached = [f for f in (tmp / "cache" / "objects").rglob("*") if f.is_file()]
    assert cached
    for file in cached:  # the cache holds the files as built, whose names are their sha256
        assert hashlib.sha256(file.read_bytes()).hexdigest() == file.name
    server.reset()
    again = Catalog.open(server.url, cache_dir=tmp / "cache")
    assert again.expand_tool("net.thing.op1")["ok"]
    assert server.requests == ["catalog.json"]


@pytest.mark.parametrize(
    ("fault", "code", "words"),
    [
        ("badgzip", "UNAVAILABLE", "does not inflate"),
        ("brotli", "UNAVAILABLE", "Content-Encoding 'br'"),
        ("bomb", "INTEGRITY", "larger than expected"),
    ],
)
def test_bad_compressed_bodies_are_never_used(site, fault, code, words):
    """A gzip body that does not inflate, an encoding nobody asked for, or one that inflates past its ref: errors."""
    server, tmp = site
    server.compress = True
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache", timeout=2, retries=1)
    spec_name = next(p.name for p in (tmp / "build" / "tools").glob("net.thing.op4.*"))
    server.faults = {spec_name: fault}
    out = catalog.expand_tool("net.thing.op4")
    assert out["error"]["code"] == code
    assert words in out["error"]["message"]
    assert not list((tmp / "cache" / "objects").rglob(spec_name))
    server.faults.clear()
    assert catalog.expand_tool("net.thing.op4")["ok"]


def test_warm_cache_revalidates_only_the_entry(site):
    """A second session re-asks only for catalog.json (answered 304) and reads the rest from the disk cache."""
    server, tmp = site
    Catalog.open(server.url, cache_dir=tmp / "cache").expand_tool("net.thing.op1")
    server.reset()
    warm = Catalog.open(server.url, cache_dir=tmp / "cache")
    assert warm.expand_tool("net.thing.op1")["ok"]
    assert server.requests == ["catalog.json"]
    assert warm.stats()["not_modified"] == 1
    assert warm.stats()["cache_hits"] >= 3


def test_tampered_file_is_integrity_and_not_cached(site):
    """A file whose bytes differ from its parent's hash is INTEGRITY, and is not kept in the cache."""
    server, tmp = site
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    spec_name = next(p.name for p in (tmp / "build" / "tools").glob("net.thing.op2.*"))
    server.faults = {spec_name: "tamper"}
    out = catalog.expand_tool("net.thing.op2")
    assert out["error"]["code"] == "INTEGRITY"
    server.faults.clear()
    assert catalog.expand_tool("net.thing.op2")["ok"]


def test_tampered_manifest_fails_open(site):
    """A tampered manifest makes open() raise INTEGRITY."""
    server, tmp = site
    name = next((tmp / "build" / "manifests").iterdir()).name
    server.faults = {name: "tamper"}
    with pytest.raises(ReaderError) as info:
        Catalog.open(server.url, cache_dir=tmp / "cache")
    assert info.value.code == "INTEGRITY"


def test_corrupt_cache_file_is_fetched_again(site):
    """A cached file corrupted on disk is detected, discarded and fetched again."""
    server, tmp = site
    Catalog.open(server.url, cache_dir=tmp / "cache").list()
    for file in (tmp / "cache" / "objects").rglob("*"):
        if file.is_file():
            file.write_bytes(b"garbage")
    server.reset()
    assert Catalog.open(server.url, cache_dir=tmp / "cache").list()["ok"]
    assert len(server.requests) == 3


def test_stale_cache_sees_the_new_release(site):
    """After a new build is published, the cached entry is revalidated and the new version read; refresh() notices."""
    server, tmp = site
    cache = tmp / "cache"
    old = Catalog.open(server.url, cache_dir=cache)
    old_version = old.registry_version
    assert old.resolve("net.thing.added") is None
    build(write_tree(tmp / "src2", _source(extra_tool=True)), tmp / "build")
    fresh = Catalog.open(server.url, cache_dir=cache)
    assert fresh.registry_version != old_version
    assert fresh.resolve("net.thing.added") == "net.thing.added"
    assert old.refresh() is True
    assert old.expand_tool("net.thing.added")["ok"]
    assert old.refresh() is False


def test_pinned_version_survives_a_new_release(site):
    """version= keeps reading the pinned registry_version after a newer one is published."""
    server, tmp = site
    first = Catalog.open(server.url, cache_dir=tmp / "cache").registry_version
    build(write_tree(tmp / "src2", _source(extra_tool=True)), tmp / "build")
    pinned = Catalog.open(server.url, cache_dir=tmp / "cache", version=first)
    assert pinned.registry_version == first
    assert pinned.expand_tool("net.thing.added")["error"]["code"] == "TOOL_NOT_FOUND"
    assert pinned.refresh() is False


def test_404_names_the_url(site):
    """A missing file answers UNAVAILABLE naming the URL, without retrying."""
    server, tmp = site
    with pytest.raises(ReaderError) as info:
        Catalog.open(server.url + "nothing-here/", cache_dir=tmp / "cache")
    assert info.value.code == "UNAVAILABLE"
    assert "nothing-here/catalog.json" in info.value.message
    assert "404" in info.value.message
    assert len(server.requests) == 1


def test_500_is_retried_then_reported(site):
    """A 500 is retried a bounded number of times, then UNAVAILABLE; a single 500 is absorbed by a retry."""
    server, tmp = site
    server.faults = {"catalog.json": "500"}
    with pytest.raises(ReaderError) as info:
        Catalog.open(server.url, cache_dir=tmp / "cache", retries=2)
    assert info.value.code == "UNAVAILABLE"
    assert info.value.details["attempts"] == 3
    assert len(server.requests) == 3
    server.faults = {"catalog.json": "500once"}
    assert Catalog.open(server.url, cache_dir=tmp / "cache").list()["ok"]


def test_truncated_body_is_never_used(site):
    """A body cut short (Content-Length larger than what arrives) is an error, never used or cached."""
    server, tmp = site
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache", timeout=2, retries=1)
    spec_name = next(p.name for p in (tmp / "build" / "tools").glob("net.thing.op3.*"))
    server.faults = {spec_name: "truncate"}
    out = catalog.expand_tool("net.thing.op3")
    assert out["error"]["code"] in ("UNAVAILABLE", "INTEGRITY")
    assert not list((tmp / "cache" / "objects").rglob(spec_name))
    server.compress = True  # a gzip stream cut short is caught the same way
    out = catalog.expand_tool("net.thing.op3")
    assert out["error"]["code"] in ("UNAVAILABLE", "INTEGRITY")
    assert not list((tmp / "cache" / "objects").rglob(spec_name))


def test_hanging_server_times_out_in_bounded_time(site):
    """A server that never answers costs at most (retries+1) * timeout plus backoff, then UNAVAILABLE."""
    server, tmp = site
    server.faults = {"catalog.json": "hang"}
    started = time.perf_counter()
    with pytest.raises(ReaderError) as info:
        Catalog.open(server.url, cache_dir=tmp / "cache", timeout=0.3, retries=1)
    elapsed = time.perf_counter() - started
    assert info.value.code == "UNAVAILABLE"
    assert elapsed < 2.5


def test_remote_python_handlers_need_host_consent(site):
    """A python handler named by a remote catalogue runs only for modules the host allowed."""
    server, tmp = site
    remote = Catalog.open(server.url, cache_dir=tmp / "cache")
    assert remote.tool_exec("local.echo", {})["error"]["code"] == "NOT_AUTHORIZED"
    allowed = Catalog.open(server.url, cache_dir=tmp / "cache", python_modules=["json"])
    assert allowed.tool_exec("local.echo", {"a": 1})["result"] == '{"a": 1}'


def test_unsupported_scheme_is_bad_request(tmp_path):
    """ftp:// and friends are refused at open."""
    with pytest.raises(ReaderError) as info:
        Catalog.open("ftp://example.com/build/", cache_dir=tmp_path)
    assert info.value.code == "BAD_REQUEST"


def test_cache_dir_defaults_to_env(site, monkeypatch):
    """Without cache_dir, files are cached under $TOOLCAT_CACHE_DIR, the variable the models' cache reads too."""
    server, tmp = site
    monkeypatch.delenv("TOOLCAT_CACHE", raising=False)
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp / "envcache"))
    Catalog.open(server.url).list()
    assert any((tmp / "envcache" / "objects").rglob("*"))
    shutil.rmtree(tmp / "envcache")


def test_old_cache_variable_still_works_with_a_warning(tmp_path, monkeypatch, caplog):
    """$TOOLCAT_CACHE, the deprecated name, is read when $TOOLCAT_CACHE_DIR is unset, and ignored when it is set."""
    from toolcat.reader.fetch.cache import default_cache_dir  # noqa: PLC0415

    monkeypatch.delenv("TOOLCAT_CACHE_DIR", raising=False)
    monkeypatch.setenv("TOOLCAT_CACHE", str(tmp_path / "old"))
    with caplog.at_level("WARNING", logger="toolcat.reader.fetch.cache"):
        assert default_cache_dir() == tmp_path / "old"
    assert "rename it to TOOLCAT_CACHE_DIR" in caplog.text
    caplog.clear()
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "new"))
    with caplog.at_level("WARNING", logger="toolcat.reader.fetch.cache"):
        assert default_cache_dir() == tmp_path / "new"
    assert "ignored" in caplog.text


@pytest.fixture
def sharded(tmp_path: Path, monkeypatch):
    """The example catalogue built with tiny index shards, so one search needs several term and doc shards."""
    import toolcat.build.contributors.index.shards  # noqa: PLC0415

    monkeypatch.setattr(toolcat.build.contributors.index.shards, "TERM_SHARD_BYTES", 3000)
    monkeypatch.setattr(toolcat.build.contributors.index.shards, "DOC_SHARD_SIZE", 4)
    build(REPO / "catalog_src", tmp_path / "build")
    server = StaticServer(tmp_path / "build")
    yield server, tmp_path
    server.close()


QUERY = "read the contents of a text file and upload it to a bucket"


def _cold_search(server: StaticServer, tmp: Path, cache: str, **options):
    catalog = Catalog.open(server.url, cache_dir=tmp / cache, **options)
    catalog.list()
    before = catalog.stats()
    out = catalog.find_tool(QUERY)
    after = catalog.stats()
    return out, {k: after[k] - before[k] for k in ("requests", "round_trips")}


def test_a_search_fetches_its_shards_together(sharded):
    """A cold search reads the meta, then all its term shards at once, then all its doc shards at once."""
    server, tmp = sharded
    out, cost = _cold_search(server, tmp, "cache-a")
    assert out["matches"], out
    assert cost["requests"] >= 6  # the meta, several term shards, several doc shards
    # each hit's one-line summary (issue 35) comes from its doc shard's pointer: no namespace shard is read
    assert all(m.get("summary") for m in out["matches"]), out
    assert cost["round_trips"] == 3
    one_by_one, sequential = _cold_search(server, tmp, "cache-b", max_parallel=1)
    assert one_by_one == out
    assert sequential == {"requests": cost["requests"], "round_trips": cost["requests"]}


def test_a_scoped_search_fetches_the_category_with_the_terms(sharded):
    """search_tool_by_category costs four rounds: the category's node shard, the index meta, the term shards.

    The category's index entry comes with the term shards, the doc shards in the last round; the node shard
    is read first so that an unknown path is UNKNOWN_PATH with suggestions from the node tree.
    """
    server, tmp = sharded
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    catalog.list()
    before = catalog.stats()
    out = catalog.search_tool_by_category("upload an object", "storage")
    assert out["ok"], out
    assert out["results"]
    cost = {k: catalog.stats()[k] - before[k] for k in ("requests", "round_trips")}
    assert cost["round_trips"] == 4
    assert cost["requests"] > 4


@pytest.mark.parametrize("fault", ["tamper", "500"])
def test_a_bad_shard_in_a_parallel_fetch_is_reported_then_retried(sharded, fault):
    """One bad file among those fetched together: the search answers its error envelope; the next search recovers."""
    server, tmp = sharded
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache", retries=0)
    catalog.list()
    searcher = catalog.store.searcher_required()
    part = searcher._part("tools")
    words = next(s for s in part.spaces if s["name"] == "words")
    ref = searcher._shard_ref(part, words, "text")  # a ref per shard, or one from its page (a paged space)
    server.faults = {ref["path"]: fault}
    searcher._cache.clear()
    out = catalog.find_tool(QUERY)
    assert out["ok"] is False
    assert out["error"]["code"] == ("INTEGRITY" if fault == "tamper" else "UNAVAILABLE")
    server.faults.clear()
    assert catalog.find_tool(QUERY)["matches"]


def test_list_with_a_query_reads_only_the_pages_pointers(sharded):
    """list(query=...) counts every hit but reads the doc shards of the page only."""
    server, tmp = sharded
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    catalog.list()
    server.reset()
    out = catalog.list("", query="file", limit=3)
    assert out["ok"], out
    assert len(out["tools"]) == 3
    doc_shards = [r for r in server.requests if r.startswith("index/tools.d")]
    assert 1 <= len(doc_shards) <= 3
    every_hit = catalog.store.searcher_required().rank_tools("file")  # the exhaustive ranking, to compare with
    assert out["total_tools"] == len(every_hit) > 3
    assert [t["tool_id"] for t in out["tools"]] == [h[0]["tool_id"] for h in every_hit[:3]]
    second = catalog.list("", query="file", limit=3, cursor=out["next_cursor"])
    assert [t["tool_id"] for t in second["tools"]] == [h[0]["tool_id"] for h in every_hit[3:6]]


def test_walking_the_node_tree_fetches_a_level_at_a_time(sharded):
    """list(tags=...) walks every node shard: over HTTP a level's shards come together, one round trip each."""
    server, tmp = sharded
    results = {}
    for parallel in (8, 1):
        catalog = Catalog.open(server.url, cache_dir=tmp / f"cache-{parallel}", max_parallel=parallel)
        catalog.list()
        before = catalog.stats()
        out = catalog.list("", tags=["read"], limit=50)
        assert out["ok"], out
        results[parallel] = (out["tools"], {k: catalog.stats()[k] - before[k] for k in ("requests", "round_trips")})
    (tools, cost), (tools_one_by_one, cost_one_by_one) = results[8], results[1]
    assert tools == tools_one_by_one
    assert tools
    assert cost["requests"] == cost_one_by_one["requests"] > 10
    assert cost_one_by_one["round_trips"] == cost_one_by_one["requests"]
    src = REPO / "catalog_src"
    depth = max(len(node.parent.relative_to(src).parts) for node in src.rglob("_node.yaml"))
    assert cost["round_trips"] <= depth  # one per level below the root (already read by list())


def test_group_help_reads_the_namespace_index_then_one_namespace_shard(site):
    """The manifest holds one ref to the namespace index; group help reads it and the group's shard only."""
    server, tmp = site
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    assert "namespace_shards" not in catalog.manifest
    assert isinstance(catalog.manifest["namespace_index"], dict)
    catalog.list()
    server.reset()
    out = catalog.tool_help("net.thing")
    assert out["ok"], out
    assert "net.thing.op3" in str(out)
    # "net.thing" is first looked up as an operation name (one lookup bucket), then read as a group;
    # the group's summary is its category node's (node shards, read after the namespace shard)
    kinds = [r.split("/")[0] for r in server.requests]
    assert kinds[:3] == ["lookup", "namespaces", "namespaces"]
    assert set(kinds[3:]) <= {"nodes"}
    assert server.requests[1].startswith("namespaces/_index.")
    assert server.requests[2].startswith("namespaces/net.")


def test_a_build_with_inline_namespace_shards_still_reads(tmp_path):
    """Builds from before namespace_index kept the namespace refs in the manifest: the reader accepts both."""
    import json  # noqa: PLC0415

    out = tmp_path / "build"
    build(write_tree(tmp_path / "src", _source()), out)
    entry = json.loads((out / "catalog.json").read_text())
    manifest = json.loads((out / entry["manifest"]["path"]).read_text())
    index = json.loads((out / manifest.pop("namespace_index")["path"]).read_text())
    manifest["namespace_shards"] = index["namespaces"]
    data = json.dumps(manifest, sort_keys=True).encode()
    digest = hashlib.sha256(data).hexdigest()
    (out / f"manifests/manifest.{digest[:16]}.json").write_bytes(data)
    entry["manifest"] = {"path": f"manifests/manifest.{digest[:16]}.json", "sha256": digest, "bytes": len(data)}
    (out / "catalog.json").write_text(json.dumps(entry))
    catalog = Catalog.open(out)
    assert "namespace_index" not in catalog.manifest
    out_help = catalog.tool_help("net.thing")
    assert out_help["ok"], out_help
    assert "net.thing.op3" in str(out_help)
    assert catalog.tool_list(namespace="net")["ok"]


@pytest.fixture(scope="module")
def sharded_server(tmp_path_factory: pytest.TempPathFactory):
    """A module-wide server of the small-sharded example build (for the property test below)."""
    import toolcat.build.contributors.index.shards  # noqa: PLC0415

    tmp = tmp_path_factory.mktemp("sharded")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(toolcat.build.contributors.index.shards, "TERM_SHARD_BYTES", 3000)
        patch.setattr(toolcat.build.contributors.index.shards, "DOC_SHARD_SIZE", 4)
        build(REPO / "catalog_src", tmp / "build")
    server = StaticServer(tmp / "build")
    server.compress = True
    yield server, tmp
    server.close()


_TEXT = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyz .,_-3éÆ/"), max_size=40)


@given(
    query=_TEXT,
    path=st.sampled_from(["", "storage", "file", "nope", "storage/objects", "a/b/c"]),
    limit=st.one_of(st.integers(-2, 60), st.none()),
)
@settings(max_examples=60, deadline=None)
def test_searches_over_http_always_answer_an_envelope(sharded_server, query, path, limit):
    """Whatever the query, category or limit, the parallel-fetching searches answer a dict, never raise."""
    server, tmp = sharded_server
    catalog = Catalog.open(server.url, cache_dir=tmp / "cache")
    answers = [
        catalog.find_tool(query, limit=limit) if limit is not None else catalog.find_tool(query),
        catalog.search_nodes(query),
        catalog.search_tool_by_category(query, path),
        catalog.list(path, query=query),
    ]
    for out in answers:
        assert isinstance(out, dict)
        assert "ok" in out
        if not out["ok"]:
            assert out["error"]["code"] in {"BAD_REQUEST", "UNKNOWN_PATH", "NO_MATCH_IN_CATEGORY", "VALIDATION_ERROR"}


def test_cli_search_reads_a_published_build(site):
    """`toolcat search --url` ranks the tools of a build served over HTTP; a dead URL exits 1 with UNAVAILABLE."""
    from click.testing import CliRunner  # noqa: PLC0415

    from toolcat.cli import main  # noqa: PLC0415

    server, tmp = site
    runner = CliRunner()
    out = runner.invoke(
        main, ["search", "operate on things", "--url", server.url, "--cache-dir", str(tmp / "c"), "--limit", "2"]
    )
    assert out.exit_code == 0, out.output
    assert len(out.output.splitlines()) == 2
    assert out.output.split()[2].startswith("net.thing.op")
    out = runner.invoke(main, ["search", "things", "--url", server.url + "missing/", "--cache-dir", str(tmp / "c")])
    assert out.exit_code == 1
    assert "UNAVAILABLE" in out.output
