"""Build the semantic tier: embed every tool, skill and node, and write the vectors as sharded int4 artifacts.

A build contributor (:func:`contributor`), added by :func:`toolcat.build.pipeline.default_contributors` when an embedder
is configured, or by default (:func:`choose_embedder`): with nothing configured, a build uses
:data:`toolcat.format.embedding.DEFAULT_SPEC` (MiniLM int8 on onnxruntime with the tool-retrieval adapter) when it is installed, and otherwise
builds the lexical tier alone and logs the exact command that installs the model. Doc ids are the search index's (:func:`toolcat.build.contributors.index.texts.doc_order`: with a delta segment, added
documents come last and deleted ones leave a zero row), so a vector row and an index document share their id.
Each row is stored as int4 codes, two a byte, with a float scale (``x ≈ (n - 8) / 7 * scale``), in shards of
:data:`SHARD_ROWS` rows (base64 in JSON, so every reader fetches them as it fetches the index).
``manifest["vectors"]`` points to the meta, which records the model's spec and the sha256 of its weights.
Vectors are cached per (model weights, document precision, text) in ``toolcat.format.embedding.cache_dir()``, so an
incremental build embeds only the texts that changed. Format: docs/search.md ("Vectors").
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import logging
import marshal
import math
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...engines.embedding import (
    DEFAULT_INSTALL,
    DEFAULT_SPEC,
    Embedder,
    EmbedderError,
    cache_dir,
    document_precision,
    load_embedder,
)
from ...format import settings
from ...format.canonical import dumps, sha256
from ...format.types import Ref
from ...format.vector_format import (
    PAIR_ALPHABET,
    PAIR_LEVELS,
    PAIR_LOW,
    PARTITIONED_FORMAT,
    RESIDUAL_ALPHABET,
    RESIDUAL_ZERO,
    proven_pages,
)
from ..artifacts import ArtifactSet, Contributor
from ..config import BuildConfig
from ..memo import ToolMemo
from ..model import CompiledCatalog, Node, Tool
from ..progress import report
from .index.shards import buckets_of, paged_files
from .index.texts import EMBED_TEXT_CHARS, doc_order, tool_embed_texts, tool_pointer

log = logging.getLogger(__name__)

SHARD_ROWS = 1024
VECTORS_FORMAT = "toolcat-vectors-2"
# PARTITIONED_FORMAT (imported above) is the format of a build whose tool vectors are partitioned
# (:func:`_write_partitioned`): one shard per cluster, and each tool's row again in a paged table of one file a tool
# (``rows``), so a lexical candidate of a cluster the query did not probe gets its exact cosine. (``toolcat-vectors-3``, issue 33's first cut, had each doc's cluster in the
# meta instead and scored such a candidate by its cluster's centroid; ``toolcat-vectors-4`` stored the int4 codes
# packed two a byte, where ``-5`` stored the same codes as their differences from a prediction by a centroid's codes,
# one character a value, and ``-6`` two differences a character and the centroids one character a code, dimension
# by dimension: :func:`residual_codes`, :func:`centroid_codes`; ``-7`` writes each tool's index document in its row
# file too (``ids``, ``docs``: a lexical candidate a query reads the row of needs no doc shard); ``-8`` codes a cluster
# shard's rows against a tree of references (:func:`tree_coded`) and pages the cluster shards' refs (``clusters``,
# :func:`cluster_page_size`), so the meta no longer lists one ref a cluster, and puts the row table's files in
# buckets of consecutive docs, a folder each (``buckets``), so a one-tool edit rewrites a bucket or two, not the
# table; the version and the codes' alphabets are ``toolcat.format.vector_format``'s, which the reader reads with.)

#: The prediction's factor is ``k / RESIDUAL_DENOMINATOR`` (``k`` an integer per row, so the prediction is integer
#: arithmetic that every reader computes alike).
RESIDUAL_DENOMINATOR = 8
#: Catalogues with more tools than this have their tool vectors partitioned into clusters by default (docs/search.md,
#: "Vectors a CDN can serve"); smaller ones keep contiguous shards, read whole. Below it the whole vectors cost at
#: most ~0.4 MB gzipped and every query keeps the unpartitioned tier's exact answers; above it a cold query reads a
#: few clusters (10,000 tools: ~0.18 MB instead of 1.87 MB). ``$TOOLCAT_VECTOR_PARTITION`` overrides it.
DEFAULT_PARTITION_MIN = 2000
#: Set (tests, benches): the threshold itself, whatever the environment says (0 partitions every build).
PARTITION_MIN: int | None = None


def partition_min() -> int | None:
    """How many tools a build must exceed to partition its tool vectors; None: never.

    :data:`PARTITION_MIN` when set; else ``$TOOLCAT_VECTOR_PARTITION``: a number of tools, or ``0`` / ``off`` (never
    partition); else :data:`DEFAULT_PARTITION_MIN`.
    """
    if PARTITION_MIN is not None:
        return PARTITION_MIN
    raw = settings.get("TOOLCAT_VECTOR_PARTITION")
    if not raw:
        return DEFAULT_PARTITION_MIN
    if raw == "0" or settings.flag_off("TOOLCAT_VECTOR_PARTITION"):
        return None
    try:
        return max(1, int(raw))
    except ValueError:
        log.warning(
            "TOOLCAT_VECTOR_PARTITION=%r is not a number of tools (nor 0 or off); builds of more than %d tools are"
            " partitioned (the default)",
            raw,
            DEFAULT_PARTITION_MIN,
        )
        return DEFAULT_PARTITION_MIN


#: The clusters a query reads, stored in the meta, for a reader that does not know ``probe_rows``.
NPROBE = 4
#: The tools a query's probed clusters hold at least, stored in the meta (``probe_rows``): a reader probes the
#: nearest clusters until they hold this many tools (docs/search.md, "Vectors a CDN can serve").
PROBE_ROWS = 320
#: Lloyd iterations of the build's k-means (spherical: on unit rows).
KMEANS_ITERATIONS = 12
VECTORS_DTYPE = "int4"


def choose_embedder(config: BuildConfig, override: str | None = None) -> str | None:
    """The embedder a build uses: the one named, else the default (:data:`DEFAULT_SPEC`) when it is installed.

    Named, in order: ``--embedder``, ``search.embedder`` in ``SRC/toolcat.yaml`` (``config``, read once by
    :func:`toolcat.build.config.read_config`), ``$TOOLCAT_EMBEDDER`` (a machine's default, e.g. ``none`` on a CI
    runner that tests the lexical tier). ``none`` turns the tier off. With nothing named and the default model not
    installed, the build is lexical and says what to run (a warning, not an error: a reader of that build answers
    lexically, exactly as before).
    """
    if override is not None or config.embedder_named:
        return config.embedder_for(override)
    machine = settings.get("TOOLCAT_EMBEDDER")
    if machine:
        return config.embedder_for(machine)
    try:
        load_embedder(DEFAULT_SPEC)
    except (EmbedderError, OSError, ValueError) as err:
        message = err.message if isinstance(err, EmbedderError) else str(err)
        log.warning(
            "search: lexical tier only, the default embedder %s is not available (%s). To build the semantic"
            " tier: %s. To silence this: --embedder none, or search: {embedder: none} in toolcat.yaml.",
            DEFAULT_SPEC,
            message,
            DEFAULT_INSTALL,
        )
        return None
    return DEFAULT_SPEC


def node_embed_text(node: Node, catalog: CompiledCatalog) -> str:
    """What a node is embedded as: title, path, summary, tags and the summaries of its direct tools."""
    parts = [node.title, " ".join(node.path), node.summary, " ".join(node.tags)]
    parts += [t.summary for t in catalog.tools_at(node.path)]
    return ". ".join(p for p in parts if p)[:EMBED_TEXT_CHARS]


#: Bumped when the rows a cache holds would differ for the same text: 2, each text embedded alone (an onnxruntime
#: row no longer depends on its batch mates, :meth:`toolcat.format.onnx_encoder.MiniLMEncoder.encode`).
CACHE_LAYOUT = 2
#: Texts embedded per call while the build reports its progress between calls (each text is embedded alone by the
#: onnxruntime encoders, so the chunking changes no row).
EMBED_CHUNK = 64
#: Shards with fewer rows than this are merged into one when there are more than :data:`MERGE_AT` of them.
SMALL_SHARD_ROWS = 4096
MERGE_AT = 8
#: The cache's size cap in MB (``$TOOLCAT_VECTOR_CACHE_MB``): past it the least recently used shards are removed.
DEFAULT_CAP_MB = 1024
#: A temporary file older than this (seconds) was left by a process that died while writing: removed.
STALE_TMP_SECONDS = 3600
SHARD_SUFFIX = ".rows.npy"


def text_key(text: str) -> bytes:
    """The cache key of an embedded text: its sha256 digest."""
    return hashlib.sha256(text.encode("utf-8")).digest()


def cache_cap_bytes() -> int:
    """The vector cache's size cap: ``$TOOLCAT_VECTOR_CACHE_MB`` (a positive number of MB), else 1024 MB."""
    try:
        mb = float(settings.get("TOOLCAT_VECTOR_CACHE_MB") or DEFAULT_CAP_MB)
    except ValueError:
        mb = DEFAULT_CAP_MB
    return int((mb if mb > 0 else DEFAULT_CAP_MB) * 1e6)


