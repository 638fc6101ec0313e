"""toolcat: a catalogue compiler for LLM tools and Agent Skills.

``from toolcat import Catalog`` is the runtime reader (stdlib only). The build side lives in
``toolcat.build`` and ``toolcat.cli`` and needs the ``[build]`` extra. The source folder is
``compiler/`` in the repository; it ships as the import package ``toolcat``. Importing this
module loads nothing: the reader is imported on first use of one of its names.
"""

from __future__ import annotations

import importlib
from typing import Any

from .format.version import FORMAT_VERSION, __version__

#: Names re-exported from :mod:`toolcat.reader`, loaded on first access.
_READER_NAMES = ("Catalog", "ReaderError", "ERROR_CODES", "error_envelope", "is_error", "register_handler")
#: The root of every exception toolcat raises on purpose (toolcat.format.errors draws the tree).
_FORMAT_NAMES = ("ToolcatError",)

__all__ = [
    "ERROR_CODES",
    "FORMAT_VERSION",
    "Catalog",
    "ReaderError",
    "ToolcatError",
    "__version__",
    "error_envelope",
    "is_error",
    "register_handler",
]


def __getattr__(name: str) -> Any:
    if name in _READER_NAMES:
        return getattr(importlib.import_module(".reader", __name__), name)
    if name in _FORMAT_NAMES:
        return getattr(importlib.import_module(".format.errors", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
