"""Layer 1, the format: what the writer (``toolcat.build``) and every reader agree on.

Stdlib only at import time, and nothing of toolcat's other layers: canonical bytes and refs, hashing,
buckets, shapes and their JSON schemas, the analyzer, the discovery-tool table, envelopes, schema text,
field errors, provider aliases, settings and the shared JSON types. What *runs* things (the embedding models, the
schema guard, linear-time regexes) is in ``toolcat.engines``, beside it.
docs/format.md is its prose; a test keeps ``shapes.py`` and ``schemas/*.json`` in step.
"""
