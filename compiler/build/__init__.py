"""Layer 3, the compiler: ``catalog_src`` → ``build/``. Needs the ``[build]`` extra.

The face is :func:`build`, :func:`compile_catalog` and :class:`BuildResult` (``from toolcat.build import build``),
loaded on first use so that importing one of the build's modules does not import the whole pipeline.
The stages are in :mod:`toolcat.build.pipeline`.
"""

from __future__ import annotations

import importlib
from typing import Any

__all__ = ["BuildResult", "build", "compile_catalog"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        return getattr(importlib.import_module(".pipeline", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
