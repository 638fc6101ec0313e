"""Seed 001's document ops of the example catalogue: read, search, write and file documents in a project's tree.

``onto.document.get / search / create / update / delete``, ``onto.document.tree.get``,
``onto.document.path.get``, ``onto.document.tree.move`` and the task workspace ops
``onto.task.docs.list`` and ``onto.task.docs.create_or_attach`` work over the in-memory store of
:mod:`toolcat.examples.onto_store`. Each project's documents form a tree: a document is filed under
another (``parent_id``, null at the top level) at a ``position`` among its siblings. A task's
documents are the ones it links with a ``documented_by`` edge. An unknown id raises
``LookupError``; a move that would put a document under itself raises ``ValueError``.
"""

from __future__ import annotations

from ._shared import WORD, JSONDict, term_score
from .onto_store import STORE, entity, now, public, require_project, writable_project

__all__ = [
    "onto_document_create",
    "onto_document_delete",
    "onto_document_get",
    "onto_document_path_get",
    "onto_document_search",
    "onto_document_tree_get",
    "onto_document_tree_move",
    "onto_document_update",
    "onto_task_docs_create_or_attach",
    "onto_task_docs_list",
]

#: The relation that files a document in a task's workspace (task --documented_by--> document).
TASK_DOC_RELATION = "documented_by"


def _children(project_id: str, parent_id: str | None) -> list[JSONDict]:
    """The documents filed directly under ``parent_id`` (None: the top level), in tree order."""
    rows = [d for d in STORE.documents.values() if d["project_id"] == project_id and d["parent_id"] == parent_id]
    return sorted(rows, key=lambda d: (d["position"], d["id"]))


def _renumber(project_id: str, parent_id: str | None) -> None:
    for position, doc in enumerate(_children(project_id, parent_id)):
        doc["position"] = position


def _ancestors(document: JSONDict) -> list[JSONDict]:
    """The documents above ``document``, from the top of the tree down to its parent."""
    chain: list[JSONDict] = []
    parent_id = document["parent_id"]
    while parent_id is not None:
        parent = STORE.documents[parent_id]
        chain.insert(0, parent)
        parent_id = parent["parent_id"]
    return chain


def _place(document: JSONDict, parent_id: str | None, position: object) -> None:
    """File ``document`` under ``parent_id`` at ``position`` (the end when None), renumbering both sibling lists."""
    old_parent = document["parent_id"]
    siblings = [d for d in _children(document["project_id"], parent_id) if d["id"] != document["id"]]
    index = len(siblings) if position is None else min(int(str(position)), len(siblings))
    siblings.insert(index, document)
    document["parent_id"] = parent_id
    for number, doc in enumerate(siblings):
        doc["position"] = number
    if old_parent != parent_id:
        _renumber(document["project_id"], old_parent)


def _parent_in(project_id: str, parent_id: object) -> str | None:
    if not parent_id:
        return None
    parent = entity(str(parent_id), "document")
    if parent["project_id"] != project_id:
        raise ValueError(f"document {parent_id} is in project {parent['project_id']}, not {project_id}")
    return str(parent["id"])


def _row(document: JSONDict, include_body: bool) -> JSONDict:
    return {k: v for k, v in public(document).items() if include_body or k != "body"}


def onto_document_get(args: JSONDict) -> JSONDict:
    """``onto.document.get``: one document with its body, its path in the tree and its children."""
    document = entity(str(args["document_id"]), "document")
    out = _row(document, bool(args.get("include_body", True)))
    out["path"] = [{"id": d["id"], "title": d["title"]} for d in _ancestors(document)]
    out["children"] = [{"id": d["id"], "title": d["title"]} for d in _children(document["project_id"], document["id"])]
    return out


def onto_document_search(args: JSONDict) -> JSONDict:
    """``onto.document.search``: rank documents by query words in their title (triple) and body."""
    require_project(args.get("project_id"))
    terms = WORD.findall(str(args["query"]).lower())
    scored: list[tuple[float, str, JSONDict]] = []
    for document in STORE.documents.values():
        if args.get("project_id") and document["project_id"] != args["project_id"]:
            continue
        if args.get("type") and document["type"] != args["type"]:
            continue
        score = term_score(terms, document["title"], document["body"])
        if score > 0:
            scored.append((score, document["id"], document))
    scored.sort(key=lambda item: (-item[0], item[1]))
    limit = int(args.get("limit", 20))
    results = [
        {"id": d["id"], "project_id": d["project_id"], "title": d["title"], "type": d["type"], "score": s}
        for s, _, d in scored[:limit]
    ]
    return {"results": results, "total": len(scored)}


