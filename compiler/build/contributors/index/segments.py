"""The search index's segments: a base segment and at most one delta segment on top of it (docs/architecture.md, "What an incremental build reuses").

A full build fits every document (:mod:`toolcat.build.contributors.index.texts`) and writes one *base* segment per part (tools,
nodes). Beside the build it keeps a private file, :data:`INDEX_STATE`, with what the next build needs
to build on that base without reading it: each base document's key (a tool's id and homes, a node's
path), a hash of its indexed text and of its stored entry, and the terms ``max_df`` dropped.

An incremental build (same settings, a previous good build in the output folder) compares the
catalogue with the base:

* a document whose text changed is *masked* in the base and re-indexed in the delta;
* a new document (a new tool, or one moved to other homes) gets the next free doc id and is indexed
  in the delta; a document that is gone is masked and listed as *deleted*;
* a document whose stored entry changed (a tool's pointer, a node's tool ranges) is overridden by the
  delta's copy.

The base segment's files are carried over untouched, so a one-tool edit writes the delta's few files
and the meta instead of every term shard the document's terms live in. Delta documents are weighted
with the base's idf (and, for terms the base lacks, an idf from the live document count and the
delta's document frequency); the base's documents keep the weights they were fitted with. Scores are
therefore scikit-learn's exactly after a merge, and close to them before it. The delta is always
recomputed against the base, so it holds every change since the last full build; when it grows past
:data:`DELTA_MAX_DOCS` documents or :data:`DELTA_MAX_BYTES` bytes, the build merges: it fits
everything again into a new base. ``toolcat build --force`` merges too. docs/search.md, "Segments",
describes the format and what a reader does with it.
"""

from __future__ import annotations

import bisect
import itertools
import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ....format.canonical import dumps, sha256
from ....format.refs import page_refs

if TYPE_CHECKING:
    from ....format.types import Ref
    from ...artifacts import ArtifactSet
    from ...model import CompiledCatalog, NodePath, Tool

log = logging.getLogger(__name__)

#: The build-private file holding the base segment's document table (beside ``.toolcat-state.json``).
INDEX_STATE = ".toolcat-index.json"
STATE_FORMAT = 2
#: A delta re-indexes at most this many documents per part ...
DELTA_MAX_DOCS = 64
#: ... overrides at most this many stored entries ...
DELTA_MAX_ENTRIES = 512
#: ... and its term shards weigh at most this much (a cold query reads the delta's chars shards whole).
DELTA_MAX_BYTES = 256_000
DELTA_DOCS_PER_FILE = 256


def text_hash(text: str) -> str:
    """The short hash a document's indexed text is compared by."""
    return sha256(text.encode("utf-8"))[:16]


def entry_hash(entry: Any) -> str:
    """The short hash a document's stored entry is compared by."""
    return sha256(dumps(entry))[:16]


def tool_key(tool: Tool) -> str:
    """A tool document's identity: its id and its homes (a tool that moves is a new document)."""
    homes = ["/".join(home) for home in (tool.path, *tool.categories)]
    return "\x1f".join([tool.id, *homes])


def node_key(path: NodePath) -> str:
    """A node document's identity: its path."""
    return "/".join(path)


@dataclass(slots=True)
class PartDocs:
    """One part's documents as the catalogue has them now, each with its key, indexed text and stored entry."""

    keys: list[str]
    texts: list[str]
    entries: list[dict[str, Any]]


def part_state(
    meta: dict[str, Any], docs: PartDocs, dropped: dict[str, list[str]], *, keep_entries: bool
) -> dict[str, Any]:
    """The private record of a base part: its meta entry and its documents' keys and hashes."""
    state: dict[str, Any] = {
        "meta": meta,
        "keys": docs.keys,
        "texts": [text_hash(t) for t in docs.texts],
        "entries": [entry_hash(e) for e in docs.entries],
        "dropped": dropped,
    }
    if keep_entries:
        state["docs"] = docs.entries
    return state


#: Where :func:`read_base` puts a part's files in the state it returns (never saved: the state file is copied as read).
PART_FILES = "part_files"


def part_files(meta: dict[str, Any], root: Path) -> list[Ref]:
    """Every file a base part's meta entry points to (the files of paged tables are read from ``root``'s pages)."""
    refs = [shard["ref"] for space in meta["spaces"] for shard in space.get("shards", ())]
    refs += [shard["ref"] for shard in meta.get("doc_shards", ())]
    tables = [space["term_pages"] for space in meta["spaces"] if "term_pages" in space]
    docs = meta.get("doc_pages")
    if docs is not None and "roots" in docs:  # toolcat-index-4: no pages, the doc shards carry their paths
        for number in range(int(docs["files"])):
            path = f"{docs['folder']}/{docs['prefix']}{number}.json"
            data = (root / path).read_bytes()
            refs.append({"path": path, "sha256": sha256(data), "bytes": len(data)})
    elif docs is not None:
        tables.append(docs)
    for table in tables:
        refs += table["pages"]
        for ref in table["pages"]:
            refs += page_refs(json.loads((root / ref["path"]).read_bytes()))
    return refs


