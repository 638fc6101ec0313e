"""toolcat: a catalogue compiler for LLM tools and Agent Skills.

The build side lives in this package (``compiler.build``, ``compiler.cli``); the
stdlib-only runtime reader lives in ``compiler.reader``. This module imports
nothing heavy so that ``import compiler.reader`` stays fast.
"""

from __future__ import annotations

__version__ = "0.1.0"

#: Version of the artifact format written to ``build/`` (see docs/format.md).
FORMAT_VERSION = 1

__all__ = ["FORMAT_VERSION", "__version__"]
