"""Query-side pseudo-relevance feedback in the embedding space: does moving the query toward its top hits help?

    OMP_NUM_THREADS=1 python bench/bench_search_prf.py [--sets bfcl,metatool] [--keep DIR] [--templates]

A measurement for issue 33 (requests that share no word with their tool, R@5 >= 0.60; R@1 up everywhere): Rocchio
feedback on the default tier's cosine alone. Each set (bench_search_tiers' sources) is built as a user builds it
(the default tier, ``toolcat.build.build`` with no embedder named); every query's vector ``q`` becomes
``normalise(q + a * f)``, ``f`` the mean of its top ``k`` tools' rows (or their softmax-weighted mean at
temperature 0.05, "soft"), and the cosines of the new vector rank the tools. Prints R@1 / R@5 of the cosine alone
on the train and the held-out split (``bench_search.split``) and on the queries that share no word with their tool
(``bench_search_tiers.no_shared_word``, all of them), the plain cosine first. A grid point is chosen on the train
split; the held-out columns are read only for it. Needs the default tier (``make build`` installs it) and
``../shared/corpus``.

``--templates``: instead, the query embedded inside each of :data:`TEMPLATES` ("a tool to {}"), alone and averaged
with the plain query's vector (test-time augmentation: one more embedding a query).

``--sentences``: instead, a query of several sentences (split after ``.``, ``?``, ``!`` or ``;``; parts of three
words or more) embedded sentence by sentence, each tool scored by the best sentence's cosine ("max"), the mean of
the sentences' cosines ("mean"), or either added to the plain query's cosine (one embedding per sentence).

``--centre``: instead, the catalogue's own geometry, no labels: the tools' rows centred on their mean ``mu`` (the
rows alone, or the query too, ``a`` of ``mu``), whitened by their covariance, or without their top ``k`` principal
components ("all but the top").

``--summaries``: instead, a second row a tool, its id words and summary alone embedded, scored alone, as the best
of the two rows ("max"), or added to the full row's cosine.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, print_table, split  # noqa: E402
from bench_search_tiers import labelled_set, no_shared_word  # noqa: E402
from bench_search_tune import open_semantic  # noqa: E402

from toolcat.build import build  # noqa: E402

#: (k, a, soft) grid; (0, 0.0, False) is the plain cosine.
#: Query templates (``--templates``); "{}" is the plain query.
TEMPLATES = ["{}", "a tool to {}", "I need a tool that can {}", "function: {}", "{} (tool)", "how do I {}", "task: {}"]
GRID = [(0, 0.0, False)] + [(k, a, soft) for k in (1, 3, 5, 10) for a in (0.2, 0.4, 0.7) for soft in (False, True)]


def recall(scores: Any, names: list[str], queries: list[tuple[str, set[str]]], subset: list[int]) -> tuple[float, ...]:
    """R@1 and R@5 of ``scores`` (one row a query) over the queries of ``subset``."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    if not subset:
        return (0.0, 0.0)
    r1 = r5 = 0
    for i in subset:
        top = [names[d] for d in np.argsort(-scores[i], kind="stable")[:5]]
        r1 += top[0] in queries[i][1]
        r5 += any(t in queries[i][1] for t in top)
    return (r1 / len(subset), r5 / len(subset))


