"""Seed 001's planning ops of the example catalogue: goals, plans and their milestones, risks and requirements.

``onto.goal.get / create / update / delete``, ``onto.plan.*``, ``onto.milestone.list / get``,
``onto.risk.list / get`` and ``onto.requirement.list / get`` work over the in-memory store of
:mod:`toolcat.examples.onto_store`. A plan serves at most one goal (``goal_id``) and holds its
milestones; milestones are created with their plan (``milestones`` of ``onto.plan.create``,
``add_milestones`` of ``onto.plan.update``), and tasks are filed in them with ``onto.task.create``
or ``onto.task.update`` (``milestone_id``). An unknown id raises ``LookupError``; a change in an
archived project raises ``PermissionError``.
"""

from __future__ import annotations

from collections.abc import Iterable

from ._shared import JSONDict
from .onto_store import STORE, entity, now, public, require_project, writable_project

__all__ = [
    "IMPACT_RANK",
    "onto_goal_create",
    "onto_goal_delete",
    "onto_goal_get",
    "onto_goal_update",
    "onto_milestone_get",
    "onto_milestone_list",
    "onto_plan_create",
    "onto_plan_delete",
    "onto_plan_get",
    "onto_plan_list",
    "onto_plan_update",
    "onto_requirement_get",
    "onto_requirement_list",
    "onto_risk_get",
    "onto_risk_list",
]

#: Risk impact and likelihood levels, lowest first (``min_impact`` filters on it).
IMPACT_RANK = {"low": 0, "medium": 1, "high": 2, "critical": 3}
_PRIORITY_RANK = {"must": 0, "should": 1, "could": 2, "wont": 3}
_CLOSED = frozenset({"done", "cancelled"})


def _by_date(rows: Iterable[JSONDict], field: str) -> list[JSONDict]:
    """Rows sorted by a nullable date field (no date last), then id."""
    return sorted(rows, key=lambda r: (r[field] is None, r[field] or "", r["id"]))


def _pointer(record: JSONDict) -> JSONDict:
    return {"id": record["id"], "title": record["title"], "status": record["status"]}


def _linked(entity_id: str, relation: str) -> list[JSONDict]:
    """The tasks linked to ``entity_id`` by ``relation`` edges (task --relation--> entity), as pointers."""
    ids = sorted(
        e["source_id"] for e in STORE.edges.values() if e["target_id"] == entity_id and e["relation"] == relation
    )
    return [_pointer(STORE.tasks[i]) for i in ids if i in STORE.tasks]


def _drop_edges(entity_id: str) -> int:
    doomed = [eid for eid, e in STORE.edges.items() if entity_id in (e["source_id"], e["target_id"])]
    for eid in doomed:
        del STORE.edges[eid]
    return len(doomed)


def _changes(args: JSONDict, fields: Iterable[str], id_field: str, *, more: bool = False) -> JSONDict:
    """The fields of ``args`` to change; ValueError when there are none and nothing ``more`` is asked."""
    changes = {name: args[name] for name in fields if name in args}
    if not changes and not more:
        raise ValueError(f"nothing to update: pass at least one field besides {id_field}")
    if "title" in changes and not str(changes["title"]).strip():
        raise ValueError("title must not be blank")
    return changes


def _goal_of_project(goal_id: object, project_id: str) -> object:
    if goal_id and entity(str(goal_id), "goal")["project_id"] != project_id:
        raise ValueError(f"goal {goal_id} is not in project {project_id}; a plan serves a goal of its own project")
    return goal_id or None


# -- goals ------------------------------------------------------------------------------------------
def onto_goal_get(args: JSONDict) -> JSONDict:
    """``onto.goal.get``: one goal, the plans that serve it and the tasks linked as supporting it."""
    goal = public(entity(str(args["goal_id"]), "goal"))
    plans = [_pointer(p) for p in STORE.plans.values() if p["goal_id"] == goal["id"]]
    return {**goal, "plans": sorted(plans, key=lambda p: p["id"]), "supporting_tasks": _linked(goal["id"], "supports")}


