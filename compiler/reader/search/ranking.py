"""The search index engine: fetching a catalogue's index shards, decoding postings and scoring documents.

:class:`IndexReader` holds what :class:`~toolcat.reader.search.searcher.Searcher` builds its operations on: the
lazily fetched, sha256-cached index files, the decoded postings of a query's terms, the exhaustive
scores (held to scikit-learn by the parity tests) and the exact top-k search. The index format is
documented in docs/search.md.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections.abc import Callable, Iterable
from typing import Any

from ...format.analyzer import ANALYZER_VERSION, ANALYZERS, analyze_chars, analyze_words, word_ngrams
from ...format.envelope import ReaderError
from ...format.index_format import INDEX_FORMAT, INDEX_FORMATS, WordFilter, proven_doc
from ...format.refs import page_ref
from ...format.vector_format import proven_key

FetchJSON = Callable[[dict[str, Any]], Any]
Prefetch = Callable[[list[dict[str, Any]]], None]

#: A document is a hit when one of its words matches, or its score reaches this on character n-grams alone.
MIN_CHAR_ONLY_SCORE = 0.1
#: Margin on the top-k stopping test, far above the rounding of the running sum of bounds (~1e-16).
BOUND_SLACK = 1e-9
#: Up to this many scores the k-th largest is read from a sorted copy, above it from ``heapq.nlargest``.
KTH_BY_SORT = 2000
#: The most words a part remembers the words filter's answer for (:meth:`_Part.may_hold`); then it starts again.
MAX_REMEMBERED_WORDS = 4096


def query_weights(tokens: Iterable[str], idf: dict[str, float]) -> dict[str, float]:
    """The l2-normalised query vector scikit-learn's ``transform`` gives, over the terms with an idf."""
    counts: dict[str, int] = {}
    for token in tokens:
        if token in idf:
            counts[token] = counts.get(token, 0) + 1
    raw = {term: (1.0 + math.log(count)) * idf[term] for term, count in counts.items()}
    norm = math.sqrt(sum(v * v for v in raw.values()))
    return {term: v / norm for term, v in raw.items()} if norm > 0 else {}


class _Posting:
    """One term's decoded postings: idf, doc ids, weights, the largest weight, and a lazy doc → weight map.

    ``strict``: the ids rise strictly (each doc once), so walking the pairs reads what the map would hold.
    """

    __slots__ = ("_by_doc", "idf", "ids", "max_weight", "strict", "walked", "weights")

    def __init__(self, idf: float, ids: list[int], weights: list[float], *, strict: bool = False) -> None:
        self.idf = idf
        self.ids = ids
        self.weights = weights
        self.max_weight = max(weights, default=0.0)
        self.strict = strict
        #: Whether :meth:`walk_once` has said to walk the pairs instead of building the map.
        self.walked = False
        self._by_doc: dict[int, float] | None = None

    def by_doc(self) -> dict[int, float]:
        """Doc id → weight, built on first use."""
        if self._by_doc is None:
            self._by_doc = dict(zip(self.ids, self.weights, strict=True))
        return self._by_doc

    def walk_once(self) -> bool:
        """Whether to walk the pairs instead of the map this time: a strict posting without a map, asked first.

        One pass over the pairs costs less than building the map; a posting asked again gets its map.
        """
        if self._by_doc is not None or not self.strict or self.walked:
            return False
        self.walked = True
        return True

    def holding(self, docs: set[int]) -> set[int]:
        """The ones of ``docs`` this posting lists (from the map when it is built, else one pass over the ids)."""
        if self._by_doc is not None:
            return {doc for doc in docs if doc in self._by_doc}
        return docs.intersection(self.ids)


