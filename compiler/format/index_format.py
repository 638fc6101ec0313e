"""The search index's format version and its word filter, shared by the build and the reader (stdlib only).

:data:`INDEX_FORMAT` is written in the index meta (``format``) and changes whenever a reader of the previous format
could not read the new one correctly; a reader refuses another format with a "rebuild" reason.

The word filter (docs/search.md, "How a query is answered") is a Bloom filter of the words a part's words space
holds, kept in the index meta's words space entry (``filter``). It tells a reader, before any term shard is read,
which of a query's words the index does **not** hold: their character n-gram shards can then be fetched in the same
round as the other words' term shards, instead of a round later once their term shard said they were absent. A
filter never says a held word is absent; a word it wrongly says is held (a false positive, about
:data:`BITS_PER_WORD`'s 2%) costs that later round, as before, and never changes an answer.

The hash is FNV-1a (32 bits, over the word's UTF-8 bytes) followed by murmur3's finaliser, twice (two offset
bases), and the ``k`` probes are ``h1 + i * h2`` modulo the filter's bits (Kirsch and Mitzenmacher): integer
arithmetic the TypeScript reader (``js/src/search.ts``, ``wordFilterHas``) repeats bit for bit.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable
from typing import Any

from .vector_format import proven_ref

#: The index meta's ``format``. 2: the words space of each part carries a word ``filter``. 3: a paged chars space
#: carries one too, of its n-grams (an unknown word's n-grams the index lacks read no shard). 4: a paged doc table has
#: no page files: each doc shard carries its Merkle path to its page's root, which the meta lists (``doc_pages``'
#: ``roots`` instead of ``pages``; :func:`proven_docs`, ``vector_format.proven_body``).
INDEX_FORMAT = "toolcat-index-4"
#: The formats a reader reads: ``toolcat-index-3`` (doc pages listing their shards' sha256) and ``toolcat-index-2``
#: (no n-gram filter either) are read as before.
INDEX_FORMATS = ("toolcat-index-2", "toolcat-index-3", INDEX_FORMAT)
#: Bits of filter per word held; with the best number of probes (``round(BITS_PER_WORD * ln 2)``, 6) a word the
#: index lacks passes for a held one about 2% of the time.
BITS_PER_WORD = 8
FILTER_KIND = "bloom-fnv1a32"
_MASK = 0xFFFFFFFF
_BASES = (0x811C9DC5, 0x050C5D1F)


def _fmix(h: int) -> int:
    h ^= h >> 16
    h = (h * 0x85EBCA6B) & _MASK
    h ^= h >> 13
    h = (h * 0xC2B2AE35) & _MASK
    return h ^ (h >> 16)


def _hashes(word: str) -> tuple[int, int]:
    data = word.encode("utf-8")
    out = []
    for basis in _BASES:
        h = basis
        for byte in data:
            h = ((h ^ byte) * 0x01000193) & _MASK
        out.append(_fmix(h))
    return out[0], out[1] | 1


def _probes(word: str, bits: int, hashes: int) -> list[int]:
    h1, h2 = _hashes(word)
    return [(h1 + i * h2) % bits for i in range(hashes)]


def word_filter(words: Iterable[str]) -> dict[str, Any]:
    """The filter of ``words``: ``{kind, bits, hashes, data}`` (``data``: the bit array, base64, bit ``i`` of byte ``i // 8`` is ``1 << (i % 8)``)."""
    unique = sorted(set(words))
    bits = max(8, 8 * math.ceil(len(unique) * BITS_PER_WORD / 8))
    hashes = max(1, round(BITS_PER_WORD * math.log(2)))
    array = bytearray(bits // 8)
    for word in unique:
        for bit in _probes(word, bits, hashes):
            array[bit >> 3] |= 1 << (bit & 7)
    return {"kind": FILTER_KIND, "bits": bits, "hashes": hashes, "data": base64.b64encode(bytes(array)).decode("ascii")}


class WordFilter:
    """A decoded :func:`word_filter`: ``may_hold(word)`` is False only for a word the filter was not made with.

    Raises ValueError on a filter whose fields do not add up (another kind, a size that is not its data's).
    """

    def __init__(self, spec: dict[str, Any]) -> None:
        if spec.get("kind") != FILTER_KIND:
            msg = f"unknown word filter kind {spec.get('kind')!r}"
            raise ValueError(msg)
        self.bits = int(spec["bits"])
        self.hashes = int(spec["hashes"])
        self.array = base64.b64decode(str(spec["data"]), validate=True)
        if self.bits <= 0 or self.bits != 8 * len(self.array) or not 1 <= self.hashes <= 32:
            msg = f"word filter of {self.bits} bits, {self.hashes} hashes and {len(self.array)} bytes"
            raise ValueError(msg)

    def may_hold(self, word: str) -> bool:
        """False when ``word`` is surely not among the filter's words; True when it may be."""
        return all(self.array[bit >> 3] & (1 << (bit & 7)) for bit in _probes(word, self.bits, self.hashes))


def proven_doc(table: dict[str, Any], number: int) -> dict[str, Any]:
    """The proven ref ``{path, max_bytes, root, place, per_page}`` of doc shard ``number`` of a proven doc table.

    A ``toolcat-index-4`` paged doc table (``doc_pages`` with ``roots``): the shard is read by path and used once its
    path leads to its page's root (``Store.fetch_json``; ``vector_format.proven_ref``).
    """
    folder, prefix, per_page = str(table["folder"]), str(table["prefix"]), int(table["per_page"])
    return proven_ref(folder, prefix, number, table["max_bytes"], table["roots"], per_page)


def proven_docs(meta: dict[str, Any]) -> list[dict[str, Any]]:
    """The proven refs of every doc shard of an index meta's proven doc tables (for ``toolcat verify``, the mirror)."""
    out = []
    for part in ("tools", "nodes"):
        table = meta.get(part, {}).get("doc_pages") if isinstance(meta.get(part), dict) else None
        if isinstance(table, dict) and "roots" in table:
            out += [proven_doc(table, number) for number in range(int(table["files"]))]
    return out
