"""Search a built catalogue in plain Python: the ranked operations (find a tool, search nodes or a category).

The build (:mod:`toolcat.build.contributors.index.texts`) fits scikit-learn's ``TfidfVectorizer`` with the analyzers of
:mod:`toolcat.format.analyzer` (re-exported here), so a query is tokenised exactly as the documents
were; :mod:`toolcat.reader.search.ranking` reads and scores the index. The index is stored as
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
import logging
import math
import re
from collections.abc import Callable, Iterable
from typing import Any

from ...format.analyzer import (
    STOP_WORDS,
    analyze_words,
)
from ...format.buckets import lookup_bucket
from ...format.envelope import ReaderError
from ..checks import (
    check_limit,
    check_query,
    cursor_key,
    decode_cursor,
    encode_cursor,
    node_path,
    query_note,
    trim,
)
from . import expansion, fusion_model, hybrid, rerank
from .hybrid import CANDIDATES, FUSION, SEMANTIC_TERM, fuse
from .ranking import IndexReader
from .semantic import VECTOR_ERRORS
from .semantic import wanted as semantic_wanted

__all__ = ["MIN_RELATIVE", "MIN_RELEVANCE", "Searcher", "name_key", "name_like"]

log = logging.getLogger(__name__)

#: A ranked hit is shown only when it scores at least this ...
MIN_RELEVANCE = 0.06
#: ... and at least this fraction of the best hit's score. Both were chosen on the labelled queries of
#: ``bench/bench_search_answers.py`` (example evals, GitHub MCP, MetaTool, BFCL): the largest values that drop
#: no right tool from any query's top 5 (docs/search.md, "Exact names and the cut").
MIN_RELATIVE = 0.25
#: find_tool's answer is *weak* when the query's content words no tool's text has carry at least
#: :data:`WEAK_UNKNOWN_SHARE` of its words' idf (an unknown word at the unseen idf: :meth:`Searcher.unknown_share`)
#: and its best hit scores under :data:`WEAK_RELEVANCE`: the hits then share only part of the request
#: ("zip the reports": only "report"). The answer keeps its hits and says so: ``"weak": true``, a hint naming the
#: missing words, and a next_action to browse (docs/search.md, "A search that finds nothing good says so"). This is
#: the rule of the hand-tuned fusion (and of the lexical score, and of search_nodes); a learned fusion carries its own
#: bar (``Model.weak``, chosen by ``bench/train_fusion.py``; :meth:`Searcher.weak_bar`) and reads the share at
#: :data:`WEAK_LEARNED_SHARE`. Both shares were chosen on the train requests (docs/search.md, "The weak rule weighs
#: words by idf").
WEAK_RELEVANCE = 0.35
WEAK_UNKNOWN_SHARE = 0.58
WEAK_LEARNED_SHARE = 0.54
#: A query with spaces is looked up as a name when it has at most this many parts, or no stop word in them.
NAME_SHORT_PARTS = 3
NAME_MAX_PARTS = 12
NAME_MAX_CHARS = 200
_NAME_PARTS = re.compile(r"[^\W_]+")
_HINT = re.compile(r"(?i)\b(server|category|namespace|service|app)\s*[:=]\s*([^/;|\n]*)")
#: The longest category hint, in characters (cut at a word; the rest is the query's words).
HINT_MAX_CHARS = 80
_LABEL = re.compile(r"(?i)\b(tool|action|task|query)\s*[:=]")
#: A category hint that is no root name counts when its best node scores at least this.
HINT_MIN_CONFIDENCE = 0.3
#: What a category hint adds to the relevance of the tools under the node it names, among the best
#: ``HINT_DEPTH`` more hits than the page needs (a boost, never a filter: docs/search.md, "Agent-written queries").
HINT_BOOST = 0.05
HINT_DEPTH = 20
#: The pointer fields a search hit leaves out when empty or false (absent means empty / false).
_LEAN_DROP = ("optional", "deprecated")


class Searcher(IndexReader):
    """Ranked search over a built catalogue; fetches index files lazily and caches them by sha256.

    ``fetch_json(ref)`` returns the parsed, hash-verified JSON a ref points to (the reader supplies it);
    ``prefetch(refs)``, when given, brings several at once (concurrently over HTTP). A query's term
    shards are known from the meta alone, and its results' doc shards once it is ranked, so a cold
    search reads in three rounds: the meta, the term shards, the doc shards (one more for the chars
    shards of words the index does not know).
    Public operations return results or error envelopes; :meth:`rank_tools` raises
    :class:`~toolcat.format.envelope.ReaderError`.
    """

    # -- semantic tier hook (search/semantic.py, search/hybrid.py; docs/search.md) --------------------

    def semantic_tier(self) -> Any:
        """The :class:`~toolcat.reader.search.semantic.SemanticTier` when it can answer, else None (its ``reason`` says why)."""
        if not hasattr(self, "_semantic"):
            from .semantic import SemanticTier  # noqa: PLC0415 - optional tier

            self._semantic = SemanticTier(self.manifest, self._fetch, self._prefetch_fn)
        return self._semantic if self._semantic.available() else None

    def expansion_model(self) -> str | None:
        """The learned expansion's model name when the tools part has one (read), else None."""
        part = self._parts.get("tools")
        if part is None or part.expand is None:
            return None
        return str((part.expand.get("model") or {}).get("name", "terms"))

    def _prefetch_query(self, part_name: str, query: str, extra: list[dict[str, Any] | None] | None = None) -> None:
        """The query's term shards, and (first time) the semantic tier's vectors, in the same round.

        Over HTTP the vectors meta comes with the index meta, and the vector shards with the term shards, so
        the semantic tier adds no round trip to a search.
        """
        if self._prefetch_fn is None:
            return
        if self._meta is None and "vectors" in self.manifest and semantic_wanted():
            self._prefetch([self.manifest.get("index"), self.manifest.get("vectors")])
        tier = self.semantic_tier() if "vectors" in self.manifest else None
        more = tier.refs(part_name, query) if tier is not None else []
        super()._prefetch_query(part_name, query, [*(extra or []), *more])

    def _ranked(
        self, part_name: str, query: str, allowed: Callable[[int], bool] | None = None, limit: int | None = None
    ) -> list[tuple[int, float, list[str]]]:
        """The first stage (:meth:`_first_stage`), and for a top ``limit`` of tools the host's reranker, if any.

        The reranker (:mod:`toolcat.reader.search.rerank`) sees the first stage's best
        :data:`~toolcat.reader.search.rerank.DEPTH` hits; it is off unless the host set one.
        """
        reranker = rerank.current() if limit is not None and part_name == "tools" else None
        if reranker is None:
            return self._first_stage(part_name, query, allowed, limit)
        hits = self._first_stage(part_name, query, allowed, max(limit or 0, rerank.DEPTH))
        head = hits[: rerank.DEPTH]
        pointers = [doc["pointer"] for doc in self._docs("tools", head)]
        return rerank.rerank(query, hits, pointers, reranker)[:limit]

    def _first_stage(
        self, part_name: str, query: str, allowed: Callable[[int], bool] | None = None, limit: int | None = None
    ) -> list[tuple[int, float, list[str]]]:
        """The lexical ranking, fused with the semantic tier's (:func:`toolcat.reader.search.hybrid.fuse`) for a top ``limit``.

        Without the tier (no vectors, no extra, another model) or without ``limit``: exactly the lexical ranking.
        """
        tier = None if limit is None else self.semantic_tier()
        if tier is None:
            return self._without_vectors(part_name, query, allowed, limit)
        lexical = super()._ranked(part_name, query, allowed, max(limit or 0, CANDIDATES))
        params = FUSION.get(tier.kind, FUSION["sentence-transformers"])
        # the learned fusion (docs/search.md, "Learned fusion") where a model was trained for this embedder
        model = self._tools_model() if part_name == "tools" else None
        try:
            # the learned fusion of this query's candidates, for any cosines: it guesses the head and ranks it
            rank = None if model is None else self._learned_rank(query, lexical, model, allowed, params)
            depth = max(limit or 0, hybrid.NAME_DEPTH)
            if part_name == "tools":  # a partitioned build: the candidates' rows, with the likely head's doc shards
                refs = tier.row_refs(query, [doc for doc, _, _ in lexical])
                # the candidates whose row files hold their documents (toolcat-vectors-7): no doc shard for those
                carried, guess = tier.carried(query), []
                # no row to read: the head is known, its doc shards fetched in one round; a source that reads files
                # one at a time (a folder: no prefetch) has no round to save, so no guess is made
                if self._prefetch_fn is not None and (refs or tier.partitioned):
                    # the head is guessed by the fusion that will rank it: the learned model's, else the hand one
                    guess = tier.head_guess(query, lexical, depth, allowed, params, rank)
                    part = self._part("tools")
                    self._pending_pages = []
                    doc_refs = [self._doc_ref(part, doc, fetch_page=False) for doc in guess if doc not in carried]
                    self._prefetch([*refs, *self._pending_pages, *doc_refs])
                tier.read_rows(query)
                files = self._part("tools").delta_doc_file
                for doc, ref in tier.doc_files(carried).items():
                    files.setdefault(doc, ref)  # a delta segment's own file for the doc wins (the same document)
                for doc in guess:  # read now: their files were fetched by path, and are checked here
                    self._doc(self._part("tools"), doc)
            cosines = tier.scores(part_name, query)
            if len(cosines) < self._part(part_name).n_docs:
                raise ValueError(f"{len(cosines)} {part_name} vectors for {self._part(part_name).n_docs} documents")
            if part_name != "tools":
                return fuse(lexical, cosines, limit or 0, allowed, params)
            pool = tier.pool(part_name, query, cosines)  # a partitioned build: the probed clusters' tools alone
            fused = (
                rank(cosines, depth, pool) if rank is not None else fuse(lexical, cosines, depth, allowed, params, pool)
            )
            return self._name_boosted(query, fused, model)[:limit]
        except (*VECTOR_ERRORS, ReaderError) as err:  # broken vectors: answer by words, and say why (stats)
            tier.fail(err)
            log.warning("search: %s", tier.reason)
            return lexical[:limit]

    def _without_vectors(
        self, part_name: str, query: str, allowed: Callable[[int], bool] | None, limit: int | None
    ) -> list[tuple[int, float, list[str]]]:
        """The first stage without the semantic tier: the learned expansion, the opt-in learned fusion, or words alone.

        The learned lexical model (``TOOLCAT_LEARNED_FUSION=all``; docs/search.md, "Learned fusion") reorders the
        lexical top :data:`~toolcat.reader.search.hybrid.CANDIDATES` of a tools search with a limit.
        """
        if limit is None or part_name != "tools":
            return super()._ranked(part_name, query, allowed, limit)
        if self._part(part_name).expand is not None:
            return self._expanded(query, allowed, limit)
        learned = self._tools_model()
        if learned is None:
            return super()._ranked(part_name, query, allowed, limit)
        lexical = super()._ranked(part_name, query, allowed, max(limit, CANDIDATES))
        rank = self._learned_rank(query, lexical, learned, allowed, FUSION["onnx"])
        return self._name_boosted(query, rank(None, max(limit, hybrid.NAME_DEPTH), None), learned)[:limit]

    def _expanded(
        self, query: str, allowed: Callable[[int], bool] | None, limit: int
    ) -> list[tuple[int, float, list[str]]]:
        """The lexical top fused with the learned expansion (:mod:`toolcat.reader.search.expansion`), name match applied.

        A malformed expansion entry in the meta is an INTEGRITY error, as any other malformed index meta.
        """
        meta = self._part("tools").expand or {}
        try:
            fusion = expansion.settings(meta)
        except (KeyError, TypeError, ValueError) as exc:
            raise ReaderError(
                "INTEGRITY",
                f"the search index meta's tools.expand entry is not what a build writes ({exc!r})",
                hints=["The host serves files a toolcat build did not write; rebuild and republish the catalogue."],
            ) from None
        lexical = super()._ranked("tools", query, allowed, max(limit, fusion[2]))
        scores = expansion.scores(self._expand_terms("tools", query), fusion[3])
        fused = expansion.fuse(lexical, scores, max(limit, hybrid.NAME_DEPTH), fusion, allowed)
        return self._name_boosted(query, fused)[:limit]

    def known_share(self, query: str) -> float:
        """The share of the query's word terms that some tool's text has (1 for a query without content words).

        Read from the postings the lexical ranking already decoded (cached), so it costs no fetch.
        """
        terms = set(analyze_words(query))
        if not terms:
            return 1.0
        idfs, _ = self._word_idfs(terms)
        return sum(idf is not None for idf in idfs.values()) / len(terms)

    def term_idf(self, query: str) -> dict[str, float]:
        """Each of the query's word terms → its idf in the tools' index; a word no tool has, an unseen word's idf.

        The unseen idf is scikit-learn's smooth idf of document frequency 0, ``ln(1 + n) + 1``; read from the postings
        the lexical ranking already decoded (cached), so it costs no fetch. A learned fusion of
        :data:`~toolcat.reader.search.fusion_model.IDF_COVERAGE` reads it.
        """
        idfs, unseen = self._word_idfs(set(analyze_words(query)))
        return {term: unseen if idf is None else idf for term, idf in idfs.items()}

    def _word_idfs(self, terms: Iterable[str]) -> tuple[dict[str, float | None], float]:
        """Each word term → its idf among the tools (None: no tool has it), and the unseen idf ``ln(1 + n) + 1``.

        The one lookup :meth:`known_share`, :meth:`term_idf` and :meth:`unknown_share` read, in ``terms``' order:
        postings the lexical ranking already decoded (cached), so it costs no fetch.
        """
        part = self._part("tools")
        words = next(space for space in part.spaces if space["name"] == "words")
        out: dict[str, float | None] = {}
        for term in terms:
            posting = self._posting("tools", part, words, term)
            out[term] = None if posting is None else posting.idf
        return out, math.log(1 + part.n_docs) + 1.0

    def _name_boosted(
        self, query: str, hits: list[tuple[int, float, list[str]]], model: fusion_model.Model | None = None
    ) -> list[tuple[int, float, list[str]]]:
        """The fused ``hits`` with the name match applied to their top :data:`~toolcat.reader.search.hybrid.NAME_DEPTH`.

        With a learned ``model``, by its name weights (:func:`toolcat.reader.search.fusion_model.name_rescored`).
        """
        terms = set(analyze_words(query))
        if not terms or (hybrid.NAME_BOOST <= 0 if model is None else not any(model.name)):
            return hits
        head = hits[: hybrid.NAME_DEPTH]
        ids = [str(doc["pointer"]["tool_id"]) for doc in self._docs("tools", head)]
        if model is not None:
            return fusion_model.name_rescored(hits, ids, terms, model, analyze_words)
        return hybrid.name_boosted(hits, ids, terms, analyze_words)

    # -- scoping -----------------------------------------------------------------------------

    def _node_shard_ref(self, path: list[str]) -> dict[str, Any] | None:
        part = self._part("nodes")
        index = bisect.bisect_right([shard["first_path"] for shard in part.doc_shards], path) - 1
        if index < 0:
            return None
        ref: dict[str, Any] = part.doc_shards[index]["ref"]
        return ref

    def node_entry(self, path: list[str]) -> dict[str, Any] | None:
        """The node index entry of ``path`` (with its tool doc-id range), or None when there is no such node.

        A delta segment's copy of an entry wins over the base's; a node the delta deleted has none.
        """
        part = self._part("nodes")
        for delta_ref in {id(r): r for r in part.delta_doc_file.values()}.values():
            for doc in self._fetch(delta_ref)["docs"]:
                if doc["path"] == path:
                    found: dict[str, Any] = doc
                    return found
        ref = self._node_shard_ref(path)
        if ref is None:
            return None
        shard = self._fetch(ref)
        for position, doc in enumerate(shard["docs"]):
            if doc["path"] == path:
                if shard["first"] + position in part.deleted:
                    return None
                entry: dict[str, Any] = doc
                return entry
        return None

    def _scoped(
        self, query: str, path: list[str], *, direct_only: bool = False, extra: list[dict[str, Any]] | None = None
    ) -> Callable[[int], bool]:
        """The doc filter of a category; its node shard (and ``extra``) is fetched together with the term shards."""
        delta_docs = list(self._part("nodes").delta_doc_file.values())
        self._prefetch_query("tools", query, [self._node_shard_ref(path), *delta_docs, *(extra or [])])
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
        """One page of hits and whether more follow (the top ``offset + limit + 1`` are ranked, not every hit).

        Hits scoring under :data:`MIN_RELEVANCE` or under :data:`MIN_RELATIVE` times the best are left out.
        """
        hits = self._ranked("tools", query, allowed, offset + limit + 1)
        floor = max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) if hits else 0.0
        kept = [hit for hit in hits if hit[1] >= floor]
        return self._pointed(kept[offset : offset + limit]), len(kept) > offset + limit

    def _name_candidates(self, query: str) -> list[tuple[str, dict[str, Any]]]:
        """The spellings under which the query may name a tool, each with the lookup bucket that would hold it.

        A name is a canonical id, a provider or legacy alias or a skill name, in any case, with ``.``, ``_``,
        ``-`` or spaces between its parts. A query without spaces is looked up as typed, lower-cased and with
        ``_`` or ``-`` between its parts; one with spaces only when it reads like a name rather than a sentence
        (:func:`name_like`). Empty when the build has no lookup table.
        """
        lookup = self.manifest.get("lookup")
        if not isinstance(lookup, dict) or not name_like(query):
            return []
        refs, count = lookup.get("refs") or [], lookup.get("buckets") or 0
        if not isinstance(refs, list) or not isinstance(count, int) or count < 1 or len(refs) != count:
            return []
        parts = name_key(query).split()
        typed = [] if any(c.isspace() for c in query) else [query, query.lower()]
        names = list(dict.fromkeys([*typed, "_".join(parts), "-".join(parts)]))
        return [(name, refs[lookup_bucket(name, count)]) for name in names]

    def _name_lookup(self, candidates: list[tuple[str, dict[str, Any]]]) -> str | None:
        """The tool id one of the candidate spellings names exactly, from the lookup buckets; None otherwise."""
        for name, ref in candidates:
            found = self._fetch(ref).get("entries", {}).get(name)
            if isinstance(found, dict) and isinstance(found.get("tool_id"), str):
                return str(found["tool_id"])
        return None

    def _spec_pointer(self, tool_id: str, scope: list[str] | None) -> dict[str, Any] | None:
        """The pointer of a tool named exactly but not among the ranked hits, from its spec (None out of scope)."""
        lookup = self.manifest["lookup"]
        found = self._fetch(lookup["refs"][lookup_bucket(tool_id, lookup["buckets"])]).get("entries", {}).get(tool_id)
        if not isinstance(found, dict):
            return None
        spec = self._fetch(found["spec"])
        homes = [spec.get("path", []), *spec.get("categories", [])]
        if scope and not any(list(home[: len(scope)]) == scope for home in homes):
            return None
        return {
            "tool_id": tool_id,
            "alias": (spec.get("aliases") or {}).get("openai", tool_id),
            "type": spec.get("type"),
            "path": list(spec.get("path", [])),
            "summary": spec.get("summary", ""),
            "tags": list(spec.get("tags", [])),
            "kind": spec.get("kind"),
            "optional": spec.get("optional", False),
            "deprecated": spec.get("deprecated", False),
            **({"capabilities": list(spec["capabilities"])} if spec.get("capabilities") else {}),
            "spec": found["spec"],
        }

    def _answer_tools(
        self,
        query: str,
        limit: int,
        offset: int = 0,
        allowed: Callable[[int], bool] | None = None,
        scope: list[str] | None = None,
        candidates: list[tuple[str, dict[str, Any]]] | None = None,
        boost: Callable[[int], bool] | None = None,
    ) -> tuple[list[tuple[dict[str, Any], float, list[str]]], bool, str | None]:
        """A page of what find_tool and search_tool_by_category show, whether more follow, the exact name's id.

        The tool the query names exactly comes first with relevance 1.0, then the ranked hits that pass the cut.
        ``candidates`` are the query's name spellings when the caller has already fetched their buckets.
        ``boost``: the docs a category hint names (find_tool's ``server: X``), raised by :data:`HINT_BOOST` among
        the best ``offset + limit + 2 +`` :data:`HINT_DEPTH` hits before the cut: a hint ranks, it never filters.
        """
        if candidates is None:
            candidates = self._name_candidates(query)
            self._prefetch_query("tools", query, [ref for _, ref in candidates])  # one round with the term shards
        named = self._name_lookup(candidates)
        hits = self._ranked("tools", query, allowed, offset + limit + 2 + (HINT_DEPTH if boost else 0))
        if boost is not None:
            hits = [(doc, min(1.0, score + HINT_BOOST) if boost(doc) else score, terms) for doc, score, terms in hits]
            hits.sort(key=lambda hit: (-hit[1], hit[0]))
            hits = hits[: offset + limit + 2]
        floor = max(MIN_RELEVANCE, MIN_RELATIVE * hits[0][1]) if hits else 0.0
        kept = [hit for hit in hits if hit[1] >= floor]
        if named is None:
            page = self._pointed(kept[offset : offset + limit])
            more = len(kept) > offset + limit
            key = name_key(query)
            spelled = [i for i, (p, _, _) in enumerate(page) if key in (name_key(p["tool_id"]), name_key(p["alias"]))]
            if offset > 0 or not spelled:  # a name with stop words in it ("convert_to_pdf") is found among the hits
                return page, more, None
            first = page.pop(spelled[0])
            return [(first[0], 1.0, first[2]), *page], more, first[0]["tool_id"]
        pointed = self._pointed(kept[: offset + limit + 1])
        exact = next((hit for hit in pointed if hit[0]["tool_id"] == named), None)
        pointer = exact[0] if exact is not None else self._spec_pointer(named, scope)
        if pointer is None:  # named, but outside the category searched
            return pointed[offset : offset + limit], len(kept) > offset + limit, None
        shown = [(pointer, 1.0, exact[2] if exact is not None else []), *(h for h in pointed if h is not exact)]
        return shown[offset : offset + limit], len(shown) > offset + limit, named

    def _hinted_tools(self, query: str, limit: int) -> tuple[list[tuple[dict[str, Any], float, list[str]]], str | None]:
        """find_tool's page; a category the query names (``server: github / tool: create issue``) is a boost.

        The query's words (the hint's included, the labels left out) are ranked everywhere. The hint's node is
        found by name at the root, else as the best node for the hint's words (confidence at least
        :data:`HINT_MIN_CONFIDENCE`); the tools under it (its range and ``categories``) gain :data:`HINT_BOOST`.
        Narrowing to the node lost the right tool whenever the agent guessed the server wrong (issue 33: R@5
        0.62 narrowed against 0.72 ranked everywhere, on agent-written requests).
        """
        words, hint = split_hint(query)
        unlabelled = f"{words} {hint}" if hint and words else words  # labels dropped; the hint's words still count
        path = self._hint_path(hint) if hint and words else None
        entry = self.node_entry(path) if path is not None else None
        boost = self._scope(entry, direct_only=False) if entry is not None else None
        page, _, named = self._answer_tools(unlabelled, limit, boost=boost)
        return page, named

    def _hint_path(self, hint: str) -> list[str] | None:
        """The node a category hint names (by name or title), else the best node for its words, if good enough.

        A root child of that name first, then a found node whose name or title is the hint, then the best node
        when it scores at least :data:`HINT_MIN_CONFIDENCE`.
        """
        root = self._fetch(self.manifest["root"]) if isinstance(self.manifest.get("root"), dict) else {}
        key = name_key(hint).replace(" ", "_")
        for child in root.get("children", []):
            if isinstance(child, dict) and name_key(str(child.get("name", ""))).replace(" ", "_") == key:
                return [str(child["name"])]
        found = self._node_results(hint, 5)
        named = [
            r
            for r in found
            if key in (name_key(r["path"][-1]).replace(" ", "_"), name_key(r["title"]).replace(" ", "_"))
        ]
        if named:
            return list(named[0]["path"])
        if found and found[0]["confidence"] >= HINT_MIN_CONFIDENCE:
            return list(found[0]["path"])
        return None

    def find_tool(self, purpose: str, limit: int = 5) -> dict[str, Any]:
        """``{"matches": [{"name", "relevance", "reason", "summary"}]}`` for a free-text purpose or a tool's name.

        A tool named exactly comes first with relevance 1.0; hits that match poorly are left out, and when none
        is left the answer says so (empty ``matches``, a hint, and a next_action to browse the root).
        """
        try:
            query = check_query(purpose, "purpose")
            limit = check_limit(limit, 5)
            page, named = self._hinted_tools(query, limit)
            matches = [
                {
                    "name": pointer["tool_id"],
                    "relevance": round(min(1.0, score), 4),
                    "reason": "exact name" if pointer["tool_id"] == named else _reason(pointer, terms),
                    # the pointer's summary, so the dialect's one line per hit reads no namespace shard (issue 35)
                    **({"summary": pointer["summary"]} if pointer.get("summary") else {}),
                }
                for pointer, score, terms in page
            ]
        except ReaderError as err:
            return err.envelope()
        missing = self.weak_words(query, matches[0]["relevance"]) if matches and named is None else None
        if missing is not None:
            return _noted(_weak_answer(query, matches, missing), purpose)
        if matches:
            return _noted({"matches": matches}, purpose)
        return _noted(
            {
                "matches": [],
                "hints": [f"No tool matches {query[:200]!r} well; try other words, or browse the categories."],
                "next_action": {"op": "list", "args": {"path": ""}},
            },
            purpose,
        )

    def weak_words(self, query: str, best: float, part_name: str = "tools") -> list[str] | None:
        """The query's words no tool mentions when an answer whose best hit scores ``best`` is *weak*, else None.

        One rule for every search (find_tool, search_nodes, search_tool_by_category, list(query=)): at least
        :meth:`weak_share` of the content words' idf is in words no tool has (:meth:`unknown_share`) and the best hit
        scores under :meth:`weak_bar` of the part searched. A weak answer says so: ``"weak": true``, a hint naming the words, a
        way forward.
        """
        missing, words = self._unknown_words(query)
        if (
            missing
            and best < self.weak_bar(part_name, words)
            and self.unknown_share(query) >= self.weak_share(part_name)
        ):
            return missing
        return None

    def weak_share(self, part_name: str = "tools") -> float:
        """The share of the query's idf its unknown words must carry for a weak answer, for what ranks ``part_name``.

        When a learned fusion with its own weak bar ranks the tools: the share its entry names with that bar
        (``weak_share``), else :data:`WEAK_LEARNED_SHARE`; otherwise :data:`WEAK_UNKNOWN_SHARE` (the hand fusion, the
        lexical score, categories).
        """
        model = self._tools_model() if part_name == "tools" else None
        if model is None or model.weak is None:
            return WEAK_UNKNOWN_SHARE
        return WEAK_LEARNED_SHARE if model.weak_share is None else model.weak_share

    def unknown_share(self, query: str) -> float:
        """The share of the query's idf its words no tool has carry: 0 (all known) to 1 (none known).

        Each distinct word term of the query's content words (:meth:`_unknown_words`' tokens) weighs its idf among the
        tools (:meth:`term_idf`'s: a term no tool has, the unseen idf ``ln(1 + n) + 1``), so a rare word counts more
        than a common one: "xyzzy the files" is mostly unknown, "rotate the xyzzy credentials" is not. Read from the
        postings the lexical ranking already decoded (cached), so it costs no fetch (docs/search.md, "The weak rule
        weighs words by idf").
        """
        terms = dict.fromkeys(term for token in self._content_tokens(query) for term in analyze_words(token))
        idfs, unseen = self._word_idfs(terms)
        known = unknown = 0.0
        for idf in idfs.values():  # summed in the query's order, as the TypeScript reader sums
            if idf is None:
                unknown += unseen
            else:
                known += idf
        return unknown / (known + unknown) if unknown else 0.0

    def weak_bar(self, part_name: str = "tools", words: int = 0) -> float:
        """The weak bar on the scale of what ranks ``part_name``: a learned fusion's own, else :data:`WEAK_RELEVANCE`.

        A learned model's bar may rise for short queries: ``weak + weak_per_word / words`` for a query of ``words``
        content words (``Model.weak_per_word``, 0 unless its entry has one; ``words`` 0: the bar alone).
        """
        model = self._tools_model() if part_name == "tools" else None
        if model is None or model.weak is None:
            return WEAK_RELEVANCE
        return model.weak + (model.weak_per_word / words if words > 0 else 0.0)

    def _learned_rank(
        self,
        query: str,
        lexical: list[tuple[int, float, list[str]]],
        model: fusion_model.Model,
        allowed: Callable[[int], bool] | None,
        params: tuple[float, float, float, float],
    ) -> Callable[[Any, int, Any], list[tuple[int, float, list[str]]]]:
        """``rank(cosines, limit, pool)``: the learned fusion of ``query``'s candidates for some cosines.

        The query's evidence that does not depend on the cosines (its known-word share, its idf) is read once, and
        serves the head guess of a partitioned build, the ranking itself, and the lexical model (``cosines`` None).
        """
        known, idf = self.known_share(query), self.term_idf(query) if model.idf_coverage else None

        def rank(cosines: Any, limit: int, pool: Any) -> list[tuple[int, float, list[str]]]:
            return fusion_model.fuse(query, lexical, cosines, limit, model, allowed, params, pool, known, idf)

        return rank

    def _tools_model(self) -> fusion_model.Model | None:
        """The learned fusion a tools search with a limit is ranked by now, or None.

        The one rule the ranking (:meth:`_first_stage`, :meth:`_without_vectors`) and :meth:`weak_bar` share.
        """
        tier = self.semantic_tier() if "vectors" in self.manifest else None
        if tier is not None:
            return fusion_model.model_for(str(tier.model), tier.weights_sha256)
        if self._part("tools").expand is not None:
            return None
        return fusion_model.model_for("lexical")

    @staticmethod
    def _content_tokens(query: str) -> list[str]:
        """The query's distinct words as typed (its first 1,000 characters) that have a content term."""
        return [t for t in dict.fromkeys(_NAME_PARTS.findall(query[: NAME_MAX_CHARS * 5])) if analyze_words(t)]

    def _unknown_words(self, query: str) -> tuple[list[str], int]:
        """The query's words (as typed) that no tool's text contains, and how many content words it has."""
        part = self._part("tools")
        words = next(space for space in part.spaces if space["name"] == "words")
        tokens = self._content_tokens(query)
        unknown = [
            token
            for token in tokens
            if all(self._posting("tools", part, words, term) is None for term in analyze_words(token))
        ]
        return unknown, max(1, len(tokens))

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
        """``{"results": [{"path", "title", "summary", "confidence"}]}``: the categories that match best.

        When none matches, the answer says so: a hint, and a next_action to search the tools by purpose
        with the same words (tools are matched on many more fields than categories are).
        """
        try:
            text = check_query(query, "query")
            results = self._node_results(text, check_limit(limit, 5))
        except ReaderError as err:
            return err.envelope()
        missing = self.weak_words(text, results[0]["confidence"], "nodes") if results else None
        if missing is not None:
            return _noted(_weak_answer(text, results, missing, key="results"), query)
        if results:
            return _noted({"results": results}, query)
        return _noted(
            {
                "results": [],
                "hints": [f"No category matches {text[:200]!r}; search tools by purpose instead, or browse the root."],
                "next_action": {"op": "search", "args": {"query": text}},
            },
            query,
        )

    def search_tool_by_category(
        self, query: str, category_path: list[str] | str, limit: int = 5, cursor: str | None = None
    ) -> dict[str, Any]:
        """Tools under a category (and everything below it, DAG included), ranked, as pointers + confidence."""
        try:
            text = check_query(query, "query")
            limit = check_limit(limit, 5)
            path = list(node_path(category_path))
            key = cursor_key(text, path)
            offset = decode_cursor(cursor, key)
            candidates = self._name_candidates(text)
            refs = [ref for _, ref in candidates]
            allowed = self._scoped(text, path, extra=refs) if path else None
            if not path:
                self._prefetch_query("tools", text, [*refs])
            page, more, named = self._answer_tools(text, limit, offset, allowed, path, candidates)
            missing = self.weak_words(text, page[0][1]) if page and named is None and offset == 0 else None
            nothing = missing is not None and len(missing) == self._unknown_words(text)[1]  # no word is known
            if (not page and offset == 0) or nothing:
                raise self._no_match(text, path, anywhere=not nothing)
            end = offset + len(page)
            results = [lean_hit(pointer, score) for pointer, score, _ in page]
            cursor_next = encode_cursor(end, key) if more else None
            answer = {"category_path": path, "results": results, "next_cursor": cursor_next}
            if missing is not None:
                answer = {**answer, **_weak_answer(text, results, missing, key="results", browse=path)}
            return _noted(answer, query)
        except ReaderError as err:
            return err.envelope()

    def _no_match(self, query: str, path: list[str], *, anywhere: bool = True) -> ReaderError:
        elsewhere, _ = self._top_tools(query, 10) if anywhere else ([], False)
        places: list[list[str]] = []
        for pointer, _, _ in elsewhere:
            if pointer["path"] not in places:
                places.append(pointer["path"])
        hints = [f"No tool under {'/'.join(path) or 'the root'!r} matches {query!r}."]
        if places:
            hints.append("The query matches tools in: " + ", ".join("/".join(p) or "(root)" for p in places[:3]))
            action = {"op": "search_in", "args": {"query": query, "path": "/".join(places[0])}}
        else:
            hints.append("No tool in the catalogue matches well; try other words, or browse the categories.")
            action = {"op": "list", "args": {"path": "/".join(path)}}
        return ReaderError(
            "NO_MATCH_IN_CATEGORY",
            f"no tool under {'/'.join(path) or '(root)'!r} matches the query",
            details={"category_path": path, "query": query, "matching_categories": places[:3]},
            hints=hints,
            next_action=action,
        )


