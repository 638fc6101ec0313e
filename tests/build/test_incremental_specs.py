"""A tool's spec file is dumped once (issue 29), and an edit build keeps the unchanged specs' files and counts."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from toolcat.build import build, pipeline
from toolcat.build import plan as plan_module
from toolcat.build.artifacts import payload_key
from toolcat.build.plan import _joined, _spec_halves
from toolcat.build.sources import load
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


def _tools_files(out: Path) -> dict[str, bytes]:
    """The spec files and the token stats of a build, by path."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes()
        for folder in ("tools", "stats")
        for p in sorted((out / folder).rglob("*.json"))
    }


def test_an_edit_dumps_only_the_changed_spec_and_keeps_the_fresh_bytes(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A one-tool edit dumps that tool's spec (and the skills') alone; its spec files and stats equal a fresh build's."""
    out = tmp_path / "out"
    build(example_src_copy, out, embedder="none")
    tools_file = next(p for p in sorted(example_src_copy.rglob("tools.yaml")) if "code.lint" in p.read_text("utf-8"))
    tools_file.write_text(
        tools_file.read_text("utf-8").replace("return structured findings", "return findings", 1), "utf-8"
    )
    dumped: list[str] = []
    real = plan_module._stored_spec

    def counted(tool: Any, spec: dict[str, Any], artifacts: Any) -> Any:
        dumped.append(tool.id)
        return real(tool, spec, artifacts)

    monkeypatch.setattr(plan_module, "_stored_spec", counted)
    result = build(example_src_copy, out, embedder="none")
    assert not result.up_to_date
    assert dumped.count("code.lint") == 1
    assert len(dumped) == 1 + result.counts["skills"], dumped  # skills are dumped every build (their files)
    fresh = tmp_path / "fresh"
    build(example_src_copy, fresh, embedder="none", force=True)
    edited, rebuilt = _tools_files(out), _tools_files(fresh)
    assert [path for path in rebuilt if rebuilt[path] != edited.get(path)] == []


def test_the_spec_key_tells_value_types_apart() -> None:
    """Specs that dump to different JSON never share a key (1, 1.0, True, "1"); a value marshal cannot write has none."""
    salt = b"s"
    keys = {payload_key({"a": value}, salt) for value in (1, 1.0, True, "1", [1], None)}
    assert len(keys) == 6
    assert payload_key({"a": 1}, salt) == payload_key({"a": 1}, salt)
    assert payload_key({"a": 1}, b"other") != payload_key({"a": 1}, salt)
    assert payload_key({"a": object()}, salt) is None


def test_a_build_hashes_its_sources_once(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loader takes the build's own fingerprint of the sources instead of hashing every file again."""
    calls: list[Path] = []
    real = load.fingerprint

    def counted(root: Path) -> Any:
        calls.append(root)
        return real(root)

    monkeypatch.setattr(load, "fingerprint", counted)
    monkeypatch.setattr(pipeline, "fingerprint", counted)
    build(example_src_copy, tmp_path / "build")
    assert calls == [example_src_copy]
    assert len(load.load(example_src_copy).file_hashes) == len(real(example_src_copy)[1])  # alone, it hashes them
