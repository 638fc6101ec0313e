"""The client matrix: the SDK's ``Client`` in both protocol eras, both transports, all three dialects.

The default mode negotiates 2026-07-28, legacy mode the 2025-11-25 handshake; over stdio and
streamable HTTP, each dialect follows its seed's flow.

* spec (000): search_nodes → search_tool_by_category → expand_tool → call_tool of the rename tool;
* gateway (001): a failing tool_exec (bad enum) → tool_help at its help_path → the corrected retry → tool_batch;
* namespaced (004): find_tool → tool_describe → a call of the described tool by its alias (its next_action).

Also here: cache hints on lists, the Skills extension's digests, and the per-client views.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp import Client, StdioServerParameters, stdio_client
from pydantic import BaseModel, ConfigDict
from support import free_port

from toolcat.mcp.skills import EXTENSION_ID

TOOLCAT = str(Path(sys.executable).parent / "toolcat")
MODES = ("auto", "legacy")
TRANSPORTS = ("stdio", "http")
DIALECTS = ("spec", "gateway", "namespaced")
RENAME = "refactor.rename_symbol"
RENAME_ARGS = {"project_root": "proj", "symbol": "calc_total", "new_name": "compute_total", "language": "py"}


class AnyResult(BaseModel):
    """An extension method's result, kept whole."""

    model_config = ConfigDict(extra="allow")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A workspace with one Python project whose helper the flows rename (as a dry run)."""
    root = tmp_path_factory.mktemp("workspace")
    (root / "proj").mkdir()
    (root / "proj" / "billing.py").write_text("def calc_total(x):\n    return x\n\nprint(calc_total(2))\n")
    return root


@contextlib.contextmanager
def http_serving(build_dir: Path, *extra: str) -> Iterator[str]:
    """``toolcat serve --transport http`` on a free 127.0.0.1 port; yields its /mcp URL; stops it after."""
    port = free_port()
    # a short drain: the tests stop servers whose abandoned calls still run (SIGTERM waits for calls in flight)
    argv = [
        TOOLCAT,
        "serve",
        "--build",
        str(build_dir),
        "--transport",
        "http",
        "--port",
        str(port),
        "--drain-seconds",
        "1",
    ]
    proc = subprocess.Popen([*argv, *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stderr is not None
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = proc.stderr.readline()
            if "listening on" in line:
                break
            if not line and proc.poll() is not None:
                pytest.fail(f"toolcat serve exited with {proc.returncode}")
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(10)


@contextlib.asynccontextmanager
async def connect(target: StdioServerParameters | str, mode: str) -> AsyncIterator[Client]:
    """An SDK ``Client`` in ``mode`` (``auto`` negotiates 2026-07-28 with this server).

    A stdio target goes through ``stdio_client`` (the transport every 2.x client accepts; ``Client`` takes
    ``StdioServerParameters`` itself only from 2.3), with the server's stderr discarded.
    """
    with open(os.devnull, "w") as devnull:  # noqa: PTH123, ASYNC230 - the server's stderr is not under test
        server = stdio_client(target, errlog=devnull) if isinstance(target, StdioServerParameters) else target
        async with Client(server, mode=mode, read_timeout_seconds=60) as client:
            yield client


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tools/call answer as the JSON the model reads."""
    result = await client.call_tool(name, args)
    assert result.content, result
    answer: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    return answer


async def flow_spec(client: Client) -> None:
    """000: navigate by search to the rename tool, expand it, call it."""
    nodes = await call(client, "search_nodes", {"query": "rename a function across a project"})
    path = nodes["results"][0]["path"]
    found = await call(client, "search_tool_by_category", {"query": "rename a symbol", "category_path": path})
    assert RENAME in [r["tool_id"] for r in found["results"]], found
    spec = await call(client, "expand_tool", {"tool_id": RENAME})
    assert spec["args_schema"]["properties"]["language"]["enum"] == ["ts", "js", "py", "go", "java"]
    done = await call(client, "call_tool", {"tool_id": RENAME, "args": RENAME_ARGS})
    assert done["ok"] is True, done
    assert done["result"]["changed_files"] == ["proj/billing.py"]


