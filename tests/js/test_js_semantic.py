"""The TypeScript reader's semantic tier: its tokenizer, its model contract and what it says when it cannot answer.

The answers themselves are compared with the Python reader's in ``test_js_search_parity.py`` (the default build, in
Node and in Chromium). Here: the WordPiece port gives the Python tokenizer's ids for every kind of text; the learned
fusion's weights the chunk carries are the Python reader's; ``toolcat build --publish-model`` writes the same bytes
twice and a model.json whose hashes hold; and a reader given no model, another model or a tampered one answers by
words and says why (``stats().search_tier``), never with another model's vectors.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from support import EXAMPLE_SRC, REPO, serve_folder
from test_js_search_parity import NODE, node_run

from toolcat.build.published_model import MODEL_FORMAT, publish_build_model

JS = REPO / "js"

pytestmark = pytest.mark.slow


def _require_node() -> None:
    if NODE is None or not (JS / "dist" / "wordpiece.js").is_file():
        pytest.skip("node or js/dist is absent: `make js` installs node and builds js/ (npm ci && npm run build)")


#: Texts that exercise each step of BERT's normaliser and pre-tokenizer, and WordPiece's limits.
TRICKY = [
    "upload a report to a bucket",
    "Déjà vu: café NAÏVE façade — Ångström, Œuvre, straße",
    "server: github / tool: create issue",
    "Hello, world!!! 🙂 s3 v2 (beta) [x] {y} <z> a_b-c.d/e\\f",
    "東京の天気 weather 中文 한국어 日本語テキスト",
    "tab\there\nnew line\r\x0bvertical\x0cform\x1cfile\x1dgroup\x85next\u00a0nbsp\u2003em\u3000ideographic",
    "zero\u200bwidth\u200djoiner\ufeffbom\x00nul\ufffdreplacement\x07bell",
    "İstanbul ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ ﬁnance \uff26\uff35\uff2c\uff2c\uff37\uff29\uff24\uff34\uff28 ǅungla",
    "a" * 99,
    "b" * 100,
    "c" * 101,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    " ".join(["word"] * 400),
    "¿Qué? ¡Sí! «quoted» „low“ \u2018single\u2019 … · • ¶ § © ® ™ ° ± \u00d7 ÷",
    "e\u0301 o\u0308 n\u0303 combining marks, and Ⅻ roman, ½ ⅓ fractions, ² ³ superscripts",
    "",
    "   ",
    "x" * 300,
    "emoji 👩‍👩‍👧‍👦 flags 🇫🇷 keycap 1️⃣ skin 👍🏽",
    "arabic مرحبا hebrew שלום thai สวัสดี devanagari नमस्ते",
]


def _queries() -> list[str]:
    """The example catalogue's labelled queries, then :data:`TRICKY`."""
    out = []
    for path in sorted((EXAMPLE_SRC / "evals").glob("*.yaml")):
        out += [str(item["query"]) for item in yaml.safe_load(path.read_text(encoding="utf-8"))["queries"]]
    return out + TRICKY


def test_the_wordpiece_port_gives_the_python_token_ids() -> None:
    """js/src/wordpiece.ts gives the ids of the Python reader's tokenizer for every text, accents and scripts included."""
    _require_node()
    from toolcat.engines.onnx_encoder import (  # noqa: PLC0415 - the default tier
        EncoderError,
        WordPieceTokenizer,
        bundled_model_dir,
    )

    try:
        folder = bundled_model_dir()
    except EncoderError as err:
        pytest.skip(f"the MiniLM model is not installed ({err})")
    tokenizer = WordPieceTokenizer.from_folder(folder, max_length=256)
    vocab = tokenizer.vocab
    lines = "\n".join(sorted(vocab, key=vocab.__getitem__))
    texts = _queries()
    script = (
        'import { WordPiece } from "./dist/wordpiece.js";'
        'let s = ""; process.stdin.on("data", (c) => (s += c)); process.stdin.on("end", () => {'
        " const { vocab, texts } = JSON.parse(s); const w = WordPiece.fromLines(vocab, 256);"
        " process.stdout.write(JSON.stringify(texts.map((t) => w.encode(t)))); });"
    )
    done = subprocess.run(
        [str(NODE), "--input-type=module", "-e", script],
        input=json.dumps({"vocab": lines, "texts": texts}),
        capture_output=True,
        text=True,
        cwd=JS,
        timeout=120,
        check=True,
    )
    got = json.loads(done.stdout)
    want = [tokenizer.encode(text) for text in texts]
    wrong = [(text[:60], a[:12], b[:12]) for text, a, b in zip(texts, want, got, strict=True) if a != b]
    assert not wrong, wrong[:5]
    assert len(texts) > 30
    assert any(tokenizer.unk_id in ids for ids in want)  # the texts reach [UNK] too
    assert max(len(ids) for ids in want) == 256  # and the truncation