def onto_goal_create(args: JSONDict) -> JSONDict:
    """``onto.goal.create``: a goal in a writable project; the owner defaults to the project's."""
    project = writable_project(str(args["project_id"]))
    stamp = now()
    gid = STORE.next_id("G")
    goal = {
        "id": gid,
        "project_id": project["id"],
        "title": str(args["title"]).strip(),
        "description": str(args.get("description", "")),
        "status": str(args.get("status", "on_track")),
        "target_date": args.get("target_date"),
        "owner": str(args.get("owner") or project["owner"]),
        "created_at": stamp,
        "updated_at": stamp,
    }
    if not goal["title"]:
        raise ValueError("title must not be blank")
    STORE.goals[gid] = goal
    return public(goal)


def onto_goal_update(args: JSONDict) -> JSONDict:
    """``onto.goal.update``: change only the fields given (``target_date: null`` clears it)."""
    goal = entity(str(args["goal_id"]), "goal")
    writable_project(goal["project_id"])
    goal.update(_changes(args, ("title", "description", "status", "target_date", "owner"), "goal_id"))
    goal["updated_at"] = now()
    return public(goal)


def onto_goal_delete(args: JSONDict) -> JSONDict:
    """``onto.goal.delete``: delete a goal and its edges; the plans that served it serve no goal."""
    goal_id = str(args["goal_id"])
    goal = entity(goal_id, "goal")
    writable_project(goal["project_id"])
    detached = sorted(p["id"] for p in STORE.plans.values() if p["goal_id"] == goal_id)
    for plan_id in detached:
        STORE.plans[plan_id]["goal_id"] = None
    del STORE.goals[goal_id]
    return {"id": goal_id, "deleted": True, "edges_deleted": _drop_edges(goal_id), "plans_detached": detached}


# -- plans ------------------------------------------------------------------------------------------
def _milestones_of(plan_id: str) -> list[JSONDict]:
    return _by_date((m for m in STORE.milestones.values() if m["plan_id"] == plan_id), "due_date")


def _progress(tasks: list[JSONDict]) -> JSONDict:
    return {"tasks": len(tasks), "done": sum(1 for t in tasks if t["status"] == "done")}


def _plan_row(plan: JSONDict) -> JSONDict:
    tasks = [t for t in STORE.tasks.values() if t["plan_id"] == plan["id"]]
    return {**public(plan), "milestone_count": len(_milestones_of(plan["id"])), "progress": _progress(tasks)}


def onto_plan_list(args: JSONDict) -> JSONDict:
    """``onto.plan.list``: plans of one project or all, by status or goal, sorted by end date."""
    require_project(args.get("project_id"))
    plans = [
        p
        for p in STORE.plans.values()
        if (not args.get("project_id") or p["project_id"] == args["project_id"])
        and (not args.get("status") or p["status"] in args["status"])
        and (not args.get("goal_id") or p["goal_id"] == args["goal_id"])
    ]
    limit = int(args.get("limit", 50))
    return {"plans": [_plan_row(p) for p in _by_date(plans, "end_date")[:limit]], "total": len(plans)}


def _milestone_row(milestone: JSONDict) -> JSONDict:
    tasks = [t for t in STORE.tasks.values() if t["milestone_id"] == milestone["id"]]
    return {**public(milestone), "progress": _progress(tasks)}


def onto_plan_get(args: JSONDict) -> JSONDict:
    """``onto.plan.get``: a plan with its milestones (and, on request, its tasks)."""
    plan = entity(str(args["plan_id"]), "plan")
    out = _plan_row(plan)
    if args.get("include_milestones", True):
        out["milestones"] = [_milestone_row(m) for m in _milestones_of(plan["id"])]
    if args.get("include_tasks", False):
        tasks = sorted((t for t in STORE.tasks.values() if t["plan_id"] == plan["id"]), key=lambda t: t["id"])
        out["tasks"] = [{**_pointer(t), "milestone_id": t["milestone_id"], "due_date": t["due_date"]} for t in tasks]
    return out