def _weak_answer(
    query: str,
    matches: list[dict[str, Any]],
    missing: list[str],
    *,
    key: str = "matches",
    browse: list[str] | None = None,
) -> dict[str, Any]:
    """A search's answer when nothing matches the whole request: the same hits, marked weak, a note, a way to browse.

    ``key`` names the hits' field (``matches``, ``results``); ``browse`` the category to list (the root by default).
    """
    shown = ", ".join(repr(word) for word in missing[:5])
    return {
        key: matches,
        "weak": True,
        "hints": [
            (
                f"No good match for {query[:200]!r}: no tool mentions {shown}, so these match only part of it."
                " Try other words for it, or browse the categories."
            )
        ],
        "next_action": {"op": "list", "args": {"path": "/".join(browse or [])}},
    }


def split_hint(query: str) -> tuple[str, str | None]:
    """``(words, category hint)`` of an agent-written query such as ``server: github / tool: create issue``.

    A ``server:``, ``category:``, ``namespace:``, ``service:`` or ``app:`` label gives the hint (up to the next
    ``/``, ``;``, ``|``, line break or label, so ``server: github, tool: create issue`` on one line gives
    ``github``; at most :data:`HINT_MAX_CHARS`, cut at a word); ``tool:``, ``action:``, ``task:`` and ``query:``
    labels are dropped and their words kept. A query without labels is returned as it is, with no hint.
    """
    hint = None
    found = _HINT.search(query)
    if found is None and _LABEL.search(query) is None:
        return query, None
    if found is not None:
        start, end = found.span(2)
        label = _LABEL.search(query, start, end)
        end = label.start() if label is not None else end
        if end - start > HINT_MAX_CHARS:
            space = query.rfind(" ", start, start + HINT_MAX_CHARS + 1)
            end = space if space > start else start + HINT_MAX_CHARS
        hint = trim(trim(query[start:end]).rstrip(",")) or None
        query = query[: found.start()] + " " + query[end:]
    words = _LABEL.sub(" ", query)
    words = " ".join(words.replace("/", " ").replace("|", " ").replace(";", " ").split())
    return (words or trim(query)), hint


