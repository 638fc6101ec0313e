"""Policies at list time: a tool the session may not use is not listed, found or described, in every dialect."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.reader import Catalog


@pytest.fixture(scope="module")
def onto_only(example_build: Path) -> Catalog:
    """The example catalogue with allowed_namespaces=["onto"]."""
    return Catalog.open(example_build, allowed_namespaces=["onto"])


@pytest.fixture(scope="module")
def read_only(example_build: Path) -> Catalog:
    """The example catalogue in a read-only session."""
    return Catalog.open(example_build, read_only=True)


def _namespaces(ids: list[str]) -> set[str]:
    return {i.split(".", 1)[0] for i in ids}


def test_spec_lists_and_finds_only_allowed_namespaces(onto_only: Catalog):
    """list and search_tool_by_category show no tool outside allowed_namespaces; expand_tool answers as if absent."""
    assert onto_only.list(path="files")["tools"] == []
    assert _namespaces([t["tool_id"] for t in onto_only.list(query="task")["tools"]]) <= {"onto"}
    found = onto_only.search_tool_by_category("read a file", "")
    assert _namespaces([r["tool_id"] for r in found.get("results", [])]) <= {"onto"}
    assert onto_only.expand_tool("file.read")["error"]["code"] == "TOOL_NOT_FOUND"
    assert onto_only.call_tool("file.read", {"path": "x"})["error"]["code"] == "NOT_AUTHORIZED"


def test_gateway_shows_only_allowed_groups_and_ops(onto_only: Catalog):
    """tool_help lists only allowed groups, searches only allowed ops, and helps on a hidden op as if absent."""
    assert [g["name"] for g in onto_only.tool_help()["groups"]] == ["onto"]
    assert onto_only.tool_help("file")["error"]["code"] == "UNKNOWN_PATH"
    assert onto_only.tool_help("file.read")["error"]["code"] == "TOOL_NOT_FOUND"
    found = onto_only.tool_help(query="read a file")  # may honestly find nothing: no onto op reads files
    assert _namespaces([o["op"] for o in found.get("operations", [])]) <= {"onto"}
    assert "file." not in str(found)
    assert onto_only.tool_exec("file.read", {"path": "x"})["error"]["code"] == "NOT_AUTHORIZED"


def test_namespaced_lists_finds_and_loads_only_allowed_tools(onto_only: Catalog):
    """tool_list, find_tool and always_loaded leave out other namespaces; tool_describe answers as if absent."""
    listed = [t["name"] for t in onto_only.tool_list()["tools"]]
    assert listed
    assert _namespaces(listed) == {"onto"}
    assert _namespaces([m["name"] for m in onto_only.find_tool("read a file")["matches"]]) <= {"onto"}
    assert onto_only.tool_describe("file_read")["error"]["code"] == "TOOL_NOT_FOUND"
    assert onto_only.tool_list(namespace="file")["error"]["code"] == "UNKNOWN_PATH"
    assert onto_only.always_loaded() == []


def test_read_only_hides_write_tools_in_every_dialect(read_only: Catalog):
    """A read-only session neither lists, finds nor describes kind=write tools; calling one is PERMISSION_DENIED."""
    assert all(t.get("kind") != "write" for t in read_only.tool_list()["tools"])
    assert all(t.get("kind") != "write" for t in read_only.list(path="files")["tools"])
    group = read_only.tool_help("onto.task")
    assert "onto.task.update" not in [o["op"] for o in group["operations"]]
    assert "onto.task.list" in [o["op"] for o in group["operations"]]
    assert "onto.task.update" not in [m["name"] for m in read_only.find_tool("update a task status")["matches"]]
    hits = read_only.search_tool_by_category("update a task status", "").get("results", [])
    assert "onto.task.update" not in [h["tool_id"] for h in hits]
    assert read_only.expand_tool("onto.task.update")["error"]["code"] == "TOOL_NOT_FOUND"
    assert read_only.tool_describe("onto_task_update")["error"]["code"] == "TOOL_NOT_FOUND"
    assert read_only.tool_help("onto.task.update")["error"]["code"] == "TOOL_NOT_FOUND"
    refused = read_only.tool_exec("onto.task.update", {"task_id": "T-0001", "status": "done"})
    assert refused["error"]["code"] == "PERMISSION_DENIED"


def test_an_open_session_still_sees_the_write_tools(example_build: Path):
    """Without a policy the same calls list and find the write tool (the filters above are the policy's doing)."""
    catalog = Catalog.open(example_build)
    assert "onto.task.update" in [o["op"] for o in catalog.tool_help("onto.task")["operations"]]
    assert "onto.task.update" in [m["name"] for m in catalog.find_tool("update a task status")["matches"]]
    assert catalog.tool_describe("onto_task_update")["ok"] is True


def test_require_expand_hides_nothing(example_build: Path):
    """require_expand gates calls, not discovery: tool_list answers as in an open session."""
    gated = Catalog.open(example_build, require_expand=True)
    assert gated.tool_list() == Catalog.open(example_build).tool_list()