def sentence_scores(embed: Any, rows: Any, queries: list[tuple[str, set[str]]]) -> dict[str, Any]:
    """Each query's tools scored by its sentences' cosines: the best sentence's ("max") and their mean ("mean")."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    parts = [[s for s in re.split(r"(?<=[.?!;])\s+", q.strip()) if len(s.split()) >= 3] or [q] for q, _ in queries]
    vectors = np.asarray(embed([s for p in parts for s in p]), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    best = np.zeros((len(queries), rows.shape[0]), dtype=np.float32)
    mean = np.zeros_like(best)
    at = 0
    for i, p in enumerate(parts):
        cosines = vectors[at : at + len(p)] @ rows.T
        at += len(p)
        best[i], mean[i] = cosines.max(0), cosines.mean(0)
    return {"max": best, "mean": mean}


def centred_scores(vectors: Any, rows: Any) -> list[tuple[str, Any]]:
    """Cosines after centring, whitening or removing the top principal components of the tools' rows."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    def unit(x: Any) -> Any:
        return x / np.linalg.norm(x, axis=-1, keepdims=True)

    q, d = vectors.astype(np.float64), rows.astype(np.float64)
    mu = d.mean(0)
    values, axes = np.linalg.eigh(np.cov((d - mu).T))
    out = []
    for a in (0.5, 1.0):
        out.append((f"rows centred, a {a}", q @ unit(d - a * mu).T))
        out.append((f"query and rows centred, a {a}", unit(q - a * mu) @ unit(d - a * mu).T))
    for eps in (1e-3, 1e-2, 3e-2):
        w = axes @ np.diag(1 / np.sqrt(values.clip(0) + eps)) @ axes.T
        out.append((f"whitened, eps {eps}", unit((q - mu) @ w) @ unit((d - mu) @ w).T))
    for k in (1, 2, 4, 8):
        top = axes[:, -k:]
        out.append(
            (
                f"all but the top {k}",
                unit((q - mu) - (q - mu) @ top @ top.T) @ unit((d - mu) - (d - mu) @ top @ top.T).T,
            )
        )
    return out


def summary_rows(embed: Any, src: Path, ids: list[str]) -> Any:
    """One more unit row a tool: its id's last part as words, then its summary, embedded alone."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy
    import yaml  # noqa: PLC0415 - the bench's sources

    summaries = {}
    for path in sorted(src.rglob("tools.yaml")):
        for tool in yaml.safe_load(path.read_text(encoding="utf-8")).get("tools", []):
            summaries[tool["id"]] = str(tool.get("summary", "")).rstrip(".")
    texts = [f"{i.rsplit('.', 1)[-1].replace('_', ' ')}. {summaries.get(i, '')}" for i in ids]
    rows = np.asarray(embed(texts), dtype=np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def feedback_scores(base: Any, vectors: Any, rows: Any) -> list[tuple[str, Any]]:
    """The cosines after Rocchio feedback at each point of :data:`GRID` (the plain cosine first)."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    out = []
    for k, a, soft in GRID:
        scores = base
        if k:
            top = np.argsort(-base, axis=1)[:, :k]
            if soft:
                weights = np.exp(np.take_along_axis(base, top, 1) / 0.05)
                feedback = (rows[top] * (weights / weights.sum(1, keepdims=True))[:, :, None]).sum(1)
            else:
                feedback = rows[top].mean(1)
            moved = vectors + a * feedback
            scores = (moved / np.linalg.norm(moved, axis=1, keepdims=True)) @ rows.T
        out.append(("plain cosine" if not k else f"k {k}, a {a}{', soft' if soft else ''}", scores))
    return out


def template_scores(embed: Any, vectors: Any, rows: Any, queries: list[tuple[str, set[str]]]) -> list[tuple[str, Any]]:
    """The cosines of each of :data:`TEMPLATES`, alone and averaged with the plain query ("{}" is the plain cosine)."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    out = []
    for template in TEMPLATES:
        shaped = vectors if template == "{}" else np.asarray(embed([template.format(q) for q, _ in queries]))
        moved_list = (
            [(template, shaped)]
            if template == "{}"
            else [(template, shaped), (f"plain + {template}", vectors + shaped)]
        )
        out += [(label, (moved / np.linalg.norm(moved, axis=1, keepdims=True)) @ rows.T) for label, moved in moved_list]
    return out


def sentence_variants(embed: Any, base: Any, rows: Any, queries: list[tuple[str, set[str]]]) -> list[tuple[str, Any]]:
    """The plain cosine, then :func:`sentence_scores`' best and mean sentence, alone and added to it."""
    split_scores = sentence_scores(embed, rows, queries)
    best, mean = split_scores["max"], split_scores["mean"]
    return [
        ("plain cosine", base),
        ("max", best),
        ("mean", mean),
        ("plain + max", base + best),
        ("plain + mean", base + mean),
        ("plain + max / 2", base + 0.5 * best),
    ]


