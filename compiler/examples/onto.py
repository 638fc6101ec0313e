"""The ``onto.task.*``, ``onto.comment.*`` and ``onto.project.*`` work-tracking tools of the example catalogue.

A task may be filed in one of its project's plans and in one of that plan's milestones
(``plan_id``, ``milestone_id``; seed 001's plan → milestone → task).

They work over the in-memory store of :mod:`toolcat.examples.onto_store` (demo data loaded on
import; :func:`reset_store` empties or re-seeds it). An unknown id raises ``LookupError``; a change
to an archived project's tasks raises ``PermissionError``.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable
from typing import Any

from ._shared import WORD, JSONDict, term_score
from .onto_store import STORE, entity, now

__all__ = [
    "AGENT_IDENTITY",
    "CLOSED_STATUSES",
    "PRIORITY_RANK",
    "TASK_STATUSES",
    "onto_comment_add",
    "onto_comment_list",
    "onto_project_archive",
    "onto_project_create",
    "onto_project_get",
    "onto_project_list",
    "onto_project_search",
    "onto_project_update",
    "onto_task_create",
    "onto_task_delete",
    "onto_task_get",
    "onto_task_list",
    "onto_task_search",
    "onto_task_update",
]

TASK_STATUSES = ("todo", "in_progress", "blocked", "in_review", "done", "cancelled")
CLOSED_STATUSES = frozenset({"done", "cancelled"})
PRIORITY_RANK = {"urgent": 0, "high": 1, "medium": 2, "low": 3}
AGENT_IDENTITY = "agent@acme.example"


def _task(task_id: str) -> JSONDict:
    task: JSONDict | None = STORE.tasks.get(task_id)
    if task is None:
        raise LookupError(f"task {task_id!r} not found")
    return task


def _project(project_id: str) -> JSONDict:
    project: JSONDict | None = STORE.projects.get(project_id)
    if project is None:
        raise LookupError(f"project {project_id!r} not found")
    return project


def _writable_project(project_id: str) -> JSONDict:
    project = _project(project_id)
    if project["status"] == "archived":
        raise PermissionError(f"project {project_id!r} is archived; its tasks are read-only")
    return project


def _public(entity: JSONDict) -> JSONDict:
    return copy.deepcopy(entity)


def _task_sort_key(sort: str) -> Callable[[JSONDict], Any]:
    if sort == "priority":
        return lambda t: (PRIORITY_RANK[t["priority"]], t["id"])
    if sort == "due_date":
        return lambda t: (t["due_date"] is None, t["due_date"] or "", t["id"])
    return lambda t: (t[sort], t["id"])


def onto_task_list(args: JSONDict) -> JSONDict:
    """``onto.task.list``: filter, sort and page through tasks."""
    tasks: list[JSONDict] = list(STORE.tasks.values())
    if args.get("project_id"):
        _project(str(args["project_id"]))
        tasks = [t for t in tasks if t["project_id"] == args["project_id"]]
    statuses = args.get("status")
    if statuses:
        tasks = [t for t in tasks if t["status"] in statuses]
    if args.get("assignee"):
        tasks = [t for t in tasks if t["assignee"] == args["assignee"]]
    labels = args.get("labels")
    if labels:
        tasks = [t for t in tasks if set(labels) <= set(t["labels"])]
    if args.get("due_before"):
        tasks = [t for t in tasks if t["due_date"] is not None and t["due_date"] < args["due_before"]]
    for placed in ("plan_id", "milestone_id"):
        if args.get(placed):
            tasks = [t for t in tasks if t[placed] == args[placed]]
    sort = str(args.get("sort", "updated_at"))
    descending = str(args.get("order", "desc")) == "desc"
    tasks.sort(key=_task_sort_key(sort))
    if descending:
        tasks.reverse()
    limit = int(args.get("limit", 50))
    cursor = args.get("cursor")
    try:
        offset = int(cursor) if cursor else 0
    except ValueError:
        raise ValueError(f"invalid cursor {cursor!r}: pass next_cursor from a previous page") from None
    page = tasks[offset : offset + limit]
    more = offset + limit < len(tasks)
    return {
        "tasks": [_public(t) for t in page],
        "total": len(tasks),
        "next_cursor": str(offset + limit) if more else None,
    }


def onto_task_search(args: JSONDict) -> JSONDict:
    """``onto.task.search``: rank tasks by query terms in title, labels and description."""
    query = str(args["query"]).strip()
    terms = WORD.findall(query.lower())
    project_id = args.get("project_id")
    if project_id:
        _project(str(project_id))
    include_closed = bool(args.get("include_closed", False))
    limit = int(args.get("limit", 20))
    scored: list[tuple[float, str, JSONDict]] = []
    for task in STORE.tasks.values():
        if project_id and task["project_id"] != project_id:
            continue
        if not include_closed and task["status"] in CLOSED_STATUSES:
            continue
        if task["id"].lower() == query.lower():
            scored.append((100.0, task["id"], task))
            continue
        score = term_score(terms, task["title"], task["description"], task["labels"])
        if score > 0:
            scored.append((score, task["id"], task))
    scored.sort(key=lambda item: (-item[0], item[1]))
    return {
        "results": [{"task": _public(t), "score": s} for s, _, t in scored[:limit]],
        "total": len(scored),
    }


def onto_task_get(args: JSONDict) -> JSONDict:
    """``onto.task.get``: one task by id."""
    return _public(_task(str(args["task_id"])))


def onto_task_create(args: JSONDict) -> JSONDict:
    """``onto.task.create``: create a task in an existing, non-archived project."""
    project_id = str(args["project_id"])
    _writable_project(project_id)
    title = str(args["title"]).strip()
    if not title:
        raise ValueError("title must not be blank")
    stamp = now()
    tid = STORE.next_id("T")
    task = {
        "id": tid,
        "project_id": project_id,
        "title": title,
        "description": str(args.get("description", "")),
        "status": str(args.get("status", "todo")),
        "priority": str(args.get("priority", "medium")),
        "assignee": args.get("assignee"),
        "labels": sorted(set(args.get("labels", []))),
        "due_date": args.get("due_date"),
        "plan_id": None,
        "milestone_id": None,
        "created_at": stamp,
        "updated_at": stamp,
    }
    task.update(_placement(project_id, args.get("plan_id"), args.get("milestone_id")))
    STORE.tasks[tid] = task
    return _public(task)


_TASK_FIELDS = ("title", "description", "status", "priority", "assignee", "labels", "due_date", "project_id")
_PLACEMENT = ("plan_id", "milestone_id")


def _placement(project_id: str, plan_id: object, milestone_id: object) -> JSONDict:
    """Where a task sits in its project's plans: a milestone implies its plan; both must be of the task's project."""
    if milestone_id:
        milestone = entity(str(milestone_id), "milestone")
        if plan_id and plan_id != milestone["plan_id"]:
            raise ValueError(
                f"milestone {milestone_id} belongs to plan {milestone['plan_id']}, not {plan_id}: "
                "pass only milestone_id (its plan follows)"
            )
        plan_id = milestone["plan_id"]
    if plan_id and entity(str(plan_id), "plan")["project_id"] != project_id:
        raise ValueError(f"plan {plan_id} is not in project {project_id}; a task's plan must be in its own project")
    return {"plan_id": plan_id or None, "milestone_id": milestone_id or None}


def _new_placement(task: JSONDict, args: JSONDict, project_id: str) -> JSONDict:
    """The plan and milestone after an update: what was given; a move to another project leaves both empty.

    ``milestone_id`` alone sets the plan to the milestone's (or, as null, keeps the plan); ``plan_id``
    alone files the task directly in that plan, with no milestone.
    """
    moved = project_id != task["project_id"]
    kept_plan = None if moved or args.get("milestone_id") else task["plan_id"]
    plan_id = args.get("plan_id", kept_plan)
    kept_milestone = None if moved or "plan_id" in args else task["milestone_id"]
    milestone_id = args.get("milestone_id", kept_milestone)
    return _placement(project_id, plan_id, milestone_id)


def onto_task_update(args: JSONDict) -> JSONDict:
    """``onto.task.update``: change only the fields given."""
    task = _task(str(args["task_id"]))
    _writable_project(task["project_id"])
    changes = {name: args[name] for name in _TASK_FIELDS if name in args}
    if not changes and not any(name in args for name in _PLACEMENT):
        raise ValueError("nothing to update: pass at least one field besides task_id")
    if "project_id" in changes:
        _writable_project(str(changes["project_id"]))
    if any(name in args for name in _PLACEMENT) or "project_id" in changes:
        changes.update(_new_placement(task, args, str(changes.get("project_id", task["project_id"]))))
    if "labels" in changes:
        changes["labels"] = sorted(set(changes["labels"]))
    if "title" in changes and not str(changes["title"]).strip():
        raise ValueError("title must not be blank")
    task.update(changes)
    task["updated_at"] = now()
    return _public(task)


def onto_task_delete(args: JSONDict) -> JSONDict:
    """``onto.task.delete``: delete a task and its comments."""
    task_id = str(args["task_id"])
    task = _task(task_id)
    _writable_project(task["project_id"])
    del STORE.tasks[task_id]
    doomed = [cid for cid, c in STORE.comments.items() if c["task_id"] == task_id]
    for cid in doomed:
        del STORE.comments[cid]
    return {"id": task_id, "deleted": True, "comments_deleted": len(doomed)}


def onto_comment_add(args: JSONDict) -> JSONDict:
    """``onto.comment.add``: add a Markdown comment to a task."""
    task = _task(str(args["task_id"]))
    _writable_project(task["project_id"])
    body = str(args["body"]).strip()
    if not body:
        raise ValueError("body must not be blank")
    cid = STORE.next_id("C")
    comment = {"id": cid, "task_id": task["id"], "author": AGENT_IDENTITY, "body": body, "created_at": now()}
    STORE.comments[cid] = comment
    notify = bool(args.get("notify_assignee", True))
    notified = [task["assignee"]] if notify and task["assignee"] else []
    return {"comment": _public(comment), "notified": notified}


def onto_comment_list(args: JSONDict) -> JSONDict:
    """``onto.comment.list``: a task's comments, oldest or newest first."""
    task = _task(str(args["task_id"]))
    comments = [c for c in STORE.comments.values() if c["task_id"] == task["id"]]
    comments.sort(key=lambda c: (c["created_at"], c["id"]), reverse=str(args.get("order", "asc")) == "desc")
    limit = int(args.get("limit", 50))
    return {"comments": [_public(c) for c in comments[:limit]], "total": len(comments)}


