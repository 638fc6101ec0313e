"""Tokens of injecting every tool definition vs a progressive flow, on the example catalogue and real MCP tool lists.

Flow = gateway system prompt + one search returning 5 pointers + one expanded schema.
Each real list is compiled into a temporary toolcat catalogue (ids ``<source>.<name>``,
summary = first sentence of the description, kind from ``readOnlyHint``) and measured on
the real build. Every tool's annotation title (or description) is used as a query to
check that the flow still finds the right tool (hit@5). Counts: o200k_base (bpe-openai).

Run: ``make bench-tokens`` (or ``.venv/bin/python bench/bench_tokens.py``).
"""

from __future__ import annotations

import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from toolcat.build import build  # noqa: E402
from toolcat.build.contributors.exports.definitions import export_specs  # noqa: E402
from toolcat.build.tokens import count_tokens  # noqa: E402
from toolcat.format.dialects import SESSIONLESS_CALL  # noqa: E402
from toolcat.importers.mcp import arguments_schema  # noqa: E402
from toolcat.reader import Catalog  # noqa: E402
from toolcat.reader.folder import BuildFolder  # noqa: E402

CORPUS = REPO.parent / "shared" / "corpus" / "tools" / "mcp"
TARGET = 0.97
#: The issue-13 flow: one purpose, the tool it should find, and the ceiling (and goal) for the flow's share of
#: injecting every GitHub MCP tool.
FLOW_QUERY = "open an issue in a repository"
FLOW_TOOL = "github.create_issue"
FLOW_TARGET, FLOW_GOAL = 0.03, 0.02
#: Per dialect: the search call and the describe call an agent makes (the dialect's protocol table).
FLOW_CALLS: dict[str, tuple[str, str]] = {
    "gateway": ("tool_help(query)", "tool_help(path=id)"),
    "spec": ('search_tool_by_category(query, "")', "expand_tool(id)"),
    "namespaced": ("find_tool(purpose)", "tool_describe(name)"),
}


def first_sentence(text: str) -> str:
    text = " ".join(text.split())
    match = re.match(r"(.+?[.!?])(\s|$)", text)
    sentence = match.group(1) if match else text
    return sentence[:200] or "No description."


def slug(name: str) -> str:
    text = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).lower()
    text = re.sub(r"[^a-z0-9_]+", "_", text).strip("_")
    return text if re.match(r"[a-z]", text) else f"t_{text}"


def docker_schema(tool: dict[str, Any]) -> dict[str, Any]:
    return tool["inputSchema"] if "inputSchema" in tool else arguments_schema(tool.get("arguments", []))


def mcp_source(tools: list[tuple[str, str, dict[str, Any]]], root: Path, title: str) -> tuple[Path, dict[str, str]]:
    """Write toolcat sources for (namespace, raw MCP tool, schema) triples; return the folder and id → query."""
    by_namespace: dict[str, list[dict[str, Any]]] = {}
    queries: dict[str, str] = {}
    seen: set[str] = set()
    for namespace, raw, schema in tools:
        tool_id = f"{slug(namespace)}.{slug(raw['name'])}"
        if tool_id in seen:
            continue
        seen.add(tool_id)
        description = (raw.get("description") or raw["name"]).strip()
        annotations = raw.get("annotations") or {}
        entry = {
            "id": tool_id,
            "summary": first_sentence(description),
            "description": description,
            "args_schema": schema if schema.get("type") == "object" else {"type": "object", "properties": {}},
            "kind": "read" if annotations.get("readOnlyHint") else "write",
        }
        by_namespace.setdefault(slug(namespace), []).append(entry)
        queries[tool_id] = str(annotations.get("title") or first_sentence(description))
    (root / "_node.yaml").parent.mkdir(parents=True, exist_ok=True)
    (root / "_node.yaml").write_text(yaml.safe_dump({"title": title, "summary": f"{title} tools."}), encoding="utf-8")
    for namespace, entries in by_namespace.items():
        folder = root / namespace
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tools.yaml").write_text(yaml.safe_dump({"tools": entries}, sort_keys=False), encoding="utf-8")
    return root, queries


