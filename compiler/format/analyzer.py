"""The search analyzer: how text becomes word terms and character n-grams, shared by the build and the reader.

The build (:mod:`toolcat.build.contributors.index.texts`) fits scikit-learn's ``TfidfVectorizer`` with the analyzers defined here
and the reader (:mod:`toolcat.reader.search.searcher`) tokenises queries with them, so a query is tokenised exactly
as the documents were. :func:`analyzer_settings` describes them for a reader in another language, and
:data:`ANALYZER_VERSION` changes whenever their output does. The format is documented in docs/search.md.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any

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
ANALYZER_VERSION = "toolcat-analyzer-3"

#: The thesaurus: words that mean the same in tool requests, rewritten to one canonical form on both sides,
#: documents and queries (so the scikit-learn parity holds), e.g. "PR" matches "pull request". Written by hand
#: for tool catalogues; each group was measured on MetaTool, BFCL and the GitHub MCP list (docs/search.md,
#: "Thesaurus") and is kept only when it does not cost recall there.
#: Verb groups: every word of a group (after stemming, so inflections follow) becomes the first word. The
#: groups below were measured and NOT kept (each cost MetaTool R@5 0.002-0.004 or BFCL R@1 up to 0.007):
#: (create, new, open, add, make), (delete, remove, drop, discard, erase, destroy), (list, show, enumerate),
#: (search, find, lookup), (get, fetch, retrieve, obtain), (update, modify, edit, change, alter).
VERB_GROUPS: tuple[tuple[str, ...], ...] = ()
#: Abbreviations: a word that is rewritten to one or more words (then analysed as such).
ABBREVIATIONS: dict[str, tuple[str, ...]] = {
    "pr": ("pull", "request"),
    "prs": ("pull", "request"),
    "repo": ("repository",),
    "repos": ("repository",),
}


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


def _inflections(word: str) -> list[str]:
    """A verb and its regular inflections (``make`` → makes, maked, making), whose stems can differ."""
    root = word.removesuffix("e")
    return [word, word + "s", root + "ed", root + "ing"]


def _synonyms() -> dict[str, tuple[str, ...]]:
    """Stemmed word → the stemmed term(s) it is rewritten to (:data:`VERB_GROUPS`, :data:`ABBREVIATIONS`)."""
    table: dict[str, tuple[str, ...]] = {}
    for group in VERB_GROUPS:
        canonical = (stem(group[0]),)
        for word in group:
            for form in _inflections(word):
                if stem(form) != canonical[0] and len(stem(form)) > 2:  # "added" stems to "ad"; leave "ad" alone
                    table[stem(form)] = canonical
    for short, words in ABBREVIATIONS.items():
        table[short] = tuple(stem(word) for word in words)
    return table


SYNONYMS = _synonyms()


def analyze_words(text: str) -> list[str]:
    """Word terms: split on non-alphanumerics and identifier case, lowercase, drop stop words, stem, thesaurus.

    A short token mixing letters and digits (``s3``, ``ec2``, ``v2``) is kept whole, followed by its parts.
    A stemmed word the thesaurus knows (:data:`SYNONYMS`) becomes its canonical term(s).
    """
    out: list[str] = []
    for token in WORD_PATTERN.findall(text):
        out.extend(_token_terms(token))
    return out


@functools.lru_cache(maxsize=200_000)
def _token_terms(token: str) -> tuple[str, ...]:
    """One token's word terms (a catalogue repeats its tokens thousands of times: each is analysed once)."""
    out: list[str] = []
    parts = CAMEL_PATTERN.findall(token)
    if len(parts) > 1 and len(token) <= SHORT_TOKEN_CHARS and SHORT_ALNUM.fullmatch(token):
        out.append(token.lower())
    for part in parts:
        lowered = part.lower()
        if lowered not in STOP_WORDS:
            stemmed = stem(lowered)
            out.extend(SYNONYMS.get(stemmed, (stemmed,)))
    return tuple(out)


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
        "stemmer": "toolcat suffix stemmer (compiler/reader/search.py::stem)",  # a label in the format: kept byte for byte
        "char_ngrams": {"range": list(CHAR_NGRAMS), "of": "each stemmed word term, padded with one space each side"},
        "short_alnum": {
            "pattern": SHORT_ALNUM.pattern,
            "max_chars": SHORT_TOKEN_CHARS,
            "rule": "a token of letters and digits this short is also kept whole, before its parts",
        },
        "thesaurus": {
            "rule": "after stemming, a word in this table is replaced by its term(s)",
            "table": {word: list(terms) for word, terms in sorted(SYNONYMS.items())},
        },
        "vectorizer": {"sublinear_tf": True, "norm": "l2", "smooth_idf": True, "use_idf": True},
    }
