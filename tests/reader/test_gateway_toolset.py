"""Seed 001's whole toolset in the example catalogue, driven through the gateway dialect as an agent would.

001 §6 names 57 operations (ontology read and write, utility, calendar). Each exists with examples that
run, and 001's work flows (plan → milestone → task, documents, a calendar per project, links) run
end to end through ``tool_help`` / ``tool_exec`` / ``tool_batch`` against the in-memory example store.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from support import REPO

from toolcat.examples.guide import USAGE_GUIDE
from toolcat.examples.onto_store import reset_store
from toolcat.reader import Catalog

#: 001 §6, in its order: ontology read, ontology write, utility, calendar.
SEED_001_OPS = [
    *("onto.task.list", "onto.task.search", "onto.task.get"),
    *("onto.project.list", "onto.project.search", "onto.project.get"),
    *("onto.document.list", "onto.document.search", "onto.document.get"),
    *("onto.goal.list", "onto.goal.get", "onto.plan.list", "onto.plan.get"),
    *("onto.milestone.list", "onto.milestone.get", "onto.risk.list", "onto.risk.get"),
    *("onto.requirement.list", "onto.requirement.get", "onto.search", "onto.project.graph.get"),
    *("onto.document.tree.get", "onto.document.path.get", "onto.entity.relationships.get"),
    *("onto.entity.links.get", "onto.task.docs.list"),
    *("onto.task.create", "onto.task.update", "onto.task.delete", "onto.project.create", "onto.project.update"),
    *("onto.goal.create", "onto.goal.update", "onto.goal.delete", "onto.plan.create", "onto.plan.update"),
    *("onto.plan.delete", "onto.document.create", "onto.document.update", "onto.document.delete"),
    *("onto.task.docs.create_or_attach", "onto.edge.link", "onto.edge.unlink"),
    *("onto.project.graph.reorganize", "onto.document.tree.move"),
    *("util.schema.field_info", "util.web.search", "util.web.visit", "util.buildos.overview"),
    "util.buildos.usage_guide",
    *("cal.event.list", "cal.event.get", "cal.event.create", "cal.event.update", "cal.event.delete"),
    *("cal.project.get", "cal.project.set"),
]
#: The seed itself, where the shared folder is beside the repository.
SEED_001 = REPO.parent / "shared" / "seeds" / "001_03cbe6ad770c22d2.txt"
#: The operations issue 34 added, each with a reference handler over the example store.
ADDED_OPS = [
    *("onto.project.search", "onto.document.search", "onto.document.get", "onto.goal.get", "onto.plan.list"),
    *("onto.plan.get", "onto.milestone.list", "onto.milestone.get", "onto.risk.list", "onto.risk.get"),
    *("onto.requirement.list", "onto.requirement.get", "onto.project.graph.get", "onto.document.tree.get"),
    *("onto.document.path.get", "onto.entity.relationships.get", "onto.entity.links.get", "onto.task.docs.list"),
    *("onto.goal.create", "onto.goal.update", "onto.goal.delete", "onto.plan.create", "onto.plan.update"),
    *("onto.plan.delete", "onto.document.create", "onto.document.update", "onto.document.delete"),
    *("onto.task.docs.create_or_attach", "onto.edge.unlink", "onto.project.graph.reorganize"),
    *("onto.document.tree.move", "util.buildos.usage_guide", "cal.project.set"),
]


@pytest.fixture
def cat(example_build: Path) -> Iterator[Catalog]:
    """The example catalogue over the demo data as seeded (each test starts from it and leaves it so)."""
    reset_store(seed=True)
    yield Catalog.open(example_build)
    reset_store(seed=True)


def ok(answer: dict[str, Any]) -> Any:
    """The result of a successful gateway answer (fails the test with the whole answer otherwise)."""
    assert answer["ok"] is True, answer
    return answer["result"]


def test_the_list_is_001s_section_6() -> None:
    """The 57 ids above are exactly those 001 §6 names (read from the seed when the shared folder is there)."""
    assert len(SEED_001_OPS) == len(set(SEED_001_OPS)) == 57
    assert set(ADDED_OPS) < set(SEED_001_OPS)
    if not SEED_001.is_file():
        pytest.skip(f"seed 001 is not at {SEED_001}; the list above is checked for size and duplicates only")
    text = SEED_001.read_text(encoding="utf-8")
    section = text[text.index("## 6. CLI Namespace") : text.index("## 7. Registry")]
    assert re.findall(r"`((?:onto|util|cal)\.[a-z_.]+)`", section) == SEED_001_OPS


@pytest.mark.parametrize("op", SEED_001_OPS)
def test_every_001_operation_is_documented_in_full(cat: Catalog, op: str) -> None:
    """Each op has a help page with args, a policy or notes, examples valid for its schema, and a matching kind."""
    spec = cat.expand_tool(op)
    assert spec.get("ok", True), spec
    assert spec["examples"], op
    for example in spec["examples"]:
        jsonschema.validate(example["args"], spec["args_schema"])
    helped = cat.tool_help(op, include_schemas=True)
    assert helped["level"] == "operation"
    assert helped["kind"] == ("read" if spec["annotations"]["readOnlyHint"] else "write")
    assert helped["examples"]
    assert helped.get("policy") or helped.get("notes")


@pytest.mark.parametrize("op", ADDED_OPS)
def test_each_added_operation_runs_its_examples(cat: Catalog, op: str) -> None:
    """Every example of an added op runs through tool_exec on fresh demo data, and its result fits the result schema."""
    spec = cat.expand_tool(op)
    for example in spec["examples"]:
        reset_store(seed=True)
        result = ok(cat.tool_exec(op, example["args"]))
        jsonschema.validate(result, spec["result_schema"])


@pytest.mark.parametrize("op", ["util.web.search", "util.web.visit"])
def test_web_tools_stay_offline_and_show_their_request(cat: Catalog, op: str) -> None:
    """The web tools' examples dry-run to the documented .example placeholder: the example never reaches a network."""
    for example in cat.expand_tool(op)["examples"]:
        answer = cat.tool_exec(op, example["args"], dry_run=True)
        assert answer["ok"] is True, answer
        assert answer["would_run"]["url"].startswith("https://api.acme.example/v1/web/")


