"""The TypeScript reader's one-line summary (js/src/summary.ts) against Python's ``one_line`` on awkward texts."""

from __future__ import annotations

from support import node_map

from toolcat.reader.dialects.shared import one_line

TEXTS = [
    "Read a file.",
    "  \n\n  Leading blank lines, then the first line\nsecond line",
    "tabs\tand\u00a0no-break\u2003spaces   collapse",
    "a line\u2028after a line separator",
    "file\x1cseparator splits a line in Python",
    "\x1f unit separator is whitespace but no line break",
    "zero\ufeffwidth no-break space is no Python whitespace",
    "\u0085next-line char first",
    "word " * 40,
    "x" * 130,
    ("é" * 60) + " " + ("😀" * 70),
    "ends with punctuation, " + "a" * 96 + ", ; : tail words to cut here",
    "a, b; c: " * 20,
    "   ",
    "",
    "\r\nwindows\r\nlines",
    "exactly " + "y" * 112,
]


def test_one_line_agrees_with_python() -> None:
    """Each text's one line (first line, Python whitespace, code points, word cut with "…") is Python's, byte for byte."""
    assert node_map("summary.js", "oneLine", TEXTS) == [one_line(t) for t in TEXTS]
    assert any(len(one_line(t) or "") == 120 for t in TEXTS)  # the cut is exercised
