"""Search a built catalogue in plain Python: the analyzer the build used, and the ranked operations.

The build (:mod:`toolcat.index`) fits scikit-learn's ``TfidfVectorizer`` with the analyzers
defined here, so a query is tokenised exactly as the documents were. The index is stored as
*spaces* (``words``, ``chars``), each a TF-IDF model of its own; the score of a document is
``sum(space.weight * cosine_space(query, doc))``, where each cosine is what scikit-learn
computes for ``sublinear_tf=True, norm="l2", smooth_idf=True``. Postings hold the documents'
l2-normalised weights, so a query only needs the term shards of its own words (each word entry
bundles its own character n-grams; only unknown words need the chars shards), and then the doc
shards of its best hits, found by an exact top-k search. The format is documented in docs/search.md.
"""

from __future__ import annotations

import bisect
import difflib
import heapq
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from .checks import check_limit, cursor_key, decode_cursor, encode_cursor, node_path
from .envelope import ReaderError

FetchJSON = Callable[[dict[str, Any]], Any]
Prefetch = Callable[[list[dict[str, Any]]], None]

#: Runs of letters and digits; everything else separates tokens (so ``s3.file_read`` → s3 file read).
WORD_PATTERN = re.compile(r"[^\W_]+")
#: Splits identifiers: ``getHTTPResponse2`` → get HTTP Response 2.
CAMEL_PATTERN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
STOP_WORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "could",
        "do",
        "does",
        "for",
        "from",
        "has",
        "have",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "me",
        "my",
        "of",
        "on",
        "or",
        "our",
        "please",
        "so",
        "that",
        "the",
        "their",
        "them",
        "then",
        "there",
        "these",
        "this",
        "to",
        "us",
        "was",
        "we",
        "what",
        "when",
        "where",
        "which",
        "who",
        "will",
        "with",
        "would",
        "you",
        "your",
    ]
)
#: Only 4-grams: as good as 3- to 5-grams on MetaTool and BFCL (docs/search.md) with a third of the terms.
CHAR_NGRAMS = (4, 4)
#: ``s3``, ``ec2``, ``v2``, ``mp3``: kept whole as well as split.
SHORT_ALNUM = re.compile(r"(?=[^\W_]*[^\W\d_])(?=[^\W_]*\d)[^\W_]+")
SHORT_TOKEN_CHARS = 4
ANALYZER_VERSION = "toolcat-analyzer-2"
#: A document is a hit when one of its words matches, or its score reaches this on character n-grams alone.
MIN_CHAR_ONLY_SCORE = 0.1
#: Margin on the top-k stopping test, far above the rounding of the running sum of bounds (~1e-16).
BOUND_SLACK = 1e-9


def stem(word: str) -> str:
    """A small deterministic suffix stemmer: plurals, -ing, -ed and a final -e (``changes`` → ``chang``)."""
    if len(word) <= 3 or not word.isalpha():
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    base = word
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        base = word[:-1]
    for suffix in ("ing", "ed"):
        if base.endswith(suffix) and len(base) - len(suffix) >= 3:
            root = base[: -len(suffix)]
            if root[-1] == root[-2] and root[-1] not in "lsz":
                root = root[:-1]
            return root
    if base.endswith("e") and len(base) > 4:
        base = base[:-1]
    return base


def analyze_words(text: str) -> list[str]:
    """Word terms: split on non-alphanumerics and identifier case, lowercase, drop stop words, stem.

    A short token mixing letters and digits (``s3``, ``ec2``, ``v2``) is kept whole, followed by its parts.
    """
    out: list[str] = []
    for token in WORD_PATTERN.findall(text):
        parts = CAMEL_PATTERN.findall(token)
        if len(parts) > 1 and len(token) <= SHORT_TOKEN_CHARS and SHORT_ALNUM.fullmatch(token):
            out.append(token.lower())
        for part in parts:
            lowered = part.lower()
            if lowered not in STOP_WORDS:
                out.append(stem(lowered))
    return out


def word_ngrams(word: str) -> list[str]:
    """Character n-grams (:data:`CHAR_NGRAMS`) of one word term padded with spaces, as ``char_wb`` does."""
    low, high = CHAR_NGRAMS
    padded = f" {word} "
    out: list[str] = []
    for size in range(low, high + 1):
        if len(padded) < size:
            break
        out.extend(padded[i : i + size] for i in range(len(padded) - size + 1))
    return out