def measure(
    name: str, build_dir: Path, raw_definitions: list[dict[str, Any]] | None, queries: dict[str, str]
) -> dict[str, Any]:
    folder = BuildFolder(build_dir)
    specs = folder.specs()
    stats = folder.fetch_json(folder.manifest["stats"])["tools"]
    prompts = folder.manifest["prompts"]["tokens"]
    openai_all = count_tokens(json.dumps(export_specs("openai", specs.values()).payload(), ensure_ascii=False))
    raw_all = count_tokens(json.dumps(raw_definitions, ensure_ascii=False)) if raw_definitions is not None else None
    gateway_defs = count_tokens(
        json.dumps(
            folder.fetch_json(folder.manifest["providers"]["openai"]["dialects"]["gateway"])["tools"],
            ensure_ascii=False,
        )
    )
    catalog = Catalog.open(build_dir)
    hits, pointer_costs, schema_costs, expand_costs = 0, [], [], []
    for tool_id, query in sorted(queries.items()):
        found = catalog.find_tool(query, 5)
        names = [m["name"] for m in found.get("matches", [])]
        hits += tool_id in names
        pointer_costs.append(sum(stats[n]["pointer"] for n in names))
        expanded = catalog.expand_tool(tool_id)
        schema_costs.append(count_tokens(json.dumps(expanded.get("args_schema"), ensure_ascii=False)))
        shown = {k: v for k, v in expanded.items() if k not in {"ok", "help_path", "hints", "next_action"}}
        expand_costs.append(count_tokens(json.dumps(shown, ensure_ascii=False)))
    return {
        "name": name,
        "tools": len(specs),
        "raw_all": raw_all,
        "openai_all": openai_all,
        "gateway_prompt": prompts["system.gateway"],
        "gateway_defs": gateway_defs,
        "pointers5": statistics.mean(pointer_costs),
        "schema": statistics.mean(schema_costs),
        "expand": statistics.mean(expand_costs),
        "hit5": hits / max(1, len(queries)),
        "queries": len(queries),
    }


def _answer_tokens(answer: Any) -> int:
    """Tokens of an answer as the MCP server sends it (``json.dumps``, ``ensure_ascii=False``)."""
    return count_tokens(json.dumps(answer, ensure_ascii=False, default=str))


def _search(catalog: Catalog, dialect: str, query: str) -> tuple[dict[str, Any], list[str]]:
    """The dialect's search answer and the tool ids it ranks, best first."""
    if dialect == "gateway":
        answer = catalog.tool_help(query=query)
        return answer, [str(o.get("op")) for o in answer.get("operations", []) if isinstance(o, dict)]
    if dialect == "spec":
        answer = catalog.search_tool_by_category(query, "")
        return answer, [str(r.get("tool_id")) for r in answer.get("results", []) if isinstance(r, dict)]
    answer = catalog.find_tool(query)
    return answer, [str(m.get("name")) for m in answer.get("matches", []) if isinstance(m, dict)]


def _without_summaries(answer: dict[str, Any]) -> dict[str, Any]:
    """A search answer as it was before its hits carried their one-line summary (issue 35), to count the cost."""
    out = dict(answer)
    for key in ("matches", "operations", "results"):
        if isinstance(out.get(key), list):
            out[key] = [{k: v for k, v in hit.items() if k != "summary"} for hit in out[key] if isinstance(hit, dict)]
    return out


def _sessionless_call() -> dict[str, Any]:
    """The namespaced dialect's ``tool_call`` in the exports' OpenAI form (listed over MCP to clients without a session)."""
    tool = SESSIONLESS_CALL
    return {
        "type": "function",
        "function": {"name": tool.name, "description": tool.description, "parameters": tool.input_schema},
    }


def _describe(catalog: Catalog, dialect: str, tool_id: str) -> dict[str, Any]:
    if dialect == "gateway":
        return catalog.tool_help(path=tool_id)
    if dialect == "spec":
        return catalog.expand_tool(tool_id)
    return catalog.tool_describe(tool_id)


