"""The catalogue's store: the entry and pinned manifest, verified files kept in memory, lookups and node walks.

Every file but ``catalog.json`` is reached through a ref and fetched lazily from the
:class:`~toolcat.reader.fetch.folder.Source`; parsed files are kept in memory by sha256 (they never
change). The store answers "which spec is this name", "what is under this node" and "which
tools are in this namespace"; it holds no session state (policy, audit, idempotency).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from typing import Any

from ..format.buckets import lookup_bucket
from ..format.envelope import ReaderError
from ..format.refs import check_ref, verify
from ..format.shapes import check_shape
from ..format.types import Json
from ..format.vector_format import proven_checked, proven_key
from ..format.version import FORMAT_VERSION
from .checks import MAX_NAME, child_name, close_names, shown, trim
from .fetch.folder import Source

log = logging.getLogger(__name__)

SUPPORTED_FORMAT_VERSION = FORMAT_VERSION  # a reader reads exactly the format its release writes
MEMORY_CACHE_ENTRIES = 20_000
#: Above this many tools, a TOOL_NOT_FOUND does not walk every node shard to suggest names.
SUGGEST_WALK_LIMIT = 2_000
#: A node tree deeper or larger than this is not what a build writes: a walk stops with INTEGRITY.
MAX_NODE_DEPTH = 64
MAX_WALK_NODES = 1_000_000

__all__ = ["Store"]

#: ``visible(tool_id, kind)``: whether a session may see a tool (kind None when the caller does not hold it).
Visible = Callable[[str, Any], bool]


class Store:
    """One published catalogue's files, read through ``source`` at a registry_version (or a pinned manifest)."""

    def __init__(self, source: Source, *, version: str | None, pin: str | None) -> None:
        self.source = source
        self.pinned = version
        #: sha256 (hex) of the manifest file this session must read, from ``open(..., pin="sha256:...")``.
        self.pin = pin
        self.lock = threading.RLock()
        self._json: dict[str, Any] = {}
        self._bytes: dict[str, bytes] = {}
        self._prefetch_errors: dict[str, ReaderError] = {}
        self._pending: dict[str, bytes] = {}
        self.entry: Json = {}
        self.manifest: Json = {}
        self.registry_version = ""
        self._reset_views()

    # -- the entry and the manifest ---------------------------------------------------------------
    def read_entry(self) -> Json:
        """``catalog.json``, checked to be a toolcat entry point of the supported format."""
        raw = self.source.read_entry()
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ReaderError(
                "UNAVAILABLE",
                f"{self.source.location}: catalog.json is not valid JSON ({exc})",
                hints=["Point the reader at a toolcat build folder or its base URL."],
            ) from None
        if not isinstance(entry, dict) or entry.get("artifact") != "catalog" or entry.get("format") != "toolcat":
            raise ReaderError(
                "UNAVAILABLE",
                f"{self.source.location}: catalog.json is not a toolcat entry point",
                hints=["Point the reader at a toolcat build folder or its base URL."],
            )
        found = entry.get("format_version")
        if found != SUPPORTED_FORMAT_VERSION:
            raise ReaderError(
                "UNAVAILABLE",
                f"{self.source.location} has format_version {found!r}; this reader reads {SUPPORTED_FORMAT_VERSION}",
                details={"format_version": found, "supported": SUPPORTED_FORMAT_VERSION},
                hints=["Upgrade toolcat (pip install -U toolcat) or rebuild the catalogue with this version."],
            )
        check_shape("catalog.json", entry)
        return entry

    def _manifest_ref(self, entry: Json) -> tuple[str, Json]:
        """(registry_version, manifest ref) to load: the latest, the ``version`` asked for, or the ``pin``."""
        versions = [
            (str(v.get("registry_version")), v.get("manifest") or {})
            for v in entry.get("versions") or []
            if isinstance(v, dict)
        ]
        if self.pinned is None:
            candidates = [(str(entry.get("registry_version")), entry.get("manifest") or {}), *versions]
        else:
            candidates = [item for item in versions if item[0] == self.pinned]
            if not candidates:
                raise ReaderError(
                    "UNAVAILABLE",
                    f"registry_version {self.pinned!r} is not published at {self.source.location}",
                    details={"requested": self.pinned, "available": [v for v, _ in versions]},
                    hints=["Pin one of the available versions, or open without version= to read the latest."],
                )
        if self.pin is None:
            return candidates[0]
        for version, ref in candidates:
            if isinstance(ref, dict) and ref.get("sha256") == self.pin:
                return version, ref
        got = candidates[0][1].get("sha256") if isinstance(candidates[0][1], dict) else None
        raise ReaderError(
            "INTEGRITY",
            f"{self.source.location} does not publish the pinned manifest: expected sha256 {self.pin}, "
            f"got {got}" + (f" (registry_version {self.pinned})" if self.pinned is not None else ""),
            details={"expected_sha256": self.pin, "got_sha256": got, "registry_version": candidates[0][0]},
            hints=[
                "The host serves another catalogue than the one pinned; nothing from it was used.",
                (
                    "Pin a new catalogue only after reviewing it: pin is the sha256 of its manifest file, the "
                    "'sha256' of the 'manifest' ref in catalog.json."
                ),
            ],
        )

    def load(self, entry: Json) -> None:
        """Read and check the manifest ``entry`` points to, and make it current."""
        version, ref = self._manifest_ref(entry)
        manifest = self.fetch_json(ref)
        if not isinstance(manifest, dict) or manifest.get("artifact") != "manifest":
            raise ReaderError("INTEGRITY", "the manifest is not a toolcat manifest")
        if manifest.get("format_version") != SUPPORTED_FORMAT_VERSION or manifest.get("registry_version") != version:
            raise ReaderError(
                "INTEGRITY",
                f"the manifest does not belong to registry_version {version}",
                details={"manifest_version": manifest.get("registry_version")},
            )
        with self.lock:
            self.entry, self.manifest, self.registry_version = entry, manifest, version
            self._reset_views()

    def _reset_views(self) -> None:
        self._nodes: dict[tuple[str, ...], Json] = {}
        self._pointers: dict[str, Json] | None = None
        self._kinds: dict[str, dict[str, Any]] = {}
        self._searcher: Any = None

    def refresh(self) -> bool:
        """Re-read catalog.json; True when a new registry_version was loaded (never with ``version``/``pin``)."""
        entry = self.read_entry()
        if self.pinned is not None or self.pin is not None or entry.get("registry_version") == self.registry_version:
            with self.lock:
                self.entry = entry
            return False
        self.load(entry)
        return True

    # -- fetching ---------------------------------------------------------------------------------
    def fetch_bytes(self, ref: Json) -> bytes:
        """The bytes a ref points to, verified against its sha256 and kept in memory."""
        digest = ref.get("sha256") if isinstance(ref, dict) else None
        if isinstance(digest, str) and digest in self._bytes:
            return self._bytes[digest]
        data = self.source.fetch(ref)
        with self.lock:
            if len(self._bytes) > MEMORY_CACHE_ENTRIES:
                self._bytes.clear()
            self._bytes[str(digest)] = data
        return data

    def fetch_json(self, ref: Json) -> Any:
        """The parsed JSON a ref points to (verified, cached by sha256; treat it as read-only).

        A *proven* ref ``{path, max_bytes, root, place, per_page}`` names a file that carries its Merkle path to a
        page's root (``toolcat-vectors-10``'s row files): it is read by path and used only once that path leads to
        ``root`` (:func:`toolcat.format.vector_format.proven_body`); what is parsed is the file without its proof.
        """
        if isinstance(ref, dict) and "root" in ref:
            return self._fetch_proven(ref)
        digest = ref.get("sha256") if isinstance(ref, dict) else None
        if isinstance(digest, str) and digest in self._json:
            return self._json[digest]
        failed = self._prefetch_errors.pop(digest, None) if isinstance(digest, str) else None
        if failed is not None:  # prefetch() met it moments ago: report it here, where the file is needed
            raise failed
        pending = self._pending.pop(str(ref.get("path")), None) if isinstance(ref, dict) else None
        if pending is not None:  # fetched by path alongside the file that holds its hash: checked now
            path, digest, size = check_ref(ref)
            data = verify(pending, path, digest, size, path)
            self.source.remember(digest, data)
            return self._parse(ref, data)
        return self._parse(ref, self.source.fetch(ref))

    def _fetch_proven(self, ref: dict[str, Any]) -> Any:
        """:meth:`fetch_json` of a proven ref: kept in memory by its root and place, like a file by its sha256."""
        key = proven_key(ref)
        if key in self._json:
            return self._json[key]
        path = str(ref.get("path"))
        data = self._pending.pop(path, None)
        if data is None:
            recalled = self._recall_proven(ref)
            if recalled is not None:
                return recalled
            data = self.source.fetch({"path": ref.get("path"), "max_bytes": ref.get("max_bytes")})
        try:
            body = proven_checked(data, ref)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReaderError(
                "INTEGRITY",
                f"{path} does not match the page root its parent holds ({exc}); it was not used",
                details={"path": path, "expected_root": str(ref.get("root"))[:64]},
                hints=[
                    "The file was modified after the build, or a cache/CDN serves a stale copy; redeploy the build."
                ],
            ) from None
        value = self._parse({"path": path, "sha256": key}, body)
        self.source.keep_proven(f"{ref['root']}-{ref['place']}", data)
        return value

    def _recall_proven(self, ref: dict[str, Any]) -> Any:
        """A proven file from the source's disk cache, parsed once its path leads to its root; else None.

        A kept copy that does not lead there (changed on disk) is dropped, and the file is fetched again.
        """
        kept = f"{ref.get('root')}-{ref.get('place')}"
        bound = ref.get("max_bytes")
        data = self.source.recall_proven(kept, bound if isinstance(bound, int) else 0)
        if data is None:
            return None
        try:
            body = proven_checked(data, ref)
        except (KeyError, TypeError, ValueError):
            self.source.forget_proven(kept)
            return None
        return self._parse({"path": str(ref.get("path")), "sha256": proven_key(ref)}, body)

    def _parse(self, ref: Json, data: bytes) -> Any:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ReaderError("INTEGRITY", f"{ref.get('path')} is not valid JSON: {exc}") from None
        check_shape(str(ref.get("path")), value)
        with self.lock:
            if len(self._json) > MEMORY_CACHE_ENTRIES:
                self._json.clear()
            self._json[str(ref.get("sha256"))] = value
        return value

    def prefetch(self, refs: list[Json]) -> None:
        """Bring several JSON files into memory at once: over HTTP the missing ones are fetched concurrently.

        A search knows all the shards it needs before it reads them; fetching them together costs one round
        trip instead of one each. An error is kept for the next :meth:`fetch_json` of that file, which reports it.
        """
        if not self.source.concurrent:
            return
        wanted = list(
            {
                r["sha256"]: r
                for r in refs  # a malformed ref is left to fetch_json, which reports it
                if isinstance(r, dict) and isinstance(r.get("sha256"), str) and r["sha256"] not in self._json
            }.values()
        )
        for ref in refs:  # a proven file the disk cache holds is read from there (checked), not fetched
            if isinstance(ref, dict) and "root" in ref and proven_key(ref) not in self._json:
                self._recall_proven(ref)
        # pending refs {path, max_bytes}: files whose sha256 is in another file of this round; kept unparsed
        # and unused until fetch_json gets a verified ref for them
        pending = [
            r
            for r in refs
            if isinstance(r, dict)
            and "max_bytes" in r
            and "sha256" not in r
            and not ("root" in r and proven_key(r) in self._json)  # a proven file read already
        ]
        if len(wanted) + len(pending) < 2:  # a single file is fetched where it is read
            return
        results = self.source.fetch_many([*wanted, *pending])
        with self.lock:
            self._pending = {} if len(self._pending) > MEMORY_CACHE_ENTRIES else self._pending
            self._pending.update(
                (str(r["path"]), d)
                for r, d in zip(pending, results[len(wanted) :], strict=True)
                if isinstance(d, bytes)
            )
        for ref, data in zip(wanted, results[: len(wanted)], strict=True):
            digest = str(ref["sha256"])
            try:
                if isinstance(data, ReaderError):
                    raise data
                self._parse(ref, data)
                self._prefetch_errors.pop(digest, None)
            except ReaderError as err:
                self._prefetch_errors[digest] = err

    def stats(self) -> Json:
        """Requests, bytes downloaded and cache hits of the source so far, and the files held in memory."""
        return {**self.source.stats.as_dict(), "memory_files": len(self._json) + len(self._bytes)}

    # -- lookups ----------------------------------------------------------------------------------
    def _lookup(self, name: str) -> Json | None:
        lookup = self.manifest.get("lookup") or {}
        refs, count = lookup.get("refs") or [], lookup.get("buckets") or 0
        if not refs or not isinstance(count, int) or count < 1:
            return None
        entries = self.fetch_json(refs[lookup_bucket(name, count)]).get("entries") or {}
        found = entries.get(name)
        return found if isinstance(found, dict) else None

    def _find(self, name: str) -> Json | None:
        for candidate in dict.fromkeys([name, trim(name), trim(name).lower()]):
            found = self._lookup(candidate)
            if found is not None:
                return found
        return None

    def resolve(self, name: Any) -> str | None:
        """The canonical tool id for a canonical id, any provider alias, or a skill name; None if unknown."""
        if not isinstance(name, str) or not trim(name) or len(name) > MAX_NAME:
            return None
        found = self._find(name)
        return str(found["tool_id"]) if found is not None else None

    def spec(self, name: str, *, visible: Visible | None = None) -> tuple[str, Json]:
        """(tool_id, spec) for a name the caller checked (:func:`~toolcat.reader.checks.check_name`).

        TOOL_NOT_FOUND with suggestions when no tool has that name, or when ``visible(tool_id, kind)`` says
        the session's policy hides it (a hidden tool is answered as if it did not exist).
        """
        found = self._find(name)
        if found is None:
            raise self.not_found(name, self._suggest_tools(name))
        tool_id, spec = str(found["tool_id"]), self.fetch_json(found["spec"])
        if visible is not None and not visible(tool_id, spec.get("kind")):
            raise self.not_found(name, [s for s in self._suggest_tools(name) if s != tool_id and visible(s, None)])
        return tool_id, spec

    def kind_of(self, tool_id: str) -> Any:
        """A tool's kind (``read``/``write``) from its pointer in the namespace shard; None when unknown.

        Each namespace's kinds are read once per registry_version (a read-only session asks for many).
        """
        namespace = tool_id.split(".", 1)[0]
        kinds = self._kinds.get(namespace)
        if kinds is None:
            pointers = self._pointers if self._pointers is not None else self.namespace_pointers(namespace)
            kinds = {i: p.get("kind") for i, p in pointers.items() if i.split(".", 1)[0] == namespace}
            with self.lock:
                self._kinds[namespace] = kinds
        return kinds.get(tool_id)

    @staticmethod
    def not_found(name: str, suggestions: list[str]) -> ReaderError:
        """TOOL_NOT_FOUND for ``name``, pointing at the first suggestion or a search by its words."""
        return ReaderError(
            "TOOL_NOT_FOUND",
            f"no tool named {shown(name, 120)} (checked canonical ids, provider aliases and skill names)",
            details={"suggestions": suggestions},
            hints=[
                f"Did you mean {', '.join(suggestions)}?"
                if suggestions
                else "Search for the tool by purpose, or browse the groups."
            ],
            next_action=(
                {"op": "describe", "args": {"tool_id": suggestions[0]}}
                if suggestions
                else {"op": "search", "args": {"query": name.replace(".", " ").replace("_", " ")}}
            ),
            help_path="root",
        )

    def _suggest_tools(self, name: str) -> list[str]:
        ids: list[str] = []
        searcher = self.searcher()
        if searcher is not None:
            try:
                hits = searcher.rank_tools(name.replace(".", " ").replace("_", " "), limit=5)
                ids = [h[0]["tool_id"] for h in hits]
            except Exception:
                log.debug("search for suggestions failed", exc_info=True)
        counts = self.manifest.get("counts") or {}
        if int(counts.get("tools", 0)) + int(counts.get("skills", 0)) <= SUGGEST_WALK_LIMIT:
            ids = list(dict.fromkeys([*close_names(name, sorted(self.all_pointers())), *ids]))
        return ids[:5]

    # -- the search index -------------------------------------------------------------------------
    def searcher(self) -> Any:
        """The catalogue's :class:`~toolcat.reader.search.searcher.Searcher`, or None when it was built without an index."""
        if self._searcher is None and "index" in self.manifest:
            from .search.searcher import Searcher  # noqa: PLC0415 - loaded on the first search: keeps `import` fast

            self._searcher = Searcher(self.manifest, self.fetch_json, self.prefetch if self.source.concurrent else None)
        return self._searcher

    def searcher_required(self) -> Any:
        """The :class:`~toolcat.reader.search.searcher.Searcher`; UNAVAILABLE when the catalogue has no search index."""
        searcher = self.searcher()
        if searcher is None:
            raise ReaderError(
                "UNAVAILABLE",
                "search is unavailable: this catalogue was built without a search index",
                hints=["Browse with list()/tool_help() instead, or rebuild with the search stage."],
                next_action={"op": "list", "args": {"path": ""}},
            )
        return searcher

    # -- node shards ------------------------------------------------------------------------------
    def node(self, path: tuple[str, ...]) -> Json:
        """The shard of a node, walking from the root; UNKNOWN_PATH with suggestions when absent."""
        if path in self._nodes:
            return self._nodes[path]
        shard = self.fetch_json(self.manifest["root"])
        walked: tuple[str, ...] = ()
        for asked in path:
            children = {c["name"]: c for c in shard.get("children", [])}
            name = child_name(asked, children)
            if name is None:
                where = "/".join(walked) or "root"
                names = sorted(children)
                close = close_names(asked.lower(), names, 3) or close_names(asked, names, 3)
                suggestions = ["/".join([*walked, c]) for c in close]
                raise ReaderError(
                    "UNKNOWN_PATH",
                    f"node {'/'.join(path)!r} does not exist: {where} has no child {asked!r}",
                    details={
                        "path": list(path),
                        "parent": "/".join(walked),
                        "children": names,
                        "suggestions": suggestions,
                    },
                    hints=[f"Children of {where}: {', '.join(names) or 'none'}."],
                    next_action=_unknown_node_next(suggestions, walked, path[len(walked) :]),
                )
            walked = (*walked, name)
            shard = self._nodes.get(walked) or self.fetch_json(children[name]["ref"])
            self._nodes[walked] = shard
        if not isinstance(shard, dict):
            raise ReaderError("INTEGRITY", f"node shard of {'/'.join(path) or 'root'} is not an object")
        self._nodes[path] = shard
        return shard

    def canonical_path(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """``path`` spelled as the catalogue spells it (names match case-insensitively); UNKNOWN_PATH when absent."""
        return tuple(self.node(path).get("path") or ()) if path else ()

    def is_node(self, path: str) -> bool:
        """Whether a slash or dotted path names a node of the category tree."""
        from .checks import node_path  # noqa: PLC0415 - loaded on the one path that needs it

        try:
            self.node(node_path(path))
        except ReaderError:
            return False
        return True

    def is_group(self, path: str) -> bool:
        """Whether ``path`` is an id group: a namespace or a proper prefix of some tool id."""
        namespace = path.split(".", 1)[0]
        if namespace not in [str(n) for n in self.manifest.get("namespaces", [])]:
            return False
        if path == namespace:
            return True
        try:
            groups, _ = self.namespace_tree(namespace)
        except ReaderError:
            return False
        return path in groups

    def alias_of(self, tool_id: str) -> str:
        """The provider alias a model calls ``tool_id`` by (the id with ``_`` for ``.`` when unknown)."""
        try:
            _, spec = self.spec(tool_id)
        except ReaderError:
            return tool_id.replace(".", "_")
        raw = spec.get("aliases")
        aliases: Json = raw if isinstance(raw, dict) else {}
        return str(aliases.get("anthropic") or aliases.get("openai") or tool_id.replace(".", "_"))

    def node_tools(self, shard: Json) -> list[Json]:
        """The pointers of a paged shard (node or namespace): its first page, then the others (fetched together)."""
        self.prefetch(shard.get("pages", []))
        tools = list(shard.get("tools", []))
        for ref in shard.get("pages", []):
            tools.extend(self.fetch_json(ref).get("tools", []))
        return tools

    def _prefetch_subtree(self, path: tuple[str, ...]) -> None:
        """Over HTTP, bring every node shard and page under ``path`` into memory, one level per round trip."""
        if not self.source.concurrent:
            return
        level = [self.node(path)]
        seen: set[str] = set()
        for _depth in range(MAX_NODE_DEPTH):
            if not level:
                return
            children: list[Json] = [
                c["ref"]
                for shard in level
                for c in shard.get("children", [])
                if isinstance(c, dict) and isinstance(c.get("ref"), dict) and c["ref"].get("sha256") not in seen
            ]
            seen.update(str(ref.get("sha256")) for ref in children)
            self.prefetch([*children, *(ref for shard in level for ref in shard.get("pages", []))])
            level = [shard for ref in children if isinstance(shard := self.fetch_json(ref), dict)]

    def walk(self, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Json]]:
        """Every node shard under ``path``, depth first (fetched a level at a time over HTTP)."""
        self._prefetch_subtree(path)
        stack = [path]
        visited = 0
        while stack:
            current = stack.pop()
            shard = self.node(current)
            visited += 1
            if visited > MAX_WALK_NODES or len(current) > MAX_NODE_DEPTH:
                raise ReaderError(
                    "INTEGRITY",
                    f"the node tree under {'/'.join(path) or 'root'} is deeper than "
                    f"{MAX_NODE_DEPTH} levels or has more than {MAX_WALK_NODES} nodes",
                    hints=[
                        (
                            "The host serves a node tree no toolcat build writes; pin the catalogue "
                            "(pin='sha256:...') or report it to its publisher."
                        )
                    ],
                )
            yield current, shard
            children = [c for c in shard.get("children", []) if isinstance(c, dict)]
            # a child's path is its parent's plus its name: anything else (a path back to an ancestor) would loop
            stack.extend(
                child
                for c in reversed(children)
                if isinstance(c.get("name"), str) and (child := (*current, c["name"])) == tuple(c.get("path") or ())
            )

    def subtree_pointers(self, path: tuple[str, ...]) -> dict[str, Json]:
        """Every tool pointer under ``path``, by id (first seen wins)."""
        out: dict[str, Json] = {}
        for _, shard in self.walk(path):
            for pointer in self.node_tools(shard):
                out.setdefault(pointer["tool_id"], pointer)
        return out

    @property
    def pointers_loaded(self) -> bool:
        """Whether every tool's pointer is in memory already (a full walk happened)."""
        return self._pointers is not None

    def namespace_pointers(self, namespace: str) -> dict[str, Json]:
        """Pointers of one id namespace, from its namespace shard and pages (through the namespace index)."""
        refs = None
        if self._pointers is None and isinstance(self.manifest.get("namespace_index"), dict):
            refs = self.fetch_json(self.manifest["namespace_index"]).get("namespaces")
        if not isinstance(refs, dict):  # every pointer is in memory already, or the build has no namespace shards
            return {k: v for k, v in self.all_pointers().items() if k.split(".", 1)[0] == namespace}
        ref = refs.get(namespace)
        if not isinstance(ref, dict):
            return {}
        tools = self.node_tools(self.fetch_json(ref))
        return {p["tool_id"]: p for p in sorted(tools, key=lambda p: p["tool_id"])}

    def all_pointers(self) -> dict[str, Json]:
        """Every tool's pointer, by id: walks every node shard once per registry_version."""
        if self._pointers is None:
            pointers = self.subtree_pointers(())
            self._pointers = dict(sorted(pointers.items()))
        return self._pointers

    def namespace_tree(
        self, namespace: str | None = None, *, keep: Visible | None = None
    ) -> tuple[dict[str, Json], dict[str, Json]]:
        """Groups (every proper prefix of an id) and operations, of one namespace or of all pointers.

        ``keep(tool_id, kind)`` leaves out the operations it refuses (a session's policy), and groups left empty.
        """
        ops = self.namespace_pointers(namespace) if namespace is not None else self.all_pointers()
        if keep is not None:
            ops = {i: p for i, p in ops.items() if keep(i, p.get("kind"))}
        groups: dict[str, Json] = {}
        for tool_id in ops:
            parts = tool_id.split(".")
            for depth in range(1, len(parts)):
                group = ".".join(parts[:depth])
                entry = groups.setdefault(group, {"groups": set(), "ops": [], "count": 0})
                entry["count"] += 1
                if depth == len(parts) - 1:
                    entry["ops"].append(tool_id)
                else:
                    entry["groups"].add(".".join(parts[: depth + 1]))
        return groups, ops


def _unknown_node_next(suggestions: list[str], walked: tuple[str, ...], missing: tuple[str, ...]) -> Json:
    """UNKNOWN_PATH's way forward: list the closest child; else search the missing names' words where the walk stopped.

    Listing the parent would only repeat the children the error's hint already names.
    """
    if suggestions:
        return {"op": "list", "args": {"path": suggestions[0]}}
    words = " ".join(" ".join(missing).replace("_", " ").replace("-", " ").replace(".", " ").split())
    if not words:
        return {"op": "list", "args": {"path": "/".join(walked)}}
    if walked:
        return {"op": "search_in", "args": {"query": words, "path": "/".join(walked)}}
    return {"op": "search", "args": {"query": words}}
