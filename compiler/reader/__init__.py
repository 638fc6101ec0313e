"""The runtime reader: ``from toolcat.reader import Catalog``.

Stdlib only (a test checks every import against ``sys.stdlib_module_names``), so it
imports fast and works where the build-side packages are not installed. ``jsonschema``
is used, when present, only to validate arguments at execution time.
"""

from __future__ import annotations

from ..format.envelope import ERROR_CODES, ReaderError, error_envelope, is_error
from .catalog import Catalog
from .execution.handlers import register_handler

__all__ = ["ERROR_CODES", "Catalog", "ReaderError", "error_envelope", "is_error", "register_handler"]
