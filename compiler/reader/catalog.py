"""The runtime ``Catalog``: a thin facade over a store, a session and one module per dialect.

* the store (:mod:`toolcat.reader.store`): the entry, pins, verified files in memory, lookups, node walks;
* the session (:mod:`toolcat.reader.session`): policy, the guard and audit of every operation,
  tool execution, idempotency keys, batches;
* spec (:mod:`toolcat.reader.dialects.spec`): :meth:`Catalog.list`, :meth:`~Catalog.search_nodes`,
  :meth:`~Catalog.search_tool_by_category`, :meth:`~Catalog.expand_tool`, :meth:`~Catalog.call_tool`;
* gateway (:mod:`toolcat.reader.dialects.gateway`): :meth:`~Catalog.tool_help`, :meth:`~Catalog.tool_exec`,
  :meth:`~Catalog.tool_batch`;
* namespaced (:mod:`toolcat.reader.dialects.namespaced`): :meth:`~Catalog.tool_list`, :meth:`~Catalog.tool_describe`,
  :meth:`~Catalog.find_tool`, and seed 002's per-domain :meth:`~Catalog.discover`;
* direct (:mod:`toolcat.reader.dialects.direct`): :meth:`~Catalog.direct_tools`, each run by
  ``tool_exec(alias, args, dialect="direct")``.

Only :meth:`Catalog.open` raises (:class:`ReaderError`); every operation after it returns a
plain dict: a result with ``ok: true`` or an error envelope, never a traceback. Files are
fetched lazily through refs and kept in memory by sha256 (they never change).
"""

from __future__ import annotations

import builtins
import json
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..format import settings
from ..format.dialects import manifest_discovery
from ..format.envelope import ReaderError, error_envelope
from ..format.refs import MAX_FILE_BYTES
from ..format.types import Json
from .audit import AuditSink
from .checks import shown, trim
from .dialects import DIALECTS, direct, gateway, namespaced, protocol, shared
from .dialects import spec as spec_dialect
from .execution.handlers import Handler
from .execution.policy import HandlerPolicy
from .fetch import open_source
from .fetch.folder import FolderSource, Source
from .session import Session
from .store import Store

log = logging.getLogger(__name__)

__all__ = ["Catalog"]


def _check_pin(pin: Any) -> str | None:
    """The hex digest of ``pin="sha256:<64 hex>"``; BAD_REQUEST for anything else."""
    if pin is None:
        return None
    text = trim(pin).lower() if isinstance(pin, str) else ""
    digest = text.removeprefix("sha256:")
    if not text.startswith("sha256:") or len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
        raise ReaderError(
            "BAD_REQUEST",
            f"pin must be 'sha256:' and 64 hex digits, got {shown(pin, 100)}",
            hints=[
                (
                    "pin is the sha256 of the manifest file: the 'sha256' of the 'manifest' ref in "
                    "catalog.json, e.g. pin='sha256:' + entry['manifest']['sha256']."
                )
            ],
        )
    return digest


def _check_sandbox(sandbox: Any) -> str | None:
    """``sandbox`` as an absolute folder path; BAD_REQUEST unless it is an existing folder."""
    if sandbox is None:
        return None
    if not isinstance(sandbox, (str, Path)) or not str(sandbox).strip():
        raise ReaderError("BAD_REQUEST", f"sandbox must be a folder path, got {shown(sandbox, 100)}")
    root = Path(sandbox).expanduser().resolve()
    if not root.is_dir():
        raise ReaderError(
            "BAD_REQUEST",
            f"sandbox {str(sandbox)!r} is not an existing folder",
            hints=["Create the folder the file.* tools may use, or pass another one."],
        )
    return str(root)


def _check_handlers(handlers: Any) -> dict[str, Handler]:
    """``handlers={type: function}`` as a dict; BAD_REQUEST for anything else."""
    if handlers is None:
        return {}
    if not isinstance(handlers, dict) or not all(isinstance(k, str) and k and callable(v) for k, v in handlers.items()):
        raise ReaderError(
            "BAD_REQUEST",
            f"handlers must map handler types to functions, got {shown(handlers, 100)}",
            hints=["Pass handlers={'mcp': run_mcp}: each function takes an ExecContext."],
        )
    return dict(handlers)


