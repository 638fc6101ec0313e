"""The text of ``util.buildos.usage_guide``: seed 001's workflows as sequences of ops, with the reasons for each step.

Every step names an op of the example catalogue and arguments it accepts against the demo data, so
an agent can follow a guide call by call (tests/reader/test_gateway_toolset.py runs each step).
"""

from __future__ import annotations

from ._shared import JSONDict

__all__ = ["USAGE_GUIDE"]

USAGE_GUIDE: dict[str, JSONDict] = {
    "getting_started": {
        "title": "Find your way around a workspace before changing anything",
        "steps": [
            {"op": "util.buildos.overview", "args": {}, "why": "Which entities exist and which ops serve them."},
            {"op": "onto.project.search", "args": {"query": "payments"}, "why": "Resolve a project name to its id."},
            {"op": "onto.project.get", "args": {"project_id": "P-0001"}, "why": "Its owner, dates and task counts."},
            {
                "op": "onto.project.graph.get",
                "args": {"project_id": "P-0001", "types": ["goal", "plan", "milestone"]},
                "why": "How its goals, plans and milestones hang together.",
            },
        ],
        "tips": [
            "Never guess an id: search or list first.",
            "Read once, then act; the data does not change by itself.",
        ],
    },
    "planning": {
        "title": "Plan work: a plan with milestones, then tasks filed in a milestone",
        "steps": [
            {"op": "onto.goal.list", "args": {"project_id": "P-0001"}, "why": "The goal the plan will serve."},
            {
                "op": "onto.plan.create",
                "args": {
                    "project_id": "P-0001",
                    "title": "Chargeback automation",
                    "goal_id": "G-0002",
                    "milestones": [{"title": "Dispute evidence collected automatically", "due_date": "2027-02-12"}],
                },
                "why": "A plan and its milestones in one call.",
            },
            {"op": "onto.milestone.list", "args": {"plan_id": "PL-0001"}, "why": "A plan's milestones and their ids."},
            {
                "op": "onto.task.create",
                "args": {
                    "project_id": "P-0001",
                    "title": "Export dispute evidence from the acquirer",
                    "milestone_id": "M-0001",
                },
                "why": "A task filed in one of those milestones (its plan follows).",
            },
            {"op": "onto.milestone.get", "args": {"milestone_id": "M-0001"}, "why": "Check progress and late tasks."},
        ],
        "tips": [
            "Plans group work; milestones are dated checkpoints inside a plan; tasks are the work itself.",
            "Move tasks between milestones with onto.task.update (milestone_id) or onto.project.graph.reorganize.",
        ],
    },
    "documents": {
        "title": "Write and file documents in a project's tree",
        "steps": [
            {"op": "onto.document.tree.get", "args": {"project_id": "P-0001"}, "why": "Where documents are filed."},
            {
                "op": "onto.document.create",
                "args": {
                    "project_id": "P-0001",
                    "title": "Capture retry alerts",
                    "type": "runbook",
                    "parent_id": "D-0001",
                },
                "why": "A document in the right folder.",
            },
            {"op": "onto.document.search", "args": {"query": "retry"}, "why": "Find a document by its words."},
            {"op": "onto.document.path.get", "args": {"document_id": "D-0002"}, "why": "Where a document sits."},
            {
                "op": "onto.task.docs.create_or_attach",
                "args": {"task_id": "T-0003", "document_id": "D-0002"},
                "why": "Attach a document to the task it explains.",
            },
        ],
        "tips": [
            "Read a document's body with onto.document.get before updating it; append rather than overwrite.",
            "A document cannot be moved under itself or one of its children.",
        ],
    },
    "calendar": {
        "title": "Schedule a project's meetings on the project's calendar",
        "steps": [
            {"op": "cal.project.get", "args": {"project_id": "P-0001"}, "why": "The calendar id and time zone."},
            {
                "op": "cal.project.set",
                "args": {"project_id": "P-0003", "time_zone": "Europe/Dublin"},
                "why": "Give a project without a calendar its own.",
            },
            {
                "op": "cal.event.list",
                "args": {
                    "calendar_id": "p-0001@calendar.acme.example",
                    "time_min": "2026-12-01T00:00:00+01:00",
                    "time_max": "2026-12-08T00:00:00+01:00",
                },
                "why": "What is already booked on it.",
            },
        ],
        "tips": ["Create project meetings on the project's calendar, in its time zone, not on the user's own."],
    },
    "linking": {
        "title": "Relate entities and read how they connect",
        "steps": [
            {
                "op": "onto.edge.link",
                "args": {"source_id": "T-0003", "target_id": "RQ-0002", "relation": "addresses"},
                "why": "Record that a task meets a requirement.",
            },
            {"op": "onto.entity.links.get", "args": {"entity_id": "T-0003"}, "why": "Everything the task touches."},
            {
                "op": "onto.entity.relationships.get",
                "args": {"entity_id": "T-0003", "include_containment": False},
                "why": "The edges with their ids, to unlink one.",
            },
        ],
        "tips": [
            "Links are typed and directed: the task supports the goal, not the other way round.",
            "Containment (plan → milestone → task) is not a link: change it with onto.project.graph.reorganize.",
        ],
    },
}
