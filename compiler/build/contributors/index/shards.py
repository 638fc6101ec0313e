"""The index's on-disk writer: term/doc shards and pages."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ....format.canonical import dumps, sha256
from ....format.vector_format import proven_pages
from ...artifacts import ArtifactSet

#: Spaces and their weights in the combined score ``sum(weight * cosine)``.
SPACE_WEIGHTS: dict[str, float] = {"words": 0.5, "chars": 0.5}


TERM_SHARD_BYTES = 24_000


#: Docs a shard while the meta lists every doc shard (small catalogues, and every nodes part).
DOC_SHARD_SIZE = 32


#: Docs a shard of a paged doc table (a tools part of :data:`PAGES_FROM` shards of :data:`DOC_SHARD_SIZE` or more):
#: a cold find_tool reads one or two docs of each shard it fetches (the fused head), so smaller shards send fewer
#: unused docs, for more hashes in the pages (docs/search.md, "Doc shards a cold query reads"). From
#: :data:`BIG_PAGED_FROM` documents on, :data:`BIG_PAGED_DOC_SHARD_SIZE`: there a cold query reads the docs of its
#: sure head alone (``toolcat.reader.search.semantic.SURE_HEAD_ABOVE``), and the pages' hashes would cost more.
PAGED_DOC_SHARD_SIZE = 4
BIG_PAGED_DOC_SHARD_SIZE = 8
BIG_PAGED_FROM = 50_000


#: From this many term shards in a space (or tool doc shards) on, the meta points to pages of :data:`PAGE_SIZE`
#: file hashes instead of holding a ref per file (docs/search.md, "Paged tables").
PAGES_FROM = 64


PAGE_SIZE = 64


#: Term shards a page of a paged term table (:data:`PAGE_SIZE` for doc tables): a cold query reads the page of each term shard
#: it needs, 5 to 10 pages for as many shards spread over the terms, so small pages send fewer unneeded hashes for a
#: few more page refs in the meta (10,000 tools, 36 queries: term shards and their pages 27.9 -> 23.9 KB a query, the
#: meta 6.2 -> 6.8 KB with 16; docs/search.md, "Doc shards a cold query reads").
TERM_PAGE_SIZE = 16


def _entry_cost(term: str, entry: dict[str, Any]) -> int:
    cost = len(term) + 24 + 14 * len(entry.get("docs", ()))
    for gram, sub in entry.get("chars", {}).items():
        cost += _entry_cost(gram, sub)
    return cost


def _write_space(
    artifacts: ArtifactSet,
    part: str,
    name: str,
    entries: dict[str, dict[str, Any]],
    stem: str | None = None,
    *,
    pageable: bool = True,
    weight: float | None = None,
) -> dict[str, Any]:
    """Write one space's term shards (sorted term ranges of about :data:`TERM_SHARD_BYTES`); its meta entry.

    From :data:`PAGES_FROM` shards on (and ``pageable``), the meta keeps each shard's first term and
    ``term_pages`` (:func:`_write_pages`) instead of a ref per shard.
    """
    batches: list[dict[str, Any]] = []
    batch: dict[str, Any] = {}
    size = 0
    for term in sorted(entries):
        entry = entries[term]
        cost = _entry_cost(term, entry)
        if batch and size + cost > TERM_SHARD_BYTES:
            batches.append(batch)
            batch, size = {}, 0
        batch[term] = entry
        size += cost
    if batch:
        batches.append(batch)
    meta: dict[str, Any] = {
        "name": name,
        "weight": SPACE_WEIGHTS[name] if weight is None else weight,
        "terms": len(entries),
    }
    files = [dumps({"artifact": "index_terms", "part": part, "space": name, "terms": b}) for b in batches]
    if pageable and len(files) >= PAGES_FROM:
        meta["firsts"] = [min(b) for b in batches]
        meta["term_pages"] = _write_pages(
            artifacts,
            part,
            f"{stem or part}.{name}",
            "t",
            files,
            [max(b) for b in batches],
            per_page=TERM_PAGE_SIZE,
        )
        return meta
    meta["shards"] = [
        {"first": min(b), "last": max(b), "ref": artifacts.add("index", f"{stem or part}.{name}.t{i}", ".json", data)}
        for i, (b, data) in enumerate(zip(batches, files, strict=True))
    ]
    return meta


def doc_layout(part: str, n_docs: int) -> tuple[int, int | None]:
    """``(docs a shard, shards a page)`` of a part's doc table; the second is None when the meta lists every shard.

    A tools part that would have :data:`PAGES_FROM` shards of :data:`DOC_SHARD_SIZE` docs or more is paged, in
    shards of :data:`PAGED_DOC_SHARD_SIZE` docs (:data:`BIG_PAGED_DOC_SHARD_SIZE` from :data:`BIG_PAGED_FROM`), and pages of the power of two at or above √shards (at least
    :data:`PAGE_SIZE`): the meta's page refs and a page's hashes then grow alike as catalogues grow.
    """
    if part != "tools" or -(-n_docs // DOC_SHARD_SIZE) < PAGES_FROM:
        return DOC_SHARD_SIZE, None
    size = PAGED_DOC_SHARD_SIZE if n_docs < BIG_PAGED_FROM else BIG_PAGED_DOC_SHARD_SIZE
    shards = -(-n_docs // size)
    per_page = max(PAGE_SIZE, 1 << math.isqrt(shards - 1).bit_length())
    return size, per_page


def _write_docs(artifacts: ArtifactSet, part: str, docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The doc shards; the meta keys that reach them (``doc_shard_size``, and ``doc_shards`` or ``doc_pages``)."""
    size, per_page = doc_layout(part, len(docs))
    shards: list[tuple[int, int, bytes]] = []
    for first in range(0, len(docs), size):
        chunk = docs[first : first + size]
        obj = {"artifact": "index_docs", "part": part, "first": first, "docs": chunk}
        shards.append((first, len(chunk), dumps(obj)))
    if per_page is not None:
        return {
            "doc_shard_size": size,
            "doc_pages": _write_proven(artifacts, part, [data for _, _, data in shards], per_page),
        }
    out = []
    for number, (first, count, data) in enumerate(shards):
        ref = artifacts.add("index", f"{part}.d{number}", ".json", data)
        shard: dict[str, Any] = {"first": first, "count": count, "ref": ref}
        if part == "nodes":
            shard["first_path"] = docs[first]["path"]
        out.append(shard)
    return {"doc_shard_size": size, "doc_shards": out}


