"""Every example of the example catalogue is a contract (issue 34): it runs, in every dialect, through tool_exec's path.

The tools are read from the catalogue itself (``tool_list``), so a tool added to ``catalog_src`` is covered without
touching this file. An example runs for real when its handler works on the in-memory example store or computes
(every ``toolcat.examples`` module but ``files`` and ``refactor``, skills and agents); otherwise (http endpoints, the file
system, the host) it is a dry run, which still applies the reader's null rule and defaults, validates, and builds
the http request its handler would send.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from toolcat.build import compile_catalog
from toolcat.examples.onto_store import reset_store
from toolcat.format.types import Json
from toolcat.reader import Catalog
from toolcat.reader.dialects import DIALECTS

#: The example handler modules that touch the file system (the sandbox): their examples are dry runs. Every other
#: ``toolcat.examples`` module works on the in-memory example store or only computes, and runs for real.
FILE_SYSTEM_MODULES = ("toolcat.examples.files:", "toolcat.examples.refactor:")


@pytest.fixture(autouse=True)
def fresh_store() -> Iterator[None]:
    """The demo data, as on import (the examples change it)."""
    reset_store(seed=True)
    yield
    reset_store(seed=True)


def runs_for_real(spec: Json) -> bool:
    """Whether an example of ``spec`` runs its handler (store or compute), rather than a dry run."""
    handler = spec.get("handler")
    if not isinstance(handler, dict):
        return False
    if handler.get("type") == "skill":
        return True
    target = str(handler.get("target", ""))
    return (
        handler.get("type") == "python"
        and target.startswith("toolcat.examples.")
        and not target.startswith(FILE_SYSTEM_MODULES)
    )


def catalogue_examples(cat: Catalog) -> list[tuple[str, str, int, Json, Json]]:
    """``(tool_id, alias, index, args, spec)`` for every example of every tool and task the catalogue holds."""
    listed = cat.tool_list()
    assert listed["ok"] is True, listed
    out = []
    for row in listed["tools"]:
        tool_id, spec = cat.store.spec(row["name"])
        for index, example in enumerate(spec.get("examples") or []):
            out.append((tool_id, row["alias"], index, example["args"], spec))
    return out


def run_example(cat: Catalog, dialect: str, tool_id: str, alias: str, args: Json, *, dry: bool) -> Json:
    """One example as ``dialect`` calls a tool: ``call_tool`` (spec), ``tool_exec`` (gateway), by alias otherwise."""
    if dialect == "spec" and not dry:
        return cat.call_tool(tool_id, args)
    if dialect in ("spec", "gateway"):
        return cat.tool_exec(tool_id, args, dry_run=dry, dialect=dialect)
    return cat.tool_exec(alias, args, dry_run=dry, dialect=dialect)


def example_failure(answer: Json) -> str | None:
    """Why an example's answer is not a success (None when it is): an error, or a dry run the host would refuse."""
    if answer.get("ok") is not True:
        error = answer.get("error") or {}
        return f"{error.get('code')}: {error.get('message')} {error.get('details', {}).get('field_errors', '')}"
    plan = answer.get("would_run")
    if isinstance(plan, dict) and plan.get("allowed") is False:
        return f"a real call would be refused: {plan.get('refusal')}"
    return None


@pytest.mark.parametrize("dialect", sorted(DIALECTS))
def test_every_example_of_the_catalogue_runs_in_every_dialect(example_build: Path, dialect: str) -> None:
    """Each example of each tool and task answers ok through the dialect's call path (a dry run off the store)."""
    cat = Catalog.open(example_build)
    examples = catalogue_examples(cat)
    failures = []
    real = 0
    for tool_id, alias, index, args, spec in examples:
        reset_store(seed=True)
        dry = not runs_for_real(spec)
        real += not dry
        why = example_failure(run_example(cat, dialect, tool_id, alias, args, dry=dry))
        if why is not None:
            failures.append(f"{tool_id} example {index + 1} {args}: {why}")
    assert not failures, "\n".join(failures)
    assert len(examples) >= 150  # the catalogue's examples, every one of them (153 when issue 34 was filed)
    assert real >= 40  # most store and compute examples run their handler for real


