"""The learned fusion in TypeScript (js/src/fusionModel.ts) answers as the Python reader's (``fusion_model``).

With the learned fusion on (Python ``TOOLCAT_LEARNED_FUSION=all``, the TypeScript reader's
``model: {learnedFusion: "all"}``), both readers answer ``find_tool``, ``search_nodes`` and category searches the same
(top-5 ids, relevance within 1e-6, weak flags, hints) on the example catalogue built with ``--embedder minilm-tools``
(its model reads ``coverage_idf``) and with the default embedder (``minilm-onnx``), each model published beside it,
in Node on onnxruntime-node; and the weak rule (each model's own bar) says weak for the same requests.
docs/search.md, "The learned fusion in TypeScript" (its figures: ``TOOLCAT_PARITY_FIGURES=1``, ``-s``).
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from support import serve_folder
from test_js_search_parity import (
    MODEL_DIR,
    NODE,
    RUNNER,
    TOLERANCE,
    _example,
    _manifest,
    _require_node,
    assert_agree,
    figures,
    generated_queries,
    node_run,
    python_answers,
    report,
    search_calls,
)

from toolcat import Catalog
from toolcat.build import build
from toolcat.build.contributors import vectors
from toolcat.build.published_model import publish_build_model

pytestmark = pytest.mark.slow

#: The builds compared: the stacked candidate for the next default, and today's default; "-partitioned": its vectors
#: partitioned into clusters as a catalogue of over 2,000 tools has them (the probed clusters' semantic top).
EMBEDDERS = ("minilm-tools", "minilm-onnx", "minilm-tools-partitioned")
#: Requests the weak rule is checked on: the one the learned models do not call weak, and made-up words; then two the
#: idf-weighted share decides (docs/search.md, "The weak rule weighs words by idf"): one unknown word beside a rare
#: known one (half the words by count, 0.53 of the idf: weak by count) and two made-up words beside three common ones
#: (2 of 5 by count, 0.59 of the idf).
WEAK_QUERIES = ("zip the reports", "xyzzy plugh frobnicate", "encrypt the backups", "xyzzy plugh file report folder")
PARTITIONED = "-partitioned"
LEARNED = {"model": {"url": f"{MODEL_DIR}/model.json", "learnedFusion": "all"}}
HAND = {"model": {"url": f"{MODEL_DIR}/model.json", "learnedFusion": "off"}}


@pytest.fixture(scope="module")
def builds_root(tmp_path_factory: pytest.TempPathFactory) -> str:
    """One folder for every build of this module."""
    return str(tmp_path_factory.mktemp("js_learned_fusion"))


@functools.cache
def _built(embedder: str, root: str) -> tuple[Path, list[str]]:
    """The example catalogue built with ``embedder``, its model published beside it; its labelled queries."""
    base = Path(root) / embedder
    queries = _example(base / "src")
    if embedder == "none":  # the lexical tier: no vectors, no model
        build(base / "src", base / "build", embedder=embedder)
        return base / "build", queries
    saved = {key: os.environ.pop(key, None) for key in ("TOOLCAT_EMBEDDER", "TOOLCAT_CACHE_DIR")}
    os.environ["TOOLCAT_CACHE_DIR"] = os.environ.get("TOOLCAT_TEST_VECTOR_CACHE") or str(Path(root) / "cache")
    saved_min = vectors.PARTITION_MIN
    try:
        if embedder.endswith(PARTITIONED):
            vectors.PARTITION_MIN = 0
        build(base / "src", base / "build", embedder=embedder.removesuffix(PARTITIONED))
        publish_build_model(base / "build", base / "build" / MODEL_DIR)
    finally:
        vectors.PARTITION_MIN = saved_min
        os.environ.pop("TOOLCAT_CACHE_DIR", None)
        for key, value in saved.items():
            if value is not None:
                os.environ[key] = value
    return base / "build", queries


def _python(build_dir: Path, calls: list[list[Any]], learned: bool, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The Python reader's answers with the learned fusion on (``TOOLCAT_LEARNED_FUSION=all``) or off (``0``: by hand)."""
    with monkeypatch.context() as patch:
        patch.setenv("TOOLCAT_LEARNED_FUSION", "all" if learned else "0")
        return python_answers(build_dir, calls)