def test_discovery_goes_root_group_entity_op(cat: Catalog) -> None:
    """001 §10.1: root → onto → onto.plan → onto.plan.create shows the groups, the ops and the args."""
    assert {"onto", "util", "cal"} <= {g["name"] for g in cat.tool_help("root")["groups"]}
    groups = {g["path"] for g in cat.tool_help("onto")["groups"]}
    assert {"onto.plan", "onto.milestone", "onto.risk", "onto.requirement", "onto.entity", "onto.document"} <= groups
    plan_ops = {o["op"] for o in cat.tool_help("onto.plan")["operations"]}
    assert plan_ops == {f"onto.plan.{a}" for a in ("list", "get", "create", "update", "delete")}
    assert "onto.task.docs" in {g["path"] for g in cat.tool_help("onto.task")["groups"]}
    args = {a["name"]: a for a in cat.tool_help("onto.plan.create")["args"]}
    assert args["project_id"]["required"] is True
    assert args["status"]["default"] == "draft"
    assert "milestones" in args


def test_plan_milestone_task(cat: Catalog) -> None:
    """Plan → milestone → task: a plan with milestones, a task placed in one, seen from the milestone, plan and graph."""
    goal = ok(cat.tool_exec("onto.goal.list", {"project_id": "P-0001", "status": ["at_risk"]}))["goals"][0]
    plan = ok(
        cat.tool_exec(
            "onto.plan.create",
            {
                "project_id": "P-0001",
                "title": "Chargeback automation",
                "goal_id": goal["id"],
                "status": "active",
                "milestones": [
                    {"title": "Evidence collected automatically", "due_date": "2027-01-29"},
                    {"title": "Responses sent without review", "due_date": "2027-03-15"},
                ],
            },
        )
    )
    assert (plan["id"], plan["goal_id"]) == ("PL-0003", "G-0002")
    listed = ok(cat.tool_exec("onto.milestone.list", {"plan_id": plan["id"]}))["milestones"]
    assert [m["title"] for m in listed] == ["Evidence collected automatically", "Responses sent without review"]
    first = listed[0]["id"]
    task = ok(
        cat.tool_exec(
            "onto.task.create",
            {"project_id": "P-0001", "title": "Export dispute evidence from the acquirer", "milestone_id": first},
        )
    )
    assert (task["plan_id"], task["milestone_id"]) == (plan["id"], first)
    milestone = ok(cat.tool_exec("onto.milestone.get", {"milestone_id": first}))
    assert [t["id"] for t in milestone["tasks"]] == [task["id"]]
    assert milestone["plan"]["id"] == plan["id"]
    got = ok(cat.tool_exec("onto.plan.get", {"plan_id": plan["id"], "include_tasks": True}))
    assert got["progress"] == {"tasks": 1, "done": 0}
    assert [t["id"] for t in got["tasks"]] == [task["id"]]
    assert ok(cat.tool_exec("onto.task.list", {"milestone_id": first}))["total"] == 1
    graph = ok(cat.tool_exec("onto.project.graph.get", {"project_id": "P-0001", "include_links": False}))
    contains = {(e["source_id"], e["target_id"]) for e in graph["edges"]}
    assert {(goal["id"], plan["id"]), (plan["id"], first), (first, task["id"])} <= contains
    # the goal now lists the plan that serves it
    assert plan["id"] in [p["id"] for p in ok(cat.tool_exec("onto.goal.get", {"goal_id": goal["id"]}))["plans"]]


