"""Seed 001's graph ops of the example catalogue: a project's entities as a graph, an entity's edges, unlinking, reorganizing.

``onto.project.graph.get``, ``onto.project.graph.reorganize``, ``onto.entity.relationships.get``,
``onto.entity.links.get`` and ``onto.edge.unlink`` work over the in-memory store of
:mod:`toolcat.examples.onto_store`. Two kinds of edge make the graph:

- **containment** (``contains``), held in the records' fields: project → goal, risk, requirement, a
  plan without a goal, a task outside any plan and a top-level document; goal → the plans serving it;
  plan → its milestones and the tasks filed in it without a milestone; milestone → its tasks;
  document → the documents filed under it. They have no edge id: change them with
  ``onto.project.graph.reorganize`` (documents: ``onto.document.tree.move``).
- **links**, the typed edges ``onto.edge.link`` creates (``supports``, ``blocks``, ...), each with an
  ``E-`` id that ``onto.edge.unlink`` removes.
"""

from __future__ import annotations

from ._shared import JSONDict
from .onto_store import STORE, entity, kind_of, now, public, writable_project

__all__ = [
    "onto_edge_unlink",
    "onto_entity_links_get",
    "onto_entity_relationships_get",
    "onto_project_graph_get",
    "onto_project_graph_reorganize",
]

#: The entity types of a project graph, in the order nodes are listed.
GRAPH_TYPES = ("project", "goal", "plan", "milestone", "task", "document", "risk", "requirement")


def _title(record: JSONDict) -> str:
    return str(record.get("title") or record.get("name") or record["id"])


def _node_ref(entity_id: str) -> JSONDict:
    record = entity(entity_id)
    return {"id": entity_id, "type": kind_of(entity_id), "title": _title(record)}


#: The fields that hold an entity's containment parent, first set wins (a project has none).
PARENT_FIELDS = {
    "plan": ("goal_id", "project_id"),
    "milestone": ("plan_id",),
    "task": ("milestone_id", "plan_id", "project_id"),
    "document": ("parent_id", "project_id"),
}


def _parent(kind: str, record: JSONDict) -> str | None:
    """The containment parent of a record (None for a project)."""
    if kind == "project":
        return None
    for name in PARENT_FIELDS.get(kind, ("project_id",)):
        if record.get(name):
            return str(record[name])
    return None


def _project_records(project_id: str) -> list[tuple[str, JSONDict]]:
    """Every entity of a project as (type, record), the project first."""
    found: list[tuple[str, JSONDict]] = [("project", STORE.projects[project_id])]
    for kind in GRAPH_TYPES[1:]:
        table: dict[str, JSONDict] = getattr(STORE, kind + "s")
        found.extend((kind, r) for r in sorted(table.values(), key=lambda r: r["id"]) if r["project_id"] == project_id)
    return found


def _containment(project_id: str) -> list[JSONDict]:
    edges = []
    for kind, record in _project_records(project_id):
        parent = _parent(kind, record)
        if parent is not None:
            edges.append(
                {
                    "edge_id": None,
                    "source_id": parent,
                    "target_id": record["id"],
                    "relation": "contains",
                    "kind": "containment",
                }
            )
    return edges


def _links() -> list[JSONDict]:
    return [
        {
            "edge_id": e["id"],
            "source_id": e["source_id"],
            "target_id": e["target_id"],
            "relation": e["relation"],
            "kind": "link",
        }
        for e in sorted(STORE.edges.values(), key=lambda e: e["id"])
    ]


def _project_of(entity_id: str) -> str:
    record = entity(entity_id)
    return entity_id if kind_of(entity_id) == "project" else str(record["project_id"])


def onto_project_graph_get(args: JSONDict) -> JSONDict:
    """``onto.project.graph.get``: a project's entities as nodes and its containment and link edges."""
    project_id = str(args["project_id"])
    project = entity(project_id, "project")
    types = set(args.get("types") or GRAPH_TYPES) | {"project"}
    nodes = [
        {"id": r["id"], "type": kind, "title": _title(r), "status": r.get("status"), "parent_id": _parent(kind, r)}
        for kind, r in _project_records(project_id)
        if kind in types
    ]
    ids = {n["id"] for n in nodes}
    edges = []
    if args.get("include_containment", True):
        edges += [e for e in _containment(project_id) if e["source_id"] in ids and e["target_id"] in ids]
    if args.get("include_links", True):
        edges += [e for e in _links() if e["source_id"] in ids and e["target_id"] in ids]
    counts: dict[str, int] = {}
    for node in nodes:
        counts[node["type"]] = counts.get(node["type"], 0) + 1
    return {
        "project": {"id": project_id, "key": project["key"], "name": project["name"]},
        "nodes": nodes,
        "edges": edges,
        "counts": counts,
    }


def _edges_of(entity_id: str, include_containment: bool) -> list[JSONDict]:
    edges = _links()
    if include_containment:
        edges = _containment(_project_of(entity_id)) + edges
    return [e for e in edges if entity_id in (e["source_id"], e["target_id"])]


