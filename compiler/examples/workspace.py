"""The cross-entity ops of the example catalogue that seed 001 names: goals, documents, links, search, guides.

``onto.goal.list``, ``onto.document.list``, ``onto.search``, ``onto.edge.link``, ``cal.project.get``,
``cal.project.set``, ``util.schema.field_info``, ``util.buildos.overview`` and
``util.buildos.usage_guide`` (its text in :mod:`toolcat.examples.guide`) work over the in-memory store of
:mod:`toolcat.examples.onto_store`, like the ``onto.task.*`` handlers in :mod:`toolcat.examples.onto`.
An unknown id raises ``LookupError``; linking an entity to itself or twice raises ``ValueError`` /
``FileExistsError``.
"""

from __future__ import annotations

import copy
from collections import Counter
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from . import onto_store
from ._shared import WORD, JSONDict
from .guide import USAGE_GUIDE
from .onto_store import ENTITY_PREFIXES, STORE, now, writable_project

__all__ = [
    "ENTITY_FIELDS",
    "ENTITY_PREFIXES",
    "cal_project_get",
    "cal_project_set",
    "onto_document_list",
    "onto_edge_link",
    "onto_goal_list",
    "onto_search",
    "util_buildos_overview",
    "util_buildos_usage_guide",
    "util_schema_field_info",
]


def _choice(values: list[str], description: str) -> JSONDict:
    """A string field that takes one of ``values`` (as ``util.schema.field_info`` lists it)."""
    return {"type": "string", "values": values, "description": description}


#: What ``util.schema.field_info`` answers: each entity type's fields, their type and allowed values.
ENTITY_FIELDS: dict[str, dict[str, JSONDict]] = {
    "project": {
        "key": {"type": "string", "description": "Short uppercase key used in task references (PAY)."},
        "name": {"type": "string", "description": "Display name."},
        "owner": {"type": "string (email)", "description": "Who is accountable for the project."},
        "status": _choice(["active", "on_hold", "archived"], "Lifecycle."),
        "target_date": {"type": "date or null", "description": "Planned completion date."},
    },
    "task": {
        "title": {"type": "string", "description": "One-line title."},
        "status": _choice(
            ["todo", "in_progress", "blocked", "in_review", "done", "cancelled"],
            "Workflow status; done and cancelled are closed.",
        ),
        "priority": _choice(["urgent", "high", "medium", "low"], "Priority."),
        "assignee": {"type": "string (email) or null", "description": "Who works on it."},
        "labels": {"type": "array of strings", "description": "Free labels."},
        "due_date": {"type": "date or null", "description": "When it is due."},
    },
    "goal": {
        "title": {"type": "string", "description": "The measurable outcome."},
        "status": _choice(["on_track", "at_risk", "off_track", "achieved"], "Health."),
        "target_date": {"type": "date or null", "description": "When the outcome is due."},
        "owner": {"type": "string (email)", "description": "Who reports on it."},
    },
    "document": {
        "title": {"type": "string", "description": "Document title."},
        "type": _choice(["spec", "plan", "runbook", "proposal", "notes"], "Kind."),
        "parent_id": {"type": "string or null", "description": "The document it is filed under (a tree)."},
        "body": {"type": "string (Markdown)", "description": "The content."},
        "position": {"type": "integer", "description": "Place among the documents filed under the same parent."},
    },
    "plan": {
        "title": {"type": "string", "description": "A workstream or phase, e.g. Capture reliability Q1."},
        "status": _choice(["draft", "active", "completed"], "Lifecycle."),
        "goal_id": {"type": "string or null", "description": "The goal the plan serves."},
        "start_date": {"type": "date or null", "description": "When work starts."},
        "end_date": {"type": "date or null", "description": "When the plan should be done."},
    },
    "milestone": {
        "title": {"type": "string", "description": "A checkpoint of a plan."},
        "status": _choice(["pending", "in_progress", "completed", "missed"], "Progress."),
        "due_date": {"type": "date or null", "description": "When it should be reached."},
        "plan_id": {"type": "string", "description": "The plan it belongs to."},
    },
    "risk": {
        "title": {"type": "string", "description": "What could go wrong."},
        "impact": _choice(["low", "medium", "high", "critical"], "Damage."),
        "likelihood": _choice(["low", "medium", "high"], "Chance."),
        "status": _choice(["identified", "mitigated", "occurred", "closed"], "Where it stands."),
        "owner": {"type": "string (email)", "description": "Who watches it."},
    },
    "requirement": {
        "title": {"type": "string", "description": "What must be true, stated so it can be checked."},
        "type": _choice(["functional", "non_functional", "constraint"], "Kind."),
        "priority": _choice(["must", "should", "could", "wont"], "MoSCoW."),
        "status": _choice(["proposed", "accepted", "met", "dropped"], "State."),
    },
}

