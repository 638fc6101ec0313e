"""The example catalogue covers the seeds' operations, with schemas its examples satisfy and working handlers."""

from __future__ import annotations

from pathlib import Path

import jsonschema
import pytest
from support import EXAMPLE_SRC

from toolcat.build import compile_catalog
from toolcat.examples.onto_store import reset_store
from toolcat.reader import Catalog

#: The operations seed 001 (the gateway spec) names that the catalogue lacked; 000's rename_symbol.
SEED_001_OPS = [
    "onto.goal.list",
    "onto.search",
    "util.web.visit",
    "util.schema.field_info",
    "cal.project.get",
    "onto.document.list",
    "onto.edge.link",
    "util.buildos.overview",
]
#: Those of them with a reference handler over the in-memory store (util.web.visit is an http tool).
STORE_OPS = [op for op in SEED_001_OPS if op != "util.web.visit"]


@pytest.fixture
def fresh_store() -> None:
    """The demo data, as it is on import (handlers change it)."""
    reset_store(seed=True)
    yield
    reset_store(seed=True)


@pytest.mark.parametrize("op", SEED_001_OPS)
def test_seed_operations_exist_with_schemas_and_examples(example_build: Path, op: str) -> None:
    """Each operation 001 walks through is in the catalogue, and every example of it satisfies its args schema."""
    spec = Catalog.open(example_build).expand_tool(op)
    assert spec.get("ok", True), spec
    assert spec["args_schema"]["properties"]
    assert spec["examples"]
    for example in spec["examples"]:
        jsonschema.validate(example["args"], spec["args_schema"])


@pytest.mark.usefixtures("fresh_store")
@pytest.mark.parametrize("op", STORE_OPS)
def test_reference_handlers_answer_every_example(example_build: Path, op: str) -> None:
    """Running each example through tool_exec gives an ok envelope whose result matches the result schema."""
    cat = Catalog.open(example_build)
    spec = cat.expand_tool(op)
    for example in spec["examples"]:
        answer = cat.tool_exec(op, example["args"])
        assert answer["ok"], answer
        jsonschema.validate(answer["result"], spec["result_schema"])


@pytest.mark.usefixtures("fresh_store")
def test_edge_link_is_idempotent_and_refuses_unknown_ids(example_build: Path) -> None:
    """Linking the same pair twice returns the first edge; an unknown id is an error envelope, not a traceback."""
    cat = Catalog.open(example_build)
    args = {"source_id": "T-0002", "target_id": "G-0002", "relation": "supports"}
    first = cat.tool_exec("onto.edge.link", args)["result"]
    again = cat.tool_exec("onto.edge.link", args)["result"]
    assert first["created"] is True
    assert again == {"edge": first["edge"], "created": False}
    missing = cat.tool_exec("onto.edge.link", {**args, "target_id": "G-9999"})
    assert missing["ok"] is False
    assert "G-9999" in missing["error"]["message"]


@pytest.mark.usefixtures("fresh_store")
def test_onto_search_ranks_across_entity_types(example_build: Path) -> None:
    """onto.search finds a document and a task for one phrase, the title match first."""
    result = Catalog.open(example_build).tool_exec("onto.search", {"query": "retry queue"})["result"]
    assert result["results"][0] == {"type": "document", "id": "D-0002", "title": "Retry queue design", "score": 6.0}
    assert {"task", "document"} <= {hit["type"] for hit in result["results"]}


def test_web_visit_points_at_the_placeholder_and_a_url_catalogue_does_not_run_it(
    example_build: Path, tmp_path: Path
) -> None:
    """util.web.visit is an http tool at the documented .example placeholder; opened by URL it runs nothing."""
    from support import serve_folder  # noqa: PLC0415

    catalog, _ = compile_catalog(EXAMPLE_SRC)
    assert catalog.tools["util.web.visit"].handler["url"].startswith("https://api.acme.example/")
    with serve_folder(example_build) as url:
        answer = Catalog.open(url, cache_dir=tmp_path / "cache").tool_exec(
            "util.web.visit", {"url": "https://example.com/"}
        )
    assert answer["ok"] is False
    assert answer["error"]["code"] == "NOT_AUTHORIZED"


def test_rename_symbol_takes_language_as_optional(example_build: Path, tmp_path: Path) -> None:
    """As 000 shows, language may be left out: the files that mention the symbol decide, and the result says which."""
    project = tmp_path / "svc"
    project.mkdir()
    (project / "app.go").write_text("package main\nfunc parseHeaders() {}\nfunc main() { parseHeaders() }\n")
    (project / "notes.py").write_text("# unrelated\n")
    cat = Catalog.open(example_build, sandbox=str(tmp_path))
    assert "language" not in cat.expand_tool("refactor.rename_symbol")["args_schema"]["required"]
    answer = cat.tool_exec(
        "refactor.rename_symbol", {"project_root": "svc", "symbol": "parseHeaders", "new_name": "parseHeader"}
    )
    assert answer["ok"], answer
    assert answer["result"]["language"] == "go"
    assert answer["result"]["changed_files"] == ["svc/app.go"]
    assert answer["result"]["applied"] is False