def onto_entity_relationships_get(args: JSONDict) -> JSONDict:
    """``onto.entity.relationships.get``: the edges touching an entity, with their ids, direction and kind."""
    entity_id = str(args["entity_id"])
    me = _node_ref(entity_id)
    direction = str(args.get("direction", "both"))
    rows = []
    for edge in _edges_of(entity_id, bool(args.get("include_containment", True))):
        outgoing = edge["source_id"] == entity_id
        if direction != "both" and (direction == "outgoing") != outgoing:
            continue
        if args.get("relation") and edge["relation"] != args["relation"]:
            continue
        other = edge["target_id"] if outgoing else edge["source_id"]
        rows.append(
            {
                "edge_id": edge["edge_id"],
                "relation": edge["relation"],
                "kind": edge["kind"],
                "direction": "outgoing" if outgoing else "incoming",
                "other": _node_ref(other),
            }
        )
    return {"entity": me, "relationships": rows, "total": len(rows)}


def onto_entity_links_get(args: JSONDict) -> JSONDict:
    """``onto.entity.links.get``: the entities connected to one, grouped by type, with their status."""
    entity_id = str(args["entity_id"])
    me = _node_ref(entity_id)
    wanted = set(args.get("types") or GRAPH_TYPES)
    linked: dict[str, list[JSONDict]] = {}
    for edge in _edges_of(entity_id, bool(args.get("include_containment", True))):
        outgoing = edge["source_id"] == entity_id
        other_id = edge["target_id"] if outgoing else edge["source_id"]
        kind = kind_of(other_id)
        if kind not in wanted:
            continue
        other = entity(other_id)
        via = edge["relation"] if outgoing else f"{edge['relation']} (incoming)"
        linked.setdefault(kind, []).append(
            {"id": other_id, "title": _title(other), "status": other.get("status"), "via": via}
        )
    return {"entity": me, "linked": linked, "total": sum(len(v) for v in linked.values())}


def onto_edge_unlink(args: JSONDict) -> JSONDict:
    """``onto.edge.unlink``: remove one link edge by id (containment is changed by reorganizing, not unlinking)."""
    edge_id = str(args["edge_id"])
    edge = STORE.edges.get(edge_id)
    if edge is None:
        raise LookupError(
            f"edge {edge_id!r} not found (it may be unlinked already); "
            "onto.entity.relationships.get lists an entity's edges with their ids"
        )
    writable_project(_project_of(edge["source_id"]))
    del STORE.edges[edge_id]
    return {"edge": public(edge), "removed": True}


# -- reorganize ------------------------------------------------------------------------------------
#: The types an entity of each movable type may be filed under.
PARENT_TYPES = {"task": ("milestone", "plan", "project"), "milestone": ("plan",), "plan": ("goal", "project")}


def _fields_for(kind: str, parent_id: str) -> JSONDict:
    """The containment fields that file an entity of ``kind`` under ``parent_id``."""
    parent_kind = kind_of(parent_id)
    if kind == "task":
        if parent_kind == "milestone":
            return {"milestone_id": parent_id, "plan_id": STORE.milestones[parent_id]["plan_id"]}
        return {"milestone_id": None, "plan_id": parent_id if parent_kind == "plan" else None}
    if kind == "milestone":
        return {"plan_id": parent_id}
    return {"goal_id": parent_id if parent_kind == "goal" else None}


def _planned_move(project_id: str, move: JSONDict) -> JSONDict:
    """One move checked against the project and the containment rules: what would change."""
    entity_id, parent_id = str(move["id"]), str(move["parent_id"])
    kind = kind_of(entity_id)
    if kind == "document":
        raise ValueError(f"{entity_id} is a document: file documents with onto.document.tree.move")
    if kind not in PARENT_TYPES:
        raise ValueError(f"{entity_id} is a {kind}, which always sits under its project and cannot be moved")
    record = entity(entity_id)
    parent_kind = kind_of(parent_id)
    if parent_kind not in PARENT_TYPES[kind]:
        raise ValueError(f"a {kind} can be filed under a {' or '.join(PARENT_TYPES[kind])}, not a {parent_kind}")
    if record["project_id"] != project_id or _project_of(parent_id) != project_id:
        raise ValueError(f"{entity_id} and {parent_id} must both be in project {project_id}")
    return {
        "id": entity_id,
        "type": kind,
        "from_parent_id": _parent(kind, record),
        "to_parent_id": parent_id,
        "fields": _fields_for(kind, parent_id),
    }


def onto_project_graph_reorganize(args: JSONDict) -> JSONDict:
    """``onto.project.graph.reorganize``: refile tasks, milestones and plans, all or nothing; ``preview`` only reports."""
    project_id = str(args["project_id"])
    writable_project(project_id)
    ids = [str(move["id"]) for move in args["moves"]]
    twice = sorted({i for i in ids if ids.count(i) > 1})
    if twice:
        raise ValueError(f"each entity may be moved once per call; {', '.join(twice)} appear more than once")
    planned = [_planned_move(project_id, move) for move in args["moves"]]
    changes = [p for p in planned if p["from_parent_id"] != p["to_parent_id"]]
    preview = bool(args.get("preview", False))
    stamp = now()
    for change in [] if preview else changes:
        record = entity(change["id"])
        record.update(change["fields"], updated_at=stamp)
        if change["type"] == "milestone":  # its tasks follow it into the new plan
            for task in STORE.tasks.values():
                if task["milestone_id"] == change["id"]:
                    task.update(plan_id=change["fields"]["plan_id"], updated_at=stamp)
    return {
        "project_id": project_id,
        "applied": not preview,
        "changes": [{k: v for k, v in c.items() if k != "fields"} for c in changes],
        "unchanged": [p["id"] for p in planned if p not in changes],
    }
