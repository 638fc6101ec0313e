"""What a user pastes and what a policy hides, over MCP.

The client configurations of docs/mcp.md run as pasted, a list-time policy names no forbidden tool in any
answer, and every `make` target the docs name exists.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import StdioServerParameters
from support import REPO, free_port
from test_mcp_clients import call, connect

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
MCP_DOC = REPO / "docs" / "mcp.md"
FENCED = re.compile(r"^```(?P<lang>[a-z]*)\n(?P<body>.*?)^```", re.MULTILINE | re.DOTALL)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder the pasted configurations' --sandbox points at, with one file to read."""
    root = tmp_path_factory.mktemp("workspace")
    (root / "notes.txt").write_text("hello from the sandbox\n")
    return root


def _pasted(text: str, build: Path, workspace: Path) -> str:
    """A doc sample with its placeholders filled: the venv's toolcat, the example build, the workspace."""
    return (
        text.replace("/path/to/.venv/bin/toolcat", TOOLCAT)
        .replace("/path/to/build", str(build))
        .replace("/path/to/workspace", str(workspace))
    )


def _blocks(lang: str) -> list[str]:
    return [m["body"] for m in FENCED.finditer(MCP_DOC.read_text(encoding="utf-8")) if m["lang"] == lang]


async def _reads_the_sandbox(client: Any) -> None:
    """The pinned file_read is listed and reads the sandbox (it refuses every read without --sandbox)."""
    names = [tool.name for tool in (await client.list_tools()).tools]
    assert "file_read" in names, names
    answer = await call(client, "file_read", {"path": "notes.txt"})
    assert answer["ok"] is True, answer
    assert "hello from the sandbox" in json.dumps(answer)


def test_desktop_configs_run_as_pasted(example_build: Path, workspace: Path) -> None:
    """Each mcpServers JSON of docs/mcp.md starts a server that lists file_read and reads the sandbox with it."""
    configs = [json.loads(_pasted(b, example_build, workspace)) for b in _blocks("json") if "mcpServers" in b]
    assert configs, "docs/mcp.md has no mcpServers configuration"
    for config in configs:
        for server in config["mcpServers"].values():
            params = StdioServerParameters(command=server["command"], args=server["args"])

            async def run(target: StdioServerParameters = params) -> None:
                async with connect(target, "auto") as client:
                    await _reads_the_sandbox(client)

            anyio.run(run)


def _commands() -> list[str]:
    lines = [line.strip() for body in _blocks("") for line in body.splitlines()]
    return [line for line in lines if line.startswith(("claude mcp add", "toolcat serve"))]


def test_claude_code_commands_run_as_pasted(example_build: Path, workspace: Path) -> None:
    """docs/mcp.md's Claude Code lines: the stdio server after `--`, and the HTTP server at the URL it adds."""
    commands = _commands()
    stdio = next(c for c in commands if c.startswith("claude mcp add toolcat --"))
    argv = shlex.split(_pasted(stdio.split(" -- ", 1)[1], example_build, workspace))
    params = StdioServerParameters(command=argv[0], args=argv[1:])

    async def over_stdio() -> None:
        async with connect(params, "legacy") as client:
            await _reads_the_sandbox(client)

    anyio.run(over_stdio)
    serve = next(c for c in commands if c.startswith("toolcat serve") and "--transport http" in c)
    added = next(c for c in commands if c.startswith("claude mcp add --transport http"))
    port = str(free_port())
    argv = shlex.split(serve.rstrip("&").replace(" 8000", f" {port}"))
    argv = [TOOLCAT, *argv[1:]]
    argv[argv.index("--build") + 1] = str(example_build)
    url = added.split()[-1].replace(":8000/", f":{port}/")
    with Running(argv):

        async def over_http() -> None:
            async with connect(url, "auto") as client:
                names = [tool.name for tool in (await client.list_tools()).tools]
                assert "tool_help" in names, names

        anyio.run(over_http)


