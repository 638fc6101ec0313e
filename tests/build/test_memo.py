"""The per-tool memo (issue 16): a one-tool edit re-renders one tool's snippets and definitions, same bytes as afresh."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolcat.build import build, memo
from toolcat.build.artifacts import ArtifactSet
from toolcat.build.contributors import prompts
from toolcat.build.contributors.exports import contribute as export_build
from toolcat.build.memo import HOLE, ToolMemo, memo_file, splice
from toolcat.format.canonical import dumps


def _manifest(out: Path) -> dict[str, Any]:
    entry = json.loads((out / "catalog.json").read_text())
    return json.loads((out / entry["manifest"]["path"]).read_text())


def _prompt_and_provider_files(out: Path) -> dict[str, bytes]:
    """Every file under prompts/ and providers/ that the current manifest reaches, by path."""
    manifest = _manifest(out)
    refs = [ref for p in manifest["providers"].values() for ref in [p["catalog"], *p["dialects"].values()]]
    index = manifest["prompts"]["index"]
    refs.append(index)
    prompt_index = json.loads((out / index["path"]).read_text())
    refs += prompt_index["snippets"]["refs"]
    refs += [section["ref"] for section in prompt_index["sections"].values()]
    return {ref["path"]: (out / ref["path"]).read_bytes() for ref in refs}


@pytest.mark.parametrize(
    "payload",
    [
        {"tools": HOLE, "names": {"a_b": "a.b"}, "warnings": [{"message": "x"}], "artifact": "provider_tools"},
        {"tools": [{"functionDeclarations": HOLE}], "warnings": [{"message": "\u0000toolcat-hole"}]},
        {"z": "é ✓ \u2028", "tools": HOLE},
    ],
)
def test_splice_gives_the_bytes_of_dumping_the_list(payload: dict[str, Any]) -> None:
    """Canonical texts spliced where HOLE is are byte for byte the canonical dump of the payload with the list."""
    items = [{"name": "b", "parameters": {"type": "object", "é": [1, 2.5, None]}}, {"name": "a\n\u0000"}, {}]
    texts = [dumps(item).decode("utf-8") for item in items]
    expected = json.loads(json.dumps(payload).replace(json.dumps(HOLE), json.dumps(items)))
    assert splice(dumps(payload), texts) == dumps(expected)


def test_a_one_tool_edit_renders_that_tool_only_and_writes_the_bytes_of_a_fresh_build(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an edit, 1 snippet and 3 definitions (one per provider) are made; the files equal a fresh build's."""
    out = tmp_path / "build"
    build(example_src_copy, out)
    kinds = ["snippet", "export.anthropic", "export.gemini", "export.openai"]
    assert all((out / memo_file(kind)).is_file() for kind in kinds)
    made: list[str] = []
    snippet, definition = prompts.tool_snippet, export_build._definition_text

    def counted_snippet(tool: Any, category: str) -> prompts.Snippet:
        made.append(f"snippet {tool.id}")
        return snippet(tool, category)

    def counted_definition(provider: str, spec: Any) -> list[Any]:
        made.append(f"{provider} {spec['tool_id']}")
        return definition(provider, spec)

    monkeypatch.setattr(prompts, "tool_snippet", counted_snippet)
    monkeypatch.setattr(export_build, "_definition_text", counted_definition)
    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    build(example_src_copy, out)
    assert len(made) == 4, made
    assert len({entry.split()[1] for entry in made}) == 1, "the four are the edited tool's"
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    build(example_src_copy, fresh)
    assert _prompt_and_provider_files(out) == _prompt_and_provider_files(fresh)
    for kind in kinds:
        assert (out / memo_file(kind)).read_bytes() == (fresh / memo_file(kind)).read_bytes(), kind


@pytest.mark.parametrize("garbage", [b"", b"{not json", b'{"format": "toolcat-memo-0", "entries": {}}', b"[1, 2]"])
def test_an_unreadable_or_foreign_memo_only_costs_time(example_src_copy: Path, tmp_path: Path, garbage: bytes) -> None:
    """A memo file that is empty, broken or of another format is ignored: every value is made afresh."""
    (tmp_path / memo_file("snippet")).write_bytes(garbage)
    memo = ToolMemo(tmp_path)
    made: list[str] = []
    assert memo.get("snippet", "abc", lambda: made.append("abc") or ["made"]) == ["made"]
    assert made == ["abc"]
    out = tmp_path / "build"
    build(example_src_copy, out)
    for kind in ("snippet", "export.openai"):
        (out / memo_file(kind)).write_bytes(garbage)
    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    build(example_src_copy, out)
    fresh = tmp_path / "fresh"
    build(example_src_copy, fresh)
    assert _prompt_and_provider_files(out) == _prompt_and_provider_files(fresh)


def test_kept_entries_are_written_back_as_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A memo saved after reading the last one dumps only its new entries, and saves a memo made from nothing's bytes."""
    values: dict[str, Any] = {f"{i:064x}": [f"snippet {i} é \u2028 ,\n", i, {"b": 1.5, "a": None}] for i in range(50)}
    values["e" * 64] = None  # a null kept: the next build makes that value again
    first = ToolMemo()
    for sha, value in values.items():
        first.get("snippet", sha, lambda value=value: value)
    (tmp_path / memo_file("snippet")).write_bytes(first.close_all()[memo_file("snippet")])  # type: ignore[arg-type]
    values.pop(f"{0:064x}")
    values["e" * 64] = ["made again"]
    values["f" * 64] = ["new", 0, {}]
    dumped: list[str] = []
    line = memo._line
    monkeypatch.setattr(memo, "_line", lambda sha, value: dumped.append(sha) or line(sha, value))
    second = ToolMemo(tmp_path)
    for sha, value in values.items():
        assert second.get("snippet", sha, lambda value=value: value) == value
    saved = second.close_all()[memo_file("snippet")]
    assert dumped == ["e" * 64, "f" * 64]
    monkeypatch.undo()
    fresh = ToolMemo()
    for sha, value in values.items():
        fresh.get("snippet", sha, lambda value=value: value)
    assert saved == fresh.close_all()[memo_file("snippet")]
    assert json.loads(saved)["entries"] == dict(sorted(values.items()))  # type: ignore[arg-type]


