"""Tool records carry 001's ``entity``, ``action`` and ``contexts``: derived from the id where the source is silent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator
from support import write_tree

from toolcat.build import build
from toolcat.build.errors import SourceError
from toolcat.build.sources.tools import check_tools_file
from toolcat.format.names import entity_action
from toolcat.reader import Catalog

SCHEMAS = Path(__file__).resolve().parents[2] / "compiler" / "format" / "schemas"
ARGS = {"type": "object", "properties": {"project_id": {"type": "string"}, "task_id": {"type": "string"}}}


def checked(**fields: Any) -> tuple[dict[str, Any] | None, list[Any]]:
    """The record and diagnostics of one tool checked from YAML text."""
    tool = {"id": "onto.task.update", "summary": "Update a task.", "args_schema": ARGS, **fields}
    result = check_tools_file("onto/tools.yaml", json.dumps({"tools": [tool]}).encode())
    return (result.tools[0] if result.tools else None), result.diagnostics


@pytest.mark.parametrize(
    ("tool_id", "entity", "action"),
    [
        ("file.read", "file", "read"),
        ("onto.task.update", "task", "update"),
        ("s3.file.read", "file", "read"),
        ("onto.project.graph.get", "project.graph", "get"),
        ("onto.search", "onto", "search"),
    ],
)
def test_entity_and_action_derive_from_the_id(tool_id: str, entity: str, action: str):
    """The rule docs/sources.md states: the action is the last segment, the entity the segments before it."""
    assert entity_action(tool_id) == (entity, action)


def test_record_derives_entity_action_and_empty_contexts():
    """A tool that names none gets the id's entity and action, and no context arguments."""
    record, diagnostics = checked()
    assert diagnostics == []
    assert record is not None
    assert (record["entity"], record["action"], record["contexts"]) == ("task", "update", [])


def test_source_overrides_entity_and_action():
    """entity and action written in the source win over the id's."""
    record, _ = checked(entity="todo", action="patch", contexts=["project_id"])
    assert record is not None
    assert (record["entity"], record["action"], record["contexts"]) == ("todo", "patch", ["project_id"])


def test_unknown_context_argument_is_a_located_error():
    """A context name that is not a top-level property of args_schema fails at its JSON path, with a suggestion."""
    record, diagnostics = checked(contexts=["projectid"])
    assert record is None
    (error,) = diagnostics
    assert error.json_path == "$.tools[0].contexts[0]"
    assert error.code == "unknown_context"
    assert "project_id" in (error.hint or "")


@pytest.mark.parametrize(("field", "value"), [("entity", "Task!"), ("action", "up.date"), ("entity", 3)])
def test_bad_entity_or_action_is_a_located_error(field: str, value: Any):
    """An entity or action that is not a lowercase name fails at its field, saying what is expected."""
    record, diagnostics = checked(**{field: value})
    assert record is None
    (error,) = diagnostics
    assert error.json_path == f"$.tools[0].{field}"
    assert error.code == "bad_name"


def test_build_reports_the_file_and_line_of_a_bad_context(tmp_path: Path):
    """toolcat build refuses a bad contexts list with the file and line, and writes nothing."""
    tree = {
        "_node.yaml": {"title": "T", "summary": "t"},
        "onto/tools.yaml": {
            "tools": [{"id": "onto.task.update", "summary": "Update.", "args_schema": ARGS, "contexts": ["nope"]}]
        },
    }
    with pytest.raises(SourceError) as caught:
        build(write_tree(tmp_path / "src", tree), tmp_path / "build", embedder="none")
    text = str(caught.value)
    assert "onto/tools.yaml" in text
    assert "contexts[0]" in text
    assert not (tmp_path / "build").exists()


def test_stored_specs_carry_the_fields_and_match_the_tool_schema(tmp_path: Path):
    """Every written tool spec (skills too) has entity, action and contexts, and validates against tool.json."""
    tree = {
        "_node.yaml": {"title": "T", "summary": "t"},
        "onto/tools.yaml": {
            "tools": [
                {"id": "onto.task.update", "summary": "Update.", "args_schema": ARGS, "contexts": ["project_id"]},
                {"id": "file.read", "summary": "Read.", "args_schema": {"type": "object"}, "entity": "document"},
            ]
        },
        "skills/code-review/SKILL.md": "---\nname: code-review\ndescription: Review code for bugs.\n---\nSteps.\n",
    }
    out = tmp_path / "build"
    build(write_tree(tmp_path / "src", tree), out, embedder="none")
    catalog = Catalog.open(out)
    validator = Draft202012Validator(json.loads((SCHEMAS / "tool.json").read_text(encoding="utf-8")))
    seen = {}
    for tool_id in ("onto.task.update", "file.read", catalog.resolve("code-review")):
        assert tool_id is not None
        spec = catalog.store.spec(tool_id)[1]
        assert list(validator.iter_errors(spec)) == []
        seen[tool_id] = (spec["entity"], spec["action"], spec["contexts"])
    assert seen == {
        "onto.task.update": ("task", "update", ["project_id"]),
        "file.read": ("document", "read", []),
        catalog.resolve("code-review"): ("task", "code_review", []),
    }


def test_same_sources_give_the_same_spec_bytes(tmp_path: Path):
    """The new fields keep builds reproducible: two builds of one source tree write identical tool specs."""
    tree = {
        "_node.yaml": {"title": "T", "summary": "t"},
        "onto/tools.yaml": {
            "tools": [
                {"id": "onto.task.update", "summary": "U.", "args_schema": ARGS, "contexts": ["task_id", "project_id"]}
            ]
        },
    }
    src = write_tree(tmp_path / "src", tree)
    first, second = tmp_path / "one", tmp_path / "two"
    build(src, first, embedder="none")
    build(src, second, embedder="none", force=True)

    def published(root: Path) -> list[Path]:
        return sorted(p.relative_to(root) for p in root.rglob("*") if p.is_file() and ".toolcat" not in p.name)

    files = published(first)
    assert any(f.parts[0] == "tools" for f in files)
    assert files == published(second)
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)
    spec = Catalog.open(first).store.spec("onto.task.update")[1]
    assert spec["contexts"] == ["project_id", "task_id"]
