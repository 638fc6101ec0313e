"""`toolcat eval` scores labelled queries against thresholds; `toolcat lint` reports confusable tools."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from toolcat.cli import main

TOOLS = {
    "_node.yaml": {"title": "Eval", "summary": "eval tests"},
    "mail/tools.yaml": {
        "tools": [
            {"id": "mail.send", "summary": "Send an email message to a recipient", "args_schema": {"type": "object"}},
            {"id": "mail.search", "summary": "Search the mailbox for messages", "args_schema": {"type": "object"}},
            {
                "id": "mail.send_copy",
                "summary": "Send an email message to a recipient",
                "args_schema": {"type": "object"},
            },
        ]
    },
    "cal/tools.yaml": {
        "tools": [
            {"id": "cal.event.create", "summary": "Create a calendar event", "args_schema": {"type": "object"}},
        ]
    },
}
GOOD = {
    "k": 2,
    "min_recall": 1.0,
    "min_mrr": 0.5,
    "queries": [
        {"query": "create an event in my calendar", "expect": "cal.event.create"},
        {"query": "look through my mailbox", "expect": ["mail.search"]},
    ],
}
BAD = {
    "k": 1,
    "min_recall": 1.0,
    "min_mrr": 1.0,
    "queries": [
        {"query": "create an event in my calendar", "expect": "mail.search"},
    ],
}


def test_eval_passes_when_scores_reach_the_thresholds(make_tree):
    """Eval files whose expected tools rank in the top k exit 0 and print recall@k and MRR."""
    src = make_tree({**TOOLS, "evals/search.yaml": GOOD})
    result = CliRunner().invoke(main, ["eval", str(src)])
    assert result.exit_code == 0, result.output
    assert "ok   search.yaml: 2 queries, recall@2 1.000" in result.output


def test_eval_fails_under_the_threshold_and_lists_misses(make_tree):
    """A query whose expected tool is not found makes eval exit 1 and name the miss with the top results."""
    src = make_tree({**TOOLS, "evals/search.yaml": BAD})
    result = CliRunner().invoke(main, ["eval", str(src)])
    assert result.exit_code == 1
    assert "FAIL search.yaml" in result.output
    assert "miss: 'create an event in my calendar' expected mail.search; top: cal.event.create" in result.output


def test_eval_rejects_a_malformed_eval_file(make_tree):
    """An eval query without 'expect' is reported with its file, line, column and JSON path."""
    src = make_tree({**TOOLS, "evals/bad.yaml": {"queries": [{"query": "x"}]}})
    result = CliRunner().invoke(main, ["eval", str(src)])
    assert result.exit_code == 1
    assert "evals/bad.yaml:2:3: error: $.queries[0]: needs 'query'" in result.output


def test_example_catalogue_evals_pass(example_src_copy):
    """The example catalogue's own evals (catalog_src/evals) pass."""
    if not (example_src_copy / "evals").is_dir() or not list((example_src_copy / "evals").glob("*.y*ml")):
        pytest.skip("catalog_src/evals has no eval files yet")
    result = CliRunner().invoke(main, ["eval", str(example_src_copy)])
    assert result.exit_code == 0, result.output


def test_lint_reports_confusable_pairs_with_similarity(make_tree):
    """Two tools with the same summary are reported as a confusable pair; distinct tools are not."""
    src = make_tree(TOOLS)
    result = CliRunner().invoke(main, ["lint", str(src), "--threshold", "0.6"])
    assert result.exit_code == 0
    assert "mail.send and mail.send_copy are confusable (similarity 0." in result.output
    assert "cal.event.create" not in result.output
    strict = CliRunner().invoke(main, ["lint", str(src), "--threshold", "0.6", "--strict"])
    assert strict.exit_code == 1


def test_eval_file_alias_bomb_is_refused_with_its_place(make_tree):
    """An eval file is read with the source limits: a YAML alias bomb is a located error, not minutes of work."""
    src = make_tree(TOOLS)
    lines = ['a: &a ["x","x","x","x","x","x","x","x","x"]']
    lines += [f"{chr(98 + i)}: &{chr(98 + i)} [{','.join(['*' + chr(97 + i)] * 9)}]" for i in range(8)]
    lines.append("queries: [*i]")
    (src / "evals").mkdir()
    (src / "evals" / "bomb.yaml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["eval", str(src)])
    assert result.exit_code == 1
    assert "bomb.yaml:" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("setting", "line"),
    [("k: five", 1), ("min_recall: 2", 1), ("min_mrr: [0.5]", 1)],
    ids=["k_not_a_number", "recall_over_one", "mrr_a_list"],
)
def test_eval_settings_of_the_wrong_type_are_located_errors(make_tree, setting: str, line: int):
    """k, min_recall and min_mrr of the wrong type are errors at their line, not a traceback."""
    src = make_tree(TOOLS)
    (src / "evals").mkdir()
    (src / "evals" / "search.yaml").write_text(f"{setting}\nqueries: [{{query: x, expect: mail.send}}]\n")
    result = CliRunner().invoke(main, ["eval", str(src)])
    assert result.exit_code == 1
    key = setting.split(":", maxsplit=1)[0]
    assert f"evals/search.yaml:{line}:1: error: $.{key}: '{key}' must be" in result.output
    assert "Traceback" not in result.output