def _add_milestones(plan: JSONDict, milestones: Iterable[JSONDict], stamp: str) -> list[str]:
    added = []
    for given in milestones:
        mid = STORE.next_id("M")
        STORE.milestones[mid] = {
            "id": mid,
            "plan_id": plan["id"],
            "project_id": plan["project_id"],
            "title": str(given["title"]).strip(),
            "description": str(given.get("description", "")),
            "status": str(given.get("status", "pending")),
            "due_date": given.get("due_date"),
            "created_at": stamp,
            "updated_at": stamp,
        }
        added.append(mid)
    return added


def _check_dates(plan: JSONDict) -> None:
    if plan["start_date"] and plan["end_date"] and plan["end_date"] < plan["start_date"]:
        raise ValueError(f"end_date {plan['end_date']} is before start_date {plan['start_date']}")


def onto_plan_create(args: JSONDict) -> JSONDict:
    """``onto.plan.create``: a plan in a writable project, with the milestones given, answered as onto.plan.get."""
    project = writable_project(str(args["project_id"]))
    stamp = now()
    plan = {
        "id": STORE.next_id("PL"),
        "project_id": project["id"],
        "title": str(args["title"]).strip(),
        "description": str(args.get("description", "")),
        "status": str(args.get("status", "draft")),
        "goal_id": _goal_of_project(args.get("goal_id"), project["id"]),
        "start_date": args.get("start_date"),
        "end_date": args.get("end_date"),
        "created_at": stamp,
        "updated_at": stamp,
    }
    if not plan["title"]:
        raise ValueError("title must not be blank")
    _check_dates(plan)
    STORE.plans[plan["id"]] = plan
    _add_milestones(plan, args.get("milestones", []), stamp)
    return onto_plan_get({"plan_id": plan["id"]})


def onto_plan_update(args: JSONDict) -> JSONDict:
    """``onto.plan.update``: change only the fields given, and add milestones; answered as onto.plan.get."""
    plan = entity(str(args["plan_id"]), "plan")
    writable_project(plan["project_id"])
    fields = ("title", "description", "status", "goal_id", "start_date", "end_date")
    changes = _changes(args, fields, "plan_id", more=bool(args.get("add_milestones")))
    if "goal_id" in changes:
        changes["goal_id"] = _goal_of_project(changes["goal_id"], plan["project_id"])
    _check_dates({**plan, **changes})
    plan.update(changes)
    plan["updated_at"] = now()
    _add_milestones(plan, args.get("add_milestones", []), plan["updated_at"])
    return onto_plan_get({"plan_id": plan["id"]})


def onto_plan_delete(args: JSONDict) -> JSONDict:
    """``onto.plan.delete``: delete a plan and its milestones; its tasks stay in the project, unfiled."""
    plan_id = str(args["plan_id"])
    plan = entity(plan_id, "plan")
    writable_project(plan["project_id"])
    milestones = [m["id"] for m in _milestones_of(plan_id)]
    detached = sorted(t["id"] for t in STORE.tasks.values() if t["plan_id"] == plan_id)
    for task_id in detached:
        STORE.tasks[task_id].update(plan_id=None, milestone_id=None, updated_at=now())
    for mid in milestones:
        _drop_edges(mid)
        del STORE.milestones[mid]
    del STORE.plans[plan_id]
    return {
        "id": plan_id,
        "deleted": True,
        "milestones_deleted": sorted(milestones),
        "tasks_detached": detached,
        "edges_deleted": _drop_edges(plan_id),
    }