def _write_proven(artifacts: ArtifactSet, part: str, files: list[bytes], per_page: int) -> dict[str, Any]:
    """A paged doc table without page files (``toolcat-index-4``): its shards carry their paths, the meta the roots.

    File ``i`` is ``<folder>/d<i>.json``, carrying its Merkle path to its page's root (``vector_format.page_proofs``,
    ``with_proof``); the meta lists the pages' roots (``roots``) where it listed the pages' refs.

    A cold query reads a few shards of each page it touches: their paths (6 digests with pages of 64) cost less than
    the pages' 64 sha256 (docs/search.md, "Doc shards as proofs").
    """
    proven, roots = proven_pages(files, per_page)
    folder, _ = paged_files(artifacts, "index", f"{part}.docs", part, "d", proven, per_page)
    return {
        "folder": folder,
        "prefix": "d",
        "files": len(proven),
        "per_page": per_page,
        "max_bytes": max(len(data) for data in proven),
        "roots": roots,
    }


def paged_files(
    artifacts: ArtifactSet, root: str, stem: str, part: str, prefix: str, files: list[bytes], per_page: int
) -> tuple[str, list[dict[str, Any]]]:
    """``files`` as ``<root>/<stem>.<h>/<prefix><i>.json`` and the ``index_pages`` objects that list them.

    One folder for all (:func:`bucketed_files` with one bucket), named by the hash of every file's hash, so its files
    never change once published; each page lists ``per_page`` files (their sha256 and size) from its ``first``. The
    caller writes the pages.
    """
    folders, pages = bucketed_files(artifacts, f"{root}/{stem}", part, prefix, files, per_page, max(len(files), 1))
    return (folders[0] if folders else f"{root}/{stem}.{sha256(b'')[:16]}"), pages


