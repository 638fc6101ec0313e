"""A tool's index and embedded texts are kept from one build to the next (issue 29) only while all they read is the same."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from toolcat.build import build
from toolcat.build.contributors.index import texts as texts_module
from toolcat.build.contributors.index.texts import text_key, tool_embed_text, tool_text
from toolcat.build.memo import ToolMemo, memo_file
from toolcat.build.pipeline import compile_catalog


def _memo_texts(out: Path) -> dict[str, str]:
    """The index texts a build kept for the next one, by key."""
    data = json.loads((out / memo_file("text")).read_bytes())
    entries: dict[str, str] = data["entries"]
    return entries


def _retitle(src: Path) -> Path:
    node = src / "utilities" / "text" / "_node.yaml"
    node.write_text(node.read_text("utf-8").replace('title: "Text"', 'title: "Wordsmithing"', 1), "utf-8")
    return node


def test_a_node_title_edit_remakes_the_texts_of_the_tools_below_it_only(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a node's title changes, the tools below it get texts with the new title; the others' are kept."""
    out = tmp_path / "out"
    build(example_src_copy, out, embedder="none")
    _retitle(example_src_copy)
    made: list[str] = []
    real = texts_module.tool_text

    def counted(tool: Any, catalog: Any) -> str:
        made.append(tool.id)
        return real(tool, catalog)

    monkeypatch.setattr(texts_module, "tool_text", counted)
    build(example_src_copy, out, embedder="none")
    catalog, _ = compile_catalog(example_src_copy)
    below = sorted(
        t.id for t in catalog.tools.values() if ("utilities", "text") in (t.path[:2], *(c[:2] for c in t.categories))
    )
    assert below, "the example catalogue has tools under utilities/text"
    assert sorted(made) == below
    kept = set(_memo_texts(out).values())
    for tool_id in below:
        assert "Wordsmithing" in real(catalog.tools[tool_id], catalog)
        assert real(catalog.tools[tool_id], catalog) in kept


def test_an_edit_build_keeps_the_texts_a_fresh_build_makes(example_src_copy: Path, tmp_path: Path) -> None:
    """Warm = cold: after a node title edit, the kept texts and the node, namespace, lookup and stats files equal a fresh build's."""
    out, fresh = tmp_path / "out", tmp_path / "fresh"
    build(example_src_copy, out, embedder="none")
    _retitle(example_src_copy)
    build(example_src_copy, out, embedder="none")
    build(example_src_copy, fresh, embedder="none", force=True)
    assert (out / memo_file("text")).read_bytes() == (fresh / memo_file("text")).read_bytes()
    assert _shards(out) == _shards(fresh)
    assert any(
        "Wordsmithing" in data.decode("utf-8") for path, data in _shards(out).items() if path.startswith("nodes/")
    )


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["path"]] if isinstance(value.get("path"), str) and "sha256" in value else []
        return own + [p for v in value.values() for p in _refs(v)]
    if isinstance(value, list):
        return [p for v in value for p in _refs(v)]
    return []


def _shards(out: Path) -> dict[str, bytes]:
    """The node, namespace, lookup, alias and stats files the build's manifest reaches (kept or dumped), by path."""
    folders = ("nodes/", "namespaces/", "lookup/", "aliases/", "stats/")
    todo = _refs(json.loads((out / "catalog.json").read_bytes())["manifest"])
    found: dict[str, bytes] = {}
    while todo:
        path = todo.pop()
        if path in found or not (path.startswith(folders) or path.startswith("manifests/")):
            continue
        found[path] = (out / path).read_bytes()
        todo += _refs(json.loads(found[path]))
    return {path: data for path, data in found.items() if not path.startswith("manifests/")}


