"""The Skills extension (SEP-2640) as real clients see it: FastMCP's verifying client and raw SDK requests.

FastMCP's ``Client.read_skill`` fetches every file a ``skills/get`` entry lists, checks each size and
``sha256:`` digest, parses SKILL.md's frontmatter and compares it with the entry's: it passes only
against a server that follows the extension's stable text. ``resources/directory/read`` has no client
helper, so it is sent as a raw request through the SDK's ``Client`` session.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError
from support import EXAMPLE_SRC
from test_mcp_clients import TOOLCAT, _extension, _stdio, connect, http_serving

from toolcat.mcp.skills import DIRECTORY_MIME, EXTENSION_ID, skill_md

fastmcp = pytest.importorskip("fastmcp", reason="fastmcp (the [dev] extra) is not installed")
skills_client = pytest.importorskip("fastmcp.skills", reason="this fastmcp has no Skills extension client")


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty sandbox folder (the skills need none, but serve's file tools want one)."""
    return tmp_path_factory.mktemp("skills-sandbox")


def _fastmcp_stdio(build: Path) -> Any:
    from fastmcp.client.transports import StdioTransport  # noqa: PLC0415

    return StdioTransport(command=TOOLCAT, args=["serve", "--build", str(build), "--poll", "0"])


def test_fastmcp_reads_and_verifies_every_skill(example_build: Path) -> None:
    """FastMCP's client lists every skill and reads each one, every file matching its digest, size and frontmatter."""

    async def run() -> tuple[list[Any], list[Any]]:
        client = fastmcp.Client(_fastmcp_stdio(example_build), extensions=[skills_client.SkillsClientExtension()])
        async with client:
            assert client.server_capabilities.extensions[EXTENSION_ID] == {"directoryRead": True}
            listed = await client.list_skills()
            read = [await client.read_skill(entry.uri) for entry in listed]
            return listed, read

    listed, read = anyio.run(run)
    assert len(listed) >= 3
    assert [entry.uri for entry in listed] == [f"skill://{entry.frontmatter.name}/SKILL.md" for entry in listed]
    for entry, skill in zip(listed, read, strict=True):
        assert skill.name == entry.frontmatter.name
        assert len(entry.resources) == len(skill.files)  # SKILL.md and every bundled file, each verified
    assert any(len(entry.resources) > 1 for entry in listed), "no skill bundles files: the test would be vacuous"


def test_skills_list_pages_and_results_carry_cache_hints(example_build: Path, sandbox: Path) -> None:
    """skills/list answers resultType complete with public cache hints; a bad cursor is -32602."""

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", sandbox), "auto") as client:
            listed = await _extension(client, "skills/list", {})
            assert listed["resultType"] == "complete"
            assert listed["cacheScope"] == "public"
            assert listed["ttlMs"] > 0
            assert "nextCursor" not in listed  # the example's skills fit one page
            got = await _extension(client, "skills/get", {"uri": listed["skills"][0]["uri"]})
            assert got["skill"] == listed["skills"][0]
            assert got["cacheScope"] == "public"
            with pytest.raises(MCPError, match="cursor") as bad:
                await _extension(client, "skills/list", {"cursor": "nope"})
            assert bad.value.error.code == types.INVALID_PARAMS

    anyio.run(run)


@pytest.mark.parametrize(
    ("uri", "says"),
    [
        ("skill://no-such-skill/SKILL.md", "skills/list"),
        ("skill://code-reviewer/references/review-checklist.md", "SKILL.md URI"),
        ("skill://task.code_reviewer/SKILL.md", "skills/list"),  # a tool id does not address a skill
        ("toolcat://skills/code-reviewer", "skills/list"),
    ],
)
def test_skills_get_of_what_is_no_skill_is_invalid_params(
    example_build: Path, sandbox: Path, uri: str, says: str
) -> None:
    """skills/get of a URI that is no skill's SKILL.md answers -32602 saying where the skills are named."""

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", sandbox), "auto") as client:
            with pytest.raises(MCPError, match=says) as err:
                await _extension(client, "skills/get", {"uri": uri})
            assert err.value.error.code == types.INVALID_PARAMS

    anyio.run(run)


