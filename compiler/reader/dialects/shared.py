"""What every dialect shares; no dialect imports another."""

from __future__ import annotations

import copy
from typing import Any

from ...format.envelope import ReaderError, is_error
from ...format.schema_nulls import local_ref, without_null_optionals
from ...format.shapes import public_pointer
from ...format.types import Json
from ..checks import (
    bad,
    close_names,
    shown,
    trim,
)
from ..execution import arguments
from ..execution.handlers import available, find_handler
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
    if not isinstance(capability, str) or not trim(capability) or len(capability) > 200:
        raise bad(f"'capability' must be a capability name such as 'code-analysis', got {shown(capability)}")
    return trim(capability).lower()


def has_capability(pointer: Json, capability: str) -> bool:
    """Whether a pointer declares ``capability`` (skills' ``capabilities``, compared case-insensitively)."""
    declared = pointer.get("capabilities")
    return isinstance(declared, list) and capability in {str(c).lower() for c in declared}


def delegate(result: Any, help_path: str = "root") -> Json:
    """A search module answer as a reader envelope: public pointers, and the envelope's keys filled in.

    :func:`~toolcat.format.shapes.public_pointer` here is the lean pass of every hit a dialect answers. The
    search module's own ``lean_hit`` (reader/search, owned by search) trims the same pointers first and can
    hand them over as they are, with their confidence, once it relies on this pass.
    """
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


def cannot_run(session: Session, tool_id: str, spec: Json) -> ReaderError | None:
    """Why this reader cannot run the tool here (no handler, a type it lacks, a host that refuses it); None if it can.

    The same error a call would answer, so describing a tool and calling it say the same thing.
    """
    handler = spec.get("handler")
    if not isinstance(handler, dict):
        return ReaderError(
            "NOT_EXECUTABLE", f"{tool_id} has no handler: the host application must run it", help_path=tool_id
        )
    kind = str(handler.get("type"))
    if not available(kind, session.handlers):
        try:
            find_handler(kind, tool_id, session.handlers)
        except ReaderError as exc:
            return exc
    return session.policy.refusal(tool_id, handler)


def runnable(session: Session, tool_id: str, spec: Json) -> bool:
    """Whether this reader can run the tool: a handler of a known type that the host allows."""
    return cannot_run(session, tool_id, spec) is None


def visible_only(session: Session, rows: list[Json], key: str) -> list[Json]:
    """The rows (pointers, matches) naming by ``key`` a tool the session's policy lets the agent see."""
    if not session.filters:
        return rows
    return [r for r in rows if isinstance(r.get(key), str) and session.allows(r[key], r.get("kind"))]


def namespaces_of(store: Any, session: Session) -> list[str]:
    """The catalogue's namespaces this session may see (``allowed_namespaces``), in manifest order."""
    names = [str(n) for n in store.manifest.get("namespaces", [])]
    allowed = session.allowed_namespaces
    return names if allowed is None else [n for n in names if n in allowed]


#: How deep a sample value nests before a placeholder stands in.
SAMPLE_DEPTH = 4
#: A sample value for a string of a known ``format`` (what a describe's sample call sends when no example gives one).
FORMAT_SAMPLES = {
    "date": "2026-01-15",
    "date-time": "2026-01-15T09:00:00Z",
    "time": "09:00:00Z",
    "email": "someone@example.com",
    "uri": "https://example.com/",
    "url": "https://example.com/",
}


def _typed_sample(name: str, schema: Json, kind: Any, root: Json, depth: int) -> Any:
    """A value of JSON type ``kind`` for one argument: a number at its minimum, false, one item, the required keys."""
    if kind in {"integer", "number"}:
        low = schema.get("minimum", schema.get("exclusiveMinimum", 0))
        return int(low) + (1 if "exclusiveMinimum" in schema else 0) if isinstance(low, (int, float)) else 1
    if kind == "array":
        count = schema.get("minItems")
        return [_sample_value(name, schema.get("items"), root, depth + 1)] * (count if isinstance(count, int) else 1)
    if kind == "object":
        raw_props = schema.get("properties")
        inner: Json = raw_props if isinstance(raw_props, dict) else {}
        need = [n for n in schema.get("required") or [] if isinstance(n, str)]
        return {n: _sample_value(n, inner.get(n), root, depth + 1) for n in need}
    samples: dict[Any, Any] = {"boolean": False, "null": None}
    if kind in samples:
        return samples[kind]
    fmt = schema.get("format")
    return FORMAT_SAMPLES.get(fmt, f"<{name}>") if isinstance(fmt, str) else f"<{name}>"


