"""JSON paths and nesting depth of plain JSON values: ``$.a.b[3]`` spelled one way for the build and the reader.

:func:`child_path` extends a path by one key or index (as :mod:`toolcat.build.sources.parse` spells them), and
:func:`too_deep` finds the first list or object nested past a limit without recursing. Both are
re-exported by :mod:`toolcat.format.schemaguard`, where they were first defined.
"""

from __future__ import annotations

import json
from typing import Any


def child_path(parent: str, key: object) -> str:
    """``$.a`` + ``b`` → ``$.a.b``; ``$.a`` + 3 → ``$.a[3]``; odd keys are quoted (as toolcat.build.sources.parse spells them)."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    text = str(key)
    if text.replace("_", "a").replace("-", "a").isalnum():
        return f"{parent}.{text}"
    return f"{parent}[{json.dumps(text, ensure_ascii=False)}]"


def too_deep(value: Any, limit: int, root: str = "$") -> str | None:
    """The path of the first list or object nested deeper than ``limit`` (cycles count as deep), or None."""
    stack: list[tuple[Any, str, int]] = [(value, root, 1)]
    while stack:
        item, path, depth = stack.pop()
        if isinstance(item, dict):
            children: list[tuple[object, Any]] = list(item.items())
        elif isinstance(item, list):
            children = list(enumerate(item))
        else:
            continue
        if depth > limit:
            return path
        stack.extend((child, child_path(path, key), depth + 1) for key, child in reversed(children))
    return None
