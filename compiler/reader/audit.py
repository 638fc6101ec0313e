r"""An append-only JSON Lines audit log of reader operations (search → choose → expand → call).

One record per public operation: ``{ts, trace_id, session_id, op, target, outcome,
latency_ms, registry_version}`` where ``outcome`` is ``"ok"`` or the error code. A call of a
tool (``exec``) adds what 001's analytics and UI events need (:func:`tool_labels`): ``tool_id``,
``entity``, ``action``, ``contexts`` (the context argument names the tool declares) and
``context_filled`` (those the host filled), names only, never a context value. A log
that cannot be written never breaks the operation it records; it logs a warning once.

Each record is one line of ASCII JSON (``ensure_ascii``), so nothing an agent sends (U+2028,
U+0085, lone surrogates, NUL) can split a line, and :func:`read_audit` splits on ``\n`` only.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from pathlib import Path
from typing import Any, NotRequired, Protocol, TypedDict, Unpack

from ..format.names import entity_action

log = logging.getLogger(__name__)

TARGET_LIMIT = 300


class AuditFields(TypedDict):
    """What a session says about one operation, the same for every sink: the record's fields but its stamps."""

    op: str
    target: Any
    outcome: str
    latency_ms: float
    trace_id: str
    registry_version: str
    #: labels of a tool call (:func:`tool_labels`); names only, never a context value
    extra: NotRequired[dict[str, Any] | None]


class AuditSink(Protocol):
    """Where a session's audit records go: an :class:`AuditLog` file, or a host's store (``toolcat serve --state``)."""

    def record(self, **fields: Unpack[AuditFields]) -> None:
        """Keep one record; never raises."""
        ...


class AuditLog:
    """Appends one JSON object per line to ``path`` (thread-safe)."""

    def __init__(self, path: str | Path, session_id: str) -> None:
        self.path = Path(path)
        self.session_id = session_id
        self._lock = threading.Lock()
        self._warned = False

    def record(self, **fields: Unpack[AuditFields]) -> None:
        """Append one record; a write failure is logged, never raised."""
        line = audit_line(self.session_id, **fields) + "\n"
        with self._lock:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:
                if not self._warned:
                    log.warning("cannot write the audit log %s: %s", self.path, exc)
                    self._warned = True


def audit_line(session_id: str, **fields: Unpack[AuditFields]) -> str:
    """One audit record as JSON text, the same for the log file and for serve's shared stores.

    ASCII JSON, so no line separator an agent sends (U+2028, NEL) can split a line; the target is cut at
    :data:`TARGET_LIMIT` characters.
    """
    target = fields["target"]
    text = target if isinstance(target, str) else json.dumps(target, ensure_ascii=False, default=repr)
    record = {
        "ts": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{int(time.time() * 1000) % 1000:03d}Z",
        "trace_id": fields["trace_id"],
        "session_id": session_id,
        "op": fields["op"],
        "target": text[:TARGET_LIMIT],
        "outcome": fields["outcome"],
        "latency_ms": round(fields["latency_ms"], 3),
        "registry_version": fields["registry_version"],
        **(fields.get("extra") or {}),
    }
    return json.dumps(record, ensure_ascii=True, sort_keys=True, default=repr)


def tool_labels(tool_id: str, spec: dict[str, Any], filled: list[str]) -> dict[str, Any]:
    """What an audit record of a call says about its tool: ``tool_id``, ``entity``, ``action``, ``contexts``, ``context_filled``.

    ``entity`` and ``action`` come from the spec (a build writes them), else from the id (an older build),
    with :func:`toolcat.format.names.entity_action`. Context argument names only: their values may be the
    host's identifiers and stay out of every log.
    """
    derived = entity_action(tool_id)
    entity, action = spec.get("entity"), spec.get("action")
    contexts = spec.get("contexts")
    return {
        "tool_id": tool_id,
        "entity": entity if isinstance(entity, str) and entity else derived[0],
        "action": action if isinstance(action, str) and action else derived[1],
        "contexts": [n for n in contexts if isinstance(n, str)] if isinstance(contexts, list) else [],
        "context_filled": list(filled),
    }


def read_audit(path: str | Path) -> list[dict[str, Any]]:
    r"""Every record of an audit log, in order (for hosts and tests); a line that is not JSON is skipped with a warning.

    Lines end at ``\n`` only: ``str.splitlines`` would also split at U+2028 or U+0085 inside a value
    written by an older toolcat, and lose the whole log.
    """
    out: list[dict[str, Any]] = []
    text = Path(path).read_text(encoding="utf-8", errors="replace")
    for number, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            log.warning("audit log %s: line %d is not a JSON record (skipped)", path, number)
            continue
        if isinstance(record, dict):
            out.append(record)
    return out
