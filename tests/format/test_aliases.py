"""Provider aliases: stable, reversible, unique, within each provider's name rules."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolcat.format.aliases import PROVIDER_RULES, assign_aliases, reverse_map

segment = st.from_regex(r"[a-z][a-z0-9_]{0,30}", fullmatch=True)
tool_ids = st.lists(st.lists(segment, min_size=2, max_size=4).map(".".join), min_size=1, max_size=40, unique=True)


def test_plain_alias() -> None:
    """file.read becomes file_read for every provider."""
    result = assign_aliases(["file.read"])
    assert result.aliases["file.read"] == {"openai": "file_read", "anthropic": "file_read", "gemini": "file_read"}
    assert result.adjustments == ()


def test_collision_is_resolved_deterministically_and_reported() -> None:
    """a.b_c and a_b.c both want a_b_c: the first in sort order keeps it, the other gets a hash suffix."""
    one = assign_aliases(["a_b.c", "a.b_c"])
    two = assign_aliases(["a.b_c", "a_b.c"])
    assert one == two
    assert one.aliases["a.b_c"]["openai"] == "a_b_c"
    assert one.aliases["a_b.c"]["openai"].startswith("a_b_c_")
    assert {(p, t) for p, t, _ in one.adjustments} == {(p, "a_b.c") for p in PROVIDER_RULES}


def test_long_ids_are_shortened_within_limits() -> None:
    """An id longer than a provider allows is cut and suffixed with its own hash."""
    long_id = "svc." + "very_long_segment_" * 5 + ".op"
    alias = assign_aliases([long_id]).aliases[long_id]
    assert len(alias["openai"]) <= 64
    assert len(alias["gemini"]) <= 63
    assert alias["openai"] != alias["gemini"] or len(alias["openai"]) <= 63


@settings(max_examples=150, deadline=None)
@given(tool_ids)
def test_aliases_are_valid_unique_and_reversible(ids: list[str]) -> None:
    """For any set of canonical ids, every alias meets its provider's rule, is unique and maps back."""
    result = assign_aliases(ids)
    for provider, rule in PROVIDER_RULES.items():
        aliases = [result.aliases[i][provider] for i in ids]
        assert all(rule.pattern.match(a) for a in aliases), aliases
        assert len(set(aliases)) == len(aliases)
        back = reverse_map(result.aliases, provider)
        assert all(back[result.aliases[i][provider]] == i for i in ids)


@settings(max_examples=60, deadline=None)
@given(tool_ids, st.data())
def test_aliases_are_stable_when_unrelated_tools_are_added(ids: list[str], data: st.DataObject) -> None:
    """Adding a tool never renames an existing tool unless the new one collides with it."""
    extra = data.draw(st.lists(segment, min_size=2, max_size=3).map(".".join))
    before = assign_aliases(ids).aliases
    after = assign_aliases([*ids, extra] if extra not in ids else ids).aliases
    new_plain = extra.replace(".", "_")
    for tool_id in ids:
        if before[tool_id]["openai"] != new_plain and tool_id.replace(".", "_") != new_plain:
            assert after[tool_id] == before[tool_id]