def analyze_chars(text: str) -> list[str]:
    """The character n-grams of each word term of ``text`` (:func:`word_ngrams`)."""
    out: list[str] = []
    for word in analyze_words(text):
        out.extend(word_ngrams(word))
    return out


ANALYZERS: dict[str, Callable[[str], list[str]]] = {"words": analyze_words, "chars": analyze_chars}


def analyzer_settings() -> dict[str, Any]:
    """What a reader in another language needs to reproduce the analyzers (stored in the index meta)."""
    return {
        "version": ANALYZER_VERSION,
        "token_pattern": WORD_PATTERN.pattern,
        "identifier_split_pattern": CAMEL_PATTERN.pattern,
        "lowercase": True,
        "stop_words": sorted(STOP_WORDS),
        "stemmer": "toolcat suffix stemmer (compiler/reader/search.py::stem)",
        "char_ngrams": {"range": list(CHAR_NGRAMS), "of": "each stemmed word term, padded with one space each side"},
        "short_alnum": {
            "pattern": SHORT_ALNUM.pattern,
            "max_chars": SHORT_TOKEN_CHARS,
            "rule": "a token of letters and digits this short is also kept whole, before its parts",
        },
        "vectorizer": {"sublinear_tf": True, "norm": "l2", "smooth_idf": True, "use_idf": True},
    }


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
    """One term's decoded postings: idf, doc ids, weights, the largest weight, and a lazy doc → weight map."""

    __slots__ = ("_by_doc", "idf", "ids", "max_weight", "weights")

    def __init__(self, idf: float, ids: list[int], weights: list[float]) -> None:
        self.idf = idf
        self.ids = ids
        self.weights = weights
        self.max_weight = max(weights, default=0.0)
        self._by_doc: dict[int, float] | None = None

    def by_doc(self) -> dict[int, float]:
        """Doc id → weight, built on first use."""
        if self._by_doc is None:
            self._by_doc = dict(zip(self.ids, self.weights, strict=True))
        return self._by_doc


class _Part:
    """One indexed collection (tools or nodes): its spaces' term shards and its doc shards."""

    def __init__(self, meta: dict[str, Any]) -> None:
        self.meta = meta
        self.n_docs: int = meta["n_docs"]
        self.spaces: list[dict[str, Any]] = meta["spaces"]
        self.firsts = {s["name"]: [shard["first"] for shard in s["shards"]] for s in self.spaces}
        self.doc_shard_size: int = meta["doc_shard_size"]
        self.doc_shards: list[dict[str, Any]] = meta["doc_shards"]