def flow(build_dir: Path, base: int) -> list[dict[str, Any]]:
    """The issue-13 flow per dialect: its tool definitions + one search + one describe of the tool it needs."""
    folder = BuildFolder(build_dir)
    catalog = Catalog.open(build_dir)
    rows = []
    for dialect in FLOW_CALLS:
        definitions = folder.fetch_json(folder.manifest["providers"]["openai"]["dialects"][dialect])["tools"]
        found, ranked = _search(catalog, dialect, FLOW_QUERY)
        described = _describe(catalog, dialect, FLOW_TOOL)
        parts = {
            "defs": count_tokens(json.dumps(definitions, ensure_ascii=False)),
            "search": _answer_tokens(found),
            "describe": _answer_tokens(described),
        }
        total = sum(parts.values())
        before = total - parts["search"] + _answer_tokens(_without_summaries(found))
        heavy = sorted(
            ((key, _answer_tokens({key: value})) for key, value in described.items()), key=lambda kv: -kv[1]
        )[:4]
        rows.append(
            {
                "dialect": dialect,
                **parts,
                "total": total,
                "share": total / base,
                "before": before,
                "sessionless": total + _answer_tokens(_sessionless_call()) if dialect == "namespaced" else None,
                "top1": ranked[0] if ranked else "-",
                "rank": ranked.index(FLOW_TOOL) + 1 if FLOW_TOOL in ranked else None,
                "heavy_describe": heavy,
                "defs_each": sorted(
                    ((str(d.get("function", d).get("name")), _answer_tokens(d)) for d in definitions),
                    key=lambda kv: -kv[1],
                ),
            }
        )
    return rows


