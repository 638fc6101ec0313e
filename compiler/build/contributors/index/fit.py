"""Fitting the search index's spaces with scikit-learn (:mod:`toolcat.build.contributors.index.texts` writes what this fits).

The analyzers come from :mod:`toolcat.format.analyzer`, so the stdlib reader tokenises a query exactly as
scikit-learn tokenised the documents.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterable
from typing import Any

from ....format.analyzer import ANALYZERS, word_ngrams

log = logging.getLogger(__name__)

#: Character n-grams in more than this share of documents are dropped (scikit-learn's ``max_df``): they carry
#: almost no information but have the longest postings. Only from this many documents on, so small catalogues
#: keep every n-gram.
CHAR_MAX_DF = 0.3
CHAR_MAX_DF_MIN_DOCS = 100
#: Decimals of a stored posting weight (l2-normalised, so at most 1): 5 instead of 8 cut a cold query's term shards by
#: 23% gzipped at 10,000 tools, with the same R@1 / R@5 / MRR on every labelled set and 190 of 200 find_tool answers
#: byte-identical, the other 10 differing in a relevance's 4th decimal (docs/search.md, "Doc shards a cold query reads").
WEIGHT_DECIMALS = 5


def make_vectorizer(name: str, n_docs: int, *, tokenized: bool = False) -> Any:
    """The scikit-learn vectorizer of a space (the parity tests build theirs with this too).

    ``tokenized``: the documents given to it are already the space's terms (:func:`_space_terms`).
    """
    from sklearn.feature_extraction.text import TfidfVectorizer  # noqa: PLC0415 - heavy, build only

    max_df = CHAR_MAX_DF if name == "chars" and n_docs >= CHAR_MAX_DF_MIN_DOCS else 1.0
    analyzer = _as_is if tokenized else ANALYZERS[name]
    return TfidfVectorizer(analyzer=analyzer, sublinear_tf=True, norm="l2", smooth_idf=True, max_df=max_df)


def _as_is(terms: list[str]) -> list[str]:
    return terms


def space_terms(texts: list[str]) -> dict[str, list[list[str]]]:
    """Each text's terms in every space, each text analysed once (small inputs: a delta segment's documents).

    The chars space is made of the word terms' n-grams (what ``analyze_chars`` does), so it reuses them.
    """
    words = [ANALYZERS["words"](text) for text in texts]
    chars = [[gram for word in terms for gram in word_ngrams(word)] for terms in words]
    return {"words": words, "chars": chars}


class Grams:
    """Each distinct word's n-grams, computed once and shared.

    A catalogue has few distinct words, but its documents hold tens of millions of n-grams, which would
    otherwise each be a string object of their own (most of a 100,000-tool build's memory).
    """

    def __init__(self) -> None:
        self.by_word: dict[str, tuple[str, ...]] = {}

    def of(self, words: list[str]) -> list[str]:
        """A document's chars-space terms, from its word terms."""
        out: list[str] = []
        for word in words:
            grams = self.by_word.get(word)
            if grams is None:
                grams = self.by_word[word] = tuple(sys.intern(g) for g in word_ngrams(word))
            out.extend(grams)
        return out

    def every(self) -> set[str]:
        """Every n-gram seen."""
        return {gram for grams in self.by_word.values() for gram in grams}


class Fitted:
    """One fitted space: its sorted terms and their idf, and the weights by term (a CSC matrix).

    Entries are built term by term from it, never all at once; ``dropped`` holds the terms max_df dropped
    (a delta segment drops them too).
    """

    def __init__(self, terms: list[str], idf: Any, matrix: Any, max_df: float, dropped: list[str]) -> None:
        self.terms = terms
        self.idf = idf
        self.matrix = matrix
        self.max_df = max_df
        self.dropped = dropped

    def entries(self) -> dict[str, dict[str, Any]]:
        """Every term's stored entry ``{idf, docs: delta-encoded ids, w: rounded weights}``."""
        import numpy as np  # noqa: PLC0415 - build only

        out = {}
        for j, term in enumerate(self.terms):
            start, end = self.matrix.indptr[j], self.matrix.indptr[j + 1]
            gaps = np.diff(self.matrix.indices[start:end], prepend=0).tolist()
            weights = np.round(self.matrix.data[start:end], WEIGHT_DECIMALS).tolist()
            out[term] = {"idf": float(self.idf[j]), "docs": gaps, "w": weights}
        return out


def fit_space(
    name: str, docs_terms: Callable[[], Iterable[list[str]]], n_docs: int, every: Callable[[], set[str]]
) -> Fitted:
    """Fit one space with scikit-learn on each document's terms (``docs_terms()`` yields them, once per fit).

    ``every()`` gives every term the documents have, to tell which ones max_df dropped.
    """
    vectorizer = make_vectorizer(name, n_docs, tokenized=True)
    try:
        matrix = vectorizer.fit_transform(docs_terms())
    except ValueError:  # max_df removed every term (near-identical documents), or there is no term at all
        vectorizer.set_params(max_df=1.0)
        try:
            matrix = vectorizer.fit_transform(docs_terms())
        except ValueError:
            return Fitted([], [], None, 1.0, [])
        log.info(
            "%s: every character n-gram is in more than %.0f%% of documents; keeping them all", name, CHAR_MAX_DF * 100
        )
    terms = [str(t) for t in vectorizer.get_feature_names_out()]
    max_df = float(vectorizer.max_df)
    dropped = sorted(every() - set(terms)) if max_df < 1.0 else []
    csc = matrix.tocsc()
    csc.sort_indices()
    return Fitted(terms, vectorizer.idf_, csc, max_df, dropped)
