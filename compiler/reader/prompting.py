"""Focused prompt sections at run time: the tools a task needs, then the other required tools, under a budget.

Stdlib only, no Jinja: the build pre-renders every tool's ``short`` and ``full`` snippet
and counts its tokens (o200k_base), so assembling a section is picking snippets and
adding up their counts. ``catalog`` is anything with ``manifest``, ``fetch_json(ref)``
and, for the task-relevant part, ``find_tool(purpose, limit)`` — the reader's
:class:`toolcat.reader.Catalog` calls this from ``Catalog.prompt_section``.

The reported ``tokens`` is the sum of the parts' counts plus the separators' counts, as
measured at build time. BPE can merge across a boundary, so the true count of ``text``
is at most that sum in practice (tests hold it to the budget on real builds).
"""

from __future__ import annotations

import difflib
from typing import Any, Protocol

from ..format.buckets import lookup_bucket
from ..format.envelope import ReaderError
from .checks import trim

DETAILS = ("short", "full")
MAX_CANDIDATES = 20
#: A search match joins the section only when its score is at least this share of the best
#: match's (and at least MIN_RELEVANCE): weak matches on a common word stay out.
RELATIVE_RELEVANCE = 0.2
MIN_RELEVANCE = 0.05


class PromptSource(Protocol):
    """What :func:`prompt_section` needs from a catalogue."""

    @property
    def manifest(self) -> dict[str, Any]:
        """The catalogue's manifest."""

    def fetch_json(self, ref: dict[str, Any]) -> Any:
        """Parse the file a ref points to, after checking its hash."""

    def fetch_bytes(self, ref: dict[str, Any]) -> bytes:
        """The bytes a ref points to, after checking their hash."""


def _matched_ids(found: Any) -> list[str]:
    """Tool ids from a search answer: ``matches[].name``, ``tools[].tool_id`` or ``results[].tool_id``."""
    if isinstance(found, list):
        rows = found
    elif isinstance(found, dict) and found.get("ok", True):
        rows = found.get("matches") or found.get("tools") or found.get("results") or []
    else:
        return []
    scored: list[tuple[str, float | None]] = []
    for row in rows:
        if isinstance(row, str):
            scored.append((row, None))
        elif isinstance(row, dict):
            value = row.get("tool_id") or row.get("name")
            score = row.get("relevance", row.get("confidence"))
            if isinstance(value, str):
                scored.append((value, float(score) if isinstance(score, (int, float)) else None))
    scores = [s for _, s in scored if s is not None]
    floor = max(MIN_RELEVANCE, RELATIVE_RELEVANCE * max(scores)) if scores else 0.0
    return [tool_id for tool_id, score in scored if score is None or score >= floor]


class _Snippets:
    """Snippet buckets, fetched on demand and kept for the call."""

    def __init__(self, catalog: PromptSource, table: dict[str, Any]) -> None:
        self.catalog = catalog
        self.table = table
        self.loaded: dict[int, dict[str, Any]] = {}

    def get(self, tool_id: str) -> dict[str, Any] | None:
        index = lookup_bucket(tool_id, int(self.table["buckets"]))
        if index not in self.loaded:
            self.loaded[index] = self.catalog.fetch_json(self.table["refs"][index])["entries"]
        entry = self.loaded[index].get(tool_id)
        return entry if isinstance(entry, dict) else None