def test_the_chunk_carries_the_python_readers_fusion_weights() -> None:
    """js/src/fusionWeights.ts holds fusion_weights.json, fusionDefault.ts its lexical default (`npm run build` writes them)."""
    text = (JS / "src" / "fusionWeights.ts").read_text(encoding="utf-8")
    found = re.search(r"export const WEIGHTS: unknown = (\{.*\});\n", text, re.DOTALL)
    assert found is not None
    python = REPO / "compiler" / "reader" / "search" / "fusion_weights.json"
    weights = json.loads(python.read_text(encoding="utf-8"))
    assert json.loads(found.group(1)) == weights
    # written from the very bytes the Python reader reads (a reformatted or edited file shows here too)
    digest = hashlib.sha256(python.read_bytes()).hexdigest()
    assert f'export const WEIGHTS_SHA256 = "{digest}";' in text, (
        "js/: run `npm run build` (or `npm run fusion-weights`)"
    )
    # the main entry's flag for the learned lexical fusion says what the weights file says (fusion_model.model_for)
    flag = (JS / "src" / "fusionDefault.ts").read_text(encoding="utf-8")
    default = weights["models"].get("lexical", {}).get("default", True) is True
    assert f"export const LEXICAL_LEARNED: boolean = {str(default).lower()};" in flag


