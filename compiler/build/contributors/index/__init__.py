"""The search index: texts, the TF-IDF fit, sharded files on disk, incremental segments, and lint."""