def prompt_section(
    catalog: PromptSource, task: str = "", budget_tokens: int = 1500, detail: str = "short"
) -> dict[str, Any]:
    """A focused tools section for ``task`` that stays within ``budget_tokens``.

    The budget goes first to the tools ``catalog.find_tool(task)`` ranks for the task
    (required or optional, best first, in ``detail``), then to every other required tool
    as a one-line ``short`` entry. A tool that does not fit in ``full`` is tried in
    ``short``; one that does not fit at all is listed in ``omitted``. The text lists the
    required tools in catalogue order, then the optional ones by rank.
    Returns ``{"ok", "text", "tokens", "budget_tokens", "detail", "tools", "omitted"}``.
    """
    if detail not in DETAILS:
        raise ValueError(f"detail must be one of {', '.join(DETAILS)}, got {detail!r}")
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise ValueError(f"budget_tokens must be a non-negative integer, got {budget_tokens!r}")
    entry = catalog.manifest.get("prompts")
    if not isinstance(entry, dict) or "index" not in entry:
        raise ValueError("this build has no prompt sections (manifest.prompts); rebuild it with the prompts stage")
    index = catalog.fetch_json(entry["index"])
    focused = index["focused"]
    snippets = _Snippets(catalog, index["snippets"])
    separator, block = focused["separator"][detail], focused["block_separator"]
    sep_tokens, block_tokens = int(focused["separator_tokens"][detail]), int(focused["block_separator_tokens"])

    header, used = focused["header"][detail], int(focused["header_tokens"][detail])
    if used > budget_tokens:
        return {
            "ok": True,
            "text": "",
            "tokens": 0,
            "budget_tokens": budget_tokens,
            "detail": detail,
            "tools": [],
            "omitted": [{"tool_id": r["tool_id"], "reason": "budget"} for r in index["required"]],
        }
    chosen: list[tuple[str, str, bool]] = []  # (tool_id, detail used, optional)
    omitted: list[dict[str, str]] = []

    def cost(tokens: int, first_in_block: bool) -> int:
        return tokens + (block_tokens if first_in_block else sep_tokens)

    def try_add(
        tool_id: str,
        counts: dict[str, Any],
        optional: bool,
        first_in_block: bool,
        extra: int = 0,
        levels: tuple[str, ...] | None = None,
    ) -> bool:
        nonlocal used
        for level in levels or ((detail, "short") if detail == "full" else ("short",)):
            needed = cost(int(counts[f"{level}_tokens"]), first_in_block) + extra
            if used + needed <= budget_tokens:
                used += needed
                chosen.append((tool_id, level, optional))
                return True
        omitted.append({"tool_id": tool_id, "reason": "budget"})
        return False

    candidates: list[str] = []
    if task.strip() and callable(getattr(catalog, "find_tool", None)):
        candidates = _matched_ids(catalog.find_tool(task, MAX_CANDIDATES))  # type: ignore[attr-defined]
    required = {row["tool_id"]: row for row in index["required"]}
    intro_cost = int(focused["optional_intro_tokens"][detail]) + block_tokens
    taken: set[str] = set()

    # first the tools the task needs, best match first, in the requested detail...
    for tool_id in candidates:
        if tool_id in taken:
            continue
        taken.add(tool_id)
        if tool_id in required:
            try_add(tool_id, required[tool_id], optional=False, first_in_block=not any(not opt for _, _, opt in chosen))
            continue
        snippet = snippets.get(tool_id)
        if snippet is None or not snippet.get("optional"):
            continue
        first_optional = not any(opt for _, _, opt in chosen)
        try_add(
            tool_id, snippet, optional=True, first_in_block=first_optional, extra=intro_cost if first_optional else 0
        )
    # ...then every other required tool as a one-liner, while the budget lasts
    for tool_id, row in required.items():
        if tool_id not in taken:
            taken.add(tool_id)
            try_add(
                tool_id, row, optional=False, first_in_block=not any(not opt for _, _, opt in chosen), levels=("short",)
            )

    order = {tool_id: position for position, tool_id in enumerate(required)}
    chosen.sort(key=lambda item: (item[2], order.get(item[0], 0)))  # required in catalogue order, then optional by rank
    required_text = separator.join(str(snippets.get(t)[level]) for t, level, opt in chosen if not opt)  # type: ignore[index]
    optional_text = separator.join(str(snippets.get(t)[level]) for t, level, opt in chosen if opt)  # type: ignore[index]
    blocks = [
        header,
        *([required_text] if required_text else []),
        *([focused["optional_intro"][detail], optional_text] if optional_text else []),
    ]
    return {
        "ok": True,
        "text": block.join(blocks),
        "tokens": used,
        "budget_tokens": budget_tokens,
        "detail": detail,
        "tools": [{"tool_id": t, "detail": level, "optional": opt} for t, level, opt in chosen],
        "omitted": omitted,
    }


def _prompt_index(catalog: PromptSource) -> dict[str, Any]:
    """The build's prompts index (``manifest.prompts.index``); UNAVAILABLE when the build has none."""
    entry = catalog.manifest.get("prompts")
    if not isinstance(entry, dict) or not isinstance(entry.get("index"), dict):
        raise ReaderError(
            "UNAVAILABLE",
            "this build has no prompt sections (manifest.prompts)",
            hints=["Rebuild the catalogue with a toolcat that writes the prompts stage."],
        )
    index = catalog.fetch_json(entry["index"])
    if not isinstance(index, dict) or not isinstance(index.get("sections"), dict):
        raise ReaderError("INTEGRITY", "the prompts index has no 'sections' table")
    return index


def named_section(catalog: PromptSource, name: Any = None) -> dict[str, Any]:
    """One prompt section by name (``system.gateway``, ``tools.short``, ``skills.xml`` ...), or the list of them.

    Without a name: ``{"ok", "sections": [{"name", "media_type", "tokens"}]}``. With one:
    ``{"ok", "name", "media_type", "tokens", "text"}``. An unknown name is a NOT_FOUND envelope whose
    ``details.sections`` lists the known names (the closest ones in the hints).
    """
    index = _prompt_index(catalog)
    sections: dict[str, Any] = index["sections"]
    known = sorted(sections)
    if name is None:
        rows = [
            {"name": n, "media_type": sections[n].get("media_type"), "tokens": sections[n].get("tokens")} for n in known
        ]
        return {"ok": True, "sections": rows}
    if not isinstance(name, str) or not trim(name):
        raise ReaderError(
            "BAD_REQUEST",
            f"a prompt section name must be a non-empty string, got {type(name).__name__}",
            details={"sections": known},
            hints=["Pass one of the names in details.sections, e.g. 'system.gateway'."],
        )
    wanted = trim(name)
    if wanted not in sections:
        close = difflib.get_close_matches(wanted, known, n=3, cutoff=0.5)
        hints = [f"Did you mean {', '.join(close)}?"] if close else []
        hints.append("Known sections: " + ", ".join(known))
        raise ReaderError(
            "NOT_FOUND",
            f"no prompt section named {wanted[:120]!r}",
            details={"name": wanted[:120], "sections": known},
            hints=hints,
        )
    section = sections[wanted]
    text = catalog.fetch_bytes(section["ref"]).decode("utf-8")
    return {
        "ok": True,
        "name": wanted,
        "media_type": section.get("media_type"),
        "tokens": section.get("tokens"),
        "text": text,
    }