def _task_summary(project_id: str) -> JSONDict:
    today = dt.datetime.now(dt.UTC).date().isoformat()
    tasks = [t for t in STORE.tasks.values() if t["project_id"] == project_id]
    open_tasks = [t for t in tasks if t["status"] not in CLOSED_STATUSES]
    return {
        "total": len(tasks),
        "open": len(open_tasks),
        "done": sum(1 for t in tasks if t["status"] == "done"),
        "overdue": sum(1 for t in open_tasks if t["due_date"] is not None and t["due_date"] < today),
    }


def onto_project_list(args: JSONDict) -> JSONDict:
    """``onto.project.list``: projects by status, owner and name."""
    status = str(args.get("status", "active"))
    projects: list[JSONDict] = list(STORE.projects.values())
    if status != "all":
        projects = [p for p in projects if p["status"] == status]
    if args.get("owner"):
        projects = [p for p in projects if p["owner"] == args["owner"]]
    if args.get("query"):
        needle = str(args["query"]).lower()
        projects = [p for p in projects if needle in p["name"].lower() or needle in p["key"].lower()]
    projects.sort(key=lambda p: p["key"])
    limit = int(args.get("limit", 50))
    return {"projects": [_public(p) for p in projects[:limit]], "total": len(projects)}


def onto_project_search(args: JSONDict) -> JSONDict:
    """``onto.project.search``: rank projects by query words in their key and name (triple) and description."""
    terms = WORD.findall(str(args["query"]).lower())
    status = str(args.get("status", "all"))
    scored: list[tuple[float, str, JSONDict]] = []
    for project in STORE.projects.values():
        if status != "all" and project["status"] != status:
            continue
        score = term_score(terms, f"{project['key']} {project['name']}", project["description"])
        if score > 0:
            scored.append((score, project["id"], project))
    scored.sort(key=lambda item: (-item[0], item[1]))
    limit = int(args.get("limit", 10))
    return {"results": [{"project": _public(p), "score": s} for s, _, p in scored[:limit]], "total": len(scored)}