def _new_document(project_id: str, args: JSONDict) -> JSONDict:
    writable_project(project_id)
    title = str(args["title"]).strip()
    if not title:
        raise ValueError("title must not be blank")
    stamp = now()
    document: JSONDict = {
        "id": STORE.next_id("D"),
        "project_id": project_id,
        "parent_id": None,
        "position": 0,
        "title": title,
        "type": str(args.get("type", "notes")),
        "body": str(args.get("body", "")),
        "created_at": stamp,
        "updated_at": stamp,
    }
    parent_id = _parent_in(project_id, args.get("parent_id"))
    STORE.documents[document["id"]] = document
    _place(document, parent_id, args.get("position"))
    return document


def onto_document_create(args: JSONDict) -> JSONDict:
    """``onto.document.create``: a document in a project's tree (at the end of its folder unless positioned)."""
    return _row(_new_document(str(args["project_id"]), args), True)


def onto_document_update(args: JSONDict) -> JSONDict:
    """``onto.document.update``: retitle, retype, or replace or append to the body (the tree place stays)."""
    document = entity(str(args["document_id"]), "document")
    writable_project(document["project_id"])
    changes: JSONDict = {name: args[name] for name in ("title", "type") if name in args}
    if "body" in args:
        body = str(args["body"])
        if args.get("body_mode", "replace") == "append" and document["body"]:
            body = document["body"].rstrip("\n") + "\n\n" + body
        changes["body"] = body
    if not changes:
        raise ValueError("nothing to update: pass title, type or body besides document_id")
    if "title" in changes and not str(changes["title"]).strip():
        raise ValueError("title must not be blank")
    document.update(changes)
    document["updated_at"] = now()
    return _row(document, True)


def _subtree(document: JSONDict) -> list[JSONDict]:
    found = [document]
    for child in _children(document["project_id"], document["id"]):
        found.extend(_subtree(child))
    return found


def onto_document_delete(args: JSONDict) -> JSONDict:
    """``onto.document.delete``: delete a document; its children are refused, moved up or deleted with it."""
    document = entity(str(args["document_id"]), "document")
    writable_project(document["project_id"])
    children = _children(document["project_id"], document["id"])
    mode = str(args.get("children", "refuse"))
    if children and mode == "refuse":
        raise ValueError(
            f"document {document['id']} has {len(children)} child document(s); pass children: move_up to file them "
            "under its parent, or children: delete to delete them too"
        )
    doomed = _subtree(document) if mode == "delete" else [document]
    for child in children if mode == "move_up" else []:
        _place(child, document["parent_id"], None)
    edges = [eid for eid, e in STORE.edges.items() if {e["source_id"], e["target_id"]} & {d["id"] for d in doomed}]
    for eid in edges:
        del STORE.edges[eid]
    for doc in doomed:
        del STORE.documents[doc["id"]]
    _renumber(document["project_id"], document["parent_id"])
    return {
        "id": document["id"],
        "deleted": sorted(d["id"] for d in doomed),
        "moved_up": sorted(c["id"] for c in children) if mode == "move_up" else [],
        "edges_deleted": len(edges),
    }


def _tree_node(document: JSONDict, depth: int, max_depth: int) -> JSONDict:
    children = _children(document["project_id"], document["id"])
    node: JSONDict = {"id": document["id"], "title": document["title"], "type": document["type"]}
    if depth < max_depth:
        node["children"] = [_tree_node(c, depth + 1, max_depth) for c in children]
    elif children:
        node["children_not_shown"] = len(children)
    return node