def report_flow(rows: list[dict[str, Any]], base: int) -> None:
    """Print the issue-13 flow table: tokens per part, share of injecting every tool, the top-1 tool."""
    print(
        f"\nFlow '{FLOW_QUERY}' over the GitHub MCP list: the dialect's tool definitions (OpenAI form) + one search "
        f"+ one describe of {FLOW_TOOL}; share of injecting all {base:,} tokens (target <= {FLOW_TARGET:.0%}, "
        f"goal {FLOW_GOAL:.0%})\n"
    )
    print(
        "| dialect | calls | definitions | search | describe | total | share "
        "| total without summaries (before) | top 1 | rank of the tool |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        calls = " + ".join(FLOW_CALLS[r["dialect"]])
        print(
            f"| {r['dialect']} | {calls} | {r['defs']} | {r['search']} | {r['describe']} | {r['total']:,} "
            f"| {r['share']:.2%} | {r['before']:,} ({r['before'] / base:.2%}) | {r['top1']} | {r['rank'] or '-'} |"
        )
    for r in rows:
        if r["sessionless"] is not None:
            print(
                f"  {r['dialect']} over MCP without a session (+ the tool_call definition): {r['sessionless']:,} "
                f"tokens, {r['sessionless'] / base:.2%} ({'met' if r['sessionless'] / base <= FLOW_TARGET else 'NOT met'})"
            )
    for r in rows:
        verdict = "met" if r["share"] <= FLOW_TARGET else "NOT met"
        goal = " (goal met)" if r["share"] <= FLOW_GOAL else ""
        heavy = ", ".join(f"{k} {t}" for k, t in r["heavy_describe"])
        defs = ", ".join(f"{k} {t}" for k, t in r["defs_each"])
        print(f"  {r['dialect']}: {verdict}{goal}; describe's heaviest keys: {heavy}; definitions: {defs}")


def report(rows: list[dict[str, Any]]) -> None:
    print("\nInjecting every definition vs a progressive flow (o200k_base tokens; means over one query per tool)\n")
    header = [
        "catalogue",
        "tools",
        "inject raw",
        "inject openai",
        "gateway prompt",
        "5 pointers",
        "1 schema",
        "lean flow",
        "saved",
        "+defs +full expand",
        "saved",
        "hit@5",
    ]
    lines = []
    for r in rows:
        base = r["raw_all"] if r["raw_all"] is not None else r["openai_all"]
        lean = r["gateway_prompt"] + r["pointers5"] + r["schema"]
        full = r["gateway_prompt"] + r["gateway_defs"] + r["pointers5"] + r["expand"]
        lines.append(
            [
                r["name"],
                r["tools"],
                r["raw_all"] if r["raw_all"] is not None else "-",
                r["openai_all"],
                r["gateway_prompt"],
                f"{r['pointers5']:.0f}",
                f"{r['schema']:.0f}",
                f"{lean:.0f}",
                f"{1 - lean / base:.1%}",
                f"{full:.0f}",
                f"{1 - full / base:.1%}",
                f"{r['hit5']:.0%}",
            ]
        )
        r["lean"], r["full"], r["base"] = lean, full, base
    widths = [max(len(str(x)) for x in col) for col in zip(header, *lines, strict=True)]
    print("  ".join(h.rjust(w) for h, w in zip(header, widths, strict=True)))
    for line in lines:
        print("  ".join(str(c).rjust(w) for c, w in zip(line, widths, strict=True)))
    print(
        "\nArithmetic (lean flow = gateway prompt + 5 pointers + 1 args schema; "
        "'+defs +full expand' adds the 3 gateway tool definitions and the whole expand_tool answer):"
    )
    for r in rows:
        print(
            f"  {r['name']}: {r['gateway_prompt']} + {r['pointers5']:.0f} + {r['schema']:.0f} = {r['lean']:.0f} "
            f"vs {r['base']:,} -> {1 - r['lean'] / r['base']:.2%} fewer; with definitions and full expand "
            f"{r['full']:.0f} -> {1 - r['full'] / r['base']:.2%} fewer"
        )
    github = next((r for r in rows if r["name"] == "github-mcp"), None)
    if github:
        saved = 1 - github["lean"] / github["base"]
        print(
            f"\nTarget: >= {TARGET:.0%} fewer on the GitHub MCP list: {'met' if saved >= TARGET else 'NOT met'} "
            f"({saved:.2%})."
        )


def main() -> None:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        build(REPO / "catalog_src", root / "example")
        example_queries = {i: s["summary"] for i, s in BuildFolder(root / "example").specs().items()}
        rows.append(measure("example", root / "example", None, example_queries))
        if CORPUS.is_dir():
            snaps = [
                json.loads(p.read_text(encoding="utf-8"))
                for p in sorted((CORPUS / "github-mcp-server" / "toolsnaps").glob("*.json"))
            ]
            src, queries = mcp_source([("github", t, t["inputSchema"]) for t in snaps], root / "gh_src", "GitHub")
            build(src, root / "gh")
            injected = [
                {"name": t["name"], "description": t.get("description", ""), "inputSchema": t["inputSchema"]}
                for t in snaps
            ]  # what a host passes to the model; annotations and icons stay out
            rows.append(measure("github-mcp", root / "gh", injected, queries))
            flow_rows = flow(root / "gh", rows[-1]["raw_all"])
            docker: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
            for path in sorted((CORPUS / "docker-mcp-registry" / "servers").glob("*/tools.json")):
                docker.extend(
                    (path.parent.name, t, docker_schema(t)) for t in json.loads(path.read_text(encoding="utf-8"))
                )
            src, queries = mcp_source(docker, root / "dk_src", "Docker MCP registry")
            build(src, root / "dk")
            rows.append(
                measure(
                    "docker-mcp",
                    root / "dk",
                    [
                        {"name": t["name"], "description": t.get("description", ""), "inputSchema": schema}
                        for _, t, schema in docker
                    ],
                    queries,
                )
            )
        else:
            print(f"corpus not found at {CORPUS}: only the example catalogue is measured")
        report(rows)
        if CORPUS.is_dir():
            report_flow(flow_rows, rows[1]["raw_all"])
        print(f"\n(builds and measurements took {time.perf_counter() - started:.1f}s)")


if __name__ == "__main__":
    main()
