"""What proof paths instead of page files would save a cold find_tool (a replay of a build's host log, nothing built).

    python bench/bench_proof_layouts.py BUILD [--queries 36]

BUILD is a partitioned build of ``bench_cdn.py`` (``build10000-default``, ``build100000-default``) in
``toolcat-vectors-9`` (row pages listing sha256: the layout these replays start from; on a ``-10`` build, which has
its proofs already, only the clusters, docs and terms rows mean what they say; on a ``toolcat-index-4`` build, whose doc
shards carry theirs, not the docs rows either). Each of
``bench_cdn.queries(n)`` is asked cold through a fresh reader from a gzip host (:func:`bench_cdn.cdn`), and the files
its find_tool fetched are replayed against other layouts of the same tables, each file re-encoded and gzipped at
level 6 as the host sends it:

- **today**: the files as fetched (the bench's own figures);
- **proven** tables: a paged table's page files are dropped, and each of its files carries the sibling digests of
  its Merkle path up to its page's root (``log2(per_page)`` sha256 digests, 64 hex characters each, appended as a
  ``proof`` key), the root listed where the page's ref was (the meta, or a row group). A reader hashes the file
  without its proof, folds the path, and compares the root: the same integrity as today's sha256 a file, without
  the page's other digests. ``rows P/G``: the row table's pages of ``P`` files (a power of two) folded into the row
  files, groups of ``G`` pages listing the page roots and, as today, the rows of their docs' ancestor nodes (taken from
  the build's groups); ``groups``: each group carries its path to a root the meta holds, instead of the directory;
  ``clusters``, ``docs``, ``terms``: the cluster table's, the tools part's doc table's and the term tables' pages
  (the metas' page refs become roots: re-measured). The digests are pseudo-random (incompressible, as real ones);
- **128-bit listings**: today's row table with its pages', groups' and directory's sha256 cut to 32 hex characters;
- on a ``toolcat-vectors-10`` build, its own groups carrying their paths (``built_groups``: 0 for one root, else
  that many groups a root in the meta) instead of the directory, and its cluster pages as proofs (``clusters``, of
  ``cluster_page`` shards a page when given): what ``toolcat-vectors-11`` built (docs/search.md, "Groups and cluster
  shards as proofs"). Rows that re-prove the docs are skipped on a ``toolcat-index-4`` build.

The answers cannot differ (the same rows and documents reach the reader), so only bytes are replayed: KB p50 / p90 /
max and mean over the queries, the queries over the issue's target, and the five heaviest queries of today. File
counts and round trips are not (a proven table has fewer files, in the same rounds). docs/search.md, "Proof paths
instead of pages".
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cdn import TARGETS, HostLog, cdn, cold_find, queries

ROW_FILE = re.compile(r"vectors/tools\.rows\.\w+/r(\d+)\.json")
ROW_LISTING = re.compile(r"vectors/tools\.(rowgroups|rows\.\w+/p\d+)")
CLUSTER_PAGE = re.compile(r"vectors/tools\.clusterpages\.")
CLUSTER_SHARD = re.compile(r"vectors/tools\.clusters\.")
DOC_PAGE = re.compile(r"index/tools\.docs\.p\d+")
DOC_SHARD = re.compile(r"index/tools\.docs\.\w+/d\d+")
TERM_PAGE = re.compile(r"index/\w+\.(words|chars)\.p\d+")
TERM_SHARD = re.compile(r"index/\w+\.(words|chars)\.\w+/t\d+")


def gz(data: bytes) -> int:
    """Bytes on the wire from a gzip host (level 6)."""
    return len(gzip.compress(data, 6))


def dumps(value: Any) -> bytes:
    """The build's canonical JSON."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def depth(per_page: int) -> int:
    """Sibling digests on a path from a file to its page's root (a page padded to a power of two)."""
    return max(0, (per_page - 1).bit_length())


def digests(seed: str, count: int) -> str:
    """``count`` pseudo-random sha256 digests as hex (incompressible, as real ones)."""
    return "".join(hashlib.sha256(f"{seed}/{i}".encode()).hexdigest() for i in range(count))


def logged(build: Path, texts: list[str]) -> list[dict[str, Any]]:
    """Each query's cold find_tool from a gzip host: its bytes and the files it fetched (path, bytes sent)."""
    from toolcat.reader import Catalog  # noqa: PLC0415 - the tree under test

    out = []
    with cdn(build, 0.0) as (url, log):
        cold_find(url, "warm up the model", log)
        out.extend(one(url, text, log, Catalog) for text in texts)
    return out