def _sample_value(name: str, schema: Any, root: Json, depth: int = 0) -> Any:
    """A value for one argument from its schema: its examples, default, first enum value or const, else its type."""
    if not isinstance(schema, dict) or depth > SAMPLE_DEPTH:
        return f"<{name}>"
    if isinstance(schema.get("$ref"), str):
        return _sample_value(name, local_ref(root, schema["$ref"]), root, depth + 1)
    given = next((schema[k] for k in ("examples", "enum") if isinstance(schema.get(k), list) and schema[k]), None)
    if given is not None:
        return copy.deepcopy(given[0])
    for key in ("const", "default"):
        if key in schema:
            return copy.deepcopy(schema[key])
    branches = next((schema[k] for k in ("anyOf", "oneOf") if isinstance(schema.get(k), list) and schema[k]), None)
    if branches is not None:
        return _sample_value(name, branches[0], root, depth + 1)
    kinds = schema.get("type")
    kind = next((k for k in kinds if k != "null"), "null") if isinstance(kinds, list) else kinds
    return _typed_sample(name, schema, kind, root, depth)


def sample_args(spec: Json) -> Json | None:
    """The args of a describe's sample call; None when no call would pass validation.

    The first example that passes the schema, else the required arguments filled from their schemas
    (:func:`_sample_value`). A sample call that fails validation would send the agent back to the description it just read (issue 34:
    no loops), so it is not offered.
    """
    raw = spec.get("args_schema")
    schema: Json = raw if isinstance(raw, dict) else {}
    candidates: list[Json] = [
        copy.deepcopy(e["args"])
        for e in spec.get("examples", [])
        if isinstance(e, dict) and isinstance(e.get("args"), dict)
    ]
    raw_props = schema.get("properties")
    props: Json = raw_props if isinstance(raw_props, dict) else {}
    handler = spec.get("handler")
    needed = [str(n) for n in schema.get("required") or []]
    if isinstance(handler, dict):
        needed += [str(n) for n in handler.get("requires") or [] if str(n) not in needed]
    candidates.append({n: _sample_value(n, props.get(n), schema) for n in needed})
    for args in candidates:
        filled = arguments.apply_defaults(schema, without_null_optionals(schema, args))
        if all(n in filled for n in needed) and not arguments.validate_args(schema, filled, []):
            return args
    return None


def sample_call(tool_id: str, spec: Json) -> Json | None:
    """The abstract ``call`` a description points to next (:func:`sample_args`), or None when none would pass."""
    args = sample_args(spec)
    return None if args is None else {"op": "call", "args": {"tool_id": tool_id, "args": args}}


#: A search answer's one-line summary per hit is cut to this many characters (a model chooses among hits by it).
SUMMARY_CHARS = 120


def one_line(text: Any, limit: int = SUMMARY_CHARS) -> str | None:
    """``text``'s first line, at most ``limit`` characters (cut at a word with "…"); None when it is not text."""
    if not isinstance(text, str) or not text.strip():
        return None
    line = " ".join(text.strip().splitlines()[0].split())
    if len(line) <= limit:
        return line
    cut = line[: limit - 1].rsplit(" ", 1)[0] if " " in line[: limit - 1] else line[: limit - 1]
    return cut.rstrip(" ,;:") + "…"


def with_summaries(store: Any, rows: list[Json], key: str) -> list[Json]:
    """Search hits (``rows``, naming a tool id by ``key``) each with its pointer's one-line ``summary`` (capped).

    The summary is the hit's own (``Searcher.find_tool`` copies it from the pointer in the doc shard it already
    read), else the tool's pointer (one namespace shard per namespace hit, cached by the store), so a model can
    choose among the hits without describing each; a hit whose pointer has none keeps its fields.
    """
    needed = {str(r[key]).split(".", 1)[0] for r in rows if isinstance(r.get(key), str) and not r.get("summary")}
    _prefetch_namespaces(store, needed)
    by_namespace: dict[str, dict[str, Json]] = {}
    out = []
    for row in rows:
        name = row.get(key)
        if not isinstance(name, str):
            out.append(row)
            continue
        namespace = name.split(".", 1)[0]
        if namespace not in by_namespace and not row.get("summary"):
            by_namespace[namespace] = store.namespace_pointers(namespace)
        summary = one_line(row.get("summary") or (by_namespace.get(namespace, {}).get(name) or {}).get("summary"))
        rest = {k: v for k, v in row.items() if k not in (key, "summary")}
        out.append({key: name, "summary": summary, **rest} if summary else row)
    return out


def capped_summary(row: Any) -> Any:
    """A search hit (a pointer) with its ``summary`` cut to one line of :data:`SUMMARY_CHARS`."""
    if not isinstance(row, dict) or not isinstance(row.get("summary"), str):
        return row
    return {**row, "summary": one_line(row["summary"]) or row["summary"]}


def _prefetch_namespaces(store: Any, namespaces: set[str]) -> None:
    """Over HTTP, the namespace shards of several hits in one round trip (after the namespace index)."""
    index = store.manifest.get("namespace_index")
    if not namespaces or store.pointers_loaded or not isinstance(index, dict):
        return
    refs = store.fetch_json(index).get("namespaces")
    if isinstance(refs, dict):
        store.prefetch([refs[n] for n in sorted(namespaces) if isinstance(refs.get(n), dict)])