def test_reorganize_previews_then_moves_and_refuses_a_wrong_parent(cat: Catalog) -> None:
    """A preview changes nothing; applying moves the task; a task under a risk is refused as a whole, with help_path."""
    moves = {"project_id": "P-0001", "moves": [{"id": "T-0003", "parent_id": "M-0002"}]}
    preview = ok(cat.tool_exec("onto.project.graph.reorganize", {**moves, "preview": True}))
    assert preview["changes"] == [
        {"id": "T-0003", "type": "task", "from_parent_id": "M-0001", "to_parent_id": "M-0002"}
    ]
    assert ok(cat.tool_exec("onto.task.get", {"task_id": "T-0003"}))["milestone_id"] == "M-0001"
    assert ok(cat.tool_exec("onto.project.graph.reorganize", moves))["applied"] is True
    assert ok(cat.tool_exec("onto.task.get", {"task_id": "T-0003"}))["milestone_id"] == "M-0002"
    bad = {
        "project_id": "P-0001",
        "moves": [{"id": "T-0001", "parent_id": "M-0002"}, {"id": "T-0002", "parent_id": "G-0001"}],
    }
    refused = cat.tool_exec("onto.project.graph.reorganize", bad)
    assert refused["ok"] is False
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert refused["error"]["help_path"] == "onto.project.graph.reorganize"
    assert ok(cat.tool_exec("onto.task.get", {"task_id": "T-0001"}))["milestone_id"] == "M-0001"  # all or nothing