# -- milestones -------------------------------------------------------------------------------------
def onto_milestone_list(args: JSONDict) -> JSONDict:
    """``onto.milestone.list``: milestones of a plan or a project, by status and due date, soonest first."""
    require_project(args.get("project_id"))
    if args.get("plan_id"):
        entity(str(args["plan_id"]), "plan")
    milestones = [
        m
        for m in STORE.milestones.values()
        if (not args.get("plan_id") or m["plan_id"] == args["plan_id"])
        and (not args.get("project_id") or m["project_id"] == args["project_id"])
        and (not args.get("status") or m["status"] in args["status"])
        and (not args.get("due_before") or (m["due_date"] is not None and m["due_date"] < args["due_before"]))
    ]
    limit = int(args.get("limit", 50))
    rows = [_milestone_row(m) for m in _by_date(milestones, "due_date")[:limit]]
    return {"milestones": rows, "total": len(milestones)}


def onto_milestone_get(args: JSONDict) -> JSONDict:
    """``onto.milestone.get``: one milestone with its plan and the tasks filed in it."""
    milestone = entity(str(args["milestone_id"]), "milestone")
    tasks = sorted((t for t in STORE.tasks.values() if t["milestone_id"] == milestone["id"]), key=lambda t: t["id"])
    rows = [{**_pointer(t), "assignee": t["assignee"], "due_date": t["due_date"]} for t in tasks]
    open_late = [
        t["id"]
        for t in tasks
        if t["status"] not in _CLOSED
        and t["due_date"]
        and milestone["due_date"]
        and t["due_date"] > milestone["due_date"]
    ]
    plan = STORE.plans[milestone["plan_id"]]
    return {
        **_milestone_row(milestone),
        "plan": _pointer(plan),
        "tasks": rows,
        "tasks_due_after_milestone": open_late,
    }


# -- risks and requirements -------------------------------------------------------------------------
def onto_risk_list(args: JSONDict) -> JSONDict:
    """``onto.risk.list``: risks by project, status and minimum impact, the most severe first."""
    require_project(args.get("project_id"))
    floor = IMPACT_RANK[str(args.get("min_impact", "low"))]
    risks = [
        r
        for r in STORE.risks.values()
        if (not args.get("project_id") or r["project_id"] == args["project_id"])
        and (not args.get("status") or r["status"] in args["status"])
        and IMPACT_RANK[r["impact"]] >= floor
    ]
    risks.sort(key=lambda r: (-IMPACT_RANK[r["impact"]], -IMPACT_RANK[r["likelihood"]], r["id"]))
    limit = int(args.get("limit", 50))
    return {"risks": [public(r) for r in risks[:limit]], "total": len(risks)}


def onto_risk_get(args: JSONDict) -> JSONDict:
    """``onto.risk.get``: one risk with the tasks that mitigate it."""
    risk = public(entity(str(args["risk_id"]), "risk"))
    return {**risk, "mitigating_tasks": _linked(risk["id"], "mitigates")}


def onto_requirement_list(args: JSONDict) -> JSONDict:
    """``onto.requirement.list``: requirements by project, type, priority and status, musts first."""
    require_project(args.get("project_id"))
    requirements = [
        r
        for r in STORE.requirements.values()
        if (not args.get("project_id") or r["project_id"] == args["project_id"])
        and (not args.get("type") or r["type"] == args["type"])
        and (not args.get("priority") or r["priority"] in args["priority"])
        and (not args.get("status") or r["status"] in args["status"])
    ]
    requirements.sort(key=lambda r: (_PRIORITY_RANK[r["priority"]], r["id"]))
    limit = int(args.get("limit", 50))
    return {"requirements": [public(r) for r in requirements[:limit]], "total": len(requirements)}


def onto_requirement_get(args: JSONDict) -> JSONDict:
    """``onto.requirement.get``: one requirement with the tasks that address it."""
    requirement = public(entity(str(args["requirement_id"]), "requirement"))
    return {**requirement, "addressed_by": _linked(requirement["id"], "addresses")}
