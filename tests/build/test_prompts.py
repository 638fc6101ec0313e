"""Prompt sections: golden files for a small catalogue, skills-ref parity, focused sections under budget."""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

import jinja2
import pytest
import yaml
from click.testing import CliRunner
from skills_ref.prompt import to_prompt
from support import TESTS, write_tree

from toolcat.build import build
from toolcat.build.contributors.prompts import environment, render
from toolcat.build.tokens import count_tokens
from toolcat.cli import main
from toolcat.reader import Catalog
from toolcat.reader.folder import BuildFolder
from toolcat.reader.prompting import prompt_section

CASES = TESTS / "cases" / "prompts"
GOLDEN = CASES / "golden"
UPDATE = os.environ.get("TOOLCAT_UPDATE_GOLDEN") == "1"


@pytest.fixture(scope="module")
def small(tmp_path_factory) -> tuple[Path, Path]:
    """The golden catalogue (tests/cases/prompts/tree.yaml): its source folder and its build."""
    root = tmp_path_factory.mktemp("prompts")
    src = write_tree(root / "src", yaml.safe_load((CASES / "tree.yaml").read_text(encoding="utf-8")))
    build(src, root / "build")
    return src, root / "build"


def _sections(build_dir: Path) -> dict[str, str]:
    folder = BuildFolder(build_dir)
    index = folder.fetch_json(folder.manifest["prompts"]["index"])
    return {name: folder.fetch_bytes(s["ref"]).decode("utf-8") for name, s in index["sections"].items()}


def test_sections_match_golden_files(small):
    """Every section of the small catalogue equals its golden file (TOOLCAT_UPDATE_GOLDEN=1 rewrites them)."""
    sections = _sections(small[1])
    if UPDATE:
        shutil.rmtree(GOLDEN, ignore_errors=True)
        GOLDEN.mkdir(parents=True)
        for name, text in sections.items():
            (GOLDEN / f"{name}.txt").write_text(text + "\n", encoding="utf-8")
    expected = {p.name.removesuffix(".txt"): p.read_text(encoding="utf-8") for p in GOLDEN.glob("*.txt")}
    assert sorted(expected) == sorted(sections), "sections changed; rerun with TOOLCAT_UPDATE_GOLDEN=1 and review"
    for name, text in sections.items():
        assert text + "\n" == expected[name], f"{name} differs from tests/cases/prompts/golden/{name}.txt"


def test_tool_section_has_adr_shape(small):
    """The full tools section follows the ADR format: category heading, required before optional, parameters, example."""
    text = _sections(small[1])["tools.files.full"]
    assert text.startswith("## Files Tools\n")
    assert text.index("### file.read (required)") < text.index("### file.archive (optional)")
    assert text.index("### file.write (required)") < text.index("### file.archive (optional)")
    assert (
        '- `encoding` (string, optional): Text encoding. Default: `"utf-8"`. Valid values: `utf-8`, `latin-1`.' in text
    )
    assert "  - `overwrite` (boolean, optional): Replace an existing file. Default: `false`." in text
    assert "**When to consider**: The user asks for a bundle or download of several files." in text
    assert '{"tool": "file.read", "args": {"path": "README.md"}}' in text


def test_full_snippet_prints_every_example_as_formatexamples_does(small):
    """A tool with several examples shows each one, with its description, as ADR-002's formatExamples lists them."""
    text = _sections(small[1])["tools.files.full"]
    read = text[text.index("### file.read") : text.index("### file.write")]
    assert "**Examples**\n- Read the README:\n```json" in read
    assert "- Read a Latin-1 log from line 200:\n```json" in read
    assert '"start_line": 200, "encoding": "latin-1"' in read
    assert "more example" not in read


