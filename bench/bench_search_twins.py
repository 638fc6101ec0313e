"""How many of the default tier's held-out top-1 errors put first a near-twin of the labelled tool.

    python bench/bench_search_twins.py [--sets bfcl,metatool] [--cosine 0.8]

A bound on what ranking can still win (issue 33 asks +0.08 R@1 on every set): BFCL's catalogue pools every item's
functions, so a request may have more than one tool that answers it while only one is labelled. For each held-out
query (``bench_search.split``) the default tier gets wrong at rank 1 (``Searcher.rank_tools``, as
bench_search_tiers ranks), the tool it put first is a *twin* when its name's last part equals the labelled one's
(case and punctuation aside), or when their descriptions are within ``--cosine`` of each other by MiniLM (the
default tier's own model). Also counted: errors on queries with non-ASCII letters (MiniLM is English). Needs the
default tier (``make build`` installs it) and ``../shared/corpus``; prints a table.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import tempfile
from pathlib import Path

import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, bfcl_source, metatool_source, print_table, split  # noqa: E402
from bench_search_tiers import rank  # noqa: E402

from toolcat.build import build  # noqa: E402

SETS = {"bfcl": (bfcl_source, None), "metatool": (metatool_source, 2000)}


def short(name: str) -> str:
    """A tool name's last dotted part, lower case, letters and digits only."""
    return re.sub(r"[^a-z0-9]", "", name.rsplit(".", 1)[-1].lower())


def descriptions(src: Path, back: dict[str, str]) -> dict[str, str]:
    """Each labelled name's text (its description, else its summary): the first definition of that name."""
    out: dict[str, str] = {}
    for path in sorted(src.rglob("tools.yaml")):
        for tool in yaml.safe_load(path.read_text(encoding="utf-8"))["tools"]:
            out.setdefault(back[tool["id"]], str(tool.get("description") or tool["summary"]))
    return out


def measure(name: str, tmp: Path, cosine: float) -> list[str]:
    """One row of the table for ``name``."""
    import numpy as np  # noqa: PLC0415 - the default tier's extra

    from toolcat.engines.embedding import DEFAULT_SPEC, load_embedder  # noqa: PLC0415 - needs the extra

    maker, sample = SETS[name]
    back, queries = maker(tmp / "src")
    if sample is not None and len(queries) > sample:
        queries = random.Random(0).sample(queries, sample)
    held = [(q, labels) for q, labels in queries if split(q) == "test"]
    build(tmp / "src", tmp / "out")
    ranked, _ = rank(tmp / "out", held, back)
    texts = descriptions(tmp / "src", back)
    model = load_embedder(DEFAULT_SPEC)
    errors = [(q, labels, top[0] if top else None) for (q, labels), top in zip(held, ranked, strict=True)]
    errors = [(q, labels, got) for q, labels, got in errors if got not in labels]
    by_name = by_text = foreign = 0
    for query, labels, got in errors:
        want = min(labels)
        foreign += any(ord(c) > 127 for c in query)
        if got is None:
            continue
        if short(got) == short(want):
            by_name += 1
            continue
        rows = np.asarray(model.embed([texts[want], texts[got]], documents=True), dtype=np.float64)
        rows /= np.maximum(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12)
        by_text += float(rows[0] @ rows[1]) >= cosine
    r1 = 1 - len(errors) / len(held)
    twins = by_name + by_text
    return [
        name,
        str(len(held)),
        f"{r1:.3f}",
        str(len(errors)),
        f"{by_name} + {by_text} = {twins}",
        f"{(len(errors) - twins) / len(held):.3f}",
        str(foreign),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sets", default="bfcl,metatool")
    parser.add_argument("--cosine", type=float, default=0.8, help="descriptions at least this close are twins")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"skipped: the corpus is not at {CORPUS}")
        return
    try:
        import onnxruntime  # noqa: F401, PLC0415 - only to say what is missing
    except ImportError:
        print("skipped: the default tier is not installed (make build installs it)")
        return
    header = ["set", "held out", "R@1", "top-1 errors", "twin first: same name + text", "errors not twins", "non-ASCII"]
    rows = []
    for name in [s for s in args.sets.split(",") if s]:
        with tempfile.TemporaryDirectory() as tmp:
            rows.append(measure(name, Path(tmp), args.cosine))
    print(f"Default tier, held-out top-1 errors whose first tool is a near-twin (description cosine >= {args.cosine})")
    print_table(header, rows)


if __name__ == "__main__":
    main()
