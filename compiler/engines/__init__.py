"""Layer 1b, the engines: code that runs what the format describes, kept out of the format itself.

The format (``toolcat.format``) is what the writer and every reader agree on. The engines run things: the
embedding models (``embedding``: the tiers' model runners; ``onnx_encoder``: the ONNX graph and WordPiece tokenizer
of the default tier, written from the bundled weights), the JSON Schema guard every argument check goes through
(``schemaguard``) and the linear-time regular expressions it and the readers use (``regex``). As Pagefind keeps its
stemmer in a crate of its own: replaceable without touching the format. Engines import only ``toolcat.format`` and,
at module level, the standard library (optional packages inside the functions that need them); the reader and
everything above may import them.
"""