def test_directory_read_lists_a_skill_folder_level_by_level(example_build: Path, sandbox: Path) -> None:
    """resources/directory/read of a skill's root lists SKILL.md and its folders; a folder lists its files."""

    async def run() -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        async with connect(_stdio(example_build, "gateway", sandbox), "auto") as client:
            root = await _extension(client, "resources/directory/read", {"uri": "skill://code-reviewer"})
            folder = next(r for r in root["resources"] if r["name"] == "references")
            inner = await _extension(client, "resources/directory/read", {"uri": folder["uri"]})
            entry = await _extension(client, "skills/get", {"uri": "skill://code-reviewer/SKILL.md"})
            return root, inner, entry

    root, inner, entry = anyio.run(run)
    names = {r["name"]: r for r in root["resources"]}
    assert root["resultType"] == "complete"
    assert names["SKILL.md"]["mimeType"] == "text/markdown"
    assert names["references"]["mimeType"] == DIRECTORY_MIME
    assert names["scripts"]["mimeType"] == DIRECTORY_MIME
    assert [r["uri"] for r in inner["resources"]] == ["skill://code-reviewer/references/review-checklist.md"]
    manifest = {r["uri"]: r["size"] for r in entry["skill"]["resources"]}
    assert inner["resources"][0]["size"] == manifest[inner["resources"][0]["uri"]]


@pytest.mark.parametrize(
    "uri", ["skill://code-reviewer/SKILL.md", "skill://code-reviewer/nowhere", "skill://no-such-skill"]
)
def test_directory_read_of_a_file_or_nothing_is_invalid_params(example_build: Path, sandbox: Path, uri: str) -> None:
    """resources/directory/read of a file, a missing folder or an unknown skill answers -32602."""

    async def run() -> None:
        async with connect(_stdio(example_build, "gateway", sandbox), "auto") as client:
            with pytest.raises(MCPError) as err:
                await _extension(client, "resources/directory/read", {"uri": uri})
            assert err.value.error.code == types.INVALID_PARAMS

    anyio.run(run)


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_skill_files_are_listed_and_read_over_http(example_build: Path, mode: str) -> None:
    """resources/list names each skill's skill://…/SKILL.md, and its bytes are those skills/get describes."""

    async def run(url: str) -> None:
        async with connect(url, mode) as client:
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            uri = next(u for u in listed if u.startswith("skill://") and u.endswith("/SKILL.md"))
            assert any(u.startswith("toolcat://skills/") for u in listed)  # kept for older clients
            entry = (await _extension(client, "skills/get", {"uri": uri}))["skill"]
            for file in entry["resources"]:
                content = (await client.read_resource(file["uri"])).contents[0]
                data = (
                    content.text.encode("utf-8")
                    if isinstance(content, types.TextResourceContents)
                    else base64.b64decode(content.blob)
                )
                assert file["digest"] == "sha256:" + hashlib.sha256(data).hexdigest(), file["uri"]
                assert file["size"] == len(data)

    with http_serving(example_build, "--poll", "0") as url:
        anyio.run(run, url)