def test_examples_beyond_the_budget_are_counted_not_printed(make_tree, tmp_path):
    """Examples past a tool's example budget are left out with a count; the first is always printed."""
    from toolcat.build.contributors.prompts import EXAMPLES_TOKEN_BUDGET  # noqa: PLC0415

    long_text = "word " * (EXAMPLES_TOKEN_BUDGET // 3)
    examples = [{"description": f"Case {i}.", "args": {"text": f"{i} {long_text}"}} for i in range(6)]
    tool = {
        "id": "text.echo",
        "summary": "Echo text back.",
        "args_schema": {"type": "object", "properties": {"text": {"type": "string", "description": "Text."}}},
        "examples": examples,
    }
    out = tmp_path / "build"
    build(make_tree({"text/tools.yaml": {"tools": [tool]}}), out)
    text = _sections(out)["tools.text.full"]
    shown = text.count('{"tool": "text.echo"')
    assert 1 <= shown < 6
    assert f"({6 - shown} more example{'s' if 6 - shown != 1 else ''} in the tool's full spec.)" in text


def test_skills_xml_matches_skills_ref(small):
    """The <available_skills> block is what skills-ref's to_prompt emits for the same skill folders."""
    src, build_dir = small
    ours = _sections(build_dir)["skills.xml"]
    folders = sorted((src / "skills").iterdir())
    folders = [f for f in folders if (f / "SKILL.md").is_file()]
    theirs = to_prompt(folders)
    for folder in folders:
        built = next(line for line in ours.splitlines() if line.startswith(f"skills/{folder.name}/"))
        theirs = theirs.replace(str((folder / "SKILL.md").resolve()), built)
    assert ours == theirs
    assert "&amp;" in ours
    assert "&quot;review&quot;" in ours


def test_templates_are_package_data_and_strict():
    """Templates load through importlib.resources, and a missing variable fails instead of rendering blank."""
    files = resources.files("toolcat.templates").joinpath("prompts")
    assert files.joinpath("tool_full.md.j2").is_file()
    assert files.joinpath("system", "gateway.md.j2").is_file()
    assert environment().undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        render("tool_short.md.j2")


def test_manifest_section_tokens_are_real_counts(small):
    """manifest.prompts.tokens holds the o200k_base count of every section file."""
    folder = BuildFolder(small[1])
    tokens = folder.manifest["prompts"]["tokens"]
    sections = _sections(small[1])
    assert tokens == {name: count_tokens(text) for name, text in sections.items()}
    assert tokens["system.gateway"] < 300


@pytest.mark.parametrize("detail", ["short", "full"])
def test_prompt_section_respects_the_budget(small, detail):
    """For every budget, the focused section's real token count and its reported count stay within it."""
    catalog = Catalog.open(small[1])
    for budget in (0, 20, 40, 60, 90, 130, 200, 300, 450, 700, 2000):
        result = catalog.prompt_section(task="zip the files for download", budget_tokens=budget, detail=detail)
        assert result["ok"], result
        assert count_tokens(result["text"]) <= result["tokens"] <= budget, (budget, result)


def test_prompt_section_required_first_then_relevant_optional(small):
    """The task's tools get full detail, other required tools a line; required are listed first, unrelated optional ones stay out."""
    catalog = Catalog.open(small[1])
    result = catalog.prompt_section(task="zip several files into an archive", budget_tokens=2000, detail="full")
    ids = [t["tool_id"] for t in result["tools"]]
    assert ids[:3] == ["file.read", "file.write", "time.now"]
    assert "file.archive" in ids
    assert "task.release_notes" not in ids
    levels = {t["tool_id"]: t["detail"] for t in result["tools"]}
    assert levels["file.archive"] == "full"
    assert levels["time.now"] == "short"
    assert result["text"].index("`time.now` (required)") < result["text"].index("### file.archive (optional)")
    assert result["omitted"] == []


def test_prompt_section_spends_the_budget_on_the_task_first(example_build):
    """With many required tools and a small budget, the tool the task needs is kept and unrelated ones are omitted."""
    catalog = Catalog.open(example_build)
    result = catalog.prompt_section(
        task="rename a function everywhere in my go service", budget_tokens=600, detail="full"
    )
    ids = [t["tool_id"] for t in result["tools"]]
    assert "refactor.rename_symbol" in ids
    assert result["tokens"] <= 600
    assert result["omitted"]


def test_prompt_section_falls_back_to_short_then_omits(small):
    """Under a tight budget a full snippet degrades to short, and what does not fit is listed as omitted."""
    catalog = Catalog.open(small[1])
    result = catalog.prompt_section(task="zip files", budget_tokens=120, detail="full")
    levels = {t["tool_id"]: t["detail"] for t in result["tools"]}
    assert "short" in levels.values()
    tight = catalog.prompt_section(task="zip files", budget_tokens=45, detail="short")
    assert tight["omitted"]
    assert {o["reason"] for o in tight["omitted"]} == {"budget"}


def test_prompt_section_on_a_build_without_prompts(small, tmp_path):
    """The stdlib function works with any object exposing manifest/fetch_json, and says clearly when prompts are missing."""
    folder = BuildFolder(small[1])
    result = prompt_section(folder, task="", budget_tokens=500, detail="short")
    assert [t["tool_id"] for t in result["tools"]] == ["file.read", "file.write", "time.now"]
    folder.manifest = {k: v for k, v in folder.manifest.items() if k != "prompts"}
    with pytest.raises(ValueError, match="no prompt sections"):
        prompt_section(folder, task="x", budget_tokens=100)


def test_cli_prompt_and_stats(small):
    """`toolcat prompt` prints sections and focused sections; `toolcat stats` prints per-tool and per-section tokens."""
    runner = CliRunner()
    gateway = runner.invoke(main, ["prompt", "--build", str(small[1]), "--dialect", "gateway"])
    assert gateway.exit_code == 0
    assert gateway.stdout.startswith("# Tools: Acme")
    listing = runner.invoke(main, ["prompt", "--build", str(small[1])])
    assert "skills.xml" in listing.stdout
    focused = runner.invoke(main, ["prompt", "--build", str(small[1]), "--task", "zip files", "--budget", "200"])
    assert focused.exit_code == 0
    assert "`file.archive`" in focused.stdout
    stats = runner.invoke(main, ["stats", "--build", str(small[1])])
    assert stats.exit_code == 0
    assert "file.read" in stats.stdout
    assert "system.gateway" in stats.stdout


def test_stats_warns_about_heavy_skills(make_tree, tmp_path):
    """`toolcat stats` warns when a skill's level 1 exceeds 100 tokens or its level 2 exceeds 5,000."""
    long_description = "Use when the user asks to audit a repository for licence problems. " * 12
    body = "# Audit\n\n" + "Check every dependency's licence and record what you find in the report. " * 500
    src = make_tree(
        {
            "skills/licence-audit/SKILL.md": f"---\nname: licence-audit\ndescription: {long_description.strip()}\n---\n{body}",
            "misc/tools.yaml": {
                "tools": [{"id": "misc.ping", "summary": "Ping.", "args_schema": {"type": "object", "properties": {}}}]
            },
        }
    )
    out = tmp_path / "build"
    build(src, out)
    result = CliRunner().invoke(main, ["stats", "--build", str(out)])
    assert result.exit_code == 0
    assert "skill level 1 is" in result.stderr
    assert "skill level 2 is" in result.stderr


def _plain_section(title: str, summary: str, snippets: list, detail: str) -> str:
    """tools_section as it was: the template rendered and tidied with the snippets in it (the reference)."""
    from toolcat.build.contributors import prompts  # noqa: PLC0415 - the module under test

    required, optional = prompts._ordered(snippets)
    return render(
        "tools_section.md.j2",
        title=title,
        summary=summary,
        required=[getattr(s, detail) for s in required],
        optional=[getattr(s, detail) for s in optional],
        optional_intro=render("optional_intro.md.j2", detail=detail, has_required=bool(required)),
        separator=prompts.SEPARATORS[detail],
    )


def test_a_tools_section_tidies_the_template_alone_and_equals_the_plain_render(monkeypatch: pytest.MonkeyPatch):
    """Holes for the joined snippets: the same text as tidying the whole, for snippets and titles of any whitespace.

    Issue 33: tidying the 6 MB of a 10,000-tool catalogue's sections took a sixth of the prompts' time; tidy now sees
    the template's own text, not the snippets.
    """
    import random  # noqa: PLC0415 - only here

    from toolcat.build.contributors import prompts  # noqa: PLC0415 - the module under test

    rng = random.Random(33)  # noqa: S311 - test data, not a secret
    pieces = ["a", "b", " ", "\t", "\n", "\n\n", "\r", "\u2028", "\x85", "\xa0", "≤", "#", "\x0b", "  \n", "\x00"]
    pieces.append("\x00toolcat-required\x00")  # a hole in a title or a snippet takes the plain way

    def text() -> str:
        return "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))

    for _ in range(2000):
        snippets = [
            prompts.Snippet(f"t{i}", rng.random() < 0.4, "c", prompts.tidy(text()), prompts.tidy(text()), 1, 1)
            for i in range(rng.randint(0, 5))
        ]
        title, summary = text(), text()
        for detail in prompts.DETAILS:
            assert prompts.tools_section(title, summary, snippets, detail) == _plain_section(
                title, summary, snippets, detail
            )
    tidied: list[str] = []
    real = prompts.tidy
    monkeypatch.setattr(prompts, "tidy", lambda text: tidied.append(text) or real(text))
    big = [prompts.Snippet(f"t{i}", i % 3 == 0, "c", f"- `t{i}`", f"### t{i}\n\n" + "x" * 5000, 1, 1) for i in range(9)]
    section = prompts.tools_section("Big", "A category.", big, "full")
    assert max(map(len, tidied)) < 1000, "the snippets' 45,000 characters were not tidied again"
    assert section == _plain_section("Big", "A category.", big, "full")
