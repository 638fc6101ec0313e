"""A tool's spec file is dumped once (issue 29): its bytes equal dumping the spec with its token counts."""

from __future__ import annotations

import random
from typing import Any

from toolcat.build.plan import _joined, _spec_halves
from toolcat.format.canonical import dumps

_KEYS = ["a", "args_schema", "id", "summary", "tok", "tokens_x", "toolz", "version", "warnings", "Z", "é", "tokenz"]
_VALUES: list[Any] = [1, "x", {"tokens": "\x00"}, [1, {"b": 2, "a": 1}], None, "日本"]


def _specs() -> list[dict[str, Any]]:
    rng = random.Random(29)  # noqa: S311 - test data, not secrets
    return [{k: rng.choice(_VALUES) for k in rng.sample(_KEYS, rng.randint(0, len(_KEYS)))} for _ in range(500)]


def test_the_halves_joined_are_the_spec_without_its_counts() -> None:
    """What the token count reads is the canonical JSON of the spec, for keys on either side of ``tokens`` or none."""
    for spec in _specs():
        head, tail = _spec_halves(spec)
        assert _joined(head, tail) == dumps(spec).decode("utf-8"), spec


def test_the_file_is_the_spec_with_its_counts_dumped() -> None:
    """The spec file, counts put between the halves, is byte for byte ``dumps`` of the spec with ``tokens``."""
    counts = {"pointer": 31, "spec": 204}
    for spec in _specs():
        head, tail = _spec_halves(spec)
        data = _joined(_joined(head, dumps({"tokens": counts}).decode("utf-8")), tail)
        assert data.encode("utf-8") == dumps({**spec, "tokens": counts}), spec
