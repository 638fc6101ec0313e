"""Agent Skills: the real corpus compiles or gets clear diagnostics, in agreement with skills-ref."""

from __future__ import annotations

from pathlib import Path

import pytest
import skills_ref
from support import write_tree

from toolcat.build.errors import Severity
from toolcat.build.sources.skills import check_skill, skill_tool_id

#: Diagnostics toolcat raises that the reference validator does not check (docs/sources.md lists them):
#: they are warnings, about the *form* of accepted values.
FORM_ONLY = {"allowed_tools_form", "metadata_value", "skill_level1_tokens", "skill_level2_tokens", "symlink"}


def corpus_skill_dirs(corpus: Path) -> list[Path]:
    """Every folder holding a SKILL.md in the corpus's skill collections."""
    return sorted(md.parent for folder in ("skills", "skills-wild") for md in (corpus / folder).rglob("SKILL.md"))


def test_every_corpus_skill_compiles_or_is_diagnosed(corpus: Path) -> None:
    """Nothing in ../shared/corpus/skills crashes: each skill yields a record or located diagnostics."""
    dirs = corpus_skill_dirs(corpus)
    assert len(dirs) >= 250
    compiled = rejected = 0
    for skill_dir in dirs:
        result = check_skill(skill_dir.parent, skill_dir, ("skills",))
        errors = [d for d in result.diagnostics if d.severity is Severity.ERROR]
        if result.record is not None:
            compiled += 1
            assert not errors
            assert result.record["id"] == skill_tool_id(result.record["name"])
        else:
            rejected += 1
            assert errors, skill_dir
            for error in errors:
                assert error.file.endswith("SKILL.md") or error.file.endswith("metadata.yaml")
                assert error.message
    assert compiled >= 250
    print(f"compiled {compiled}, rejected {rejected}")


def test_agreement_with_skills_ref(corpus: Path) -> None:
    """Where skills-ref accepts or rejects a corpus skill, toolcat --strict agrees (form-only warnings aside)."""
    disagreements = []
    flow_style = []
    dirs = corpus_skill_dirs(corpus)
    for skill_dir in dirs:
        reference_errors = skills_ref.validate(skill_dir)
        if any("JSONesque" in e for e in reference_errors):
            # skills-ref parses with strictyaml, which refuses YAML flow collections ([a, b]);
            # the spec says YAML, so toolcat accepts them (a documented difference)
            flow_style.append(skill_dir)
            continue
        reference_ok = not reference_errors
        result = check_skill(skill_dir.parent, skill_dir, ())
        ours_ok = not [d for d in result.diagnostics if d.code not in FORM_ONLY]
        if reference_ok != ours_ok:
            disagreements.append((skill_dir, reference_ok, [d.message for d in result.diagnostics]))
    assert disagreements == [], disagreements[:5]
    assert len(flow_style) < 10, flow_style


def test_wild_defects_are_named(corpus: Path) -> None:
    """The hand-picked defective skills get the specific diagnostic each defect deserves."""
    wild = corpus / "skills-wild"
    expectations = {
        "sickn33-antigravity-awesome-skills/skills/active-directory-attacks": "naming rule",
        "sickn33-antigravity-awesome-skills/skills/cc-skill-backend-patterns": "differs from its folder",
        "alirezarezvani-claude-skills/engineering/skills/skill-tester/assets/sample-skill": "must start with YAML frontmatter",
    }
    for rel, fragment in expectations.items():
        skill_dir = wild / rel
        if not skill_dir.is_dir():
            pytest.skip(f"{skill_dir} is not in this corpus snapshot")
        result = check_skill(skill_dir.parent, skill_dir, ())
        assert any(fragment in d.message for d in result.diagnostics), (rel, [d.message for d in result.diagnostics])


def test_yaml_surprises_load_correctly(tmp_path: Path) -> None:
    """A float version, an unquoted date, CRLF endings and block scalars load as the author meant."""
    root = write_tree(
        tmp_path,
        {
            "s/clean-code/SKILL.md": (
                "---\r\nname: clean-code\r\ndescription: >-\r\n  Keep code clean.\r\n  Use when refactoring.\r\n"
                "metadata:\r\n  version: 2.10\r\n  updated: 2026-03-17\r\n  stable: true\r\n---\r\n# Clean\r\n"
            ),
        },
    )
    result = check_skill(root, root / "s" / "clean-code", ("s",))
    assert result.record is not None, [d.render() for d in result.diagnostics]
    assert result.record["frontmatter"]["metadata"] == {"version": "2.10", "updated": "2026-03-17", "stable": "true"}
    assert result.record["description"] == "Keep code clean. Use when refactoring."
    assert result.record["body"] == "# Clean\n"


def test_metadata_yaml_is_merged_with_frontmatter_winning(tmp_path: Path) -> None:
    """metadata.yaml beside SKILL.md fills in fields; the frontmatter wins on conflicts."""
    root = write_tree(
        tmp_path,
        {
            "s/helper/SKILL.md": "---\nname: helper\ndescription: From the frontmatter.\n---\nBody\n",
            "s/helper/metadata.yaml": "description: From metadata.yaml\nlicense: MIT\n",
            "s/helper/references/guide.md": "# Guide\n",
        },
    )
    result = check_skill(root, root / "s" / "helper", ("s",))
    assert result.record is not None
    assert result.record["description"] == "From the frontmatter."
    assert result.record["frontmatter"]["license"] == "MIT"
    assert [r["rel_path"] for r in result.record["resources"]] == ["references/guide.md"]
