"""The top-level shape of each artifact kind, checked when a JSON file is read.

A file whose sha256 matches its ref can still be wrong: a host that serves a tampered
manifest serves matching refs too. docs/format.md and the JSON Schemas in
``toolcat/schemas`` describe every artifact fully; the reader (stdlib only) checks the part
it relies on — the object itself, the type of each top-level field it reads, and the element
type of the lists and maps it walks — so such a file is an INTEGRITY envelope naming the file
and the field, not an INTERNAL one from deep inside an operation. ``toolcat verify`` remains
the full check.
"""

from __future__ import annotations

import copy
from typing import Any

from .envelope import ReaderError

#: field → (type of the field, type of each element/value or None), per ``artifact`` kind.
_Field = tuple[type, type | None]
SHAPES: dict[str, dict[str, _Field]] = {
    "catalog": {"manifest": (dict, None), "registry_version": (str, None), "versions": (list, dict)},
    "manifest": {
        "root": (dict, None),
        "lookup": (dict, None),
        "namespaces": (list, str),
        "namespace_index": (dict, None),
        "index": (dict, None),
        "prompts": (dict, None),
        "counts": (dict, None),
    },
    "node": {"children": (list, dict), "tools": (list, dict), "pages": (list, dict), "path": (list, str)},
    "namespace_index": {"namespaces": (dict, dict)},
    "namespace": {"tools": (list, dict), "pages": (list, dict)},
    "lookup": {"entries": (dict, dict), "bucket": (int, None), "buckets": (int, None)},
    "tool": {
        "tool_id": (str, None),
        "args_schema": (dict, None),
        "path": (list, str),
        "tags": (list, str),
        "examples": (list, None),
        "handler": (dict, None),
        "policy": (dict, None),
        "aliases": (dict, None),
        "entity": (str, None),
        "action": (str, None),
        "contexts": (list, str),
    },
    "index_meta": {"analyzer": (dict, None), "tools": (dict, None), "nodes": (dict, None), "score": (dict, None)},
    "index_terms": {"terms": (dict, dict)},
    "index_docs": {"docs": (list, dict), "first": (int, None)},
    "index_delta_docs": {"docs": (list, dict), "ids": (list, int)},
    "index_pages": {"folder": (str, None), "prefix": (str, None), "first": (int, None), "files": (list, list)},
    "prompts": {"sections": (dict, None), "snippets": (dict, None), "focused": (dict, None)},
    "prompt_snippets": {"entries": (dict, None)},
    "aliases": {"to_alias": (dict, str), "to_id": (dict, str)},
}

#: Fields a build may write as null, as the schemas say (a tool with no handler). A field a build may leave
#: out (a build without a search index has no ``index``) is simply absent: only present fields are checked.
NULLABLE: frozenset[tuple[str, str]] = frozenset({("tool", "handler")})


#: Every field of a tool pointer (schemas/pointer.json), in the order a pointer is written. The one list the
#: build's ``artifacts.pointer`` writes through :func:`make_pointer`; the reader's pointer rebuilt from a spec
#: (``reader/search/searcher.py``: ``Searcher._spec_pointer``, owned by search) should use it too.
POINTER_FIELDS: tuple[str, ...] = (
    "tool_id",
    "alias",
    "type",
    "path",
    "summary",
    "tags",
    "kind",
    "optional",
    "deprecated",
    "capabilities",
    "spec",
)
#: Pointer fields written only when they hold something.
OPTIONAL_POINTER_FIELDS: frozenset[str] = frozenset({"capabilities"})


def make_pointer(values: dict[str, Any]) -> dict[str, Any]:
    """A tool pointer from ``values``, in :data:`POINTER_FIELDS` order; an empty optional field is left out.

    A key that is not a pointer field, or a missing required one, is a ValueError (a bug in the caller).
    """
    unknown = set(values) - set(POINTER_FIELDS)
    missing = set(POINTER_FIELDS) - OPTIONAL_POINTER_FIELDS - set(values)
    if unknown or missing:
        raise ValueError(f"a pointer has fields {POINTER_FIELDS}; unknown {sorted(unknown)}, missing {sorted(missing)}")
    return {f: values[f] for f in POINTER_FIELDS if f in values and (f not in OPTIONAL_POINTER_FIELDS or values[f])}


#: Pointer keys a model never needs: the spec ref, the provider alias, token counts.
HIDDEN_POINTER_KEYS = frozenset({"spec", "alias", "aliases", "tokens", "optional"})


def public_pointer(pointer: dict[str, Any], confidence: float | None = None) -> dict[str, Any]:
    """A tool pointer as an agent sees it: lean (no spec ref, alias or empty/false fields), ``confidence`` when ranked.

    The one lean pass over pointers: the dialects apply it to every pointer they answer (list, and the hits the
    search module returns). js/src/ops.ts mirrors it for the TypeScript reader.
    """
    out = {
        k: copy.deepcopy(v)
        for k, v in pointer.items()
        if k not in HIDDEN_POINTER_KEYS
        and v is not None
        and v is not False
        and v not in ([], {}, "")
        and not (k == "type" and v == "tool")
    }
    if confidence is not None:
        out["confidence"] = round(float(confidence), 4)
    return out


def _kind(value: Any) -> str:
    return type(value).__name__.replace("NoneType", "null").replace("dict", "object").replace("list", "array")


def check_shape(path: str, value: Any) -> None:
    """INTEGRITY unless ``value`` (the JSON read from ``path``) is an object whose known fields have their types."""
    if not isinstance(value, dict):
        raise ReaderError(
            "INTEGRITY",
            f"{path} is not what a build writes: a JSON {_kind(value)} where every artifact is an object",
            details={"path": path},
            hints=["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
        )
    kind = value.get("artifact")
    for field, (want, element) in SHAPES.get(kind, {}).items() if isinstance(kind, str) else ():
        if field not in value:
            continue
        got = value[field]
        if got is None and (kind, field) in NULLABLE:
            continue
        bad = (
            not isinstance(got, want)
            or isinstance(got, bool)
            or (element is not None and isinstance(got, list) and not all(isinstance(x, element) for x in got))
            or (element is not None and isinstance(got, dict) and not all(isinstance(x, element) for x in got.values()))
        )
        if bad:
            raise ReaderError(
                "INTEGRITY",
                f"{path}: field {field!r} of this {kind} artifact has the wrong type",
                details={"path": path, "field": field},
                hints=["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
            )