def bucketed_files(
    artifacts: ArtifactSet,
    stem: str,
    part: str,
    prefix: str,
    files: list[bytes],
    per_page: int,
    per_bucket: int,
    *,
    pages_inside: bool = False,
) -> tuple[list[str], list[dict[str, Any]]]:
    """(each bucket's folder, the ``index_pages`` objects) of ``files`` as ``<stem>.<h>/<prefix><i>.json``.

    The files lie in buckets of ``per_bucket`` consecutive files (a multiple of ``per_page``, or all of them), each
    a folder named by the hash of its files' hashes, so an edit renames only the buckets whose files it changes; each
    page lists ``per_page`` files (their sha256 and size) from its ``first``, its ``folder`` its bucket's. The caller
    writes the pages; ``pages_inside``: it writes each as ``p<i>.json`` in its bucket's folder, whose name then also
    hashes the bucket's first file and ``per_page`` (what those pages hold besides the hashes).
    """

    def bucket(start: int, end: int) -> tuple[list[tuple[str, int]], list[bytes] | None]:
        return [(sha256(data), len(data)) for data in files[start:end]], files[start:end]

    folders, pages, _ = buckets_of(
        artifacts, stem, part, prefix, len(files), per_page, per_bucket, bucket, pages_inside=pages_inside
    )
    return folders, pages


def buckets_of(
    artifacts: ArtifactSet,
    stem: str,
    part: str,
    prefix: str,
    n: int,
    per_page: int,
    per_bucket: int,
    bucket: Callable[[int, int], tuple[list[tuple[str, int]], list[bytes] | None]],
    *,
    pages_inside: bool = False,
) -> tuple[list[str], list[dict[str, Any]], list[tuple[str, int]]]:
    """:func:`bucketed_files` of ``n`` files given a bucket at a time; also returns each file's sha256 and size.

    ``bucket(start, end)``: the sha256 and size of files ``start`` to ``end`` (excluded), and their bytes, or None
    when the last build's files are carried (the same content under the same folder name: a memo knew them).
    """
    folders: list[str] = []
    pages: list[dict[str, Any]] = []
    listed: list[tuple[str, int]] = []
    for start in range(0, n, per_bucket):
        end = min(start + per_bucket, n)
        entries, made = bucket(start, end)
        salt = f"{start}:{per_page}:" if pages_inside else ""
        folder = f"{stem}.{sha256((salt + ''.join(digest for digest, _ in entries)).encode())[:16]}"
        folders.append(folder)
        for number, (digest, size) in enumerate(entries, start):
            path = f"{folder}/{prefix}{number}.json"
            if made is not None:
                artifacts.files[path] = made[number - start]
            else:
                artifacts.carry({"path": path, "sha256": digest, "bytes": size})
            listed.append((digest, size))
        for first in range(start, end, per_page):
            files_listed = [[digest, size] for digest, size in listed[first : min(first + per_page, end)]]
            pages.append(
                {
                    "artifact": "index_pages",
                    "part": part,
                    "folder": folder,
                    "prefix": prefix,
                    "first": first,
                    "files": files_listed,
                }
            )
    return folders, pages, listed


def _write_pages(
    artifacts: ArtifactSet,
    part: str,
    stem: str,
    prefix: str,
    files: list[bytes],
    lasts: list[str] | None = None,
    *,
    per_page: int | None = None,
) -> dict[str, Any]:
    """A big table of files: ``<folder>/<prefix><i>.json``, their sha256 and size in pages the meta points to.

    The meta then holds one ref per :data:`PAGE_SIZE` files instead of one per file, so it stays small as
    catalogues grow. The folder is named by the hash of every file's hash, so its files never change once
    published; a reader fetches a file together with its page and checks it against the page before use.
    ``lasts`` (term shards): each file's last term, kept in its page. ``per_page``: files a page
    (:data:`PAGE_SIZE` unless given).
    """
    per_page = per_page or PAGE_SIZE
    folder, listing = paged_files(artifacts, "index", stem, part, prefix, files, per_page)
    pages = []
    for number, page in enumerate(listing):
        if lasts is not None:
            page["last"] = lasts[page["first"] : page["first"] + per_page]
        pages.append(artifacts.add_json("index", f"{stem}.p{number}", page))
    return {
        "folder": folder,
        "prefix": prefix,
        "files": len(files),
        "per_page": per_page,
        "max_bytes": max(len(data) for data in files),
        "pages": pages,
    }