@pytest.fixture(scope="module")
def site(default_tier_build: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the default build with its model published beside it (``model/``), by the command a user runs."""
    from toolcat.cli import main  # noqa: PLC0415 - the CLI, as a user calls it

    out = tmp_path_factory.mktemp("semantic-site") / "build"
    shutil.copytree(default_tier_build, out)
    saved = os.environ.get("TOOLCAT_CACHE_DIR"), os.environ.pop("TOOLCAT_EMBEDDER", None)  # the suite builds lexically
    os.environ["TOOLCAT_CACHE_DIR"] = str(default_tier_build.parent / "cache")  # the build's own model cache
    try:
        first = publish_build_model(out, out / "model")
        files = {p.name: p.read_bytes() for p in (out / "model").iterdir()}
        result = CliRunner().invoke(
            main, ["build", str(EXAMPLE_SRC), "--out", str(out), "--publish-model", str(out / "model")]
        )
    finally:
        for name, value in zip(("TOOLCAT_CACHE_DIR", "TOOLCAT_EMBEDDER"), saved, strict=True):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    assert result.exit_code == 0, result.output
    assert {p.name: p.read_bytes() for p in (out / "model").iterdir()} == files  # published twice: the same bytes
    assert first["format"] == MODEL_FORMAT
    return out


def test_the_published_model_lists_its_files_by_hash(site: Path) -> None:
    """model.json names the build's embedder and weights, and each file it lists has its sha256 and size."""
    info = json.loads((site / "model" / "model.json").read_text(encoding="utf-8"))
    entry = json.loads((site / "catalog.json").read_text(encoding="utf-8"))
    manifest = json.loads((site / entry["manifest"]["path"]).read_text(encoding="utf-8"))
    model = json.loads((site / manifest["vectors"]["path"]).read_text(encoding="utf-8"))["model"]
    assert (info["spec"], info["weights_sha256"], info["dim"]) == (model["spec"], model["weights_sha256"], model["dim"])
    for key in ("graph", "vocab"):
        data = (site / "model" / info[key]["path"]).read_bytes()
        assert (hashlib.sha256(data).hexdigest(), len(data)) == (info[key]["sha256"], info[key]["bytes"])


def test_publishing_a_lexical_build_says_there_is_no_model(example_build: Path, tmp_path: Path) -> None:
    """--publish-model on a build without vectors is a clear error naming the way out, not an empty folder."""
    from toolcat.engines.embedding import EmbedderError  # noqa: PLC0415 - the error the command reports

    with pytest.raises(EmbedderError, match="has no vectors") as caught:
        publish_build_model(example_build, tmp_path / "model")
    assert "--publish-model" in caught.value.hint
    assert not (tmp_path / "model").exists()


def test_publishing_other_weights_than_the_build_writes_nothing(tmp_path: Path) -> None:
    """A build whose vectors name other weights than the installed model's is refused before any file is written."""
    pytest.importorskip("onnxruntime")
    from toolcat.build.published_model import publish_model  # noqa: PLC0415 - the function the command calls
    from toolcat.engines.embedding import EmbedderError  # noqa: PLC0415 - the error the command reports

    with pytest.raises(EmbedderError, match="other weights") as caught:
        publish_model(tmp_path / "model", weights_sha256="0" * 64)
    assert "rebuild" in caught.value.hint
    assert not (tmp_path / "model").exists()


def _tier(site: Path, options: dict[str, Any] | None) -> tuple[str, Any]:
    with serve_folder(site) as url:
        got = node_run(url, [["findTool", "upload a report to a bucket", 5]], options)
    return str(got["stats"]["search_tier"]), got["answers"][0]


def test_without_a_model_the_reader_answers_by_words_and_says_so(site: Path) -> None:
    """No model option: the build's vectors are not used, and stats says how to give the reader one."""
    _require_node()
    tier, answer = _tier(site, None)
    assert tier.startswith("lexical: the build has vectors, but the reader was given no embedding model"), tier
    tier, _ = _tier(site, {"model": {"sha256": "sha256:" + "0" * 64}})  # a model option without its url
    assert "the model option names no url" in tier, tier
    assert answer["matches"]
    assert all("semantic" not in m.get("reason", "") for m in answer["matches"])


def test_a_tampered_or_foreign_model_is_refused(site: Path, tmp_path: Path) -> None:
    """A graph whose bytes changed, or a model.json naming other weights, or a wrong pin: answered by words, with why."""
    _require_node()
    bad = tmp_path / "site"
    shutil.copytree(site, bad, ignore=shutil.ignore_patterns("*.onnx"))
    info = json.loads((site / "model" / "model.json").read_text(encoding="utf-8"))
    graph = bytearray((site / "model" / info["graph"]["path"]).read_bytes())
    graph[-1] ^= 1
    (bad / "model" / info["graph"]["path"]).write_bytes(bytes(graph))
    tier, answer = _tier(bad, {"model": {"url": "model/model.json"}})
    assert tier.startswith("lexical: the build has vectors, but the model could not be loaded"), tier
    assert "sha256" in tier
    assert info["graph"]["path"] in tier
    assert answer["matches"]
    (bad / "model" / "model.json").write_text(json.dumps({**info, "weights_sha256": "0" * 64}), encoding="utf-8")
    tier, _ = _tier(bad, {"model": {"url": "model/model.json"}})
    assert "the build's vectors were made with minilm-tools" in tier, tier
    outside = {**info, "graph": {**info["graph"], "path": "../catalog.json"}}  # a file outside the model's folder
    (bad / "model" / "model.json").write_text(json.dumps(outside), encoding="utf-8")
    tier, _ = _tier(bad, {"model": {"url": "model/model.json"}})
    assert "lists a file that is not a name in its folder" in tier, tier
    small = {**info, "vocab": {**info["vocab"], "bytes": 10}}  # a host sending more than model.json promises
    (bad / "model" / "model.json").write_text(json.dumps(small), encoding="utf-8")
    tier, _ = _tier(bad, {"model": {"url": "model/model.json"}})
    assert "holds more than the 10 bytes it may" in tier, tier
    tier, _ = _tier(site, {"model": {"url": "model/model.json", "sha256": "sha256:" + "1" * 64}})
    assert "could not be loaded" in tier, tier
    assert "model.json has sha256" in tier, tier


def test_the_model_option_gives_the_semantic_tier(site: Path) -> None:
    """With the published model the reader answers with the semantic tier (a hit's reason says so)."""
    _require_node()
    digest = hashlib.sha256((site / "model" / "model.json").read_bytes()).hexdigest()
    tier, answer = _tier(site, {"model": {"url": "model/model.json", "sha256": f"sha256:{digest}"}})
    assert tier == "hybrid (minilm-tools; onnxruntime-node)", tier
    assert answer["matches"][0]["name"] == "storage.put_object"
    assert "similar meaning (semantic tier)" in answer["matches"][0]["reason"]


def test_a_cold_find_tool_makes_the_python_requests_with_the_semantic_tier(site: Path, tmp_path: Path) -> None:
    """Cold, per query, on the default build over HTTP: the Python reader's round trips, requests and bytes.

    (The vectors meta comes with the index meta, the vector shards with the term shards; the model is not counted:
    it is no catalogue file.)
    """
    _require_node()
    from toolcat import Catalog  # noqa: PLC0415 - the Python reader, side by side

    with serve_folder(site) as url:
        for i, query in enumerate(
            ["upload a report to a bucket", "send an email with an attachment", "list open issues"]
        ):
            catalog = Catalog.open(url, cache_dir=tmp_path / f"cache{i}")
            catalog.find_tool(query, 5)
            py = catalog.stats()
            js = node_run(url, [["findTool", query, 5]], {"model": {"url": "model/model.json"}})["stats"]
            assert js["search_tier"] == "hybrid (minilm-tools; onnxruntime-node)", js
            for key in ("round_trips", "requests", "bytes_decoded"):
                assert js[key] == py[key], (query, key, py, js)


@contextlib.contextmanager
def _faulty_host(site: Path) -> Iterator[tuple[str, list[str]]]:
    """``site`` on 127.0.0.1 with model folders that fail; yields the base URL and the paths asked for (each attempt).

    ``hang/`` never answers, ``fail503/`` and ``fail404/`` answer that status, ``stall/`` serves model.json and the
    vocabulary but stops sending the graph after its first bytes.
    """
    seen: list[str] = []
    release = threading.Event()

    class Handler(SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's signature
            """Say nothing."""

        def do_GET(self) -> None:
            """Fail as the path's folder says; serve the site otherwise."""
            seen.append(self.path)
            folder, _, name = self.path.lstrip("/").partition("/")
            if folder == "hang":
                release.wait(30)
                return
            if folder in ("fail503", "fail404"):
                self.send_error(int(folder[4:]))
                return
            if folder == "stall":
                data = (site / "model" / name).read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if name.endswith(".onnx"):  # the first bytes, then nothing
                    self.wfile.write(data[:4096])
                    self.wfile.flush()
                    release.wait(30)
                    return
                self.wfile.write(data)
                return
            super().do_GET()

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Handler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", seen
    finally:
        release.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def test_a_hung_or_failing_model_host_is_answered_by_words_with_why(site: Path) -> None:
    """A model host that hangs, stalls mid-graph or fails: the catalogue's timeout and retries, then words and the reason."""
    _require_node()
    options = {"timeout": 0.5, "retries": 1}  # the catalogue's policy, which the model's files follow too
    cases = {
        "hang": ("model.json could not be read in 2 attempts", "timed out", 2),
        "stall": (".onnx could not be read in 2 attempts", "timed out", 2),
        "fail503": ("model.json could not be read in 2 attempts", "HTTP 503", 2),
        "fail404": ("model.json answered HTTP 404", "", 1),  # not retried: another attempt would not mend it
    }
    with _faulty_host(site) as (url, seen):
        for folder, (says, why, attempts) in cases.items():
            seen.clear()
            got = node_run(
                url,
                [["findTool", "upload a report to a bucket", 5]],
                {**options, "model": {"url": f"{folder}/model.json"}},
            )
            tier, answer = str(got["stats"]["search_tier"]), got["answers"][0]
            assert tier.startswith("lexical: the build has vectors, but the model could not be loaded"), (folder, tier)
            assert says in tier, (folder, tier)
            assert why in tier, (folder, tier)
            failing = "model.json" if folder != "stall" else ".onnx"
            assert sum(path.startswith(f"/{folder}/") and path.endswith(failing) for path in seen) == attempts, seen
            assert answer["matches"], answer  # answered by words
        got = node_run(
            url, [["findTool", "upload a report to a bucket", 5]], {**options, "model": {"url": "model/model.json"}}
        )
        assert got["stats"]["search_tier"] == "hybrid (minilm-tools; onnxruntime-node)", got["stats"]  # a healthy host
