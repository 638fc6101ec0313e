"""Issue 25's dialect items through the Python API.

Direct (001's legacy mode), per-domain discovery (002), pinned tools counted apart from the gateway's three, tool_help's defaults, and a category search's help_path.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support import EXAMPLE_SRC

from toolcat.build import build
from toolcat.build.config import read_config
from toolcat.build.errors import SourceError
from toolcat.reader import Catalog
from toolcat.reader.dialects.protocol import hint_tools


@pytest.fixture(scope="module")
def domain_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example catalogue built with ``discovery: {per_domain: [file, code]}`` in its toolcat.yaml."""
    import shutil  # noqa: PLC0415

    src = tmp_path_factory.mktemp("domains") / "catalog_src"
    shutil.copytree(EXAMPLE_SRC, src)
    (src / "toolcat.yaml").write_text("search: {embedder: none}\ndiscovery:\n  per_domain: [file, code]\n")
    out = src.parent / "build"
    build(src, out)
    return out


# -- tool_help prints defaults (001 §8.1: args are name, type, required, default) ------------------------
def test_tool_help_prints_each_argument_default(example_build: Path) -> None:
    """tool_help on an operation gives each argument with a default a ``default`` field holding the value."""
    answer = Catalog.open(example_build).tool_help("file.read")
    args = {a["name"]: a for a in answer["args"]}
    assert args["max_lines"]["default"] == 2000
    assert args["encoding"]["default"] == "utf-8"
    assert "default" not in args["path"]
    assert all("default:" not in a.get("rules", "") for a in args.values())  # said once, as a field


# -- a category search points its help at the category ------------------------------------------------------
def test_category_search_help_path_is_the_category(example_build: Path) -> None:
    """search_tool_by_category inside a category answers help_path = that category, found or not, never root."""
    catalog = Catalog.open(example_build)
    found = catalog.search_tool_by_category("read a file", "files")
    assert found["ok"]
    assert found["help_path"] == "files"
    missed = catalog.search_tool_by_category("zzqx plorb", "files")
    assert missed["ok"] is False
    assert missed["error"]["help_path"] == "files"


# -- pinned tools beside the gateway's three -----------------------------------------------------------------
def test_pinned_tools_are_counted_apart_from_discovery_tools(example_build: Path) -> None:
    """manifest.dialects says the gateway has 3 discovery tools and N pinned ones (N = always_load tools)."""
    catalog = Catalog.open(example_build)
    pinned = [t["tool_id"] for t in catalog.always_loaded()]
    assert pinned, "the example catalogue pins file.read"
    gateway = catalog.manifest["dialects"]["gateway"]
    assert gateway == {"discovery": 3, "pinned": len(pinned), "pinned_tools": pinned}


def test_gateway_export_file_counts_three_plus_pinned(example_build: Path) -> None:
    """providers/<p>/gateway holds the 3 discovery tools first, then the pinned ones, with counts of both."""
    catalog = Catalog.open(example_build)
    pinned = len(catalog.always_loaded())
    for provider in ("openai", "anthropic"):
        data = catalog.fetch_json(catalog.manifest["providers"][provider]["dialects"]["gateway"])
        assert data["counts"] == {"discovery": 3, "pinned": pinned}
        names = [t["function"]["name"] if provider == "openai" else t["name"] for t in data["tools"]]
        assert names[:3] == ["tool_help", "tool_exec", "tool_batch"]
        assert len(names) == 3 + pinned


# -- direct: every allowed tool with its schema --------------------------------------------------------------
def test_direct_tools_lists_every_tool_with_its_schema(example_build: Path) -> None:
    """direct_tools() lists each tool and skill once, by provider alias, with an object input schema."""
    catalog = Catalog.open(example_build)
    listed = catalog.direct_tools()
    counts = catalog.manifest["counts"]
    assert listed["ok"]
    assert listed["count"] == counts["tools"] + counts["skills"] == len(listed["tools"])
    aliases = [t["alias"] for t in listed["tools"]]
    assert len(set(aliases)) == len(aliases)
    read = next(t for t in listed["tools"] if t["tool_id"] == "file.read")
    assert read["alias"] == "file_read"
    assert "path" in read["args_schema"]["properties"]
    assert catalog.manifest["dialects"]["direct"]["tools"] == listed["count"]


def test_direct_tools_respect_read_only_and_allowed_namespaces(example_build: Path) -> None:
    """A read-only session lists no write tool; allowed_namespaces leaves out the other namespaces."""
    read_only = Catalog.open(example_build, read_only=True).direct_tools()["tools"]
    assert read_only
    assert all(t.get("kind") != "write" for t in read_only)
    files = Catalog.open(example_build, allowed_namespaces=["file"]).direct_tools()["tools"]
    assert files
    assert {t["tool_id"].split(".")[0] for t in files} == {"file"}


def test_direct_call_runs_reader_validation_and_names_no_discovery_tool(example_build: Path) -> None:
    """A direct call by alias is validated like tool_exec; its error points at no discovery tool the agent lacks."""
    answer = Catalog.open(example_build).tool_exec("file_read", {"start_line": 0}, dialect="direct")
    assert answer["ok"] is False
    assert answer["error"]["code"] == "VALIDATION_ERROR"
    assert {e["field"] for e in answer["error"]["details"]["field_errors"]} == {"path", "start_line"}
    assert answer["error"]["next_action"] is None
    assert not any(hint_tools(h) for h in answer["error"]["hints"])