def test_an_edit_dumps_one_snippet_bucket_and_keeps_the_others(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a one-tool edit one snippet bucket is dumped, the rest are the last build's files; all equal a fresh build's."""
    monkeypatch.setattr(prompts, "SNIPPET_BUCKET_TARGET", 8)  # the example's 74 tools: 16 buckets
    out = tmp_path / "build"
    build(example_src_copy, out)
    dumped: list[str] = []
    add_json = ArtifactSet.add_json

    def counted(self: ArtifactSet, directory: str, stem: str, obj: Any) -> Any:
        if stem.startswith("snippets.b"):
            dumped.append(stem)
        return add_json(self, directory, stem, obj)

    monkeypatch.setattr(ArtifactSet, "add_json", counted)
    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    build(example_src_copy, out)
    index = json.loads((out / _manifest(out)["prompts"]["index"]["path"]).read_text())
    assert len(index["snippets"]["refs"]) == 16
    assert len(dumped) == 1, dumped
    fresh = tmp_path / "fresh"
    build(example_src_copy, fresh)
    assert len(dumped) == 17  # a build from nothing dumps every bucket
    assert _prompt_and_provider_files(out) == _prompt_and_provider_files(fresh)


def test_the_spans_file_says_where_each_definition_and_its_warnings_lie_in_the_catalogue_file(
    example_src_copy: Path, tmp_path: Path
) -> None:
    """Each provider's private file names its catalogue file and each tool's spans there: no definition text of its own.

    Issue 33: the definitions' memo was 22 MB of JSON strings at 10,000 tools, read and written back by every edit.
    """
    out = tmp_path / "build"
    build(example_src_copy, out)
    manifest = _manifest(out)
    for provider in ("anthropic", "gemini", "openai"):
        saved = json.loads((out / export_build.spans_file(provider)).read_bytes())
        assert saved["format"] == export_build.SPANS_FORMAT
        assert saved["file"] == manifest["providers"][provider]["catalog"]
        data = (out / saved["file"]["path"]).read_bytes()
        catalogue = json.loads(data)
        tools = catalogue["tools"][0]["functionDeclarations"] if provider == "gemini" else catalogue["tools"]
        spans = [saved["spans"][i : i + 5] for i in range(0, len(saved["spans"]), 5)]
        assert len(spans) == len(saved["shas"]) == len(saved["names"]) == len(tools) > 50
        warned: list[Any] = []
        for name, (start, end, w_start, w_end, count), tool in zip(saved["names"], spans, tools, strict=True):
            assert json.loads(data[start:end]) == tool
            assert name in json.dumps(tool)
            lost = json.loads(b"[" + data[w_start:w_end] + b"]")
            assert len(lost) == count
            warned += lost
        assert warned == catalogue["warnings"]
        assert dict(zip(saved["names"], sorted(catalogue["names"].values()), strict=True)) == catalogue["names"]
        assert len((out / export_build.spans_file(provider)).read_bytes()) < len(data) / 2


@pytest.mark.parametrize("damage", ["catalogue changed", "path outside", "span past the end", "not a list"])
def test_a_damaged_or_planted_spans_file_makes_every_definition_again(
    example_src_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str
) -> None:
    """A spans file is used only whole and checked: its catalogue file there with its sha256, every span inside it."""
    out = tmp_path / "build"
    build(example_src_copy, out)
    spans_file = out / export_build.spans_file("openai")
    saved = json.loads(spans_file.read_bytes())
    if damage == "catalogue changed":
        catalogue = out / saved["file"]["path"]
        catalogue.write_bytes(catalogue.read_bytes().replace(b'"name":', b'"name" :', 1))
    elif damage == "path outside":
        (tmp_path / "elsewhere.json").write_bytes((out / saved["file"]["path"]).read_bytes())
        saved["file"]["path"] = "../elsewhere.json"
    elif damage == "span past the end":
        saved["spans"][1] = 10**9
    else:
        saved["spans"] = {"a": 1}
    if damage != "catalogue changed":
        spans_file.write_bytes(json.dumps(saved).encode())
    made: list[str] = []
    definition = export_build._definition_text

    def counted(provider: str, spec: Any) -> Any:
        made.append(provider)
        return definition(provider, spec)

    monkeypatch.setattr(export_build, "_definition_text", counted)
    file = example_src_copy / "files" / "tools.yaml"
    file.write_text(
        file.read_text(encoding="utf-8").replace("summary: ", "summary: Wombat-proof ", 1), encoding="utf-8"
    )
    build(example_src_copy, out)
    assert made.count("anthropic") == made.count("gemini") == 1
    assert made.count("openai") == len(saved["shas"]), "every openai definition was made again"
    monkeypatch.undo()
    fresh = tmp_path / "fresh"
    build(example_src_copy, fresh)
    assert _prompt_and_provider_files(out) == _prompt_and_provider_files(fresh)
