#!/usr/bin/env python3
"""List the most expensive nodes of a PostgreSQL EXPLAIN (FORMAT JSON) plan.

Usage:
    python plan_hotspots.py plan.json [--top 5]

Accepts the raw EXPLAIN output (a one-element list) or the plan_json object returned
by the db.explain tool. With ANALYZE data it ranks nodes by exclusive actual time and
flags row misestimates; without it, by exclusive estimated cost.
"""

# ruff: noqa: T201  (a command-line tool: printing is its output)

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Hotspot:
    """One plan node with its exclusive time (or cost) and notes on what looks wrong."""

    label: str
    exclusive: float
    detail: str


def _label(node: dict[str, Any]) -> str:
    parts = [node.get("Node Type", "?")]
    if "Relation Name" in node:
        parts.append(f"on {node.get('Schema', '')}.{node['Relation Name']}".replace(" .", " "))
    if "Index Name" in node:
        parts.append(f"using {node['Index Name']}")
    return " ".join(parts)


def _walk(node: dict[str, Any], analyzed: bool, out: list[Hotspot]) -> float:
    children = node.get("Plans", [])
    child_total = sum(_walk(child, analyzed, out) for child in children)
    if analyzed:
        total = float(node.get("Actual Total Time", 0.0)) * float(node.get("Actual Loops", 1))
    else:
        total = float(node.get("Total Cost", 0.0))
    detail = []
    if analyzed:
        planned = float(node.get("Plan Rows", 0))
        actual = float(node.get("Actual Rows", 0)) * float(node.get("Actual Loops", 1))
        if planned and actual and max(planned, actual) / max(min(planned, actual), 1.0) >= 10:
            detail.append(f"rows estimated {planned:.0f} vs actual {actual:.0f}")
        if node.get("Sort Method", "").startswith("external"):
            detail.append("sort spills to disk")
        if int(node.get("Hash Batches", 1)) > 1:
            detail.append(f"hash in {node['Hash Batches']} batches (spills)")
    if "Filter" in node and node.get("Rows Removed by Filter"):
        detail.append(f"filter removed {node['Rows Removed by Filter']} rows: {node['Filter']}")
    out.append(Hotspot(_label(node), max(total - child_total, 0.0), "; ".join(detail)))
    return total


def main() -> int:
    """Parse the arguments, load the plan and print the top nodes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("plan", help="file holding EXPLAIN (FORMAT JSON) output")
    parser.add_argument("--top", type=int, default=5, help="how many nodes to show")
    args = parser.parse_args()
    data = json.loads(Path(args.plan).read_text(encoding="utf-8"))
    if isinstance(data, list):
        data = data[0]
    root = data.get("Plan", data)
    analyzed = "Actual Total Time" in root
    hotspots: list[Hotspot] = []
    total = _walk(root, analyzed, hotspots)
    unit = "ms" if analyzed else "cost"
    print(f"total: {total:.1f} {unit} ({'actual' if analyzed else 'estimated'})")
    for spot in sorted(hotspots, key=lambda h: -h.exclusive)[: args.top]:
        share = 100 * spot.exclusive / total if total else 0.0
        print(f"{spot.exclusive:>12.1f} {unit} {share:5.1f}%  {spot.label}")
        if spot.detail:
            print(f"{'':>22}{spot.detail}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