def read_base(previous: Path | None) -> dict[str, Any] | None:
    """The previous build's base segments, when it has them whole on disk; else None (a full build)."""
    if previous is None:
        return None
    try:
        state = json.loads((previous / INDEX_STATE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(state, dict) or state.get("format") != STATE_FORMAT:
        return None
    try:
        for part in ("tools", "nodes"):
            refs = part_files(state[part]["meta"], previous)
            for ref in refs:
                file = previous / ref["path"]
                if not file.is_file() or file.stat().st_size != int(ref["bytes"]):
                    log.info("index: %s of the base segment is missing; building the index afresh", file)
                    return None
            state[part][PART_FILES] = refs  # for write_delta: the doc shards are not read and hashed twice
    except (KeyError, TypeError, OSError, ValueError):
        return None
    return state


class BaseTerms:
    """The base segment's idf of a term, read from its term shards in the previous build (each shard once)."""

    def __init__(self, previous: Path, meta: dict[str, Any]) -> None:
        self.previous = previous
        self.spaces = {space["name"]: space for space in meta["spaces"]}
        self.firsts = {
            name: space.get("firsts") or [s["first"] for s in space["shards"]] for name, space in self.spaces.items()
        }
        self._files: dict[str, dict[str, Any]] = {}

    def _read(self, path: str) -> dict[str, Any]:
        if path not in self._files:
            self._files[path] = json.loads((self.previous / path).read_bytes())
        return self._files[path]

    def idf(self, space: str, term: str) -> float | None:
        """The term's idf in the base, or None when the base does not have it."""
        index = bisect.bisect_right(self.firsts[space], term) - 1
        if index < 0:
            return None
        pages = self.spaces[space].get("term_pages")
        if pages is None:
            shard = self.spaces[space]["shards"][index]
            last, path = shard["last"], shard["ref"]["path"]
        else:
            page = self._read(pages["pages"][index // pages["per_page"]]["path"])
            last = page["last"][index - page["first"]]
            path = page_refs(page)[index - page["first"]]["path"]
        if term > last:
            return None
        entry = self._read(path)["terms"].get(term)
        return None if entry is None else float(entry["idf"])


@dataclass(slots=True)
class Delta:
    """What one part's delta segment holds before it is written."""

    n_docs: int
    masked: list[int]
    deleted: list[int]
    reindexed: list[tuple[int, str]]
    overrides: dict[int, dict[str, Any]]
    entries: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)

    def empty(self) -> bool:
        """True when the catalogue is exactly the base's."""
        return not (self.masked or self.reindexed or self.overrides) and not self.deleted


def assign_ids(base_keys: list[str], keys: list[str]) -> tuple[list[int], list[str | None]]:
    """Doc ids for ``keys``: a base document keeps its id, a new one takes the next free id.

    Returns each key's id and the doc order (id → key, None where a base document is gone).
    """
    base_id = {key: i for i, key in enumerate(base_keys)}
    live = set(keys)
    order: list[str | None] = [key if key in live else None for key in base_keys]
    ids = []
    for key in keys:
        doc_id = base_id.get(key)
        if doc_id is None:
            doc_id = len(order)
            order.append(key)
        ids.append(doc_id)
    return ids, order


def plan_delta(base: dict[str, Any], docs: PartDocs, ids: list[int], n_docs: int) -> Delta | None:
    """The delta of ``docs`` (with their ``ids``) against a base part, or None when it is too big to keep."""
    n_base = len(base["keys"])
    live = set(ids)
    deleted = [i for i in range(n_base) if i not in live]
    masked = set(deleted)
    reindexed: list[tuple[int, str]] = []
    overrides: dict[int, dict[str, Any]] = {}
    for doc_id, text, entry in zip(ids, docs.texts, docs.entries, strict=True):
        if doc_id >= n_base:
            reindexed.append((doc_id, text))
            overrides[doc_id] = entry
            continue
        if text_hash(text) != base["texts"][doc_id]:
            masked.add(doc_id)
            reindexed.append((doc_id, text))
        if entry_hash(entry) != base["entries"][doc_id]:
            overrides[doc_id] = entry
        if len(reindexed) > DELTA_MAX_DOCS or len(overrides) > DELTA_MAX_ENTRIES:
            return None
    reindexed.sort()
    return Delta(n_docs, sorted(masked), deleted, reindexed, overrides)


def fit_delta(delta: Delta, base: dict[str, Any], base_terms: BaseTerms, n_live: int) -> int:
    """Weigh the delta's documents as scikit-learn would with the base's idf; returns the entries' rough size.

    A term the base lacks gets ``ln((1 + n_live) / (1 + df)) + 1`` from the delta's own document frequency;
    the terms the base dropped for ``max_df`` are dropped here too.
    """
    from .fit import WEIGHT_DECIMALS, space_terms  # noqa: PLC0415 - scikit-learn side, build only
    from .shards import SPACE_WEIGHTS, _entry_cost  # noqa: PLC0415 - no cycle at import

    terms = space_terms([text for _, text in delta.reindexed])
    size = 0
    for space in SPACE_WEIGHTS:
        dropped = set(base["dropped"].get(space, ()))
        counts = [Counter(t for t in doc if t not in dropped) for doc in terms[space]]
        df = Counter(term for doc in counts for term in doc)
        idf: dict[str, float] = {}
        for term, frequency in df.items():
            known = base_terms.idf(space, term)
            idf[term] = known if known is not None else math.log((1 + n_live) / (1 + frequency)) + 1.0
        postings: dict[str, list[tuple[int, float]]] = {}
        for (doc_id, _), doc in zip(delta.reindexed, counts, strict=True):
            raw = {term: (1.0 + math.log(count)) * idf[term] for term, count in doc.items()}
            norm = math.sqrt(sum(v * v for v in raw.values())) or 1.0
            for term, value in raw.items():
                postings.setdefault(term, []).append((doc_id, value / norm))
        entries = {}
        for term in sorted(postings):
            pairs = postings[term]
            gaps = [pairs[0][0]] + [b[0] - a[0] for a, b in itertools.pairwise(pairs)]
            entries[term] = {"idf": idf[term], "docs": gaps, "w": [round(w, WEIGHT_DECIMALS) for _, w in pairs]}
            size += _entry_cost(term, entries[term])
        delta.entries[space] = entries
    return size


def write_delta(
    artifacts: ArtifactSet,
    part: str,
    base_meta: dict[str, Any],
    delta: Delta,
    previous: Path,
    refs: list[Ref] | None = None,
) -> dict[str, Any]:
    """Write the delta's files; the part's meta entry is the base's with a ``delta`` key.

    ``refs``: the base part's files as :func:`read_base` found them (else they are listed again).
    """
    from .shards import SPACE_WEIGHTS, _write_space  # noqa: PLC0415 - no cycle at import

    for ref in refs if refs is not None else part_files(base_meta, previous):
        artifacts.carry(ref)
    if delta.empty():
        return base_meta
    spaces = [
        _write_space(artifacts, part, name, delta.entries[name], stem=f"{part}.delta", pageable=False)
        for name in SPACE_WEIGHTS
    ]
    ids = sorted(delta.overrides)
    files = []
    for first in range(0, len(ids), DELTA_DOCS_PER_FILE):
        chunk = ids[first : first + DELTA_DOCS_PER_FILE]
        ref = artifacts.add_json(
            "index",
            f"{part}.delta.d{first // DELTA_DOCS_PER_FILE}",
            {"artifact": "index_delta_docs", "part": part, "ids": chunk, "docs": [delta.overrides[i] for i in chunk]},
        )
        files.append({"ids": chunk, "ref": ref})
    return {
        **base_meta,
        "delta": {
            "n_docs": delta.n_docs,
            "masked": delta.masked,
            "deleted": delta.deleted,
            "spaces": spaces,
            "docs": files,
        },
    }


def delta_node_entries(
    catalog: CompiledCatalog, base_docs: list[dict[str, Any]], added: list[tuple[int, Tool]]
) -> list[dict[str, Any]]:
    """Node entries over base + delta doc ids: the base's ranges, with the added tools in ``extra``."""
    base_by_path = {tuple(entry["path"]): entry for entry in base_docs}
    entries = []
    for path in sorted(catalog.nodes):
        node = catalog.nodes[path]
        base = base_by_path.get(path, {"range": [0, 0], "direct": 0, "extra": [], "extra_direct": []})
        under = {i for i, tool in added if any(home[: len(path)] == path for home in (tool.path, *tool.categories))}
        direct = {i for i, tool in added if tool.path == path or path in tool.categories}
        entries.append(
            {
                "path": list(path),
                "title": node.title,
                "summary": node.summary,
                "tags": list(node.tags),
                "range": list(base["range"]),
                "direct": base["direct"],
                "extra": sorted(set(base["extra"]) | under),
                "extra_direct": sorted(set(base["extra_direct"]) | direct),
            }
        )
    return entries


def save_state(artifacts: ArtifactSet, parts: dict[str, dict[str, Any]]) -> None:
    """Keep the base parts' record beside the build, for the next incremental build."""
    artifacts.private[INDEX_STATE] = dumps({"format": STATE_FORMAT, **parts})
