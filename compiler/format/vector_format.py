"""The partitioned vectors' format version and its character codes, shared by the build and the reader (stdlib only).

The build (``toolcat.build.contributors.vectors``: ``residual_codes``, ``centroid_codes``) writes with these
alphabets and the reader (``toolcat.reader.search.semantic``: ``residual_rows``, ``centroid_codes``) reads with them,
so the two cannot drift apart; the TypeScript reader (``js/src/semantic.ts``) repeats them, checked by its tests.
"""

from __future__ import annotations

import hashlib
from typing import Any

#: The vectors meta's ``format`` of a partitioned build (``toolcat-vectors-8``: clusters, centroids and a row table,
#: each row's int4 codes stored as differences from a prediction by a reference's codes, two a character: a row
#: file's and a node row's reference a centroid, a cluster shard's row's its centroid or another row of the shard
#: (``parents``); the centroids one character a code, dimension by dimension; each row file holding its tool's index
#: document too; the cluster shards a paged table, ``clusters``; the row table's files in buckets of consecutive
#: docs, a folder each, named in the meta, ``buckets``; ``toolcat-vectors-9``: the row files' ancestor node rows in
#: their group of the row table, ``nodes``, once for its docs, not in each row file; ``toolcat-vectors-10``: no row
#: pages, each row file carrying its Merkle path to its page's root, which its group lists, :func:`proven_body`;
#: ``toolcat-vectors-11``: no row directory nor cluster pages either, each group and each cluster shard carrying its
#: path to a root the meta lists, :func:`proven_group`, :func:`proven_cluster`). A reader refuses another with a
#: "rebuild" reason.
PARTITIONED_FORMAT = "toolcat-vectors-11"
#: The partitioned formats a reader reads: this one, ``toolcat-vectors-10`` (a row directory listing the groups' sha256,
#: cluster pages listing the cluster shards'), ``-9`` (row pages listing their files' sha256) and ``-8`` (each row file
#: holds its node rows, too).
READ_PARTITIONED_FORMATS = ("toolcat-vectors-8", "toolcat-vectors-9", "toolcat-vectors-10", PARTITIONED_FORMAT)
#: The partitioned formats whose row files carry proofs instead of being listed in row pages.
PROVEN_ROW_FORMATS = ("toolcat-vectors-10", PARTITIONED_FORMAT)
#: The partitioned formats whose row groups and cluster shards carry proofs to roots the meta lists (no directory, no
#: cluster pages).
PROVEN_TABLE_FORMATS = (PARTITIONED_FORMAT,)
#: A centroid's codes: character ``n`` of this alphabet (base64url's) is the int4 code ``n - RESIDUAL_ZERO``.
RESIDUAL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
RESIDUAL_ZERO = 32
#: A row's residual codes: two differences ``a`` and ``b`` (each in ``PAIR_LOW .. PAIR_LOW + PAIR_LEVELS - 1``) a
#: character, character ``(a - PAIR_LOW) * PAIR_LEVELS + b - PAIR_LOW`` of this alphabet (printable ASCII from ``#``,
#: without ``\\``: JSON writes them as they are).
PAIR_ALPHABET = "".join(chr(c) for c in range(0x23, 0x7F) if chr(c) != "\\")[:81]
PAIR_LEVELS, PAIR_LOW = 9, -4


#: How a proven file carries its Merkle path: its last key, written after the file's canonical JSON (``proof``: the
#: sibling digests from the leaf up, 64 hex characters each).
PROOF_KEY = b',"proof":"'
#: The digest of an empty place of a page (a last page with fewer files than ``per_page``).
EMPTY_LEAF = bytes(32)


def leaf_digest(body: bytes) -> bytes:
    """A proven file's leaf: sha256 over 0x00 and its bytes without the proof (RFC 9162's domain separation)."""
    return hashlib.sha256(b"\x00" + body).digest()


def node_digest(left: bytes, right: bytes) -> bytes:
    """An inner node of a page's tree: sha256 over 0x01 and its two children's digests."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def proof_depth(per_page: int) -> int:
    """Sibling digests on the path from a file to its page's root (a page padded to a power of two)."""
    return max(0, (per_page - 1).bit_length())


def page_proofs(bodies: list[bytes], per_page: int) -> tuple[str, list[str]]:
    """(the page's root, each file's proof), both hex, of one page's files (their bytes without proofs)."""
    level = [leaf_digest(body) for body in bodies] + [EMPTY_LEAF] * ((1 << proof_depth(per_page)) - len(bodies))
    paths: list[list[bytes]] = [[] for _ in bodies]
    places = list(range(len(bodies)))
    while len(level) > 1:
        for i, place in enumerate(places):
            paths[i].append(level[place ^ 1])
            places[i] = place // 2
        level = [node_digest(level[j], level[j + 1]) for j in range(0, len(level), 2)]
    return level[0].hex(), [b"".join(path).hex() for path in paths]


def with_proof(body: bytes, proof: str) -> bytes:
    """A file's canonical JSON object ``body`` with its proof as its last key."""
    return body[:-1] + PROOF_KEY + proof.encode("ascii") + b'"}'


def proven_pages(bodies: list[bytes], per_page: int) -> tuple[list[bytes], list[str]]:
    """(each file with its Merkle path to its page's root, each page's root) of ``bodies`` in pages of ``per_page``."""
    files: list[bytes] = []
    roots: list[str] = []
    for first in range(0, len(bodies), per_page):
        root, proofs = page_proofs(bodies[first : first + per_page], per_page)
        roots.append(root)
        files += [with_proof(body, proof) for body, proof in zip(bodies[first : first + per_page], proofs, strict=True)]
    return files, roots


