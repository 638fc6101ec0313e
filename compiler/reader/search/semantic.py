"""The semantic tier of search: the build's document vectors and the query embedded by the same model.

Optional. It is used when the build has vectors (``manifest["vectors"]``, written by
:mod:`toolcat.build.contributors.vectors`), numpy and the model's runtime are installed, the embedder the build
recorded is one this host loads, and its weights have the build's sha256. Otherwise :attr:`SemanticTier.reason`
says why, and search stays exactly lexical. Setting ``TOOLCAT_SEMANTIC=0`` turns the tier off.

Which models load (a catalogue is data, and may come from any host): the built-in specs, whose weights come from
installed packages (:data:`toolcat.format.embedding.BUILTIN_SPECS`), and the specs the host allows, with
:func:`allow_embedders` or ``$TOOLCAT_EMBEDDERS`` (comma-separated). A catalogue naming any other model (a
folder path, a hub name) is answered lexically, and the reason names the setting. The weights' hash is checked
from the files before anything is loaded (:func:`toolcat.format.embedding.model_identity`).

A build whose vectors cannot be read (a malformed meta or shard, a wrong size) is answered lexically too: the
tier turns itself off with the reason (:meth:`SemanticTier.fail`), and no search answers INTERNAL for it.
Stdlib-only at import: numpy and the model are imported when the tier is first used, and each model is loaded once
per process (:func:`toolcat.format.embedding.load_embedder`).
"""

from __future__ import annotations

import base64
import binascii
import functools
import importlib.util
import logging
import re
from collections.abc import Callable
from typing import Any

from ...format import settings
from ...format.envelope import ReaderError
from ...format.refs import page_ref
from ...format.vector_format import (
    PAIR_ALPHABET,
    PAIR_LEVELS,
    PAIR_LOW,
    PARTITIONED_FORMAT,
    PROVEN_ROW_FORMATS,
    PROVEN_TABLE_FORMATS,
    READ_PARTITIONED_FORMATS,
    RESIDUAL_ALPHABET,
    RESIDUAL_ZERO,
    proven_cluster,
    proven_group,
    proven_row,
    row_folder,
)
from . import hybrid

log = logging.getLogger(__name__)
FetchJSON = Callable[[dict[str, Any]], Any]
Prefetch = Callable[[list[dict[str, Any]]], None]
_QUERY_CACHE_SIZE = 256
_ALLOWED: set[str] = set()
#: The most ancestors a tool row may list (node paths are at most 32 names deep, toolcat.reader.checks).
MAX_ANCESTORS = 32
#: What a broken vector file raises while it is read or decoded (base64, numpy shapes, missing keys).
VECTOR_ERRORS = (KeyError, TypeError, ValueError, IndexError, AttributeError, binascii.Error)
#: The clusters a query of a partitioned build reads; None reads what the build's meta says (its ``nprobe``).
NPROBE: int | None = None
#: How much a cluster's spread (``sqrt(1 - |centroid|^2)``, its centroid being the mean of unit rows) adds to its
#: centroid's cosine when clusters are ranked for a probe: a wide cluster's best tool lies farther from its centroid
#: than a tight one's, so by the centroid alone wide clusters (a catalogue's varied tools among many alike) are
#: probed too rarely.
SPREAD = 1.0
#: The tools a query's probed clusters hold at least; None reads the build's meta (its ``probe_rows``). A
#: measurement switch (benches); :data:`NPROBE`, when set, wins.
PROBE_ROWS: int | None = None
#: Above this many tools :meth:`SemanticTier.head_guess` is the sure head alone: at 100,000 tools the candidates that
#: could reach it are 10-60 a query, and their doc shards cost more bytes (63 -> 45 KB a cold query) than the round
#: trip a head doc it missed costs (3 -> 4, within the 6 allowed there); at 10,000 they are few and the round matters
#: (docs/search.md, "Vectors a CDN can serve").
SURE_HEAD_ABOVE = 50_000
#: The most single rows a reader of a partitioned build keeps (a query reads at most hybrid.CANDIDATES of them).
MAX_ROWS = 4096
#: Where query vectors come from instead of the build's model, when set: ``fn(query) -> unit vector`` in the
#: model's space (the static query encoder of :mod:`toolcat.reader.search.static_query`; a measurement switch the
#: tiers bench sets, off by default).
QUERY_ENCODER: Callable[[str], Any] | None = None


def allow_embedders(*specs: str) -> None:
    """Let this process's readers load the models ``specs`` name (beyond the built-in ones), e.g. ``onnx:/models/bge``."""
    _ALLOWED.update(spec.strip() for spec in specs if spec.strip())


def host_allows(spec: str) -> bool:
    """Whether a reader here may load the model ``spec`` names: a built-in, or one the host allowed."""
    from ...engines.embedding import BUILTIN_SPECS  # noqa: PLC0415 - stdlib module; imported with the tier

    env = {part.strip() for part in settings.get("TOOLCAT_EMBEDDERS").split(",") if part.strip()}
    return spec.strip().lower() in BUILTIN_SPECS or spec.strip() in _ALLOWED | env


def wanted() -> bool:
    """Whether the tier may be used at all here (not turned off, numpy installed), before reading anything."""
    return not settings.flag_off("TOOLCAT_SEMANTIC") and importlib.util.find_spec("numpy") is not None