@pytest.mark.parametrize("embedder", EMBEDDERS)
def test_node_gives_the_python_answers_with_the_learned_fusion(
    embedder: str, builds_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the learned fusion on, every search answer in Node equals Python's: top 5, relevance within 1e-6, flags."""
    _require_node()
    build_dir, labelled = _built(embedder, builds_root)
    queries = [*labelled, *WEAK_QUERIES, *generated_queries(build_dir, 150, f"learned-{embedder}")]
    calls = search_calls(build_dir, queries, embedder)
    py = _python(build_dir, calls, True, monkeypatch)
    raw_calls = [["$ranked", "tools", q, None, 10] for q in dict.fromkeys(queries)]
    with serve_folder(build_dir) as url:
        got = node_run(url, calls + raw_calls, LEARNED)
    js, raw_js = got["answers"][: len(calls)], got["answers"][len(calls) :]
    spec = embedder.removesuffix(PARTITIONED)
    assert got["stats"]["search_tier"] == f"hybrid ({spec}; onnxruntime-node)", got["stats"]
    meta = json.loads((build_dir / _manifest(build_dir)["vectors"]["path"]).read_text(encoding="utf-8"))
    assert ("partition" in meta["tools"]) == embedder.endswith(PARTITIONED)
    table = figures(calls, py, js)
    report(f"node learned {embedder}", table)
    assert_agree(calls, py, js)
    # the unrounded learned relevances of the tools' top 10 too
    with monkeypatch.context() as patch:
        patch.setenv("TOOLCAT_LEARNED_FUSION", "all")
        searcher = Catalog.open(str(build_dir)).searcher()
        assert searcher._tools_model() is not None  # the learned model ranks this build in Python
        raw_py = [[list(hit) for hit in searcher._ranked("tools", q, None, 10)] for _, _, q, _, _ in raw_calls]
    assert [[h[0] for h in r] for r in raw_py] == [[h[0] for h in r] for r in raw_js]
    gap = max(
        (abs(a[1] - b[1]) for x, y in zip(raw_py, raw_js, strict=True) for a, b in zip(x, y, strict=True)), default=0.0
    )
    if os.environ.get("TOOLCAT_PARITY_FIGURES"):
        print(f"PARITY node learned {embedder} raw top-10: {len(raw_calls)} compared, same ids, max gap {gap:.2e}")
    assert gap <= TOLERANCE
    # the learned fusion did rank: the hand fusion's top relevances are on another scale
    with monkeypatch.context() as patch:  # minilm-tools' model ranks by default: the hand fusion is asked for
        patch.setenv("TOOLCAT_LEARNED_FUSION", "0")
        hand = Catalog.open(str(build_dir)).searcher()
        firsts = [hand._ranked("tools", q, None, 1)[:1] for _, _, q, _, _ in raw_calls[:20]]
    assert any(abs(h[0][1] - r[0][1]) > 1e-3 for h, r in zip(firsts, raw_py, strict=False) if h and r)


@pytest.mark.parametrize("embedder", EMBEDDERS)
def test_node_calls_weak_what_python_calls_weak(
    embedder: str, builds_root: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """find_tool's weak rule with each fusion's own bar: Node says weak exactly when Python does, learned or by hand."""
    _require_node()
    build_dir, _ = _built(embedder, builds_root)
    calls = [["findTool", query, 5] for query in WEAK_QUERIES]
    flags = {}
    for learned, options in ((True, LEARNED), (False, HAND)):
        py = _python(build_dir, calls, learned, monkeypatch)
        with serve_folder(build_dir) as url:
            js = node_run(url, calls, options)["answers"]
        assert [a.get("weak", False) for a in js] == [a.get("weak", False) for a in py], (learned, py, js)
        assert_agree(calls, py, js)
        flags[learned] = [a.get("weak", False) for a in py]
    assert flags[False][:2] == [True, True]  # by hand both are weak
    # learned: the minilm-tools model's bar rises for short queries (weak_per_word), so "zip the reports" is weak; the
    # minilm-onnx model's one bar leaves it unflagged (docs/search.md, "Stacked"); made-up words are weak under both
    assert flags[True][:2] == [embedder.startswith("minilm-tools"), True]
    if embedder == "minilm-tools":  # weighed by idf, "backups" makes it no weak answer (by count it was weak in both)
        assert [flags[True][2], flags[False][2]] == [False, False]


def test_the_learned_fusion_is_off_when_the_host_says_so(builds_root: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """``learnedFusion: "off"`` answers as Python with ``TOOLCAT_LEARNED_FUSION=0``: the hand fusion."""
    _require_node()
    build_dir, labelled = _built("minilm-tools", builds_root)
    calls = [["findTool", query, 5] for query in [*labelled[:20], *WEAK_QUERIES]]
    with monkeypatch.context() as patch:
        patch.setenv("TOOLCAT_LEARNED_FUSION", "0")
        py = python_answers(build_dir, calls)
    with serve_folder(build_dir) as url:
        js = node_run(url, calls, {"model": {**LEARNED["model"], "learnedFusion": "off"}})["answers"]
    assert_agree(calls, py, js)
    assert json.dumps(py) != json.dumps(_python(build_dir, calls, True, monkeypatch))  # the switch changes answers


#: A Node module hook standing in for a weights file whose lexical model is the default (``fusionDefault.ts``'s flag
#: true): the main entry drops the lexical model's call while the weights keep it opt-in.
_HOOKS = """export async function load(url, context, next) {
  if (url.endsWith("/fusionDefault.js")) return { format: "module", source: "export const LEXICAL_LEARNED = true;", shortCircuit: true };
  return next(url, context);
}
"""


def test_node_gives_the_python_answers_with_the_learned_lexical_model(
    builds_root: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A build without vectors, the lexical model on in both readers: the same answers, raw top 10 within 1e-6."""
    _require_node()
    build_dir, labelled = _built("none", builds_root)
    queries = [*labelled, *WEAK_QUERIES, *generated_queries(build_dir, 150, "learned-lexical")]
    calls = search_calls(build_dir, queries, "lexical")
    raw_calls = [["$ranked", "tools", q, None, 10] for q in dict.fromkeys(queries)]
    py = _python(build_dir, calls, True, monkeypatch)
    assert json.dumps(py) != json.dumps(_python(build_dir, calls, False, monkeypatch))  # the model changes answers
    (tmp_path / "hooks.mjs").write_text(_HOOKS, encoding="utf-8")
    register = 'import { register } from "node:module"; register(new URL("./hooks.mjs", import.meta.url));\n'
    (tmp_path / "register.mjs").write_text(register, encoding="utf-8")
    options = {"model": {"url": "no-model.json", "learnedFusion": "all"}}
    with serve_folder(build_dir) as url:
        payload = json.dumps({"url": url, "calls": calls + raw_calls, "options": options})
        done = subprocess.run(
            [str(NODE), "--import", str(tmp_path / "register.mjs"), str(RUNNER)],
            input=payload,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    js, raw_js = got["answers"][: len(calls)], got["answers"][len(calls) :]
    assert got["stats"]["search_tier"] == "lexical: the build has no vectors", got["stats"]
    report("node learned lexical", figures(calls, py, js))
    assert_agree(calls, py, js)
    with monkeypatch.context() as patch:
        patch.setenv("TOOLCAT_LEARNED_FUSION", "all")
        searcher = Catalog.open(str(build_dir)).searcher()
        assert searcher._tools_model() is not None
        raw_py = [[list(hit) for hit in searcher._ranked("tools", q, None, 10)] for _, _, q, _, _ in raw_calls]
    assert [[h[0] for h in r] for r in raw_py] == [[h[0] for h in r] for r in raw_js]
    gap = max(
        (abs(a[1] - b[1]) for x, y in zip(raw_py, raw_js, strict=True) for a, b in zip(x, y, strict=True)), default=0.0
    )
    if os.environ.get("TOOLCAT_PARITY_FIGURES"):
        print(f"PARITY node learned lexical raw top-10: {len(raw_calls)} compared, same ids, max gap {gap:.2e}")
    assert gap <= TOLERANCE