def proven_body(data: bytes, root: str, place: int, per_page: int) -> bytes:
    """The bytes without the proof of a proven file (``data``), once its path leads to ``root`` from ``place``.

    Raises ValueError when it does not (or the file holds no well-formed proof): the file was not the build's.
    """
    at = data.rfind(PROOF_KEY)
    depth = proof_depth(per_page)
    proof = data[at + len(PROOF_KEY) : -2] if at > 0 else b""
    if at <= 0 or not data.endswith(b'"}') or len(proof) != 64 * depth or proof.strip(b"0123456789abcdef"):
        raise ValueError("a proven file without a well-formed proof")
    body = data[:at] + b"}"
    digest, siblings = leaf_digest(body), bytes.fromhex(proof.decode("ascii"))
    for level in range(depth):
        sibling = siblings[32 * level : 32 * level + 32]
        digest = node_digest(sibling, digest) if (place >> level) & 1 else node_digest(digest, sibling)
    if not 0 <= place < per_page or digest.hex() != root:
        raise ValueError("a proven file whose path does not lead to its page's root")
    return body


def proven_checked(data: bytes, ref: dict[str, Any]) -> bytes:
    """:func:`proven_body` of ``data`` read for a proven ref ``{path, max_bytes, root, place, per_page}``.

    Raises ValueError (a ref without those fields included) when the file's path does not lead to the ref's root.
    """
    return proven_body(data, str(ref["root"]), int(ref["place"]), int(ref["per_page"]))


def proven_key(ref: dict[str, Any]) -> str:
    """What a reader keeps a proven file's parsed JSON under, as a file by its sha256: ``<root>/<place>``."""
    return f"{ref.get('root')}/{ref.get('place')}"


def row_folder(table: dict[str, Any], doc: int) -> str:
    """The folder of the row table's bucket holding tool ``doc``'s row file (and its page): ``<folder>.<bucket>``."""
    return f"{table['folder']}.{table['buckets'][doc // int(table['per_bucket'])]}"


def proven_row(table: dict[str, Any], group: dict[str, Any], doc: int) -> dict[str, Any]:
    """The proven ref ``{path, max_bytes, root, place, per_page}`` of tool ``doc``'s row file.

    ``table`` is a ``toolcat-vectors-10`` vectors meta's ``rows``; ``group`` the group of the table that lists the
    root (and bound) of ``doc``'s page, from page ``first`` (``index_format.proven_doc`` does the same for a doc).
    """
    per_page = int(table["per_page"])
    number = doc // per_page
    root, bound = group["files"][number - int(group["first"])]
    return {
        "path": f"{row_folder(table, doc)}/{table['prefix']}{doc}.json",
        "max_bytes": int(bound),
        "root": str(root),
        "place": doc - number * per_page,
        "per_page": per_page,
    }


def proven_ref(
    folder: str, prefix: str, number: int, max_bytes: Any, roots: list[Any], per_page: int
) -> dict[str, Any]:
    """The proven ref ``{path, max_bytes, root, place, per_page}`` of file ``number`` of a proven table.

    ``<folder>/<prefix><number>.json``, on page ``number // per_page`` (whose root is ``roots[page]``), at place
    ``number mod per_page``: a ``toolcat-vectors-11`` row group or cluster shard, a ``toolcat-index-4`` doc shard.
    """
    return {
        "path": f"{folder}/{prefix}{number}.json",
        "max_bytes": int(max_bytes),
        "root": str(roots[number // per_page]),
        "place": number % per_page,
        "per_page": per_page,
    }


def proven_group(table: dict[str, Any], number: int) -> dict[str, Any]:
    """The proven ref of group ``number`` of a ``toolcat-vectors-11`` row table (``table``: the meta's ``rows``).

    ``<group_folder>/g<number>.json``, its root in ``group_roots`` (``groups_per_root`` groups a root).
    """
    roots, per_root = table["group_roots"], int(table["groups_per_root"])
    return proven_ref(str(table["group_folder"]), "g", number, table["group_max_bytes"], roots, per_root)


def proven_cluster(table: dict[str, Any], cluster: int) -> dict[str, Any]:
    """The proven ref of cluster ``cluster``'s shard in a ``toolcat-vectors-11`` cluster table (the meta's ``clusters``).

    ``<folders[page]>/<prefix><cluster>.json``, its page's root in ``roots`` (``per_page`` shards a page and a folder).
    """
    per_page = int(table["per_page"])
    folder = str(table["folders"][cluster // per_page])
    return proven_ref(folder, str(table["prefix"]), cluster, table["max_bytes"], table["roots"], per_page)


def proven_tables(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The proven refs of a ``toolcat-vectors-11`` meta's row groups and cluster shards (``toolcat verify``, the mirror).

    None for an older format (its directory and cluster pages are refs a walk follows).
    """
    if meta.get("format") not in PROVEN_TABLE_FORMATS or "partition" not in meta.get("tools", {}):
        return []
    rows, clusters = meta["tools"]["rows"], meta["tools"]["clusters"]
    groups = -(-int(rows["files"]) // (int(rows["per_page"]) * int(rows["per_group"])))
    return [proven_group(rows, j) for j in range(groups)] + [
        proven_cluster(clusters, c) for c in range(int(clusters["files"]))
    ]


def proven_rows(table: dict[str, Any], group: dict[str, Any]) -> list[dict[str, Any]]:
    """The proven ref (:func:`proven_row`) of each row file a group of a ``toolcat-vectors-10`` row table lists.

    For the walks that follow every file of a build (``toolcat verify``, the site's mirror).
    """
    per_page, files, first = int(table["per_page"]), int(table["files"]), int(group["first"])
    docs = range(first * per_page, min(files, (first + len(group["files"])) * per_page))
    return [proven_row(table, group, doc) for doc in docs]
