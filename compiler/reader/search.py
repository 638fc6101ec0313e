"""Search a built catalogue in plain Python: the analyzer the build used, and the ranked operations.

The build (:mod:`compiler.index`) fits scikit-learn's ``TfidfVectorizer`` with the analyzers
defined here, so a query is tokenised exactly as the documents were. The index is stored as
*spaces* (``words``, ``chars``), each a TF-IDF model of its own; the score of a document is
``sum(space.weight * cosine_space(query, doc))``, where each cosine is what scikit-learn
computes for ``sublinear_tf=True, norm="l2", smooth_idf=True``. Postings hold the documents'
l2-normalised weights, so a query only needs the term shards of its own terms, and then the
doc shards of its hits. The format is documented in docs/search.md.
"""

from __future__ import annotations

import bisect
import difflib
import hashlib
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from compiler.reader.envelope import ReaderError

FetchJSON = Callable[[dict[str, Any]], Any]

#: Runs of letters and digits; everything else separates tokens (so ``s3.file_read`` → s3 file read).
WORD_PATTERN = re.compile(r"[^\W_]+")
#: Splits identifiers: ``getHTTPResponse2`` → get HTTP Response 2.
CAMEL_PATTERN = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+|[^\W\d_A-Za-z]+")
STOP_WORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "can", "could", "do", "does", "for", "from", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "please", "so", "that", "the", "their", "them", "then", "there", "these", "this", "to", "us", "was", "we", "what", "when", "where", "which", "who", "will", "with", "would", "you", "your"]
)
CHAR_NGRAMS = (3, 5)
ANALYZER_VERSION = "toolcat-analyzer-1"
MAX_LIMIT = 50
#: A document is a hit when one of its words matches, or its score reaches this on character n-grams alone.
MIN_CHAR_ONLY_SCORE = 0.1


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
    """Word terms: split on non-alphanumerics and identifier case, lowercase, drop stop words, stem."""
    out: list[str] = []
    for token in WORD_PATTERN.findall(text):
        for part in CAMEL_PATTERN.findall(token):
            lowered = part.lower()
            if lowered not in STOP_WORDS:
                out.append(stem(lowered))
    return out


def analyze_chars(text: str) -> list[str]:
    """Character n-grams (3 to 5) of each word term padded with spaces, as scikit-learn's ``char_wb`` does."""
    low, high = CHAR_NGRAMS
    out: list[str] = []
    for word in analyze_words(text):
        padded = f" {word} "
        for size in range(low, high + 1):
            if len(padded) < size:
                break
            out.extend(padded[i : i + size] for i in range(len(padded) - size + 1))
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


def split_path(category_path: list[str] | tuple[str, ...] | str | None) -> list[str]:
    """``"a/b"``, ``"a.b"`` or ``["a", "b"]`` → ``["a", "b"]``; empty or None is the root."""
    if category_path is None:
        return []
    if isinstance(category_path, str):
        text = category_path.strip().strip("/")
        if not text:
            return []
        return [p for p in re.split(r"[/.]", text) if p]
    return [str(p) for p in category_path]