def test_the_unassign_example_unassigns_in_every_dialect(example_build: Path) -> None:
    """onto.task.update's "Unassign" example (assignee and due_date null, which its schema allows) clears both."""
    cat = Catalog.open(example_build)
    for dialect in sorted(DIALECTS):
        reset_store(seed=True)
        before = cat.tool_exec("onto.task.get", {"task_id": "T-0001"})["result"]
        assert before["assignee"], before
        assert before["due_date"], before
        args = {"task_id": "T-0001", "assignee": None, "due_date": None}
        answer = run_example(cat, dialect, "onto.task.update", "onto_task_update", args, dry=False)
        assert answer["ok"] is True, (dialect, answer)
        assert answer["result"]["assignee"] is None, (dialect, answer)
        assert answer["result"]["due_date"] is None, (dialect, answer)
        with_other = cat.tool_exec("onto.task.update", {"task_id": "T-0002", "assignee": None, "priority": "low"})
        assert with_other["result"]["assignee"] is None  # not silently ignored beside another field


def test_a_null_the_schema_does_not_allow_means_absent(example_build: Path) -> None:
    """A null for a non-nullable optional argument is the argument left out: its default applies, no error."""
    cat = Catalog.open(example_build)
    answer = cat.tool_exec("cal.event.list", {**_window(), "max_results": None, "calendar_id": None}, dry_run=True)
    assert answer["ok"] is True, answer
    assert answer["would_run"]["args"]["max_results"] == 50
    assert "/calendars/primary/events" in answer["would_run"]["url"]


def _window() -> Json:
    return {"time_min": "2026-11-23T00:00:00+01:00", "time_max": "2026-11-24T00:00:00+01:00"}


def test_calendar_examples_run_without_calendar_id(example_build: Path) -> None:
    """Every cal.event.* example runs with calendar_id left out: the dry run fills the default into the URL."""
    cat = Catalog.open(example_build)
    ops = [row["name"] for row in cat.tool_list(namespace="cal")["tools"] if row["name"].startswith("cal.event.")]
    with_calendar = [op for op in ops if "calendar_id" in cat.store.spec(op)[1]["args_schema"]["properties"]]
    assert len(with_calendar) >= 6, ops
    for op in with_calendar:
        spec = cat.store.spec(op)[1]
        assert spec["args_schema"]["properties"]["calendar_id"]["default"] == "primary"
        for example in spec["examples"]:
            args = {k: v for k, v in example["args"].items() if k != "calendar_id"}
            answer = cat.tool_exec(op, args, dry_run=True)
            assert answer["ok"] is True, answer
            assert answer["would_run"]["args"]["calendar_id"] == "primary"
            assert "/calendars/primary/" in answer["would_run"]["url"], answer["would_run"]


def test_an_example_that_cannot_run_is_a_build_warning_naming_file_and_line(make_tree) -> None:
    """A URL path parameter neither the example nor a default gives: a WARNING at the example's file and line."""
    src = make_tree(
        {
            "_node.yaml": {"title": "Cal", "summary": "A calendar API."},
            "tools.yaml": {
                "tools": [
                    {
                        "id": "cal.thing.get",
                        "summary": "Get one thing from a calendar.",
                        "kind": "read",
                        "args_schema": {
                            "type": "object",
                            "properties": {"calendar_id": {"type": "string"}, "thing": {"type": "string"}},
                            "required": ["thing"],
                        },
                        "examples": [
                            {"description": "with the calendar", "args": {"calendar_id": "c1", "thing": "a"}},
                            {"description": "without it", "args": {"thing": "a"}},
                        ],
                        "handler": {
                            "type": "http",
                            "method": "GET",
                            "url": "https://api.example.com/calendars/{calendar_id}/things/{thing}",
                        },
                    }
                ]
            },
        }
    )
    _, diagnostics = compile_catalog(src)
    found = [d for d in diagnostics if d.code == "example_unrunnable"]
    assert len(found) == 1, diagnostics
    (warning,) = found
    assert warning.severity.value == "warning"
    assert warning.file == "tools.yaml"
    text = (src / "tools.yaml").read_text().splitlines()
    assert warning.line is not None
    assert "without it" in "\n".join(text[warning.line - 1 : warning.line + 1]), (warning.line, text)
    assert "example 2 of cal.thing.get cannot run" in warning.message
    assert "calendar_id" in warning.message


