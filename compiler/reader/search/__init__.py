"""Search over a build: the lexical ranking (``ranking.py``), the semantic tier and their fusion."""