def _cursor_key(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode("utf-8")).hexdigest()[:8]


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

    ``fetch_json(ref)`` returns the parsed, hash-verified JSON a ref points to (the reader supplies it).
    Public operations return results or error envelopes; :meth:`rank_tools` raises
    :class:`~compiler.reader.envelope.ReaderError`.
    """

    def __init__(self, manifest: dict[str, Any], fetch_json: FetchJSON) -> None:
        self.manifest = manifest
        self._fetch_json = fetch_json
        self._cache: dict[str, Any] = {}
        self._postings: dict[tuple[str, str, str], tuple[list[int], list[float]] | None] = {}
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
                    raise ReaderError("UNAVAILABLE", "this build has no search index",
                                      hints=["Rebuild the catalogue with a toolcat that writes the index (manifest key 'index')."],
                                      next_action={"call": "list", "args": {}})
                self._meta = self._fetch(ref)
                if self._meta.get("analyzer", {}).get("version") != ANALYZER_VERSION:
                    raise ReaderError("UNAVAILABLE", "the search index was built with another analyzer version",
                                      details={"index": self._meta.get("analyzer", {}).get("version"),
                                               "reader": ANALYZER_VERSION},
                                      hints=["Use a reader that matches the toolcat version that built the catalogue."])
            self._parts[name] = _Part(self._meta[name])
        return self._parts[name]

    def _posting(self, part_name: str, part: _Part, space: dict[str, Any], term: str) -> tuple[list[int], list[float], float] | None:
        firsts = self.firsts_of(part, space)
        index = bisect.bisect_right(firsts, term) - 1
        if index < 0:
            return None
        shard_meta = space["shards"][index]
        if term > shard_meta["last"]:
            return None
        entry = self._fetch(shard_meta["ref"])["terms"].get(term)
        if entry is None:
            return None
        key = (part_name, space["name"], term)
        cached = self._postings.get(key)
        if cached is None:
            ids: list[int] = []
            last = 0
            for gap in entry["docs"]:
                last += gap
                ids.append(last)
            cached = (ids, entry["w"])
            self._postings[key] = cached
        return cached[0], cached[1], float(entry["idf"])

    @staticmethod
    def firsts_of(part: _Part, space: dict[str, Any]) -> list[str]:
        """The first term of each shard of a space, for bisecting."""
        return part.firsts[space["name"]]

    def _idf(self, part_name: str, part: _Part, space: dict[str, Any], tokens: list[str]) -> dict[str, tuple[float, list[int], list[float]]]:
        found: dict[str, tuple[float, list[int], list[float]]] = {}
        for term in dict.fromkeys(tokens):
            posting = self._posting(part_name, part, space, term)
            if posting is not None:
                found[term] = (posting[2], posting[0], posting[1])
        return found

    def _doc(self, part: _Part, doc_id: int) -> dict[str, Any]:
        shard = self._fetch(part.doc_shards[doc_id // part.doc_shard_size]["ref"])
        doc: dict[str, Any] = shard["docs"][doc_id - shard["first"]]
        return doc

    # -- scoring -----------------------------------------------------------------------------

    def scores(self, part_name: str, query: str) -> tuple[dict[int, float], dict[int, list[str]], dict[int, bool]]:
        """Every matching document's combined score, its matched word terms, and whether a word matched."""
        part = self._part(part_name)
        total: dict[int, float] = {}
        matched: dict[int, list[str]] = {}
        for space in part.spaces:
            tokens = ANALYZERS[space["name"]](query)
            postings = self._idf(part_name, part, space, tokens)
            weights = query_weights(tokens, {t: p[0] for t, p in postings.items()})
            scale = float(space["weight"])
            for term, q in weights.items():
                _, ids, ws = postings[term]
                factor = scale * q
                for doc_id, w in zip(ids, ws, strict=True):
                    total[doc_id] = total.get(doc_id, 0.0) + factor * w
                if space["name"] == "words":
                    for doc_id in ids:
                        matched.setdefault(doc_id, []).append(term)
        word_hit = {doc_id: doc_id in matched for doc_id in total}
        return total, matched, word_hit

    def _ranked(self, part_name: str, query: str, allowed: Callable[[int], bool] | None = None) -> list[tuple[int, float, list[str]]]:
        total, matched, word_hit = self.scores(part_name, query)
        hits = [
            (doc_id, score, matched.get(doc_id, []))
            for doc_id, score in total.items()
            if (word_hit[doc_id] or score >= MIN_CHAR_ONLY_SCORE) and (allowed is None or allowed(doc_id))
        ]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits

    # -- scoping -----------------------------------------------------------------------------

    def node_entry(self, path: list[str]) -> dict[str, Any] | None:
        """The node index entry of ``path`` (with its tool doc-id range), or None when there is no such node."""
        part = self._part("nodes")
        firsts = [shard["first_path"] for shard in part.doc_shards]
        index = bisect.bisect_right(firsts, path) - 1
        if index < 0:
            return None
        shard = self._fetch(part.doc_shards[index]["ref"])
        for doc in shard["docs"]:
            if doc["path"] == path:
                entry: dict[str, Any] = doc
                return entry
        return None

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
        return ReaderError("UNKNOWN_PATH", f"unknown category path {'/'.join(path)!r}",
                           details={"category_path": path, "closest_roots": close, "closest_paths": suggestions},
                           hints=hints, next_action={"call": "search_nodes", "args": {"query": query or " ".join(path)}})

    # -- operations --------------------------------------------------------------------------

    def rank_tools(self, query: str, *, within: list[str] | None = None,
                   direct_only: bool = False) -> list[tuple[dict[str, Any], float, list[str]]]:
        """``(pointer, confidence, matched terms)`` best first, optionally inside a node (and below it)."""
        allowed = None
        if within is not None and (within or direct_only):
            entry = self.node_entry(list(within))
            if entry is None:
                raise self._unknown_path(list(within), query)
            allowed = self._scope(entry, direct_only=direct_only)
        part = self._part("tools")
        return [(self._doc(part, doc_id)["pointer"], round(score, 6), terms)
                for doc_id, score, terms in self._ranked("tools", query, allowed)]

    def _top_tools(self, query: str, limit: int, offset: int = 0,
                   allowed: Callable[[int], bool] | None = None) -> tuple[list[tuple[dict[str, Any], float, list[str]]], int]:
        hits = self._ranked("tools", query, allowed)
        part = self._part("tools")
        page = [(self._doc(part, doc_id)["pointer"], score, terms) for doc_id, score, terms in hits[offset : offset + limit]]
        return page, len(hits)

    def find_tool(self, purpose: str, limit: int = 5) -> dict[str, Any]:
        """``{"matches": [{"name", "relevance", "reason"}]}`` for a free-text purpose."""
        try:
            query = _require_query(purpose, "purpose")
            limit = _check_limit(limit)
            page, _ = self._top_tools(query, limit)
            return {"matches": [{"name": pointer["tool_id"], "relevance": round(min(1.0, score), 4),
                                 "reason": _reason(pointer, terms)} for pointer, score, terms in page]}
        except ReaderError as err:
            return err.envelope()

    def _node_results(self, query: str, limit: int) -> list[dict[str, Any]]:
        part = self._part("nodes")
        results = []
        for doc_id, score, _ in self._ranked("nodes", query, lambda doc_id: doc_id > 0)[:limit]:
            doc = self._doc(part, doc_id)  # doc 0 is the root: it holds everything, so it is never a result
            results.append({"path": doc["path"], "title": doc["title"], "summary": doc["summary"],
                            "confidence": round(min(1.0, score), 4)})
        return results

    def search_nodes(self, query: str, limit: int = 5) -> dict[str, Any]:
        """``{"results": [{"path", "title", "summary", "confidence"}]}``: the categories that match best."""
        try:
            text = _require_query(query, "query")
            return {"results": self._node_results(text, _check_limit(limit))}
        except ReaderError as err:
            return err.envelope()

    def search_tool_by_category(self, query: str, category_path: list[str] | str, limit: int = 5,
                                cursor: str | None = None) -> dict[str, Any]:
        """Tools under a category (and everything below it, DAG included), ranked, as pointers + confidence."""
        try:
            text = _require_query(query, "query")
            limit = _check_limit(limit)
            path = split_path(category_path)
            key = _cursor_key(text, path)
            offset = _decode_cursor(cursor, key)
            allowed = None
            if path:
                entry = self.node_entry(path)
                if entry is None:
                    raise self._unknown_path(path, text)
                allowed = self._scope(entry, direct_only=False)
            page, total = self._top_tools(text, limit, offset, allowed)
            if not page and offset == 0:
                raise self._no_match(text, path)
            end = offset + len(page)
            return {
                "category_path": path,
                "results": [{**pointer, "confidence": round(min(1.0, score), 4)} for pointer, score, _ in page],
                "next_cursor": f"{end}:{key}" if end < total else None,
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
            action = {"call": "search_tool_by_category", "args": {"query": query, "category_path": places[0]}}
        else:
            hints.append("No tool in the catalogue matches; try other words, or browse with list.")
            action = {"call": "list", "args": {"path": path}}
        return ReaderError("NO_MATCH_IN_CATEGORY", f"no tool under {'/'.join(path) or '(root)'!r} matches the query",
                           details={"category_path": path, "query": query, "matching_categories": places[:3]},
                           hints=hints, next_action=action)


def _require_query(text: Any, name: str) -> str:
    if not isinstance(text, str) or not text.strip():
        raise ReaderError("BAD_REQUEST", f"'{name}' must be a non-empty string",
                          details={"got": repr(text)[:60]},
                          hints=[f"Say what you need in a few words, e.g. {name}='read a file from a bucket'."])
    return text.strip()


def _check_limit(limit: Any) -> int:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ReaderError("BAD_REQUEST", "'limit' must be a positive integer", details={"got": repr(limit)[:40]},
                          hints=[f"Use a limit between 1 and {MAX_LIMIT}."])
    return min(limit, MAX_LIMIT)


def _decode_cursor(cursor: str | None, key: str) -> int:
    if cursor is None:
        return 0
    offset, _, check = str(cursor).partition(":")
    if check != key or not offset.isdigit():
        raise ReaderError("BAD_REQUEST", "this cursor belongs to another query or category",
                          details={"cursor": str(cursor)[:40]},
                          hints=["Pass back the next_cursor of the previous page with the same query and category."])
    return int(offset)


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
