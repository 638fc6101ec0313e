"""The discovery dialects (spec, gateway, namespaced, and direct: no discovery), one module each, and their registry.

``DIALECTS`` maps each name of :data:`toolcat.format.dialects.DIALECT_NAMES` to its module; each
module carries its operations (``OPERATIONS``), its row of the protocol (``PROTOCOL_ROW``,
``HINT_NAMES``, ``render_next``) and the functions that answer its calls. ``shared.py`` holds what
every dialect needs and ``protocol.py`` what rendering shares; no dialect module imports another.
"""

from __future__ import annotations

from types import ModuleType

from ...format.dialects import DIALECT_NAMES
from . import direct, gateway, namespaced, spec

#: Each dialect's module, by name (in the order of DIALECT_NAMES).
DIALECTS: dict[str, ModuleType] = {module.NAME: module for module in (spec, gateway, namespaced, direct)}
#: Each dialect's protocol table, as the docs print it: abstract op → the call an agent makes.
PROTOCOL: dict[str, dict[str, str]] = {name: module.PROTOCOL_ROW for name, module in DIALECTS.items()}

if tuple(DIALECTS) != DIALECT_NAMES:  # pragma: no cover - a dialect added to one list and not the other
    raise ImportError(f"reader dialects {tuple(DIALECTS)} differ from format.dialects.DIALECT_NAMES {DIALECT_NAMES}")

__all__ = ["DIALECTS", "PROTOCOL"]
