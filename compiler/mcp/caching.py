"""Cache hints on the server's list and read answers (``ttlMs``, ``cacheScope``).

``public`` where the answer is fixed by the registry_version, so every client may keep it for
:data:`LIST_TTL_MS` (a new version is announced anyway: list_changed notifications and subscriptions/listen
events); ``private`` with no time for a per-client view (a namespaced client's own described tools).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from ..format.types import Json

__all__ = ["LIST_TTL_MS", "public", "public_json"]

#: How long a client may keep a list answer fixed by the registry_version (``ttlMs``, ``cacheScope: public``).
LIST_TTL_MS = 5 * 60 * 1000

M = TypeVar("M", bound=BaseModel)


def public(result: M, **fields: Any) -> M:
    """An SDK result (a list or a read) marked the same for every client of this registry_version."""
    return result.model_copy(update={**fields, "ttl_ms": LIST_TTL_MS, "cache_scope": "public"})


def public_json(answer: Json) -> Json:
    """A JSON answer of an extension method (the Skills extension's) with the same public cache hint."""
    return {**answer, "ttlMs": LIST_TTL_MS, "cacheScope": "public"}