#: A host context holds at most this many keys, each at most this long, and this many bytes of JSON in all.
MAX_CONTEXT_KEYS = 64
MAX_CONTEXT_KEY = 128
MAX_CONTEXT_BYTES = 64 * 1024


def _check_context(context: Any) -> dict[str, Any]:
    """``context={"project_id": ...}`` as a dict of JSON values; BAD_REQUEST (naming keys, never values) otherwise."""
    if context is None:
        return {}
    if not isinstance(context, dict) or not all(
        isinstance(k, str) and k and len(k) <= MAX_CONTEXT_KEY for k in context
    ):
        raise ReaderError(
            "BAD_REQUEST",
            f"context must map argument names to values, got a {type(context).__name__}"
            + (f" with keys {shown(sorted(map(str, context)), 100)}" if isinstance(context, dict) else ""),
            hints=[f"Pass context={{'project_id': 'p-1'}}: names of at most {MAX_CONTEXT_KEY} characters."],
        )
    try:
        size = len(json.dumps(context, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        raise ReaderError(
            "BAD_REQUEST",
            f"context values must be JSON (strings, numbers, booleans, null, lists, objects); keys {sorted(context)}",
            hints=["Pass identifiers as strings or numbers."],
        ) from None
    if len(context) > MAX_CONTEXT_KEYS or size > MAX_CONTEXT_BYTES:
        raise ReaderError(
            "BAD_REQUEST",
            f"context holds {len(context)} keys and {size} bytes of JSON; the limits are "
            f"{MAX_CONTEXT_KEYS} keys and {MAX_CONTEXT_BYTES} bytes",
            hints=["Pass only the values tools declare as context (their 'contexts')."],
        )
    result: dict[str, Any] = json.loads(json.dumps(context))  # a deep copy the host cannot change later
    return result


def manifest_tier(manifest: Json) -> str:
    """The search tier a manifest promises, before any search loads it (no file is read).

    ``none: …`` without a search index; ``lexical: <why>`` without vectors or with the semantic tier turned off;
    ``hybrid (pending: …)`` when the build has vectors: whether this host loads the build's embedder is known at
    the first search, and ``stats()`` then names the model or says why it fell back to words.
    """
    if not isinstance(manifest.get("index"), dict):
        return "none: this build has no search index (searches answer UNAVAILABLE; browse instead)"
    if settings.flag_off("TOOLCAT_SEMANTIC"):
        return "lexical: turned off (TOOLCAT_SEMANTIC=0)"
    if not isinstance(manifest.get("vectors"), dict):
        return "lexical: this build has no vectors (build with --embedder to add the semantic tier)"
    return "hybrid (pending: the build's embedder is checked and loaded at the first search)"


class Catalog:
    """A published catalogue, opened from a build folder or an http(s) base URL."""

    def __init__(self, store: Store, session: Session) -> None:
        #: what the catalogue holds (files, manifest, search) and what this agent's session may do with it
        self.store = store
        self.session = session

    # -- the store's and the session's settings, read through (the Catalog copies nothing) ---------------------
    @property
    def source(self) -> Source:
        """Where the catalogue's files come from (a folder or an http(s) base URL)."""
        return self.store.source

    @property
    def pinned(self) -> Any:
        """The pinned (always_load) tools the host asked to list, if any (``open(..., pinned=...)``)."""
        return self.store.pinned

    @property
    def pin(self) -> str | None:
        """sha256 (hex) of the manifest file this session must read, from ``open(..., pin="sha256:...")``."""
        return self.store.pin

    @property
    def policy(self) -> Any:
        """The handler policy: which handler kinds and targets this host lets the catalogue run."""
        return self.session.policy

    @property
    def read_only(self) -> bool:
        """Whether tools of kind write are refused (PERMISSION_DENIED)."""
        return self.session.read_only

    @property
    def allowed_namespaces(self) -> Any:
        """The namespaces this session may see and use (None: all)."""
        return self.session.allowed_namespaces

    @property
    def require_expand(self) -> bool:
        """Whether a tool runs only after the agent read its spec."""
        return self.session.require_expand

    @property
    def timeout(self) -> float:
        """Seconds a handler has per call."""
        return self.session.timeout

    @property
    def session_id(self) -> str:
        """This session's id (in audit records and traces)."""
        return self.session.session_id

    @property
    def audit(self) -> Any:
        """Where this session's audit records go (an AuditLog file, a host's store, or None)."""
        return self.session.audit

    @property
    def context(self) -> Any:
        """The host's context values by argument name (``open(..., context=...)``)."""
        return self.session.context

    # -- opening ----------------------------------------------------------------------------
    @classmethod
    def open(
        cls,
        path_or_url: str | Path,
        cache_dir: str | Path | None = None,
        version: str | None = None,
        *,
        read_only: bool = False,
        allowed_namespaces: list[str] | None = None,
        audit: str | Path | AuditSink | None = None,
        require_expand: bool = False,
        timeout: float = 10.0,
        retries: int = 2,
        python_modules: list[str] | None = None,
        max_parallel: int = 8,
        allow_handlers: dict[str, list[Any]] | None = None,
        pin: str | None = None,
        sandbox: str | Path | None = None,
        max_file_bytes: int = MAX_FILE_BYTES,
        handlers: dict[str, Callable[[Any], Any]] | None = None,
        allow_secrets: dict[str, list[str]] | None = None,
        context: dict[str, Any] | None = None,
        pinned: bool | None = None,
    ) -> Catalog:
        """Open a catalogue; raises :class:`ReaderError` (UNAVAILABLE / INTEGRITY / BAD_REQUEST) when it cannot.

        ``allow_handlers`` says which handlers run, by type and target (:mod:`toolcat.reader.execution.network`):
        ``{"python": ["mypkg."], "http": ["api.example.com", "127.0.0.1:8080"], "mcp": ["python /srv/up.py"]}``.
        A type it does not name runs every handler for a local folder (the host built it) and none
        for a catalogue opened by URL; skill handlers always run. http handlers reach non-public
        addresses only for a host:port listed here. ``python_modules`` is the same as
        ``allow_handlers["python"]``.
        ``handlers={"mcp": fn, ...}`` gives this catalogue its own handler functions by type (each
        takes an :class:`~toolcat.reader.execution.runners.ExecContext`); they come before
        :func:`~toolcat.reader.register_handler` and the installed ``toolcat.handlers`` entry points
        (:mod:`toolcat.reader.execution.handlers`), and ``allow_handlers`` gates them all the same.
        ``pin="sha256:<hex>"`` is the sha256 of the manifest file's bytes (the ``sha256`` of the
        ``manifest`` ref in catalog.json): open fails with INTEGRITY unless that manifest is published,
        and every file read after it is checked against hashes it holds. ``version`` selects a
        registry_version by name; ``pin`` checks content.
        ``sandbox`` is the folder the ``file.*`` handlers work in (else ``$TOOLCAT_SANDBOX``; without
        either they refuse).
        ``max_parallel`` bounds the requests in flight when a search needs several files over
        HTTP (1 fetches them one after the other).
        ``allow_secrets={"api.example.com": ["EXAMPLE_TOKEN"]}`` says which environment variables
        the http handlers calling each host may send (the catalogue only names them); without it a
        folder's handlers may read any and a URL catalogue's none.
        ``max_file_bytes`` caps every file read over HTTP, on the wire and inflated, whatever its ref
        promises (a larger promise is INTEGRITY).
        ``context={"project_id": "p-1"}`` is the host's context (001): a tool that declares an argument in
        its ``contexts`` gets the host's value for it, over any value the model sent (``meta.context_filled``
        names them); no tool receives a context value it did not declare, and the schema the model reads
        (describe, tool_help) leaves the filled arguments out. Audit records name them, never their values.
        ``audit`` is a JSON Lines file path, or a host's sink (an object with the
        :class:`~toolcat.reader.audit.AuditSink` ``record`` method) to emit analytics or UI events from.
        ``pinned=True`` lists the catalogue's pinned (``always_load``) tools beside the discovery tools (an MCP
        server, ``toolcat serve --pinned``), ``False`` never; None follows the catalogue's ``discovery.pinned``.
        """
        if not isinstance(path_or_url, (str, Path)):
            raise ReaderError("BAD_REQUEST", f"open() takes a folder path or an http(s) URL, got {shown(path_or_url)}")
        if version is not None and not isinstance(version, str):
            raise ReaderError("BAD_REQUEST", f"version must be a registry_version string, got {shown(version)}")
        if allowed_namespaces is not None and (
            not isinstance(allowed_namespaces, (list, tuple)) or not all(isinstance(n, str) for n in allowed_namespaces)
        ):
            raise ReaderError("BAD_REQUEST", "allowed_namespaces must be a list of namespace names")
        if not isinstance(max_parallel, int) or isinstance(max_parallel, bool) or max_parallel < 1:
            raise ReaderError("BAD_REQUEST", f"max_parallel must be a positive integer, got {shown(max_parallel, 40)}")
        digest = _check_pin(pin)
        root = _check_sandbox(sandbox)
        own_handlers = _check_handlers(handlers)
        host_context = _check_context(context)
        if pinned is not None and not isinstance(pinned, bool):
            raise ReaderError("BAD_REQUEST", f"pinned must be true, false or None, got {shown(pinned, 40)}")
        if audit is not None and not isinstance(audit, (str, Path)) and not callable(getattr(audit, "record", None)):
            raise ReaderError(
                "BAD_REQUEST",
                f"audit must be a file path or an object with a record() method, got {shown(audit, 100)}",
            )
        source = open_source(path_or_url, cache_dir, timeout, retries, max_parallel, max_file_bytes=max_file_bytes)
        policy = HandlerPolicy(
            allow_handlers,
            trusted=isinstance(source, FolderSource),
            python_modules=python_modules,
            sandbox=root,
            allow_secrets=allow_secrets,
        )
        store = Store(source, version=version, pin=digest)
        session = Session(
            store,
            policy,
            read_only=read_only,
            allowed_namespaces=allowed_namespaces,
            require_expand=require_expand,
            timeout=timeout,
            audit=audit,
            handlers=own_handlers,
            context=host_context,
            pinned=pinned,
        )
        started = time.perf_counter()
        store.load(store.read_entry())
        session.record_open(source.location, (time.perf_counter() - started) * 1000)
        return cls(store, session)

    # -- the store ----------------------------------------------------------------------------
    @property
    def entry(self) -> Json:
        """The current ``catalog.json``."""
        return self.store.entry

    @property
    def manifest(self) -> Json:
        """The manifest of the registry_version this catalogue reads."""
        return self.store.manifest

    @property
    def registry_version(self) -> str:
        """The registry_version this catalogue reads."""
        return self.store.registry_version

    def refresh(self) -> bool:
        """Re-read catalog.json (revalidated by ETag); True when a new registry_version was loaded.

        A catalogue opened with ``version=`` or ``pin=`` keeps the manifest it opened.
        """
        return self.store.refresh()

    def fetch_bytes(self, ref: Json) -> bytes:
        """The bytes a ref points to, verified against its sha256 and kept in memory."""
        return self.store.fetch_bytes(ref)

    def fetch_json(self, ref: Json) -> Any:
        """The parsed JSON a ref points to (verified, cached by sha256; treat it as read-only)."""
        return self.store.fetch_json(ref)

    def prefetch(self, refs: list[Json]) -> None:
        """Bring several JSON files into memory at once (over HTTP, concurrently)."""
        self.store.prefetch(refs)

    def stats(self) -> Json:
        """Requests, bytes downloaded and cache hits so far, the files held in memory, and the search tier.

        ``search_tier``: once a search ran, ``hybrid (<model>)``, ``expanded (<model>)`` (the learned term expansion,
        ``--embedder terms``) or ``lexical: <why>``; before, what the manifest says (:func:`manifest_tier`), read at
        no cost: no request is made to answer it (an expansion is in the index meta, so it shows after a search).
        """
        out = self.store.stats()
        searcher = self.store._searcher  # noqa: SLF001 - only once a search looked at it
        tier = getattr(searcher, "_semantic", None)
        if tier is not None:
            expanded = searcher.expansion_model()
            if tier.available():
                out["search_tier"] = f"hybrid ({tier.model})"
            elif expanded is not None:
                out["search_tier"] = f"expanded ({expanded})"
            else:
                out["search_tier"] = f"lexical: {tier.reason}"
        else:
            out["search_tier"] = manifest_tier(self.manifest)
        return out

    def resolve(self, name: str) -> str | None:
        """The canonical tool id for a canonical id, any provider alias, or a skill name; None if unknown."""
        return self.store.resolve(name)

    def searcher(self) -> Any:
        """The catalogue's :class:`~toolcat.reader.search.searcher.Searcher`; ReaderError UNAVAILABLE without an index."""
        return self.store.searcher_required()

    # -- the protocol -------------------------------------------------------------------------
    def _answer(self, result: Json, dialect: str) -> Json:
        """``result`` in ``dialect``'s terms (:mod:`toolcat.reader.dialects.protocol`): its next_action and hints, lean."""
        module = DIALECTS.get(dialect)
        if module is None:
            return result
        try:
            out = protocol.lean(protocol.render(result, module, self.store))
        except ReaderError as exc:  # rendering reads lookups too: a tampered file is still an envelope
            return exc.envelope()
        except Exception as exc:
            log.exception("rendering a %s answer failed", dialect)
            return error_envelope("INTERNAL", f"rendering the answer failed: {type(exc).__name__}: {exc}")
        if isinstance(out.get("results"), list) and "mode" in out:  # a batch: each item lean too
            out["results"] = [protocol.lean(r) if isinstance(r, dict) else r for r in out["results"]]
        return out

    # == spec dialect ===========================================================================
    def list(
        self,
        path: Any = None,
        tags: Any = None,
        query: Any = None,
        limit: Any = 10,
        cursor: Any = None,
        capability: Any = None,
    ) -> Json:
        """Child nodes and tool pointers at ``path`` (paged); ``tags``, ``capability`` and ``query`` search its subtree.

        ``path`` is a list of names (``["Coding", "Refactoring"]``), ``"coding/refactoring"`` or
        ``"coding.refactoring"``; names match case-insensitively.
        """
        return self._answer(
            self.session.run(
                "list",
                {"path": path, "tags": tags, "query": query, "capability": capability},
                lambda _t: spec_dialect.list_node(
                    self.store, self.session, path, tags, query, limit, cursor, capability
                ),
            ),
            "spec",
        )

    def search_nodes(self, query: Any, limit: Any = 5) -> Json:
        """Ontology nodes ranked for ``query`` (delegated to the search module)."""
        return self._answer(
            self.session.run("search_nodes", query, lambda _t: spec_dialect.search_nodes(self.store, query, limit)),
            "spec",
        )

    def search_tool_by_category(self, query: Any, category_path: Any, limit: Any = 5, cursor: Any = None) -> Json:
        """Tools under ``category_path`` ranked for ``query``; NO_MATCH_IN_CATEGORY when none match."""
        return self._answer(
            self.session.run(
                "search_tool_by_category",
                {"query": query, "category_path": category_path},
                lambda _t: spec_dialect.search_tool_by_category(
                    self.store, self.session, query, category_path, limit, cursor
                ),
            ),
            "spec",
        )

    def expand_tool(self, tool_id: Any) -> Json:
        """The full spec of one tool (accepts an alias); marks it expanded for this session."""
        return self._answer(
            self.session.run("expand", tool_id, lambda _t: spec_dialect.describe(self.store, self.session, tool_id)),
            "spec",
        )

    def call_tool(self, tool_id: Any, args: Any = None) -> Json:
        """Run a tool (the spec dialect's name for :meth:`tool_exec`)."""
        return self.tool_exec(tool_id, args, dialect="spec")

    # == gateway dialect ==========================================================================
    def tool_help(
        self,
        path: Any = "root",
        format: Any = "short",  # noqa: A002 - the dialect's name
        include_examples: Any = True,
        include_schemas: Any = False,
        query: Any = None,
        limit: Any = None,
    ) -> Json:
        """Help for the root, a group (``onto``, ``onto.task``) or one operation; ``query`` ranks operations by purpose."""
        return self._answer(
            self.session.run(
                "help",
                path if query is None else {"path": path, "query": query},
                lambda _t: gateway.tool_help(
                    self.store, self.session, path, format, include_examples, include_schemas, query, limit
                ),
            ),
            "gateway",
        )

    def tool_exec(
        self, op: Any, args: Any = None, idempotency_key: Any = None, dry_run: Any = False, *, dialect: str = "gateway"
    ) -> Json:
        """Validate and run one operation: ``{op, ok, result, meta}`` or ``{op, ok: false, error, meta}``.

        ``dialect`` names the protocol its next_action and hints are written in (the MCP server of the
        namespaced dialect passes ``"namespaced"`` for the described tools it runs).
        """
        return self._answer(self.session.tool_exec(op, args, idempotency_key, dry_run), dialect)

    def tool_batch(self, ops: Any, mode: Any = "sequential") -> Json:
        """Run several items: ``{op, args}``, 001's ``{type: "exec", op, args}`` and ``{type: "help", path}``.

        ``sequential`` runs them in order and stops at the first failure (the rest answer
        ``status: "not_run"``); ``parallel`` runs all, at most ``MAX_BATCH_WORKERS`` at a time.
        """

        def help_item(item: Json) -> Json:
            return self.session.run(
                "help",
                item.get("path"),
                lambda _t: gateway.tool_help(
                    self.store,
                    self.session,
                    item.get("path", "root"),
                    item.get("format", "short"),
                    item.get("include_examples", True),
                    item.get("include_schemas", False),
                ),
            )

        return self._answer(self.session.tool_batch(ops, mode, help_item), "gateway")

    # == namespaced dialect ========================================================================
    def tool_list(self, namespace: Any = None, tags: Any = None, capability: Any = None) -> Json:
        """Canonical names and aliases (no schemas) of every tool, or of one namespace/group, tag set or capability."""
        return self._answer(
            self.session.run(
                "tool_list",
                {"namespace": namespace, "tags": tags, "capability": capability},
                lambda _t: namespaced.tool_list(self.store, self.session, namespace, tags, capability),
            ),
            "namespaced",
        )

    def tool_describe(self, name: Any) -> Json:
        """The full spec of a tool by canonical name or alias; a skill's SKILL.md body (level 2)."""
        return self._answer(
            self.session.run("describe", name, lambda _t: spec_dialect.describe(self.store, self.session, name)),
            "namespaced",
        )

    def find_tool(self, purpose: Any, limit: Any = 5) -> Json:
        """Tools ranked for a purpose in plain words (delegated to the search module)."""
        return self._answer(
            self.session.run(
                "find_tool", purpose, lambda _t: namespaced.find_tool(self.store, self.session, purpose, limit)
            ),
            "namespaced",
        )

    def discover(self, domain: Any, tool: Any = None) -> Json:
        """Seed 002's ``discover_<domain>_tools``: a domain's tools (names, one line), or one tool's details.

        ``domain`` is a namespace (``file``); ``tool`` a tool of it by name or alias (``read_file``), whose
        description then carries 002's ``parameters`` and ``usage``. The MCP server and the namespaced export
        offer one such tool per domain the catalogue declares (:meth:`discovery_domains`).
        """
        return self._answer(
            self.session.run(
                "discover",
                {"domain": domain, "tool": tool},
                lambda _t: namespaced.discover(
                    self.store,
                    self.session,
                    domain,
                    tool,
                    lambda tool_id: spec_dialect.describe(self.store, self.session, tool_id),
                ),
            ),
            "namespaced",
        )

    def discovery_domains(self) -> builtins.list[str]:
        """The domains the catalogue declares per-domain discovery tools for (manifest ``discovery.domains``).

        Only those the session may see (``allowed_namespaces``); empty when the catalogue declares none.
        """
        allowed = self.session.allowed_namespaces
        return [d for d in manifest_discovery(self.manifest)[1] if allowed is None or d in allowed]

    # == direct dialect (no discovery) =============================================================
    def direct_tools(self) -> Json:
        """Seed 001's legacy mode: ``{ok, count, tools}``, every tool the session may see with its schema.

        Each is ``{tool_id, alias, summary, description?, args_schema, kind?, annotations?}``; the policy's
        hidden namespaces and, read-only, its write tools are left out. Run one with
        ``tool_exec(alias, args, dialect="direct")``: the same validation, policy and envelopes as any call.
        """
        return self._answer(
            self.session.run("direct_tools", None, lambda _t: direct.direct_tools(self.store, self.session)),
            "direct",
        )

    # == always-loaded tools =======================================================================
    def always_loaded(self) -> builtins.list[Json]:
        """The tools the catalogue marks ``always_load: true``: lean specs a host exposes beside the discovery tools.

        Each is ``{tool_id, alias, summary, description?, args_schema, kind?, annotations?}`` (manifest
        key ``always_load``, sorted by tool_id); a spec that cannot be read is left out (and logged), and so
        is a tool the session's policy hides (``allowed_namespaces``, ``read_only``). What a server lists is
        :meth:`pinned_tools`.
        """
        return protocol.always_loaded(self.store, self.session.allows if self.session.filters else None)

    def _runnable(self, tool_id: str) -> bool:
        """Whether this session can run ``tool_id`` (a handler of a known type the host allows)."""
        try:
            return shared.runnable(self.session, tool_id, self.store.spec(tool_id)[1])
        except ReaderError:
            return False

    @property
    def pins_tools(self) -> bool:
        """Whether a server lists the pinned tools beside the discovery tools.

        ``open(pinned=)``, else the catalogue's ``discovery.pinned`` setting (toolcat.yaml), else no (seed 001:
        the model sees only the discovery tools).
        """
        if self.session.pinned is not None:
            return self.session.pinned
        return manifest_discovery(self.manifest)[0]

    def pinned_tools(self) -> builtins.list[Json]:
        """The tools to list beside the discovery tools, when :attr:`pins_tools`, that this session can run.

        Those of :meth:`always_loaded` this session can run (no handler, a handler type not installed or one the host does not allow: left out).
        """
        if not self.pins_tools:
            return []
        return [row for row in self.always_loaded() if self._runnable(row["tool_id"])]

    # == skills and prompts =======================================================================
    def read_skill_resource(self, tool_id: Any, path: Any) -> Json:
        """One bundled file of a skill (level 3), read only when asked for."""
        return self._answer(
            self.session.run(
                "read_resource",
                {"tool_id": tool_id, "path": path},
                lambda _t: spec_dialect.read_skill_resource(self.store, self.session, tool_id, path),
            ),
            "gateway",
        )

    def prompt_section(self, task: str, budget_tokens: int = 1500, detail: str = "short") -> Json:
        """A prompt section for ``task`` within a token budget (written by the prompts stage)."""

        def run(_trace: str) -> Json:
            from .prompting import prompt_section  # noqa: PLC0415 - only for prompts

            result = prompt_section(self, task=task, budget_tokens=budget_tokens, detail=detail)
            return result if isinstance(result, dict) else {"ok": True, "section": result}

        return self.session.run("prompt_section", task, run)

    def prompt(self, name: Any = None) -> Json:
        """A named prompt section (``system.gateway``, ``tools.short`` ...) as text; without a name, the list."""

        def run(_trace: str) -> Json:
            from .prompting import named_section  # noqa: PLC0415 - only for prompts

            return named_section(self.store, name)

        return self.session.run("prompt", name, run)
