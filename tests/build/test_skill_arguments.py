"""Task arguments of skills and agents (issue 25): declared in frontmatter or metadata.yaml, checked with located errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolcat.build import build, compile_catalog
from toolcat.build.errors import Severity, SourceError
from toolcat.reader import Catalog

SKILL = "---\nname: code-reviewer\ndescription: Reviews code changes. Use it when asked to review.\n{extra}---\nReview it.\n"
ARGUMENTS = (
    "arguments:\n"
    "  target:\n"
    "    description: What to review.\n"
    "    required: true\n"
    "  focus:\n"
    "    enum: [security, style]\n"
)


def _errors(diagnostics) -> list:
    return [d for d in diagnostics if d.severity is Severity.ERROR]


def test_metadata_yaml_arguments_compile_to_the_args_schema(make_tree) -> None:
    """arguments in metadata.yaml become properties (author's order, resource kept out) and open to context."""
    src = make_tree(
        {
            "skills/code-reviewer/SKILL.md": SKILL.format(extra=""),
            "skills/code-reviewer/metadata.yaml": ARGUMENTS,
        }
    )
    catalog, diagnostics = compile_catalog(src)
    assert not [d for d in diagnostics if "code-reviewer" in d.file], diagnostics
    tool = catalog.tools["task.code_reviewer"]
    assert list(tool.args_schema["properties"]) == ["target", "focus"]
    assert tool.args_schema["properties"]["focus"] == {"type": "string", "enum": ["security", "style"]}
    assert tool.args_schema["properties"]["target"]["description"] == "Required. What to review."
    assert tool.args_schema["additionalProperties"] is True
    assert tool.handler == {"type": "skill", "requires": ["target"]}


def test_frontmatter_arguments_work_with_a_portability_warning(make_tree) -> None:
    """arguments in SKILL.md's frontmatter are read, and warned about as not portable (metadata.yaml is the fix)."""
    src = make_tree({"skills/code-reviewer/SKILL.md": SKILL.format(extra=ARGUMENTS)})
    catalog, diagnostics = compile_catalog(src)
    assert "target" in catalog.tools["task.code_reviewer"].args_schema["properties"]
    warned = [d for d in diagnostics if d.json_path == "$.arguments"]
    assert [d.severity for d in warned] == [Severity.WARNING]
    assert "metadata.yaml" in (warned[0].hint or "")


@pytest.mark.parametrize(
    ("declaration", "json_path", "line", "words"),
    [
        ("arguments:\n  target:\n    type: text\n", "$.arguments.target.type", 6, "not a JSON type"),
        ("arguments:\n  target:\n    required: yes please\n", "$.arguments.target.required", 6, "true or false"),
        ("arguments:\n  Target:\n    type: string\n", "$.arguments.Target", 5, "lower-case"),
        ("arguments:\n  resource: {}\n", "$.arguments.resource", 5, "reserved"),
        ("arguments:\n  focus:\n    enum: [1, 2]\n", "$.arguments.focus.enum", 6, "string values"),
        ("arguments:\n  depth:\n    type: integer\n    default: deep\n", "$.arguments.depth.default", 7, "default"),
        ("arguments:\n  target:\n    kind: path\n", "$.arguments.target.kind", 6, "unknown key"),
        ("arguments: [target]\n", "$.arguments", 4, "map each argument"),
    ],
)
def test_a_bad_argument_declaration_is_a_located_error(make_tree, declaration, json_path, line, words) -> None:
    """Each wrong declaration is one error at SKILL.md, its line and JSON path, saying what is wrong and how to fix it."""
    src = make_tree({"skills/code-reviewer/SKILL.md": SKILL.format(extra=declaration)})
    with pytest.raises(SourceError) as caught:
        compile_catalog(src)
    errors = _errors(caught.value.diagnostics)
    assert [(d.file, d.json_path, d.line) for d in errors] == [("skills/code-reviewer/SKILL.md", json_path, line)]
    assert words in errors[0].message
    assert errors[0].hint


def test_a_bad_declaration_in_metadata_yaml_is_located_there(make_tree, tmp_path: Path) -> None:
    """An error in metadata.yaml's arguments names metadata.yaml and its line, and the build fails."""
    src = make_tree(
        {
            "skills/code-reviewer/SKILL.md": SKILL.format(extra=""),
            "skills/code-reviewer/metadata.yaml": "arguments:\n  target:\n    type: path\n",
        }
    )
    with pytest.raises(SourceError) as caught:
        build(src, tmp_path / "out")
    text = str(caught.value)
    assert "skills/code-reviewer/metadata.yaml:3" in text
    assert "$.arguments.target.type" in text


def test_agent_arguments_are_read_without_warning(make_tree, tmp_path: Path) -> None:
    """An AGENT.md declares arguments in its frontmatter (an agent field); calls pass them and other args as context."""
    src = make_tree(
        {
            "agents/explorer.md": "---\nname: explorer\ndescription: Explores code read-only.\ntask_id: task.explore\n"
            "arguments:\n  query:\n    description: The question.\n    required: true\n---\nExplore.\n",
        }
    )
    _, diagnostics = compile_catalog(src)
    assert not [d for d in diagnostics if d.file == "agents/explorer.md"], diagnostics
    build(src, tmp_path / "out")
    answer = Catalog.open(tmp_path / "out").tool_exec("task.explore", {"query": "where", "depth": 2})
    assert answer["result"]["arguments"] == {"query": "where"}
    assert answer["result"]["context"] == {"depth": 2}
    assert answer["result"]["type"] == "agent"


def test_an_authors_task_list_replaces_the_generated_one_with_a_warning(make_tree) -> None:
    """A tool the author calls task.list wins over the generated list, with a warning naming the clash."""
    src = make_tree(
        {
            "skills/code-reviewer/SKILL.md": SKILL.format(extra=""),
            "task/tools.yaml": "tools:\n  - id: task.list\n    summary: My own task list.\n"
            "    args_schema: {type: object}\n",
        }
    )
    catalog, diagnostics = compile_catalog(src)
    assert catalog.tools["task.list"].summary == "My own task list."
    assert [d.code for d in diagnostics if d.code == "task_list_replaced"] == ["task_list_replaced"]


def test_task_list_is_generated_only_when_there_are_tasks(make_tree, tmp_path: Path) -> None:
    """A catalogue with a skill gets task.list at the skill's top node; one with tools only gets none."""
    tools = "tools:\n  - id: file.read\n    summary: Read a file.\n    args_schema: {type: object}\n"
    with_skill = make_tree({"files/tools.yaml": tools, "skills/code-reviewer/SKILL.md": SKILL.format(extra="")})
    catalog, _ = compile_catalog(with_skill)
    assert catalog.tools["task.list"].path == ("skills",)
    assert catalog.tools["task.list"].handler["tasks"][0]["task"] == "task.code_reviewer"  # type: ignore[index]
    plain = tmp_path / "plain"
    (plain / "files").mkdir(parents=True)
    (plain / "files" / "tools.yaml").write_text(tools, encoding="utf-8")
    assert "task.list" not in compile_catalog(plain)[0].tools


def test_task_list_shows_only_the_tasks_the_session_may_see(make_tree, tmp_path: Path) -> None:
    """A task whose id sits in a namespace the host did not allow is not in task.list (issue 24: policies at list time)."""
    src = make_tree(
        {
            "skills/code-reviewer/SKILL.md": SKILL.format(extra=""),
            "agents/postmortem.md": "---\nname: postmortem\ndescription: Writes an incident postmortem.\n"
            "task_id: ops.postmortem\n---\nWrite it.\n",
        }
    )
    build(src, tmp_path / "out")
    everything = Catalog.open(tmp_path / "out").tool_exec("task.list", {})
    assert {row["task"] for row in everything["result"]["tasks"]} == {"task.code_reviewer", "ops.postmortem"}
    scoped = Catalog.open(tmp_path / "out", allowed_namespaces=["task"]).tool_exec("task.list", {})
    assert [row["task"] for row in scoped["result"]["tasks"]] == ["task.code_reviewer"]
    assert scoped["result"]["count"] == 1
