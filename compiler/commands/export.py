"""``toolcat export``, ``toolcat stats`` and ``toolcat prompt``: provider definitions, token figures, prompt sections."""

from __future__ import annotations

import json
import logging
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..format.aliases import PROVIDERS
from ..format.dialects import DIALECT_NAMES

if TYPE_CHECKING:
    from ..reader.folder import BuildFolder

log = logging.getLogger(__name__)

SKILL_LEVEL1_MAX = 100
SKILL_LEVEL2_MAX = 5000
_BUILD = click.option(
    "--build",
    "build_dir",
    default="build",
    show_default=True,
    type=click.Path(path_type=Path),
    help="A built catalogue folder.",
)


def _open(build_dir: Path) -> BuildFolder:
    from ..reader.folder import BuildFolder  # noqa: PLC0415 - keeps --help fast

    try:
        return BuildFolder(build_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in re.split(r"[\s,]+", value) if part]


@click.command()
@click.option("--provider", required=True, type=click.Choice(PROVIDERS), help="Whose tool-definition format to write.")
@click.option(
    "--dialect",
    type=click.Choice(DIALECT_NAMES),
    help="Export this dialect's discovery tools instead of catalogue tools.",
)
@click.option(
    "--tools",
    "tool_names",
    multiple=True,
    metavar="ID",
    help="Only these tools (canonical ids or aliases; repeat or separate with commas).",
)
@click.option("--namespace", help="Only the tools of this namespace (first id segment).")
@_BUILD
@click.option("--out", type=click.Path(path_type=Path), help="Write here instead of standard output.")
@click.option("--strict", is_flag=True, help="Exit 1 when an adaptation loses meaning.")
def export(
    provider: str,
    dialect: str | None,
    tool_names: tuple[str, ...],
    namespace: str | None,
    build_dir: Path,
    out: Path | None,
    strict: bool,
) -> None:
    """Write tool definitions for PROVIDER: a dialect's discovery tools, or (gated) catalogue tools."""
    from ..build.contributors.exports.definitions import export_dialect, export_specs, to_canonical  # noqa: PLC0415

    if dialect and (tool_names or namespace):
        raise click.UsageError("--dialect exports the discovery tools; it cannot be combined with --tools/--namespace")
    if dialect:  # the discovery tools, and the build's always-loaded tools when there is a build
        always = _open(build_dir).always_loaded_specs() if (build_dir / "catalog.json").is_file() else []
        result = export_dialect(provider, dialect, always)
    else:
        folder = _open(build_dir)
        specs = folder.specs()
        wanted = _split(tool_names)
        legacy = {old: tool_id for tool_id, spec in specs.items() for old in spec.get("legacy_aliases") or []}
        to_id = {**legacy, **folder.aliases(provider)["to_id"]}  # legacy names (`read_file`) select their tool too
        chosen = set()
        for name in wanted:
            try:
                chosen.add(to_canonical(provider, name, to_id))
            except KeyError as exc:
                import difflib  # noqa: PLC0415

                close = difflib.get_close_matches(name, list(specs), n=3)
                hint = (
                    f" Did you mean {', '.join(close)}?"
                    if close
                    else " `toolcat prompt` or `toolcat search` lists ids."
                )
                raise click.ClickException(f"--tools: {exc.args[0]}.{hint}") from exc
        if namespace:
            in_namespace = {i for i in specs if i.split(".", 1)[0] == namespace}
            if not in_namespace:
                raise click.ClickException(
                    f"--namespace {namespace!r} has no tools; namespaces: "
                    f"{', '.join(folder.manifest.get('namespaces', []))}"
                )
            chosen |= in_namespace
        selected = [specs[i] for i in sorted(chosen)] if (wanted or namespace) else list(specs.values())
        result = export_specs(provider, selected)
    text = json.dumps(result.payload(), indent=2, ensure_ascii=False) + "\n"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(result.definitions)} {provider} tool definition(s) to {out}", err=True)
    else:
        click.echo(text, nl=False)
    for warning in result.warnings:
        click.echo(f"warning: {warning.render()}", err=True)
    if result.warnings:
        click.echo(f"{len(result.warnings)} lossy adaptation(s) for {provider}.", err=True)
        if strict:
            raise click.ClickException("--strict: adaptations lost meaning (listed above)")


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(
            str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


@click.command()
@_BUILD
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats(build_dir: Path, as_json: bool) -> None:
    """Token figures (o200k_base) of a build: per tool, per prompt section, and the skill guidance checks."""
    folder = _open(build_dir)
    figures: dict[str, Any] = folder.fetch_json(folder.manifest["stats"])
    sections = dict(folder.manifest.get("prompts", {}).get("tokens", {}))
    warnings = []
    for tool_id, row in sorted(figures["tools"].items()):
        level1, level2 = row.get("skill_level1"), row.get("skill_level2")
        if level1 is not None and level1 > SKILL_LEVEL1_MAX:
            warnings.append(f"{tool_id}: skill level 1 is {level1} tokens (guidance: at most {SKILL_LEVEL1_MAX})")
        if level2 is not None and level2 > SKILL_LEVEL2_MAX:
            warnings.append(f"{tool_id}: skill level 2 is {level2} tokens (guidance: at most {SKILL_LEVEL2_MAX:,})")
    if as_json:
        click.echo(
            json.dumps(
                {
                    "encoding": figures.get("encoding"),
                    "tools": figures["tools"],
                    "totals": figures["totals"],
                    "sections": sections,
                    "warnings": warnings,
                },
                indent=2,
            )
        )
        return
    rows = [
        [tool_id, str(r["pointer"]), str(r["spec"]), str(r.get("skill_level1", "")), str(r.get("skill_level2", ""))]
        for tool_id, r in sorted(figures["tools"].items())
    ]
    click.echo(f"tokens per tool ({figures.get('encoding', 'o200k_base')}): level 1 = pointer, level 2 = full spec")
    click.echo(_table(rows, ["tool", "pointer", "spec", "skill L1", "skill L2"]))
    totals = figures["totals"]
    click.echo(f"\ntotal: {totals['pointers']:,} pointer tokens, {totals['specs']:,} spec tokens, {len(rows)} tools")
    if sections:
        click.echo("\ntokens per prompt section")
        click.echo(_table([[name, f"{count:,}"] for name, count in sorted(sections.items())], ["section", "tokens"]))
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


@click.command()
@click.option(
    "--build",
    "build_dir",
    default="build",
    show_default=True,
    help="A built catalogue folder, or the http(s) base URL of a published one.",
)
@click.option(
    "--cache-dir", default=None, help="Cache folder for a URL build (default $TOOLCAT_CACHE or ~/.cache/toolcat)."
)
@click.option(
    "--dialect",
    type=click.Choice(DIALECT_NAMES),
    help="Print this dialect's discovery system prompt.",
)
@click.option("--section", "section_name", help="Print one section by name (see the list without options).")
@click.option("--task", help="Assemble a focused section for this task (with --budget and --detail).")
@click.option("--budget", default=1500, show_default=True, type=click.IntRange(min=0), help="Token budget for --task.")
@click.option("--detail", default="short", show_default=True, type=click.Choice(["short", "full"]))
def prompt(
    build_dir: str,
    cache_dir: str | None,
    dialect: str | None,
    section_name: str | None,
    task: str | None,
    budget: int,
    detail: str,
) -> None:
    """Print prompt sections of a build (a folder or a URL); without options, list them with their token counts."""
    from ..format.envelope import ReaderError  # noqa: PLC0415 - keeps --help fast
    from ..reader.catalog import Catalog  # noqa: PLC0415 - keeps --help fast

    try:
        catalog = Catalog.open(build_dir, cache_dir=cache_dir)
    except ReaderError as err:
        raise click.ClickException(f"{build_dir}: {err.message}") from err
    if task is not None:
        result = catalog.prompt_section(task=task, budget_tokens=budget, detail=detail)
        if not result.get("ok"):
            raise click.ClickException(json.dumps(result.get("error"), indent=2))
        click.echo(result["text"])
        chosen = ", ".join(t["tool_id"] for t in result["tools"]) or "none"
        click.echo(
            f"\n[{result['tokens']} of {budget} tokens; tools: {chosen}; omitted: {len(result['omitted'])}]", err=True
        )
        return
    name = f"system.{dialect}" if dialect else section_name
    answer = catalog.prompt(name)
    if not answer.get("ok"):
        error = answer["error"]
        if error["code"] == "NOT_FOUND":
            raise click.ClickException(f"no section {name!r}; sections: {', '.join(error['details']['sections'])}")
        raise click.ClickException(f"{build_dir}: {error['message']}")
    if name is None:
        rows = [[s["name"], s["media_type"], f"{s['tokens']:,}"] for s in answer["sections"]]
        click.echo(_table(rows, ["section", "type", "tokens"]))
        return
    click.echo(answer["text"])


COMMANDS: list[click.Command] = [export, stats, prompt]