class VectorCache:
    """Rows by (model weights, document precision, text sha256), in append-only shards that builds share safely.

    One folder per model (``$TOOLCAT_CACHE_DIR/vectors/<weights>[-<precision>][-onnx-v2]/``) holds shards
    ``<sha256 of the shard>.rows.npy``: a numpy array of (key: the text's sha256, row: float32) records. A build
    reads every shard; :meth:`save` writes the rows it embedded as one new shard (written to a temporary name,
    then renamed: a reader sees a whole shard or none) and never rewrites or prunes a shard, so two builds on one
    account, of one catalogue or of two, run concurrently and keep each other's rows. A shard is named by its
    content, so two builds that embedded the same texts write the same file. A build sets the modification time
    of every shard it took a row from (least recently used = oldest mtime). Upkeep, by whichever build holds the
    folder's lock (``flock`` on ``.lock``; a build that finds it taken skips it): more than :data:`MERGE_AT` shards of
    under :data:`SMALL_SHARD_ROWS` rows (one-tool edits) are merged into one, renamed in before the merged ones are
    removed; past the cap (:func:`cache_cap_bytes`) the least recently used shards are removed, never one the
    saving build used. A cached row is the row a fresh embedding gives (each text is embedded alone), so a build
    from a warm cache writes the same bytes as one from an empty cache (``tests/build/test_semantic_delta.py``).
    The layout before (``keys.npy`` and ``rows.npy``, one pair rewritten by the last build) is read once and
    turned into a shard.
    """

    def __init__(self, embedder: Embedder, root: Path | None = None, *, read: bool = True) -> None:
        precision = document_precision(embedder)
        suffix = "" if precision == "float32" else f"-{precision}"
        suffix += "" if embedder.kind != "onnx" else f"-onnx-v{CACHE_LAYOUT}"
        self.folder = (root or cache_dir()) / "vectors" / f"{embedder.weights_sha256[:16]}{suffix}"
        self.embedder = embedder
        #: Texts embedded by this cache (not found in it).
        self.embedded = 0
        self._shard_of: dict[bytes, str] = {}  # key -> the shard it was read from
        self._used: set[str] = set()  # shards a row was taken from (their mtime is set on save)
        self._order: dict[str, list[bytes]] = {}  # shard -> its keys in its order (read or written here)
        self._at: dict[
            bytes, tuple[str, int]
        ] = {}  # key -> (shard, place), known without reading (:func:`rows_from_index`)
        #: ``read=False``: no shard is read (a build whose rows the last build's :data:`ROW_INDEX` finds).
        self.rows: dict[bytes, Any] = self._read() if read else {}

    # -- reading ---------------------------------------------------------------------------------
    def record_dtype(self) -> Any:
        """A shard's record: the text's sha256 (``key``) and its float32 row."""
        import numpy as np  # noqa: PLC0415 - [search] extra

        return np.dtype([("key", "V32"), ("row", "<f4", (self.embedder.dim,))])

    def _shards(self) -> list[Path]:
        try:
            return sorted(p for p in self.folder.iterdir() if p.name.endswith(SHARD_SUFFIX) and p.name[0] != ".")
        except OSError:
            return []

    def _load(self, path: Path) -> Any:
        """The records of one shard; None when it is not one of this model's (logged) or has gone."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        try:
            records = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise
        except (OSError, ValueError) as err:
            log.warning("vector cache shard %s unreadable (%s); its texts are embedded again", path, err)
            return None
        if records.dtype != self.record_dtype() or records.ndim != 1:
            log.warning("vector cache shard %s is not this model's; its texts are embedded again", path)
            return None
        return records

    def _read(self) -> dict[bytes, Any]:
        self._migrate()
        for _ in range(5):  # a shard merged away while listing: list again (the merged shard is in by then)
            try:
                return self._read_shards()
            except FileNotFoundError:
                continue
        log.warning("vector cache %s kept changing while read; its texts are embedded again", self.folder)
        self._shard_of.clear()
        return {}

    def _read_shards(self) -> dict[bytes, Any]:
        """Every shard's rows; FileNotFoundError when a listed shard has gone (merged by another build)."""
        rows: dict[bytes, Any] = {}
        self._shard_of.clear()
        for path in self._shards():
            records = self._load(path)
            if records is None:
                continue
            keys = records["key"].tobytes()
            listed = [keys[32 * i : 32 * i + 32] for i in range(len(records))]  # one C-level pass each, not a loop
            rows.update(zip(listed, records["row"], strict=True))  # of Python statements a row (issue 33's edit)
            self._shard_of.update(dict.fromkeys(listed, path.name))
            self._order[path.name] = listed
        return rows

    def _migrate(self) -> None:
        """Turn the layout before (``keys.npy`` + ``rows.npy``, rewritten whole by the last build) into a shard."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        keys_file, rows_file = self.folder / "keys.npy", self.folder / "rows.npy"
        if not (keys_file.is_file() and rows_file.is_file()):
            return
        try:
            keys = np.load(keys_file, allow_pickle=False)
            matrix = np.load(rows_file, allow_pickle=False)
            if keys.dtype == np.dtype("S32") and len(keys) == len(matrix) and matrix.shape[1:] == (self.embedder.dim,):
                # numpy's S32 dropped a key's trailing NUL bytes (1 digest in 256): put them back
                self._write_shard({k.ljust(32, b"\0"): row for k, row in zip(keys.tolist(), matrix, strict=True)})
        except (OSError, ValueError) as err:
            log.warning("vector cache %s (the layout before) unreadable (%s); not carried over", self.folder, err)
        for old in (keys_file, rows_file):
            old.unlink(missing_ok=True)

    # -- embedding -------------------------------------------------------------------------------
    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None) -> Any:
        """Rows for ``texts``, embedding only those not cached; ``progress(n)`` after each chunk of embedded texts."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.rows))
        if missing:
            text_of = dict(zip(keys, texts, strict=True))
            for first in range(0, len(missing), EMBED_CHUNK):
                chunk = missing[first : first + EMBED_CHUNK]
                rows = self.embedder.embed([text_of[k] for k in chunk], documents=True)
                for key, row in zip(chunk, rows, strict=True):
                    self.rows[key] = row
                self.embedded += len(chunk)
                if progress is not None:
                    progress(first + len(chunk))
        self._used.update(self._shard_of[k] for k in keys if k in self._shard_of)
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.stack([self.rows[k] for k in keys])

    # -- writing ---------------------------------------------------------------------------------
    def save(self) -> None:
        """Write the rows no shard holds yet as a new shard, mark the shards used, and do the folder's upkeep."""
        new = {k: row for k, row in self.rows.items() if k not in self._shard_of}
        if new:
            name = self._write_shard(new)
            self._shard_of.update(dict.fromkeys(new, name))
            self._used.add(name)
        now = time.time()
        for name in sorted(self._used):
            with contextlib.suppress(OSError):  # merged away by another build: its rows are in the merged shard
                os.utime(self.folder / name, (now, now))
        if new or self._used:
            self.upkeep(keep=self._used)

    def _write_shard(self, rows: dict[bytes, Any]) -> str:
        """One shard of ``rows`` (sorted by key), written atomically under its content's name; returns the name."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        keys = sorted(rows)
        records = np.zeros(len(keys), dtype=self.record_dtype())
        records["key"] = np.frombuffer(b"".join(keys), dtype="V32")
        records["row"] = np.stack([rows[k] for k in keys])
        name = hashlib.sha256(records.tobytes()).hexdigest()[:32] + SHARD_SUFFIX
        self._order[name] = keys
        self.folder.mkdir(parents=True, exist_ok=True)
        target = self.folder / name
        if target.is_file():
            return name  # the same rows are there already (another build embedded the same texts)
        tmp = self.folder / f".tmp-{os.getpid()}-{threading.get_ident()}-{name}.part"  # never listed as a shard
        try:
            with tmp.open("wb") as handle:
                np.save(handle, records, allow_pickle=False)
            tmp.replace(target)
        finally:
            tmp.unlink(missing_ok=True)
        return name

    def places(self, keys: list[bytes]) -> dict[bytes, tuple[str, int]]:
        """Where each of ``keys`` lies in the cache (its shard and place there), for the keys a shard here holds."""
        maps: dict[str, dict[bytes, int]] = {}
        found: dict[bytes, tuple[str, int]] = {}
        for key in keys:
            if key in self._at:
                found[key] = self._at[key]
                continue
            shard = self._shard_of.get(key)
            if shard is None or shard not in self._order:
                continue
            if shard not in maps:
                maps[shard] = {k: i for i, k in enumerate(self._order[shard])}
            if key in maps[shard]:
                found[key] = (shard, maps[shard][key])
        return found

    def take(self, rows: dict[bytes, Any], places: dict[bytes, tuple[str, int]]) -> None:
        """Rows found without reading the cache (:func:`rows_from_index`), with their shards (marked used on save)."""
        self.rows.update(rows)
        for key, (shard, place) in places.items():
            self._shard_of[key] = shard
            self._at[key] = (shard, place)
        self._used.update(shard for shard, _ in places.values())

    def upkeep(self, keep: set[str] | None = None) -> None:
        """Merge many small shards into one and keep the folder under its cap (never removing a shard of ``keep``).

        Done only by the build that takes the folder's lock; another build at it already makes this one skip.
        """
        keep = set(keep or ())
        try:
            import fcntl  # noqa: PLC0415 - POSIX only; elsewhere the cache is never merged or trimmed
        except ImportError:  # pragma: no cover
            return
        try:
            fd = os.open(self.folder / ".lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return  # another build is at it
            self._remove_stale_tmp()
            self._merge_small(keep)
            self._trim(keep)
        finally:
            os.close(fd)

    def _remove_stale_tmp(self) -> None:
        old = time.time() - STALE_TMP_SECONDS
        for path in self.folder.glob(".tmp-*"):
            with contextlib.suppress(OSError):
                if path.stat().st_mtime < old:
                    path.unlink()

    def _merge_small(self, keep: set[str]) -> None:
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        small = []
        for path in self._shards():
            with contextlib.suppress(OSError, ValueError):
                header = np.load(path, mmap_mode="r", allow_pickle=False)
                if len(header) < SMALL_SHARD_ROWS:
                    small.append((path, path.stat().st_mtime))
        if len(small) <= MERGE_AT:
            return
        rows: dict[bytes, Any] = {}
        merged = []
        for path, mtime in small:
            try:
                records = self._load(path)
            except FileNotFoundError:
                continue
            if records is None:
                continue
            keys = records["key"].tobytes()
            rows.update((keys[32 * i : 32 * i + 32], row) for i, row in enumerate(records["row"]))
            merged.append((path, mtime))
        name = self._write_shard(rows)
        self._moved(rows, {path.name for path, _ in merged} - {name}, name)
        newest = max(mtime for _, mtime in merged)
        with contextlib.suppress(OSError):
            os.utime(self.folder / name, (newest, newest))
        for path, _ in merged:
            if path.name != name:
                path.unlink(missing_ok=True)
                if path.name in keep:
                    keep.add(name)
        log.info("vector cache %s: %d small shards merged into %s", self.folder, len(merged), name)

    def _moved(self, rows: dict[bytes, Any], gone: set[str], name: str) -> None:
        """The rows of shards ``gone`` now lie in shard ``name`` (merged): where :meth:`places` finds them."""
        self._shard_of.update((key, name) for key in rows if self._shard_of.get(key) in gone)
        for key in [key for key, (shard, _) in self._at.items() if shard in gone]:
            del self._at[key]  # placed again by the merged shard's order

    def _trim(self, keep: set[str]) -> None:
        cap = cache_cap_bytes()
        shards = []
        for path in self._shards():
            with contextlib.suppress(OSError):
                info = path.stat()
                shards.append((info.st_mtime, path, info.st_size))
        total = sum(size for _, _, size in shards)
        for _, path, size in sorted(shards):
            if total <= cap:
                break
            if path.name in keep:
                continue
            path.unlink(missing_ok=True)
            total -= size
            log.info(
                "vector cache %s: %s removed (least recently used; the cap is %d MB)", self.folder, path, cap // 10**6
            )


#: The build-private file that says where the last build's rows lie in the vector cache (:func:`row_index`).
ROW_INDEX = ".toolcat-vector-rows.json"
ROW_INDEX_FORMAT = "toolcat-vector-rows-1"
#: A build whose texts the last build's :data:`ROW_INDEX` finds, all but at most this many, embeds those few and
#: reads no other row of the cache (a one-tool edit: the tool's text and its node's).
DIRECT_EMBED_MAX = EMBED_CHUNK
_INDEX_DTYPE = [("key", "V32"), ("shard", "<i4"), ("place", "<i4")]


def row_index(cache: VectorCache, keys: list[bytes]) -> bytes:
    """The :data:`ROW_INDEX` of a build that used ``keys``: each one's cache shard and place there (canonical JSON).

    A cache shard never changes once written (its name is its content's hash), so a place stays right while the
    shard is there; :func:`rows_from_index` checks every key it reads against the shard's own.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    places = cache.places(list(dict.fromkeys(keys)))
    shards = sorted({shard for shard, _ in places.values()})
    number = {shard: i for i, shard in enumerate(shards)}
    ordered = sorted(places)
    records = np.zeros(len(ordered), dtype=_INDEX_DTYPE)
    records["key"] = np.frombuffer(b"".join(ordered), dtype="V32")
    records["shard"] = [number[places[key][0]] for key in ordered]
    records["place"] = [places[key][1] for key in ordered]
    body = {"format": ROW_INDEX_FORMAT, "folder": cache.folder.name, "shards": shards}
    return dumps({**body, "records": base64.b64encode(records.tobytes()).decode("ascii")})


def rows_from_index(
    previous: Path | None, cache: VectorCache, keys: list[bytes]
) -> tuple[dict[bytes, Any], dict[bytes, tuple[str, int]]] | None:
    """The rows of ``keys`` the last build's :data:`ROW_INDEX` places in ``cache``'s shards, and their places.

    Only those shards are opened (memory-mapped) and only those rows read: a 10,000-tool build's rows from a cache
    that also holds a 100,000-tool catalogue's. None when there is no usable index (no last build, another
    model's, unreadable) or a shard it names has gone or holds another key there (merged by a build's upkeep): the
    caller then reads the whole cache.
    """
    import json  # noqa: PLC0415 - the index is read on this path alone

    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    if previous is None:
        return None
    try:
        data = json.loads((previous / ROW_INDEX).read_bytes())
        if data.get("format") != ROW_INDEX_FORMAT or data.get("folder") != cache.folder.name:
            return None
        shards = [str(name) for name in data["shards"]]
        records = np.frombuffer(base64.b64decode(data["records"]), dtype=_INDEX_DTYPE)
        listed = records["key"].tobytes()
        known = {listed[32 * i : 32 * i + 32]: i for i in range(len(records))}
        wanted = [key for key in dict.fromkeys(keys) if key in known]
        by_shard: dict[int, list[bytes]] = {}
        for key in wanted:
            by_shard.setdefault(int(records["shard"][known[key]]), []).append(key)
        rows: dict[bytes, Any] = {}
        places: dict[bytes, tuple[str, int]] = {}
        for number, shard_keys in sorted(by_shard.items()):
            name = shards[number]
            if name != Path(name).name or not name.endswith(SHARD_SUFFIX):
                return None
            stored = np.load(cache.folder / name, mmap_mode="r", allow_pickle=False)
            at = np.asarray([int(records["place"][known[key]]) for key in shard_keys], dtype=np.int64)
            if stored.dtype != cache.record_dtype() or stored.ndim != 1 or (len(at) and int(at.max()) >= len(stored)):
                return None
            taken = np.asarray(stored[at])  # these records alone, read into memory
            if taken["key"].tobytes() != b"".join(shard_keys):
                return None
            rows.update(zip(shard_keys, taken["row"], strict=True))
            places.update((key, (name, int(place))) for key, place in zip(shard_keys, at.tolist(), strict=True))
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return rows, places


def vector_cache(embedder: Embedder, previous: Path | None, keys: list[bytes]) -> VectorCache:
    """The vector cache for a build of the texts of ``keys`` (:func:`text_key`): read whole, or the last build's rows.

    When the last build's index (:func:`rows_from_index`) finds all of the texts but at most :data:`DIRECT_EMBED_MAX`,
    no other shard is read and those few are embedded (a cached row is the row an embedding gives, so the bytes are the
    same); the rows it finds are marked used, as a whole read marks them. Reading a 157 MB cache took 0.1-0.3 s of a one-tool edit.
    """
    light = VectorCache(embedder, read=False)
    found = rows_from_index(previous, light, keys)
    if found is not None and len({key for key in keys if key not in found[0]}) <= DIRECT_EMBED_MAX:
        light.take(*found)
        return light
    return VectorCache(embedder)


def _with_holes(rows: Any, order: list[Any]) -> Any:
    """One row per doc id: the embedded rows in order, and zeros where a delta segment deleted the document."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    if all(item is not None for item in order):
        return rows
    out = np.zeros((len(order), rows.shape[1] if len(rows) else 0), dtype=np.float32)
    out[[i for i, item in enumerate(order) if item is not None]] = rows
    return out


def quantize(rows: Any) -> tuple[bytes, list[float]]:
    """int4 rows, two values a byte, and one scale per row (``x ≈ (n - 8) / 7 * scale``; :func:`toolcat.format.embedding.dequantize`).

    int4 instead of int8 halves the bytes (10,000 MiniLM rows: 1.9 MB instead of 3.8 MB before base64) and kept
    R@5 within 0.003 on MetaTool and BFCL for both models (docs/search.md, "Vectors").
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    nibbles, scales = _nibbles(rows)
    if nibbles.shape[1] % 2:
        nibbles = np.concatenate([nibbles, np.full((len(nibbles), 1), 8, dtype=np.uint8)], axis=1)
    packed = nibbles[:, 0::2] | (nibbles[:, 1::2] << 4)
    return packed.tobytes(), scales


def _nibbles(rows: Any) -> tuple[Any, list[float]]:
    """:func:`quantize`'s codes ``n`` (in 1..15, uint8 ``(rows, dim)``) and scales, not yet packed."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    scale = np.abs(rows).max(axis=1) if len(rows) else np.zeros(0)
    scale = np.asarray([round(float(s), 6) for s in scale], dtype=np.float64)
    safe = np.where(scale > 0, scale, 1.0)[:, None]
    return (np.clip(np.rint(rows / safe * 7), -7, 7) + 8).astype(np.uint8), [float(s) for s in scale]


def int4_codes(rows: Any) -> tuple[Any, list[float]]:
    """The int4 codes ``n - 8`` (in -7..7, an int8 array ``(rows, dim)``) and scales :func:`quantize` writes for ``rows``.

    :func:`unpacked` of :func:`quantize`'s bytes, without packing and unpacking them (a one-tool edit at 10,000 tools):
    :func:`_nibbles`' arithmetic, in place and without its ``+ 8``, so a one-tool edit makes one array of the rows'
    size in float64 and one in int8, not seven (each new page of memory a fault: issue 33).
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    scale = np.abs(rows).max(axis=1) if len(rows) else np.zeros(0)
    scales = [round(float(s), 6) for s in scale]
    safe = np.asarray([s if s > 0 else 1.0 for s in scales], dtype=np.float64)[:, None]
    values = np.divide(rows, safe)  # float64, as _nibbles divides
    np.multiply(values, 7, out=values)
    np.rint(values, out=values)
    np.clip(values, -7, 7, out=values)
    return values.astype(np.int8), scales


def unpacked(data: bytes, n: int, dim: int) -> Any:
    """The int4 codes ``n - 8`` of :func:`quantize`'s ``data`` for ``n`` rows of ``dim`` values (an int array)."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    packed = np.frombuffer(data, dtype=np.uint8).reshape(n, -1)
    codes = np.stack([packed & 0x0F, packed >> 4], axis=2).reshape(n, -1)[:, :dim]
    return codes.astype(np.int64) - 8


def residual_codes(codes: Any, references: Any) -> tuple[list[int], str, list[list[int]]]:
    """Rows' int4 codes as (per row ``k``, two differences a character, the wide ones) against reference rows' codes.

    The prediction of code ``n`` from the reference's code ``c`` is ``floor((c * k + 4) / 8)``, ``k`` the row's
    least-squares factor in eighths, and ``d = n - prediction``. A row is ``ceil(dim / 2)`` characters of
    :data:`PAIR_ALPHABET` (row-major; an odd ``dim``'s last character pairs its last ``d`` with 0), each holding
    two ``d`` in -4..4; a ``d`` outside (about 2 in 10,000 of a tool's, more of a node's) is held as 0 there and
    listed in ``wide`` as ``[row * dim + j, d]``. Lossless: a reader gets the row's int4 codes back exactly, so its
    row is the one :func:`quantize` gives (the unpartitioned tier's), with fewer bytes once gzipped (a row is near its
    centroid: docs/search.md, "Vectors a CDN can serve"). Characters, not packed bits: gzip's Huffman codes then
    take about the codes' entropy, and two values a character leave its matches fewer chances to cost more.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    if not len(codes):
        return [], "", []
    refs = np.asarray(references, dtype=np.int64)
    den = RESIDUAL_DENOMINATOR
    dots, norms = (codes * refs).sum(axis=1), (refs * refs).sum(axis=1)
    k = np.clip(np.rint(den * dots / np.maximum(norms, 1)), -2 * den, 2 * den).astype(np.int64)
    diff = codes - (refs * k[:, None] + den // 2) // den
    if int(np.abs(diff).max()) > RESIDUAL_ZERO - 1:  # |n| <= 7 and |prediction| <= 14: never
        raise ValueError("a residual code out of range")
    n, dim = diff.shape
    high = PAIR_LOW + PAIR_LEVELS - 1
    outside = (diff < PAIR_LOW) | (diff > high)
    wide = [[int(i), int(d)] for i, d in zip(np.flatnonzero(outside), diff[outside], strict=True)]
    held = np.where(outside, 0, diff)
    if dim % 2:
        held = np.concatenate([held, np.zeros((n, 1), dtype=held.dtype)], axis=1)
    pairs = (held[:, 0::2] - PAIR_LOW) * PAIR_LEVELS + held[:, 1::2] - PAIR_LOW
    chars = np.frombuffer(PAIR_ALPHABET.encode("ascii"), dtype=np.uint8)[pairs]
    return [int(v) for v in k], chars.tobytes().decode("ascii"), wide


def centroid_codes(codes: Any) -> str:
    """Centroids' int4 codes (``(k, dim)``, each in -7..7) as one character a code, dimension by dimension.

    Character ``j * k + i`` is centroid ``i``'s code ``j``: character ``n + 32`` of :data:`RESIDUAL_ALPHABET`. A
    dimension's codes are alike across centroids (the model's own biases), so in this order the gzipped vectors meta
    is 1.0 KB smaller at 10,000 tools (100 centroids) and 8.1 KB at 100,000 (316) than with packed nibbles in base64.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    chars = np.frombuffer(RESIDUAL_ALPHABET.encode("ascii"), dtype=np.uint8)[np.asarray(codes).T + RESIDUAL_ZERO]
    return str(chars.tobytes().decode("ascii"))


def nearest_centroids(rows: Any, centroids: Any) -> Any:
    """Each row's reference for :func:`residual_codes`: the centroid of greatest cosine (the first of equals)."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    lengths = np.linalg.norm(centroids, axis=1, keepdims=True)
    unit = centroids / np.where(lengths > 0, lengths, 1.0)
    return np.asarray((np.asarray(rows, dtype=np.float64) @ unit.T).argmax(axis=1), dtype=np.int64)


def tree_parents(codes: Any, centroid: Any) -> list[int]:
    """Each row's reference in its cluster shard: -1 (the cluster's centroid) or another row of the shard.

    Prim's tree from the centroid: rows are taken nearest first (in cosine, to the centroid or to any row taken), and
    each one's reference is the centroid or taken row nearest it. A row is nearer its nearest neighbour in the cluster
    than its centroid, so its residual codes against that neighbour take fewer bytes (the cluster shards of a cold
    query: -15% gzipped at 10,000 tools, docs/search.md, "Vectors a CDN can serve"). The cosines come from the int4 codes
    by integer dot products and one float64 division each, so every machine builds the same tree (ties: the first).
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    rows, reference = np.asarray(codes, dtype=np.int64), np.asarray(centroid, dtype=np.int64)
    n = len(rows)
    if not n:
        return []
    lengths = np.sqrt((rows * rows).sum(axis=1).astype(np.float64))
    lengths = np.where(lengths > 0, lengths, 1.0)
    length = float(np.sqrt(float((reference * reference).sum()))) or 1.0
    gram = (rows @ rows.T).astype(np.float64) / lengths[:, None] / lengths[None, :]
    best = (rows @ reference).astype(np.float64) / lengths / length
    parent = np.full(n, -1, dtype=np.int64)
    taken = np.zeros(n, dtype=bool)
    for _ in range(n):
        row = int(np.argmax(np.where(taken, -np.inf, best)))
        taken[row] = True
        closer = ~taken & (gram[row] > best)
        best = np.where(closer, gram[row], best)
        parent[closer] = row
    return [int(p) for p in parent]


def tree_coded(codes: Any, scales: list[float], ids: list[int], centroid: Any) -> dict[str, Any]:
    """A cluster shard's rows ``ids`` as ``scale``, ``k``, ``codes``, ``wide`` and ``parents`` (a tree of references).

    Each row's int4 codes are coded (:func:`residual_codes`) against its reference (:func:`tree_parents`: the
    centroid's codes, or another row's). Lossless: a reader decodes a row after its reference and gets the same int4 codes, the row its row file and the
    unpartitioned tier hold.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    rows = np.asarray(codes)[np.asarray(ids, dtype=np.int64)].astype(np.int64)  # (len(ids), dim), an empty cluster too
    parents = tree_parents(rows, centroid)
    at = np.asarray(parents, dtype=np.int64)
    refs = np.where(at[:, None] < 0, np.asarray(centroid, dtype=np.int64)[None, :], rows[np.maximum(at, 0)])
    k, text, wide = residual_codes(rows, refs)
    return {"scale": [scales[i] for i in ids], "k": k, "codes": text, "wide": wide, "parents": parents}


def ancestor_rows(tools: list[Tool | None], nodes: list[Any]) -> list[list[int]]:
    """Per tool row, the node rows of its home path's nodes below the root (the hierarchy the reader fuses)."""
    row_of = {tuple(path): i for i, path in enumerate(nodes) if path is not None}
    out = []
    for tool in tools:
        home = tuple(tool.path) if tool is not None else ()
        out.append([row_of[home[:d]] for d in range(1, len(home) + 1) if home[:d] in row_of])
    return out


def _write_part(
    artifacts: ArtifactSet, part: str, rows: Any, ancestors: list[list[int]] | None = None
) -> dict[str, Any]:
    shards = []
    for first in range(0, len(rows), SHARD_ROWS):
        chunk = rows[first : first + SHARD_ROWS]
        data, scales = quantize(chunk)
        body: dict[str, Any] = {
            "artifact": "vectors_shard",
            "part": part,
            "first": first,
            "count": len(chunk),
            "q": base64.b64encode(data).decode("ascii"),
            "scale": scales,
        }
        if ancestors is not None:
            body["ancestors"] = ancestors[first : first + SHARD_ROWS]
        ref = artifacts.add_json("vectors", f"{part}.v{first // SHARD_ROWS}", body)
        shards.append({"first": first, "count": len(chunk), "ref": ref})
    return {"n_docs": len(rows), "shards": shards}


def kmeans(rows: Any, k: int, iterations: int = KMEANS_ITERATIONS, cap: int | None = None) -> Any:
    """Each row's cluster (an int array) from a deterministic spherical k-means: same rows, same clusters.

    Seeds are the rows at ``k`` evenly spaced positions of doc order; an emptied cluster is reseeded with the
    row farthest from its own centroid. No randomness, so a build's bytes depend on its sources alone. With
    ``cap``, the last assignment is balanced (:func:`balanced_assign`): no cluster holds more than ``cap`` rows.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    unit = unit_rows(rows)
    sims = unit @ lloyd(unit, k, iterations, cap).T
    return np.asarray(sims.argmax(axis=1) if cap is None else balanced_assign(sims, cap), dtype=np.int64)


def unit_rows(rows: Any) -> Any:
    """``rows`` scaled to unit length (a zero row stays zero), float32: what the k-means compares."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)


def lloyd(unit: Any, k: int, iterations: int = KMEANS_ITERATIONS, cap: int | None = None) -> Any:
    """The centroids (``(k, dim)`` float32, unit length) of :func:`kmeans`'s iterations over the unit rows ``unit``."""
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    n = len(unit)
    centroids = unit[np.linspace(0, n - 1, k).round().astype(np.int64)].copy()
    assign = np.zeros(n, dtype=np.int64)
    for _ in range(iterations):
        sims = unit @ centroids.T
        assign = sims.argmax(axis=1) if cap is None else balanced_assign(sims, cap)
        best = sims[np.arange(n), assign]
        sums, counts = ordered_sums(unit, assign, k)
        for empty in np.flatnonzero(counts == 0):
            far = int(best.argmin())
            sums[empty], best[far] = unit[far], 2.0
        lengths = np.linalg.norm(sums, axis=1, keepdims=True)
        centroids = (sums / np.where(lengths > 0, lengths, 1.0)).astype(np.float32)
    return centroids


def ordered_sums(unit: Any, assign: Any, k: int) -> tuple[Any, Any]:
    """Each cluster's sum of its rows, in their dtype (zero for an empty cluster), and its count of rows.

    ``np.add.at``'s sums, bit for bit, in a tenth of its time: ``np.add.at`` adds each row to its cluster's sum in row
    order, rounding each time; here the j-th rows of every cluster are added at once, for j = 0, 1, ... (each
    cluster's rows still one after another, in row order), so each sum sees the same additions in the same order
    (``tests/build/test_vector_memo.py``, float32 and float64). A sum in another order (``np.add.reduceat`` over
    float32 rows) rounds otherwise. The k-means sums float32 rows, the partition's centroids float64 ones.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    counts = np.bincount(assign, minlength=k)
    sums = np.zeros((k, unit.shape[1]), dtype=unit.dtype)
    order = np.argsort(assign, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for j in range(int(counts.max(initial=0))):
        have = np.flatnonzero(counts > j)
        sums[have] += unit[order[starts[have] + j]]
    return sums, counts


def nearest(sims: Any, choices: int) -> Any:
    """Each row's ``choices`` most similar columns, most similar first, ties by column, without sorting whole rows.

    What ``np.argsort(-sims, axis=1, kind="stable")[:, :choices]`` gives (float32 ``sims``; others are sorted so): a
    column's key is its similarity's order-preserving bits (negated, so the most similar is least) above its index,
    distinct keys in the stable sort's order, of which a partition takes the least ``choices``.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    k = sims.shape[1]
    if choices >= k or sims.dtype != np.float32:
        return np.argsort(-sims, axis=1, kind="stable")[:, :choices]
    negated = -sims + np.float32(0.0)  # -0.0 becomes 0.0: equal to it, as the sort sees them
    bits = negated.view(np.uint32).astype(np.uint64)
    ordered = np.where(bits >> 31, ~bits & 0xFFFFFFFF, bits | 0x80000000)  # ascending as the floats are
    keys = (ordered << 32) | np.arange(k, dtype=np.uint64)
    least = np.partition(keys, choices - 1, axis=1)[:, :choices]
    least.sort(axis=1)
    return (least & 0xFFFFFFFF).astype(np.int64)


#: A balanced partition's largest cluster, as a multiple of the mean cluster size (:func:`balanced_assign`).
CLUSTER_CAP = 1.5
#: How many of its nearest clusters a row may go to before it takes the nearest one with room.
BALANCE_CHOICES = 8


def balanced_assign(sims: Any, cap: int) -> Any:
    """Each row's cluster: the nearest with room, no cluster over ``cap`` rows.

    Pairs (row, one of its :data:`BALANCE_CHOICES` nearest clusters) are taken best cosine first while the cluster holds fewer than ``cap`` rows; a row left over goes to the
    nearest cluster with room. Deterministic (ties by row, then cluster), and no cluster exceeds ``cap``.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    n, k = sims.shape
    choices = min(BALANCE_CHOICES, k)
    near = nearest(sims, choices)
    values = np.take_along_axis(sims, near, axis=1).reshape(-1)
    order = np.lexsort((near.reshape(-1), np.repeat(np.arange(n), choices), -values))
    taken, held, left = [-1] * n, [0] * k, n  # Python lists: a numpy scalar read costs more than the pair's test
    flat_rows, flat_clusters = np.repeat(np.arange(n), choices)[order], near.reshape(-1)[order]
    for row, cluster in zip(flat_rows.tolist(), flat_clusters.tolist(), strict=True):
        if taken[row] < 0 and held[cluster] < cap:
            taken[row] = cluster
            held[cluster] += 1
            left -= 1
            if not left:  # every row placed: the pairs left change nothing
                break
    assign = np.asarray(taken, dtype=np.int64)
    counts = np.asarray(held, dtype=np.int64)
    for row in np.flatnonzero(assign < 0).tolist():
        room = np.flatnonzero(counts < cap)
        cluster = int(room[np.argmax(sims[row, room])])
        assign[row] = cluster
        counts[cluster] += 1
    return assign


#: A k-means over more than :data:`SAMPLE_PER_CLUSTER` rows a cluster twice over runs on a sample of the tools
#: (:func:`partition`): between this many and twice as many rows a cluster (10,000 tools: 1 in 4).
SAMPLE_PER_CLUSTER = 24
#: Above this many tools the k-means iterates over every row again. There a query's probe reads about one cluster
#: (``probe_rows`` tools), so each centroid's quality shows in its bytes: at 100,000 tools a sample of 1 in 8 (or 1 in 4)
#: took a cold query from 300.4 / 396.2 KB p50 / max to 334.9 / 401.9 (326.6 / 438.6), over the 400 KB target
#: (docs/search.md, "The one-tool edit in the ninth session").
SAMPLE_MAX_TOOLS = 50_000


def sample_denominator(live: int, k: int) -> int:
    """1 in how many tools the k-means of a partitioned build samples (a power of two; 1: every tool).

    The largest power of two ``d`` that leaves at least :data:`SAMPLE_PER_CLUSTER` sampled rows a cluster: a fixed
    share of the tool ids' hashes (:func:`sampled`), so the sample changes only when a sampled tool does, or when a
    catalogue's size crosses a power of two. Above :data:`SAMPLE_MAX_TOOLS` tools: 1.
    """
    if live > SAMPLE_MAX_TOOLS:
        return 1
    ratio = live / max(1, SAMPLE_PER_CLUSTER * k)
    return 1 << math.floor(math.log2(ratio)) if ratio >= 2 else 1


def sampled(keys: list[str | None], denominator: int) -> list[int]:
    """The doc ids whose tool id's sha256 (its first 8 bytes) is a multiple of ``denominator``, in doc order."""
    return [
        i
        for i, key in enumerate(keys)
        if key is not None
        and int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") % denominator == 0
    ]


def partition(
    rows: Any,
    k: int,
    cap: int,
    keys: list[str | None] | None = None,
    memo: ToolMemo | None = None,
    unit: Any = None,
) -> Any:
    """Each row's cluster (an int array) for a partitioned build: :func:`kmeans`, its centroids from a stable sample.

    ``keys``: each doc's tool id (None for a hole). With enough tools (:func:`sample_denominator`), the k-means'
    iterations run over the rows of a sample chosen by their tool ids' hashes (:func:`sampled`), and every row is then
    assigned to the nearest centroid with room (:func:`balanced_assign`, ``cap``). The centroids are a function of
    the sample's rows alone: ``memo`` (the build's :class:`toolcat.build.memo.ToolMemo`) keeps them under the sha256 of
    those rows, so a one-tool edit of a tool outside the sample (3 edits in 4 at 10,000 tools) takes them from the last
    build instead of iterating again, and writes the bytes a build from nothing writes (docs/search.md, "The one-tool
    edit in the ninth session"). Fewer tools, or no ``keys``: every row is iterated over, as :func:`kmeans` does.
    ``unit``: :func:`unit_rows` of ``rows`` when the caller has them.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    live = len(rows) if keys is None else sum(key is not None for key in keys)
    denominator = 1 if keys is None else sample_denominator(live, k)
    chosen = sampled(keys, denominator) if keys is not None and denominator > 1 else []
    if len(chosen) < 2 * k:
        return kmeans(rows, k, cap=cap)
    unit = unit_rows(rows) if unit is None else unit
    sample = unit[np.asarray(chosen, dtype=np.int64)]
    sample_cap = math.ceil(CLUSTER_CAP * len(chosen) / k)
    head = f"kmeans-sample:{k}:{sample_cap}:{KMEANS_ITERATIONS}:{sample.shape[1]}:{len(chosen)}\0".encode()

    def make() -> str:
        return base64.b64encode(lloyd(sample, k, cap=sample_cap).astype("<f4").tobytes()).decode("ascii")

    text = memo.get("kmeans", sha256(head + sample.tobytes()), make) if memo is not None else make()
    centroids = np.frombuffer(base64.b64decode(text), dtype="<f4").reshape(k, -1)
    return np.asarray(balanced_assign(unit @ centroids.T, cap), dtype=np.int64)


#: The row table's fan-out: a page lists about (tools / ROW_FANOUT_DIVISOR)^(1/3) row files, a group as many pages, and
#: the directory every group. A query fetches, by path in one round, the directory, then for each lexical candidate
#: it needs a row of its group, its page and its file: the directory's entries are paid once and a group's and a
#: page's per candidate, so with about 8-16 distinct pages a query, three levels of about the cube root list the
#: fewest hashes (10,000 tools: 11 a page and a group, 83 groups; two levels listed 25 a page, 400 pages).
ROW_FANOUT_MIN, ROW_FANOUT_DIVISOR = 4, 8
#: The most buckets (folders) a row table's files lie in (:func:`row_bucket_size`): the meta names each one (16 hex
#: characters, about 8 bytes gzipped), and a one-tool edit rewrites the bucket of every row it changes (its own, and
#: those of the tools under its node, consecutive docs: one or two buckets).
ROW_BUCKETS = 32
#: Row files a page of the row table (``toolcat-vectors-10``): a power of two, each row file carrying the 3 sibling
#: digests of its path to the page's root, which its group lists (docs/search.md, "Proof paths instead of pages").
ROW_PROOF_PAGE = 8
#: Row groups a root of the meta's ``group_roots`` (``toolcat-vectors-11``): each group carries its 4 sibling digests
#: (docs/search.md, "Groups and cluster shards as proofs").
GROUPS_PER_ROOT = 16


def cluster_page_size(clusters: int) -> int:
    """Cluster shards a page of the meta's cluster table lists: about the square root of the clusters (at least 4).

    A query pays the meta's page refs (clusters / per_page) and a page per probed cluster (per_page hashes each):
    with 1-4 clusters a query the sum is least near the square root (10,000 tools: 10 a page, 100,000: 18).
    """
    return max(4, round(math.sqrt(clusters)))


def row_page_size(n_docs: int) -> int:
    """Row files per page, and pages per group, of the row table of a partitioned build of ``n_docs`` tools."""
    return max(ROW_FANOUT_MIN, round(math.pow(n_docs / ROW_FANOUT_DIVISOR, 1 / 3)))


def row_group_pages(n_docs: int) -> int:
    """Pages a group of the row table lists (``toolcat-vectors-10``: pages of :data:`ROW_PROOF_PAGE` files).

    A group covers about as many docs as a ``-9`` group of :func:`row_page_size` pages of as many files (121 at 10,000
    tools, 529 at 100,000): a query's candidates share its node rows.
    """
    return max(1, round(row_page_size(n_docs) ** 2 / ROW_PROOF_PAGE))


def row_bucket_size(n_docs: int, per_page: int, per_group: int | None = None) -> int:
    """Row files a bucket (a folder of its own) holds: whole groups, as few as keep the buckets under the cap.

    A group is ``per_group`` pages (``per_page`` unless given) of ``per_page`` files; the buckets are at most
    :data:`ROW_BUCKETS` (the meta lists one name a bucket, and every query reads it).
    """
    group = per_page * (per_page if per_group is None else per_group)
    groups = max(1, -(-n_docs // group))
    return group * -(-groups // ROW_BUCKETS)


class _Residuals:
    """A partitioned build's coding of rows (:func:`residual_codes`) against its centroids' int4 codes."""

    def __init__(self, centroid_codes: Any, centroids: Any, node_rows: Any) -> None:
        self.centroid_codes = centroid_codes
        self.node_rows = node_rows
        self.node_ref = nearest_centroids(node_rows, centroids)
        self._nodes: Coded | None = None

    def coded(self, rows: Any, cluster: int | Any) -> Coded:
        """``rows`` coded against centroid ``cluster`` (one for all, or one a row), to be sliced (:class:`Coded`)."""
        return self.coded_codes(*int4_codes(rows), cluster)

    def coded_codes(self, codes: Any, scales: list[float], cluster: int | Any) -> Coded:
        """:meth:`coded` of rows already made int4 codes and scales (:func:`int4_codes`)."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        refs = self.centroid_codes[np.broadcast_to(np.asarray(cluster, dtype=np.int64), (len(codes),))]
        k, text, wide = residual_codes(codes, refs)
        return Coded(scales, k, text, wide, codes.shape[1])

    def nodes(self, ids: list[int]) -> dict[str, Any]:
        """The ``nodes`` entry of a shard: node ``ids``, each one's reference centroid, and their rows' codes.

        Every node row is coded once (a row's codes depend on that row alone) and the entry takes its ids' slices.
        """
        if self._nodes is None:
            self._nodes = self.coded(self.node_rows, self.node_ref)
        return {"ids": ids, "clusters": [int(self.node_ref[i]) for i in ids], **self._nodes.take(ids)}


class _RowInputs:
    """What a partitioned build's cluster shards and row files are made of, hashed for :func:`memoised_buckets`.

    ``codes`` and ``scales``: every tool row's int4 codes and scale (:func:`int4_codes`); ``coder``: the centroids'
    codes and the node rows' coding. :meth:`key` hashes everything a bucket of files reads, so equal keys mean equal
    files.
    """

    def __init__(self, codes: Any, scales: list[float], coder: _Residuals) -> None:
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        self.codes, self.scales, self.coder = codes, scales, coder
        self._codes8 = np.asarray(codes, dtype=np.int8)
        self._scales8 = np.asarray(scales, dtype="<f8")
        self._centroids8 = np.asarray(coder.centroid_codes, dtype=np.int8)
        self._nodes: list[bytes] | None = None

    def _node_digests(self) -> list[bytes]:
        """Each node row's digest: its codes, scale, reference centroid and that centroid's codes."""
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        if self._nodes is None:
            codes, scales = int4_codes(self.coder.node_rows) if len(self.coder.node_rows) else (np.zeros((0, 0)), [])
            self._nodes = [
                hashlib.sha256(
                    np.asarray(codes[i], dtype=np.int8).tobytes()
                    + repr(scales[i]).encode()
                    + b":%d:" % int(ref)
                    + self._centroids8[int(ref)].tobytes()
                ).digest()
                for i, ref in enumerate(self.coder.node_ref)
            ]
        return self._nodes

    def key(
        self,
        kind: str,
        start: int,
        ids: list[int],
        clusters: Any,
        homes: list[list[int]],
        extra: Any,
        *,
        with_nodes: bool = True,
    ) -> str:
        """The sha256 of a bucket's inputs (rows ``ids``, ``clusters``, ancestors ``homes``, and ``extra``).

        Their rows' codes and scales, their centroids' codes, their ancestor nodes' rows (``with_nodes``: the files
        hold those rows) and ``extra`` (what else the bucket's files hold).
        """
        import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

        at = np.asarray(ids, dtype=np.int64)
        used = np.asarray(clusters, dtype=np.int64)
        digest = hashlib.sha256(f"{kind}:{start}:{len(ids)}:{self._codes8.shape[1]}\0".encode())
        digest.update(self._codes8[at].tobytes())
        digest.update(self._scales8[at].tobytes())
        digest.update(used.astype("<i8").tobytes())
        for cluster in sorted(set(used.tolist())):
            digest.update(b"%d:" % cluster + self._centroids8[cluster].tobytes())
        if with_nodes:
            nodes = self._node_digests()
            for node in sorted({node for row in homes for node in row}):
                digest.update(b"%d:" % node + nodes[node])
        digest.update(marshal.dumps(homes, 2))  # lists of ints
        digest.update(dumps(extra))  # canonical: a pointer read back from the memo lists its ref's keys sorted
        return digest.hexdigest()


def memoised_buckets(
    artifacts: ArtifactSet,
    kind: str,
    make: Callable[[int, int], list[bytes]],
    key_of: Callable[[int, int], str],
) -> Callable[[int, int], tuple[list[tuple[str, int]], list[bytes] | None]]:
    """The ``bucket`` of :func:`toolcat.build.contributors.index.shards.buckets_of` for files made a bucket at a time.

    ``make(start, end)`` gives the bytes of files ``start`` to ``end`` (excluded); ``key_of(start, end)`` the sha256 of
    everything they are made of. A bucket whose key the last build's memo (``artifacts.memo``, kind
    ``vectors.<kind>``) holds is not made: its files' hashes and sizes come from the memo, and the files themselves
    from the last build (carried: the same content under the same folder name). ``buckets_of`` then lays out the
    folders and pages exactly as ``bucketed_files`` does for the same files (``tests/build/test_vector_memo.py``).
    """

    def bucket(start: int, end: int) -> tuple[list[tuple[str, int]], list[bytes] | None]:
        made: list[list[bytes]] = []

        def files_of() -> list[list[Any]]:
            made.append(make(start, end))
            return [[sha256(data), len(data)] for data in made[0]]

        entries = artifacts.memo.get(f"vectors.{kind}", key_of(start, end), files_of)
        return [(str(digest), int(size)) for digest, size in entries], made[0] if made else None

    return bucket


def tool_keys(tools: list[Tool | None]) -> list[str | None]:
    """Each doc id's tool id (None for a hole): what :func:`partition` samples by."""
    return [None if tool is None else tool.id for tool in tools]


class Coded:
    """Rows coded by :meth:`_Residuals.coded`: each row's ``scale``, ``k``, characters of ``codes`` and ``wide`` codes.

    A row's coding depends on that row and its centroid alone, so a shard's entry is the slice of its rows (a wide
    code's place renumbered from the entry's first row).
    """

    def __init__(self, scales: list[float], k: list[int], text: str, wide: list[list[int]], dim: int) -> None:
        self.scales, self.k, self.text, self.dim = scales, k, text, dim
        self.width = -(-dim // 2)
        self.wide: dict[int, list[tuple[int, int]]] = {}
        for place, d in wide:
            self.wide.setdefault(place // dim, []).append((place % dim, d))

    def slice(self, first: int, end: int) -> dict[str, Any]:
        """Rows ``first`` to ``end`` (excluded): ``scale``, ``k``, ``codes`` and ``wide``."""
        return self.take(list(range(first, end)))

    def take(self, ids: list[int]) -> dict[str, Any]:
        """Rows ``ids``, in that order: ``scale``, ``k``, ``codes`` and ``wide``."""
        w, dim = self.width, self.dim
        return {
            "scale": [self.scales[i] for i in ids],
            "k": [self.k[i] for i in ids],
            "codes": "".join(self.text[i * w : (i + 1) * w] for i in ids),
            "wide": [[row * dim + j, d] for row, i in enumerate(ids) for j, d in self.wide.get(i, ())],
        }


def _write_rows(
    artifacts: ArtifactSet,
    inputs: _RowInputs,
    ancestors: list[list[int]],
    assign: Any,
    coder: _Residuals,
    docs: list[dict[str, Any] | None],
) -> dict[str, Any]:
    """Each tool's row as a file of its own (``vectors_shard`` of one row), paged; its ancestor nodes' rows in its group.

    The file also holds the tool's index document (``ids``: the doc id, ``docs``: the document, as the index's doc
    shard holds it; none where a delta segment deleted the document): a query reads the rows of its lexical
    candidates outside the probed clusters in the round that fetches its likely head's documents, and those
    candidates are most of that head when few lie in the probed clusters, so their files serve as their doc files
    and no doc shard (nor its page) is fetched for them (docs/search.md, "Doc shards a cold query reads").

    ``<folder>.<bucket>/r<doc>.json``: the row coded against its cluster's centroid (``cluster``,
    :func:`residual_codes`), as in its cluster shard (a reader gets the same row from either). The files lie in
    buckets of ``per_bucket`` consecutive docs (whole groups, :func:`row_bucket_size`), each bucket's folder named by
    the hash of its files' hashes (``buckets``, in the meta), so a one-tool edit writes the buckets of the rows it
    changed, not the whole table. Pages of :data:`ROW_PROOF_PAGE` files are no files (``toolcat-vectors-10``): each
    row file carries its Merkle path (``proof``, :func:`toolcat.format.vector_format.page_proofs`) to its page's root;
    groups (``<group_folder>/g<j>.json``, ``index_pages``) list ``per_group`` pages' roots (with each page's largest
    file) and the rows of the ancestor nodes of its docs (``nodes``: a query's candidates share their nodes); each
    group carries its Merkle path to a root the meta lists (``group_roots``, :data:`GROUPS_PER_ROOT` groups a root;
    ``toolcat-vectors-11``: no directory page). A reader fetches a row file by path together with its group, in one
    round, checks the group's path to its root and the row file's path to its page's root before use
    (:meth:`toolcat.reader.store.Store.fetch_json` of a proven ref).
    A candidate pays its file's 3 sibling digests instead of a page of 11 sha256 (docs/search.md, "Proof paths
    instead of pages").
    """

    def make(start: int, end: int) -> list[bytes]:
        coded = coder.coded_codes(inputs.codes[start:end], inputs.scales[start:end], assign[start:end])
        files = []
        for doc in range(start, end):
            cluster = int(assign[doc])
            body: dict[str, Any] = {
                "artifact": "vectors_shard",
                "part": "tools",
                "first": doc,
                "count": 1,
                "cluster": cluster,
                **coded.slice(doc - start, doc - start + 1),
                "ancestors": [ancestors[doc]],
            }
            record = docs[doc]
            if record is not None:
                body["ids"], body["docs"] = [doc], [record]
            files.append(dumps(body))
        return files

    def key_of(start: int, end: int) -> str:
        docs_at = list(range(start, end))
        # a row file lists its ancestors; their rows lie in its group (toolcat-vectors-9), not in the file
        return inputs.key(
            f"rows10:{ROW_PROOF_PAGE}",
            start,
            docs_at,
            assign[start:end],
            ancestors[start:end],
            docs[start:end],
            with_nodes=False,
        )

    n = len(ancestors)
    per_page, per_group = ROW_PROOF_PAGE, row_group_pages(n)
    per_bucket = row_bucket_size(n, per_page, per_group)
    stem = "vectors/tools.rows"
    # each page's root (its files' Merkle tree, toolcat-vectors-10), kept in the memo beside its bucket's files
    roots: dict[int, str] = {}
    bucket = _proven_buckets(artifacts, "vectors.rows", key_of, make, per_page, roots)
    folders, listing, files = buckets_of(
        artifacts, stem, "tools", "r", n, per_page, per_bucket, bucket, pages_inside=True
    )
    log.info("vectors: %d row files in %d buckets, %d bytes", n, len(folders), sum(size for _, size in files))
    # no page files (toolcat-vectors-10): a group lists its pages' roots (and each page's largest file, the bound a
    # reader fetches it by path with), and the rows of its docs' ancestor nodes, which a query's candidates share
    docs_a_group = per_page * per_group
    group_listing = [
        {
            "artifact": "index_pages",
            "part": "tools",
            "folder": listing[first]["folder"],
            "prefix": "p",
            "first": first,
            "files": [
                [roots[number], max(size for _, size in page["files"])]
                for number, page in enumerate(listing[first : first + per_group], first)
            ],
            "nodes": coder.nodes(
                sorted({node for row in ancestors[first * per_page : first * per_page + docs_a_group] for node in row})
            ),
        }
        for first in range(0, len(listing), per_group)
    ]
    groups, group_roots = proven_pages([dumps(group) for group in group_listing], GROUPS_PER_ROOT)
    # each group carries its path to a root the meta lists (toolcat-vectors-11): no directory a query must fetch
    group_folder, _ = paged_files(artifacts, "vectors", "tools.rowgroups", "tools", "g", groups, max(len(groups), 1))
    return {
        "folder": stem,
        "buckets": [folder[len(stem) + 1 :] for folder in folders],
        "per_bucket": per_bucket,
        "prefix": "r",
        "files": len(files),
        "per_page": per_page,
        "max_bytes": max((size for _, size in files), default=0),
        "group_folder": group_folder,
        "per_group": per_group,
        "group_max_bytes": max((len(data) for data in groups), default=0),
        "groups_per_root": GROUPS_PER_ROOT,
        "group_roots": group_roots,
    }


def _proven_buckets(
    artifacts: ArtifactSet,
    kind: str,
    key_of: Callable[[int, int], str],
    make: Callable[[int, int], list[bytes]],
    per_page: int,
    roots: dict[int, str],
) -> Callable[[int, int], tuple[list[tuple[str, int]], list[bytes] | None]]:
    """A :func:`buckets_of` bucket of proven files (row files, cluster shards), memoised under ``kind``.

    Files ``start`` to ``end`` are made by ``make`` only when the memo lacks ``key_of(start, end)``; each carries its
    Merkle path (:func:`proven_pages`), and each page's root is noted in ``roots`` by page number (the memo keeps the
    roots beside the files' sha256 and sizes, so carried files have their roots too).
    """

    def bucket(start: int, end: int) -> tuple[list[tuple[str, int]], list[bytes] | None]:
        made: list[list[bytes]] = []

        def files_of() -> dict[str, Any]:
            files, page_roots = proven_pages(make(start, end), per_page)
            made.append(files)
            return {"files": [[sha256(data), len(data)] for data in files], "roots": page_roots}

        entry = artifacts.memo.get(kind, key_of(start, end), files_of)
        for number, root in enumerate(entry["roots"], start // per_page):
            roots[number] = str(root)
        return [(str(digest), int(size)) for digest, size in entry["files"]], made[0] if made else None

    return bucket


def _write_partitioned(
    artifacts: ArtifactSet,
    rows: Any,
    ancestors: list[list[int]],
    node_rows: Any,
    docs: list[dict[str, Any] | None],
    keys: list[str | None] | None = None,
) -> dict[str, Any]:
    """The tools part as one shard per cluster (doc ids listed), the centroids in the meta, and the row table.

    The centroids are the mean of their members' unit rows (int4): a query probes the clusters whose centroid is
    nearest in direction. A cluster shard's rows are stored as residuals from a tree of references
    (:func:`tree_coded`: the centroid or a nearer row of the shard); a row file's from its centroid, a node row's
    from its nearest centroid (:func:`residual_codes`). Each cluster shard carries the rows of its tools' ancestor
    nodes too (the hierarchy term), so a query reads no node shard. The cluster shards are a proven table
    (``clusters``: ``<folder>/c<i>.json``, each carrying its Merkle path to its page's root, which the meta lists in
    ``roots``; ``counts`` each cluster's tools, which the probe needs; ``toolcat-vectors-11``: no page files), fetched
    by path; a folder a page (``folders``), so an edit writes again only the pages whose clusters it changed. A lexical candidate outside the
    probed clusters is scored by its own row, from the row table (:func:`_write_rows`), fetched with the
    candidates' doc shards.
    """
    import numpy as np  # noqa: PLC0415 - numpy is an optional extra: imported only on the path that needs it

    from ...engines.embedding import dequantize  # noqa: PLC0415 - numpy, the [search] extra

    n = len(rows)
    k = max(1, round(n**0.5))
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit = rows / np.where(norms > 0, norms, 1.0)  # unit_rows' when the rows are float32, as the cache's are
    same = unit if unit.dtype == np.float32 else None
    assign = partition(rows, k, math.ceil(CLUSTER_CAP * n / k), keys, artifacts.memo, same)
    sums, counts = ordered_sums(np.asarray(unit, dtype=np.float64), assign, k)
    centroids = (sums / np.maximum(counts, 1)[:, None]).astype(np.float32)
    data, scales = quantize(centroids)
    coder = _Residuals(unpacked(data, k, rows.shape[1]), dequantize(data, scales, rows.shape[1], "int4"), node_rows)
    codes, row_scales = int4_codes(rows)  # once: the cluster shards' tree coding and the row files' coding read them
    inputs = _RowInputs(codes, row_scales, coder)
    members = [[int(i) for i in np.flatnonzero(assign == cluster)] for cluster in range(k)]

    def make(start: int, end: int) -> list[bytes]:
        files = []
        for cluster in range(start, end):
            ids = members[cluster]
            homes = [ancestors[i] for i in ids]
            body: dict[str, Any] = {
                "artifact": "vectors_shard",
                "part": "tools",
                "cluster": cluster,
                "count": len(ids),
                "ids": ids,
                **tree_coded(codes, row_scales, ids, coder.centroid_codes[cluster]),
                "ancestors": homes,
                "nodes": coder.nodes(sorted({node for row in homes for node in row})),
            }
            files.append(dumps(body))
        return files

    def key_of(start: int, end: int) -> str:
        ids = [i for cluster in range(start, end) for i in members[cluster]]
        clusters = [c for c in range(start, end) for _ in members[c]]
        sizes = [[c, len(members[c])] for c in range(start, end)]
        return inputs.key("clusters", start, ids, np.asarray(clusters), [ancestors[i] for i in ids], sizes)

    per_page = cluster_page_size(k)
    # a folder a page, named by the hash of its files' hashes: a one-tool edit writes again the pages it changes; each
    # shard carries its Merkle path to its page's root, which the meta lists (toolcat-vectors-11: no page files)
    roots: dict[int, str] = {}
    clusters = _proven_buckets(artifacts, "vectors.clusters11", key_of, make, per_page, roots)
    folders, _, files = buckets_of(artifacts, "vectors/tools.clusters", "tools", "c", k, per_page, per_page, clusters)
    # the contributor's summary line counts whole shards only: a partitioned build's tables are counted here
    log.info("vectors: %d cluster shards, %d bytes", k, sum(size for _, size in files))
    table = {
        "folders": folders,
        "prefix": "c",
        "files": k,
        "per_page": per_page,
        "max_bytes": max(size for _, size in files),
        "counts": [int(c) for c in counts],
        "roots": [roots[number] for number in range(len(folders))],
    }
    return {
        "n_docs": n,
        "clusters": table,
        "partition": {
            "clusters": k,
            "nprobe": min(NPROBE, k),
            "probe_rows": PROBE_ROWS,
            "centroids": {"dtype": "int4", "codes": centroid_codes(coder.centroid_codes), "scale": scales},
            "residual": {
                "denominator": RESIDUAL_DENOMINATOR,
                "codes": "a row's int4 codes n = floor((c * k + denominator / 2) / denominator) + d, c the code of its"
                " reference and k the row's; the value is n / 7 * scale. The reference: a row file's centroid (cluster), a"
                " node row's centroid (nodes.clusters), a cluster shard's row's centroid (parents -1) or row parents[i] of"
                " the shard (decoded first). Two d"
                " a character, row-major, ceil(dim / 2) a row: character (a + 4) * 9 + b + 4 of the alphabet for d ="
                " a then b; a d outside -4..4 is 0 there and [row * dim + j, d] in wide. A centroid code n is"
                " character n + 32 of A-Za-z0-9-_, dimension by dimension (j * clusters + i)",
                "alphabet": PAIR_ALPHABET,
            },
        },
        "rows": _write_rows(artifacts, inputs, ancestors, assign, coder, docs),
    }


class EmbedProgress:
    """The vectors phase's progress (:mod:`toolcat.build.progress`) in texts: those cached, then each chunk embedded.

    The phase ends (``total`` of ``total``) once its files are written; until then it reports at most ``total - 1``.
    """

    def __init__(self, cache: VectorCache, texts: list[str]) -> None:
        self.cache = cache
        self.total = len(texts)
        self.start = sum(text_key(t) in cache.rows for t in texts) - cache.embedded
        self.advance()

    def advance(self, _chunk: int = 0) -> None:
        """Report the texts that have a row now (a :meth:`VectorCache.embed` ``progress`` callback)."""
        report("vectors", min(self.start + self.cache.embedded, max(self.total - 1, 0)), self.total)


def _tool_docs(
    tools: list[Tool | None], specs: dict[str, tuple[dict[str, Any], Ref]], artifacts: ArtifactSet
) -> list[dict[str, Any] | None]:
    """Each doc id's index document (``{"pointer": ...}``, the pointer the index's doc shards hold), None for a hole."""
    return [None if t is None else {"pointer": tool_pointer(t, specs[t.id][1], artifacts.memo)} for t in tools]


def contributor(spec: str) -> Contributor:
    """The build stage that embeds with the embedder ``spec`` names (loaded when the build runs)."""

    def contribute(
        catalog: CompiledCatalog, artifacts: ArtifactSet, specs: dict[str, tuple[dict[str, Any], Ref]]
    ) -> None:
        started = time.perf_counter()
        embedder = load_embedder(spec)
        tools, nodes = doc_order(catalog, artifacts)
        tool_texts = tool_embed_texts([t for t in tools if t is not None], catalog, artifacts.memo)
        node_texts = [node_embed_text(catalog.nodes[p], catalog) for p in nodes if p is not None]
        keys = [text_key(text) for text in (*tool_texts, *node_texts)]
        cache = vector_cache(embedder, artifacts.previous, keys)
        tally = EmbedProgress(cache, [*tool_texts, *node_texts])
        tool_rows = _with_holes(cache.embed(tool_texts, tally.advance), tools)
        ancestors = ancestor_rows(tools, nodes)
        node_rows = _with_holes(cache.embed(node_texts, tally.advance), nodes)
        threshold = partition_min()
        split = threshold is not None and len(tool_rows) > threshold
        parts = {
            "tools": _write_partitioned(
                artifacts, tool_rows, ancestors, node_rows, _tool_docs(tools, specs, artifacts), tool_keys(tools)
            )
            if split
            else _write_part(artifacts, "tools", tool_rows, ancestors)
        }
        parts["nodes"] = _write_part(artifacts, "nodes", node_rows)
        cache.save()
        artifacts.private[ROW_INDEX] = row_index(cache, keys)
        report("vectors", tally.total, tally.total)
        meta = {
            "artifact": "vectors_meta",
            "format": PARTITIONED_FORMAT if split else VECTORS_FORMAT,
            "model": embedder.describe(),
            "encoding": {
                "dtype": VECTORS_DTYPE,
                "value": "(n - 8) / 7 * scale (per row)",
                "rows": "base64 of 4-bit codes n, two a byte (first in the low nibble), row-major, rows padded to a byte",
            },
            "tools": parts["tools"],
            "nodes": parts["nodes"],
        }
        artifacts.manifest["vectors"] = artifacts.add_json("vectors", "meta", meta)
        size = sum(int(s["ref"]["bytes"]) for p in parts.values() for s in p.get("shards", []))
        log.info(
            "vectors (%s): %d tools, %d nodes, %d embedded (%d cached), %d bytes in %.1fs",
            spec,
            len(tool_texts),
            len(node_texts),
            cache.embedded,
            len(tool_texts) + len(node_texts) - cache.embedded,
            size,
            time.perf_counter() - started,
        )

    return contribute


VectorContributor = Callable[[CompiledCatalog, ArtifactSet, dict[str, tuple[dict[str, Any], Ref]]], None]
