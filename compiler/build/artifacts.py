"""What the planner and its contributors share: the content-hashed file set, refs, tool pointers.

:mod:`toolcat.build.plan` builds the core artifacts; contributors (search index, prompt sections,
provider exports) add theirs to the same :class:`ArtifactSet`. Both import this module, never
each other: ``build.py`` hands the contributors to :func:`toolcat.build.plan.plan`, so no contributor
imports the planner back.
"""

from __future__ import annotations

import hashlib
import marshal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..format.canonical import dumps, sha256
from ..format.shapes import make_pointer
from .filestore import FileStore
from .memo import ToolMemo

if TYPE_CHECKING:
    from .model import CompiledCatalog, Tool
from ..format.types import Ref

HASH_CHARS = 16
#: The memo's per-build kind (:meth:`toolcat.build.memo.ToolMemo.once`) the planner notes each tool's spec key under
#: (:func:`payload_key` of its stored spec): the search texts' key builds on it (``index.texts.text_key``).
SPEC_KEY = "spec_key"

#: ``{"path", "sha256", "bytes"}``: how one file points to another (docs/format.md).
#: Each tool id → its spec dict (as written) and the ref to it.
Specs = dict[str, tuple[dict[str, Any], Ref]]


def payload_key(payload: Any, salt: bytes) -> str | None:
    """A key for a payload's stored file, without dumping it to JSON: the sha256 of ``salt`` and its ``marshal`` bytes.

    ``marshal`` (version 2: no back-references, so no dependence on reference counts) writes every value with its
    type and dicts in their order, so two payloads with one key dump to the same JSON; one that lists its keys in
    another order only misses. None when a value is not one ``marshal`` writes (then the payload is dumped).
    """
    try:
        return hashlib.sha256(salt + marshal.dumps(payload, 2)).hexdigest()
    except ValueError:
        return None


@dataclass(slots=True)
class ArtifactSet:
    """Files by relative path, and the manifest fields they contribute."""

    files: FileStore = field(default_factory=FileStore)
    manifest: dict[str, Any] = field(default_factory=dict)
    #: The last good build of the same sources and settings (an incremental build reuses its index segment).
    previous: Path | None = None
    #: Files of ``previous`` this build keeps as they are (path → ref): linked, never read into memory.
    carried: dict[str, Ref] = field(default_factory=dict)
    #: Build-private files written beside the build (dot names, never referenced by the manifest): bytes, or a
    #: staged file to link.
    private: dict[str, bytes | Path] = field(default_factory=dict)
    #: Each index part's doc ids → the tool id / node path string there (None for a deleted doc's hole).
    doc_order: dict[str, list[str | None]] = field(default_factory=dict)
    #: Per-tool results (snippets, provider definitions) by spec hash, from the last build and for the next.
    memo: ToolMemo = field(default_factory=ToolMemo)

    def add(self, directory: str, stem: str, suffix: str, data: bytes) -> Ref:
        """Store ``data`` under a content-hashed name and return the ref to it."""
        digest = sha256(data)
        path = (
            f"{directory}/{stem}.{digest[:HASH_CHARS]}{suffix}"
            if stem
            else f"{directory}/{digest[:HASH_CHARS]}{suffix}"
        )
        self.files[path] = data
        return {"path": path, "sha256": digest, "bytes": len(data)}

    def carry(self, ref: Ref) -> None:
        """Keep the file of ``previous`` that ``ref`` points to, unchanged."""
        self.carried[str(ref["path"])] = ref

    def add_json(self, directory: str, stem: str, obj: Any) -> Ref:
        """Store canonical JSON under a content-hashed name."""
        return self.add(directory, stem, ".json", dumps(obj))

    def add_json_remembered(self, directory: str, stem: str, obj: Any, kind: str, salt: bytes = b"") -> Ref:
        """:meth:`add_json`, or the last build's file (carried) when ``obj`` is the same (:func:`payload_key`).

        Remembered in the memo's ``kind`` under the key of ``salt``, the file's name and ``obj``, so a one-tool edit
        dumps the few files whose content changed, not all of them (issues 29 and 33).
        """
        key = payload_key(obj, salt + f"{directory}/{stem}\x00".encode())
        if key is None:
            return self.add_json(directory, stem, obj)
        made: list[bool] = []

        def make() -> Ref:
            made.append(True)
            return self.add_json(directory, stem, obj)

        ref: Ref = self.memo.get(kind, key, make)
        if not made:
            self.carry(ref)
        return ref

    def add_in_folder(self, directory: str, rel_path: str, data: bytes) -> Ref:
        """Store ``data`` as ``directory/<hash>/rel_path``: the hash names the folder, the file keeps its name."""
        digest = sha256(data)
        path = f"{directory}/{digest[:HASH_CHARS]}/{rel_path}"
        self.files[path] = data
        return {"path": path, "sha256": digest, "bytes": len(data)}


#: Extra stages (search index, prompt sections, provider exports...) add files and
#: manifest entries: ``contribute(catalog, artifacts, specs)``. ``specs`` maps each tool id
#: to its spec dict (as written) and its ref.
Contributor = Callable[["CompiledCatalog", ArtifactSet, Specs], None]


def pointer(tool: Tool, spec_ref: Ref) -> dict[str, Any]:
    """What list and search return for a tool: never its argument schema."""
    return make_pointer(
        {
            "tool_id": tool.id,
            "alias": tool.aliases.get("openai", tool.id),
            "type": tool.type,
            "path": list(tool.path),
            "summary": tool.summary,
            "tags": list(tool.tags),
            "kind": tool.kind,
            "optional": tool.optional,
            "deprecated": tool.deprecated,
            "capabilities": list(tool.skill.meta.get("capabilities") or []) if tool.skill is not None else [],
            "spec": spec_ref,
        }
    )