async def flow_gateway(client: Client) -> None:
    """001: a bad enum fails validation, tool_help at its help_path shows the values, the retry passes; then a batch."""
    bad = await call(client, "tool_exec", {"op": RENAME, "args": {**RENAME_ARGS, "language": "python"}})
    assert bad["error"]["code"] == "VALIDATION_ERROR"
    helped = await call(client, "tool_help", {"path": bad["error"]["help_path"]})
    assert '"py"' in json.dumps(helped)
    fixed = await call(client, "tool_exec", {"op": RENAME, "args": RENAME_ARGS})
    assert fixed["ok"] is True, fixed
    batch = await call(
        client,
        "tool_batch",
        {
            "ops": [
                {"type": "help", "path": RENAME, "format": "short"},
                {"type": "exec", "op": "util.math.eval", "args": {"expression": "6*7"}},
            ],
            "mode": "sequential",
        },
    )
    assert [r["status"] for r in batch["results"]] == ["ok", "ok"]


async def flow_namespaced(client: Client) -> None:
    """004: find the tool, describe it, then call what describe's next_action names, a tool the client is listed.

    A session (handshake era) lists the described tool by its alias; without one (2026-07-28) the call goes
    through tool_call (docs/mcp.md, "Namespaced execution").
    """
    found = await call(client, "find_tool", {"purpose": "rename a function everywhere in a project"})
    assert found["matches"][0]["name"] == RENAME, found
    described = await call(client, "tool_describe", {"name": RENAME})
    action = described["next_action"]
    listed = [tool.name for tool in (await client.list_tools()).tools]
    assert action["op"] in listed, (action, listed)
    if client.protocol_version == "2026-07-28":
        assert action["op"] == "tool_call", action
        assert action["args"]["name"] == "refactor_rename_symbol", action
        done = await call(client, "tool_call", {"name": action["args"]["name"], "arguments": RENAME_ARGS})
    else:
        assert action["op"] == "refactor_rename_symbol"
        done = await call(client, action["op"], RENAME_ARGS)
    assert done["ok"] is True, done
    assert done["result"]["changed_files"] == ["proj/billing.py"]


FLOWS = {"spec": flow_spec, "gateway": flow_gateway, "namespaced": flow_namespaced}


def _stdio(build_dir: Path, dialect: str, sandbox: Path, *extra: str) -> StdioServerParameters:
    args = ["serve", "--build", str(build_dir), "--dialect", dialect, "--sandbox", str(sandbox), *extra]
    return StdioServerParameters(command=TOOLCAT, args=args)


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.parametrize("mode", MODES)
def test_sdk_client_follows_the_seed_flow(
    example_build: Path, sandbox: Path, mode: str, transport: str, dialect: str
) -> None:
    """The SDK client, in both protocol eras and over both transports, completes each dialect's seed flow."""
    expected = "2026-07-28" if mode == "auto" else "2025-11-25"

    async def run(target: StdioServerParameters | str) -> None:
        async with connect(target, mode) as client:
            assert client.protocol_version == expected
            await FLOWS[dialect](client)

    if transport == "stdio":
        anyio.run(run, _stdio(example_build, dialect, sandbox))
    else:
        with http_serving(example_build, "--dialect", dialect, "--sandbox", str(sandbox)) as url:
            anyio.run(run, url)


def test_modern_lists_carry_public_cache_hints(example_build: Path, sandbox: Path) -> None:
    """At 2026-07-28, tools/list, prompts/list and resources/list say ttlMs > 0 and cacheScope public."""

    async def run() -> None:
        async with connect(_stdio(example_build, "namespaced", sandbox), "auto") as client:
            for listed in (await client.list_tools(), await client.list_prompts(), await client.list_resources()):
                assert listed.ttl_ms > 0
                assert listed.cache_scope == "public"

    anyio.run(run)


def test_legacy_namespaced_view_is_private_and_grows_on_describe(example_build: Path, sandbox: Path) -> None:
    """A handshake-era client's tools/list shows what it described (its own view, so cacheScope private)."""

    async def run() -> None:
        async with connect(_stdio(example_build, "namespaced", sandbox), "legacy") as client:
            await call(client, "tool_describe", {"name": RENAME})
            names = [t.name for t in (await client.list_tools()).tools]
            assert "refactor_rename_symbol" in names

    anyio.run(run)