def name_key(text: str) -> str:
    """A name without case or separators: ``GitHub.create_issue``, ``github create-issue`` → ``github create issue``."""
    return " ".join(_NAME_PARTS.findall(text.lower()))


def name_like(query: str) -> bool:
    """Whether a query may be a tool's name: no spaces, or a few parts, or parts without a stop word."""
    parts = name_key(query).split()
    if not parts or len(query) > NAME_MAX_CHARS:
        return False
    if not any(c.isspace() for c in query):
        return True
    return len(parts) <= NAME_SHORT_PARTS or (
        len(parts) <= NAME_MAX_PARTS and not any(part in STOP_WORDS for part in parts)
    )


def lean_hit(pointer: dict[str, Any], score: float) -> dict[str, Any]:
    """A ranked pointer as a model reads it: no provider alias, no empty or false field, its confidence."""
    out = {
        key: value
        for key, value in pointer.items()
        if key != "alias" and value not in (None, "", [], {}) and not (key in _LEAN_DROP and value is False)
    }
    out["confidence"] = round(min(1.0, score), 4)
    return out


def _noted(answer: dict[str, Any], asked: Any) -> dict[str, Any]:
    """``answer`` with the note that the query was cut (:func:`toolcat.reader.checks.query_note`), when it was."""
    note = query_note(asked)
    if note is not None:
        answer["hints"] = [note, *answer.get("hints", [])]
    return answer


def _reason(pointer: dict[str, Any], terms: list[str]) -> str:
    """Which matched terms appear in which shown field (id, summary, tags); the rest matched in longer text."""
    reason = _matched(
        pointer, [term for term in terms if term not in (SEMANTIC_TERM, expansion.EXPANDED_TERM, rerank.RERANK_TERM)]
    )
    notes = [
        note
        for note, term in (
            ("similar meaning (semantic tier)", SEMANTIC_TERM),
            ("related words (learned expansion)", expansion.EXPANDED_TERM),
            ("reranked", rerank.RERANK_TERM),
        )
        if term in terms
    ]
    if reason is None:
        return "; ".join(notes) if notes else "similar spelling (character n-grams)"
    return "; ".join([reason, *notes])


def _matched(pointer: dict[str, Any], terms: list[str]) -> str | None:
    """``matched term (field, ...); ...`` for the word terms of a hit, or None when none matched."""
    if not terms:
        return None
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
