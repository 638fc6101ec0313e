"""LiveMCPBench as a labelled set, report-only: 527 MCP tools of 70 servers and three kinds of request.

LiveMCPBench (icip-cas/LiveMCPBench, Apache-2.0) is not in ``../shared/corpus``: point ``TOOLCAT_LIVEMCPBENCH`` at a
checkout of it (or a folder holding its ``tools/LiveMCPTool/tools.json`` and
``baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json`` at those paths). Without it the set is
skipped with that reason. Nothing here is tuned on it: it is a set the project's search was never fitted to, the
kind issue 33's owners measure on (their copy of it is their own; this one is built from the public files alone).

The requests, each labelled with the tool ids (``<server>.<tool>``, as ``bench_tokens.mcp_source`` names them) that
answer it:

* ``task``: each of the 95 tasks' question, labelled with every tool its annotator listed (any of them counts);
* ``step``: each annotated step of a task whose steps and tools are as many, labelled with the tool of its place;
* ``agent``: each query Claude Sonnet 4 sent to the benchmark's tool router (``route``) while doing a task,
  labelled with the tools of that route's answer the agent then called (``execute-tool``); a query none of whose
  answer it used is left out (what it wanted is unknown), which favours the queries the benchmark's router (Qwen3
  Embedding 0.6B, top 3) answered usefully. The router's ``<tool_assistant>`` wrapper is removed and its
  ``server:`` / ``tool:`` lines kept as the agent wrote them.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_tokens import mcp_source, slug  # noqa: E402

Queries = list[tuple[str, set[str]]]
TOOLS = Path("tools/LiveMCPTool/tools.json")
ANNOTATION = Path("baseline/annotation/claude-sonnet-4-20250514_Qwen3-Embedding-0.6B.json")
KINDS = ("task", "step", "agent")


def root() -> Path | None:
    """The LiveMCPBench checkout ``TOOLCAT_LIVEMCPBENCH`` names, or None."""
    value = os.environ.get("TOOLCAT_LIVEMCPBENCH")
    return Path(value) if value else None


def missing() -> str | None:
    """Why the set cannot be built here, or None."""
    where = root()
    if where is None:
        return "TOOLCAT_LIVEMCPBENCH is not set (a checkout of icip-cas/LiveMCPBench)"
    for part in (TOOLS, ANNOTATION):
        if not (where / part).is_file():
            return f"{where / part} is missing"
    return None


def _schema(schema: Any) -> dict[str, Any]:
    """An MCP input schema as Draft 2020-12 accepts it, or an empty object schema.

    Draft-04's boolean ``exclusiveMinimum``/``Maximum`` become numbers and ``$schema`` is dropped; a schema still
    invalid (or not an object's) becomes ``{"type": "object", "properties": {}}``.
    """
    from jsonschema import Draft202012Validator, SchemaError  # noqa: PLC0415

    def fix(node: Any) -> Any:
        if isinstance(node, list):
            return [fix(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: fix(value) for key, value in node.items() if key != "$schema"}
        for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            if isinstance(out.get(flag), bool) and out.pop(flag) and isinstance(out.get(bound), int | float):
                out[flag] = out.pop(bound)
        return out

    fixed = fix(schema)
    try:
        Draft202012Validator.check_schema(fixed)
    except SchemaError:
        return {"type": "object", "properties": {}}
    return fixed if isinstance(fixed, dict) and fixed.get("type") == "object" else {"type": "object", "properties": {}}


def _numbered(text: str) -> list[str]:
    """An annotator's numbered lines (``1. a``, ``2. b``) without their numbers."""
    return [re.sub(r"^\s*\d+\.\s*", "", line).strip() for line in text.splitlines() if line.strip()]


def _agent_query(arguments: str) -> str | None:
    try:
        query = json.loads(arguments).get("query")
    except (ValueError, AttributeError):
        return None
    if not isinstance(query, str):
        return None
    text = query.replace("<tool_assistant>", "").replace("</tool_assistant>", "")
    return "\n".join(line.strip() for line in text.splitlines() if line.strip()) or None


def requests(
    where: Path, ids: dict[tuple[str, str], str], by_name: dict[str, set[str]]
) -> list[tuple[str, str, set[str]]]:
    """(kind, request, gold ids) of every labelled request, in the file's order; a repeated request's labels merged."""
    tasks = json.loads((where / ANNOTATION).read_text(encoding="utf-8"))
    out: dict[tuple[str, str], set[str]] = {}

    def add(kind: str, text: str, gold: set[str]) -> None:
        if gold and text:
            out.setdefault((kind, text), set()).update(gold)

    for task in tasks:
        meta = task.get("Annotator Metadata") or {}
        names = _numbered(str(meta.get("Tools") or ""))
        golds = [by_name.get(name, set()) for name in names]
        add("task", str(task.get("Question") or "").strip(), set().union(*golds) if golds else set())
        steps = _numbered(str(meta.get("Steps") or ""))
        if len(steps) == len(golds):
            for step, gold in zip(steps, golds, strict=True):
                add("step", step, gold)
        found: list[tuple[str, set[tuple[str, str]]]] = []  # each route's query and the tools it returned
        calls: dict[str, int] = {}
        for message in task.get("messages") or []:
            if message.get("role") == "tool" and message.get("tool_call_id") in calls:
                listed = re.findall(
                    r"server_name: ([^\\\n]+?)\\n\s*tool_name: ([^\\\n]+?)\\n", str(message.get("content"))
                )
                found[calls[message["tool_call_id"]]][1].update((slug(a.strip()), slug(b.strip())) for a, b in listed)
            for call in message.get("tool_calls") or []:
                function = call.get("function") or {}
                if function.get("name") == "route":
                    query = _agent_query(str(function.get("arguments") or ""))
                    if query is not None:
                        calls[str(call.get("id"))] = len(found)
                        found.append((query, set()))
                elif function.get("name") == "execute-tool":
                    try:
                        arguments = json.loads(str(function.get("arguments") or ""))
                    except ValueError:
                        continue
                    key = (slug(str(arguments.get("server_name"))), slug(str(arguments.get("tool_name"))))
                    for query, listed_keys in found:  # every earlier route whose answer listed the tool used
                        if key in listed_keys and key in ids:
                            add("agent", query, {ids[key]})
    return [(kind, text, gold) for (kind, text), gold in out.items()]


def livemcp_source(dest: Path, kinds: tuple[str, ...] = KINDS) -> tuple[dict[str, str], Queries]:
    """The set's sources written to ``dest`` (a namespace a server); returns ({}, queries of ``kinds``)."""
    where = root()
    why = missing()
    if why or where is None:
        raise FileNotFoundError(why)
    servers = json.loads((where / TOOLS).read_text(encoding="utf-8"))
    triples: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    aliases: dict[str, str] = {}
    for entry in servers:
        for key, server in (entry.get("tools") or {}).items():
            namespace = str(server.get("server_name") or key)
            aliases[slug(str(entry.get("name") or namespace))] = slug(namespace)
            triples.extend(
                (namespace, tool, _schema(tool.get("inputSchema") or {})) for tool in server.get("tools") or []
            )
    mcp_source(triples, dest, "LiveMCPBench")
    ids: dict[tuple[str, str], str] = {}
    by_name: dict[str, set[str]] = {}
    for namespace, tool, _ in triples:
        tool_id = f"{slug(namespace)}.{slug(tool['name'])}"
        ids[(slug(namespace), slug(tool["name"]))] = tool_id
        by_name.setdefault(str(tool["name"]), set()).add(tool_id)
    for alias, namespace in aliases.items():  # an execute-tool call may name the server by its entry's title
        for (space, name), tool_id in list(ids.items()):
            if space == namespace:
                ids.setdefault((alias, name), tool_id)
    return {}, [(text, gold) for kind, text, gold in requests(where, ids, by_name) if kind in kinds]


def livemcp_agent_source(dest: Path) -> tuple[dict[str, str], Queries]:
    """The ``agent`` requests alone (what an LLM agent wrote to its tool router)."""
    return livemcp_source(dest, ("agent",))
