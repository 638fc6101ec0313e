"""The build contributor of provider exports: ``providers/<provider>/`` (the whole catalogue and each dialect).

Each dialect file holds the dialect's discovery tools (with the namespaced dialect's per-domain tools when the
catalogue declares ``discovery.per_domain``), then the pinned (``always_load``) tools, and ``counts`` of both apart;
the direct dialect's entry is the catalogue file itself. ``manifest["dialects"]`` repeats the counts.

Definitions are :func:`toolcat.build.contributors.exports.definitions.export_specs`', made one tool at a time and
spliced into the catalogue file as canonical text, so a one-tool edit adapts one schema and the file's bytes are
those of dumping the whole export (``tests/build/test_memo.py``). The last build's definitions are taken from its own
catalogue file (:func:`_last_texts`): a private file per provider names that file and, by the sha256 of each tool's
stored spec, where its definition lies in it, so an edit reads no memo of 30,000 definition texts (issue 33).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ....format.canonical import dumps, sha256
from ....format.dialects import DIALECT_NAMES, dialect_tools, served_tools
from ....format.types import JSON
from ...memo import HOLE, memo_file
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
        catalogue_ref, lost, lost_tools = _catalogue(artifacts, provider, specs, ids, shas)
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
                *(provider, lost, lost_tools, provider),
            )
        entry[provider] = {"catalog": catalogue_ref, "dialects": dialects, "warnings": lost}
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


def _payload(
    provider: str,
    scope: str,
    definitions: JSON,
    names: dict[str, str],
    warnings: JSON,
    counts: dict[str, int] | None = None,
) -> bytes:
    """The canonical bytes of ``providers/<provider>/<scope>``."""
    return dumps(
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


def _provider_file(
    artifacts: ArtifactSet,
    provider: str,
    scope: str,
    definitions: JSON,
    names: dict[str, str],
    warnings: list[dict[str, str]],
    *,
    counts: dict[str, int] | None = None,
) -> Ref:
    """``providers/<provider>/<scope>``: a dialect's file."""
    return artifacts.add(
        f"providers/{provider}", scope, ".json", _payload(provider, scope, definitions, names, warnings, counts)
    )


#: The format of a provider's private file (:func:`_last_texts`): its catalogue file and where each definition lies.
SPANS_FORMAT = "toolcat-export-spans-1"
_HOLE_BYTES = json.dumps(HOLE).encode("utf-8")
#: Where the warnings' texts go in a catalogue file's payload before they are put in (after :data:`HOLE`, in key order).
_WARNINGS_HOLE_VALUE = "\x00toolcat-warnings\x00"
_WARNINGS_HOLE = json.dumps(_WARNINGS_HOLE_VALUE).encode("utf-8")


def spans_file(provider: str) -> str:
    """The private file that names ``provider``'s catalogue file and where each tool's definition lies in it."""
    return memo_file(f"export.{provider}")


