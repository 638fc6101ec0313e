"""Layer 1, the format: what the writer (``toolcat.build``) and every reader agree on.

Stdlib only at import time, and nothing of toolcat's other layers: canonical bytes and refs, hashing,
buckets, shapes and their JSON schemas, the analyzer, the discovery-tool table, envelopes, schema text,
field errors, the schema guard and safe regexes, provider aliases and the shared JSON types.
docs/format.md is its prose; a test keeps ``shapes.py`` and ``schemas/*.json`` in step.
"""