def test_documents(cat: Catalog) -> None:
    """Documents: read the tree, create under a parent, path, search, attach to a task, append, move, delete."""
    tree = ok(cat.tool_exec("onto.document.tree.get", {"project_id": "P-0001"}))["tree"]
    assert [n["id"] for n in tree] == ["D-0001", "D-0006"]
    assert [c["id"] for c in tree[0]["children"]] == ["D-0002", "D-0005"]
    doc = ok(
        cat.tool_exec(
            "onto.document.create",
            {"project_id": "P-0001", "title": "Capture retry alerts", "type": "runbook", "parent_id": "D-0001"},
        )
    )
    assert (doc["id"], doc["parent_id"], doc["position"]) == ("D-0008", "D-0001", 2)
    path = ok(cat.tool_exec("onto.document.path.get", {"document_id": doc["id"]}))
    assert path["path_text"] == "Payments runbook / Capture retry alerts"
    hits = ok(cat.tool_exec("onto.document.search", {"query": "retry alerts", "project_id": "P-0001"}))["results"]
    assert hits[0]["id"] == doc["id"]
    attached = ok(cat.tool_exec("onto.task.docs.create_or_attach", {"task_id": "T-0001", "document_id": doc["id"]}))
    assert (attached["created"], attached["attached"]) == (False, True)
    again = ok(cat.tool_exec("onto.task.docs.create_or_attach", {"task_id": "T-0001", "document_id": doc["id"]}))
    assert (again["attached"], again["edge_id"]) == (False, attached["edge_id"])
    docs = ok(cat.tool_exec("onto.task.docs.list", {"task_id": "T-0001"}))["documents"]
    assert [d["id"] for d in docs] == ["D-0002", doc["id"]]
    ok(cat.tool_exec("onto.document.update", {"document_id": doc["id"], "body": "Step 1.", "body_mode": "append"}))
    ok(cat.tool_exec("onto.document.update", {"document_id": doc["id"], "body": "Step 2.", "body_mode": "append"}))
    assert ok(cat.tool_exec("onto.document.get", {"document_id": doc["id"]}))["body"] == "Step 1.\n\nStep 2."
    cycle = cat.tool_exec("onto.document.tree.move", {"document_id": "D-0001", "new_parent_id": doc["id"]})
    assert cycle["error"]["code"] == "VALIDATION_ERROR"  # a document cannot go under its own child
    moved = ok(cat.tool_exec("onto.document.tree.move", {"document_id": doc["id"], "position": 0}))
    assert (moved["from_parent_id"], moved["parent_id"], moved["path_text"]) == ("D-0001", None, "Capture retry alerts")
    top = [
        n["id"] for n in ok(cat.tool_exec("onto.document.tree.get", {"project_id": "P-0001", "max_depth": 1}))["tree"]
    ]
    assert top == [doc["id"], "D-0001", "D-0006"]
    refused = cat.tool_exec("onto.document.delete", {"document_id": "D-0001"})
    assert refused["error"]["code"] == "VALIDATION_ERROR"
    assert "children: move_up" in refused["error"]["message"]
    deleted = ok(cat.tool_exec("onto.document.delete", {"document_id": "D-0001", "children": "move_up"}))
    assert deleted["moved_up"] == ["D-0002", "D-0005"]
    path = ok(cat.tool_exec("onto.document.path.get", {"document_id": "D-0002"}))
    assert path["depth"] == 1


def test_a_calendar_per_project(cat: Catalog) -> None:
    """A project without a calendar gets one with cal.project.set, and its events go there (dry run: no network)."""
    assert ok(cat.tool_exec("cal.project.get", {"project_id": "P-0003"}))["configured"] is False
    created = ok(cat.tool_exec("cal.project.set", {"project_id": "P-0003", "time_zone": "Europe/Dublin"}))
    assert (created["created"], created["calendar_id"]) == (True, "p-0003@calendar.acme.example")
    calendar = ok(cat.tool_exec("cal.project.get", {"project_id": "P-0003"}))
    assert (calendar["configured"], calendar["time_zone"]) == (True, "Europe/Dublin")
    event = {
        "calendar_id": calendar["calendar_id"],
        "title": "Storage tiering kickoff",
        "start": "2026-12-02T10:00:00+00:00",
        "end": "2026-12-02T10:30:00+00:00",
        "timezone": calendar["time_zone"],
    }
    answer = cat.tool_exec("cal.event.create", event, dry_run=True)
    assert answer["ok"] is True, answer
    assert answer["would_run"]["url"] == "https://api.acme.example/v1/calendars/p-0003%40calendar.acme.example/events"
    changed = ok(cat.tool_exec("cal.project.set", {"project_id": "P-0001", "default_event_minutes": 25}))
    assert (changed["created"], changed["changed"]) == (False, ["default_event_minutes"])
    bad_zone = cat.tool_exec("cal.project.set", {"project_id": "P-0001", "time_zone": "Mars/Olympus"})
    assert bad_zone["error"]["code"] == "VALIDATION_ERROR"
    assert "IANA" in bad_zone["error"]["message"]