class _Part:
    """One indexed collection (tools or nodes): its spaces' term shards and its doc shards.

    A part may carry a delta segment (``delta``, written by an incremental build): its own term shards and
    stored docs, the base doc ids whose postings it voids (``masked``) and the ones that are gone (``deleted``).
    """

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.n_docs: int = meta["n_docs"]
        self.spaces: list[dict[str, Any]] = meta["spaces"]
        self.firsts = {s["name"]: s.get("firsts") or [shard["first"] for shard in s["shards"]] for s in self.spaces}
        #: The words the words space holds, as a filter: a query word it lacks needs no term shard (docs/search.md).
        self.words_filter = WordFilter(next(s for s in self.spaces if s["name"] == "words")["filter"])
        #: A paged chars space's filter of its n-grams (``toolcat-index-3``): an n-gram it lacks reads no shard.
        chars = next((s for s in self.spaces if s["name"] == "chars" and "filter" in s), None)
        self.grams_filter = None if chars is None else WordFilter(chars["filter"])
        self._held: dict[str, bool] = {}
        expand = meta.get("expand")
        #: The learned expansion (docs/search.md, "Learned term expansion"): term shards laid out like a space's.
        self.expand: dict[str, Any] | None = expand if isinstance(expand, dict) else None
        if self.expand is not None:
            self.expand = {**self.expand, "name": "expand"}
            self.firsts["expand"] = self.expand.get("firsts") or [shard["first"] for shard in self.expand["shards"]]
        self.doc_shard_size: int = meta["doc_shard_size"]
        self.doc_shards: list[dict[str, Any]] = meta.get("doc_shards", [])
        pages = meta.get("doc_pages")
        self.doc_pages: dict[str, Any] | None = pages if isinstance(pages, dict) else None
        if self.doc_pages is None and "doc_shards" not in meta:
            msg = "a part needs doc_shards or doc_pages"
            raise KeyError(msg)
        if self.doc_pages is not None:  # a page a shard's number names must exist: no IndexError at query time
            files, per_page = int(self.doc_pages["files"]), int(self.doc_pages["per_page"])
            listed = self.doc_pages["roots"] if "roots" in self.doc_pages else self.doc_pages["pages"]
            if files < 1 or per_page < 1 or len(listed) != -(-files // per_page):
                msg = f"a doc table of {files} shards in pages of {per_page} lists {len(listed)} pages"
                raise ValueError(msg)
        delta = meta.get("delta")
        self.delta: dict[str, Any] | None = delta if isinstance(delta, dict) else None
        self.masked: frozenset[int] = frozenset()
        self.deleted: frozenset[int] = frozenset()
        self.delta_spaces: dict[str, dict[str, Any]] = {}
        self.delta_firsts: dict[str, list[str]] = {}
        #: The file holding a doc other than its base doc shard (listing ``ids``, ``docs``): a delta segment's doc files,
        #: and the row files of a partitioned build's vectors that hold their tool's document (the searcher adds those).
        self.delta_doc_file: dict[int, dict[str, Any]] = {}
        if self.delta is not None:
            self.n_docs = int(self.delta["n_docs"])
            self.masked = frozenset(int(i) for i in self.delta["masked"])
            self.deleted = frozenset(int(i) for i in self.delta["deleted"])
            self.delta_spaces = {s["name"]: s for s in self.delta["spaces"]}
            self.delta_firsts = {name: [sh["first"] for sh in s["shards"]] for name, s in self.delta_spaces.items()}
            self.delta_doc_file = {int(i): f["ref"] for f in self.delta["docs"] for i in f["ids"]}

    def may_hold(self, word: str) -> bool:
        """The words filter's answer for ``word``, remembered (a query asks it of each word two or three times)."""
        held = self._held.get(word)
        if held is None:
            if len(self._held) >= MAX_REMEMBERED_WORDS:
                self._held.clear()
            held = self._held[word] = self.words_filter.may_hold(word)
        return held

    def may_hold_gram(self, gram: str) -> bool:
        """The chars space's filter's answer for ``gram`` (True when the space has none)."""
        return self.grams_filter is None or self.grams_filter.may_hold(gram)

    def delta_shard_ref(self, space: str, term: str) -> dict[str, Any] | None:
        """The ref of the delta term shard whose range covers ``term``."""
        if space not in self.delta_spaces:
            return None
        index = bisect.bisect_right(self.delta_firsts[space], term) - 1
        shards = self.delta_spaces[space]["shards"]
        if index < 0 or term > shards[index]["last"]:
            return None
        ref: dict[str, Any] = shards[index]["ref"]
        return ref


class IndexReader:
    """Reads and scores a built catalogue's search index; :class:`~toolcat.reader.search.searcher.Searcher` adds the operations.

    ``fetch_json(ref)`` returns the parsed, hash-verified JSON a ref points to; ``prefetch(refs)``, when
    given, brings several at once. Raises :class:`~toolcat.format.envelope.ReaderError` when the build has
    no index or one from another analyzer version.
    """

    def __init__(self, manifest: dict[str, Any], fetch_json: FetchJSON, prefetch: Prefetch | None = None) -> None:
        self.manifest = manifest
        self._fetch_json = fetch_json
        self._prefetch_fn = prefetch
        self._cache: dict[str, Any] = {}
        self._postings: dict[tuple[str, str, str], _Posting | None] = {}
        self._interned: dict[tuple[Any, ...], _Posting] = {}
        self._meta: dict[str, Any] | None = None
        self._parts: dict[str, _Part] = {}
        self._pending_pages: list[dict[str, Any]] = []
        self.bytes_read = 0

    # -- fetching ----------------------------------------------------------------------------

    def _fetch(self, ref: dict[str, Any]) -> Any:
        # a proven ref (toolcat-vectors-10's row files: Store.fetch_json) is known by its page root and place
        digest = ref["sha256"] if "root" not in ref else proven_key(ref)
        if digest not in self._cache:
            self._cache[digest] = self._fetch_json(ref)
            self.bytes_read += int(ref.get("bytes", 0))
        return self._cache[digest]

    def _part(self, name: str) -> _Part:
        if name not in self._parts:
            if self._meta is None:
                ref = self.manifest.get("index")
                if not isinstance(ref, dict):
                    raise ReaderError(
                        "UNAVAILABLE",
                        "this build has no search index",
                        hints=["Rebuild the catalogue with a toolcat that writes the index (manifest key 'index')."],
                        next_action={"op": "list", "args": {}},
                    )
                self._meta = self._fetch(ref)
                if self._meta.get("format") not in INDEX_FORMATS:
                    raise ReaderError(
                        "UNAVAILABLE",
                        "the search index was written in another format than this reader reads: rebuild the catalogue",
                        details={"index": self._meta.get("format"), "reader": INDEX_FORMAT},
                        hints=["Rebuild the catalogue with this toolcat (`toolcat build SRC OUT`), then search again."],
                    )
                if self._meta.get("analyzer", {}).get("version") != ANALYZER_VERSION:
                    raise ReaderError(
                        "UNAVAILABLE",
                        "the search index was built with another analyzer version",
                        details={"index": self._meta.get("analyzer", {}).get("version"), "reader": ANALYZER_VERSION},
                        hints=["Use a reader that matches the toolcat version that built the catalogue."],
                    )
            try:
                self._parts[name] = _Part(self._meta[name])
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise ReaderError(
                    "INTEGRITY",
                    f"the search index meta's {name!r} part is not what a build writes ({exc!r})",
                    details={"part": name},
                    hints=["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
                ) from None
        return self._parts[name]

    def _shard_ref(
        self, part: _Part, space: dict[str, Any], term: str, *, fetch_page: bool = True
    ) -> dict[str, Any] | None:
        """The ref of the one shard whose term range covers ``term`` (None when no shard does).

        In a paged space (``term_pages``) without ``fetch_page``, a page not yet read gives a pending ref
        (see :meth:`_paged_ref`).
        """
        index = bisect.bisect_right(part.firsts[space["name"]], term) - 1
        if index < 0:
            return None
        pages = space.get("term_pages")
        if pages is None:
            if term > space["shards"][index]["last"]:
                return None
            ref: dict[str, Any] = space["shards"][index]["ref"]
            return ref
        ref, page = self._paged_ref(pages, index, fetch_page=fetch_page)
        if page is not None and term > page["last"][index - int(page["first"])]:
            return None
        return ref

    def _paged_ref(
        self, pages: dict[str, Any], number: int, *, fetch_page: bool
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """``(ref, page)`` of file ``number`` of a paged table (docs/search.md, "Paged tables").

        Without ``fetch_page``, when its page is not read yet: a *pending* ref ``{path, max_bytes}`` and None.
        The file is then fetched by path in the same round as its page (noted in ``_pending_pages``), and
        checked against the page's sha256 before it is used (:meth:`toolcat.reader.store.Store.prefetch`).
        """
        listing = pages["pages"][number // int(pages["per_page"])]
        if not fetch_page and listing["sha256"] not in self._cache:
            self._pending_pages.append(listing)
            path = f"{pages['folder']}/{pages['prefix']}{number}.json"
            return {"path": path, "max_bytes": int(pages["max_bytes"])}, None
        page = self._fetch(listing)
        return page_ref(page, number - int(page["first"])), page

    def _entry(self, part: _Part, space: dict[str, Any], term: str) -> dict[str, Any] | None:
        """A term's stored entry, from the one shard whose range covers it (None when the index lacks it).

        A word the words space's filter says is absent is absent: no shard is read for it.
        """
        if space["name"] == "words" and not part.may_hold(term):
            return None
        if space["name"] == "chars" and not part.may_hold_gram(term):
            return None
        ref = self._shard_ref(part, space, term)
        if ref is None:
            return None
        entry: dict[str, Any] | None = self._fetch(ref)["terms"].get(term)
        return entry

    def _prefetch(self, refs: list[dict[str, Any] | None]) -> None:
        if self._prefetch_fn is not None:
            wanted = {str(r.get("sha256") or r.get("path")): r for r in refs if isinstance(r, dict)}  # each file once
            missing = [ref for ref in wanted.values() if ref.get("sha256") not in self._cache]
            if len(missing) > 1:
                self._prefetch_fn(missing)

    def _prefetch_query(self, part_name: str, query: str, extra: list[dict[str, Any] | None] | None = None) -> None:
        """Fetch the term shards ``query`` will read in one go (plus ``extra`` refs), before they are read one by one."""
        if self._prefetch_fn is None:
            return
        part = self._part(part_name)
        spaces = {space["name"]: space for space in part.spaces}
        words = list(dict.fromkeys(analyze_words(query)))
        self._pending_pages = []
        # A word the filter says the index lacks needs no term shard, and its n-grams' shards come in this round.
        held = [word for word in words if part.may_hold(word)]
        refs = [self._shard_ref(part, spaces["words"], word, fetch_page=False) for word in held] + list(extra or [])
        if part.meta.get("bundles"):
            absent = [
                gram for word in words if word not in held for gram in word_ngrams(word) if part.may_hold_gram(gram)
            ]
            refs += [self._shard_ref(part, spaces["chars"], gram, fetch_page=False) for gram in absent]
        if part.expand is not None:  # the expansion's shards come in the same round as the words'
            refs += [self._shard_ref(part, part.expand, word, fetch_page=False) for word in words]
        if part.delta is not None:  # the delta's shards of every query term come in the same round
            refs += [part.delta_shard_ref("words", word) for word in words]
            refs += [part.delta_shard_ref("chars", gram) for word in words for gram in word_ngrams(word)]
        if not part.meta.get("bundles"):
            grams = dict.fromkeys(analyze_chars(query))
            refs += [self._shard_ref(part, spaces["chars"], gram, fetch_page=False) for gram in grams]
        self._prefetch([*self._pending_pages, *refs])
        if part.meta.get("bundles"):  # the n-grams of the words the index does not know come from the chars shards
            # a word the filter let through that the index lacks after all (a false positive): a round later
            late = [word for word in held if self._entry(part, spaces["words"], word) is None]
            if late:
                self._pending_pages = []
                late_grams = [gram for word in late for gram in word_ngrams(word) if part.may_hold_gram(gram)]
                refs = [self._shard_ref(part, spaces["chars"], gram, fetch_page=False) for gram in late_grams]
                self._prefetch([*self._pending_pages, *refs])
            unknown = [word for word in words if word not in held or word in late]
            for gram in dict.fromkeys(g for word in unknown for g in word_ngrams(word) if part.may_hold_gram(g)):
                ref = self._shard_ref(part, spaces["chars"], gram)  # read what came by path now: fetched once
                if ref is not None:
                    self._fetch(ref)

    def _docs(self, part_name: str, hits: list[tuple[int, float, list[str]]]) -> list[dict[str, Any]]:
        """The stored documents of ``hits``, in order (over HTTP their doc shards are fetched together)."""
        part = self._part(part_name)
        self._pending_pages = []
        refs = [self._doc_ref(part, doc_id, fetch_page=False) for doc_id, _, _ in hits]
        self._prefetch([*self._pending_pages, *refs])
        return [self._doc(part, doc_id) for doc_id, _, _ in hits]

    def _pointed(
        self, hits: list[tuple[int, float, list[str]]], digits: int | None = None
    ) -> list[tuple[dict[str, Any], float, list[str]]]:
        """Tool hits as ``(pointer, score, matched terms)``, the score rounded to ``digits`` when given."""
        return [
            (doc["pointer"], score if digits is None else round(score, digits), terms)
            for doc, (_, score, terms) in zip(self._docs("tools", hits), hits, strict=True)
        ]

    def _decode(self, space_name: str, entry: dict[str, Any]) -> _Posting:
        gaps = entry["docs"]
        ids: list[int] = list(itertools.accumulate(gaps, initial=0))  # the running sums of the gaps
        del ids[0]
        strict = min(itertools.islice(gaps, 1, None), default=1) > 0
        posting = _Posting(float(entry["idf"]), ids, entry["w"], strict=strict)
        # Character n-grams of one word often have identical postings: share one object so that
        # the top-k search walks them once (with the query weights summed).
        content = (space_name, posting.idf, tuple(entry["docs"]), tuple(posting.weights))
        return self._interned.setdefault(content, posting)

    def _posting(self, part_name: str, part: _Part, space: dict[str, Any], term: str) -> _Posting | None:
        key = (part_name, space["name"], term)
        if key not in self._postings:
            entry = self._entry(part, space, term)
            posting = None if entry is None else self._decode(space["name"], entry)
            self._postings[key] = self._with_delta(part, space["name"], term, posting)
        return self._postings[key]

    def _with_delta(self, part: _Part, space_name: str, term: str, posting: _Posting | None) -> _Posting | None:
        """The base posting without the documents the delta voids, plus the delta's own (docs/search.md, "Segments")."""
        if part.delta is None:
            return posting
        ref = part.delta_shard_ref(space_name, term)
        entry = None if ref is None else self._fetch(ref)["terms"].get(term)
        pairs = [] if posting is None else list(zip(posting.ids, posting.weights, strict=True))
        kept = [(i, w) for i, w in pairs if i not in part.masked] if part.masked else pairs
        if entry is None and len(kept) == len(pairs):
            return posting
        idf = posting.idf if posting is not None else float(entry["idf"]) if entry is not None else 0.0
        if entry is not None:
            added = self._decode(space_name, entry)
            kept = sorted(kept + list(zip(added.ids, added.weights, strict=True)))
        if not kept:
            return None
        merged = _Posting(idf, [i for i, _ in kept], [w for _, w in kept])
        content = ("merged", space_name, merged.idf, tuple(merged.ids), tuple(merged.weights))
        return self._interned.setdefault(content, merged)

    def _bundled_ngrams(self, part_name: str, part: _Part, query: str) -> None:
        """Cache the n-gram postings of the query's known words from their bundles (no chars shard needed).

        A known word's bundle holds every n-gram of it that the index has, so its other n-grams are absent.
        """
        words = next(s for s in part.spaces if s["name"] == "words")
        for word in dict.fromkeys(analyze_words(query)):
            entry = self._entry(part, words, word)
            if entry is None:
                continue  # an unknown word: its n-grams come from the chars shards
            bundle = entry.get("chars", {})
            for gram in word_ngrams(word):
                key = (part_name, "chars", gram)
                if key in self._postings:
                    continue
                sub = bundle.get(gram)
                if sub is not None and "same" in sub:
                    sub = bundle[sub["same"]]
                posting = None if sub is None else self._decode("chars", sub)
                self._postings[key] = self._with_delta(part, "chars", gram, posting)

    def _space_terms(
        self, part_name: str, part: _Part, space: dict[str, Any], query: str
    ) -> list[tuple[str, float, _Posting]]:
        """The query's terms in one space that the index knows: (term, query weight, posting)."""
        if space["name"] == "chars" and part.meta.get("bundles"):
            self._bundled_ngrams(part_name, part, query)
        found: dict[str, _Posting] = {}
        tokens = ANALYZERS[space["name"]](query)
        for term in dict.fromkeys(tokens):
            posting = self._posting(part_name, part, space, term)
            if posting is not None:
                found[term] = posting
        weights = query_weights(tokens, {t: p.idf for t, p in found.items()})
        return [(term, q, found[term]) for term, q in weights.items()]

    def _expand_terms(self, part_name: str, query: str) -> list[tuple[str, float, _Posting]]:
        """The query's terms that have expansion postings: (term, query weight, posting), in query order.

        The weights are :func:`query_weights` with each term's stored query weight for the idf. The expansion
        follows the build's doc ids as they are (it is written whole each build), so no delta applies to it.
        """
        part = self._part(part_name)
        space = part.expand
        if space is None:
            return []
        tokens = analyze_words(query)
        found: dict[str, _Posting] = {}
        for term in dict.fromkeys(tokens):
            key = (part_name, "expand", term)
            if key not in self._postings:
                entry = self._entry(part, space, term)
                self._postings[key] = None if entry is None else self._decode("expand", entry)
            posting = self._postings[key]
            if posting is not None:
                found[term] = posting
        weights = query_weights(tokens, {t: p.idf for t, p in found.items()})
        return [(term, q, found[term]) for term, q in weights.items()]

    def _doc_ref(self, part: _Part, doc_id: int, *, fetch_page: bool = True) -> dict[str, Any]:
        """The ref of the file holding ``doc_id`` (a pending one, in a paged doc table, without ``fetch_page``)."""
        ref = part.delta_doc_file.get(doc_id)
        if ref is not None:
            return ref
        shard_no = doc_id // part.doc_shard_size
        if part.doc_pages is None:
            base: dict[str, Any] = part.doc_shards[shard_no]["ref"]
            return base
        if "roots" in part.doc_pages:  # toolcat-index-4: read by path, used once its path leads to its page's root
            return proven_doc(part.doc_pages, shard_no)
        return self._paged_ref(part.doc_pages, shard_no, fetch_page=fetch_page)[0]

    def _doc(self, part: _Part, doc_id: int) -> dict[str, Any]:
        shard = self._fetch(self._doc_ref(part, doc_id))
        position = shard["ids"].index(doc_id) if doc_id in part.delta_doc_file else doc_id - shard["first"]
        doc: dict[str, Any] = shard["docs"][position]
        return doc

    # -- scoring -----------------------------------------------------------------------------

    def scores(self, part_name: str, query: str) -> tuple[dict[int, float], dict[int, list[str]], dict[int, bool]]:
        """Every matching document's combined score, its matched word terms, and whether a word matched.

        Exhaustive: every posting of every query term is summed (the parity tests hold this to scikit-learn).
        """
        part = self._part(part_name)
        self._prefetch_query(part_name, query)
        total: dict[int, float] = {}
        matched: dict[int, list[str]] = {}
        for space in part.spaces:
            scale = float(space["weight"])
            for term, q, posting in self._space_terms(part_name, part, space, query):
                factor = scale * q
                for doc_id, w in zip(posting.ids, posting.weights, strict=True):
                    total[doc_id] = total.get(doc_id, 0.0) + factor * w
                if space["name"] == "words":
                    for doc_id in posting.ids:
                        matched.setdefault(doc_id, []).append(term)
        word_hit = {doc_id: doc_id in matched for doc_id in total}
        return total, matched, word_hit

    def _ranked(
        self, part_name: str, query: str, allowed: Callable[[int], bool] | None = None, limit: int | None = None
    ) -> list[tuple[int, float, list[str]]]:
        """Hits best first (ties by doc id); with ``limit``, only the best ``limit``, found by :meth:`_top_k`."""
        if limit is not None:
            return self._top_k(part_name, query, limit, allowed)
        total, matched, word_hit = self.scores(part_name, query)
        hits = [
            (doc_id, score, matched.get(doc_id, []))
            for doc_id, score in total.items()
            if (word_hit[doc_id] or score >= MIN_CHAR_ONLY_SCORE) and (allowed is None or allowed(doc_id))
        ]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits

    def _top_k(
        self, part_name: str, query: str, k: int, allowed: Callable[[int], bool] | None
    ) -> list[tuple[int, float, list[str]]]:
        """The exact top ``k`` hits, without summing the long postings of low-impact terms for every document.

        Terms are taken in decreasing upper bound (query weight x the term's largest document weight), term at a
        time. Once the k-th best score of a known hit exceeds the sum of the bounds still to come, no unseen
        document can reach the top k: the remaining terms only update the candidates already seen (and those
        that cannot reach the k-th score are dropped). Every document's terms are summed in the same order, so
        scores equal :meth:`scores` up to float rounding (~1e-16) and ties keep the doc-id order.
        """
        part = self._part(part_name)
        self._prefetch_query(part_name, query)
        factors: dict[int, tuple[float, str, _Posting]] = {}  # identical postings (see _posting) merged
        word_terms: list[tuple[str, _Posting]] = []
        for space in part.spaces:
            scale = float(space["weight"])
            for term, q, posting in self._space_terms(part_name, part, space, query):
                factor, first, _ = factors.get(id(posting), (0.0, term, posting))
                factors[id(posting)] = (factor + scale * q, first, posting)
                if space["name"] == "words":
                    word_terms.append((term, posting))
        terms = [(factor * posting.max_weight, factor, term, posting) for factor, term, posting in factors.values()]
        terms.sort(key=lambda t: (-t[0], t[2]))
        words = {id(posting) for _, posting in word_terms}
        total, word_docs, position, remaining, kth, kth_at = _leading_terms(terms, words, k, allowed)
        if position < len(terms):
            total = {d: s for d, s in total.items() if s + remaining + BOUND_SLACK >= kth}
            _trailing_terms(total, word_docs, terms[position:], words)
            return _best_hits(total, word_docs, word_terms, k)
        # every term summed: a k-th score taken after the last one is the final k-th best hit's (-1: maybe fewer hits)
        return _best_hits(total, word_docs, word_terms, k, kth if kth_at == len(terms) and kth != -1.0 else None)


_Term = tuple[float, float, str, _Posting]  # (upper bound, factor, term, posting), as _top_k orders them


def _leading_terms(
    terms: list[_Term], words: set[int], k: int, allowed: Callable[[int], bool] | None
) -> tuple[dict[int, float], set[int], int, float, float, int]:
    """:meth:`IndexReader._top_k`'s first pass: every posting summed, term after term, until no unseen doc can win.

    Returns (scores so far, docs a word matched, the first term not summed, its and later terms' bounds, the last
    k-th hit score taken, and how many terms were summed when it was taken).
    """
    remaining = sum(t[0] for t in terms)
    done = 0.0
    total: dict[int, float] = {}
    word_docs: set[int] = set()
    position = 0
    kth, kth_at = -1.0, -1
    while position < len(terms):
        bound, factor, _, posting = terms[position]
        position += 1
        remaining -= bound
        done += bound
        get = total.get
        if allowed is None:
            for doc_id, w in zip(posting.ids, posting.weights, strict=True):
                total[doc_id] = get(doc_id, 0.0) + factor * w
            if id(posting) in words:
                word_docs.update(posting.ids)
        else:
            for doc_id, w in zip(posting.ids, posting.weights, strict=True):
                if allowed(doc_id):
                    total[doc_id] = get(doc_id, 0.0) + factor * w
                    if id(posting) in words:
                        word_docs.add(doc_id)
        # No score can exceed the bounds summed so far, so the k-th is only worth computing past half-way.
        if done > remaining:
            kth, kth_at = _kth_hit_score(total, word_docs, k), position
            if kth > remaining + BOUND_SLACK:
                break
    return total, word_docs, position, remaining, kth, kth_at


def _trailing_terms(total: dict[int, float], word_docs: set[int], terms: list[_Term], words: set[int]) -> None:
    """:meth:`IndexReader._top_k`'s second pass: the remaining terms added to the docs already in ``total``.

    Each shared doc gets the same one addition whichever side is walked: the posting's pairs (a strict posting
    asked for the first time: no map to build), its map, or the docs.
    """
    for _, factor, _, posting in terms:
        is_word = id(posting) in words
        if posting.walk_once():
            _add_shared(total, word_docs, zip(posting.ids, posting.weights, strict=True), factor, is_word)
            continue
        by_doc = posting.by_doc()
        if len(by_doc) < len(total):
            _add_shared(total, word_docs, by_doc.items(), factor, is_word)
            continue
        for doc_id in total:
            weight = by_doc.get(doc_id)
            if weight is not None:
                total[doc_id] += factor * weight
                if is_word:
                    word_docs.add(doc_id)


def _add_shared(
    total: dict[int, float], word_docs: set[int], pairs: Iterable[tuple[int, float]], factor: float, is_word: bool
) -> None:
    """Add ``factor`` x weight to each doc of ``pairs`` already in ``total`` (and note a word's matches)."""
    for doc_id, value in pairs:
        if doc_id in total:
            total[doc_id] += factor * value
            if is_word:
                word_docs.add(doc_id)


def _best_hits(
    total: dict[int, float],
    word_docs: set[int],
    word_terms: list[tuple[str, _Posting]],
    k: int,
    kth: float | None = None,
) -> list[tuple[int, float, list[str]]]:
    """The best ``k`` hits of ``total`` (best first, ties by doc id), each with the query words it matched.

    ``kth``, when known, is the k-th best hit score of ``total`` as it is (:func:`_kth_hit_score`); only the hits
    scoring at least the k-th best can be among the top k, so only those are kept and sorted.
    """
    if kth is None:
        scores = [s for d, s in total.items() if d in word_docs or s >= MIN_CHAR_ONLY_SCORE]
        kth = _kth_largest(scores, k) if len(scores) > k else None
    if kth is None:  # at most k hits: every one
        hits = [(d, s) for d, s in total.items() if d in word_docs or s >= MIN_CHAR_ONLY_SCORE]
    else:
        hits = [(d, s) for d, s in total.items() if s >= kth and (d in word_docs or s >= MIN_CHAR_ONLY_SCORE)]
    hits.sort(key=lambda h: (-h[1], h[0]))
    top = hits[:k]
    docs = {d for d, _ in top}
    held = [(term, posting.holding(docs)) for term, posting in word_terms]
    return [(d, s, [term for term, matched in held if d in matched]) for d, s in top]


def _kth_hit_score(total: dict[int, float], word_docs: set[int], k: int) -> float:
    """The k-th best partial score among documents already known to be hits (-1 when fewer than k)."""
    scores = [s for d, s in total.items() if d in word_docs or s >= MIN_CHAR_ONLY_SCORE]
    if len(scores) < k:
        return -1.0
    return _kth_largest(scores, k)


def _kth_largest(scores: list[float], k: int) -> float:
    """The k-th largest of ``scores`` (at least k of them; the list may be reordered)."""
    if len(scores) > KTH_BY_SORT:
        return heapq.nlargest(k, scores)[-1]
    scores.sort()  # a C sort of a few thousand floats beats heapq.nlargest's Python loop (measured: 22 vs 50 us at 1,000)
    return scores[-k]