class SemanticTier:
    """Cosine similarity between a query and every document of a part (tools or nodes), from the build's vectors."""

    def __init__(self, manifest: dict[str, Any], fetch_json: FetchJSON, prefetch: Prefetch | None = None) -> None:
        self._manifest = manifest
        self._fetch_json = fetch_json
        self._prefetch = prefetch
        self._checked = False
        self.reason: str | None = None
        self.model: str | None = None
        self.bytes_read = 0
        self._embedder: Any = None
        self._meta: dict[str, Any] = {}
        self._dtype = "int8"  # the build's vector encoding (toolcat-vectors-1 builds name none: int8)
        self._matrices: dict[str, Any] = {}
        self._queries: dict[str, Any] = {}
        self._ancestors: list[list[int]] | None = None
        #: A partitioned build's (centroids, nprobe, its row table), read from the meta (:meth:`_check_partition`).
        self._partition: tuple[Any, int, dict[str, Any]] | None = None
        #: A partitioned build's cluster table (``tools.clusters``: its cluster shards' folders, pages, counts).
        self._cluster_table: dict[str, Any] = {}
        #: The cluster table's pages read so far (page number -> page).
        self._cluster_pages: dict[int, dict[str, Any]] = {}
        #: The clusters whose shards :meth:`refs` named by path (fetched with their pages; named once, not again).
        self._cluster_named: set[int] = set()
        #: A partitioned build's centroids' int4 codes and its prediction's denominator (:func:`residual_rows`).
        self._residual: tuple[Any, int] = (None, 1)
        #: A partitioned build's cluster sizes and ``probe_rows`` (None: probe ``nprobe`` clusters).
        self._probe_rows: tuple[list[int], int | None] = ([], None)
        #: The clusters read so far: cluster -> (doc ids, float32 rows, ancestor rows, (node ids, node rows)).
        self._clusters: dict[int, tuple[Any, Any, list[list[int]], tuple[Any, Any]]] = {}
        #: The last query's probe (:meth:`probe`): ((query, NPROBE, PROBE_ROWS, SPREAD), its clusters).
        self._probed: tuple[tuple[Any, ...], list[int]] = ((), [])
        #: Each cluster read's :func:`distinct_paths` of its :func:`ancestor_index` (made once a cluster).
        self._cluster_paths: dict[int, tuple[Any, Any]] = {}
        #: Each cluster read's doc ids as a set (:meth:`_cluster_ids`).
        self._cluster_sets: dict[int, frozenset[int]] = {}
        #: The last query's probed products (:meth:`_probed_cosines`): (query, clusters), its vector, tools', nodes'.
        self._probed_products: tuple[Any, Any, list[Any], list[Any]] = ((), None, [], [])
        #: The query whose lexical candidates' rows were read last, and those candidates (outside its probed clusters).
        self._scored: tuple[str, set[int]] = ("", set())
        #: The row table's directory (the page listing its pages), once read.
        self._directory: dict[str, Any] | None = None
        #: The row table's groups of pages read so far (group number -> the group: a page listing pages).
        self._groups: dict[int, dict[str, Any]] = {}
        #: The node rows a group of the row table holds (``toolcat-vectors-9``): group number -> (node ids, rows).
        self._group_nodes: dict[int, tuple[Any, Any]] = {}
        #: The row table's pages read so far (page number -> page).
        self._pages: dict[int, dict[str, Any]] = {}
        #: Single rows read from a partitioned build's row table: doc id -> (float32 row, ancestors, (node ids, rows)).
        self._rows: dict[int, tuple[Any, list[int], tuple[Any, Any]]] = {}
        #: The row files read that hold their tool's index document (``toolcat-vectors-7``): doc id -> the file's ref.
        self._doc_files: dict[int, dict[str, Any]] = {}

    def available(self) -> bool:
        """Whether the tier can answer; when not, :attr:`reason` says why (checked once)."""
        if not self._checked:
            self._checked = True
            self.reason = self._check()
            if self.reason is not None and isinstance(self._manifest.get("vectors"), dict):
                log.info("search: lexical tier only: %s", self.reason)
        return self.reason is None

    def _check(self) -> str | None:
        if settings.flag_off("TOOLCAT_SEMANTIC"):
            return "turned off (TOOLCAT_SEMANTIC=0)"
        ref = self._manifest.get("vectors")
        if not isinstance(ref, dict):
            return "this build has no vectors (build with --embedder to add the semantic tier)"
        from ...engines.embedding import DEFAULT_INSTALL  # noqa: PLC0415 - stdlib module; imported with the tier

        if importlib.util.find_spec("numpy") is None:
            return f"numpy is not installed, so the build's vectors are not used (to use them: {DEFAULT_INSTALL})"
        try:
            meta = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            return _old_partition(meta) or self._check_meta(meta)
        except ReaderError as err:
            return f"the build's vectors meta could not be read ({err.code}: {err.message})"
        except VECTOR_ERRORS as err:
            return f"the build's vectors meta is malformed ({type(err).__name__}: {str(err)[:80]})"

    def _check_meta(self, meta: dict[str, Any]) -> str | None:
        """The reason the tier cannot use this vectors meta, or None once its embedder is loaded."""
        from ...engines.embedding import ENCODINGS, EmbedderError, load_embedder, model_identity  # noqa: PLC0415 - lazily

        dtype = str((meta.get("encoding") or {}).get("dtype", "int8"))
        if dtype not in ENCODINGS:
            return f"the build's vectors are {dtype}, which this reader does not know (upgrade toolcat)"
        model = meta.get("model") or {}
        spec = str(model.get("spec", ""))
        if not host_allows(spec):
            return (
                f"the build names the embedder {spec!r}, which this host has not allowed (a reader loads only the"
                " built-in models, and those the host lists in TOOLCAT_EMBEDDERS or toolcat.reader.search.semantic"
                ".allow_embedders)"
            )
        for part in ("tools", "nodes"):
            if part == "tools" and "partition" in meta[part]:
                continue
            for shard in meta[part]["shards"]:
                int(shard["first"]), int(shard["count"]), dict(shard["ref"])
        partition = self._check_partition(meta, dtype) if "partition" in meta["tools"] else None
        try:
            _, sha256 = model_identity(spec)  # the weights' hash from their files, before anything is loaded
            if sha256 != model.get("weights_sha256"):
                return (
                    f"the embedder {spec!r} here has other weights (sha256 {sha256[:12]}) than the"
                    f" build's ({str(model.get('weights_sha256'))[:12]})"
                )
            embedder = load_embedder(spec)
        except (EmbedderError, OSError, ValueError) as err:
            return f"the build's embedder {spec!r} does not load here: {err}"
        if int(model.get("dim", -1)) != embedder.dim:
            return f"the build's vectors have {model.get('dim')} dimensions, the embedder {embedder.dim}"
        if partition is not None and partition[0].shape[1] != embedder.dim:
            return f"the build's cluster centroids have {partition[0].shape[1]} dimensions, the embedder {embedder.dim}"
        self._embedder, self._meta, self._dtype, self.model = embedder, meta, dtype, spec
        self._partition = partition
        self._cluster_table = dict(meta["tools"]["clusters"]) if partition is not None else {}
        self._cluster_table["proven"] = meta.get("format") in PROVEN_TABLE_FORMATS
        self._residual = residual_settings(meta) if partition is not None else (None, 1)
        self._probe_rows = probe_settings(meta) if partition is not None else ([], None)
        return None

    @staticmethod
    def _check_partition(meta: dict[str, Any], dtype: str) -> tuple[Any, int, dict[str, Any]]:
        """(centroids, nprobe, row table) of a partitioned tools part.

        Raises ValueError (or another of :data:`VECTOR_ERRORS`) when the partition is not what a build writes.
        """
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        del dtype
        part, dim = meta["tools"], int(meta["model"]["dim"])
        info = part["partition"]
        k, n_docs, nprobe = int(info["clusters"]), int(part["n_docs"]), int(info["nprobe"])
        if not 1 <= k <= n_docs or not 1 <= nprobe <= k:
            raise ValueError(f"partition of {k} clusters (nprobe {nprobe}) over {n_docs} tools")
        cents = info["centroids"]
        if cents["dtype"] != "int4":
            raise ValueError(f"centroids of dtype {cents['dtype']!r}, not int4")
        codes = centroid_codes(cents["codes"], k, dim)
        scale = np.asarray([float(s) for s in cents["scale"]], dtype=np.float32)[:, None]
        if len(scale) != k:
            raise ValueError(f"{len(scale)} centroid scales for {k} centroids")
        # as dequantize computes an int4 row: the code as float32 times float32(scale) / 7, the same float32 values
        centroids = np.multiply(codes.astype(np.float32), scale / 7.0)
        if centroids.shape != (k, dim):
            raise ValueError(f"{centroids.shape[0]} centroids of {centroids.shape[1]} values, not {k} of {dim}")
        tables = meta.get("format") in PROVEN_TABLE_FORMATS  # groups and cluster shards carry their paths (-11)
        check_cluster_table(part["clusters"], k, n_docs, proven=tables)
        table = dict(part["rows"])
        files, per_page, per_group = int(table["files"]), int(table["per_page"]), int(table["per_group"])
        proven = meta.get("format") in PROVEN_ROW_FORMATS  # no row pages: each row file carries its path (-10)
        sizes = (int(table["max_bytes"]), 0 if proven else int(table["page_max_bytes"]), int(table["group_max_bytes"]))
        if files != n_docs or per_page < 1 or per_group < 1 or min(sizes) < 0:
            raise ValueError(f"a row table of {files} files in pages of {per_page}, for {n_docs} tools")
        str(table["folder"]), str(table["prefix"]), str(table["group_folder"])
        table["proven"], table["proven_groups"] = proven, tables
        if tables:  # no directory: each group's root in the meta
            groups, per_root = -(-files // (per_page * per_group)), int(table["groups_per_root"])
            if per_root < 1 or len(table["group_roots"]) != -(-groups // per_root):
                raise ValueError(f"a row table of {groups} groups, {per_root} a root, with {len(table['group_roots'])}")
            [str(root) for root in table["group_roots"]]
        else:
            str(dict(table["pages"])["sha256"])
        buckets, per_bucket = [str(name) for name in table["buckets"]], int(table["per_bucket"])
        if (
            per_bucket < 1
            or per_bucket % (per_page * per_group)
            or len(buckets) != -(-files // per_bucket)
            or not all(re.fullmatch(r"[0-9a-f]{16}", name) for name in buckets)
        ):
            raise ValueError(
                f"a row table of {files} files in {len(buckets)} buckets of {per_bucket}, pages of {per_page}"
            )
        return centroids, nprobe, table

    @property
    def partitioned(self) -> bool:
        """Whether the build's tool vectors are partitioned into clusters (a query reads a few)."""
        return self._partition is not None

    @property
    def kind(self) -> str:
        """The build's embedder kind (``onnx``, ``sentence-transformers``, ``model2vec``), which picks the fusion constants."""
        return str(self._meta.get("model", {}).get("kind"))

    @property
    def weights_sha256(self) -> str | None:
        """The sha256 of the weights the build's vectors were made with (checked equal to this reader's model's)."""
        sha = self._meta.get("model", {}).get("weights_sha256")
        return str(sha) if sha else None

    def fail(self, err: BaseException) -> None:
        """Turn the tier off for this reader after its vectors proved unreadable; :attr:`reason` says why."""
        self._checked = True
        self._embedder = None
        self.reason = f"the build's vectors are malformed ({type(err).__name__}: {str(err)[:80]}); answering by words"

    def matrix(self, part: str) -> Any:
        """The part's vectors as a float32 ``(n_docs, dim)`` array (all shards, fetched together once)."""
        if part not in self._matrices:
            from ...engines.embedding import dequantize, stack_rows  # noqa: PLC0415 - numpy, lazily

            shards = self._meta[part]["shards"]
            refs = [shard["ref"] for shard in shards]
            if self._prefetch is not None and len(refs) > 1:
                self._prefetch(refs)
            dim = int(self._meta["model"]["dim"])
            blocks = []
            ancestors: list[list[int]] | None = [] if part == "tools" else None
            for shard, ref in zip(shards, refs, strict=True):
                data = self._fetch_json(ref)
                if ancestors is not None and isinstance(data.get("ancestors"), list):
                    # a node path is at most MAX_ANCESTORS deep: a longer row is a hostile file, cut (memory)
                    ancestors += [[int(node) for node in row[:MAX_ANCESTORS]] for row in data["ancestors"]]
                else:
                    ancestors = None  # a build without them (or a node part): no hierarchy term
                self.bytes_read += int(ref.get("bytes", 0))
                block = dequantize(base64.b64decode(data["q"], validate=True), data["scale"], dim, self._dtype)
                expected = (int(shard["count"]), dim)
                if block.shape != expected or (int(data["first"]), int(data["count"])) != (
                    int(shard["first"]),
                    expected[0],
                ):
                    raise ValueError(
                        f"vector shard {ref.get('path')} holds {block.shape[0]} rows, not {shard['count']}"
                    )
                blocks.append(block)
            matrix = stack_rows(blocks, dim)
            if len(matrix) != int(self._meta[part]["n_docs"]):
                raise ValueError(f"the {part} vectors hold {len(matrix)} rows, not {self._meta[part]['n_docs']}")
            self._matrices[part] = matrix
            if ancestors is not None and len(ancestors) == len(matrix):
                self._ancestors = ancestors
        return self._matrices[part]

    def refs(self, part: str = "tools", query: str | None = None) -> list[dict[str, Any]]:
        """The vector shard refs a search of ``part`` for ``query`` still needs (to fetch them with the term shards).

        Every shard of an unpartitioned build; of a partitioned one, the node shards and the shards of the
        clusters the query probes (:meth:`probe`; the query is embedded here, before any shard arrives).
        """
        out = []
        if "nodes" not in self._matrices and (part != "tools" or self._partition is None):
            out += [shard["ref"] for shard in self._meta.get("nodes", {}).get("shards", [])]
        if part != "tools":
            return out
        if self._partition is None:
            shards = self._meta.get("tools", {}).get("shards", [])
            return out + ([shard["ref"] for shard in shards] if "tools" not in self._matrices else [])
        if query is None:
            return out
        return out + self._cluster_refs([c for c in self.probe(query) if c not in self._clusters])

    def _cluster_refs(self, clusters: list[int]) -> list[dict[str, Any]]:
        """The files to fetch for ``clusters``' shards: their cluster table pages not read yet, and the shards.

        The pages' refs are in the meta; a shard is named by path while its page is not read yet (checked against it
        when read, :meth:`_cluster`), all in one round. A shard named by path once is not named again (a query names
        its clusters in each of its rounds: a second fetch by path would fetch it twice); if its prefetch did not
        happen, :meth:`_cluster` fetches it by its page's ref.
        """
        table = self._cluster_table
        if table["proven"]:  # toolcat-vectors-11: no pages; a shard is checked by its path to its page's root
            named = [c for c in clusters if c not in self._cluster_named]
            self._cluster_named.update(named)
            return [{"path": proven_cluster(table, c)["path"], "max_bytes": table["max_bytes"]} for c in named]
        per_page = int(table["per_page"])
        pages = sorted({c // per_page for c in clusters if c // per_page not in self._cluster_pages})
        out: list[dict[str, Any]] = [table["pages"][number] for number in pages]
        for cluster in clusters:
            page = self._cluster_pages.get(cluster // per_page)
            if page is not None:
                out.append(page_ref(page, cluster - int(page["first"])))
            elif cluster not in self._cluster_named:
                self._cluster_named.add(cluster)
                folder = table["folders"][cluster // per_page]
                out.append({"path": f"{folder}/{table['prefix']}{cluster}.json", "max_bytes": table["max_bytes"]})
        return out

    def _cluster_page(self, number: int) -> dict[str, Any]:
        """Page ``number`` of the cluster table (checked: it lists its cluster shards in its folder of the table's)."""
        if number not in self._cluster_pages:
            table = self._cluster_table
            ref = table["pages"][number]
            page = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            per_page, files = int(table["per_page"]), int(table["files"])
            if not is_page(page, table["folders"][number], table["prefix"], number, per_page, files):
                raise ValueError(f"cluster page {ref.get('path')} is not page {number} of the cluster table")
            self._cluster_pages[number] = page
        return self._cluster_pages[number]

    def probe(self, query: str) -> list[int]:
        """The clusters of a partitioned build a query reads (in cluster order): the nearest (:meth:`_nearness`).

        As many as hold the meta's ``probe_rows`` tools (a build that names none: its ``nprobe``); :data:`NPROBE`,
        when set, reads that many instead. Worked out once per query and settings: a query asks four times (its
        prefetch, its rows, the head guess and its scores).
        """
        if self._partition is None:
            raise ValueError("this build's tool vectors are not partitioned")
        key = (query, NPROBE, PROBE_ROWS, SPREAD)
        if self._probed[0] != key:
            self._probed = (key, self._probe(query, self._partition[1]))
        return list(self._probed[1])

    def _probe(self, query: str, nprobe: int) -> list[int]:
        """:meth:`probe`'s work (``nprobe``: the build's, for a meta without ``probe_rows``)."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        sims = self._nearness(query)
        order = [int(c) for c in np.lexsort((np.arange(len(sims)), -sims))]
        counts, rows = self._probe_rows
        rows = PROBE_ROWS if PROBE_ROWS is not None else rows
        if NPROBE is None and rows is not None:  # the nearest clusters until they hold probe_rows tools
            held = 0
            for count, cluster in enumerate(order, 1):
                held += counts[cluster]
                if held >= rows:
                    return sorted(order[:count])
            return sorted(order)
        return sorted(order[: min(len(sims), NPROBE if NPROBE is not None else nprobe)])

    def _nearness(self, query: str) -> Any:
        """How near each cluster of a partitioned build is to the query: its centroid's cosine plus its spread."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        if self._partition is None:
            raise ValueError("this build's tool vectors are not partitioned")
        key = "unit_centroids"
        if key not in self._matrices:
            centroids = self._partition[0]
            lengths = np.linalg.norm(centroids, axis=1, keepdims=True)
            self._matrices[key] = centroids / np.where(lengths > 0, lengths, 1.0)
            # a centroid is the mean of its members' unit rows: the shorter it is, the wider they spread
            self._matrices["spread"] = np.sqrt(np.clip(1.0 - lengths[:, 0] ** 2, 0.0, 1.0))
        sims = np.einsum("ij,j->i", self._matrices[key], self.query_vector(query))
        if SPREAD:
            sims = sims + SPREAD * self._matrices["spread"]
        return sims

    def pool(self, part: str, query: str, cosines: Any) -> Any:
        """The cosines the semantic top is drawn from: None for ``cosines`` themselves.

        In a partitioned build: ``cosines`` with every tool outside the probed clusters (whose cosine is its centroid's estimate) at -2.
        """
        if part != "tools" or self._partition is None:
            return None
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        out = np.full(len(cosines), -2.0, dtype=np.float32)
        for cluster in self.probe(query):
            ids = self._cluster(cluster)[0]
            out[ids] = cosines[ids]
        return out

    def _residuals(self, coded: dict[str, Any], clusters: list[int]) -> Any:
        """float32 rows from a shard's ``scale``, ``k`` and ``codes``, one row a cluster in ``clusters`` (its reference)."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        centroid_codes, denominator = self._residual
        if self._partition is None or centroid_codes is None:
            raise ValueError("this build's tool vectors are not partitioned")
        refs = np.asarray(clusters, dtype=np.int64)
        if len(refs) and (int(refs.min()) < 0 or int(refs.max()) >= len(centroid_codes)):
            raise ValueError(f"a residual refers to a cluster outside 0..{len(centroid_codes) - 1}")
        return residual_rows(
            coded["codes"], coded["k"], coded["scale"], centroid_codes[refs], denominator, coded.get("wide", ())
        )

    def _node_rows(self, nodes: dict[str, Any]) -> tuple[Any, Any]:
        """(node ids, float32 node rows) of a shard's ``nodes`` entry (ids, each one's centroid, their coded rows)."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        node_ids = np.asarray([int(i) for i in nodes["ids"]], dtype=np.int64)
        return node_ids, self._residuals(nodes, _node_clusters(nodes))

    def _cluster(self, cluster: int) -> tuple[Any, Any, list[list[int]], tuple[Any, Any]]:
        """(doc ids, float32 rows, ancestor rows, (node ids, node rows)) of one cluster of a partitioned build."""
        if cluster not in self._clusters:
            import numpy as np  # noqa: PLC0415 - numpy, lazily

            if self._partition is None:
                raise ValueError("this build's tool vectors are not partitioned")
            ref = self._cluster_ref(cluster)
            data = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            dim, count = int(self._meta["model"]["dim"]), int(self._cluster_table["counts"][cluster])
            ids = np.asarray([int(i) for i in data["ids"]], dtype=np.int64)
            centroid_codes, denominator = self._residual
            block = tree_rows(data, centroid_codes[cluster], denominator)
            ancestors = [[int(node) for node in row[:MAX_ANCESTORS]] for row in data.get("ancestors") or []]
            node_ids, node_block = self._node_rows(data["nodes"])
            n_nodes = int(self._meta["nodes"]["n_docs"])
            needed = {node for row in ancestors for node in row}
            if (
                node_block.shape != (len(node_ids), dim)
                or (len(node_ids) and (int(node_ids.min()) < 0 or int(node_ids.max()) >= n_nodes))
                or not needed <= set(node_ids.tolist())
            ):
                raise ValueError(f"vector shard {ref.get('path')} lacks its tools' ancestor node rows")
            n_docs = int(self._meta["tools"]["n_docs"])
            if (
                int(data["cluster"]) != cluster
                or block.shape != (count, dim)
                or len(ids) != count
                or (ancestors and len(ancestors) != count)
                or (count and (int(ids.min()) < 0 or int(ids.max()) >= n_docs))
                or len(np.unique(ids)) != count
            ):
                raise ValueError(f"vector shard {ref.get('path')} is not cluster {cluster} of the partition")
            self._clusters[cluster] = (ids, block, ancestors, (node_ids, node_block))
        return self._clusters[cluster]

    def _cluster_ref(self, cluster: int) -> dict[str, Any]:
        """The ref of ``cluster``'s shard: a proven one (``toolcat-vectors-11``), or the one its page lists."""
        table = self._cluster_table
        if table["proven"]:
            return proven_cluster(table, cluster)
        page = self._cluster_page(cluster // int(table["per_page"]))
        return page_ref(page, cluster - int(page["first"]))

    def _cluster_ids(self, cluster: int) -> frozenset[int]:
        """The doc ids of one cluster as a set (made once a cluster)."""
        ids = self._cluster_sets.get(cluster)
        if ids is None:
            ids = self._cluster_sets[cluster] = frozenset(self._cluster(cluster)[0].tolist())
        return ids

    def row_refs(self, query: str, docs: list[int]) -> list[dict[str, Any]]:
        """The files to fetch for the rows of ``docs`` (a query's lexical candidates) outside the probed clusters.

        A partitioned build only (else none). Each row is a file of the build's row table, fetched by path together
        with its page (when that page was not read yet) and checked against the page's sha256 before use
        (:meth:`read_rows`); it then gets its exact cosine (:meth:`_partitioned_scores`). A doc of a probed cluster
        needs none.
        """
        if self._partition is None:
            return []
        table = self._partition[2]
        per_page, per_group = int(table["per_page"]), int(table["per_group"])
        wanted = self._wanted_rows(query, docs)
        directory = self._directory
        proven_groups = table["proven_groups"]  # toolcat-vectors-11: no directory, each group carries its path
        refs: list[dict[str, Any]] = [] if directory is not None or not wanted or proven_groups else [table["pages"]]
        pages = sorted({doc // per_page for doc in wanted if doc // per_page not in self._pages})
        for number in sorted({page // per_group for page in pages if page // per_group not in self._groups}):
            if directory is None:  # by path with the directory (or alone), checked against it (or its path) when read
                refs.append({"path": f"{table['group_folder']}/g{number}.json", "max_bytes": table["group_max_bytes"]})
            else:
                refs.append(page_ref(directory, number))
        if table["proven"]:  # toolcat-vectors-10: no page files; a row file is checked by its path to its page's root
            prefix = table["prefix"]
            rows = (
                {"path": f"{row_folder(table, d)}/{prefix}{d}.json", "max_bytes": table["max_bytes"]} for d in wanted
            )
            return [*refs, *rows]
        return refs + self._listed_row_refs(table, pages, wanted)

    def _wanted_rows(self, query: str, docs: list[int]) -> list[int]:
        """The docs among ``docs`` outside the query's probed clusters whose rows are not held yet (noted for scoring)."""
        n_docs = int(self._meta["tools"]["n_docs"])
        probed = [self._cluster_ids(c) for c in self.probe(query)]
        needed = {int(d) for d in docs if 0 <= int(d) < n_docs}
        needed = {d for d in needed if not any(d in ids for ids in probed)}
        self._scored = (query, needed)
        wanted = sorted(doc for doc in needed if doc not in self._rows)  # not set(self._rows): up to 4,096 keys
        if len(self._rows) + len(wanted) > MAX_ROWS:
            self._rows = {doc: self._rows[doc] for doc in needed if doc in self._rows}
        return wanted

    def _listed_row_refs(self, table: dict[str, Any], pages: list[int], wanted: list[int]) -> list[dict[str, Any]]:
        """A ``toolcat-vectors-9`` row table's page and row file refs (pages list their files' sha256)."""
        per_page, per_group = int(table["per_page"]), int(table["per_group"])
        refs: list[dict[str, Any]] = []
        for number in pages:
            group = self._groups.get(number // per_group)
            if group is None:  # fetched by path with its group, checked against it when read
                path = f"{row_folder(table, number * per_page)}/p{number}.json"
                refs.append({"path": path, "max_bytes": table["page_max_bytes"]})
            else:
                refs.append(page_ref(group, number - int(group["first"])))
        for doc in wanted:
            page = self._pages.get(doc // per_page)
            if page is None:
                path = f"{row_folder(table, doc)}/{table['prefix']}{doc}.json"
                refs.append({"path": path, "max_bytes": table["max_bytes"]})
            else:
                refs.append(page_ref(page, doc - int(page["first"])))
        return refs

    def read_rows(self, query: str) -> None:
        """Read the rows :meth:`row_refs` named for ``query`` (fetched by then, or fetched one by one here)."""
        if self._partition is None or self._scored[0] != query:
            return
        docs = sorted(doc for doc in self._scored[1] if doc not in self._rows)
        files = [self._row_file(doc) for doc in docs]
        # every row and its node rows decoded in one residual_rows call (two a row cost ~40 us: numpy's per-call cost);
        # a toolcat-vectors-9 row file holds no node rows: its group does (decoded once, :meth:`_nodes_of_group`)
        parts = [(part, clusters) for _, data in files for part, clusters in _row_parts(data)]
        blocks = iter(self._residuals_of(parts))
        for doc, (ref, data) in zip(docs, files, strict=True):
            row = next(blocks)
            nodes = (self._node_ids(data["nodes"]), next(blocks)) if "nodes" in data else self._nodes_of_group(doc)
            self._rows[doc] = self._row(doc, ref, data, row, nodes)
            if "docs" in data:
                records = data["docs"]
                if [int(i) for i in data["ids"]] != [doc] or len(records) != 1 or not isinstance(records[0], dict):
                    raise ValueError(f"row file {ref.get('path')} does not hold tool {doc}'s document")
                if not isinstance(records[0].get("pointer"), dict):
                    raise ValueError(f"row file {ref.get('path')} holds a document without its pointer")
                self._doc_files[doc] = ref

    def carried(self, query: str) -> set[int]:
        """The docs whose row files :meth:`row_refs` named for ``query`` (read or to read), which hold their documents.

        A ``toolcat-vectors-7`` row file holds its tool's index document, so a searcher fetches no doc shard for these
        docs: it reads each one's document from its row file (:meth:`doc_files`) once :meth:`read_rows` read them.
        """
        if self._partition is None or self._scored[0] != query:
            return set()
        return set(self._scored[1])

    def doc_files(self, docs: set[int]) -> dict[int, dict[str, Any]]:
        """The refs of the row files read so far that hold the documents of ``docs`` (doc id -> ref)."""
        return {doc: self._doc_files[doc] for doc in sorted(docs) if doc in self._doc_files}

    def head_guess(
        self,
        query: str,
        lexical: list[tuple[int, float, list[str]]],
        depth: int,
        allowed: Callable[[int], bool] | None,
        params: tuple[float, float, float, float],
        rank: Callable[[Any, int, Any], list[tuple[int, float, list[str]]]] | None = None,
    ) -> list[int]:
        """The docs likely to make the fused top ``depth`` before the lexical candidates' rows are read.

        ``rank(cosines, limit, pool)`` is the fusion that will rank them (the searcher's learned model, when one
        ranks this tier: a guess by another fusion misses its head and costs a round); None: :func:`hybrid.fuse`.

        The fused top ``depth`` with those candidates' cosines unknown (none): a fused score only grows with the
        cosine, so every doc of the true top that has a known cosine is in it, and no doc of the true top scores
        under its last score. Then each candidate of unknown cosine that would reach that score at the best probed
        cosine (its likely ceiling: the probed clusters are the query's nearest). A searcher fetches their doc
        shards in the same round as the rows (:meth:`row_refs`), so an answer costs no round more; a doc it
        missed (a row above every probed cosine) is fetched after. Above :data:`SURE_HEAD_ABOVE` tools it is the
        sure head alone (fewer bytes, a round more when a row lifts a candidate into the head).
        """
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        if self._partition is None:
            return []
        if rank is None:

            def rank(cosines: Any, limit: int, pool: Any) -> list[tuple[int, float, list[str]]]:
                return hybrid.fuse(lexical, cosines, limit, allowed, params, pool)

        known = self._partitioned_scores(query)
        pool = self.pool("tools", query, known)
        sure = rank(known, depth, pool)
        unknown = np.asarray([doc for doc, _, _ in lexical if known[doc] == -2.0], dtype=np.int64)
        if not len(unknown) or int(self._meta["tools"]["n_docs"]) > SURE_HEAD_ABOVE:
            return [doc for doc, _, _ in sure]
        floor = sure[-1][1] if len(sure) >= depth else -1.0
        ceiling = known.copy()
        ceiling[unknown] = float(known.max())
        width = len(lexical) + hybrid.CANDIDATES  # every candidate the fusion scores
        raised = rank(ceiling, width, pool)
        reach = [doc for doc, score, _ in raised if score >= floor and known[doc] == -2.0]
        return list(dict.fromkeys([*(doc for doc, _, _ in sure), *reach]))

    def _read_directory(self) -> dict[str, Any]:
        """The row table's directory: the page that lists its groups (read once)."""
        if self._directory is None:
            if self._partition is None:
                raise ValueError("this build's tool vectors are not partitioned")
            table = self._partition[2]
            ref = table["pages"]
            directory = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            pages = -(-int(table["files"]) // int(table["per_page"]))
            if (
                int(directory["first"]) != 0
                or directory.get("folder") != table["group_folder"]
                or directory.get("prefix") != "g"
                or len(directory["files"]) != -(-pages // int(table["per_group"]))
            ):
                raise ValueError(f"the row table's directory {ref.get('path')} does not list its groups")
            self._directory = directory
        return self._directory

    def _group(self, number: int) -> dict[str, Any]:
        """Group ``number`` of the row table's pages (checked: it lists its pages in the table's page folder)."""
        if number not in self._groups:
            if self._partition is None:
                raise ValueError("this build's tool vectors are not partitioned")
            table = self._partition[2]
            ref = proven_group(table, number) if table["proven_groups"] else page_ref(self._read_directory(), number)
            group = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            per_group, pages = int(table["per_group"]), -(-int(table["files"]) // int(table["per_page"]))
            folder = row_folder(table, number * per_group * int(table["per_page"]))
            if not is_page(group, folder, "p", number, per_group, pages):
                raise ValueError(f"row group {ref.get('path')} is not group {number} of the row table's pages")
            self._groups[number] = group
        return self._groups[number]

    def _page(self, number: int) -> dict[str, Any]:
        """Page ``number`` of the row table (checked: it lists its files in the table's folder, from its first)."""
        if number not in self._pages:
            if self._partition is None:
                raise ValueError("this build's tool vectors are not partitioned")
            table = self._partition[2]
            per_group = int(table["per_group"])
            group = self._group(number // per_group)
            ref = page_ref(group, number - int(group["first"]))
            page = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
            per_page, files = int(table["per_page"]), int(table["files"])
            if not is_page(page, row_folder(table, number * per_page), table["prefix"], number, per_page, files):
                raise ValueError(f"row page {ref.get('path')} is not page {number} of the row table")
            self._pages[number] = page
        return self._pages[number]

    def _row_file(self, doc: int) -> tuple[dict[str, Any], dict[str, Any]]:
        """(ref, parsed file) of tool ``doc``'s file in the row table (its page read first)."""
        if self._partition is None:
            raise ValueError("this build's tool vectors are not partitioned")
        table = self._partition[2]
        if table["proven"]:  # toolcat-vectors-10: its path to its page's root, which its group lists
            ref = proven_row(table, self._group(doc // int(table["per_page"]) // int(table["per_group"])), doc)
            return ref, self._fetch_json(ref)
        page = self._page(doc // int(table["per_page"]))
        ref = page_ref(page, doc - int(page["first"]))
        data = self._fetch_json(ref)
        self.bytes_read += int(ref.get("bytes", 0))
        return ref, data

    def _row(
        self, doc: int, ref: dict[str, Any], data: dict[str, Any], row: Any, nodes: tuple[Any, Any]
    ) -> tuple[Any, list[int], tuple[Any, Any]]:
        """(float32 row, ancestor node rows, (node ids, node rows)) of tool ``doc``, from its row file's ``data``.

        ``row`` is the file's decoded row (:meth:`_residuals_of` of :func:`_row_parts`), ``nodes`` the (node ids, rows)
        its ancestors are taken from: the file's own (``toolcat-vectors-8``) or its group's (``-9``).
        """
        dim, n_nodes = int(self._meta["model"]["dim"]), int(self._meta["nodes"]["n_docs"])
        ancestors = [int(node) for node in (data.get("ancestors") or [[]])[0][:MAX_ANCESTORS]]
        node_ids, node_block = nodes
        if (
            (int(data["first"]), int(data["count"])) != (doc, 1)
            or row.shape != (1, dim)
            or node_block.shape != (len(node_ids), dim)
            or (len(node_ids) and (int(node_ids.min()) < 0 or int(node_ids.max()) >= n_nodes))
            or not set(ancestors) <= set(node_ids.tolist())
        ):
            raise ValueError(f"row file {ref.get('path')} is not tool {doc}'s row with its ancestor nodes")
        own = set(ancestors)
        if len(node_ids) != len(own):  # a group's nodes: keep the row's own ancestors' (as a -8 file holds)
            keep = [i for i, node in enumerate(node_ids.tolist()) if node in own]
            node_ids, node_block = node_ids[keep], node_block[keep]
        return row[0], ancestors, (node_ids, node_block)

    @staticmethod
    def _node_ids(nodes: dict[str, Any]) -> Any:
        """A ``nodes`` entry's node ids as an int array."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        return np.asarray([int(i) for i in nodes["ids"]], dtype=np.int64)

    def _nodes_of_group(self, doc: int) -> tuple[Any, Any]:
        """(node ids, rows) of the ancestor nodes the row table's group of ``doc`` holds (``toolcat-vectors-9``).

        Decoded once a group; a group without ``nodes`` (a row file of a -9 build holds none) makes the table malformed.
        """
        if self._partition is None:
            raise ValueError("this build's tool vectors are not partitioned")
        table = self._partition[2]
        number = doc // int(table["per_page"]) // int(table["per_group"])
        if number not in self._group_nodes:
            group = self._group(number)
            if not isinstance(group.get("nodes"), dict):
                raise ValueError(f"row group {number} holds no node rows, and the row file of tool {doc} none either")
            self._group_nodes[number] = self._node_rows(group["nodes"])
        return self._group_nodes[number]

    def _residuals_of(self, parts: list[tuple[dict[str, Any], list[int]]]) -> list[Any]:
        """:meth:`_residuals` of each ``(coded, clusters)`` part, decoded by one :func:`residual_rows` call.

        Each part is checked as :func:`residual_rows` checks its input (codes a string, one factor, one scale and
        ``ceil(dim / 2)`` characters a row, its ``wide`` places inside its own rows) before they are joined, its wide
        places moved by the rows before it; the rows are the same float32 values, computed row by row.
        """
        if not parts:
            return []
        dim = int(self._meta["model"]["dim"])
        width = -(-dim // 2)
        codes: list[str] = []
        factors: list[Any] = []
        scales: list[Any] = []
        clusters: list[int] = []
        wide: list[list[int]] = []
        for coded, refs in parts:
            text, k, scale = coded["codes"], list(coded["k"]), list(coded["scale"])
            if not isinstance(text, str):
                raise TypeError(f"residual codes are {type(text).__name__}, not a string")
            if len(text) != len(refs) * width or len(k) != len(refs) or len(scale) != len(refs):
                raise ValueError(
                    f"{len(text)} residual codes, {len(k)} factors, {len(scale)} scales for {len(refs)} rows of {dim}"
                )
            extra = coded.get("wide", ())
            places = [[int(place), int(d)] for place, d in extra] if len(extra) else []
            if places and not all(0 <= place < len(refs) * dim for place, _ in places):
                raise ValueError(f"a wide residual's place outside the {len(refs)} rows of {dim}")
            wide += [[len(clusters) * dim + place, d] for place, d in places]
            codes.append(text)
            factors += k
            scales += scale
            clusters += refs
        block = self._residuals({"codes": "".join(codes), "k": factors, "scale": scales, "wide": wide}, clusters)
        out, first = [], 0
        for _, refs in parts:
            out.append(block[first : first + len(refs)])
            first += len(refs)
        return out

    def _partitioned_scores(self, query: str) -> Any:
        """Every tool's cosine in a partitioned build: exact (with the hierarchy term) where a row was read, else -2.

        The rows read are the probed clusters' and the lexical candidates' (:meth:`row_refs`, :meth:`read_rows`); a tool with
        neither is no candidate of the fusion, whose cosine floor counts -2 as none. A query asks twice (its head
        guess, then its scores, with more single rows read): the probed clusters' products are made once
        (:meth:`_probed_cosines`), and each tool's best ancestor is taken over its cluster's distinct home paths.
        """
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        from ...engines.embedding import with_ancestors  # noqa: PLC0415 - numpy, lazily

        if self._partition is None:
            raise ValueError("this build's tool vectors are not partitioned")
        vector = self.query_vector(query)
        out = np.full(int(self._meta["tools"]["n_docs"]), -2.0, dtype=np.float32)
        clusters = self.probe(query)
        probed = [self._cluster(c) for c in clusters]
        singles = sorted(doc for doc in self._scored[1] if doc in self._rows) if self._scored[0] == query else []
        ids = np.concatenate([*(p[0] for p in probed), np.asarray(singles, dtype=np.int64)])
        if not len(ids):
            return out
        cluster_cosines, cluster_nodes = self._probed_cosines(query, vector, clusters, probed)
        blocks = list(cluster_cosines)
        if singles:
            blocks.append(np.einsum("ij,j->i", np.stack([self._rows[d][0] for d in singles]), vector))
        exact = np.concatenate(blocks).astype(np.float32)
        # every tool scored has its ancestor row (a cluster's may list none: then no hierarchy term)
        if hybrid.HIERARCHY and sum(len(p[2]) for p in probed) + len(singles) == len(ids):
            n_nodes = int(self._meta["nodes"]["n_docs"])
            nodes = np.full(n_nodes, -2.0, dtype=np.float32)  # the scored tools' ancestors, from their files
            for (node_ids, _), cosines in zip((p[3] for p in probed), cluster_nodes, strict=True):
                if len(node_ids):
                    nodes[node_ids] = cosines
            for doc in singles:
                node_ids, node_block = self._rows[doc][2]
                if len(node_ids):
                    nodes[node_ids] = np.einsum("ij,j->i", node_block, vector)
            # each tool's best ancestor: once per distinct home path of its cluster (the padding row n_nodes: -2)
            extended = np.append(nodes, np.float32(-2.0))
            best = [extended[paths].max(axis=1)[rows] for paths, rows in self._cluster_homes(clusters, n_nodes)]
            if singles:
                best.append(extended[ancestor_index([self._rows[doc][1] for doc in singles], n_nodes)].max(axis=1))
            exact = with_ancestors(exact, np.concatenate(best), _column(len(ids)), hybrid.HIERARCHY)
        out[ids] = exact
        return out

    def _probed_cosines(self, query: str, vector: Any, clusters: list[int], probed: list[Any]) -> tuple[Any, Any]:
        """(each probed cluster's tool cosines, each one's node cosines), made once per query and probe."""
        import numpy as np  # noqa: PLC0415 - numpy, lazily

        key = (query, tuple(clusters))
        cached = self._probed_products
        if cached[0] != key or cached[1] is not vector:
            tools = [np.einsum("ij,j->i", p[1], vector) for p in probed]
            nodes = [np.einsum("ij,j->i", p[3][1], vector) if len(p[3][0]) else None for p in probed]
            self._probed_products = cached = (key, vector, tools, nodes)
        return cached[2], cached[3]

    def _cluster_homes(self, clusters: list[int], n_nodes: int) -> list[tuple[Any, Any]]:
        """Each cluster's :func:`distinct_paths` of its tools' :func:`ancestor_index` (made once a cluster)."""
        for cluster in clusters:
            if cluster not in self._cluster_paths:
                self._cluster_paths[cluster] = distinct_paths(ancestor_index(self._clusters[cluster][2], n_nodes))
        return [self._cluster_paths[cluster] for cluster in clusters]

    def query_vector(self, query: str) -> Any:
        """The query's embedding (cached for the last few queries)."""
        if query not in self._queries:
            if len(self._queries) >= _QUERY_CACHE_SIZE:
                self._queries.pop(next(iter(self._queries)))
            encoder = QUERY_ENCODER
            self._queries[query] = encoder(query) if encoder is not None else self._embedder.embed([query])[0]
        return self._queries[query]

    def scores(self, part: str, query: str) -> Any:
        """Cosine of the query with every document of ``part`` (numpy array by doc id).

        With a torch model the product runs in torch too: numpy's BLAS threads, left spinning after a product,
        fought torch's for the two cores and made each query embedding ten times slower (108 ms p50 on BFCL
        with MiniLM, 9.5 ms without).
        """
        if part == "tools" and self._partition is not None:
            return self._partitioned_scores(query)
        cosines = self._cosines(part, query)
        if part != "tools" or not hybrid.HIERARCHY or self._ancestors is None:
            return cosines
        from ...engines.embedding import with_ancestors  # noqa: PLC0415 - numpy, lazily

        if "ancestor_index" not in self._matrices:
            n_nodes = int(self._meta["nodes"]["n_docs"])
            paths, rows = distinct_paths(ancestor_index(self._ancestors, n_nodes))
            self._matrices["ancestor_index"], self._matrices["ancestor_rows"] = paths, rows
        nodes = self._cosines("nodes", query)
        paths, rows = self._matrices["ancestor_index"], self._matrices["ancestor_rows"]
        return with_ancestors(cosines, nodes, paths, hybrid.HIERARCHY, rows)

    def _cosines(self, part: str, query: str) -> Any:
        """The query's cosine with every document vector of ``part``."""
        from ...engines.embedding import matrix_times  # noqa: PLC0415 - numpy / torch, [semantic] extra

        vector = self.query_vector(query)
        key = f"{self._embedder.kind}:{part}"
        if key not in self._matrices:
            self._matrices[key] = self._embedder.prepared(self.matrix(part))
        return matrix_times(self._matrices[key], vector)


def _row_parts(data: dict[str, Any]) -> list[tuple[dict[str, Any], list[int]]]:
    """A row file's coded parts, each with its rows' clusters: its tool row, then its node rows (``-8``: -9 has none)."""
    own = [(data, [int(data["cluster"])])]
    return [*own, (data["nodes"], _node_clusters(data["nodes"]))] if "nodes" in data else own


def _node_clusters(nodes: dict[str, Any]) -> list[int]:
    """A shard's ``nodes`` entry's reference centroid a node row; ValueError unless there is one a node id."""
    clusters = [int(c) for c in nodes["clusters"]]
    if len(clusters) != len(nodes["ids"]):
        raise ValueError(f"{len(clusters)} node centroids for {len(nodes['ids'])} node rows")
    return clusters


def is_page(page: dict[str, Any], folder: str, prefix: str, number: int, per_page: int, total: int) -> bool:
    """Whether ``page`` (``index_pages``) is page ``number`` of a table of ``total`` files in ``folder``, ``per_page`` a page."""
    return (
        page.get("folder") == folder
        and page.get("prefix") == prefix
        and int(page["first"]) == number * per_page
        and len(page["files"]) == min(per_page, total - number * per_page)
    )


def probe_settings(meta: dict[str, Any]) -> tuple[list[int], int | None]:
    """A partitioned build's cluster sizes and ``probe_rows`` (None when its meta names none: probe ``nprobe``).

    Raises ValueError when ``probe_rows`` is not a positive number of tools.
    """
    info = meta["tools"]["partition"]
    rows = int(info["probe_rows"]) if "probe_rows" in info else None
    if rows is not None and rows < 1:
        raise ValueError(f"probe_rows {rows} is not a positive number of tools")
    return [int(count) for count in meta["tools"]["clusters"]["counts"]], rows


def check_cluster_table(table: Any, k: int, n_docs: int, *, proven: bool = False) -> None:
    """ValueError (or another of :data:`VECTOR_ERRORS`) unless ``table`` is a cluster table a build writes.

    That is: of ``k`` clusters of ``n_docs`` tools, one shard a cluster, ``counts`` adding up, a page ref (``proven``,
    ``toolcat-vectors-11``: a page root) and a folder per ``per_page`` shards.
    """
    files, per_page, max_bytes = int(table["files"]), int(table["per_page"]), int(table["max_bytes"])
    counts = [int(count) for count in table["counts"]]
    if files != k or len(counts) != k or min(counts) < 0 or sum(counts) != n_docs:
        raise ValueError("the cluster shards do not match the partition (one shard a cluster, in order)")
    pages = table["roots"] if proven else table["pages"]
    if per_page < 1 or max_bytes < 0 or len(pages) != -(-k // per_page):
        raise ValueError(f"a cluster table of {len(pages)} pages of {per_page} for {k} clusters")
    for ref in pages:
        str(ref) if proven else (str(dict(ref)["sha256"]), str(ref["path"]))
    if len(table["folders"]) != len(pages) or not all(isinstance(f, str) for f in table["folders"]):
        raise ValueError(f"a cluster table of {len(pages)} pages in {len(table['folders'])} folders")
    str(table["prefix"])


def residual_settings(meta: dict[str, Any]) -> tuple[Any, int]:
    """A partitioned build's centroids' int4 codes (``n - 8``, an int array) and its prediction's denominator.

    ValueError unless the denominator is a whole number in 1..1024.
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    info = meta["tools"]["partition"]
    denominator = info["residual"]["denominator"]
    if not isinstance(denominator, int) or isinstance(denominator, bool) or not 1 <= denominator <= 1024:
        raise ValueError(f"residual denominator {denominator!r} is not a whole number in 1..1024")
    dim, k = int(meta["model"]["dim"]), int(info["clusters"])
    return centroid_codes(info["centroids"]["codes"], k, dim).astype(np.int32), denominator


def centroid_codes(text: Any, k: int, dim: int) -> Any:
    """``(k, dim)`` int4 codes of a partition's centroids, from one character a code, dimension by dimension.

    Character ``j * k + i`` of ``text`` is centroid ``i``'s code ``j``, character ``n + 32`` of
    :data:`RESIDUAL_ALPHABET` (written by :func:`toolcat.build.contributors.vectors.centroid_codes`). ValueError on a
    wrong length or a code outside -7..7.
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    if not isinstance(text, str):
        raise TypeError(f"centroid codes are {type(text).__name__}, not a string")
    data = np.frombuffer(text.encode("ascii"), dtype=np.uint8)  # a non-ASCII character: UnicodeEncodeError
    if len(data) != k * dim:
        raise ValueError(f"{len(data)} centroid codes for {k} centroids of {dim}")
    codes = _residual_table()[data]
    if int(codes.min()) < -7 or int(codes.max()) > 7:
        raise ValueError("a centroid code outside -7..7 (Z..n)")
    return np.ascontiguousarray(codes.reshape(dim, k).T)


def tree_rows(coded: dict[str, Any], centroid: Any, denominator: int) -> Any:
    """float32 rows of a cluster shard (``toolcat-vectors-8``): exactly the int4 rows its row files give.

    As :func:`residual_rows`, but row ``i``'s reference is its cluster's centroid (``centroid``, int4 codes) when
    ``parents[i]`` is -1, else row ``parents[i]`` of the same shard, decoded first (written by
    :func:`toolcat.build.contributors.vectors.tree_coded`). The rows are decoded a level of the tree at a time.
    ValueError as :func:`residual_rows`, and on a parent outside the shard or a cycle.
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    reference = np.asarray(centroid, dtype=np.int32)
    parents = np.asarray([int(p) for p in coded["parents"]], dtype=np.int64)
    n_rows, dim = len(parents), len(reference)
    diff, k, scale = _differences(
        coded["codes"], coded["k"], coded["scale"], n_rows, dim, denominator, coded.get("wide", ())
    )
    if n_rows and (
        int(parents.min()) < -1 or int(parents.max()) >= n_rows or bool((parents == np.arange(n_rows)).any())
    ):
        raise ValueError(f"a residual's parent outside the {n_rows} rows of its shard")
    depth = np.where(parents < 0, 0, -1)
    level = 0
    while bool((depth < 0).any()):
        children = (depth < 0) & np.isin(parents, np.flatnonzero(depth == level))
        if not bool(children.any()):
            raise ValueError("the residuals' parents form a cycle, not a tree")
        level += 1
        depth[children] = level
    values = np.zeros((n_rows, dim), dtype=np.int32)
    for at in range(level + 1):
        rows = np.flatnonzero(depth == at)
        refs = reference[None, :] if at == 0 else values[parents[rows]]
        values[rows] = (refs * k[rows, None] + denominator // 2) // denominator + diff[rows]
    if n_rows and int(np.abs(values).max()) > 7:
        raise ValueError("a residual code gives an int4 code outside -7..7")
    # as dequantize computes an int4 row: the code as float32 times float32(scale) / 7, the same float32 values
    return np.multiply(values.astype(np.float32), scale / 7.0)


def _differences(
    codes: Any, factors: Any, scales: Any, n_rows: int, dim: int, denominator: int, wide: Any
) -> tuple[Any, Any, Any]:
    """(differences ``(n_rows, dim)``, factors, float32 scales ``(n_rows, 1)``) of residual codes.

    Checked as :func:`residual_rows` says.
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    if not isinstance(codes, str):
        raise TypeError(f"residual codes are {type(codes).__name__}, not a string")
    data = np.frombuffer(codes.encode("ascii"), dtype=np.uint8)  # a non-ASCII character: UnicodeEncodeError
    width = -(-dim // 2)
    k = np.asarray([int(v) for v in factors], dtype=np.int32)
    scale = np.asarray([float(s) for s in scales], dtype=np.float32)[:, None]
    if len(data) != n_rows * width or len(k) != n_rows or len(scale) != n_rows:
        raise ValueError(
            f"{len(data)} residual codes, {len(k)} factors, {len(scale)} scales for {n_rows} rows of {dim}"
        )
    if not n_rows:
        return np.zeros((0, dim), dtype=np.int32), k, scale
    if int(np.abs(k).max()) > 64 * denominator:
        raise ValueError("a residual factor out of range")
    diff = np.take(_pair_table(), data, axis=0).reshape(n_rows, 2 * width)[:, :dim]
    if int(diff.min()) < PAIR_LOW:
        raise ValueError("a residual code outside the pair alphabet")
    if len(wide):
        places = np.asarray([[int(place), int(d)] for place, d in wide], dtype=np.int64).reshape(-1, 2)
        if int(places[:, 0].min()) < 0 or int(places[:, 0].max()) >= n_rows * dim:
            raise ValueError(f"a wide residual's place outside the {n_rows} rows of {dim}")
        if int(np.abs(places[:, 1]).max()) > 31:
            raise ValueError("a wide residual out of range")
        diff = diff.copy()
        diff.reshape(-1)[places[:, 0]] = places[:, 1]
    return diff, k, scale


def residual_rows(codes: Any, factors: Any, scales: Any, references: Any, denominator: int, wide: Any = ()) -> Any:
    """float32 rows from residual codes: exactly the int4 rows :func:`toolcat.engines.embedding.dequantize` gives.

    Row ``i``'s int4 code of value ``j`` is ``floor((c * k + denominator // 2) / denominator) + d``: ``c`` the
    reference's code (``references[i, j]``), ``k`` = ``factors[i]``, and ``d`` the row's ``j``-th difference. A row is
    ``ceil(dim / 2)`` characters of ``codes`` (row-major; written by
    :func:`toolcat.build.contributors.vectors.residual_codes`), character ``(a + 4) * 9 + b + 4`` of
    :data:`PAIR_ALPHABET` holding two differences ``a`` then ``b``; ``wide`` lists ``[i * dim + j, d]`` for a
    difference outside -4..4 (0 in its character). The value is ``code / 7 * scale``. ValueError on a character
    outside the alphabet, a wide place outside the rows, a code outside -7..7 or a wrong length.
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    n_rows, dim = references.shape
    diff, k, scale = _differences(codes, factors, scales, n_rows, dim, denominator, wide)
    if not n_rows:
        return np.zeros((0, dim), dtype=np.float32)
    values = (references * k[:, None] + denominator // 2) // denominator + diff
    if int(np.abs(values).max()) > 7:
        raise ValueError("a residual code gives an int4 code outside -7..7")
    # as dequantize computes an int4 row: the code as float32 times float32(scale) / 7, the same float32 values
    return np.multiply(values.astype(np.float32), scale / 7.0)


@functools.cache
def _residual_table() -> Any:
    """``(256,)`` ints: a byte's code (``n - 32``, its place ``n`` in the alphabet), -1000 outside it."""
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    table = np.full(256, -1000, dtype=np.int32)
    table[np.frombuffer(RESIDUAL_ALPHABET.encode("ascii"), dtype=np.uint8)] = np.arange(64) - RESIDUAL_ZERO
    return table


@functools.cache
def _pair_table() -> Any:
    """``(256, 2)`` ints: a byte's two differences (:data:`PAIR_ALPHABET`), -1000 outside the alphabet."""
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    table = np.full((256, 2), -1000, dtype=np.int32)
    place = np.arange(len(PAIR_ALPHABET))
    pairs = np.stack([place // PAIR_LEVELS + PAIR_LOW, place % PAIR_LEVELS + PAIR_LOW], 1)
    table[np.frombuffer(PAIR_ALPHABET.encode("ascii"), dtype=np.uint8)] = pairs
    return table


def _old_partition(meta: dict[str, Any]) -> str | None:
    """Why the tier cannot read a partition of another format than :data:`READ_PARTITIONED_FORMATS` (None: not one)."""
    if "partition" not in meta["tools"] or meta.get("format") in READ_PARTITIONED_FORMATS:
        return None
    return (
        f"the build's tool vectors are partitioned in format {meta.get('format')!r}, which this reader does not read"
        f" (it reads {PARTITIONED_FORMAT}); rebuild the catalogue"
    )


def ancestor_index(ancestors: list[list[int]], n_nodes: int) -> Any:
    """A ``(n_tools, depth)`` int array of node rows, padded with ``n_nodes`` (which :func:`with_ancestors` reads as none)."""
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    depth = max((len(row) for row in ancestors), default=0)
    out = np.full((len(ancestors), max(depth, 1)), n_nodes, dtype=np.int64)
    for i, row in enumerate(ancestors):
        valid = [node for node in row if 0 <= node < n_nodes]
        out[i, : len(valid)] = valid
    return out


@functools.lru_cache(maxsize=4)
def _column(n: int) -> Any:
    """``(n, 1)`` ints 0..n-1: an :func:`toolcat.engines.embedding.with_ancestors` index whose nodes are the tools' own."""
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    return np.arange(n, dtype=np.int64)[:, None]


def distinct_paths(index: Any) -> tuple[Any, Any]:
    """(each distinct row of an :func:`ancestor_index` once, each tool's row in it): tools share their home paths.

    At 10,000 generated tools the best ancestor is then taken over a few hundred paths per query instead of
    10,000 (0.39 ms of CPU a query before).
    """
    import numpy as np  # noqa: PLC0415 - numpy, lazily

    paths, rows = np.unique(index, axis=0, return_inverse=True)
    return paths, rows.reshape(-1)