def onto_project_get(args: JSONDict) -> JSONDict:
    """``onto.project.get``: one project, with task counts unless turned off."""
    project = _public(_project(str(args["project_id"])))
    if args.get("include_task_summary", True):
        project["task_summary"] = _task_summary(project["id"])
    return project


def onto_project_create(args: JSONDict) -> JSONDict:
    """``onto.project.create``: a new active project with a unique key."""
    key = str(args["key"])
    if any(p["key"] == key for p in STORE.projects.values()):
        raise FileExistsError(f"a project with key {key!r} already exists")
    stamp = now()
    pid = STORE.next_id("P")
    project = {
        "id": pid,
        "key": key,
        "name": str(args["name"]).strip(),
        "description": str(args.get("description", "")),
        "owner": str(args["owner"]),
        "status": "active",
        "target_date": args.get("target_date"),
        "created_at": stamp,
        "updated_at": stamp,
        "archived_at": None,
    }
    STORE.projects[pid] = project
    return _public(project)


def onto_project_update(args: JSONDict) -> JSONDict:
    """``onto.project.update``: change only the fields given (not the key, not archiving)."""
    project = _writable_project(str(args["project_id"]))
    changes: JSONDict = {n: args[n] for n in ("name", "description", "owner", "status", "target_date") if n in args}
    if not changes:
        raise ValueError("nothing to update: pass at least one field besides project_id")
    project.update(changes)
    project["updated_at"] = now()
    return _public(project)


def onto_project_archive(args: JSONDict) -> JSONDict:
    """``onto.project.archive``: make a project read-only, optionally cancelling open tasks."""
    project = _project(str(args["project_id"]))
    if project["status"] == "archived":
        return {"project": _public(project), "cancelled_task_ids": []}
    open_tasks = sorted(
        (t for t in STORE.tasks.values() if t["project_id"] == project["id"] and t["status"] not in CLOSED_STATUSES),
        key=lambda t: t["id"],
    )
    if open_tasks and not args.get("cancel_open_tasks", False):
        raise ValueError(
            f"project {project['id']} has {len(open_tasks)} open task(s); close or move them, "
            "or pass cancel_open_tasks: true"
        )
    stamp = now()
    for task in open_tasks:
        task["status"] = "cancelled"
        task["updated_at"] = stamp
    project["status"] = "archived"
    project["archived_at"] = stamp
    project["updated_at"] = stamp
    return {"project": _public(project), "cancelled_task_ids": [t["id"] for t in open_tasks]}