def test_direct_call_of_a_write_tool_in_a_read_only_session_is_refused(example_build: Path) -> None:
    """Read-only holds at call time too: a write tool called by alias answers PERMISSION_DENIED."""
    answer = Catalog.open(example_build, read_only=True).tool_exec(
        "file_write", {"path": "x.txt", "content": "x"}, dialect="direct"
    )
    assert answer["ok"] is False
    assert answer["error"]["code"] == "PERMISSION_DENIED"


# -- per-domain discovery (002) -----------------------------------------------------------------------------
def test_discover_lists_a_domain_by_name_and_one_line(example_build: Path) -> None:
    """discover("file") lists every file.* tool with its alias and summary, and no schema."""
    answer = Catalog.open(example_build).discover("file")
    assert answer["ok"]
    assert answer["domain"] == "file"
    assert answer["tools"]
    assert all(t["name"].startswith("file.") and t["summary"] for t in answer["tools"])
    assert not any("args_schema" in t for t in answer["tools"])


def test_discover_one_tool_gives_parameters_and_usage(example_build: Path) -> None:
    """discover("file", tool="read_file") answers 002's details: name, parameters (required first), usage."""
    answer = Catalog.open(example_build).discover("file", "read_file")
    assert answer["ok"]
    assert answer["tool_id"] == "file.read"
    assert answer["parameters"][0] == "path"
    assert set(answer["parameters"]) >= {"path", "start_line", "max_lines"}
    assert answer["usage"] == "file_read(path=<path>)"
    assert answer["next_action"]["op"] == "file_read"  # the namespaced call: the tool by its alias


def test_discover_a_tool_of_another_domain_is_not_found(example_build: Path) -> None:
    """A tool outside the domain is TOOL_NOT_FOUND, pointing at the domain's listing (tool_list), not at itself."""
    answer = Catalog.open(example_build).discover("file", "refactor.rename_symbol")
    assert answer["error"]["code"] == "TOOL_NOT_FOUND"
    assert answer["error"]["next_action"] == {"op": "tool_list", "args": {"namespace": "file"}}


def test_discover_a_hidden_domain_is_unknown(example_build: Path) -> None:
    """A domain outside allowed_namespaces answers UNKNOWN_PATH, as tool_list does."""
    answer = Catalog.open(example_build, allowed_namespaces=["code"]).discover("file")
    assert answer["error"]["code"] == "UNKNOWN_PATH"


def test_per_domain_setting_reaches_the_manifest_and_export(domain_build: Path) -> None:
    """discovery.per_domain lists domains in the manifest; the namespaced export adds discover_<d>_tools."""
    catalog = Catalog.open(domain_build)
    assert catalog.discovery_domains() == ["code", "file"]
    data = catalog.fetch_json(catalog.manifest["providers"]["openai"]["dialects"]["namespaced"])
    names = [t["function"]["name"] for t in data["tools"]]
    assert names[:5] == ["tool_list", "tool_describe", "find_tool", "discover_code_tools", "discover_file_tools"]
    assert data["counts"]["discovery"] == 5
    gateway = catalog.fetch_json(catalog.manifest["providers"]["openai"]["dialects"]["gateway"])
    assert gateway["counts"]["discovery"] == 3  # only the namespaced dialect grows


def test_per_domain_true_means_every_namespace(tmp_path: Path) -> None:
    """per_domain: true gives every namespace of the catalogue a tool."""
    (tmp_path / "toolcat.yaml").write_text("discovery: {per_domain: true}\n")
    domains, problems = read_config(tmp_path).discovery_domains(["file", "code"])
    assert domains == ("code", "file")
    assert problems == []


def test_per_domain_unknown_namespace_is_a_located_error(tmp_path: Path) -> None:
    """A named namespace the catalogue lacks is an error at its line, with a did-you-mean."""
    (tmp_path / "toolcat.yaml").write_text("discovery:\n  per_domain:\n    - file\n    - fiel\n")
    _, problems = read_config(tmp_path).discovery_domains(["file", "code"])
    (problem,) = problems
    assert problem.line == 4
    assert problem.json_path == "$.discovery.per_domain[1]"
    assert "fiel" in problem.message
    assert problem.hint == "Did you mean 'file'?"


def test_per_domain_of_the_wrong_type_stops_the_build(tmp_path: Path, make_tree) -> None:
    """per_domain: "file" (a string) is a wrong_type error naming the setting; the build stops."""
    src = make_tree(
        {
            "toolcat.yaml": "discovery: {per_domain: file}\n",
            "files": {"tools.yaml": json.dumps({"tools": [{"id": "file.stat", "summary": "Stat a file."}]})},
        }
    )
    with pytest.raises(SourceError) as raised:
        build(src, tmp_path / "out")
    assert "per_domain" in str(raised.value)
    assert "true, false or a list of namespaces" in str(raised.value)