def onto_document_tree_get(args: JSONDict) -> JSONDict:
    """``onto.document.tree.get``: a project's document tree (or the part under ``root_id``), to ``max_depth``."""
    project_id = str(args["project_id"])
    entity(project_id, "project")
    max_depth = int(args.get("max_depth", 5))
    root_id = args.get("root_id")
    if root_id:
        root = entity(str(root_id), "document")
        if root["project_id"] != project_id:
            raise ValueError(f"document {root_id} is not in project {project_id}")
        tops = _children(project_id, root["id"])
    else:
        tops = _children(project_id, None)
    total = sum(1 for d in STORE.documents.values() if d["project_id"] == project_id)
    return {
        "project_id": project_id,
        "root_id": root_id or None,
        "tree": [_tree_node(d, 1, max_depth) for d in tops],
        "total": total,
    }


def onto_document_path_get(args: JSONDict) -> JSONDict:
    """``onto.document.path.get``: where a document is filed: its ancestors from the top, and the path as text."""
    document = entity(str(args["document_id"]), "document")
    chain = [*_ancestors(document), document]
    return {
        "document_id": document["id"],
        "project_id": document["project_id"],
        "path": [{"id": d["id"], "title": d["title"], "position": d["position"]} for d in chain],
        "path_text": " / ".join(d["title"] for d in chain),
        "depth": len(chain),
    }


def onto_document_tree_move(args: JSONDict) -> JSONDict:
    """``onto.document.tree.move``: file a document (with everything under it) under another, or at the top."""
    document = entity(str(args["document_id"]), "document")
    writable_project(document["project_id"])
    parent_id = _parent_in(document["project_id"], args.get("new_parent_id"))
    if parent_id is not None and document in [*_ancestors(STORE.documents[parent_id]), STORE.documents[parent_id]]:
        raise ValueError(
            f"cannot move {document['id']} under {parent_id}: {parent_id} is {document['id']} itself or inside it; "
            "move the child out first or pick another parent"
        )
    from_parent = document["parent_id"]
    _place(document, parent_id, args.get("position"))
    document["updated_at"] = now()
    return {
        "document_id": document["id"],
        "from_parent_id": from_parent,
        "parent_id": parent_id,
        "position": document["position"],
        "path_text": " / ".join(d["title"] for d in [*_ancestors(document), document]),
    }


# -- a task's documents -----------------------------------------------------------------------------
def _task_doc_edges(task_id: str) -> list[JSONDict]:
    edges = [e for e in STORE.edges.values() if e["source_id"] == task_id and e["relation"] == TASK_DOC_RELATION]
    return sorted(edges, key=lambda e: e["id"])


def onto_task_docs_list(args: JSONDict) -> JSONDict:
    """``onto.task.docs.list``: the documents a task links with documented_by edges."""
    task = entity(str(args["task_id"]), "task")
    include_body = bool(args.get("include_body", False))
    rows = [
        {**_row(STORE.documents[e["target_id"]], include_body), "edge_id": e["id"]}
        for e in _task_doc_edges(task["id"])
        if e["target_id"] in STORE.documents
    ]
    return {"task_id": task["id"], "documents": rows, "total": len(rows)}


def onto_task_docs_create_or_attach(args: JSONDict) -> JSONDict:
    """``onto.task.docs.create_or_attach``: attach an existing document to a task, or create one in its project."""
    task = entity(str(args["task_id"]), "task")
    writable_project(task["project_id"])
    given = sorted(name for name in ("title", "type", "body", "parent_id") if name in args)
    if args.get("document_id"):
        if given:
            raise ValueError(f"pass either document_id (attach) or title (create), not both: drop {', '.join(given)}")
        document = entity(str(args["document_id"]), "document")
        if document["project_id"] != task["project_id"]:
            raise ValueError(f"document {document['id']} is in another project than task {task['id']}")
        created = False
    elif args.get("title"):
        document = _new_document(task["project_id"], args)
        created = True
    else:
        raise ValueError("pass document_id to attach an existing document, or title (and body) to create one")
    for edge in _task_doc_edges(task["id"]):
        if edge["target_id"] == document["id"]:
            return {"document": _row(document, False), "edge_id": edge["id"], "created": False, "attached": False}
    eid = STORE.next_id("E")
    STORE.edges[eid] = {
        "id": eid,
        "source_id": task["id"],
        "target_id": document["id"],
        "relation": TASK_DOC_RELATION,
        "created_at": now(),
    }
    return {"document": _row(document, False), "edge_id": eid, "created": created, "attached": True}
