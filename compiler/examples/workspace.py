"""The cross-entity ops of the example catalogue that seed 001 names: goals, documents, links, search, guides.

``onto.goal.list``, ``onto.document.list``, ``onto.search``, ``onto.edge.link``, ``cal.project.get``,
``util.schema.field_info`` and ``util.buildos.overview`` work over the in-memory store of
:mod:`toolcat.examples.onto_store`, like the ``onto.task.*`` handlers in :mod:`toolcat.examples.onto`.
An unknown id raises ``LookupError``; linking an entity to itself or twice raises ``ValueError`` /
``FileExistsError``.
"""

from __future__ import annotations

import copy
from collections import Counter

from ._shared import WORD, JSONDict
from .onto_store import STORE, now

__all__ = [
    "ENTITY_FIELDS",
    "ENTITY_PREFIXES",
    "cal_project_get",
    "onto_document_list",
    "onto_edge_link",
    "onto_goal_list",
    "onto_search",
    "util_buildos_overview",
    "util_schema_field_info",
]

#: Which store table an id prefix names (``T-0001`` is a task).
ENTITY_PREFIXES = {"P": "project", "T": "task", "C": "comment", "G": "goal", "D": "document"}

#: What ``util.schema.field_info`` answers: each entity type's fields, their type and allowed values.
ENTITY_FIELDS: dict[str, dict[str, JSONDict]] = {
    "project": {
        "key": {"type": "string", "description": "Short uppercase key used in task references (PAY)."},
        "name": {"type": "string", "description": "Display name."},
        "owner": {"type": "string (email)", "description": "Who is accountable for the project."},
        "status": {"type": "string", "values": ["active", "on_hold", "archived"], "description": "Lifecycle."},
        "target_date": {"type": "date or null", "description": "Planned completion date."},
    },
    "task": {
        "title": {"type": "string", "description": "One-line title."},
        "status": {
            "type": "string",
            "values": ["todo", "in_progress", "blocked", "in_review", "done", "cancelled"],
            "description": "Workflow status; done and cancelled are closed.",
        },
        "priority": {"type": "string", "values": ["urgent", "high", "medium", "low"], "description": "Priority."},
        "assignee": {"type": "string (email) or null", "description": "Who works on it."},
        "labels": {"type": "array of strings", "description": "Free labels."},
        "due_date": {"type": "date or null", "description": "When it is due."},
    },
    "goal": {
        "title": {"type": "string", "description": "The measurable outcome."},
        "status": {
            "type": "string",
            "values": ["on_track", "at_risk", "off_track", "achieved"],
            "description": "Health.",
        },
        "target_date": {"type": "date or null", "description": "When the outcome is due."},
        "owner": {"type": "string (email)", "description": "Who reports on it."},
    },
    "document": {
        "title": {"type": "string", "description": "Document title."},
        "type": {"type": "string", "values": ["spec", "plan", "runbook", "proposal", "notes"], "description": "Kind."},
        "parent_id": {"type": "string or null", "description": "The document it is filed under (a tree)."},
        "body": {"type": "string (Markdown)", "description": "The content."},
    },
}

RELATIONS = ("supports", "blocks", "documented_by", "relates_to", "duplicates")


def _public(entity: JSONDict) -> JSONDict:
    return copy.deepcopy(entity)


def _table(entity_id: str) -> dict[str, JSONDict]:
    kind = ENTITY_PREFIXES.get(entity_id.split("-", 1)[0])
    if kind is None:
        raise LookupError(f"{entity_id!r} is not an Onto id (P-, T-, C-, G- or D- followed by digits)")
    table: dict[str, JSONDict] = getattr(STORE, kind + "s")
    return table


def _entity(entity_id: str) -> JSONDict:
    entity = _table(entity_id).get(entity_id)
    if entity is None:
        raise LookupError(f"{entity_id!r} not found")
    return entity


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
    kinds = args.get("types") or ["project", "task", "goal", "document"]
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
    "project": "onto.project.list / get / create / update / archive",
    "task": "onto.task.list / search / get / create / update / delete; onto.comment.add / list",
    "goal": "onto.goal.list",
    "document": "onto.document.list",
    "edge": "onto.edge.link",
    "calendar": "cal.project.get, then cal.event.*",
}
_OVERVIEW: JSONDict = {
    "summary": (
        "BuildOS keeps work in Onto: projects contain tasks, goals and documents; comments hang off tasks; "
        "edges link any two entities (a task supports a goal, a document documents a task); each project "
        "may have a calendar."
    ),
    "entities": _ENTITY_OPS,
    "tips": [
        "Find ids with onto.search or the list ops before any write; never guess an id.",
        "util.schema.field_info gives the allowed values of a field (statuses, priorities) before an update.",
        "Writes to an archived project fail with a permission error.",
    ],
}


def util_buildos_overview(args: JSONDict) -> JSONDict:
    """``util.buildos.overview``: how the workspace is organised and which ops serve each entity."""
    topic = args.get("topic")
    if topic is None:
        out = copy.deepcopy(_OVERVIEW)
    else:
        out = {"summary": _OVERVIEW["summary"], "entities": {topic: _ENTITY_OPS[str(topic)]}}
    counts = {kind: len(getattr(STORE, kind + "s")) for kind in ("project", "task", "goal", "document")}
    return {**out, "counts": counts}
