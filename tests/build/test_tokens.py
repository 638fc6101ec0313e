"""Token counts come from bpe-openai's Rust tokenizer alone (issue 29): the same counts as the package, at a fraction of the load."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from toolcat.build import build, tokens

bpe_openai = pytest.importorskip("bpe_openai", reason="the [build] extra's tokenizer is not installed")

_ALPHABET = 'abc xyz ÜÖ日本語 \n\n\t  {}[]":,.0123456789 def return 🙂 ﬁ\u0301'


def _texts() -> list[str]:
    rng = random.Random(29)  # noqa: S311 - test texts, not secrets
    texts = ["".join(rng.choice(_ALPHABET) for _ in range(rng.randint(1, 300))) for _ in range(300)]
    return [*texts, "a lone \ud800 surrogate", "x" * 5000, '{"type":"object","properties":{}}']


def test_counts_equal_the_packages_encode() -> None:
    """Every count is the length of ``bpe_openai.get_encoding('o200k_base').encode(text)``, as before the change."""
    encoding = bpe_openai.get_encoding(tokens.ENCODING)
    expected = [len(encoding.encode(text)) for text in _texts()]
    assert [tokens._count(text) for text in _texts()] == expected


def test_a_special_token_name_is_counted_as_text() -> None:
    """``<|endoftext|>`` in a tool's text (untrusted input) is counted as plain text, where the package's encode raises."""
    with pytest.raises(ValueError, match="special token"):
        bpe_openai.get_encoding(tokens.ENCODING).encode("stop <|endoftext|> here")
    assert tokens._count("stop <|endoftext|> here") == tokens._count("stop <|endoftext|>") + 1


def test_counting_does_not_parse_the_packages_vocabularies() -> None:
    """A first count loads only the Rust extension: the package, which parses three vocabularies in Python, stays unloaded."""
    code = (
        "import sys\nfrom toolcat.build.tokens import count_tokens\n"
        "assert count_tokens('hello world') == 2\n"
        "print(sorted(m for m in sys.modules if m.startswith('bpe_openai')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "['bpe_openai._bindings']"


def test_the_package_still_imports_after_the_extension_alone() -> None:
    """Loading the extension alone leaves ``import bpe_openai`` working (it finds the one copy already loaded)."""
    code = (
        "from toolcat.build.tokens import count_tokens\ncount_tokens('hello')\n"
        "import bpe_openai\nprint(len(bpe_openai.get_encoding('o200k_base').encode('hello world')))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.strip() == "2"


def test_a_build_with_a_special_token_name_in_a_summary_succeeds(example_src_copy: Path, tmp_path: Path) -> None:
    """A tool summary holding ``<|endoftext|>`` builds (it stopped the build with bpe-openai's ValueError traceback)."""
    source = next(p for p in example_src_copy.rglob("*.yaml") if "file.delete" in p.read_text())
    source.write_text(source.read_text().replace("Delete a file,", "Delete a file <|endoftext|>,"))
    result = build(example_src_copy, tmp_path / "out", embedder="none")
    assert result.counts["tools"] > 0
    assert any("<|endoftext|>" in p.read_text() for p in (tmp_path / "out" / "tools").glob("*.json"))


def _long_markdown(seed: int) -> list[str]:
    """About 40 sections of Markdown in the prompts' shape, 350,000 characters together, each ending differently."""
    rng = random.Random(seed)  # noqa: S311 - test texts, not secrets
    ends = [".", "`", ")", ":", "  ", "/", "日本語", "🙂", "\t", "```"]
    sections = []
    for index in range(40):
        lines = [f"## Group {index} Tools", ""]
        for tool in range(30):
            lines += [f"### g{index}.t{tool} (required)", "".join(rng.choice(_ALPHABET) for _ in range(200)), ""]
        sections.append("\n".join(lines) + rng.choice(ends))
    return sections


def test_a_long_texts_count_is_its_whole_count() -> None:
    """A text over CHUNK_CHARS cut before its headings counts what the tokenizer gives the whole text (under 1M chars)."""
    tokens.begin(None)
    for seed in range(3):
        text = "\n\n".join(_long_markdown(seed))
        assert tokens.CHUNK_CHARS < len(text) < 1_000_000
        assert len(tokens._sections(text)) == 40
        assert tokens.count_tokens(text) == tokens._count(text)
        assert tokens.count_tokens(text.replace("\n\n## ", "\n## ")) == tokens._count(text.replace("\n\n## ", "\n## "))


def test_an_edit_of_one_section_counts_that_section_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """After one section of a long text changes, only that section's text is counted again, not the ones after it."""
    tokens.begin(None)
    sections = _long_markdown(7)
    tokens.count_tokens("\n\n".join(sections))
    sections[3] = sections[3].replace("(required)", "(optional)", 1)
    counted: list[int] = []
    real = tokens._count

    def spy(text: str) -> int:
        counted.append(len(text))
        return real(text)

    monkeypatch.setattr(tokens, "_count", spy)
    edited = "\n\n".join(sections)
    assert tokens.count_tokens(edited) == real(edited)
    assert counted == [len(sections[3]) + 2]  # the edited section and the blank line after it
