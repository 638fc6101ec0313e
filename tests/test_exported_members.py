"""Each public face's ``__all__`` is pinned (as httpx's tests/test_exported_members.py): a change to it is a decision.

Adding a name to a face is an API promise; removing one breaks users. Either is fine when meant: update the pinned
list here in the same commit, and say so in docs/changelog.md.
"""

from __future__ import annotations

import importlib

import pytest

import toolcat

FACES = {
    "toolcat": [
        "ERROR_CODES",
        "FORMAT_VERSION",
        "Catalog",
        "ReaderError",
        "ToolcatError",
        "__version__",
        "error_envelope",
        "is_error",
        "register_handler",
    ],
    "toolcat.reader": ["ERROR_CODES", "Catalog", "ReaderError", "error_envelope", "is_error", "register_handler"],
    "toolcat.build": ["BuildResult", "build", "compile_catalog"],
    "toolcat.mcp.state": [
        "StateStore",
        "StoredWorkingSet",
        "WorkingSets",
        "default_state_path",
        "http_stateless",
        "open_state",
        "state_spec",
    ],
    "toolcat.format.settings": [
        "SETTINGS",
        "Setting",
        "cache_home",
        "child_environ",
        "flag_off",
        "get",
        "markdown_table",
        "named",
        "named_variables",
        "positive_int",
        "set_default",
        "state_home",
    ],
    "toolcat.format.version": ["FORMAT_VERSION", "__version__"],
    "toolcat.integrations": ["WORKING_SET_SIZE", "HostTool", "Toolbox"],
    "toolcat.integrations.langchain": ["langchain_tools"],
    "toolcat.integrations.openai_agents": ["function_tools"],
    "toolcat.integrations.pydantic_ai": ["ToolcatToolset"],
}


@pytest.mark.parametrize("face", sorted(FACES))
def test_the_face_exports_exactly_the_pinned_names(face: str) -> None:
    """The face's __all__ is the pinned list, and every name in it resolves."""
    module = importlib.import_module(face)
    assert sorted(module.__all__) == sorted(FACES[face])
    missing = [name for name in module.__all__ if not hasattr(module, name)]
    assert not missing, f"{face}.__all__ names what it does not have: {missing}"


def test_toolcat_error_is_the_root_of_the_readers_errors() -> None:
    """`from toolcat import ToolcatError` catches the reader's errors (one exception root, exported)."""
    assert issubclass(toolcat.ReaderError, toolcat.ToolcatError)
    assert toolcat.FORMAT_VERSION == importlib.import_module("toolcat.reader.store").SUPPORTED_FORMAT_VERSION