def test_the_example_catalogue_builds_without_unrunnable_examples() -> None:
    """catalog_src has no example the reader would refuse (no example_unrunnable warning)."""
    from support import EXAMPLE_SRC  # noqa: PLC0415

    _, diagnostics = compile_catalog(EXAMPLE_SRC)
    assert [d.render() for d in diagnostics if d.code == "example_unrunnable"] == []


def test_eval_ids_are_the_catalogues_ids(example_build: Path) -> None:
    """Every id an eval file of catalog_src expects is a canonical id of the example catalogue (renames followed)."""
    import yaml  # noqa: PLC0415
    from support import EXAMPLE_SRC  # noqa: PLC0415

    ids = {row["name"] for row in Catalog.open(example_build).tool_list()["tools"]}
    files = sorted((EXAMPLE_SRC / "evals").glob("*.yaml"))
    assert files
    stale = []
    for path in files:
        for query in yaml.safe_load(path.read_text())["queries"]:
            expected = query["expect"] if isinstance(query["expect"], list) else [query["expect"]]
            stale += [f"{path.name}: {query['query']!r} expects {e}" for e in expected if e not in ids]
    assert not stale, "\n".join(stale)


def test_docs_count_the_direct_dialects_tools_from_the_catalogue(example_build: Path) -> None:
    """docs/mcp.md's "N tools for the example" is the number of tools --dialect direct lists (not a stale figure)."""
    import re  # noqa: PLC0415

    from support import REPO  # noqa: PLC0415

    count = Catalog.open(example_build).direct_tools()["count"]
    said = re.findall(r"\((\d+) tools for the example[:)]", (REPO / "docs" / "mcp.md").read_text())
    assert said == [str(count)], (said, count)


def test_defaults_reach_path_query_header_and_body_in_a_dry_run(make_tree, tmp_path: Path) -> None:
    """An OpenAPI-style http handler gets every schema default where its params say, and the dry run shows it."""
    from toolcat.build import build  # noqa: PLC0415

    schema = {
        "type": "object",
        "properties": {
            "team": {"type": "string", "default": "core"},
            "page_size": {"type": "integer", "default": 25},
            "trace": {"type": "string", "default": "off"},
            "title": {"type": "string"},
            "priority": {"type": "string", "default": "low"},
        },
        "required": ["title"],
    }
    handler = {
        "type": "http",
        "method": "POST",
        "url": "https://api.example.com/teams/{team}/items",
        "params": {"team": {"in": "path"}, "page_size": {"in": "query"}, "trace": {"in": "header", "name": "X-Trace"}},
        "body": {"encoding": "json"},
    }
    src = make_tree(
        {
            "_node.yaml": {"title": "Items", "summary": "An items API."},
            "tools.yaml": {
                "tools": [
                    {
                        "id": "api.item.create",
                        "summary": "Create an item.",
                        "kind": "write",
                        "args_schema": schema,
                        "handler": handler,
                        "examples": [{"description": "a title only", "args": {"title": "Hello"}}],
                    },
                    {
                        "id": "api.item.create_lean",
                        "summary": "Create an item, defaults left to the server.",
                        "kind": "write",
                        "args_schema": schema,
                        "handler": {**handler, "send_defaults": False},
                    },
                ]
            },
        }
    )
    build(src, tmp_path / "build")
    cat = Catalog.open(tmp_path / "build")
    plan = cat.tool_exec("api.item.create", {"title": "Hello"}, dry_run=True)["would_run"]
    assert plan["url"] == "https://api.example.com/teams/core/items?page_size=25", plan
    assert "X-Trace" in plan["headers"]
    assert plan["body"] == {"title": "Hello", "priority": "low"}, plan
    lean = cat.tool_exec("api.item.create_lean", {"title": "Hello"}, dry_run=True)["would_run"]
    assert lean["url"] == "https://api.example.com/teams/core/items", lean  # the path still gets its default
    assert "X-Trace" not in lean["headers"]
    assert lean["body"] == {"title": "Hello"}, lean