RELATIONS = ("supports", "blocks", "documented_by", "relates_to", "duplicates", "mitigates", "addresses")
#: The entity types ``onto.search`` covers.
SEARCH_TYPES = ("project", "task", "goal", "plan", "milestone", "risk", "requirement", "document")


def _public(entity: JSONDict) -> JSONDict:
    return copy.deepcopy(entity)


def _entity(entity_id: str) -> JSONDict:
    return onto_store.entity(entity_id)


def _project_exists(project_id: object) -> None:
    if project_id and project_id not in STORE.projects:
        raise LookupError(f"project {project_id!r} not found")


def onto_goal_list(args: JSONDict) -> JSONDict:
    """``onto.goal.list``: goals of one project or all, by status, sorted by target date."""
    _project_exists(args.get("project_id"))
    goals = [
        g
        for g in STORE.goals.values()
        if (not args.get("project_id") or g["project_id"] == args["project_id"])
        and (not args.get("status") or g["status"] in args["status"])
    ]
    goals.sort(key=lambda g: (g["target_date"] is None, g["target_date"] or "", g["id"]))
    limit = int(args.get("limit", 50))
    return {"goals": [_public(g) for g in goals[:limit]], "total": len(goals)}


def onto_document_list(args: JSONDict) -> JSONDict:
    """``onto.document.list``: a project's documents, optionally only one type or the children of one document."""
    project_id = str(args["project_id"])
    _project_exists(project_id)
    documents = [d for d in STORE.documents.values() if d["project_id"] == project_id]
    if args.get("type"):
        documents = [d for d in documents if d["type"] == args["type"]]
    if "parent_id" in args:
        documents = [d for d in documents if d["parent_id"] == args["parent_id"]]
    documents.sort(key=lambda d: (d["title"].lower(), d["id"]))
    include_body = bool(args.get("include_body", False))
    rows = [{k: v for k, v in d.items() if include_body or k != "body"} for d in documents]
    limit = int(args.get("limit", 50))
    return {"documents": [_public(r) for r in rows[:limit]], "total": len(rows)}


def _searchable(kind: str, entity: JSONDict) -> tuple[str, str]:
    title = str(entity.get("title") or entity.get("name") or "")
    body = " ".join(str(entity.get(k) or "") for k in ("description", "body", "key"))
    return title, body if kind != "task" else body + " " + " ".join(entity.get("labels", []))


def onto_search(args: JSONDict) -> JSONDict:
    """``onto.search``: one ranked search over projects, tasks, goals and documents (title words count triple)."""
    terms = WORD.findall(str(args["query"]).lower())
    kinds = args.get("types") or SEARCH_TYPES
    _project_exists(args.get("project_id"))
    scored: list[tuple[float, str, str, JSONDict]] = []
    for kind in kinds:
        for entity in getattr(STORE, kind + "s").values():
            if args.get("project_id") and entity.get("project_id", entity["id"]) != args["project_id"]:
                continue
            title, body = _searchable(kind, entity)
            title_words, body_words = Counter(WORD.findall(title.lower())), Counter(WORD.findall(body.lower()))
            score = sum(3.0 * title_words[t] + body_words[t] for t in terms)
            if score > 0:
                scored.append((score, entity["id"], kind, entity))
    scored.sort(key=lambda item: (-item[0], item[1]))
    limit = int(args.get("limit", 20))
    results = [
        {"type": kind, "id": entity_id, "title": _searchable(kind, entity)[0], "score": score}
        for score, entity_id, kind, entity in scored[:limit]
    ]
    return {"results": results, "total": len(scored)}


def onto_edge_link(args: JSONDict) -> JSONDict:
    """``onto.edge.link``: a typed, directed link between two existing entities (idempotent for the same triple)."""
    source, target, relation = str(args["source_id"]), str(args["target_id"]), str(args["relation"])
    if source == target:
        raise ValueError("an entity cannot be linked to itself: pass two different ids")
    _entity(source)
    _entity(target)
    for edge in STORE.edges.values():
        if (edge["source_id"], edge["target_id"], edge["relation"]) == (source, target, relation):
            return {"edge": _public(edge), "created": False}
    eid = STORE.next_id("E")
    edge = {"id": eid, "source_id": source, "target_id": target, "relation": relation, "created_at": now()}
    STORE.edges[eid] = edge
    return {"edge": _public(edge), "created": True}


def cal_project_get(args: JSONDict) -> JSONDict:
    """``cal.project.get``: the calendar a project's events go to, and its scheduling defaults."""
    project_id = str(args["project_id"])
    _project_exists(project_id)
    calendar = STORE.calendars.get(project_id)
    if calendar is None:
        return {"project_id": project_id, "calendar_id": None, "configured": False}
    return {**_public(calendar), "configured": True}