def test_the_text_key_covers_every_input_of_both_texts(example_src_copy: Path) -> None:
    """Changing any field either text reads (or a title above the tool) changes the key; the same tool keeps it."""
    catalog, _ = compile_catalog(example_src_copy)
    tool = next(t for t in catalog.tools.values() if len(t.path) >= 2)
    key = text_key(tool, catalog)
    assert key is not None
    assert key == text_key(tool, catalog)
    changes = {
        "summary": "another summary",
        "description": "another description",
        "when_to_use": "another time",
        "tags": ("other",),
        "search_hints": ("another hint",),
        "legacy_aliases": ("old.name",),
        "examples": [{"description": "another example"}],
        "args_schema": {"type": "object", "properties": {"zz": {"type": "string", "description": "new"}}},
    }
    for name, value in changes.items():
        changed = dataclasses.replace(tool, **{name: value})
        assert text_key(changed, catalog) != key, name
        assert (tool_text(changed, catalog), tool_embed_text(changed, catalog)) != (
            tool_text(tool, catalog),
            tool_embed_text(tool, catalog),
        ), name
    parent = catalog.nodes[tool.path[:1]]
    catalog.nodes[tool.path[:1]] = dataclasses.replace(parent, title=parent.title + " renamed")
    assert text_key(tool, catalog) != key


def test_the_kept_text_is_returned_for_the_same_key(example_src_copy: Path, tmp_path: Path) -> None:
    """A memo holding a tool's key hands back the kept text without making it: the key alone decides reuse."""
    catalog, _ = compile_catalog(example_src_copy)
    tools = sorted(catalog.tools.values(), key=lambda t: t.id)[:2]
    first = ToolMemo(stage=None)
    made = texts_module.tool_texts(tools, catalog, first)
    (tmp_path / memo_file("text")).write_bytes(first.close_all()[memo_file("text")])  # type: ignore[arg-type]
    second = ToolMemo(previous=tmp_path)
    assert texts_module._remembered("text", lambda *_: "never made", tools, catalog, second) == made


def test_the_text_key_changes_with_the_settings_the_texts_are_made_with(monkeypatch: pytest.MonkeyPatch) -> None:
    """A bench or tuning run that changes EMBED_FIELDS or FIELD_WEIGHTS in process never gets texts made under the old ones."""
    before = texts_module._text_salt()
    monkeypatch.setattr(texts_module, "EMBED_FIELDS", (*texts_module.EMBED_FIELDS, "arg_names"))
    with_names = texts_module._text_salt()
    monkeypatch.setattr(texts_module, "FIELD_WEIGHTS", {**texts_module.FIELD_WEIGHTS, "summary": 99})
    assert len({before, with_names, texts_module._text_salt()}) == 3


def test_with_the_spec_key_the_text_key_covers_what_the_spec_does_not(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The planner's spec key stands for the fields the spec holds; search hints and titles still change the key.

    Issue 33: the texts' key wrote every tool's schema and examples to ``marshal`` a second time. A build keys each
    tool's texts by its spec key (every tool but skills, whose spec is stored without one).
    """
    catalog, _ = compile_catalog(example_src_copy)
    tool = next(t for t in catalog.tools.values() if len(t.path) >= 2 and t.skill is None)
    key = text_key(tool, catalog, "a" * 64)
    assert key is not None
    assert key == text_key(tool, catalog, "a" * 64)
    assert key not in {text_key(tool, catalog), text_key(tool, catalog, "b" * 64)}
    assert text_key(dataclasses.replace(tool, search_hints=("another hint",)), catalog, "a" * 64) != key
    parent = catalog.nodes[tool.path[:1]]
    catalog.nodes[tool.path[:1]] = dataclasses.replace(parent, title=parent.title + " renamed")
    assert text_key(tool, catalog, "a" * 64) != key
    seen: list[str | None] = []
    real = texts_module.text_key

    def spy(tool: Any, catalog: Any, spec_key: str | None = None) -> str | None:
        seen.append(spec_key if tool.skill is None else "skill")
        return real(tool, catalog, spec_key)

    monkeypatch.setattr(texts_module, "text_key", spy)
    build(example_src_copy, tmp_path / "build", embedder="none")
    assert len(seen) > 50
    assert None not in seen, "every tool's texts were keyed by its spec key"
