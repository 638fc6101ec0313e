"""``toolcat export``, ``toolcat stats`` and ``toolcat prompt``: provider definitions, token figures, prompt sections."""

from __future__ import annotations

import json
import logging
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..build.contributors.exports.definitions import EXPORT_FORMATS
from ..format.dialects import DIALECT_NAMES, manifest_discovery, traits
from .output import is_url, location_options, open_catalog, render_error

if TYPE_CHECKING:
    from ..build.contributors.exports.definitions import Export
    from ..reader.folder import BuildFolder

log = logging.getLogger(__name__)

SKILL_LEVEL1_MAX = 100
SKILL_LEVEL2_MAX = 5000


def _open(build_dir: str, url: str | None = None, cache_dir: str | None = None) -> BuildFolder:
    """The build a command reads: a folder, or the base URL of a published build (``--build`` or ``--url``)."""
    from ..reader.folder import BuildFolder  # noqa: PLC0415 - keeps --help fast

    location = url or build_dir
    try:
        return BuildFolder(location if is_url(location) else Path(location), cache_dir=cache_dir)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc


def _split(values: tuple[str, ...]) -> list[str]:
    return [part for value in values for part in re.split(r"[\s,]+", value) if part]


@click.command()
@click.option(
    "--provider",
    required=True,
    type=click.Choice(EXPORT_FORMATS),
    help="Whose tool-definition format to write (openai: Chat Completions; openai-responses: the Responses API).",
)
@click.option(
    "--dialect",
    type=click.Choice(DIALECT_NAMES),
    help="Export this dialect's discovery tools instead of catalogue tools; direct: every tool.",
)
@click.option(
    "--pinned/--no-pinned",
    default=None,
    help="With --dialect: append the catalogue's pinned (always_load) tools, as an MCP server lists them "
    "(default: the catalogue's discovery.pinned setting, else only the discovery tools, seed 001).",
)
@click.option(
    "--tools",
    "tool_names",
    multiple=True,
    metavar="ID",
    help="Only these tools (canonical ids or aliases; repeat or separate with commas).",
)
@click.option("--namespace", help="Only the tools of this namespace (first id segment).")
@location_options
@click.option("--out", type=click.Path(path_type=Path), help="Write here instead of standard output.")
@click.option("--strict", is_flag=True, help="Exit 1 when an adaptation loses meaning.")
def export(
    provider: str,
    dialect: str | None,
    pinned: bool | None,
    tool_names: tuple[str, ...],
    namespace: str | None,
    build_dir: str,
    url: str | None,
    cache_dir: str | None,
    out: Path | None,
    strict: bool,
) -> None:
    """Write tool definitions for PROVIDER: a dialect's discovery tools, or (gated) catalogue tools."""
    from ..build.contributors.exports.definitions import (  # noqa: PLC0415 - keeps --help fast
        as_export_format,
        base_provider,
        export_specs,
        to_canonical,
    )

    shape, provider = provider, base_provider(provider)
    if traits(dialect).catalogue_tools:  # no discovery tools: the direct dialect's tools are the catalogue's own
        dialect = None
    if dialect and (tool_names or namespace):
        raise click.UsageError("--dialect exports the discovery tools; it cannot be combined with --tools/--namespace")
    if dialect:  # the discovery tools, and the build's pinned tools when asked (as `toolcat serve` lists them)
        result = _dialect_export(provider, dialect, url or build_dir, cache_dir, pinned)
    else:
        folder = _open(build_dir, url, cache_dir)
        specs = folder.specs()
        wanted = _split(tool_names)
        legacy = {old: tool_id for tool_id, spec in specs.items() for old in spec.get("legacy_aliases") or []}
        to_id = {**legacy, **folder.aliases(provider)["to_id"]}  # legacy names (`read_file`) select their tool too
        chosen = set()
        for name in wanted:
            try:
                chosen.add(to_canonical(provider, name, to_id))
            except KeyError as exc:
                import difflib  # noqa: PLC0415 - stdlib, imported on first use

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
    result = as_export_format(result, shape)
    text = json.dumps(result.payload(), indent=2, ensure_ascii=False) + "\n"
    if out:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        click.echo(f"wrote {len(result.definitions)} {shape} tool definition(s) to {out}", err=True)
    else:
        click.echo(text, nl=False)
    _report_adaptations(provider, [w.render() for w in result.warnings], [w.message for w in result.warnings])
    if result.warnings and strict:
        raise click.ClickException("--strict: adaptations lost meaning (toolcat -v export ... lists each one)")