def test_links_are_made_read_and_removed(cat: Catalog) -> None:
    """Link a task to a requirement, see it from both ends, find its edge id and unlink it."""
    link = ok(cat.tool_exec("onto.edge.link", {"source_id": "T-0003", "target_id": "RQ-0002", "relation": "addresses"}))
    requirement = ok(cat.tool_exec("onto.requirement.get", {"requirement_id": "RQ-0002"}))
    assert [t["id"] for t in requirement["addressed_by"]] == ["T-0003"]
    linked = ok(cat.tool_exec("onto.entity.links.get", {"entity_id": "T-0003"}))["linked"]
    assert linked["requirement"] == [
        {"id": "RQ-0002", "title": requirement["title"], "status": "accepted", "via": "addresses"}
    ]
    assert linked["milestone"][0]["via"] == "contains (incoming)"
    edges = ok(cat.tool_exec("onto.entity.relationships.get", {"entity_id": "RQ-0002", "direction": "incoming"}))
    mine = [r for r in edges["relationships"] if r["kind"] == "link"]
    assert mine == [
        {
            "edge_id": link["edge"]["id"],
            "relation": "addresses",
            "kind": "link",
            "direction": "incoming",
            "other": {
                "id": "T-0003",
                "type": "task",
                "title": "Checkout API returns 500 on expired 3-D Secure session",
            },
        }
    ]
    ok(cat.tool_exec("onto.edge.unlink", {"edge_id": link["edge"]["id"]}))
    assert ok(cat.tool_exec("onto.requirement.get", {"requirement_id": "RQ-0002"}))["addressed_by"] == []
    gone = cat.tool_exec("onto.edge.unlink", {"edge_id": link["edge"]["id"]})
    assert (gone["error"]["code"], gone["error"]["help_path"]) == ("NOT_FOUND", "onto.edge.unlink")


def test_001s_retry_loop_and_batch_with_the_new_ops(cat: Catalog) -> None:
    """001 §10.1: a bad enum fails with help_path, help shows the values, the retry works; a batch mixes help and exec."""
    args = {"plan_id": "PL-0001", "status": "finished"}
    failed = cat.tool_exec("onto.plan.update", args)
    assert failed["error"]["code"] == "VALIDATION_ERROR"
    helped = cat.tool_help(failed["error"]["help_path"])
    status = next(a for a in helped["args"] if a["name"] == "status")
    assert status["rules"] == 'one of: "draft", "active", "completed"'
    assert ok(cat.tool_exec("onto.plan.update", {**args, "status": "completed"}))["status"] == "completed"
    batch = cat.tool_batch(
        [
            {"type": "help", "path": "onto.milestone.get", "format": "short"},
            {"type": "exec", "op": "onto.milestone.list", "args": {"project_id": "P-0002"}},
            {"type": "exec", "op": "onto.risk.list", "args": {"min_impact": "high"}},
        ]
    )
    assert [r["status"] for r in batch["results"]] == ["ok", "ok", "ok"]


def test_read_only_sessions_read_the_new_ops_and_refuse_their_writes(example_build: Path) -> None:
    """With read_only, a plan read runs and a plan write is refused before its handler runs."""
    reset_store(seed=True)
    cat = Catalog.open(example_build, read_only=True)
    assert ok(cat.tool_exec("onto.plan.get", {"plan_id": "PL-0001"}))["id"] == "PL-0001"
    refused = cat.tool_exec("onto.plan.delete", {"plan_id": "PL-0001"})
    assert refused["ok"] is False
    assert ok(cat.tool_exec("onto.plan.get", {"plan_id": "PL-0001"}))["milestone_count"] == 2


@pytest.mark.parametrize("topic", sorted(USAGE_GUIDE))
def test_every_usage_guide_step_runs(cat: Catalog, topic: str) -> None:
    """util.buildos.usage_guide's steps name real ops with arguments they accept: each runs, in order (http ones dry)."""
    guide = ok(cat.tool_exec("util.buildos.usage_guide", {"topic": topic}))
    assert guide["steps"]
    for step in guide["steps"]:
        http = cat.expand_tool(step["op"])["handler"]["type"] == "http"
        answer = cat.tool_exec(step["op"], step["args"], dry_run=http)
        assert answer["ok"] is True, (step, answer)