def one(url: str, text: str, log: HostLog, catalog: Any) -> dict[str, Any]:
    """One fresh reader's find_tool of ``text``: bytes and files (after the open)."""
    log.take()
    with tempfile.TemporaryDirectory(prefix="toolcat-proofs-") as cache:
        reader = catalog.open(url, cache_dir=cache)
        opened = reader.stats()
        log.take(opened["requests"])
        reader.find_tool(text)
        stats = reader.stats()
    seen = log.take(stats["requests"] - opened["requests"])
    return {
        "text": text,
        "bytes": stats["bytes_downloaded"] - opened["bytes_downloaded"],
        "files": [(path.lstrip("/"), size) for _, _, size, path in seen],
    }


class Replay:
    """A build's tables re-encoded under a layout, file by file (memoised)."""

    def __init__(self, build: Path) -> None:
        self.build = build
        self.vmeta_path = next((build / "vectors").glob("meta.*.json"))
        self.imeta_path = next((build / "index").glob("meta.*.json"))
        self.vmeta = json.loads(self.vmeta_path.read_bytes())
        self.imeta = json.loads(self.imeta_path.read_bytes())
        self.rows = self.vmeta["tools"]["rows"]
        self.n = int(self.rows["files"])
        self.dim = int(self.vmeta["model"]["dim"])
        self._sizes: dict[tuple[str, int, int], int] = {}
        self._groups: dict[tuple[int, int, int, bool], int] = {}
        self._ancestors: dict[int, list[int]] = {}
        self._nodes = self._node_rows()

    def _node_rows(self) -> dict[int, tuple[int, int, float, str, list[tuple[int, int]]]]:
        """Each node row as the build's row groups hold it: (centroid, k, scale, codes, wide places)."""
        width, out = -(-self.dim // 2), {}
        for path in sorted((self.build / self.rows["group_folder"]).glob("g*.json")):
            nodes = json.loads(path.read_bytes())["nodes"]
            wide: dict[int, list[tuple[int, int]]] = {}
            for place, d in nodes.get("wide", []):
                wide.setdefault(place // self.dim, []).append((place % self.dim, d))
            for i, node in enumerate(nodes["ids"]):
                code = nodes["codes"][i * width : (i + 1) * width]
                out[node] = (nodes["clusters"][i], nodes["k"][i], nodes["scale"][i], code, wide.get(i, []))
        return out

    def folder(self, doc: int) -> str:
        """The row table's bucket folder of ``doc``."""
        return f"{self.rows['folder']}.{self.rows['buckets'][doc // int(self.rows['per_bucket'])]}"

    def proven(self, path: str, count: int, cut: int = 64) -> int:
        """Bytes on the wire of the file at ``path`` carrying ``count`` sibling digests (hex cut to ``cut``)."""
        key = (path, count, cut)
        if key not in self._sizes:
            data = (self.build / path).read_bytes()
            if count:
                proof = "".join(d[:cut] for d in re.findall(".{64}", digests(path, count)))
                data = data[:-1] + b',"proof":"' + proof.encode() + b'"}'
            self._sizes[key] = gz(data)
        return self._sizes[key]

    def ancestors(self, doc: int) -> list[int]:
        """Tool ``doc``'s ancestor nodes (from its row file)."""
        if doc not in self._ancestors:
            data = json.loads((self.build / f"{self.folder(doc)}/r{doc}.json").read_bytes())
            self._ancestors[doc] = [int(node) for node in data["ancestors"][0]]
        return self._ancestors[doc]

    def group(self, number: int, per_page: int, per_group: int, proof: bool) -> int:
        """Bytes of row group ``number``: its pages' roots and its docs' ancestor node rows (and its own path)."""
        key = (number, per_page, per_group, proof)
        if key not in self._groups:
            span = per_page * per_group
            docs = range(number * span, min(self.n, (number + 1) * span))
            ids = sorted({node for doc in docs for node in self.ancestors(doc)})
            rows = [self._nodes[i] for i in ids]
            nodes = {
                "ids": ids,
                "clusters": [r[0] for r in rows],
                "k": [r[1] for r in rows],
                "scale": [r[2] for r in rows],
                "codes": "".join(r[3] for r in rows),
                "wide": [[at * self.dim + j, d] for at, r in enumerate(rows) for j, d in r[4]],
            }
            roots = re.findall(".{64}", digests(f"g{number}", per_group))
            body: dict[str, Any] = {
                "artifact": "index_pages",
                "part": "tools",
                "folder": self.folder(number * span),
                "prefix": "p",
                "first": number * per_group,
                "files": [[root, self.rows["max_bytes"]] for root in roots],
                "nodes": nodes,
            }
            if proof:
                body["proof"] = digests(f"G{number}", depth(-(-self.n // span)))
            self._groups[key] = gz(dumps(body))
        return self._groups[key]

    def directory(self, groups: int) -> int:
        """Bytes of a row directory listing ``groups`` groups."""
        digest = re.findall(".{64}", digests("directory", groups))
        folder = self.rows["group_folder"]
        size = int(self.rows["group_max_bytes"])
        listing = {"artifact": "index_pages", "part": "tools", "folder": folder, "prefix": "g", "first": 0}
        return gz(dumps({**listing, "files": [[d, size] for d in digest]}))

    def built_group(self, path: str, per_root: int) -> int:
        """Bytes of a fetched row listing of a ``toolcat-vectors-10`` build when its groups carry their paths.

        The directory is not fetched (0); a group carries the sibling digests of its path to a root the meta lists,
        of ``per_root`` groups a root (0: one root for every group).
        """
        if path == self.rows["pages"]["path"]:
            return 0
        groups = -(-self.n // (int(self.rows["per_page"]) * int(self.rows["per_group"])))
        return self.proven(path, depth(per_root or groups))

    def meta_delta(self, layout: dict[str, Any]) -> int:
        """How much the two metas change when the proven tables' page refs become their roots."""
        if not any(layout.get(key) for key in ("docs", "terms", "clusters", "groups", "built_groups")):
            return 0
        before = gz(self.imeta_path.read_bytes()) + gz(self.vmeta_path.read_bytes())
        imeta, vmeta = json.loads(self.imeta_path.read_bytes()), json.loads(self.vmeta_path.read_bytes())
        if layout.get("docs"):
            pages = imeta["tools"]["doc_pages"]
            pages["pages"] = [ref["sha256"] for ref in pages["pages"]]
        if layout.get("terms"):
            for space in imeta["tools"]["spaces"]:
                if "term_pages" in space:
                    space["term_pages"]["pages"] = [ref["sha256"] for ref in space["term_pages"]["pages"]]
        if layout.get("clusters"):
            table = vmeta["tools"]["clusters"]
            table["pages"] = [ref["sha256"] for ref in table["pages"]]
            if "cluster_page" in layout:  # pages of another size: one root each, a folder name each
                pages = -(-int(table["files"]) // int(layout["cluster_page"]))
                table["pages"] = re.findall(".{64}", digests("cluster roots", pages))
                table["folders"] = [f"tools.clusters.{d[:16]}" for d in re.findall(".{64}", digests("folders", pages))]
        if layout.get("groups"):
            vmeta["tools"]["rows"]["pages"] = vmeta["tools"]["rows"]["pages"]["sha256"]
        if "built_groups" in layout:
            rows = vmeta["tools"]["rows"]
            groups = -(-self.n // (int(rows["per_page"]) * int(rows["per_group"])))
            per_root = int(layout["built_groups"]) or groups
            rows["pages"] = re.findall(".{64}", digests("group roots", -(-groups // per_root)))
        return gz(dumps(imeta)) + gz(dumps(vmeta)) - before

    def cost(self, query: dict[str, Any], layout: dict[str, Any]) -> int:
        """Bytes of one query's find_tool under ``layout`` (see the module's docstring)."""
        total, rows = self.meta_delta(layout), []
        clusters = int(layout.get("cluster_page") or self.vmeta["tools"]["clusters"]["per_page"])
        docs = int(self.imeta["tools"]["doc_pages"]["per_page"])
        for path, size in query["files"]:
            row = ROW_FILE.match(path)
            if row:
                rows.append(int(row.group(1)))
            elif ROW_LISTING.match(path) and "built_groups" in layout:
                total += self.built_group(path, int(layout["built_groups"]))
            elif ROW_LISTING.match(path):
                if layout.get("cut"):
                    listing = json.loads((self.build / path).read_bytes())
                    listing["files"] = [[digest[: layout["cut"]], size] for digest, size in listing["files"]]
                    total += gz(dumps(listing))
                elif "P" not in layout:
                    total += size
            elif layout.get("clusters") and CLUSTER_PAGE.match(path):
                continue
            elif layout.get("clusters") and CLUSTER_SHARD.match(path):
                total += self.proven(path, depth(clusters))
            elif layout.get("docs") and DOC_PAGE.match(path):
                continue
            elif layout.get("docs") and DOC_SHARD.match(path):
                total += self.proven(path, depth(docs))
            elif layout.get("terms") and TERM_PAGE.match(path):
                continue
            elif layout.get("terms") and TERM_SHARD.match(path):
                total += self.proven(path, depth(16))
            else:
                total += size
        if "P" not in layout:
            return total + sum(size for path, size in query["files"] if ROW_FILE.match(path))
        per_page, per_group = int(layout["P"]), int(layout["G"])
        span, groups = per_page * per_group, -(-self.n // (per_page * per_group))
        if rows and not layout.get("groups"):
            total += self.directory(groups)
        total += sum(self.group(g, per_page, per_group, bool(layout.get("groups"))) for g in {d // span for d in rows})
        return total + sum(self.proven(f"{self.folder(d)}/r{d}.json", depth(per_page)) for d in rows)


ALL = {"groups": True, "clusters": True, "docs": True, "terms": True}
LAYOUTS: list[tuple[str, dict[str, Any]]] = [
    ("today", {}),
    ("row table: 128-bit listings", {"cut": 32}),
    ("rows P8 G16", {"P": 8, "G": 16}),
    ("rows P16 G8", {"P": 16, "G": 8}),
    ("rows P8 G16 + groups", {"P": 8, "G": 16, "groups": True}),
    ("rows P8 G16 + groups + clusters", {"P": 8, "G": 16, "groups": True, "clusters": True}),
    ("rows P8 G16 + docs", {"P": 8, "G": 16, "docs": True}),
    ("rows P8 G16 + groups + clusters + docs", {"P": 8, "G": 16, "groups": True, "clusters": True, "docs": True}),
    ("every paged table (rows P8 G16, groups, clusters, docs, terms)", {"P": 8, "G": 16, **ALL}),
    ("clusters + docs + terms (rows as today)", {"clusters": True, "docs": True, "terms": True}),
    ("-10 build: groups carry their paths, one root", {"built_groups": 0}),
    ("-10 build: groups carry their paths, 16 a root", {"built_groups": 16}),
    ("-10 build: cluster pages as proofs", {"clusters": True}),
    ("-10 build: groups (one root) + cluster pages as proofs", {"built_groups": 0, "clusters": True}),
    ("-10 build: groups (16 a root) + cluster pages as proofs", {"built_groups": 16, "clusters": True}),
    ("-10 build: groups (one root) + cluster pages of 8", {"built_groups": 0, "clusters": True, "cluster_page": 8}),
    ("-10 build: groups (one root) + cluster pages of 16", {"built_groups": 0, "clusters": True, "cluster_page": 16}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("build", type=Path, help="a partitioned build of bench_cdn.py")
    parser.add_argument("--queries", type=int, default=36)
    args = parser.parse_args()
    replay = Replay(args.build)
    target = TARGETS.get(replay.n, (0, float("inf")))[1] * 1000
    log = logged(args.build, queries(args.queries))
    today = [replay.cost(query, {}) for query in log]
    if today != [query["bytes"] for query in log]:  # the replay of today's layout must be the bench's own bytes
        raise SystemExit("the replay of today's layout does not add up to the bytes the reader counted")
    heaviest = sorted(range(len(log)), key=lambda i: -today[i])[:5]
    names = "; ".join(log[i]["text"] for i in heaviest)
    print(f"| layout, {replay.n:,} tools, {len(log)} queries | KB p50 / p90 / max | mean | over the target | {names} |")
    print("|---|---|---|---|---|")
    proven_docs = "roots" in replay.imeta["tools"].get("doc_pages", {})
    for name, layout in LAYOUTS:
        if proven_docs and layout.get("docs"):  # a toolcat-index-4 build's doc shards carry their paths already
            continue
        if "group_roots" in replay.rows and any(k in layout for k in ("groups", "built_groups", "clusters")):
            continue  # a toolcat-vectors-11 build's groups and cluster shards carry theirs
        cost = [replay.cost(query, layout) for query in log]
        p90 = statistics.quantiles(cost, n=10, method="inclusive")[-1]
        print(
            f"| {name} | {statistics.median(cost) / 1000:.1f} / {p90 / 1000:.1f} / {max(cost) / 1000:.1f} |"
            f" {statistics.mean(cost) / 1000:.1f} | {sum(c > target for c in cost)} |"
            f" {', '.join(f'{cost[i] / 1000:.1f}' for i in heaviest)} |"
        )


if __name__ == "__main__":
    main()
