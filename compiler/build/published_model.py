"""The embedder a build's vectors were made with, written out for the TypeScript reader (``--publish-model DIR``).

The TypeScript reader embeds queries itself (js/src/semantic.ts), so it needs the very model the Python reader runs:
the ONNX graph :mod:`toolcat.engines.onnx_encoder` builds from the installed MiniLM (int8 weights, mean pooling; the
file the Python reader's onnxruntime session loads) and its WordPiece vocabulary. :func:`publish_model` writes them
into a folder a static host serves (beside the catalogue or anywhere else), named by their content, and
``model.json`` (:data:`MODEL_FORMAT`) listing them with their sha256 and size, the embedder's spec and the weights
sha256 the build records in its vectors meta (the TypeScript reader loads a model only when the two agree, and
checks each file against its sha256). The bytes depend only on the installed model and the graph builder's version,
so publishing twice writes the same files. It is opt-in: the graph is 58 MB, far more than a catalogue.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..engines.embedding import DEFAULT_SPEC, ONNX_MINILM, EmbedderError, load_embedder

#: The format of ``model.json`` (js/src/semantic.ts reads it).
MODEL_FORMAT = "toolcat-model-1"
MODEL_JSON = "model.json"


def publish_model(dest: Path, spec: str = DEFAULT_SPEC, weights_sha256: str | None = None) -> dict[str, Any]:
    """Write the model ``spec`` names into ``dest`` (graph, vocabulary, ``model.json``); returns ``model.json``'s content.

    Raises :class:`~toolcat.engines.embedding.EmbedderError`, before writing anything, for an embedder the TypeScript
    reader cannot run (only the built-in onnxruntime MiniLM specs), one that is not installed, or one whose weights
    are not ``weights_sha256`` (when given: a build's vectors were made with other weights).
    """
    low = spec.strip().lower()
    if low not in ONNX_MINILM:
        raise EmbedderError(
            f"the TypeScript reader runs only the built-in onnxruntime MiniLM embedders, not {spec!r}",
            f"build with --embedder {' / '.join(sorted(ONNX_MINILM))} (the default is {DEFAULT_SPEC}) to publish its model",
        )
    embedder = load_embedder(spec)
    if weights_sha256 is not None and embedder.describe().get("weights_sha256") != weights_sha256:
        raise EmbedderError(
            f"the installed {spec} has other weights than the build's vectors",
            "rebuild the catalogue with the model installed here, then publish it",
        )
    encoder = embedder.model
    graph = Path(encoder.graph_path()).read_bytes()
    vocab = encoder.tokenizer.vocab
    tokens = sorted(vocab, key=vocab.__getitem__)
    if [vocab[token] for token in tokens] != list(range(len(tokens))) or any("\n" in t or "\r" in t for t in tokens):
        raise EmbedderError(f"the vocabulary of {spec!r} is not one token a line", "use a BERT WordPiece model")
    vocab_bytes = "\n".join(tokens).encode("utf-8")
    dest.mkdir(parents=True, exist_ok=True)
    files = {}
    for key, data, suffix in (("graph", graph, "onnx"), ("vocab", vocab_bytes, "txt")):
        digest = hashlib.sha256(data).hexdigest()
        name = f"{key}.{digest[:16]}.{suffix}"
        target = dest / name
        if not target.is_file() or target.stat().st_size != len(data):
            tmp = target.with_name(f".{name}.tmp")
            tmp.write_bytes(data)
            tmp.replace(target)
        files[key] = {"path": name, "sha256": digest, "bytes": len(data)}
    info = {
        "artifact": "embedder_model",
        "format": MODEL_FORMAT,
        **embedder.describe(),
        "max_length": encoder.tokenizer.max_length,
        "lowercase": encoder.tokenizer.lowercase,
        "inputs": ["input_ids", "attention_mask"],
        "output": "embeddings (mean-pooled, not yet normalised)",
        **files,
    }
    (dest / MODEL_JSON).write_text(json.dumps(info, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return info


def publish_build_model(build_dir: Path, dest: Path) -> dict[str, Any]:
    """Publish the embedder the build in ``build_dir`` made its vectors with (its vectors meta names it) into ``dest``.

    Raises :class:`~toolcat.engines.embedding.EmbedderError` when the build has no vectors, or when the model
    installed here has other weights than the build's (then nothing is written).
    """
    entry = json.loads((build_dir / "catalog.json").read_text(encoding="utf-8"))
    manifest = json.loads((build_dir / entry["manifest"]["path"]).read_text(encoding="utf-8"))
    ref = manifest.get("vectors")
    if not isinstance(ref, dict):
        raise EmbedderError(
            f"the build in {build_dir} has no vectors, so there is no model to publish",
            f"build with the default embedder ({DEFAULT_SPEC}), or leave --publish-model out",
        )
    model = json.loads((build_dir / str(ref["path"])).read_text(encoding="utf-8"))["model"]
    return publish_model(dest, str(model["spec"]), str(model.get("weights_sha256")))
