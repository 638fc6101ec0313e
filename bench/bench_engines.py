"""Hand-written engines beside the well-kept libraries that could replace them (issue 37): same answers? cost? size?

    python bench/bench_engines.py [--texts 2000] [--repeat 5]
    make bench-engines

The default tier's query and document side tokenises with toolcat's stdlib WordPiece
(``toolcat.engines.onnx_encoder.WordPieceTokenizer``) and writes its ONNX graph with its own protobuf writer. The
libraries that do those jobs are ``tokenizers`` (reads ``tokenizer.json`` directly) and ``onnx`` (builds graphs).
This bench measures, on the real texts of the corpus's MetaTool and BFCL tools and queries (``../shared/corpus``):

* tokenisation: identical ids on every text (a mismatch is printed and fails the run), the CPU ms to load the
  tokenizer (what the first query of a process pays) and the CPU ms per 1,000 texts, median of ``--repeat``;
* install size: the wheels' bytes and their required dependencies (``pip download --no-deps`` from the package
  index this machine has, else "not measured"), against the bytes the stdlib code adds (its source).

CPU times are the process's (``time.process_time``), in one run, side by side, so the ratios hold on a shared machine.
"""

from __future__ import annotations

import argparse
import importlib.metadata
import inspect
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one thread: the reader's query side runs on one

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))
from bench_search import CORPUS, bfcl_source, metatool_source  # noqa: E402
from bench_search_scale import cpu_name  # noqa: E402

from toolcat.engines import onnx_encoder  # noqa: E402
from toolcat.engines.onnx_encoder import WordPieceTokenizer, bundled_model_dir, ensure_graph  # noqa: E402

MAX_TOKENS = 128


def corpus_texts(limit: int) -> list[str]:
    """Tool descriptions and queries of MetaTool and BFCL (real text nobody here wrote), ``limit`` of them, interleaved."""
    if not (CORPUS / "metatool" / "plugin_des.json").is_file():
        raise SystemExit(f"no MetaTool under {CORPUS}: the corpus (../shared/corpus) is needed")
    with tempfile.TemporaryDirectory() as folder:
        _, meta = metatool_source(Path(folder) / "metatool")
        _, bfcl = bfcl_source(Path(folder) / "bfcl")
        docs = [p.read_text(encoding="utf-8") for p in sorted(Path(folder).rglob("*.yaml"))]
    descriptions = json.loads((CORPUS / "metatool" / "plugin_des.json").read_text(encoding="utf-8"))
    pools = [[q for q, _ in meta], [q for q, _ in bfcl], list(descriptions.values()), docs]
    texts = [pool[i] for i in range(max(map(len, pools))) for pool in pools if i < len(pool)]
    return [t for t in texts if t.strip()][:limit]


def cpu_ms(run: Callable[[], object], repeat: int) -> float:
    """Median CPU milliseconds of ``run()`` over ``repeat`` runs."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        run()
        times.append((time.process_time() - start) * 1000)
    return statistics.median(times)


def wheel_bytes(names: list[str]) -> dict[str, int | None]:
    """Each package's wheel size for this Python from the package index (None when it cannot be downloaded)."""
    sizes: dict[str, int | None] = {}
    with tempfile.TemporaryDirectory() as folder:
        for name in names:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", folder, name],
                capture_output=True,
                text=True,
                check=False,
            )
            found = [p for p in Path(folder).iterdir() if p.name.lower().startswith(name.replace("-", "_"))]
            sizes[name] = found[0].stat().st_size if done.returncode == 0 and found else None
    return sizes


def requirements(name: str) -> list[str]:
    """The installed package's required (non-extra) dependencies, by name."""
    try:
        required = importlib.metadata.requires(name) or []
    except importlib.metadata.PackageNotFoundError:
        return []
    return sorted(
        {
            r.split(";")[0].split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip()
            for r in required
            if "extra ==" not in r
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = bundled_model_dir()
    texts = corpus_texts(args.texts)
    print(f"# engines beside libraries ({cpu_name()}); {len(texts):,} corpus texts, cut at {MAX_TOKENS} tokens\n")

    ours = WordPieceTokenizer.from_folder(folder, max_length=MAX_TOKENS)
    load_ours = cpu_ms(lambda: WordPieceTokenizer.from_folder(folder, max_length=MAX_TOKENS), args.repeat)

    def fresh() -> list[list[int]]:  # a new tokenizer (its word memo empty), every text once
        tokenizer = WordPieceTokenizer.from_folder(folder, max_length=MAX_TOKENS)
        return [tokenizer.encode(t) for t in texts]

    encode_ours = cpu_ms(fresh, args.repeat) - load_ours
    rows = [["toolcat WordPiece (stdlib)", f"{load_ours:.1f}", f"{encode_ours * 1000 / len(texts):.1f}", "same"]]
    try:
        from tokenizers import Tokenizer  # noqa: PLC0415 - optional: the bench measures it where installed
    except ImportError:
        rows.append(["tokenizers", "not installed", "", ""])
    else:
        lib = Tokenizer.from_file(str(folder / "tokenizer.json"))
        lib.enable_truncation(MAX_TOKENS)
        lib.no_padding()
        load_lib = cpu_ms(lambda: Tokenizer.from_file(str(folder / "tokenizer.json")), args.repeat)
        encode_lib = cpu_ms(lambda: [lib.encode(t).ids for t in texts], args.repeat)
        differ = [t for t in texts if lib.encode(t).ids != ours.encode(t)]
        for text in differ[:5]:
            print(f"  DIFFERS: {text[:100]!r}")
        version = importlib.metadata.version("tokenizers")
        rows.append(
            [
                f"tokenizers {version}",
                f"{load_lib:.1f}",
                f"{encode_lib * 1000 / len(texts):.1f}",
                f"{len(differ)} differ",
            ]
        )
        if differ:
            raise SystemExit(f"{len(differ)} of {len(texts)} texts tokenise differently")
    print("| tokenizer | load (CPU ms) | CPU ms per 1,000 texts | ids vs toolcat |\n|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")

    with tempfile.TemporaryDirectory() as cache:  # the graph a machine writes once (the model cache is empty)
        start = time.process_time()
        graph = ensure_graph(folder, Path(cache), "int8")
        graph_ms, graph_size = (time.process_time() - start) * 1000, graph.stat().st_size
    print(f"\nthe int8 ONNX graph, written once per machine by toolcat: {graph_ms:,.0f} CPU ms, {graph_size:,} bytes")
    own = len(inspect.getsource(onnx_encoder).encode())
    sizes = wheel_bytes(["tokenizers", "onnx", "protobuf", "huggingface-hub"])
    print("\n| what | bytes to install | needs |\n|---|---|---|")
    print(f"| toolcat's onnx_encoder.py (tokenizer + graph writer + safetensors reader) | {own:,} (source) | numpy |")
    for name, needs in (
        ("tokenizers", requirements("tokenizers")),
        ("onnx", ["numpy", "protobuf", "typing_extensions"]),
    ):
        size = sizes.get(name)
        print(f"| {name} wheel | {f'{size:,}' if size else 'not measured'} | {', '.join(needs) or '-'} |")
    for name in ("protobuf", "huggingface-hub"):
        size = sizes.get(name)
        print(f"| {name} wheel | {f'{size:,}' if size else 'not measured'} | |")


if __name__ == "__main__":
    main()
