"""The TypeScript reader's ``pyQuote`` (js/src/quote.ts) against Python's ``repr`` of a string.

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
from support import REPO

JS = REPO / "js"
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
    node = shutil.which("node")
    if node is None or not (JS / "dist" / "quote.js").is_file():
        pytest.skip("node or js/dist is absent: run `make js`")
    texts = [*TEXTS, *_random_texts(2000)]
    script = (
        "import { pyQuote } from './dist/quote.js';"
        "let s = ''; process.stdin.on('data', (d) => (s += d));"
        "process.stdin.on('end', () => console.log(JSON.stringify(JSON.parse(s).map((t) => pyQuote(t)))));"
    )
    done = subprocess.run(
        [node, "--input-type=module", "-e", script],
        cwd=JS,
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    got = json.loads(done.stdout)
    wrong = [(t, g, repr(t)) for t, g in zip(texts, got, strict=True) if g != repr(t)]
    assert not wrong, f"{len(wrong)} of {len(texts)} differ, e.g. {wrong[:5]}"
    assert any("\\n" in repr(t) for t in texts)  # the escapes are exercised
    assert any("\\U" in repr(t) for t in texts)
