"""The root of every exception toolcat defines: ``except ToolcatError`` catches any of them.

The tree (each class lives in the module named beside it; stdlib only here, so every layer can
derive from it)::

    ToolcatError                       format/errors.py
    ├── ReaderError                    format/envelope.py: a reader failure, answered as an envelope
    ├── PatternError (ValueError)      engines/regex.py: a regex toolcat will not run
    │   ├── InvalidPatternError
    │   └── UnsupportedPatternError
    ├── EmbedderError                  engines/embedding.py: an embedder that cannot be loaded
    ├── EncoderError                   engines/onnx_encoder.py: the default ONNX encoder cannot be built or run
    ├── AdapterError                   engines/adapter.py: a model adapter file that is missing, damaged or mis-shaped
    ├── BuildReadError (ValueError)    reader/folder.py: a build folder the reader refuses
    ├── CorruptBody                    reader/fetch/transport.py: internal signals of one HTTP attempt
    ├── Retry                          reader/fetch/transport.py
    ├── RedirectRefused                reader/fetch/transport.py
    ├── CatalogError (click.ClickException)   build/errors.py: the CLI prints it and exits 1
    │   ├── SourceError                the sources are invalid (every diagnostic)
    │   └── BuildError                 the build could not write its output
    ├── SourceParseError               build/sources/limits.py: text that is not YAML/JSON
    ├── YAMLSyntaxError                build/sources/limits.py: PyYAML's error, located by JSON path
    ├── SourceFileError                build/sources/parse.py: a source file that is not read at all
    ├── MappingError                   build/sources/parse.py: duplicate keys, keys split off by a comma
    ├── _OutOfTimeError                build/sources/git.py: skills_from's one deadline passed (caught there)
    ├── ExposureError (ValueError)     mcp/http_guard.py: serving beyond loopback without a guard
    ├── RestartPending                 mcp/upstream.py: an upstream waits out its restart backoff
    └── ImporterError                  importers/common.py: a source that cannot be imported
        └── McpImportError             importers/mcp.py

``tests/format/test_errors.py`` walks every toolcat module and fails on an exception class that
does not derive from :class:`ToolcatError`.
"""

from __future__ import annotations

__all__ = ["ToolcatError"]


class ToolcatError(Exception):
    """Any error toolcat raises on purpose (an unexpected one keeps its own type and traceback)."""
