"""What every dialect shares; no dialect imports another."""

from __future__ import annotations

from typing import Any

from ...format.envelope import ReaderError, is_error
from ...format.types import Json
from ..checks import (
    bad,
    close_names,
    public_pointer,
    shown,
)
from ..execution.handlers import available
from ..session import Session


def unknown_path(text: str, names: list[str]) -> ReaderError:
    """UNKNOWN_PATH for a group or operation that does not exist, with the closest names."""
    close = close_names(text, names)
    return ReaderError(
        "UNKNOWN_PATH",
        f"no group or operation {shown(text, 120)}",
        details={"path": text, "suggestions": close},
        hints=[
            f"Did you mean {', '.join(close)}?"
            if close
            else "Search by purpose, or start at the root to see the groups."
        ],
        next_action=(
            {"op": "help", "args": {"path": close[0]}}
            if close
            else {"op": "search", "args": {"query": text.replace(".", " ").replace("_", " ")}}
        ),
        help_path="root",
    )


def check_capability(capability: Any) -> str | None:
    """A capability filter as a lower-case string (None: no filter); BAD_REQUEST for anything else."""
    if capability is None:
        return None
    if not isinstance(capability, str) or not capability.strip() or len(capability) > 200:
        raise bad(f"'capability' must be a capability name such as 'code-analysis', got {shown(capability)}")
    return capability.strip().lower()


def has_capability(pointer: Json, capability: str) -> bool:
    """Whether a pointer declares ``capability`` (skills' ``capabilities``, compared case-insensitively)."""
    declared = pointer.get("capabilities")
    return isinstance(declared, list) and capability in {str(c).lower() for c in declared}


def delegate(result: Any, help_path: str = "root") -> Json:
    """A search module answer as a reader envelope: public pointers, and the envelope's keys filled in."""
    if not isinstance(result, dict):
        raise ReaderError("INTERNAL", f"search returned {type(result).__name__}, not a dict")
    if is_error(result):
        return result
    out = dict(result)
    for key in ("tools", "results"):
        if isinstance(out.get(key), list):
            out[key] = [public_pointer(t) if isinstance(t, dict) and "tool_id" in t else t for t in out[key]]
    out.setdefault("ok", True)
    out.setdefault("help_path", help_path)
    out.setdefault("hints", [])
    out.setdefault("next_action", None)
    return out


def runnable(session: Session, tool_id: str, spec: Json) -> bool:
    """Whether this reader can run the tool: a handler of a known type that the host allows."""
    handler = spec.get("handler")
    return (
        isinstance(handler, dict)
        and available(str(handler.get("type")), session.handlers)
        and session.policy.refusal(tool_id, handler) is None
    )
