"""Exports load into the provider SDKs' own request types (pydantic TypeAdapters over their typed dicts)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import ConfigDict, TypeAdapter, ValidationError

from toolcat.build.contributors.exports.definitions import (
    OPENAI_RESPONSES,
    as_export_format,
    export_dialect,
    export_specs,
)
from toolcat.cli import main
from toolcat.format.dialects import DIALECT_NAMES, dialect_tools
from toolcat.reader.folder import BuildFolder

openai_types = pytest.importorskip("openai.types", reason="the openai SDK is not installed (toolcat[dev] has it)")
from openai.types.chat import ChatCompletionFunctionToolParam  # noqa: E402
from openai.types.responses import FunctionToolParam  # noqa: E402

#: Unknown keys refused too: a Chat Completions definition must not pass as a Responses one by accident.
_STRICT = ConfigDict(extra="forbid")
RESPONSES = TypeAdapter(list[FunctionToolParam], config=_STRICT)
CHAT = TypeAdapter(list[ChatCompletionFunctionToolParam], config=_STRICT)


def _export(args: list[str]) -> list[dict]:
    result = CliRunner().invoke(main, ["export", *args])
    assert result.exit_code == 0, result.output
    loaded: list[dict] = json.loads(result.stdout)
    return loaded


@pytest.mark.parametrize("dialect", [d for d in DIALECT_NAMES if dialect_tools(d)])
def test_dialect_export_loads_into_openai_responses_type(example_build: Path, dialect: str) -> None:
    """`--provider openai-responses --dialect D --pinned` validates as Responses FunctionToolParams, pinned included."""
    tools = _export(["--provider", OPENAI_RESPONSES, "--dialect", dialect, "--pinned", "--build", str(example_build)])
    RESPONSES.validate_python(tools)
    pinned = {e["alias"] for e in BuildFolder(example_build).manifest.get("always_load", [])}
    names = {t["name"] for t in tools}
    assert pinned, "the example catalogue pins a tool"
    assert pinned <= names
    assert {t.name for t in dialect_tools(dialect)} <= names
    assert all(set(t) <= {"type", "name", "description", "parameters", "strict"} for t in tools)


def test_whole_catalogue_export_loads_into_openai_responses_type(example_build: Path) -> None:
    """Every catalogue tool's Responses definition validates; the Chat Completions form does not (and vice versa)."""
    responses = _export(["--provider", OPENAI_RESPONSES, "--build", str(example_build)])
    chat = _export(["--provider", "openai", "--build", str(example_build)])
    RESPONSES.validate_python(responses)
    CHAT.validate_python(chat)
    assert len(responses) == len(chat) == len(BuildFolder(example_build).specs())
    with pytest.raises(ValidationError):
        RESPONSES.validate_python(chat)
    with pytest.raises(ValidationError):
        CHAT.validate_python(responses)
    assert [t["name"] for t in responses] == [t["function"]["name"] for t in chat]
    assert [t["parameters"] for t in responses] == [t["function"]["parameters"] for t in chat]


def test_responses_shape_is_the_openai_definition_flattened(example_build: Path) -> None:
    """as_export_format keeps names, schemas, strictness and the adaptation warnings of the openai export."""
    folder = BuildFolder(example_build)
    specs = list(folder.specs().values())
    chat = export_specs("openai", specs)
    flat = as_export_format(chat, OPENAI_RESPONSES)
    assert flat.names == chat.names
    assert flat.warnings == chat.warnings
    for a, b in zip(chat.definitions, flat.definitions, strict=True):
        assert b == {"type": "function", **a["function"]}
    gateway = as_export_format(export_dialect("openai", "gateway", folder.always_loaded_specs()), OPENAI_RESPONSES)
    assert [d["strict"] for d in gateway.definitions][:3] == [True, False, False]
    assert as_export_format(chat, "anthropic") is chat


@pytest.mark.parametrize(
    ("provider", "module", "type_name"),
    [("anthropic", "anthropic.types", "ToolParam"), ("gemini", "google.genai.types", "FunctionDeclaration")],
)
def test_other_providers_load_into_their_sdk_types(
    example_build: Path, provider: str, module: str, type_name: str
) -> None:
    """Anthropic's ToolParam and Gemini's FunctionDeclaration accept the exports, where those SDKs are installed."""
    sdk = pytest.importorskip(module, reason=f"{module} is not installed in this environment")
    tools = _export(["--provider", provider, "--dialect", "gateway", "--pinned", "--build", str(example_build)])
    items = tools[0]["functionDeclarations"] if provider == "gemini" else tools
    kind = getattr(sdk, type_name)
    adapter = TypeAdapter(list[kind]) if provider == "gemini" else TypeAdapter(list[kind], config=_STRICT)
    adapter.validate_python(items)
