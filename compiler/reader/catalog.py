"""The runtime ``Catalog``: one core over a published build, three dialects on top.

* spec: :meth:`Catalog.list`, :meth:`~Catalog.search_nodes`, :meth:`~Catalog.search_tool_by_category`,
  :meth:`~Catalog.expand_tool`, :meth:`~Catalog.call_tool`;
* gateway: :meth:`~Catalog.tool_help`, :meth:`~Catalog.tool_exec`, :meth:`~Catalog.tool_batch`;
* namespaced: :meth:`~Catalog.tool_list`, :meth:`~Catalog.tool_describe`, :meth:`~Catalog.find_tool`.

Only :meth:`Catalog.open` raises (:class:`ReaderError`); every operation after it returns a
plain dict: a result with ``ok: true`` or an error envelope, never a traceback. Files are
fetched lazily through refs and kept in memory by sha256 (they never change).
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from . import execute
from .audit import AuditLog
from .envelope import ReaderError, error_envelope, is_error
from .source import MAX_FILE_BYTES, FolderSource, Source, open_source
from .trust import HandlerPolicy

log = logging.getLogger(__name__)

SUPPORTED_FORMAT_VERSION = 1
MAX_LIMIT = 50
MAX_BATCH = 100
MAX_NAME = 300
MEMORY_CACHE_ENTRIES = 20_000
#: Idempotency keys kept per session, the JSON bytes of their answers in all and for one, and for how long.
IDEMPOTENCY_MAX_KEYS = 10_000
IDEMPOTENCY_MAX_BYTES = 32 * 1024 * 1024
IDEMPOTENCY_MAX_ENTRY_BYTES = 1024 * 1024
IDEMPOTENCY_TTL_SECONDS = 24 * 3600.0
#: Errors a retry may cure: their answers are not kept for idempotency keys, so a retry runs again.
TRANSIENT_CODES = frozenset({"UNAVAILABLE", "INTERNAL"})
#: Above this many tools, a TOOL_NOT_FOUND does not walk every node shard to suggest names.
SUGGEST_WALK_LIMIT = 2_000
#: A node tree deeper or larger than this is not what a build writes: a walk stops with INTEGRITY.
MAX_NODE_DEPTH = 64
MAX_WALK_NODES = 1_000_000
HELP_FORMATS = ("short", "full")
ROOT_NAMES = ("", "root", "/", ".")

Json = dict[str, Any]
#: ``list`` is also a method name of :class:`Catalog`, so its annotations use this alias.
Strings = list[str]


def _trace_id() -> str:
    return os.urandom(8).hex()


def _shown(value: Any, limit: int = 80) -> str:
    """A short repr of a value from a caller: bounded in length and nesting, so deep input cannot recurse."""
    import reprlib  # noqa: PLC0415 - only on errors

    shower = reprlib.Repr()
    shower.maxlevel = 4
    shower.maxstring = shower.maxother = limit
    shower.maxlist = shower.maxtuple = shower.maxdict = shower.maxset = 8
    try:
        return shower.repr(value)[:limit]
    except (RecursionError, ValueError):
        return f"<{type(value).__name__}>"


def _audit_target(target: Any) -> str:
    """The target of an operation as the audit log's JSON text (a bounded repr when it nests too deeply)."""
    if isinstance(target, str):
        return target
    try:
        return json.dumps(target, ensure_ascii=False, default=repr)
    except (RecursionError, ValueError):
        return _shown(target, 300)


def _ok(data: Json, *, help_path: str = "root", hints: list[str] | None = None,
        next_action: Json | None = None) -> Json:
    return {"ok": True, **data, "help_path": help_path, "hints": list(hints or []), "next_action": next_action}


def _bad(message: str, *, help_path: str = "root", hints: list[str] | None = None) -> ReaderError:
    return ReaderError("BAD_REQUEST", message, help_path=help_path, hints=hints,
                       next_action={"op": "tool_help", "args": {"path": help_path}})


def _check_str(value: Any, name: str, *, allow_empty: bool = False, help_path: str = "root") -> str:
    if not isinstance(value, str) or (not allow_empty and not value.strip()) or len(value) > 4 * MAX_NAME:
        raise _bad(f"'{name}' must be a non-empty string (at most {4 * MAX_NAME} characters), got {_shown(value)}",
                   help_path=help_path)
    return value


def _check_limit(limit: Any, default: int) -> int:
    if limit is None:
        return default
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise _bad(f"'limit' must be an integer from 1 to {MAX_LIMIT}, got {_shown(limit)}")
    return max(1, min(MAX_LIMIT, limit))


def _check_tags(tags: Any) -> list[str]:
    if tags is None:
        return []
    if isinstance(tags, str):
        tags = [tags]
    if not isinstance(tags, (list, tuple)) or not all(isinstance(t, str) for t in tags):
        raise _bad(f"'tags' must be a list of strings, got {_shown(tags)}")
    return [t.lower() for t in tags]


def _check_bool(value: Any, name: str) -> bool:
    if not isinstance(value, bool):
        raise _bad(f"'{name}' must be true or false, got {_shown(value)}")
    return value


def node_path(path: Any) -> tuple[str, ...]:
    """``["a","b"]``, ``"a/b"``, ``"a.b"`` → ``("a", "b")``; ``None``/``""``/``"root"`` → the root."""
    if path is None:
        return ()
    if isinstance(path, str):
        text = path.strip()
        if text in ROOT_NAMES:
            return ()
        parts = text.strip("/").replace("/", ".").split(".")
    elif isinstance(path, (list, tuple)) and all(isinstance(p, str) for p in path):
        parts = list(path)
    else:
        raise _bad(f"a path is a list of names or a 'a/b' string, got {_shown(path)}")
    if any(not p for p in parts) or len(parts) > 32:
        raise _bad(f"path {_shown(path)} has an empty segment")
    return tuple(parts)


def _public_pointer(pointer: Json, confidence: float | None = None) -> Json:
    out = {k: copy.deepcopy(v) for k, v in pointer.items() if k != "spec"}
    if confidence is not None:
        out["confidence"] = round(float(confidence), 4)
    return out


def _close(word: str, names: list[str], n: int = 5) -> list[str]:
    import difflib  # noqa: PLC0415 - only on errors

    found = difflib.get_close_matches(word, names, n=n, cutoff=0.5)
    prefixed = [name for name in names if name.startswith(word) or word.startswith(name + ".")]
    return list(dict.fromkeys([*found, *sorted(prefixed)[:n]]))[:n]


