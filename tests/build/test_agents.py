"""Agents (seed 004's AGENT.md): loaded as skill-like entries, served in three levels, refused with located errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from support import EXAMPLE_SRC

from toolcat.build import build, compile_catalog
from toolcat.build.errors import SourceError
from toolcat.reader import Catalog

EXPLORER = """---
name: explorer
description: Explores a codebase read-only. Use it to find where things live.
tools: Read, Grep, Glob
model: haiku
---

You explore code. Never edit files.
"""


def test_single_file_agent_becomes_an_agent_entry(make_tree) -> None:
    """agents/<name>.md is an agent.<name> entry with its description, tools, model and an 'agent' tag."""
    src = make_tree({"agents/explorer.md": EXPLORER})
    catalog, diagnostics = compile_catalog(src)
    tool = catalog.tools["agent.explorer"]
    assert tool.skill is not None
    assert tool.path == ("agents",)
    assert tool.summary == "Explores a codebase read-only."
    assert tool.skill.body == "You explore code. Never edit files.\n"
    assert tool.skill.meta["tools"] == ["Glob", "Grep", "Read"]
    assert tool.skill.frontmatter["metadata"] == {"entry": "agent", "model": "haiku"}
    assert "agent" in tool.tags
    assert not [d for d in diagnostics if d.file.endswith("explorer.md")]


def test_folder_agent_bundles_its_files_and_may_choose_a_task_id(make_tree, tmp_path: Path) -> None:
    """<name>/AGENT.md with files beside it: level 2 is the body, level 3 a bundled file; task_id maps it to task.*."""
    src = make_tree(
        {
            "team/planner/AGENT.md": "---\nname: planner\ndescription: Plans features as small tasks.\n"
            "task_id: task.plan\n---\nPlan in small steps; use template.md.\n",
            "team/planner/template.md": "# Plan\n",
        }
    )
    out = tmp_path / "build"
    build(src, out)
    cat = Catalog.open(out)
    body = cat.tool_exec("task.plan", {})
    assert body["ok"], body
    assert body["result"]["instructions"] == "Plan in small steps; use template.md.\n"
    assert body["result"]["type"] == "agent"
    resource = cat.tool_exec("task.plan", {"resource": "template.md"})
    assert resource["result"]["content"] == "# Plan\n"
    assert [p["tool_id"] for p in cat.list(["team"])["tools"]] == ["task.list", "task.plan"]
    assert cat.tool_exec("task.plan", {"resource": "AGENT.md"})["ok"] is False  # the definition is level 2, not 3


@pytest.mark.parametrize(
    ("files", "where", "words"),
    [
        ({"agents/explorer.md": "no frontmatter here\n"}, "agents/explorer.md:1", "frontmatter"),
        ({"agents/explorer.md": "---\nname: other\ndescription: x\n---\nbody\n"}, "agents/explorer.md:2", "differs"),
        ({"agents/explorer.md": "---\nname: explorer\n---\nbody\n"}, "agents/explorer.md", "description"),
        ({"x/Bad_Name/AGENT.md": "---\nname: Bad_Name\ndescription: x\n---\nb\n"}, "x/Bad_Name/AGENT.md:2", "naming"),
    ],
)
def test_bad_agents_are_refused_with_a_located_error(make_tree, files, where, words) -> None:
    """A broken agent file fails the build with an error naming the file, line and what is wrong."""
    src = make_tree({**files, "misc/tools.yaml": {"tools": []}})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    text = str(caught.value)
    assert where in text
    assert words in text


def test_unknown_agent_keys_are_warnings_and_strict_refuses_them(make_tree) -> None:
    """A frontmatter key no agent form reads is a located warning, an error under --strict."""
    src = make_tree({"agents/explorer.md": EXPLORER.replace("model: haiku", "model: haiku\npermissions: all")})
    _, diagnostics = compile_catalog(src)
    assert any(d.code == "extra_field" and d.line == 6 and "permissions" in d.message for d in diagnostics)
    with pytest.raises(SourceError):
        compile_catalog(src, strict=True)


def test_an_agent_may_not_take_a_skills_name(make_tree) -> None:
    """An agent and a skill with one name would share skills/<name>/ and the name lookup: a located error."""
    src = make_tree(
        {
            "agents/explorer.md": EXPLORER,
            "skills/explorer/SKILL.md": "---\nname: explorer\ndescription: A skill.\n---\nBody.\n",
        }
    )
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    assert "already taken" in str(caught.value)


def test_readme_in_an_agents_folder_is_not_an_agent(make_tree) -> None:
    """agents/README.md describes the folder; it is not loaded as an agent."""
    src = make_tree({"agents/README.md": "# Our agents\n", "agents/explorer.md": EXPLORER})
    catalog, _ = compile_catalog(src)
    assert [t.id for t in catalog.skills] == ["agent.explorer"]


def test_example_catalogue_serves_its_agents(example_build: Path) -> None:
    """The example catalogue's agents are found by search and load their instructions on demand."""
    assert (EXAMPLE_SRC / "agents" / "code-explorer.md").is_file()
    cat = Catalog.open(example_build)
    hits = cat.find_tool("explore an unfamiliar codebase to find where the routes are defined")
    assert hits["matches"][0]["name"] == "task.explore"
    loaded = cat.tool_exec("task.explore", {"query": "where are the routes"})
    assert "You are a code explorer" in loaded["result"]["instructions"]


def test_an_agent_name_is_matched_whole_against_the_naming_rule(tmp_path):
    """A name that only starts like a valid one (``code!explorer``) is refused, as the skill naming rule says."""
    from toolcat.build.sources.agents import check_agent  # noqa: PLC0415

    agent = tmp_path / "agents" / "code!explorer.md"
    agent.parent.mkdir(parents=True)
    agent.write_text("---\nname: code!explorer\ndescription: Explores code.\n---\nRead the code.\n", encoding="utf-8")
    result = check_agent(tmp_path, agent, ("agents",))
    assert result.record is None
    assert [d.code for d in result.diagnostics] == ["bad_skill_name"], result.diagnostics
    assert result.diagnostics[0].line == 2
