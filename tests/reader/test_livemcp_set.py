"""bench/livemcp.py: LiveMCPBench's public files made a labelled set (report-only), on a small checkout of that shape."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import livemcp


def _route(call_id: str, query: str) -> dict:
    arguments = json.dumps({"query": f"<tool_assistant>\nserver: {query[0]}\ntool: {query[1]}\n</tool_assistant>"})
    return {"role": "assistant", "tool_calls": [{"id": call_id, "function": {"name": "route", "arguments": arguments}}]}


def _answer(call_id: str, listed: list[tuple[str, str]]) -> dict:
    body = "".join(f"- server_name: {s}\\n  tool_name: {t}\\n  tool_description: x\\n" for s, t in listed)
    return {"role": "tool", "tool_call_id": call_id, "content": f'meta=None content=[TextContent(text="{body}")]'}


def _execute(server: str, tool: str) -> dict:
    arguments = json.dumps({"server_name": server, "tool_name": tool, "params": {}})
    return {
        "role": "assistant",
        "tool_calls": [{"id": "e", "function": {"name": "execute-tool", "arguments": arguments}}],
    }


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    schema = {"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": True}}}
    servers = [
        {
            "name": "File System",
            "tools": {
                "filesystem": {
                    "server_name": "filesystem",
                    "tools": [
                        {"name": "write_file", "description": "Write a file.", "inputSchema": schema},
                        {"name": "read_file", "description": "Read a file.", "inputSchema": {"type": "object"}},
                    ],
                }
            },
        },
        {
            "name": "Desktop Commander",
            "tools": {
                "desktop-commander": {
                    "server_name": "desktop-commander",
                    "tools": [{"name": "write_file", "description": "Write text.", "inputSchema": {"type": "object"}}],
                }
            },
        },
    ]
    task = {
        "Question": "Save the report to /root/report.md",
        "Annotator Metadata": {
            "Steps": "1. read the notes\n2. write the report",
            "Tools": "1. read_file\n2. write_file",
        },
        "messages": [
            _route("r1", ("file system", "read a file")),
            _answer("r1", [("filesystem", "read_file")]),
            _route("r2", ("shell", "run a command")),  # its answer is never used: left out
            _answer("r2", [("filesystem", "write_file")]),
            _execute("filesystem", "read_file"),
            _execute("Desktop Commander", "write_file"),  # named by its entry's title: no route listed it
        ],
    }
    (tmp_path / livemcp.TOOLS).parent.mkdir(parents=True)
    (tmp_path / livemcp.TOOLS).write_text(json.dumps(servers), encoding="utf-8")
    (tmp_path / livemcp.ANNOTATION).parent.mkdir(parents=True)
    (tmp_path / livemcp.ANNOTATION).write_text(json.dumps([task]), encoding="utf-8")
    monkeypatch.setenv("TOOLCAT_LIVEMCPBENCH", str(tmp_path))
    return tmp_path


def test_tasks_steps_and_used_router_answers_are_labelled(checkout: Path, tmp_path: Path) -> None:
    """A task counts every annotated tool; a step its place's; an agent query the tools of its answer it called."""
    _, queries = livemcp.livemcp_source(tmp_path / "src")
    got = dict(queries)
    assert got["Save the report to /root/report.md"] == {
        "filesystem.read_file",
        "filesystem.write_file",
        "desktop_commander.write_file",
    }
    assert got["read the notes"] == {"filesystem.read_file"}
    assert got["write the report"] == {"filesystem.write_file", "desktop_commander.write_file"}
    assert got["server: file system\ntool: read a file"] == {"filesystem.read_file"}
    assert not any(text.startswith("server: shell") for text in got)
    _, agent = livemcp.livemcp_agent_source(tmp_path / "agent")
    assert agent == [("server: file system\ntool: read a file", {"filesystem.read_file"})]


def test_draft_04_schemas_become_valid_sources(checkout: Path, tmp_path: Path) -> None:
    """A boolean exclusiveMinimum (draft-04, common in MCP lists) becomes 2020-12's number, so the build accepts it."""
    livemcp.livemcp_source(tmp_path / "src")
    tools = yaml.safe_load((tmp_path / "src" / "filesystem" / "tools.yaml").read_text(encoding="utf-8"))["tools"]
    number = tools[0]["args_schema"]["properties"]["n"]
    assert number == {"type": "number", "exclusiveMinimum": 0}


def test_without_a_checkout_the_set_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOOLCAT_LIVEMCPBENCH", raising=False)
    assert "TOOLCAT_LIVEMCPBENCH" in (livemcp.missing() or "")
    with pytest.raises(FileNotFoundError, match="TOOLCAT_LIVEMCPBENCH"):
        livemcp.livemcp_source(Path("unused"))