def _dialect_export(provider: str, dialect: str, location: str, cache_dir: str | None, pinned: bool | None) -> Export:
    """A dialect's discovery tools, then the build's pinned tools when ``pinned`` (None: ``discovery.pinned``).

    Exits 1 without a build: the per-domain tools and the pinned setting are the build's.
    """
    from ..build.contributors.exports.definitions import export_dialect  # noqa: PLC0415 - keeps --help fast

    if not is_url(location) and not (Path(location) / "catalog.json").is_file():
        raise click.ClickException(
            f"no build at {location!r} (no catalog.json): a dialect's export holds its discovery tools and the "
            "build's pinned (always_load) tools and per-domain tools. Run `toolcat build` first, or pass "
            "--build DIR|URL."
        )
    folder = _open(location, cache_dir=cache_dir)
    pins, domains = manifest_discovery(folder.manifest)
    # what `toolcat serve` and Catalog.open(pinned=None) list: --pinned, else the catalogue's setting
    always = folder.always_loaded_specs() if (pins if pinned is None else pinned) else []
    result = export_dialect(provider, dialect, always, domains)
    shown = f" + {len(always)} pinned (always_load)" if always else ""
    click.echo(f"{dialect}: {len(result.definitions) - len(always)} discovery tools{shown}", err=True)
    return result


def adaptation_kind(message: str) -> str:
    """What kind of loss an adaptation message describes: its first clause, without paths and numbers."""
    kind = re.sub(r"\$\.\S*", "$…", message).split(";", 1)[0]
    kind = kind.split(": ", 1)[0] if kind.startswith("strict mode off") else kind
    return re.sub(r"\b\d+\b", "N", kind).strip()


def _report_adaptations(provider: str, rendered: list[str], messages: list[str]) -> None:
    """On stderr: every adaptation with ``-v``, else one line per kind with its count."""
    if not rendered:
        return
    ctx = click.get_current_context(silent=True)
    verbose = bool(ctx and ctx.find_root().params.get("verbose"))
    if verbose:
        for line in rendered:
            click.echo(f"warning: {line}", err=True)
    kinds = Counter(adaptation_kind(m) for m in messages)
    more = "" if verbose else "; toolcat -v export ... lists each one"
    click.echo(f"{len(rendered)} lossy adaptation(s) for {provider}, by kind{more}:", err=True)
    for kind, count in sorted(kinds.items(), key=lambda item: (-item[1], item[0])):
        click.echo(f"  {count:>5}  {kind}", err=True)


def _table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]

    def line(row: list[str]) -> str:
        return "  ".join(
            str(c).rjust(w) if i else str(c).ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        )

    return "\n".join([line(header), line(["-" * w for w in widths]), *(line(r) for r in rows)])


@click.command()
@location_options
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def stats(build_dir: str, url: str | None, cache_dir: str | None, as_json: bool) -> None:
    """Token figures (o200k_base) of a build: per tool, per prompt section, and the skill guidance checks."""
    folder = _open(build_dir, url, cache_dir)
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
                    "dialects": folder.manifest.get("dialects") or {},
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
    dialects = folder.manifest.get("dialects") or {}
    if dialects:  # seed 001's limit counts discovery tools; pinned (always_load) tools are offered beside them
        click.echo("\ntools a client sees per dialect (discovery + pinned)")
        click.echo(_table([_dialect_row(name, row) for name, row in sorted(dialects.items())], ["dialect", "tools"]))
    if sections:
        click.echo("\ntokens per prompt section")
        click.echo(_table([[name, f"{count:,}"] for name, count in sorted(sections.items())], ["section", "tokens"]))
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)


def _dialect_row(name: str, row: dict[str, Any]) -> list[str]:
    """``gateway | 3 discovery + 1 pinned (file.read)``; ``direct | 90 tools, no discovery``."""
    if not row.get("discovery"):
        return [name, f"{row.get('tools', 0)} tools, no discovery"]
    pinned = row.get("pinned", 0)
    names = f" ({', '.join(row.get('pinned_tools', []))})" if pinned else ""
    return [name, f"{row['discovery']} discovery + {pinned} pinned{names}"]


@click.command()
@location_options
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
    url: str | None,
    cache_dir: str | None,
    dialect: str | None,
    section_name: str | None,
    task: str | None,
    budget: int,
    detail: str,
) -> None:
    """Print prompt sections of a build (a folder or a URL); without options, list them with their token counts."""
    catalog = open_catalog(url or build_dir, cache_dir)
    if task is not None:
        result = catalog.prompt_section(task=task, budget_tokens=budget, detail=detail)
        if not result.get("ok"):
            raise click.ClickException(render_error(result))
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
        raise click.ClickException(render_error(answer))
    if name is None:
        rows = [[s["name"], s["media_type"], f"{s['tokens']:,}"] for s in answer["sections"]]
        click.echo(_table(rows, ["section", "type", "tokens"]))
        return
    click.echo(answer["text"])


COMMANDS: list[click.Command] = [export, stats, prompt]