def test_served_skill_md_frontmatter_reads_back_as_the_same_object() -> None:
    """The SKILL.md written from a stored frontmatter parses (as YAML) to that frontmatter, odd characters included."""
    yaml = pytest.importorskip("yaml")
    frontmatter = {
        "name": "odd-skill",
        "description": 'Quotes " and colons: yes, a tab\t, U+2028 \u2028, a C1 control \x85\x90 and no',
        "metadata": {"version": "1.0", "on": "true", "list": [1, 2.5, None]},
        "allowed-tools": "file.read git.diff",
    }
    text = skill_md(frontmatter, "# Body\n").decode("utf-8")
    head, body = text.removeprefix("---\n").split("---\n", 1)
    assert yaml.safe_load(head) == frontmatter
    assert body == "# Body\n"


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_served_skill_md_is_the_authors_file_byte_for_byte(example_build: Path, sandbox: Path, mode: str) -> None:
    """resources/read of every example skill's skill://<name>/SKILL.md gives its source file's exact bytes and digest."""
    sources = {path.parent.name: path.read_bytes() for path in EXAMPLE_SRC.rglob("SKILL.md")}
    assert len(sources) >= 6, sources.keys()

    async def run() -> dict[str, tuple[bytes, dict[str, Any]]]:
        served: dict[str, tuple[bytes, dict[str, Any]]] = {}
        async with connect(_stdio(example_build, "gateway", sandbox), mode) as client:
            listed = await _extension(client, "skills/list", {})
            for entry in listed["skills"]:
                content = (await client.read_resource(entry["uri"])).contents[0]
                assert isinstance(content, types.TextResourceContents)
                served[entry["frontmatter"]["name"]] = (content.text.encode("utf-8"), entry["resources"][0])
        return served

    served = anyio.run(run)
    assert set(served) == set(sources)
    for name, (data, described) in served.items():
        assert data == sources[name], name
        assert described["digest"] == "sha256:" + hashlib.sha256(sources[name]).hexdigest()
        assert described["size"] == len(sources[name])


#: A SKILL.md written by hand: CRLF line endings, a comment, unsorted keys, a folded description, 004's fields.
ODD_SKILL = (
    b"---\r\n# written by hand\r\ndescription: >\r\n  Odd but valid.\r\n  Use it in tests.\r\nname: odd-skill\r\n"
    b"license: MIT\r\ntags: [odd, test]\r\nversion: 1.10\r\nmetadata:\r\n  created: 2026-01-02\r\n---\r\n\r\n"
    b"# Odd skill\r\n\r\nDo the thing.  \r\n"
)


@pytest.fixture(scope="module")
def odd_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A catalogue of one hand-written skill (ODD_SKILL)."""
    from support import write_tree  # noqa: PLC0415

    from toolcat.build import build  # noqa: PLC0415

    root = tmp_path_factory.mktemp("odd-skill")
    src = write_tree(
        root / "src",
        {"_node.yaml": {"title": "Root", "summary": "Everything."}, "skills/odd-skill/SKILL.md": ODD_SKILL},
    )
    build(src, root / "out")
    return root / "out"


def test_skill_md_keeps_crlf_comments_and_key_order(odd_build: Path) -> None:
    """A hand-written SKILL.md is served byte for byte, and listed with its own frontmatter as a YAML reader reads it."""
    yaml = pytest.importorskip("yaml")
    from toolcat.mcp.skills import get_skill, read_skill_file  # noqa: PLC0415
    from toolcat.reader import Catalog  # noqa: PLC0415

    catalog = Catalog.open(odd_build)
    read = read_skill_file(catalog, "skill://odd-skill/SKILL.md").contents[0]
    assert isinstance(read, types.TextResourceContents)
    assert read.text.encode("utf-8") == ODD_SKILL
    entry = get_skill(catalog, "skill://odd-skill/SKILL.md")["skill"]
    assert entry["resources"][0]["digest"] == "sha256:" + hashlib.sha256(ODD_SKILL).hexdigest()
    head = ODD_SKILL.decode().replace("\r\n", "\n").split("---\n")[1]
    parsed = yaml.safe_load(head)
    assert entry["frontmatter"] == {**parsed, "metadata": {"created": "2026-01-02"}}  # a date as its text
    assert entry["frontmatter"]["description"] == "Odd but valid. Use it in tests.\n"  # folded as written
    assert entry["frontmatter"]["tags"] == ["odd", "test"]