def summary_variants(base: Any, short: Any) -> list[tuple[str, Any]]:
    """The plain cosine, then the summary row's (``short``): alone, the best of both, and added to it."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    variants = [("plain cosine", base), ("summary row", short), ("max of both rows", np.maximum(base, short))]
    return variants + [(f"plain + {w} summary row", base + w * short) for w in (0.25, 0.5)]


#: The variants ``measure`` can run: feedback (the default) and the four switches of :func:`main`.
VARIANTS = ("feedback", "templates", "sentences", "centre", "summaries")


def measure(name: str, work: Path, variant: str = "feedback") -> list[list[str]]:
    """The rows of one set for ``variant`` (one of :data:`VARIANTS`): each variant's R@1 / R@5 on three splits."""
    import numpy as np  # noqa: PLC0415 - the bench's numpy

    src = work / f"{name}-src"
    back, queries = labelled_set(name, src)
    out = work / f"{name}-build"
    if not (out / "catalog.json").is_file():
        build(src, out)
    _, tier, ids = open_semantic(out)
    names = [back.get(i, i) for i in ids]
    rows = np.asarray(tier.matrix("tools"), dtype=np.float32)
    vectors = np.stack([np.asarray(tier.query_vector(q), dtype=np.float32) for q, _ in queries])
    base = vectors @ rows.T
    embed = tier._embedder.embed  # noqa: SLF001 - the tier's own model, on other texts of the queries and tools
    if variant == "summaries":
        scored = summary_variants(base, vectors @ summary_rows(embed, src, ids).T)
    elif variant == "centre":
        scored = [("plain cosine", base), *centred_scores(vectors, rows)]
    elif variant == "sentences":
        scored = sentence_variants(embed, base, rows, queries)
    elif variant == "templates":
        scored = template_scores(embed, vectors, rows, queries)
    else:
        scored = feedback_scores(base, vectors, rows)
    train = [i for i, (q, _) in enumerate(queries) if split(q) == "train"]
    test = [i for i, (q, _) in enumerate(queries) if split(q) == "test"]
    apart = no_shared_word(src, queries, back)
    return [
        [
            name,
            label,
            *(f"{r1:.3f} / {r5:.3f}" for r1, r5 in (recall(scores, names, queries, p) for p in (train, test, apart))),
        ]
        for label, scores in scored
    ]


def main() -> None:
    """Print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="bfcl,metatool", help="comma-separated: example, github, metatool, bfcl")
    parser.add_argument("--keep", type=Path, default=None, help="keep the builds here (reused when present)")
    parser.add_argument("--templates", action="store_true", help="query templates instead of feedback")
    parser.add_argument("--sentences", action="store_true", help="the query split into sentences instead")
    parser.add_argument("--centre", action="store_true", help="the rows centred, whitened or trimmed instead")
    parser.add_argument("--summaries", action="store_true", help="a second row a tool (its summary) instead")
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"skipped: no corpus at {CORPUS}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        variant = next((v for v in VARIANTS[1:] if getattr(args, v)), "feedback")
        table = [row for name in args.sets.split(",") for row in measure(name, work, variant)]
    column = {"templates": "template", "centre": "rows", "summaries": "rows"}.get(variant, variant)
    print_table(
        [
            "set",
            column,
            "train R@1 / R@5",
            "held out R@1 / R@5",
            "no shared word R@1 / R@5",
        ],
        table,
    )


if __name__ == "__main__":
    main()