def _catalogue(
    artifacts: ArtifactSet,
    provider: str,
    specs: Mapping[str, tuple[dict[str, JSON], Ref]],
    ids: list[str],
    shas: list[str],
) -> tuple[Ref, int, int]:
    """``providers/<provider>/catalog`` and its spans file; the file's ref, its warnings and the tools they concern.

    Each tool's definition and warnings are canonical JSON texts: the last build's, cut from its catalogue file where
    its spans file says they lie (under the sha256 of the tool's stored spec), else made (:func:`_definition_text`).
    They are put where the payload's holes are, so the bytes are those of dumping the payload with the definitions
    and warnings themselves (``tests/build/test_memo.py``), and no tool's definition is parsed or dumped again.
    """
    last, entries = _last_texts(artifacts.previous, provider)
    found = [entries.get(sha) for sha in shas]  # each checked to lie within the file (_last_texts)
    called = [span[0] if span is not None else "" for span in found]
    texts = [last[span[1] : span[2]] if span is not None else b"" for span in found]
    warned = [last[span[3] : span[4]] if span is not None else b"" for span in found]
    counts = [span[5] if span is not None else 0 for span in found]
    for index, span in enumerate(found):
        if span is None:
            called[index], made, warnings = _definition_text(provider, specs[ids[index]][0])
            texts[index] = made.encode("utf-8")
            warned[index] = b",".join(dumps(warning) for warning in warnings)
            counts[index] = len(warnings)
    names = dict(zip(called, ids, strict=True))
    data = _payload(provider, "catalog", HOLE, names, _WARNINGS_HOLE_VALUE)
    at, w_at = data.index(_HOLE_BYTES), data.index(_WARNINGS_HOLE)  # no name holds a NUL; tools, then warnings
    tools, lost = b",".join(texts), b",".join([text for text in warned if text])
    middle = data[at + len(_HOLE_BYTES) : w_at]
    whole = b"".join((data[:at], b"[", tools, b"]", middle, b"[", lost, b"]", data[w_at + len(_WARNINGS_HOLE) :]))
    ref = artifacts.add(f"providers/{provider}", "catalog", ".json", whole)
    spans: list[int] = []
    start, w_start = at + 1, at + len(tools) + len(middle) + 3
    for text, warning, count in zip(texts, warned, counts, strict=True):
        spans += (start, start + len(text), w_start, w_start + len(warning), count)
        start += len(text) + 1
        if warning:
            w_start += len(warning) + 1
    saved = {"file": ref, "format": SPANS_FORMAT, "names": called, "shas": shas, "spans": spans}
    artifacts.private[spans_file(provider)] = dumps(saved)
    return ref, sum(counts), sum(1 for count in counts if count)


def _last_texts(previous: Path | None, provider: str) -> tuple[bytes, dict[str, tuple[str, int, int, int, int, int]]]:
    """The last build's catalogue file of ``provider`` and, by spec sha256, each tool's spans in it; or nothing.

    The spans file is a private file in the build folder, read as JSON and checked whole: it must name a catalogue
    file of this provider, which must be there with the sha256 it names, and every span must lie within it. Each tool
    has a name, where its definition starts and ends, where its warnings do, and their count. A file missing, changed
    or of another format only costs time: every definition is made again.
    """
    if previous is None:
        return b"", {}
    try:
        saved = json.loads((previous / spans_file(provider)).read_bytes())
    except (OSError, ValueError):
        return b"", {}
    if not isinstance(saved, dict) or saved.get("format") != SPANS_FORMAT:
        return b"", {}
    ref, names, shas, spans = saved.get("file"), saved.get("names"), saved.get("shas"), saved.get("spans")
    if not (
        isinstance(ref, dict)
        and isinstance(names, list)
        and isinstance(shas, list)
        and isinstance(spans, list)
        and len(names) == len(shas)
        and len(spans) == _SPAN * len(shas)
        and all(type(name) is str for name in names)
        and all(type(sha) is str for sha in shas)
        and all(type(place) is int and place >= 0 for place in spans)
    ):
        return b"", {}
    path = ref.get("path")
    if not isinstance(path, str) or not re.fullmatch(rf"providers/{provider}/catalog\.[0-9a-f]{{16}}\.json", path):
        return b"", {}
    try:
        data = (previous / path).read_bytes()
    except OSError:
        return b"", {}
    size = len(data)
    starts, ends, w_starts, w_ends = spans[0::_SPAN], spans[1::_SPAN], spans[2::_SPAN], spans[3::_SPAN]
    if not (
        all(start <= end <= size for start, end in zip(starts, ends, strict=True))
        and all(start <= end <= size for start, end in zip(w_starts, w_ends, strict=True))
        and sha256(data) == ref.get("sha256")
    ):
        return b"", {}
    return data, dict(zip(shas, zip(names, starts, ends, w_starts, w_ends, spans[4::_SPAN], strict=True), strict=True))


#: Numbers a tool has in a spans file: where its definition starts and ends, where its warnings do, and their count.
_SPAN = 5


def _definition_text(provider: str, spec: Mapping[str, JSON]) -> tuple[str, str, list[dict[str, str]]]:
    """The name, canonical JSON of the definition and warnings of one stored spec (as export_specs makes them)."""
    export = export_specs(provider, [spec])
    ((name, _),) = export.names.items()
    return name, dumps(export.definitions[0]).decode("utf-8"), [w.as_dict() for w in export.warnings]