class Searcher:
    """Ranked search over a built catalogue; fetches index files lazily and caches them by sha256.

    ``fetch_json(ref)`` returns the parsed, hash-verified JSON a ref points to (the reader supplies it);
    ``prefetch(refs)``, when given, brings several at once (concurrently over HTTP). A query's term
    shards are known from the meta alone, and its results' doc shards once it is ranked, so a cold
    search reads in three rounds: the meta, the term shards, the doc shards (one more for the chars
    shards of words the index does not know).
    Public operations return results or error envelopes; :meth:`rank_tools` raises
    :class:`~toolcat.reader.envelope.ReaderError`.
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
        self.bytes_read = 0

    # -- fetching ----------------------------------------------------------------------------

    def _fetch(self, ref: dict[str, Any]) -> Any:
        digest = ref["sha256"]
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
                if self._meta.get("analyzer", {}).get("version") != ANALYZER_VERSION:
                    raise ReaderError(
                        "UNAVAILABLE",
                        "the search index was built with another analyzer version",
                        details={"index": self._meta.get("analyzer", {}).get("version"), "reader": ANALYZER_VERSION},
                        hints=["Use a reader that matches the toolcat version that built the catalogue."],
                    )
            self._parts[name] = _Part(self._meta[name])
        return self._parts[name]

    def _shard_ref(self, part: _Part, space: dict[str, Any], term: str) -> dict[str, Any] | None:
        """The ref of the one shard whose term range covers ``term`` (None when no shard does)."""
        index = bisect.bisect_right(part.firsts[space["name"]], term) - 1
        if index < 0 or term > space["shards"][index]["last"]:
            return None
        ref: dict[str, Any] = space["shards"][index]["ref"]
        return ref

    def _entry(self, part: _Part, space: dict[str, Any], term: str) -> dict[str, Any] | None:
        """A term's stored entry, from the one shard whose range covers it (None when the index lacks it)."""
        ref = self._shard_ref(part, space, term)
        if ref is None:
            return None
        entry: dict[str, Any] | None = self._fetch(ref)["terms"].get(term)
        return entry

    def _prefetch(self, refs: list[dict[str, Any] | None]) -> None:
        if self._prefetch_fn is not None:
            missing = [ref for ref in refs if isinstance(ref, dict) and ref.get("sha256") not in self._cache]
            if len(missing) > 1:
                self._prefetch_fn(missing)

    def _prefetch_query(self, part_name: str, query: str, extra: list[dict[str, Any] | None] | None = None) -> None:
        """Fetch the term shards ``query`` will read in one go (plus ``extra`` refs), before they are read one by one."""
        if self._prefetch_fn is None:
            return
        part = self._part(part_name)
        spaces = {space["name"]: space for space in part.spaces}
        words = list(dict.fromkeys(analyze_words(query)))
        refs = [self._shard_ref(part, spaces["words"], word) for word in words] + list(extra or [])
        if not part.meta.get("bundles"):
            refs += [self._shard_ref(part, spaces["chars"], gram) for gram in dict.fromkeys(analyze_chars(query))]
        self._prefetch(refs)
        if part.meta.get("bundles"):  # the n-grams of the words the index does not know come from the chars shards
            unknown = [word for word in words if self._entry(part, spaces["words"], word) is None]
            self._prefetch(
                [self._shard_ref(part, spaces["chars"], gram) for word in unknown for gram in word_ngrams(word)]
            )

    def _docs(self, part_name: str, hits: list[tuple[int, float, list[str]]]) -> list[dict[str, Any]]:
        """The stored documents of ``hits``, in order (over HTTP their doc shards are fetched together)."""
        part = self._part(part_name)
        self._prefetch([part.doc_shards[doc_id // part.doc_shard_size]["ref"] for doc_id, _, _ in hits])
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
        ids: list[int] = []
        last = 0
        for gap in entry["docs"]:
            last += gap
            ids.append(last)
        posting = _Posting(float(entry["idf"]), ids, entry["w"])
        # Character n-grams of one word often have identical postings: share one object so that
        # the top-k search walks them once (with the query weights summed).
        content = (space_name, posting.idf, tuple(entry["docs"]), tuple(posting.weights))
        return self._interned.setdefault(content, posting)

    def _posting(self, part_name: str, part: _Part, space: dict[str, Any], term: str) -> _Posting | None:
        key = (part_name, space["name"], term)
        if key not in self._postings:
            entry = self._entry(part, space, term)
            self._postings[key] = None if entry is None else self._decode(space["name"], entry)
        return self._postings[key]

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
                self._postings[key] = None if sub is None else self._decode("chars", sub)

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

    def _doc(self, part: _Part, doc_id: int) -> dict[str, Any]:
        shard = self._fetch(part.doc_shards[doc_id // part.doc_shard_size]["ref"])
        doc: dict[str, Any] = shard["docs"][doc_id - shard["first"]]
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
        remaining = sum(t[0] for t in terms)
        done = 0.0
        total: dict[int, float] = {}
        word_docs: set[int] = set()
        words = {id(posting) for _, posting in word_terms}
        position = 0
        kth = -1.0
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
                kth = _kth_hit_score(total, word_docs, k)
                if kth > remaining + BOUND_SLACK:
                    break
        if position < len(terms):
            total = {d: s for d, s in total.items() if s + remaining + BOUND_SLACK >= kth}
            for _, factor, _, posting in terms[position:]:
                by_doc = posting.by_doc()
                is_word = id(posting) in words
                for doc_id in total:
                    weight = by_doc.get(doc_id)
                    if weight is not None:
                        total[doc_id] += factor * weight
                        if is_word:
                            word_docs.add(doc_id)
        hits = [(d, s) for d, s in total.items() if d in word_docs or s >= MIN_CHAR_ONLY_SCORE]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return [(d, s, [term for term, posting in word_terms if d in posting.by_doc()]) for d, s in hits[:k]]

    # -- scoping -----------------------------------------------------------------------------

    def _node_shard_ref(self, path: list[str]) -> dict[str, Any] | None:
        part = self._part("nodes")
        index = bisect.bisect_right([shard["first_path"] for shard in part.doc_shards], path) - 1
        if index < 0:
            return None
        ref: dict[str, Any] = part.doc_shards[index]["ref"]
        return ref

    def node_entry(self, path: list[str]) -> dict[str, Any] | None:
        """The node index entry of ``path`` (with its tool doc-id range), or None when there is no such node."""
        ref = self._node_shard_ref(path)
        if ref is None:
            return None
        for doc in self._fetch(ref)["docs"]:
            if doc["path"] == path:
                entry: dict[str, Any] = doc
                return entry
        return None

    def _scoped(self, query: str, path: list[str], *, direct_only: bool = False) -> Callable[[int], bool]:
        """The doc filter of a category; its node shard is fetched together with the query's term shards."""
        self._prefetch_query("tools", query, [self._node_shard_ref(path)])
        entry = self.node_entry(path)
        if entry is None:
            raise self._unknown_path(path, query)
        return self._scope(entry, direct_only=direct_only)

    @staticmethod
    def _scope(entry: dict[str, Any], *, direct_only: bool) -> Callable[[int], bool]:
        low, high = entry["range"]
        if direct_only:
            high = low + entry["direct"]
            extra = set(entry["extra_direct"])
        else:
            extra = set(entry["extra"])
        return lambda doc_id: low <= doc_id < high or doc_id in extra

    def _unknown_path(self, path: list[str], query: str) -> ReaderError:
        root = self._fetch(self.manifest["root"]) if isinstance(self.manifest.get("root"), dict) else {"children": []}
        roots = [child["name"] for child in root.get("children", [])]
        close = difflib.get_close_matches(path[0], roots, n=3, cutoff=0.3) if path else []
        hints = [f"No category {'/'.join(path)!r}."]
        if close:
            hints.append("Closest root categories: " + ", ".join(close))
        elif roots:
            hints.append("Root categories: " + ", ".join(roots[:10]))
        suggestions = [r["path"] for r in self._node_results(" ".join(path), 3)]
        if suggestions:
            hints.append("Closest node paths: " + ", ".join("/".join(p) for p in suggestions))
        return ReaderError(
            "UNKNOWN_PATH",
            f"unknown category path {'/'.join(path)!r}",
            details={"category_path": path, "closest_roots": close, "closest_paths": suggestions},
            hints=hints,
            next_action={"op": "search_nodes", "args": {"query": query or " ".join(path)}},
        )

    # -- operations --------------------------------------------------------------------------

    def rank_tools(
        self, query: str, *, within: list[str] | None = None, direct_only: bool = False, limit: int | None = None
    ) -> list[tuple[dict[str, Any], float, list[str]]]:
        """``(pointer, confidence, matched terms)`` best first, optionally inside a node (and below it).

        Every hit by default; with ``limit``, only the best ``limit`` (exact, and much faster on big catalogues).
        """
        allowed = None
        if within is not None and (within or direct_only):
            allowed = self._scoped(query, list(within), direct_only=direct_only)
        return self._pointed(self._ranked("tools", query, allowed, limit), 6)

    def rank_tools_page(
        self, query: str, *, within: list[str] | None = None, offset: int = 0, limit: int = 10
    ) -> tuple[list[tuple[dict[str, Any], float, list[str]]], int]:
        """One page of :meth:`rank_tools` and the number of hits in all.

        Every hit is scored, but only the page's pointers are read: at 10,000 tools a page of 10 reads a few
        doc shards instead of hundreds.
        """
        allowed = self._scoped(query, list(within)) if within else None
        hits = self._ranked("tools", query, allowed)
        return self._pointed(hits[offset : offset + limit], 6), len(hits)

    def _top_tools(
        self, query: str, limit: int, offset: int = 0, allowed: Callable[[int], bool] | None = None
    ) -> tuple[list[tuple[dict[str, Any], float, list[str]]], bool]:
        """One page of hits and whether more follow (the top ``offset + limit + 1`` are ranked, not every hit)."""
        hits = self._ranked("tools", query, allowed, offset + limit + 1)
        return self._pointed(hits[offset : offset + limit]), len(hits) > offset + limit

    def find_tool(self, purpose: str, limit: int = 5) -> dict[str, Any]:
        """``{"matches": [{"name", "relevance", "reason"}]}`` for a free-text purpose."""
        try:
            query = _require_query(purpose, "purpose")
            limit = check_limit(limit, 5)
            page, _ = self._top_tools(query, limit)
            return {
                "matches": [
                    {
                        "name": pointer["tool_id"],
                        "relevance": round(min(1.0, score), 4),
                        "reason": _reason(pointer, terms),
                    }
                    for pointer, score, terms in page
                ]
            }
        except ReaderError as err:
            return err.envelope()

    def _node_results(self, query: str, limit: int) -> list[dict[str, Any]]:
        hits = self._ranked("nodes", query, lambda doc_id: doc_id > 0, limit)  # doc 0, the root, matches everything
        return [
            {
                "path": doc["path"],
                "title": doc["title"],
                "summary": doc["summary"],
                "confidence": round(min(1.0, score), 4),
            }
            for doc, (_, score, _) in zip(self._docs("nodes", hits), hits, strict=True)
        ]

    def search_nodes(self, query: str, limit: int = 5) -> dict[str, Any]:
        """``{"results": [{"path", "title", "summary", "confidence"}]}``: the categories that match best."""
        try:
            text = _require_query(query, "query")
            return {"results": self._node_results(text, check_limit(limit, 5))}
        except ReaderError as err:
            return err.envelope()

    def search_tool_by_category(
        self, query: str, category_path: list[str] | str, limit: int = 5, cursor: str | None = None
    ) -> dict[str, Any]:
        """Tools under a category (and everything below it, DAG included), ranked, as pointers + confidence."""
        try:
            text = _require_query(query, "query")
            limit = check_limit(limit, 5)
            path = list(node_path(category_path))
            key = cursor_key(text, path)
            offset = decode_cursor(cursor, key)
            allowed = self._scoped(text, path) if path else None
            page, more = self._top_tools(text, limit, offset, allowed)
            if not page and offset == 0:
                raise self._no_match(text, path)
            end = offset + len(page)
            return {
                "category_path": path,
                "results": [{**pointer, "confidence": round(min(1.0, score), 4)} for pointer, score, _ in page],
                "next_cursor": encode_cursor(end, key) if more else None,
            }
        except ReaderError as err:
            return err.envelope()

    def _no_match(self, query: str, path: list[str]) -> ReaderError:
        elsewhere, _ = self._top_tools(query, 10)
        places: list[list[str]] = []
        for pointer, _, _ in elsewhere:
            if pointer["path"] not in places:
                places.append(pointer["path"])
        hints = [f"No tool under {'/'.join(path) or 'the root'!r} matches {query!r}."]
        if places:
            hints.append("The query matches tools in: " + ", ".join("/".join(p) or "(root)" for p in places[:3]))
            action = {"op": "search_tool_by_category", "args": {"query": query, "category_path": places[0]}}
        else:
            hints.append("No tool in the catalogue matches; try other words, or browse with list.")
            action = {"op": "list", "args": {"path": path}}
        return ReaderError(
            "NO_MATCH_IN_CATEGORY",
            f"no tool under {'/'.join(path) or '(root)'!r} matches the query",
            details={"category_path": path, "query": query, "matching_categories": places[:3]},
            hints=hints,
            next_action=action,
        )


def _require_query(text: Any, name: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ReaderError(
            "BAD_REQUEST",
            f"'{name}' must be a non-empty string",
            details={"got": repr(text)[:60]},
            hints=[f"Say what you need in a few words, e.g. {name}='read a file from a bucket'."],
        )
    return text.strip()


def _reason(pointer: dict[str, Any], terms: list[str]) -> str:
    """Which matched terms appear in which shown field (id, summary, tags); the rest matched in longer text."""
    if not terms:
        return "similar spelling (character n-grams)"
    fields = {
        "id": set(analyze_words(pointer["tool_id"])),
        "summary": set(analyze_words(pointer["summary"])),
        "tags": set(analyze_words(" ".join(pointer["tags"]))),
    }
    parts = []
    for term in terms:
        where = [name for name, words in fields.items() if term in words] or ["text"]
        parts.append(f"{term} ({', '.join(where)})")
    return "matched " + "; ".join(parts)


def _kth_hit_score(total: dict[int, float], word_docs: set[int], k: int) -> float:
    """The k-th best partial score among documents already known to be hits (-1 when fewer than k)."""
    scores = [s for d, s in total.items() if d in word_docs or s >= MIN_CHAR_ONLY_SCORE]
    if len(scores) < k:
        return -1.0
    return heapq.nlargest(k, scores)[-1]
