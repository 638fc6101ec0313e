"""``Catalog.stats()["search_tier"]`` is known from the moment a catalogue is open, read from its manifest."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog
from toolcat.reader.catalog import manifest_tier


def test_a_lexical_build_says_lexical_at_open_without_a_request(example_build: Path) -> None:
    """A build without vectors says 'lexical: … no vectors' before any search, and asking costs no request."""
    catalog = Catalog.open(example_build)
    before = catalog.stats()
    assert before["search_tier"].startswith("lexical: this build has no vectors")
    assert catalog.stats()["requests"] == before["requests"]
    assert catalog.find_tool("convert a time")["ok"]
    assert catalog.stats()["search_tier"].startswith("lexical: this build has no vectors")  # the same after


def test_a_build_with_vectors_says_hybrid_then_names_its_model(default_tier_build: Path) -> None:
    """With vectors the tier is 'hybrid (pending …)' at open, and 'hybrid (<model>)' once a search loaded it."""
    catalog = Catalog.open(default_tier_build)
    assert catalog.stats()["search_tier"].startswith("hybrid (pending")
    assert catalog.find_tool("convert a time between zones")["ok"]
    assert catalog.stats()["search_tier"] == "hybrid (minilm-tools)"


def test_the_manifest_tier_covers_no_index_and_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """No index is 'none: …'; TOOLCAT_SEMANTIC=0 is 'lexical: turned off' even with vectors."""
    ref = {"path": "x.json", "sha256": "0" * 64, "bytes": 1}
    assert manifest_tier({}).startswith("none: this build has no search index")
    assert manifest_tier({"index": ref, "vectors": ref}).startswith("hybrid (pending")
    monkeypatch.setenv("TOOLCAT_SEMANTIC", "0")
    assert manifest_tier({"index": ref, "vectors": ref}) == "lexical: turned off (TOOLCAT_SEMANTIC=0)"
