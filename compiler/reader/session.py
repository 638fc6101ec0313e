"""A reader session: what the host allows (policy), the guard and audit of every operation, and tool execution.

:meth:`Session.run` is the guard every public operation goes through: it times the call, turns
any failure into an error envelope (never a traceback) and writes the audit record.
:meth:`Session.tool_exec` validates and runs one tool (authorisation, argument checks, the handler
from :mod:`toolcat.reader.execution.handlers`, the trust policy, idempotency keys); :meth:`Session.tool_batch`
runs several.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..format.agent_tools import read_only_tools
from ..format.envelope import ReaderError, error_envelope, is_error
from ..format.schema_nulls import without_null_optionals
from ..format.types import Json
from .audit import AuditLog, AuditSink, tool_labels
from .checks import MAX_NAME, as_sent, bad, check_bool, deprecation_note, ok, or_default, shown, trace_id
from .execution import arguments
from .execution import runners as execute
from .execution.handlers import Handler, find_handler
from .execution.idempotency import (
    IdempotencyRecords,
    IdempotencyStore,
)
from .execution.policy import HandlerPolicy, read_only_refusal
from .store import Store

log = logging.getLogger(__name__)

#: A batch holds at most this many items; a parallel batch runs at most MAX_BATCH_WORKERS at a time.
MAX_BATCH = 100
MAX_BATCH_WORKERS = 8
#: The keys of a batch item: ``{op, args, ...}`` or 001's typed ``{type: "exec", op, args}`` / ``{type: "help", path}``.
EXEC_ITEM_KEYS = frozenset({"type", "op", "args", "idempotency_key", "dry_run"})
HELP_ITEM_KEYS = frozenset({"type", "path", "format", "include_examples", "include_schemas"})
#: The last id segments of an entity's list or search op, the way forward after a handler's NOT_FOUND.
ENTITY_FINDERS = ("list", "search", "find", "query")


def _audit_target(target: Any) -> str:
    """The target of an operation as the audit log's JSON text (a bounded repr when it nests too deeply)."""
    if isinstance(target, str):
        return target
    try:
        return json.dumps(target, ensure_ascii=False, default=repr)
    except (RecursionError, ValueError):
        return shown(target, 300)


def sent_op(value: Any) -> Json:
    """A batch item's op as the caller sent it: ``{"op": ...}``, with ``op_truncated: true`` when it was cut."""
    op, cut = as_sent(value)
    return {"op": op, "op_truncated": True} if cut else {"op": op}


def _caught(exc: ReaderError, what: str) -> Json:
    """The envelope of an error an operation raised, an INTERNAL one also logged with its traceback for the host.

    INTERNAL is a catalogue or reader bug the reader caught (a tampered tool whose args_schema is not a schema).
    """
    if exc.code == "INTERNAL":
        log.error("%s: %s", what, exc.message, exc_info=exc)
    return exc.envelope()


