"""Generate a synthetic but plausible catalogue source tree of N tools, for benchmarks.

Usage from a benchmark::

    sys.path.insert(0, str(Path(__file__).parent)); from gen_catalog import generate
    generate(Path("/tmp/src10k"), 10_000)

Deterministic for a given (n_tools, seed). Namespaces and nodes scale with N
(about 40 tools per node, nodes two or three levels deep), so node shards stay small.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import yaml

DOMAINS = [
    "billing",
    "crm",
    "storage",
    "files",
    "calendar",
    "mail",
    "chat",
    "tickets",
    "deploy",
    "metrics",
    "logs",
    "search",
    "maps",
    "weather",
    "finance",
    "hr",
    "inventory",
    "orders",
    "shipping",
    "payments",
    "analytics",
    "docs",
    "wiki",
    "media",
    "images",
    "video",
    "audio",
    "translate",
    "auth",
    "users",
    "teams",
    "projects",
    "tasks",
    "notes",
    "forms",
    "surveys",
    "ads",
    "seo",
    "social",
    "news",
]
OBJECTS = [
    "invoice",
    "customer",
    "bucket",
    "object",
    "file",
    "event",
    "message",
    "channel",
    "ticket",
    "release",
    "metric",
    "dashboard",
    "alert",
    "query",
    "route",
    "forecast",
    "account",
    "employee",
    "item",
    "order",
    "shipment",
    "refund",
    "report",
    "page",
    "asset",
    "clip",
    "track",
    "token",
    "user",
    "team",
    "project",
    "task",
    "note",
    "form",
    "response",
    "campaign",
    "keyword",
    "post",
    "article",
    "subscription",
]
VERBS = {
    "list": "List",
    "get": "Fetch one",
    "create": "Create a new",
    "update": "Update an existing",
    "delete": "Delete a",
    "search": "Search for",
    "export": "Export",
    "archive": "Archive a",
    "restore": "Restore a",
    "share": "Share a",
    "count": "Count",
    "sync": "Synchronise",
}
QUALIFIERS = [
    "by id",
    "with filters",
    "for the current user",
    "across all workspaces",
    "in bulk",
    "with pagination",
    "for a date range",
    "by owner",
    "by status",
    "by label",
]


def _tool(rng: random.Random, namespace: str, obj: str, verb: str, index: int) -> dict[str, object]:
    qualifier = rng.choice(QUALIFIERS)
    props: dict[str, object] = {
        f"{obj}_id": {"type": "string", "description": f"Identifier of the {obj}."},
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 500,
            "default": 50,
            "description": "Maximum number of results.",
        },
    }
    if verb in ("create", "update"):
        props["fields"] = {
            "type": "object",
            "description": f"Fields of the {obj} to set.",
            "additionalProperties": {"type": "string"},
        }
    if verb == "search":
        props["query"] = {"type": "string", "description": f"Free-text query over {obj} records."}
    return {
        "id": f"{namespace}.{obj}_{index}.{verb}" if index else f"{namespace}.{obj}.{verb}",
        "summary": f"{VERBS[verb]} {obj} records in {namespace} {qualifier}",
        "description": f"{VERBS[verb]} {obj} records held by the {namespace} service {qualifier}. "
        f"Returns the {obj} objects as JSON.",
        "args_schema": {
            "type": "object",
            "properties": props,
            "required": [f"{obj}_id"] if verb in ("get", "update", "delete") else [],
        },
        "tags": sorted({namespace, obj, verb}),
        "kind": "read" if verb in ("list", "get", "search", "count", "export") else "write",
        "examples": [{"description": f"{verb} a {obj}", "args": {f"{obj}_id": f"{obj[:3]}-1"}}],
    }


def generate(root: Path, n_tools: int, seed: int = 0) -> Path:
    """Write ``n_tools`` tools under ``root`` (created); returns ``root``."""
    rng = random.Random(seed)
    root.mkdir(parents=True, exist_ok=True)
    (root / "_node.yaml").write_text(
        yaml.safe_dump({"title": f"Synthetic catalogue ({n_tools} tools)", "summary": "Generated for benchmarks."})
    )
    per_node = 40
    made = 0
    node_index = 0
    while made < n_tools:
        domain = DOMAINS[node_index % len(DOMAINS)]
        round_ = node_index // len(DOMAINS)
        namespace = domain if round_ == 0 else f"{domain}{round_}"
        obj = OBJECTS[(node_index * 7) % len(OBJECTS)]
        folder = root / domain / f"{obj}s" if round_ == 0 else root / domain / f"{obj}s{round_}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder.parent / "_node.yaml").write_text(
            yaml.safe_dump({"title": domain.title(), "summary": f"Tools of the {domain} service."})
        )
        (folder / "_node.yaml").write_text(
            yaml.safe_dump({"title": f"{obj.title()}s", "summary": f"Operations on {domain} {obj}s."})
        )
        tools = []
        for k in range(min(per_node, n_tools - made)):
            verb = list(VERBS)[k % len(VERBS)]
            tools.append(_tool(rng, namespace, obj, verb, k // len(VERBS)))
        (folder / "tools.yaml").write_text(yaml.safe_dump({"tools": tools}, sort_keys=False))
        made += len(tools)
        node_index += 1
    return root


if __name__ == "__main__":
    generate(Path(sys.argv[1]), int(sys.argv[2]))