class IdempotencyStore:
    """The first answer to each idempotency key, replayed when the same call is retried; bounded and expiring.

    A retry with the key of an earlier call gets that call's answer (a success, or a deterministic
    error) without running again; the same key with another op or other args is CONFLICT. Transient
    errors (:data:`TRANSIENT_CODES`) are not kept, so a retry runs again. At most ``max_keys`` answers
    and ``max_bytes`` of JSON are kept, each for ``ttl_seconds``; the oldest go first. An answer larger
    than ``max_entry_bytes`` is not kept (the call says so in a warning). Calls with the same key run
    one at a time.
    """

    def __init__(self, *, max_keys: int = IDEMPOTENCY_MAX_KEYS, max_bytes: int = IDEMPOTENCY_MAX_BYTES,
                 max_entry_bytes: int = IDEMPOTENCY_MAX_ENTRY_BYTES, ttl_seconds: float = IDEMPOTENCY_TTL_SECONDS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_keys, self.max_bytes, self.max_entry_bytes = max_keys, max_bytes, max_entry_bytes
        self.ttl_seconds = ttl_seconds
        self.clock = clock
        self.bytes = 0
        #: key -> (tool_id, sha256 of the canonical args, the answer as JSON text, its size, when it was kept)
        self._entries: OrderedDict[str, tuple[str, str, str, int, float]] = OrderedDict()
        self._guard = threading.Lock()
        self._locks: dict[str, list[Any]] = {}  # key -> [lock, callers holding or waiting]: only keys in use

    def __len__(self) -> int:
        return len(self._entries)

    @contextmanager
    def lock(self, key: str | None) -> Iterator[None]:
        """Hold the key while its call runs (a concurrent retry waits, then replays); nothing for no key."""
        if key is None:
            yield
            return
        with self._guard:
            slot = self._locks.setdefault(key, [threading.Lock(), 0])
            slot[1] += 1
        try:
            with slot[0]:
                yield
        finally:
            with self._guard:
                slot[1] -= 1
                if slot[1] == 0:
                    del self._locks[key]

    def get(self, key: str, tool_id: str, args_digest: str) -> Json | None:
        """A copy of the answer kept for ``key``; None when there is none; CONFLICT for another call's key."""
        with self._guard:
            self._expire()
            found = self._entries.get(key)
        if found is None:
            return None
        first_op, first_args, text, _, _ = found
        if (first_op, first_args) != (tool_id, args_digest):
            raise ReaderError(
                "CONFLICT", f"idempotency_key {key!r} was already used for a different call",
                details={"first_op": first_op}, help_path=tool_id,
                hints=["Use a new key for a new operation; reuse a key only to retry the same call."],
            )
        answer: Json = json.loads(text)
        return answer

    def put(self, key: str, tool_id: str, args_digest: str, answer: Json, warnings: Strings) -> None:
        """Keep ``answer`` for ``key`` unless it is a transient error or too large (then say so in ``warnings``)."""
        if is_error(answer) and answer["error"].get("code") in TRANSIENT_CODES:
            return
        text = json.dumps(answer, ensure_ascii=False, default=repr)
        size = len(text.encode("utf-8")) + len(key) + len(tool_id) + len(args_digest)
        if size > self.max_entry_bytes:
            warnings.append(f"the answer ({size} bytes) is larger than the {self.max_entry_bytes} bytes kept per "
                            f"idempotency key, so it was not kept: a retry with idempotency_key {key!r} runs again")
            return
        with self._guard:
            self._entries[key] = (tool_id, args_digest, text, size, self.clock())
            self.bytes += size
            self._expire()
            while self._entries and (len(self._entries) > self.max_keys or self.bytes > self.max_bytes):
                self._pop_oldest()

    def _expire(self) -> None:
        oldest = self.clock() - self.ttl_seconds
        while self._entries and next(iter(self._entries.values()))[4] < oldest:
            self._pop_oldest()

    def _pop_oldest(self) -> None:
        _, entry = self._entries.popitem(last=False)
        self.bytes -= entry[3]


def _check_pin(pin: Any) -> str | None:
    """The hex digest of ``pin="sha256:<64 hex>"``; BAD_REQUEST for anything else."""
    if pin is None:
        return None
    text = pin.strip().lower() if isinstance(pin, str) else ""
    digest = text.removeprefix("sha256:")
    if not text.startswith("sha256:") or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ReaderError("BAD_REQUEST", f"pin must be 'sha256:' and 64 hex digits, got {_shown(pin, 100)}",
                          hints=[("pin is the sha256 of the manifest file: the 'sha256' of the 'manifest' ref in "
                                  "catalog.json, e.g. pin='sha256:' + entry['manifest']['sha256'].")])
    return digest


def _check_sandbox(sandbox: Any) -> str | None:
    """``sandbox`` as an absolute folder path; BAD_REQUEST unless it is an existing folder."""
    if sandbox is None:
        return None
    if not isinstance(sandbox, (str, Path)) or not str(sandbox).strip():
        raise ReaderError("BAD_REQUEST", f"sandbox must be a folder path, got {_shown(sandbox, 100)}")
    root = Path(sandbox).expanduser().resolve()
    if not root.is_dir():
        raise ReaderError("BAD_REQUEST", f"sandbox {str(sandbox)!r} is not an existing folder",
                          hints=["Create the folder the file.* tools may use, or pass another one."])
    return str(root)


class Catalog:
    """A published catalogue, opened from a build folder or an http(s) base URL."""

    manifest: Json
    registry_version: str

    def __init__(self, source: Source, *, version: str | None, read_only: bool,
                 allowed_namespaces: list[str] | None, audit: str | Path | None, require_expand: bool,
                 timeout: float, python_modules: list[str] | None, policy: HandlerPolicy | None = None,
                 pin: str | None = None) -> None:
        self.source = source
        self.pinned = version
        #: sha256 (hex) of the manifest file this session must read, from ``open(..., pin="sha256:...")``.
        self.pin = pin
        self.policy = policy if policy is not None else HandlerPolicy(
            trusted=isinstance(source, FolderSource), python_modules=python_modules)
        self.read_only = read_only
        self.allowed_namespaces = list(allowed_namespaces) if allowed_namespaces is not None else None
        self.require_expand = require_expand
        self.timeout = timeout
        self.python_modules = python_modules
        self.session_id = _trace_id()
        self.audit = AuditLog(audit, self.session_id) if audit is not None else None
        self._lock = threading.RLock()
        self._json: dict[str, Any] = {}
        self._bytes: dict[str, bytes] = {}
        self._prefetch_errors: dict[str, ReaderError] = {}
        self._expanded: set[str] = set()
        self._idempotency = IdempotencyStore()
        self._reset_views()
        self.entry: Json = {}
        self.manifest = {}
        self.registry_version = ""

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open(cls, path_or_url: str | Path, cache_dir: str | Path | None = None, version: str | None = None, *,
             read_only: bool = False, allowed_namespaces: list[str] | None = None,
             audit: str | Path | None = None, require_expand: bool = False,
             timeout: float = 10.0, retries: int = 2, python_modules: list[str] | None = None,
             max_parallel: int = 8, allow_handlers: dict[str, list[Any]] | None = None, pin: str | None = None,
             sandbox: str | Path | None = None, max_file_bytes: int = MAX_FILE_BYTES) -> Catalog:
        """Open a catalogue; raises :class:`ReaderError` (UNAVAILABLE / INTEGRITY / BAD_REQUEST) when it cannot.

        ``allow_handlers`` says which handlers run, by type and target (:mod:`toolcat.reader.trust`):
        ``{"python": ["mypkg."], "http": ["api.example.com", "127.0.0.1:8080"], "mcp": ["python /srv/up.py"]}``.
        A type it does not name runs every handler for a local folder (the host built it) and none
        for a catalogue opened by URL; skill handlers always run. http handlers reach non-public
        addresses only for a host:port listed here. ``python_modules`` is the same as
        ``allow_handlers["python"]``.
        ``pin="sha256:<hex>"`` is the sha256 of the manifest file's bytes (the ``sha256`` of the
        ``manifest`` ref in catalog.json): open fails with INTEGRITY unless that manifest is published,
        and every file read after it is checked against hashes it holds. ``version`` selects a
        registry_version by name; ``pin`` checks content.
        ``sandbox`` is the folder the ``file.*`` handlers work in (else ``$TOOLCAT_SANDBOX``; without
        either they refuse).
        ``max_parallel`` bounds the requests in flight when a search needs several files over
        HTTP (1 fetches them one after the other).
        ``max_file_bytes`` caps every file read over HTTP, on the wire and inflated, whatever its ref
        promises (a larger promise is INTEGRITY).
        """
        if not isinstance(path_or_url, (str, Path)):
            raise ReaderError("BAD_REQUEST", f"open() takes a folder path or an http(s) URL, got {_shown(path_or_url)}")
        if version is not None and not isinstance(version, str):
            raise ReaderError("BAD_REQUEST", f"version must be a registry_version string, got {_shown(version)}")
        if allowed_namespaces is not None and (
                not isinstance(allowed_namespaces, (list, tuple))
                or not all(isinstance(n, str) for n in allowed_namespaces)):
            raise ReaderError("BAD_REQUEST", "allowed_namespaces must be a list of namespace names")
        if not isinstance(max_parallel, int) or isinstance(max_parallel, bool) or max_parallel < 1:
            raise ReaderError("BAD_REQUEST", f"max_parallel must be a positive integer, got {_shown(max_parallel, 40)}")
        digest = _check_pin(pin)
        root = _check_sandbox(sandbox)
        source = open_source(path_or_url, cache_dir, timeout, retries, max_parallel, max_file_bytes=max_file_bytes)
        policy = HandlerPolicy(allow_handlers, trusted=isinstance(source, FolderSource), python_modules=python_modules,
                               sandbox=root)
        catalog = cls(source, version=version, read_only=read_only, allowed_namespaces=allowed_namespaces,
                      audit=audit, require_expand=require_expand, timeout=timeout, python_modules=python_modules,
                      policy=policy, pin=digest)
        started = time.perf_counter()
        catalog._load(catalog._read_entry())
        if catalog.audit is not None:
            catalog.audit.record(op="open", target=source.location, outcome="ok", trace_id=_trace_id(),
                                 latency_ms=(time.perf_counter() - started) * 1000,
                                 registry_version=catalog.registry_version)
        return catalog

    def _read_entry(self) -> Json:
        raw = self.source.read_entry()
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise ReaderError("UNAVAILABLE", f"{self.source.location}: catalog.json is not valid JSON ({exc})",
                              hints=["Point the reader at a toolcat build folder or its base URL."]) from None
        if not isinstance(entry, dict) or entry.get("artifact") != "catalog" or entry.get("format") != "toolcat":
            raise ReaderError("UNAVAILABLE", f"{self.source.location}: catalog.json is not a toolcat entry point",
                              hints=["Point the reader at a toolcat build folder or its base URL."])
        found = entry.get("format_version")
        if found != SUPPORTED_FORMAT_VERSION:
            raise ReaderError(
                "UNAVAILABLE",
                f"{self.source.location} has format_version {found!r}; this reader reads {SUPPORTED_FORMAT_VERSION}",
                details={"format_version": found, "supported": SUPPORTED_FORMAT_VERSION},
                hints=["Upgrade toolcat (pip install -U toolcat) or rebuild the catalogue with this version."],
            )
        return entry

    def _manifest_ref(self, entry: Json) -> tuple[str, Json]:
        """(registry_version, manifest ref) to load: the latest, the ``version`` asked for, or the ``pin``."""
        versions = [(str(v.get("registry_version")), v.get("manifest") or {})
                    for v in entry.get("versions") or [] if isinstance(v, dict)]
        if self.pinned is None:
            candidates = [(str(entry.get("registry_version")), entry.get("manifest") or {}), *versions]
        else:
            candidates = [item for item in versions if item[0] == self.pinned]
            if not candidates:
                raise ReaderError(
                    "UNAVAILABLE", f"registry_version {self.pinned!r} is not published at {self.source.location}",
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
            "INTEGRITY", f"{self.source.location} does not publish the pinned manifest: expected sha256 {self.pin}, "
            f"got {got}" + (f" (registry_version {self.pinned})" if self.pinned is not None else ""),
            details={"expected_sha256": self.pin, "got_sha256": got, "registry_version": candidates[0][0]},
            hints=["The host serves another catalogue than the one pinned; nothing from it was used.",
                   ("Pin a new catalogue only after reviewing it: pin is the sha256 of its manifest file, the "
                    "'sha256' of the 'manifest' ref in catalog.json.")],
        )

    def _load(self, entry: Json) -> None:
        version, ref = self._manifest_ref(entry)
        manifest = self.fetch_json(ref)
        if not isinstance(manifest, dict) or manifest.get("artifact") != "manifest":
            raise ReaderError("INTEGRITY", "the manifest is not a toolcat manifest")
        if manifest.get("format_version") != SUPPORTED_FORMAT_VERSION or manifest.get("registry_version") != version:
            raise ReaderError("INTEGRITY", f"the manifest does not belong to registry_version {version}",
                              details={"manifest_version": manifest.get("registry_version")})
        with self._lock:
            self.entry, self.manifest, self.registry_version = entry, manifest, version
            self._reset_views()

    def _reset_views(self) -> None:
        self._nodes: dict[tuple[str, ...], Json] = {}
        self._pointers: dict[str, Json] | None = None
        self._searcher: Any = None

    def refresh(self) -> bool:
        """Re-read catalog.json (revalidated by ETag); True when a new registry_version was loaded.

        A catalogue opened with ``version=`` or ``pin=`` keeps the manifest it opened.
        """
        entry = self._read_entry()
        if self.pinned is not None or self.pin is not None or entry.get("registry_version") == self.registry_version:
            with self._lock:
                self.entry = entry
            return False
        self._load(entry)
        return True

    # -- fetching -----------------------------------------------------------------------------
    def fetch_bytes(self, ref: Json) -> bytes:
        """The bytes a ref points to, verified against its sha256 and kept in memory."""
        digest = ref.get("sha256") if isinstance(ref, dict) else None
        if isinstance(digest, str) and digest in self._bytes:
            return self._bytes[digest]
        data = self.source.fetch(ref)
        with self._lock:
            if len(self._bytes) > MEMORY_CACHE_ENTRIES:
                self._bytes.clear()
            self._bytes[str(digest)] = data
        return data

    def fetch_json(self, ref: Json) -> Any:
        """The parsed JSON a ref points to (verified, cached by sha256; treat it as read-only)."""
        digest = ref.get("sha256") if isinstance(ref, dict) else None
        if isinstance(digest, str) and digest in self._json:
            return self._json[digest]
        failed = self._prefetch_errors.pop(digest, None) if isinstance(digest, str) else None
        if failed is not None:  # prefetch() met it moments ago: report it here, where the file is needed
            raise failed
        return self._parse(ref, self.source.fetch(ref))

    def _parse(self, ref: Json, data: bytes) -> Any:
        try:
            value = json.loads(data)
        except (ValueError, RecursionError) as exc:
            raise ReaderError("INTEGRITY", f"{ref.get('path')} is not valid JSON: {exc}") from None
        with self._lock:
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
        wanted = list({r["sha256"]: r for r in refs  # a malformed ref is left to fetch_json, which reports it
                       if isinstance(r, dict) and isinstance(r.get("sha256"), str) and r["sha256"] not in self._json}.values())
        if len(wanted) < 2:  # a single file is fetched where it is read
            return
        for ref, data in zip(wanted, self.source.fetch_many(wanted), strict=True):
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

    # -- lookups ------------------------------------------------------------------------------
    def _lookup(self, name: str) -> Json | None:
        lookup = self.manifest.get("lookup") or {}
        refs, count = lookup.get("refs") or [], lookup.get("buckets") or 0
        if not refs or not isinstance(count, int) or count < 1:
            return None
        bucket = int(hashlib.sha256(name.encode("utf-8")).hexdigest()[:8], 16) % count
        entries = self.fetch_json(refs[bucket]).get("entries") or {}
        found = entries.get(name)
        return found if isinstance(found, dict) else None

    def resolve(self, name: str) -> str | None:
        """The canonical tool id for a canonical id, any provider alias, or a skill name; None if unknown."""
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            return None
        for candidate in dict.fromkeys([name, name.strip(), name.strip().lower()]):
            found = self._lookup(candidate)
            if found is not None:
                return str(found["tool_id"])
        return None

    def _spec(self, name: Any, *, help_path: str = "root") -> tuple[str, Json]:
        """(tool_id, spec) for a name, or TOOL_NOT_FOUND with suggestions."""
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_NAME:
            raise _bad(f"a tool name must be a non-empty string, got {_shown(name)}", help_path=help_path)
        found = None
        for candidate in dict.fromkeys([name, name.strip(), name.strip().lower()]):
            found = self._lookup(candidate)
            if found is not None:
                break
        if found is None:
            suggestions = self._suggest_tools(name)
            raise ReaderError(
                "TOOL_NOT_FOUND", f"no tool named {_shown(name, 120)} (checked canonical ids, provider aliases and skill names)",
                details={"suggestions": suggestions},
                hints=[f"Did you mean {', '.join(suggestions)}?" if suggestions else
                       "Search for the tool by purpose, or browse the groups."],
                next_action=({"op": "tool_describe", "args": {"name": suggestions[0]}} if suggestions else
                             {"op": "find_tool", "args": {"purpose": name.replace(".", " ").replace("_", " ")}}),
                help_path="root",
            )
        return str(found["tool_id"]), self.fetch_json(found["spec"])

    def _suggest_tools(self, name: str) -> list[str]:
        ids: list[str] = []
        if self._searcher_or_none() is not None:
            try:
                hits = self._searcher_or_none().rank_tools(name.replace(".", " ").replace("_", " "), limit=5)
                ids = [h[0]["tool_id"] for h in hits]
            except Exception:
                log.debug("search for suggestions failed", exc_info=True)
        counts = self.manifest.get("counts") or {}
        if int(counts.get("tools", 0)) + int(counts.get("skills", 0)) <= SUGGEST_WALK_LIMIT:
            ids = list(dict.fromkeys([*_close(name, sorted(self._all_pointers())), *ids]))
        return ids[:5]

    # -- node shards --------------------------------------------------------------------------
    def _node(self, path: tuple[str, ...]) -> Json:
        """The shard of a node, walking from the root; UNKNOWN_PATH with suggestions when absent."""
        if path in self._nodes:
            return self._nodes[path]
        shard = self.fetch_json(self.manifest["root"])
        walked: tuple[str, ...] = ()
        for name in path:
            children = {c["name"]: c for c in shard.get("children", [])}
            if name not in children:
                where = "/".join(walked) or "root"
                names = sorted(children)
                close = _close(name, names, 3)
                raise ReaderError(
                    "UNKNOWN_PATH", f"node {'/'.join(path)!r} does not exist: {where} has no child {name!r}",
                    details={"path": list(path), "children": names,
                             "suggestions": ["/".join([*walked, c]) for c in close]},
                    hints=[f"Children of {where}: {', '.join(names) or 'none'}."],
                    next_action={"op": "list", "args": {"path": "/".join(walked)}},
                )
            walked = (*walked, name)
            shard = self._nodes.get(walked) or self.fetch_json(children[name]["ref"])
            self._nodes[walked] = shard
        if not isinstance(shard, dict):
            raise ReaderError("INTEGRITY", f"node shard of {'/'.join(path) or 'root'} is not an object")
        self._nodes[path] = shard
        return shard

    def _node_tools(self, shard: Json) -> list[Json]:
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
        level = [self._node(path)]
        seen: set[str] = set()
        for _depth in range(MAX_NODE_DEPTH):
            if not level:
                return
            children: list[Json] = [c["ref"] for shard in level for c in shard.get("children", [])
                                    if isinstance(c, dict) and isinstance(c.get("ref"), dict)
                                    and c["ref"].get("sha256") not in seen]
            seen.update(str(ref.get("sha256")) for ref in children)
            self.prefetch([*children, *(ref for shard in level for ref in shard.get("pages", []))])
            level = [shard for ref in children if isinstance(shard := self.fetch_json(ref), dict)]

    def _walk(self, path: tuple[str, ...]) -> Iterator[tuple[tuple[str, ...], Json]]:
        """Every node shard under ``path``, depth first (fetched a level at a time over HTTP)."""
        self._prefetch_subtree(path)
        stack = [path]
        visited = 0
        while stack:
            current = stack.pop()
            shard = self._node(current)
            visited += 1
            if visited > MAX_WALK_NODES or len(current) > MAX_NODE_DEPTH:
                raise ReaderError("INTEGRITY", f"the node tree under {'/'.join(path) or 'root'} is deeper than "
                                  f"{MAX_NODE_DEPTH} levels or has more than {MAX_WALK_NODES} nodes",
                                  hints=[("The host serves a node tree no toolcat build writes; pin the catalogue "
                                         "(pin='sha256:...') or report it to its publisher.")])
            yield current, shard
            children = [c for c in shard.get("children", []) if isinstance(c, dict)]
            # a child's path is its parent's plus its name: anything else (a path back to an ancestor) would loop
            stack.extend(child for c in reversed(children)
                         if isinstance(c.get("name"), str) and (child := (*current, c["name"])) == tuple(c.get("path") or ()))

    def _subtree_pointers(self, path: tuple[str, ...]) -> dict[str, Json]:
        out: dict[str, Json] = {}
        for _, shard in self._walk(path):
            for pointer in self._node_tools(shard):
                out.setdefault(pointer["tool_id"], pointer)
        return out

    def _namespace_pointers(self, namespace: str) -> dict[str, Json]:
        """Pointers of one id namespace, from its namespace shard and pages.

        Builds that predate namespace shards fall back to a walk of every node shard.
        """
        refs = None if self._pointers is not None else self.manifest.get("namespace_shards")  # older builds: inline
        if self._pointers is None and not isinstance(refs, dict) and isinstance(self.manifest.get("namespace_index"), dict):
            refs = self.fetch_json(self.manifest["namespace_index"]).get("namespaces")
        if not isinstance(refs, dict):  # every pointer is in memory already, or the build has no namespace shards
            return {k: v for k, v in self._all_pointers().items() if k.split(".", 1)[0] == namespace}
        ref = refs.get(namespace)
        if not isinstance(ref, dict):
            return {}
        tools = self._node_tools(self.fetch_json(ref))
        return {p["tool_id"]: p for p in sorted(tools, key=lambda p: p["tool_id"])}

    def _all_pointers(self) -> dict[str, Json]:
        """Every tool's pointer, by id: walks every node shard once per registry_version."""
        if self._pointers is None:
            pointers = self._subtree_pointers(())
            self._pointers = dict(sorted(pointers.items()))
        return self._pointers

    # -- search delegation --------------------------------------------------------------------
    def _searcher_or_none(self) -> Any:
        if self._searcher is None and "index" in self.manifest:
            try:
                from .search import Searcher  # noqa: PLC0415 - written by the search stage
            except ImportError:
                return None
            self._searcher = Searcher(self.manifest, self.fetch_json, self.prefetch if self.source.concurrent else None)
        return self._searcher

    def searcher(self) -> Any:
        """The catalogue's :class:`~toolcat.reader.search.Searcher`; ReaderError UNAVAILABLE without an index."""
        return self._searcher_required()

    def _searcher_required(self) -> Any:
        searcher = self._searcher_or_none()
        if searcher is None:
            reason = ("this catalogue was built without a search index" if "index" not in self.manifest
                      else "this reader has no search module (toolcat.reader.search)")
            raise ReaderError("UNAVAILABLE", f"search is unavailable: {reason}",
                              hints=["Browse with list()/tool_help() instead, or rebuild with the search stage."],
                              next_action={"op": "list", "args": {"path": "root"}})
        return searcher

    def _delegate(self, result: Any, help_path: str = "root") -> Json:
        if not isinstance(result, dict):
            raise ReaderError("INTERNAL", f"search returned {type(result).__name__}, not a dict")
        if is_error(result):
            return result
        out = dict(result)
        for key in ("tools", "results"):
            if isinstance(out.get(key), list):
                out[key] = [_public_pointer(t) if isinstance(t, dict) and "tool_id" in t else t for t in out[key]]
        out.setdefault("ok", True)
        out.setdefault("help_path", help_path)
        out.setdefault("hints", [])
        out.setdefault("next_action", None)
        return out

    # -- the guard ----------------------------------------------------------------------------
    def _run(self, op: str, target: Any, fn: Callable[[str], Json]) -> Json:
        """Run one public operation: time it, turn any failure into an envelope, audit it."""
        trace = _trace_id()
        started = time.perf_counter()
        try:
            result = fn(trace)
        except ReaderError as exc:
            result = exc.envelope()
        except Exception as exc:
            log.exception("reader operation %s(%s) failed", op, _shown(target, 300))
            result = error_envelope("INTERNAL", f"{op} failed: {type(exc).__name__}: {exc}",
                                    details={"exception": type(exc).__name__},
                                    hints=["This is a reader or catalogue bug; the host log has the traceback."])
        latency = (time.perf_counter() - started) * 1000
        if self.audit is not None:
            outcome = result["error"]["code"] if is_error(result) else "ok"
            self.audit.record(op=op, target=_audit_target(target), outcome=outcome, latency_ms=latency, trace_id=trace,
                              registry_version=self.registry_version)
        return result

    # == spec dialect ===========================================================================
    def list(self, path: Any = None, tags: Any = None, query: Any = None, limit: Any = 10,
             cursor: Any = None) -> Json:
        """Child nodes and tool pointers at ``path`` (paged); ``tags`` and ``query`` search its subtree."""
        return self._run("list", {"path": path, "tags": tags, "query": query},
                         lambda _t: self._list(path, tags, query, limit, cursor))

    def _list(self, path: Any, tags: Any, query: Any, limit: Any, cursor: Any) -> Json:
        where = node_path(path)
        wanted = _check_tags(tags)
        count = _check_limit(limit, 10)
        if query is not None:
            _check_str(query, "query", allow_empty=True)
        offset = 0
        if cursor is not None:
            if not isinstance(cursor, str) or not cursor.startswith("o:") or not cursor[2:].isdigit():
                raise _bad(f"cursor {_shown(cursor)} is not one this reader returned; omit it to start over")
            offset = int(cursor[2:])
        shard = self._node(where)
        searched = isinstance(query, str) and bool(query.strip())
        hits: list[Any] = []
        if searched and not wanted:  # ranked, and only the page's pointers are read
            hits, total = self._searcher_required().rank_tools_page(query, within=list(where), offset=offset, limit=count)
            page = [h[0] for h in hits]
        else:
            if searched:  # tags filter the ranked hits: every hit's pointer is needed
                hits = self._searcher_required().rank_tools(query, within=list(where))
                pointers = [h[0] for h in hits]
            elif wanted:
                pointers = list(self._subtree_pointers(where).values())
            elif offset + count <= len(shard.get("tools", [])):
                pointers = shard.get("tools", [])  # the first page answers without fetching more
            else:
                pointers = self._node_tools(shard)
            if wanted:
                pointers = [p for p in pointers if set(wanted) <= {t.lower() for t in p.get("tags", [])}]
            page = pointers[offset:offset + count]
            total = len(pointers) if searched or wanted else shard.get("direct_tools", len(pointers))
        confidences = {h[0]["tool_id"]: float(h[1]) for h in hits}
        more = offset + count < total
        nodes = [] if offset else [{k: c[k] for k in ("name", "path", "title", "summary", "tags", "tool_count")
                                    if k in c} for c in shard.get("children", [])]
        tools = [_public_pointer(p, confidences.get(p["tool_id"]) if confidences else None) for p in page]
        if tools:
            next_action: Json | None = {"op": "expand_tool", "args": {"tool_id": tools[0]["tool_id"]}}
        elif nodes:
            next_action = {"op": "list", "args": {"path": "/".join(nodes[0]["path"])}}
        else:
            next_action = None
        hints = []
        if not tools and not nodes:
            hints.append("Nothing here matches; try list() at the root or find_tool(purpose).")
        return _ok({"path": list(where), "title": shard.get("title", ""), "summary": shard.get("summary", ""),
                    "tool_count": shard.get("tool_count", 0), "nodes": nodes, "tools": tools,
                    "total_tools": total, "next_cursor": f"o:{offset + count}" if more else None},
                   help_path="root", hints=hints, next_action=next_action)

    def search_nodes(self, query: Any, limit: Any = 5) -> Json:
        """Ontology nodes ranked for ``query`` (delegated to the search module)."""
        def run(_trace: str) -> Json:
            _check_str(query, "query")
            count = _check_limit(limit, 5)
            return self._delegate(self._searcher_required().search_nodes(query, count))
        return self._run("search_nodes", query, run)

    def search_tool_by_category(self, query: Any, category_path: Any, limit: Any = 5, cursor: Any = None) -> Json:
        """Tools under ``category_path`` ranked for ``query``; NO_MATCH_IN_CATEGORY when none match."""
        def run(_trace: str) -> Json:
            _check_str(query, "query")
            where = node_path(category_path)
            count = _check_limit(limit, 5)
            if cursor is not None and not isinstance(cursor, str):
                raise _bad(f"cursor {_shown(cursor)} must be a string this reader returned")
            self._node(where)  # UNKNOWN_PATH with suggestions before searching
            return self._delegate(self._searcher_required().search_tool_by_category(query, list(where), count, cursor))
        return self._run("search_tool_by_category", {"query": query, "category_path": category_path}, run)

    def expand_tool(self, tool_id: Any) -> Json:
        """The full spec of one tool (accepts an alias); marks it expanded for this session."""
        return self._run("expand", tool_id, lambda _t: self._describe(tool_id))

    def call_tool(self, tool_id: Any, args: Any = None) -> Json:
        """Run a tool (the spec dialect's name for :meth:`tool_exec`)."""
        return self.tool_exec(tool_id, args)

    def _describe(self, name: Any) -> Json:
        tool_id, spec = self._spec(name)
        with self._lock:
            self._expanded.add(tool_id)
        keys = ("tool_id", "type", "aliases", "path", "categories", "summary", "description", "args_schema",
                "result_schema", "examples", "errors", "tags", "kind", "optional", "when_to_use", "policy",
                "annotations", "version", "deprecated", "tokens")
        out: Json = {k: copy.deepcopy(spec.get(k)) for k in keys}
        out["alias"] = (spec.get("aliases") or {}).get("openai", tool_id)
        handler = spec.get("handler")
        out["handler"] = {"type": handler.get("type")} if isinstance(handler, dict) else None
        out["executable"] = isinstance(handler, dict) and handler.get("type") in execute.HANDLERS
        hints: Strings = []
        if out["executable"] and self.policy.refusal(tool_id, handler) is not None:
            out["executable"] = False
            hints.append("This host does not allow this tool's handler: tool_exec answers NOT_AUTHORIZED.")
        skill = spec.get("skill")
        if isinstance(skill, dict):
            body = self.fetch_bytes(skill["body"]).decode("utf-8", errors="replace")
            out["skill"] = {
                "name": skill.get("name"), "level": 2, "frontmatter": copy.deepcopy(skill.get("frontmatter")),
                "body": body, "body_tokens": skill.get("body_tokens"),
                "resources": [{"path": r.get("path"), "media_type": r.get("media_type"),
                               "bytes": (r.get("ref") or {}).get("bytes")} for r in skill.get("resources", [])],
            }
            if skill.get("resources"):
                hints.append("Read a resource only when the instructions call for it: read_skill_resource(tool_id, path).")
        if not out["executable"] and not hints:
            hints.append("This tool has no handler this reader can run: the host application executes it.")
        if spec.get("deprecated"):
            hints.append(self._deprecation(spec))
        example = next((e.get("args") for e in spec.get("examples", []) if isinstance(e, dict)), None)
        next_action = {"op": "tool_exec", "args": {"op": tool_id, "args": copy.deepcopy(example or {})}}
        return _ok(out, help_path=tool_id, hints=hints, next_action=next_action)

    @staticmethod
    def _deprecation(spec: Json) -> str:
        value = spec.get("deprecated")
        if isinstance(value, str) and value.strip():
            return f"{spec.get('tool_id')} is deprecated: {value}"
        return f"{spec.get('tool_id')} is deprecated; search for its replacement before relying on it"

    # == gateway dialect ==========================================================================
    def tool_help(self, path: Any = "root", format: Any = "short", include_examples: Any = True,  # noqa: A002 - the dialect's name
                  include_schemas: Any = False) -> Json:
        """Help for the root, a group (``onto``, ``onto.task``) or one operation (``onto.task.update``)."""
        return self._run("help", path, lambda _t: self._help(path, format, include_examples, include_schemas))

    def _help(self, path: Any, fmt: Any, include_examples: Any, include_schemas: Any) -> Json:
        if fmt not in HELP_FORMATS:
            raise _bad(f"format must be 'short' or 'full', got {_shown(fmt)}")
        examples = _check_bool(include_examples, "include_examples")
        schemas = _check_bool(include_schemas, "include_schemas")
        if path is None:
            path = "root"
        if not isinstance(path, str) or len(path) > MAX_NAME:
            raise _bad(f"a help path is a dotted string like 'onto.task', got {_shown(path)}")
        text = path.strip().strip(".").replace("/", ".")
        if text in ROOT_NAMES:
            return self._help_root(fmt)
        tool_id = self.resolve(text)
        if tool_id is not None:
            return self._help_op(tool_id, fmt, examples=examples, schemas=schemas)
        namespaces = [str(n) for n in self.manifest.get("namespaces", [])]
        if text.split(".", 1)[0] not in namespaces:
            self._unknown_help(text, namespaces)
        groups, ops = self._namespace_tree(text.split(".", 1)[0])
        if text not in groups:
            self._unknown_help(text, sorted([*groups, *ops]))
        return self._help_group(text, groups, ops, fmt)

    def _unknown_help(self, text: str, names: Strings) -> None:
        close = _close(text, names)
        raise ReaderError(
            "UNKNOWN_PATH", f"no group or operation {_shown(text, 120)}",
            details={"path": text, "suggestions": close},
            hints=[f"Did you mean {', '.join(close)}?" if close else "Start at the root to see the groups."],
            next_action={"op": "tool_help", "args": {"path": close[0] if close else "root"}},
            help_path="root",
        )

    def _namespace_tree(self, namespace: str | None = None) -> tuple[dict[str, Json], dict[str, Json]]:
        """Groups (every proper prefix of an id) and operations, of one namespace or of all pointers."""
        ops = self._namespace_pointers(namespace) if namespace is not None else self._all_pointers()
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

    def _help_root(self, fmt: str) -> Json:
        namespaces = [str(n) for n in self.manifest.get("namespaces", [])]
        out: Json = {
            "path": "root", "level": "root", "title": self.manifest.get("title", ""),
            "summary": self.manifest.get("summary", ""), "registry_version": self.registry_version,
            "counts": self.manifest.get("counts", {}),
            "groups": [{"name": n, "help_path": n} for n in namespaces],
            "usage": "tool_help(path) for a group or an operation; tool_exec(op, args) to run one; "
                     "find_tool(purpose) to search.",
        }
        if fmt == "full" and self._pointers is not None:
            groups, _ = self._namespace_tree()
            for group in out["groups"]:
                group["op_count"] = groups.get(group["name"], {}).get("count", 0)
        next_action = {"op": "tool_help", "args": {"path": namespaces[0]}} if namespaces else None
        return _ok(out, help_path="root", next_action=next_action)

    def _help_group(self, group: str, groups: dict[str, Json], ops: dict[str, Json], fmt: str) -> Json:
        entry = groups[group]

        def op_line(tool_id: str) -> Json:
            pointer = ops[tool_id]
            line = {"op": tool_id, "alias": pointer.get("alias"), "summary": pointer.get("summary"),
                    "kind": pointer.get("kind"), "help_path": tool_id}
            if fmt == "full":
                line.update(type=pointer.get("type"), tags=list(pointer.get("tags", [])),
                            deprecated=pointer.get("deprecated"))
            return line

        subgroups = [{"path": g, "op_count": groups[g]["count"], "help_path": g,
                      "sample_ops": sorted(i.rsplit(".", 1)[-1] for i in groups[g]["ops"])[:8]}
                     for g in sorted(entry["groups"])]
        operations = [op_line(t) for t in sorted(entry["ops"])]
        out = {"path": group, "level": "group", "op_count": entry["count"],
               "summary": f"{entry['count']} operation(s) under {group}: {len(operations)} here, "
                          f"{len(subgroups)} subgroup(s)",
               "groups": subgroups, "operations": operations}
        first = operations[0]["op"] if operations else subgroups[0]["path"]
        return _ok(out, help_path=group, next_action={"op": "tool_help", "args": {"path": first}})

    def _help_op(self, tool_id: str, fmt: str, *, examples: bool, schemas: bool) -> Json:
        spec = self._spec(tool_id)[1]
        with self._lock:
            self._expanded.add(tool_id)
        schema = spec.get("args_schema") or {}
        props = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        args = []
        for name, raw in props.items():
            sub = raw if isinstance(raw, dict) else {}
            arg: Json = {"name": name, "type": sub.get("type", "any"), "required": name in required}
            if "default" in sub:
                arg["default"] = copy.deepcopy(sub["default"])
            if "enum" in sub:
                arg["enum"] = copy.deepcopy(sub["enum"])
            if sub.get("description"):
                arg["description"] = sub["description"]
            args.append(arg)
        usage_args = ", ".join(f'"{a["name"]}": <{a["type"]}>' for a in args if a["required"])
        policy = spec.get("policy") or {}
        notes = [n for n in [spec.get("when_to_use") or "", *policy.get("edge_cases", [])] if n]
        if spec.get("deprecated"):
            notes.insert(0, self._deprecation(spec))
        out: Json = {
            "path": tool_id, "level": "operation", "op": tool_id,
            "alias": (spec.get("aliases") or {}).get("openai", tool_id), "type": spec.get("type"),
            "summary": spec.get("summary"), "kind": spec.get("kind"),
            "usage": f'tool_exec(op="{tool_id}", args={{{usage_args}}})', "args": args, "notes": notes,
            "policy": copy.deepcopy(policy) if fmt == "full" else {"dont": list(policy.get("dont", []))},
        }
        if examples:
            shown = spec.get("examples", []) if fmt == "full" else spec.get("examples", [])[:2]
            out["examples"] = copy.deepcopy(shown)
        if fmt == "full":
            out.update(description=spec.get("description"), errors=copy.deepcopy(spec.get("errors", [])),
                       tags=list(spec.get("tags", [])), annotations=copy.deepcopy(spec.get("annotations")))
            if isinstance(spec.get("skill"), dict):
                out["resources"] = [r.get("path") for r in spec["skill"].get("resources", [])]
        if schemas:
            out.update(args_schema=copy.deepcopy(schema), result_schema=copy.deepcopy(spec.get("result_schema")))
        example = next((e.get("args") for e in spec.get("examples", []) if isinstance(e, dict)), None)
        return _ok(out, help_path=tool_id,
                   next_action={"op": "tool_exec", "args": {"op": tool_id, "args": copy.deepcopy(example or {})}})

    def tool_exec(self, op: Any, args: Any = None, idempotency_key: Any = None, dry_run: Any = False) -> Json:
        """Validate and run one operation: ``{op, ok, result, meta}`` or ``{op, ok: false, error, meta}``."""
        return self._run("exec", op, lambda trace: self._exec(op, args, idempotency_key, dry_run, trace))

    def _exec(self, op: Any, args: Any, key: Any, dry_run: Any, trace: str) -> Json:
        started = time.perf_counter()
        warnings: Strings = []
        meta_extra: Json = {}
        tool_id = op if isinstance(op, str) else None
        try:
            tool_id, body = self._exec_steps(op, args, key, dry_run, warnings, meta_extra)
            envelope = _ok(body, help_path=tool_id)
        except ReaderError as exc:
            envelope = exc.envelope()
        except Exception as exc:
            log.exception("tool_exec(%s) failed", _shown(op))
            envelope = error_envelope("INTERNAL", f"{type(exc).__name__}: {exc}",
                                      details={"exception": type(exc).__name__}, help_path=tool_id or "root")
        envelope["op"] = tool_id if tool_id is not None else _shown(op, MAX_NAME)
        envelope["meta"] = {"trace_id": trace, "latency_ms": round((time.perf_counter() - started) * 1000, 3),
                            "warnings": warnings, "registry_version": self.registry_version, **meta_extra}
        return envelope

    def _authorize(self, tool_id: str, spec: Json) -> None:
        namespace = tool_id.split(".", 1)[0]
        if self.allowed_namespaces is not None and namespace not in self.allowed_namespaces:
            raise ReaderError(
                "NOT_AUTHORIZED", f"namespace {namespace!r} is not allowed in this session",
                details={"allowed_namespaces": self.allowed_namespaces}, help_path=tool_id,
                hints=["The host limited this session to some namespaces; use a tool from them."],
                next_action={"op": "tool_help", "args": {"path": "root"}},
            )
        if self.read_only and spec.get("kind") == "write":
            raise ReaderError(
                "NOT_AUTHORIZED", f"{tool_id} writes, and this session is read-only", help_path=tool_id,
                hints=["Only kind=read tools run in a read-only session; ask the user to run this change."],
            )
        if self.require_expand and tool_id not in self._expanded:
            raise ReaderError(
                "NOT_AUTHORIZED", f"{tool_id} must be described before it is executed in this session",
                help_path=tool_id, hints=["Read the spec first: its arguments, policy and edge cases."],
                next_action={"op": "tool_describe", "args": {"name": tool_id}},
            )

    def _exec_steps(self, op: Any, args: Any, key: Any, dry_run: Any, warnings: Strings,
                    meta: Json) -> tuple[str, Json]:
        if not isinstance(op, str) or not op.strip():
            raise _bad(f"'op' must be an operation name like 'file.read', got {_shown(op)}")
        if key is not None and (not isinstance(key, str) or not key or len(key) > MAX_NAME):
            raise _bad(f"idempotency_key must be a non-empty string, got {_shown(key)}")
        dry = _check_bool(dry_run, "dry_run")
        tool_id, spec = self._spec(op)
        meta["tool_id"] = tool_id
        if args is None:
            args = {}
        if not isinstance(args, dict):
            raise ReaderError(
                "VALIDATION_ERROR", f"args of {tool_id} must be a JSON object, got {type(args).__name__}",
                details={"field_errors": [{"field": "$", "message": "args must be an object", "expected": "object"}]},
                help_path=tool_id, next_action={"op": "tool_help", "args": {"path": tool_id}},
            )
        if spec.get("deprecated"):
            warnings.append(self._deprecation(spec))
        self._authorize(tool_id, spec)
        schema = spec.get("args_schema") or {}
        filled = execute.apply_defaults(schema, args)
        field_errors = execute.validate_args(schema, filled, warnings)
        if field_errors:
            names = ", ".join(e["field"] for e in field_errors)
            raise ReaderError(
                "VALIDATION_ERROR", f"{len(field_errors)} invalid argument(s) for {tool_id}: {names}",
                details={"field_errors": field_errors}, help_path=tool_id,
                hints=["Fix every listed field and call again; tool_help(help_path) shows the arguments."],
                next_action={"op": "tool_help", "args": {"path": tool_id, "format": "full"}},
            )
        if dry:
            plan = execute.describe_run({**spec, "tool_id": tool_id}, filled, self.policy)
            if not plan.get("allowed", True):
                warnings.append("a real call would be refused: this host does not allow the tool's handler")
            return tool_id, {"dry_run": True, "result": None, "would_run": plan}
        handler = spec.get("handler")
        if not isinstance(handler, dict):
            raise ReaderError(
                "NOT_EXECUTABLE", f"{tool_id} has no handler: the host application must run it", help_path=tool_id,
                details={"args": filled},
                hints=["Call the tool through your own runtime with these validated args."],
            )
        kind = str(handler.get("type"))
        runner = execute.HANDLERS.get(kind)
        if runner is None:
            raise ReaderError("NOT_EXECUTABLE", f"this reader has no {kind!r} handler to run {tool_id}",
                              help_path=tool_id, details={"handler": kind, "known": sorted(execute.HANDLERS)})
        refusal = self.policy.refusal(tool_id, handler)
        if refusal is not None:
            raise refusal
        canonical = hashlib.sha256(json.dumps(filled, sort_keys=True, default=repr).encode("utf-8")).hexdigest()
        with self._idempotency.lock(key):
            if key is not None:
                first = self._idempotency.get(key, tool_id, canonical)
                if first is not None:
                    meta["replayed"] = True
                    if is_error(first):
                        raise ReaderError(**{k: first["error"][k] for k in ("code", "message", "details", "hints",
                                                                             "next_action", "help_path")})
                    return tool_id, first
            ctx = execute.ExecContext(tool_id, spec, filled, self.timeout, self.fetch_bytes, self.policy.allows_python,
                                      warnings, policy=self.policy)
            try:
                result = runner(ctx)
                json.dumps(result)
                body: Json = {"result": result}
            except (TypeError, ValueError) as exc:
                raise ReaderError("INTERNAL", f"{tool_id} returned a result that is not JSON: {exc}",
                                  help_path=tool_id) from None
            except ReaderError as exc:
                if key is not None:
                    self._idempotency.put(key, tool_id, canonical, exc.envelope(), warnings)
                raise
            if key is not None:
                self._idempotency.put(key, tool_id, canonical, body, warnings)
            return tool_id, body

    def tool_batch(self, ops: Any, mode: Any = "sequential") -> Json:
        """Run several ``{op, args, idempotency_key?, dry_run?}`` items, in order or in parallel."""
        return self._run("batch", {"mode": mode, "count": len(ops) if isinstance(ops, list) else None},
                         lambda _t: self._batch(ops, mode))

    def _batch(self, ops: Any, mode: Any) -> Json:
        if mode not in ("sequential", "parallel"):
            raise _bad(f"mode must be 'sequential' or 'parallel', got {_shown(mode)}")
        if not isinstance(ops, list) or not ops or len(ops) > MAX_BATCH:
            raise _bad(f"ops must be a list of 1 to {MAX_BATCH} items like {{'op': 'file.read', 'args': {{...}}}}")

        def one(item: Any) -> Json:
            if not isinstance(item, dict) or "op" not in item:
                envelope = _bad("each batch item needs an 'op' (and optional args, idempotency_key, dry_run)"
                                ).envelope()
                return {"op": _shown(item), **envelope}
            return self.tool_exec(item.get("op"), item.get("args"), item.get("idempotency_key"),
                                  item.get("dry_run", False))

        if mode == "parallel" and len(ops) > 1:
            from concurrent.futures import ThreadPoolExecutor  # noqa: PLC0415

            with ThreadPoolExecutor(max_workers=min(8, len(ops))) as pool:
                results = list(pool.map(one, ops))
        else:
            results = [one(item) for item in ops]
        failed = sum(1 for r in results if not r.get("ok"))
        return _ok({"mode": mode, "count": len(results), "failed": failed, "results": results,
                    "all_ok": failed == 0}, help_path="root")

    # == namespaced dialect ========================================================================
    def tool_list(self, namespace: Any = None, tags: Any = None) -> Json:
        """Canonical names and aliases (no schemas) of every tool, or of one namespace/group."""
        return self._run("tool_list", {"namespace": namespace, "tags": tags},
                         lambda _t: self._tool_list(namespace, tags))

    def _tool_list(self, namespace: Any, tags: Any) -> Json:
        wanted = _check_tags(tags)
        group = None
        if namespace is not None:
            group = _check_str(namespace, "namespace").strip().strip(".")
            if group.split(".", 1)[0] not in self.manifest.get("namespaces", []):
                self._unknown_help(group, [str(n) for n in self.manifest.get("namespaces", [])])
        pointers = self._namespace_pointers(group.split(".", 1)[0]) if group is not None else self._all_pointers()
        rows = []
        for tool_id, pointer in pointers.items():
            if group is not None and not tool_id.startswith(group + "."):
                continue
            if wanted and not set(wanted) <= {t.lower() for t in pointer.get("tags", [])}:
                continue
            rows.append({"name": tool_id, "alias": pointer.get("alias"), "type": pointer.get("type"),
                         "kind": pointer.get("kind"), "summary": pointer.get("summary")})
        if group is not None and not rows and not wanted:
            groups, ops = self._namespace_tree(group.split(".", 1)[0])
            self._unknown_help(group, sorted([*groups, *ops]))
        next_action = {"op": "tool_describe", "args": {"name": rows[0]["name"]}} if rows else None
        return _ok({"namespace": group, "count": len(rows), "tools": rows}, help_path=group or "root",
                   next_action=next_action)

    def tool_describe(self, name: Any) -> Json:
        """The full spec of a tool by canonical name or alias; a skill's SKILL.md body (level 2)."""
        return self._run("describe", name, lambda _t: self._describe(name))

    def find_tool(self, purpose: Any, limit: Any = 5) -> Json:
        """Tools ranked for a purpose in plain words (delegated to the search module)."""
        def run(_trace: str) -> Json:
            _check_str(purpose, "purpose")
            count = _check_limit(limit, 5)
            return self._delegate(self._searcher_required().find_tool(purpose, count))
        return self._run("find_tool", purpose, run)

    def read_skill_resource(self, tool_id: Any, path: Any) -> Json:
        """One bundled file of a skill (level 3), read only when asked for."""
        def run(_trace: str) -> Json:
            resolved, spec = self._spec(tool_id)
            skill = spec.get("skill")
            if not isinstance(skill, dict):
                raise _bad(f"{resolved} is not a skill; only skills bundle resources", help_path=resolved)
            namespace = resolved.split(".", 1)[0]
            if self.allowed_namespaces is not None and namespace not in self.allowed_namespaces:
                raise ReaderError("NOT_AUTHORIZED", f"namespace {namespace!r} is not allowed in this session",
                                  help_path=resolved)
            return _ok(execute.read_resource(resolved, skill, path, self.fetch_bytes), help_path=resolved)
        return self._run("read_resource", {"tool_id": tool_id, "path": path}, run)

    def prompt_section(self, task: str, budget_tokens: int = 1500, detail: str = "short") -> Json:
        """A prompt section for ``task`` within a token budget (written by the prompts stage)."""
        def run(_trace: str) -> Json:
            from .prompting import prompt_section  # type: ignore[import-not-found,unused-ignore]  # noqa: PLC0415 - optional module

            result = prompt_section(self, task=task, budget_tokens=budget_tokens, detail=detail)
            return result if isinstance(result, dict) else {"ok": True, "section": result}
        return self._run("prompt_section", task, run)
