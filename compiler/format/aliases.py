"""Provider-safe aliases for canonical tool ids: stable, reversible, unique, within each provider's rules.

The rules, from each provider's documentation (checked 2026-11):

* OpenAI function names: ``^[a-zA-Z0-9_-]{1,64}$``.
* Anthropic tool names: ``^[a-zA-Z0-9_-]{1,64}$``.
* Gemini function declarations: must start with a letter or an underscore, then letters,
  digits, underscores or dashes (newer APIs also allow dots and colons), at most 63
  characters in the strictest published version. We keep to the strictest form.

An alias is the id with dots replaced by underscores (``file.read`` → ``file_read``).
When that is too long, or two ids map to the same alias (``a.b_c`` and ``a_b.c``), the
id that sorts first keeps the plain alias and every other one gets a suffix made from
the hash of its own id: the result depends only on the ids involved, never on file
order, and is reported as a warning.
"""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ProviderRule:
    """A provider's tool-name constraint."""

    name: str
    pattern: re.Pattern[str]
    max_length: int
    doc: str


PROVIDER_RULES: dict[str, ProviderRule] = {
    "openai": ProviderRule(
        "openai",
        re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
        64,
        "OpenAI: function.name matches ^[a-zA-Z0-9_-]{1,64}$",
    ),
    "anthropic": ProviderRule(
        "anthropic",
        re.compile(r"^[a-zA-Z0-9_-]{1,64}$"),
        64,
        "Anthropic: tool name matches ^[a-zA-Z0-9_-]{1,64}$",
    ),
    "gemini": ProviderRule(
        "gemini",
        re.compile(r"^[a-zA-Z_][a-zA-Z0-9_-]{0,62}$"),
        63,
        "Gemini: starts with a letter or underscore; a-z, A-Z, 0-9, _ or -; at most 63 characters",
    ),
}

#: Every provider toolcat names tools for, in the order builds, exports and pages list them. The one
#: definition: the alias maps, exports, ``toolcat export --provider`` and the site all read it.
PROVIDERS: tuple[str, ...] = tuple(PROVIDER_RULES)


def check_provider(provider: str) -> None:
    """Raise ``ValueError`` unless ``provider`` is one toolcat names tools for."""
    if provider not in PROVIDER_RULES:
        raise ValueError(f"unknown provider {provider!r}; expected one of {', '.join(PROVIDERS)}")


_SAFE = re.compile(r"[^a-zA-Z0-9_-]")


def _suffixed(base: str, tool_id: str, max_length: int) -> str:
    digest = hashlib.sha256(tool_id.encode()).hexdigest()[:8]
    return f"{base[: max_length - 9].rstrip('_-')}_{digest}"


def plain_alias(tool_id: str) -> str:
    """The natural alias: dots and other unsafe characters become underscores."""
    alias = _SAFE.sub("_", tool_id)
    if not re.match(r"[a-zA-Z_]", alias):
        alias = f"_{alias}"
    return alias


@dataclass(frozen=True, slots=True)
class AliasResult:
    """Aliases per provider per id, plus what had to be changed and why."""

    aliases: dict[str, dict[str, str]]  # tool id -> provider -> alias
    adjustments: tuple[tuple[str, str, str], ...]  # (provider, tool id, reason)


def assign_aliases(tool_ids: list[str], explicit: dict[str, str] | None = None) -> AliasResult:
    """Give every id an alias for every provider; deterministic for a given set of ids.

    ``explicit`` maps ids to author-chosen aliases; they are validated by the caller and
    take their name first.
    """
    explicit = explicit or {}
    ids = sorted(tool_ids)
    out: dict[str, dict[str, str]] = {tool_id: {} for tool_id in ids}
    adjustments: list[tuple[str, str, str]] = []
    plain = {tool_id: plain_alias(explicit.get(tool_id, tool_id)) for tool_id in ids}  # once, not once a provider
    for provider, rule in PROVIDER_RULES.items():
        taken: dict[str, str] = {}
        for tool_id, alias in sorted(explicit.items()):
            if rule.pattern.match(alias):
                taken[alias] = tool_id
                out[tool_id][provider] = alias
        for tool_id in ids:
            if provider in out[tool_id]:
                continue
            alias = plain[tool_id]
            reason = ""
            if len(alias) > rule.max_length:
                alias = _suffixed(alias, tool_id, rule.max_length)
                reason = f"longer than {rule.max_length} characters; shortened to {alias!r}"
            if alias in taken and taken[alias] != tool_id:
                other = taken[alias]
                alias = _suffixed(alias, tool_id, rule.max_length)
                reason = f"collides with {other!r}; renamed to {alias!r}"
            taken[alias] = tool_id
            out[tool_id][provider] = alias
            if reason:
                adjustments.append((provider, tool_id, reason))
    return AliasResult(out, tuple(adjustments))


def reverse_map(aliases: dict[str, dict[str, str]], provider: str) -> dict[str, str]:
    """alias → canonical id for one provider."""
    return {by_provider[provider]: tool_id for tool_id, by_provider in aliases.items()}
