"""``toolcat search``: rank the tools of a build folder or a published URL, through the reader's Catalog.

The search is the ``search_tool_by_category`` call an agent makes (the same session guard, audit log,
argument checks and spec-dialect answer), printed as a ranked table or, with ``--json``, as its envelope.
"""

from __future__ import annotations

import logging

import click

from ..format.types import Json
from .output import emit, location_options, open_catalog

log = logging.getLogger(__name__)


def _render_results(answer: Json) -> str:
    rows = [
        f"{rank:>2}. {item.get('confidence', 0):.3f}  {item['tool_id']:<32} "
        f"{'/'.join(item.get('path', [])):<24} {item.get('summary', '')}"
        for rank, item in enumerate(answer.get("results", []), start=1)
    ]
    return "\n".join(rows) if rows else "no tools matched"


@click.command()
@click.argument("query")
@click.option("--in", "category", default="", help="Search only under this category path (a/b or a.b).")
@location_options
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 50), help="How many results.")
@click.option("--json", "as_json", is_flag=True, help="Print the reader's envelope (pointers + confidence) as JSON.")
def search(
    query: str, category: str, build_dir: str, url: str | None, cache_dir: str | None, limit: int, as_json: bool
) -> None:
    """Rank the tools of a build (a folder or a URL) for QUERY and print their pointers."""
    catalog = open_catalog(url or build_dir, cache_dir)
    emit(catalog.search_tool_by_category(query, category, limit=limit), as_json, _render_results)


COMMANDS: list[click.Command] = [search]