def util_schema_field_info(args: JSONDict) -> JSONDict:
    """``util.schema.field_info``: the fields of an entity type, or one field, with types and allowed values."""
    entity = str(args["entity"])
    fields = ENTITY_FIELDS[entity]
    field_name = args.get("field")
    if field_name is None:
        return {"entity": entity, "fields": copy.deepcopy(fields)}
    if field_name not in fields:
        raise LookupError(f"{entity} has no field {field_name!r}; its fields are {', '.join(sorted(fields))}")
    return {"entity": entity, "fields": {field_name: copy.deepcopy(fields[field_name])}}


_ENTITY_OPS = {
    "project": "onto.project.list / search / get / create / update / archive; onto.project.graph.get / reorganize",
    "task": "onto.task.list / search / get / create / update / delete; onto.comment.add / list; onto.task.docs.*",
    "goal": "onto.goal.list / get / create / update / delete",
    "plan": "onto.plan.list / get / create / update / delete (milestones are created with their plan)",
    "milestone": "onto.milestone.list / get; file tasks in one with onto.task.create or update (milestone_id)",
    "risk": "onto.risk.list / get",
    "requirement": "onto.requirement.list / get",
    "document": "onto.document.list / search / get / create / update / delete; onto.document.tree.get / move, "
    "onto.document.path.get",
    "edge": "onto.edge.link / unlink; onto.entity.relationships.get, onto.entity.links.get",
    "calendar": "cal.project.get / set, then cal.event.* with the project's calendar_id",
}
_OVERVIEW: JSONDict = {
    "summary": (
        "BuildOS keeps work in Onto: projects contain goals, plans, tasks, risks, requirements and a tree of "
        "documents; a plan serves a goal and holds milestones, and tasks are filed in a plan's milestones; "
        "comments hang off tasks; edges link any two entities (a task supports a goal, mitigates a risk, is "
        "documented by a document); each project may have a calendar."
    ),
    "entities": _ENTITY_OPS,
    "tips": [
        "Find ids with onto.search or the list ops before any write; never guess an id.",
        "util.schema.field_info gives the allowed values of a field (statuses, priorities) before an update.",
        "util.buildos.usage_guide gives step-by-step op sequences for planning, documents and calendars.",
        "Writes to an archived project fail with a permission error.",
    ],
}
#: The entity types ``util.buildos.overview`` counts.
COUNTED = ("project", "task", "goal", "plan", "milestone", "risk", "requirement", "document")


def util_buildos_overview(args: JSONDict) -> JSONDict:
    """``util.buildos.overview``: how the workspace is organised and which ops serve each entity."""
    topic = args.get("topic")
    if topic is None:
        out = copy.deepcopy(_OVERVIEW)
    else:
        out = {"summary": _OVERVIEW["summary"], "entities": {topic: _ENTITY_OPS[str(topic)]}}
    counts = {kind: len(getattr(STORE, kind + "s")) for kind in COUNTED}
    return {**out, "counts": counts}


def cal_project_set(args: JSONDict) -> JSONDict:
    """``cal.project.set``: link a calendar to a project (a new project calendar when none is named) or change its defaults."""
    project = writable_project(str(args["project_id"]))
    current = STORE.calendars.get(project["id"])
    calendar = (
        dict(current)
        if current
        else {
            "project_id": project["id"],
            "calendar_id": f"{project['id'].lower()}@calendar.acme.example",
            "time_zone": "UTC",
            "sync_tasks_with_due_dates": False,
            "default_event_minutes": 30,
        }
    )
    for name in ("calendar_id", "time_zone", "sync_tasks_with_due_dates", "default_event_minutes"):
        if name in args:
            calendar[name] = args[name]
    zone = str(calendar["time_zone"])
    try:
        ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(f"unknown IANA time zone {zone!r} (e.g. 'Europe/Madrid', 'America/New_York', 'UTC')") from None
    STORE.calendars[project["id"]] = calendar
    changed = sorted(k for k in calendar if current is None or calendar[k] != current.get(k))
    return {**_public(calendar), "configured": True, "created": current is None, "changed": changed}


def util_buildos_usage_guide(args: JSONDict) -> JSONDict:
    """``util.buildos.usage_guide``: step-by-step op sequences for one workflow, or the list of workflows."""
    topic = args.get("topic")
    if topic is None:
        return {"topics": {name: guide["title"] for name, guide in USAGE_GUIDE.items()}}
    guide = USAGE_GUIDE[str(topic)]
    return {"topic": topic, **copy.deepcopy(guide)}