async def _extension(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    request = types.Request[dict[str, Any], str](method=method, params=params)
    result = await client.session.send_request(request, AnyResult)  # type: ignore[arg-type]
    return result.model_dump(by_alias=True)


@pytest.mark.parametrize("mode", MODES)
def test_skills_extension_digests_match_the_files(example_build: Path, sandbox: Path, mode: str) -> None:
    """skills/list gives complete entries; each file's sha256 digest and size match what resources/read returns."""

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", sandbox), mode) as client:
            if mode == "auto":  # capabilities.extensions exists from 2026-07-28 on
                assert EXTENSION_ID in (client.server_capabilities.extensions or {})
            listed = await _extension(client, "skills/list", {})
            assert listed["skills"], listed
            checked = 0
            for skill in listed["skills"][:3]:
                files = skill["resources"]
                assert files[0]["uri"] == skill["uri"] == f"skill://{skill['frontmatter']['name']}/SKILL.md"
                for entry in files:
                    content = (await client.read_resource(entry["uri"])).contents[0]
                    data = (
                        content.text.encode("utf-8")
                        if isinstance(content, types.TextResourceContents)
                        else __import__("base64").b64decode(content.blob)
                    )
                    assert entry["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), entry["uri"]
                    assert entry["size"] == len(data)
                    checked += 1
            assert checked >= 3

    anyio.run(run)


def test_unknown_skill_is_a_protocol_error_naming_the_list(example_build: Path, sandbox: Path) -> None:
    """skills/get of a URI that is no skill answers -32602 pointing at skills/list."""
    from mcp.shared.exceptions import MCPError  # noqa: PLC0415

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", sandbox), "auto") as client:
            with pytest.raises(MCPError, match="skills/list"):
                await _extension(client, "skills/get", {"uri": "skill://no-such-skill/SKILL.md"})

    anyio.run(run)


def test_output_schemas_have_no_nullable_type_arrays() -> None:
    """Every outputSchema the server declares writes a nullable field with anyOf (Inspector --strict portability)."""
    from toolcat.format.dialects import dialect_tools  # noqa: PLC0415
    from toolcat.mcp.discovery import mcp_tool  # noqa: PLC0415

    def arrays(node: Any) -> list[Any]:
        if isinstance(node, dict):
            own = [node["type"]] if isinstance(node.get("type"), list) else []
            return own + [x for v in node.values() for x in arrays(v)]
        if isinstance(node, list):
            return [x for v in node for x in arrays(v)]
        return []

    for dialect in DIALECTS:
        for tool in dialect_tools(dialect):
            assert arrays(tool.output_schema), "the source schemas do use type arrays (else this test is vacuous)"
            assert arrays(mcp_tool(tool)["outputSchema"]) == [], (dialect, tool.name)


@pytest.mark.skipif(os.name != "posix", reason="stdio fd handling is POSIX here")
def test_stdio_server_imports_no_private_sdk_names() -> None:
    """toolcat's MCP modules reach the SDK through public names only (no ``_claim_fd``, no ``_connection``)."""
    root = Path(__file__).resolve().parents[2] / "compiler" / "mcp"
    for path in root.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        for private in ("_claim_fd", "_open_stdin_diversion", "_connection", "from mcp.server.stdio import _"):
            assert private not in text, (path.name, private)


def test_tool_help_takes_the_include_flags_over_mcp(example_build: Path) -> None:
    """The gateway's tool_help accepts include_examples and include_schemas as MCP arguments (001's contract)."""

    async def run() -> tuple[Any, Any, list[str]]:
        params = StdioServerParameters(
            command=TOOLCAT, args=["serve", "--build", str(example_build), "--dialect", "gateway", "--poll", "0"]
        )
        async with connect(params, "legacy") as client:
            listed = await client.list_tools()
            schema = next(t.input_schema for t in listed.tools if t.name == "tool_help")
            plain = await client.call_tool("tool_help", {"path": "file.read"})
            full = await client.call_tool(
                "tool_help", {"path": "file.read", "include_examples": False, "include_schemas": True}
            )
            return plain.structured_content, full.structured_content, sorted(schema["properties"])

    plain, full, properties = anyio.run(run)
    assert {"include_examples", "include_schemas"} <= set(properties)
    assert plain["ok"] is True, plain
    assert full["ok"] is True, full
    assert "examples" in plain
    assert "args_schema" not in plain
    assert "examples" not in full  # include_examples: false
    assert "args_schema" in full  # include_schemas: true
