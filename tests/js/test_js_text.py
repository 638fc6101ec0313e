"""The TypeScript reader's text handling against Python's: ``repr`` of a string, and what a reader strips.

Hints quote an agent's query with ``!r``: a query of two lines (an agent's ``server:`` and ``tool:`` lines) is one
quoted line in Python's hint (a backslash and an n where the line broke), and must be in TypeScript's too.
LiveMCPBench's router queries found the difference (``test_js_search_parity`` with ``TOOLCAT_LIVEMCPBENCH``).
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
import unicodedata

import pytest
from support import node_map

from toolcat.reader.checks import TRIM, trim

TEXTS = [
    "plain words",
    "server: github\ntool: create issue",
    "tabs\tand\r\nwindows lines",
    "it's",
    'say "hi"',
    "both ' and \"",
    "a back\\slash and it's",
    "\\ alone",
    "nul \x00 bell \x07 escape \x1b del \x7f",
    "latin-1 controls \x85 \xa0 no-break \xad soft hyphen",
    "line\u2028separator paragraph\u2029separator",
    "zero\u200bwidth \ufeff bom \u202e override",
    "em\u2003space ideographic\u3000space",
    "café naïve 東京 😀 e\u0301",
    "unassigned \u0378 private \ue000 \U000f0000",
    "lone surrogate \ud800 end",
    "",
]


def _random_texts(count: int) -> list[str]:
    """Seeded strings of ASCII, controls and any code point Python's Unicode database has assigned (or a surrogate)."""
    rng = random.Random("quote")  # noqa: S311 - a seeded sample, no secret
    pool = [chr(c) for c in range(0x20)] + ["'", '"', "\\", "\x7f"]
    out = []
    for _ in range(count):
        chars = []
        for _ in range(rng.randint(0, 12)):
            pick = rng.random()
            if pick < 0.3:
                chars.append(rng.choice(pool))
            elif pick < 0.5:
                chars.append(chr(rng.randint(0x20, 0x7E)))
            else:
                code = rng.choice((rng.randint(0x80, 0xFFFF), rng.randint(0x10000, 0x10FFFF)))
                # a code point later Unicode versions assigned would be printable in Node and not in Python
                if unicodedata.category(chr(code)) != "Cn":
                    chars.append(chr(code))
        out.append("".join(chars))
    return out


def test_py_quote_is_python_repr() -> None:
    """Each text's quoted form is ``repr(text)``, the quote chosen as Python chooses it.

    Controls, separators, format characters, surrogates and private use are escaped; other characters are kept.
    """
    texts = [*TEXTS, *_random_texts(2000)]
    got = node_map("quote.js", "pyQuote", texts)
    wrong = [(t, g, repr(t)) for t, g in zip(texts, got, strict=True) if g != repr(t)]
    assert not wrong, f"{len(wrong)} of {len(texts)} differ, e.g. {wrong[:5]}"
    assert any("\\n" in repr(t) for t in texts)  # the escapes are exercised
    assert any("\\U" in repr(t) for t in texts)


def test_the_trim_set_is_javascripts() -> None:
    """``checks.TRIM`` (what both readers strip from a caller's string) is what ``String.prototype.trim`` strips.

    Every code point is tried once at each end of a word in Node; those trimmed must be TRIM's, no more and no fewer.
    """
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is absent: run `make js`")
    script = (
        "const out = [];"
        "for (let c = 0; c <= 0x10ffff; c++) {"
        "  if (c >= 0xd800 && c <= 0xdfff) continue;"
        "  const ch = String.fromCodePoint(c);"
        "  if ((ch + 'x' + ch).trim() === 'x') out.push(c);"
        "}"
        "console.log(JSON.stringify(out));"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert [chr(c) for c in json.loads(done.stdout)] == sorted(TRIM)
    assert trim("\ufeff\x1c read a file \x85\u3000") == "\x1c read a file \x85"  # the BOM and U+3000 go; these stay
