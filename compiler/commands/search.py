"""``toolcat search``: query a build folder or a published URL."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any, NoReturn

import click

from ..build.errors import CatalogError

log = logging.getLogger(__name__)


def open_searcher(location: Path | str, cache_dir: str | None = None) -> Any:
    """The :class:`~toolcat.reader.search.searcher.Searcher` of a build folder or URL, read by the reader (hash-checked)."""
    from ..format.envelope import ReaderError  # noqa: PLC0415 - keeps --help fast
    from ..reader.catalog import Catalog  # noqa: PLC0415 - keeps --help fast

    try:
        return Catalog.open(location if isinstance(location, str) else Path(location), cache_dir=cache_dir).searcher()
    except ReaderError as exc:
        _fail_envelope(exc.envelope())


def _fail_envelope(result: dict[str, Any]) -> NoReturn:
    error = result["error"]
    lines = [f"{error['code']}: {error['message']}", *[f"  hint: {h}" for h in error["hints"]]]
    if error.get("next_action"):
        lines.append(f"  next: {json.dumps(error['next_action'])}")
    raise CatalogError("\n".join(lines))


@click.command()
@click.argument("query")
@click.option("--in", "category", default="", help="Search only under this category path (a/b or a.b).")
@click.option(
    "--build",
    "build_dir",
    default="build",
    type=click.Path(path_type=Path),
    show_default=True,
    help="The build folder to search.",
)
@click.option("--url", default=None, help="Search a published build at this http(s) base URL instead.")
@click.option("--cache-dir", default=None, help="Cache folder for --url (default $TOOLCAT_CACHE or ~/.cache/toolcat).")
@click.option("--limit", default=10, show_default=True, type=click.IntRange(1, 50), help="How many results.")
@click.option("--json", "as_json", is_flag=True, help="Print the result (pointers + confidence) as JSON.")
def search(
    query: str, category: str, build_dir: Path, url: str | None, cache_dir: str | None, limit: int, as_json: bool
) -> None:
    """Rank the tools of a build for QUERY and print their pointers."""
    result = open_searcher(url or build_dir, cache_dir).search_tool_by_category(query, category, limit=limit)
    if as_json:
        click.echo(json.dumps(result, indent=2, ensure_ascii=False))
        if result.get("ok") is False:
            raise SystemExit(1)
        return
    if result.get("ok") is False:
        _fail_envelope(result)
    for rank, item in enumerate(result["results"], start=1):
        click.echo(
            f"{rank:>2}. {item['confidence']:.3f}  {item['tool_id']:<32} {'/'.join(item['path']):<24} {item['summary']}"
        )


COMMANDS: list[click.Command] = [search]