class Session:
    """What one opened catalogue may do, and the record of what it did."""

    def __init__(
        self,
        store: Store,
        policy: HandlerPolicy,
        *,
        read_only: bool,
        allowed_namespaces: list[str] | None,
        require_expand: bool,
        timeout: float,
        audit: str | Path | AuditSink | None,
        handlers: dict[str, Handler] | None = None,
        context: dict[str, Any] | None = None,
        pinned: bool | None = None,
    ) -> None:
        self.store = store
        self.policy = policy
        self.read_only = read_only
        self.allowed_namespaces = list(allowed_namespaces) if allowed_namespaces is not None else None
        self.require_expand = require_expand
        self.timeout = timeout
        #: Handler functions of this catalogue only, by type (``Catalog.open(..., handlers=...)``).
        self.handlers = dict(handlers or {})
        #: The host's context (``Catalog.open(context=...)``): values for the arguments tools declare in ``contexts``.
        self.context: dict[str, Any] = dict(context or {})
        self.session_id = trace_id()
        self.audit: AuditSink | None = (
            AuditLog(audit, self.session_id) if isinstance(audit, (str, Path)) else audit  # a host's sink as is
        )
        self.idempotency: IdempotencyRecords = IdempotencyStore()
        #: The host's choice to list pinned tools beside the discovery tools (``Catalog.open(pinned=)``); None: the
        #: catalogue's ``discovery.pinned`` setting decides.
        self.pinned = pinned
        self._expanded: set[str] = set()
        self._lock = threading.Lock()

    def use_state(self, idempotency: IdempotencyRecords, audit: AuditSink | None) -> None:
        """Keep idempotency records and audit records in a host's store (``toolcat serve --state``, a fleet's)."""
        self.idempotency, self.audit = idempotency, audit

    # -- the guard ------------------------------------------------------------------------------
    def run(self, op: str, target: Any, fn: Callable[[str], Json], labels: Json | None = None) -> Json:
        """Run one public operation: time it, turn any failure into an envelope, audit it.

        ``labels`` is filled by ``fn`` as it runs (a call's tool labels, :func:`toolcat.reader.audit.tool_labels`)
        and added to the audit record.
        """
        trace = trace_id()
        started = time.perf_counter()
        try:
            result = fn(trace)
        except ReaderError as exc:
            result = _caught(exc, f"reader operation {op}({shown(target, 300)})")
        except Exception as exc:
            log.exception("reader operation %s(%s) failed", op, shown(target, 300))
            result = error_envelope(
                "INTERNAL",
                f"{op} failed: {type(exc).__name__}: {exc}",
                details={"exception": type(exc).__name__},
                hints=["This is a reader or catalogue bug; the host log has the traceback."],
            )
        latency = (time.perf_counter() - started) * 1000
        if self.audit is not None:
            outcome = result["error"]["code"] if is_error(result) else "ok"
            self.audit.record(
                op=op,
                target=_audit_target(target),
                outcome=outcome,
                latency_ms=latency,
                trace_id=trace,
                registry_version=self.store.registry_version,
                extra=labels or None,
            )
        return result

    def record_open(self, location: str, latency_ms: float) -> None:
        """Audit the opening of the catalogue."""
        if self.audit is not None:
            self.audit.record(
                op="open",
                target=location,
                outcome="ok",
                trace_id=trace_id(),
                latency_ms=latency_ms,
                registry_version=self.store.registry_version,
            )

    # -- the host's context -----------------------------------------------------------------------
    def model_spec(self, spec: Json) -> Json:
        """``spec`` as the model reads it: without the arguments this session's context fills (the host owns them)."""
        return arguments.without_host_args(spec, arguments.host_filled(spec, self.context))

    # -- policy ---------------------------------------------------------------------------------
    def expanded(self, tool_id: str) -> None:
        """Note that the agent has read ``tool_id``'s spec (for ``require_expand``)."""
        with self._lock:
            self._expanded.add(tool_id)

    @property
    def filters(self) -> bool:
        """Whether this session's policy hides tools (allowed namespaces, read-only): lists and searches filter."""
        return self.allowed_namespaces is not None or self.read_only

    def allows(self, tool_id: str, kind: Any = None) -> bool:
        """Whether the policy lets an agent see ``tool_id``: list, find and describe it (a hidden tool is absent).

        ``kind`` is the tool's kind when the caller holds it (a pointer or spec); else it is looked up when
        the session is read-only. ``require_expand`` hides nothing: it gates calls, not discovery.
        """
        if self.allowed_namespaces is not None and tool_id.split(".", 1)[0] not in self.allowed_namespaces:
            return False
        if not self.read_only:
            return True
        return bool((self.store.kind_of(tool_id) if kind is None else kind) != "write")

    def check_namespace(self, tool_id: str) -> None:
        """NOT_AUTHORIZED unless the tool's namespace is allowed in this session."""
        namespace = tool_id.split(".", 1)[0]
        if self.allowed_namespaces is not None and namespace not in self.allowed_namespaces:
            raise ReaderError(
                "NOT_AUTHORIZED",
                f"namespace {namespace!r} is not allowed in this session",
                details={"allowed_namespaces": self.allowed_namespaces},
                help_path=tool_id,
                hints=["The host limited this session to some namespaces; use a tool from them."],
                next_action={
                    "op": "help",
                    "args": {"path": self.allowed_namespaces[0] if self.allowed_namespaces else "root"},
                },
            )

    def authorize(self, tool_id: str, spec: Json, *, dry: bool = False) -> None:
        """NOT_AUTHORIZED unless this session may run the tool (namespace, read-only, described first).

        A dry run runs nothing, so read-only does not refuse it: its plan says the real call would be refused.
        """
        self.check_namespace(tool_id)
        if self.read_only and spec.get("kind") == "write" and not dry:
            raise read_only_refusal(tool_id)
        if self.require_expand and tool_id not in self._expanded:
            raise ReaderError(
                "NOT_AUTHORIZED",
                f"{tool_id} must be described before it is executed in this session",
                help_path=tool_id,
                hints=["Read the spec first: its arguments, policy and edge cases."],
                next_action={"op": "describe", "args": {"tool_id": tool_id}},
            )

    # -- execution ------------------------------------------------------------------------------
    def tool_exec(self, op: Any, args: Any = None, idempotency_key: Any = None, dry_run: Any = False) -> Json:
        """Validate and run one operation: ``{op, ok, result, meta}`` or ``{op, ok: false, error, meta}``."""
        labels: Json = {}
        return self.run("exec", op, lambda trace: self._exec(op, args, idempotency_key, dry_run, trace, labels), labels)

    def _exec(self, op: Any, args: Any, key: Any, dry_run: Any, trace: str, labels: Json) -> Json:
        started = time.perf_counter()
        warnings: list[str] = []
        meta_extra: Json = {}
        tool_id = op if isinstance(op, str) and len(op) <= MAX_NAME else None
        try:
            tool_id, body = self._exec_steps(op, args, key, dry_run, warnings, meta_extra)
            data = {k: v for k, v in body.items() if k != "next_action"}  # a handler's next step (task.list's)
            envelope = ok(data, help_path=tool_id, next_action=body.get("next_action"))
        except ReaderError as exc:
            envelope = _caught(exc, f"tool_exec({shown(op)})")
        except Exception as exc:
            log.exception("tool_exec(%s) failed", shown(op))
            envelope = error_envelope(
                "INTERNAL",
                f"{type(exc).__name__}: {exc}",
                details={"exception": type(exc).__name__},
                help_path=tool_id or "root",
            )
        envelope["op"], cut = as_sent(op)  # as sent, so it can be sent again; meta.tool_id names what it resolved to
        if cut:
            envelope["op_truncated"] = True
        labels.update(meta_extra.pop("_labels", {}))
        resolved = meta_extra.get("tool_id")
        if is_error(envelope) and envelope["error"].get("next_action") is None and isinstance(resolved, str):
            try:
                envelope["error"]["next_action"] = self.way_forward(envelope["error"]["code"], resolved)
            except ReaderError as exc:  # a finder's spec that cannot be read: the error stands without a next step
                log.warning("no way forward after %s: %s", envelope["error"]["code"], exc.message)
        envelope["meta"] = {
            "trace_id": trace,
            "latency_ms": round((time.perf_counter() - started) * 1000, 3),
            "warnings": warnings,
            "registry_version": self.store.registry_version,
            **meta_extra,
        }
        return envelope

    def _checked_args(
        self, op: str, args: Any, warnings: list[str], meta: Json, *, dry: bool = False
    ) -> tuple[str, Json, Any]:
        """(tool_id, spec, args with defaults) once the call is authorised and its args valid."""
        try:
            tool_id, spec = self.store.spec(op)
        except ReaderError as exc:  # a hidden tool is never suggested (list-time policy: it does not exist here)
            suggestions = (exc.details or {}).get("suggestions")
            if exc.code != "TOOL_NOT_FOUND" or not self.filters or not isinstance(suggestions, list):
                raise
            raise self.store.not_found(op, [s for s in suggestions if self.allows(str(s))]) from None
        meta["tool_id"] = tool_id
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ReaderError(
                "VALIDATION_ERROR",
                f"args of {tool_id} must be a JSON object, got {type(args).__name__}",
                details={"field_errors": [{"field": "$", "message": "args must be an object", "expected": "object"}]},
                help_path=tool_id,
                next_action={"op": "help", "args": {"path": tool_id}},
            )
        if spec.get("deprecated"):
            warnings.append(deprecation_note(spec))
        self.authorize(tool_id, spec, dry=dry)
        schema = spec.get("args_schema") or {}
        given, host = arguments.fill_context(spec, without_null_optionals(schema, args), self.context, warnings)
        meta["_labels"] = tool_labels(tool_id, spec, host)
        if host:
            meta["context_filled"] = host
        filled = arguments.apply_defaults(schema, given)
        field_errors = arguments.host_field_errors(arguments.validate_args(schema, filled, warnings), host)
        if field_errors:
            names = ", ".join(e["field"] for e in field_errors)
            raise ReaderError(
                "VALIDATION_ERROR",
                f"{len(field_errors)} invalid argument(s) for {tool_id}: {names}",
                details={"field_errors": field_errors},
                help_path=tool_id,
                hints=["Fix every listed field and call again; tool_help(help_path) shows the arguments."],
                next_action={"op": "help", "args": {"path": tool_id}},
            )
        return tool_id, spec, filled

    def _dry_run(self, tool_id: str, spec: Json, filled: Json, warnings: list[str]) -> Json:
        """What a call would do, run nothing; a refusal the real call would meet is in the plan and a warning."""
        plan = execute.describe_run({**spec, "tool_id": tool_id}, filled, self.policy)
        if self.read_only and spec.get("kind") == "write":
            refusal = read_only_refusal(tool_id)
            plan.update(allowed=False, refusal={"code": refusal.code, "message": refusal.message})
            warnings.append(f"a real call would be refused: {refusal.message}")
        elif not plan.get("allowed", True):
            warnings.append("a real call would be refused: this host does not allow the tool's handler")
        return {"dry_run": True, "result": None, "would_run": plan}

    def _exec_steps(
        self, op: Any, args: Any, key: Any, dry_run: Any, warnings: list[str], meta: Json
    ) -> tuple[str, Json]:
        if not isinstance(op, str) or not op.strip() or len(op) > MAX_NAME:
            raise bad(f"'op' must be an operation name like 'file.read', got {shown(op)}")
        if key is not None and (not isinstance(key, str) or not key or len(key) > MAX_NAME):
            raise bad(f"idempotency_key must be a non-empty string, got {shown(key)}")
        dry = check_bool(or_default(dry_run, False), "dry_run")
        tool_id, spec, filled = self._checked_args(op, args, warnings, meta, dry=dry)
        if dry:
            return tool_id, self._dry_run(tool_id, spec, filled, warnings)
        handler = spec.get("handler")
        if not isinstance(handler, dict):
            raise ReaderError(
                "NOT_EXECUTABLE",
                f"{tool_id} has no handler: the host application must run it",
                help_path=tool_id,
                details={"args": filled},
                hints=["Call the tool through your own runtime with these validated args."],
            )
        runner = find_handler(str(handler.get("type")), tool_id, self.handlers)
        refusal = self.policy.refusal(tool_id, handler)
        if refusal is not None:
            raise refusal
        return tool_id, self._run_once(tool_id, spec, filled, runner, key, warnings, meta)

    def _run_once(
        self, tool_id: str, spec: Json, filled: Any, runner: Handler, key: str | None, warnings: list[str], meta: Json
    ) -> Json:
        """Run the handler, or replay the answer kept for ``key``."""
        canonical = hashlib.sha256(json.dumps(filled, sort_keys=True, default=repr).encode("utf-8")).hexdigest()
        with self.idempotency.lock(key):
            if key is not None:
                first = self.idempotency.get(key, tool_id, canonical)
                if first is not None:
                    meta["replayed"] = True
                    if is_error(first):
                        raise ReaderError(
                            **{
                                k: first["error"][k]
                                for k in ("code", "message", "details", "hints", "next_action", "help_path")
                            }
                        )
                    return first
            ctx = execute.ExecContext(
                tool_id,
                self._read_only_agent(self._visible_tasks(spec)),
                filled,
                self.timeout,
                self.store.fetch_bytes,
                self.policy.allows_python,
                warnings,
                policy=self.policy,
            )
            try:
                result = runner(ctx)
                json.dumps(result)
                body: Json = {"result": result}
                if ctx.next_action is not None:  # a handler's suggested next step (task.list: describe a task)
                    body["next_action"] = ctx.next_action
            except (TypeError, ValueError) as exc:
                raise ReaderError(
                    "INTERNAL", f"{tool_id} returned a result that is not JSON: {exc}", help_path=tool_id
                ) from None
            except ReaderError as exc:
                if key is not None:
                    self.idempotency.put(key, tool_id, canonical, exc.envelope(), warnings)
                raise
            if key is not None:
                self.idempotency.put(key, tool_id, canonical, body, warnings)
            return body

    def _read_only_agent(self, spec: Json) -> Json:
        """An agent's spec with its ``tools`` cut to the read tools when this session is read-only (issue 36)."""
        if not self.read_only or spec.get("type") != "agent" or not spec.get("tools"):
            return spec
        return {**spec, "tools": read_only_tools(spec.get("tools"))}

    def _visible_tasks(self, spec: Json) -> Json:
        """``spec`` with a generated ``task.list``'s rows cut to the tasks this session's policy lets the agent see."""
        handler = spec.get("handler")
        if not self.filters or not isinstance(handler, dict) or not isinstance(handler.get("tasks"), list):
            return spec
        rows = [r for r in handler["tasks"] if isinstance(r, dict) and self.allows(str(r.get("task")))]
        return {**spec, "handler": {**handler, "tasks": rows}}

    def way_forward(self, code: str, tool_id: str) -> Json | None:
        """The next_action of a failed call that has none (None for codes without one).

        After a handler's NOT_FOUND: the entity's list or search op (``onto.task.update`` → ``onto.task.list``),
        called when it needs no arguments, else described; without one, none (a search would rank the failed op
        first, and its help would offer the same call again). After
        VALIDATION_ERROR: the op's help (its arguments and usage). A handler's own CONFLICT (the thing exists)
        gets none: its help would offer the same call again (an idempotency key's CONFLICT carries its own).
        """
        if code == "VALIDATION_ERROR":
            return {"op": "help", "args": {"path": tool_id}}
        if code != "NOT_FOUND" or "." not in tool_id:
            return None
        entity = tool_id.rsplit(".", 1)[0]
        for verb in ENTITY_FINDERS:
            finder = self.store.resolve(f"{entity}.{verb}")
            if finder is None or finder == tool_id or not self.allows(finder):
                continue
            schema = self.store.spec(finder)[1].get("args_schema") or {}
            if schema.get("required"):  # it needs arguments: read them first
                return {"op": "describe", "args": {"tool_id": finder}}
            return {"op": "call", "args": {"tool_id": finder, "args": {}}}
        return None  # a search for the entity ranks the op that just failed first: its help would send it back

    def tool_batch(self, ops: Any, mode: Any = "sequential", help_fn: Callable[[Json], Json] | None = None) -> Json:
        """Run several items in order (stopping at the first failure) or in parallel (bounded); see :meth:`_batch`."""
        return self.run(
            "batch",
            {"mode": or_default(mode, "sequential"), "count": len(ops) if isinstance(ops, list) else None},
            lambda _t: self._batch(ops, mode, help_fn),
        )

    def _batch_item(self, item: Any, help_fn: Callable[[Json], Json] | None) -> Json:
        """One item's answer: an exec envelope, or a help answer with ``type: "help"``; ``status`` says how it went."""
        kind = item.get("type", "exec") if isinstance(item, dict) else None
        keys = HELP_ITEM_KEYS if kind == "help" else EXEC_ITEM_KEYS
        problem = None
        if not isinstance(item, dict):
            problem = f"a batch item is an object, got {shown(item)}"
        elif kind not in ("exec", "help"):
            problem = f"a batch item's type is 'exec' or 'help', got {shown(kind)}"
        elif set(item) - keys:
            problem = f"unexpected key(s) {', '.join(sorted(map(str, set(item) - keys)))} in a {kind} item"
        elif kind == "exec" and "op" not in item:
            problem = "an exec item needs an 'op' (and 'args')"
        elif kind == "help" and help_fn is None:
            problem = "help items are answered by tool_batch of the gateway only"
        if problem is not None or not isinstance(item, dict):
            envelope = bad(
                problem or "a batch item is an object",
                hints=[
                    (
                        'Items are {"op": ID, "args": {...}}, {"type": "exec", "op": ID, "args": {...}} or '
                        '{"type": "help", "path": ID}.'
                    )
                ],
            ).envelope()
            return {**sent_op(item.get("op") if isinstance(item, dict) else item), **envelope, "status": "failed"}
        if kind == "help" and help_fn is not None:
            answer = {"type": "help", **help_fn(item)}
        else:
            answer = self.tool_exec(item.get("op"), item.get("args"), item.get("idempotency_key"), item.get("dry_run"))
        answer["status"] = "ok" if answer.get("ok") else "failed"
        return answer

    def _batch(self, ops: Any, mode: Any, help_fn: Callable[[Json], Json] | None) -> Json:
        """Sequential: in order, stopping at the first failure (the rest answer ``status: "not_run"``).

        Parallel: every item, at most :data:`MAX_BATCH_WORKERS` at a time, answers in item order.
        A batch holds 1 to :data:`MAX_BATCH` items.
        """
        mode = or_default(mode, "sequential")
        if mode not in ("sequential", "parallel"):
            raise bad(f"mode must be 'sequential' or 'parallel', got {shown(mode)}")
        if not isinstance(ops, list) or not ops or len(ops) > MAX_BATCH:
            raise bad(
                f"ops must be a list of 1 to {MAX_BATCH} items like {{'op': 'file.read', 'args': {{...}}}} "
                "or {'type': 'help', 'path': 'file.read'}"
            )
        if mode == "parallel" and len(ops) > 1:
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415 - stdlib, imported on first use

            with ThreadPoolExecutor(max_workers=min(MAX_BATCH_WORKERS, len(ops))) as pool:
                results = list(pool.map(lambda item: self._batch_item(item, help_fn), ops))
        else:
            results = []
            for index, item in enumerate(ops):
                answer = self._batch_item(item, help_fn)
                results.append(answer)
                if not answer.get("ok"):
                    for rest in ops[index + 1 :]:
                        op = rest.get("op", rest.get("path")) if isinstance(rest, dict) else None
                        results.append({**sent_op(op), "status": "not_run"})
                    break
        counts = {status: sum(1 for r in results if r["status"] == status) for status in ("ok", "failed", "not_run")}
        hints = []
        if counts["not_run"]:
            hints.append(
                f"Item {counts['ok'] + 1} failed, so the {counts['not_run']} item(s) after it did not run: "
                "fix it and send the rest again."
            )
        return ok(
            {
                "mode": mode,
                "count": len(results),
                "succeeded": counts["ok"],
                "failed": counts["failed"],
                "not_run": counts["not_run"],
                "results": results,
                "all_ok": counts["ok"] == len(results),
            },
            help_path="root",
            hints=hints,
        )