class Running:
    """A server process started from a pasted command line, stopped on exit; ready once it says it listens."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)

    def __enter__(self) -> subprocess.Popen[str]:
        assert self.proc.stderr is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if "listening on" in line:
                return self.proc
            if not line and self.proc.poll() is not None:
                pytest.fail(f"the pasted server exited with {self.proc.returncode}")
        pytest.fail("the pasted server did not start listening")

    def __exit__(self, *_exc: object) -> None:
        self.proc.terminate()
        self.proc.wait(10)


# -- a list-time policy names no forbidden id ----------------------------------------------------------
def _ids_outside_file(answer: dict[str, Any]) -> set[str]:
    """Tool ids and aliases (``ns.x``, ``ns_x``) an answer names in a namespace other than file."""
    text = json.dumps({k: v for k, v in answer.items() if k not in ("meta", "op")})  # op: the name as asked
    named = set(re.findall(r'"(?:name|alias|op|tool_id)": "([^"]+)"', text))
    named |= {s for s in re.findall(r'"suggestions": \[([^\]]*)\]', text) for s in re.findall(r'"([^"]+)"', s)}
    return {n for n in named if n != "file" and not n.startswith(("file.", "file_")) and n not in ALLOWED_TOOLS}


#: The namespaced dialect's own tools (their names may appear in next_action ops).
ALLOWED_TOOLS = {"tool_list", "tool_describe", "find_tool", "tool_call"}


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_allow_namespace_leaks_no_forbidden_id(example_build: Path, workspace: Path, mode: str) -> None:
    """Under --allow-namespace file, no answer names a tool of another namespace, and util is answered as unknown."""
    params = StdioServerParameters(
        command=TOOLCAT,
        args=["serve", "--build", str(example_build), "--dialect", "namespaced", "--allow-namespace", "file"],
    )

    async def run() -> None:
        async with connect(params, mode) as client:
            listed = [tool.name for tool in (await client.list_tools()).tools]
            assert not {n for n in listed if n not in ALLOWED_TOOLS and not n.startswith("file_")}, listed
            hidden = await call(client, "tool_list", {"namespace": "util"})
            absent = await call(client, "tool_list", {"namespace": "zzz"})
            assert hidden["error"]["code"] == absent["error"]["code"] == "UNKNOWN_PATH", (hidden, absent)
            assert hidden["error"]["details"]["suggestions"] == ["file"], hidden  # the one namespace it may see
            answers = [
                hidden,
                await call(client, "tool_list", {"namespace": "util.math"}),
                await call(client, "tool_describe", {"name": "util.math.eval"}),
                await call(client, "find_tool", {"purpose": "evaluate a math expression"}),
                await call(client, "tool_call", {"name": "math_eval", "arguments": {}}),  # its suggestions
                await call(client, "tool_list", {}),
            ]
            for answer in answers:
                assert not _ids_outside_file(answer), answer
            prompt = await client.get_prompt("system_prompt", {})
            text = json.dumps([m.content.model_dump() for m in prompt.messages])
            assert "util" not in text, text  # the build's prompt names every namespace: not served here

    anyio.run(run)


# -- make targets the docs name exist ------------------------------------------------------------------
def _targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z0-9-]*):", (REPO / "Makefile").read_text(encoding="utf-8"), re.MULTILINE))


def _named() -> Iterator[tuple[str, str]]:
    for path in [REPO / "README.md", REPO / "pyproject.toml", REPO / "Makefile", *sorted((REPO / "docs").glob("*.md"))]:
        for name in re.findall(r"`make ([a-z][a-z0-9-]*)", path.read_text(encoding="utf-8")):
            if not name.endswith("-"):  # `make bench-NAME`: a pattern, not a target
                yield path.name, name


def test_every_make_target_the_docs_name_exists() -> None:
    """Each `make X` in README, docs, pyproject and the Makefile is a target (bench-X: bench/bench_X.py exists)."""
    targets = _targets()
    named = list(_named())
    assert any(name == "test-mcp-lowest" for _, name in named)
    missing = [
        (where, name)
        for where, name in named
        if name not in targets
        and not (name.startswith("bench-") and (REPO / "bench" / f"bench_{name[6:].replace('-', '_')}.py").is_file())
    ]
    assert not missing, missing
