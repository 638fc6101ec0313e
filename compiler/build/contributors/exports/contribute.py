"""The build contributor of provider exports: ``providers/<provider>/`` (the whole catalogue and each dialect).

Each dialect file holds the dialect's discovery tools (with the namespaced dialect's per-domain tools when the
catalogue declares ``discovery.per_domain``), then the pinned (``always_load``) tools, and ``counts`` of both apart;
the direct dialect's entry is the catalogue file itself. ``manifest["dialects"]`` repeats the counts.

Definitions are :func:`toolcat.build.contributors.exports.definitions.export_specs`', made one tool at a time through the per-tool memo
(:mod:`toolcat.build.memo`) and spliced into the catalogue file as canonical text, so a one-tool edit adapts one
schema and the file's bytes are those of dumping the whole export (``tests/test_memo.py``).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ....format.canonical import dumps
from ....format.dialects import DIALECT_NAMES, dialect_tools, served_tools
from ....format.types import JSON
from ...memo import HOLE, splice
from .definitions import PROVIDER_NAMES, export_dialect, export_specs

if TYPE_CHECKING:
    from ....format.types import Ref
    from ...artifacts import ArtifactSet
    from ...model import CompiledCatalog

log = logging.getLogger(__name__)


def contribute(catalog: CompiledCatalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, JSON], Ref]]) -> None:
    """Write ``providers/<provider>/`` (whole catalogue + each dialect) and ``manifest["providers"]``."""
    entry: dict[str, JSON] = {}
    always = [spec for spec, _ in specs.values() if spec.get("always_load")]
    domains = list(catalog.discover_domains)
    ids = sorted(specs)
    shas = [str(specs[tool_id][1]["sha256"]) for tool_id in ids]
    for provider in PROVIDER_NAMES:
        texts: list[str] = []
        names: dict[str, str] = {}
        lost: list[dict[str, str]] = []
        made = functools.partial(_made, provider, specs, ids)
        for tool_id, (name, text, warnings) in zip(
            ids, artifacts.memo.get_many(f"export.{provider}", shas, made), strict=True
        ):
            texts.append(text)
            names[name] = tool_id
            if warnings:
                lost.extend(warnings)
        artifacts.memo.close(f"export.{provider}")
        catalogue_ref = _provider_file(artifacts, provider, "catalog", HOLE, names, lost, texts)
        dialects: dict[str, JSON] = {}
        for dialect in DIALECT_NAMES:
            if not dialect_tools(dialect):  # direct: the catalogue's own tools are its tools
                dialects[dialect] = catalogue_ref
                continue
            export = export_dialect(provider, dialect, always, domains)
            warned = [w.as_dict() for w in export.warnings]
            counts = {"discovery": len(served_tools(dialect, domains)), "pinned": len(always)}
            dialects[dialect] = _provider_file(
                artifacts, provider, dialect, export.definitions, export.names, warned, counts=counts
            )
        if lost:
            log.info(
                "%s export: %d lossy adaptations in %d tools (toolcat export --provider %s lists them)",
                *(provider, len(lost), len({w["tool"] for w in lost}), provider),
            )
        entry[provider] = {"catalog": catalogue_ref, "dialects": dialects, "warnings": len(lost)}
    artifacts.manifest["providers"] = entry
    artifacts.manifest["dialects"] = dialect_counts(specs, domains)
    discovery: dict[str, JSON] = {"domains": list(domains)} if domains else {}
    if catalog.pin_tools:  # servers list the pinned tools beside the discovery tools (toolcat.yaml discovery.pinned)
        discovery["pinned"] = True
    if discovery:
        artifacts.manifest["discovery"] = discovery


def dialect_counts(specs: Mapping[str, tuple[dict[str, JSON], Ref]], domains: list[str]) -> dict[str, JSON]:
    """Each dialect's tool count as a client sees it: its discovery tools, and the pinned (always_load) ones apart.

    Seed 001 holds the gateway to three tools: the pinned tools are offered beside them and counted separately
    (``toolcat stats`` prints these figures). The direct dialect's tools are the whole catalogue.
    """
    pinned = sorted(tool_id for tool_id, (spec, _) in specs.items() if spec.get("always_load"))
    out: dict[str, JSON] = {}
    for dialect in DIALECT_NAMES:
        tools = served_tools(dialect, domains)
        out[dialect] = (
            {"discovery": len(tools), "pinned": len(pinned), "pinned_tools": list(pinned)}
            if tools
            else {"discovery": 0, "pinned": 0, "tools": len(specs)}
        )
    return out


def _provider_file(
    artifacts: ArtifactSet,
    provider: str,
    scope: str,
    definitions: JSON,
    names: dict[str, str],
    warnings: list[dict[str, str]],
    texts: list[str] | None = None,
    *,
    counts: dict[str, int] | None = None,
) -> Ref:
    """``providers/<provider>/<scope>``; ``texts`` (canonical definitions) go where ``definitions`` is HOLE."""
    data = dumps(
        {
            "artifact": "provider_tools",
            "provider": provider,
            "scope": scope if scope == "catalog" else f"dialect:{scope}",
            "tools": [{"functionDeclarations": definitions}] if provider == "gemini" else definitions,
            "names": names,
            "warnings": warnings,
            **({"counts": counts} if counts is not None else {}),
        }
    )
    return artifacts.add(f"providers/{provider}", scope, ".json", data if texts is None else splice(data, texts))


def _made(provider: str, specs: Mapping[str, tuple[dict[str, JSON], Ref]], ids: list[str], index: int) -> list[JSON]:
    """The definition text of the ``index``-th of ``ids`` (for :meth:`toolcat.build.memo.ToolMemo.get_many`)."""
    return _definition_text(provider, specs[ids[index]][0])


def _definition_text(provider: str, spec: Mapping[str, JSON]) -> list[JSON]:
    """``[name, canonical JSON of the definition, [warnings]]`` of one stored spec (as export_specs makes it)."""
    export = export_specs(provider, [spec])
    ((name, _),) = export.names.items()
    return [name, dumps(export.definitions[0]).decode("utf-8"), [w.as_dict() for w in export.warnings]]
