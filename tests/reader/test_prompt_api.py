"""Named prompt sections through the reader: ``Catalog.prompt(name)`` and ``toolcat prompt --build URL``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from support import TESTS, serve_folder, write_tree

from toolcat.build import build
from toolcat.cli import main
from toolcat.reader import Catalog
from toolcat.reader.folder import BuildFolder

CASES = TESTS / "cases" / "prompts"


@pytest.fixture(scope="module")
def small(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The golden prompts catalogue (tests/cases/prompts/tree.yaml), built once."""
    root = tmp_path_factory.mktemp("prompt_api")
    src = write_tree(root / "src", yaml.safe_load((CASES / "tree.yaml").read_text(encoding="utf-8")))
    build(src, root / "build")
    return root / "build"


@pytest.fixture(scope="module")
def served(small: Path) -> Iterator[str]:
    """The same build served by a real static HTTP server on 127.0.0.1; yields its base URL."""
    with serve_folder(small) as url:
        yield url


def _files(build_dir: Path) -> dict[str, str]:
    folder = BuildFolder(build_dir)
    index = folder.fetch_json(folder.manifest["prompts"]["index"])
    return {name: folder.fetch_bytes(s["ref"]).decode("utf-8") for name, s in index["sections"].items()}


def test_prompt_returns_each_named_section_as_built(small):
    """Catalog.prompt(name) returns every section's text byte for byte, with its media type and token count."""
    catalog = Catalog.open(small)
    files = _files(small)
    for name, text in files.items():
        answer = catalog.prompt(name)
        assert answer["ok"] is True
        assert answer["name"] == name
        assert answer["text"] == text
        assert answer["tokens"] == catalog.manifest["prompts"]["tokens"][name]
        assert answer["media_type"]


def test_prompt_without_a_name_lists_the_sections(small):
    """Catalog.prompt() lists every section with its media type and tokens, sorted by name."""
    answer = Catalog.open(small).prompt()
    names = [row["name"] for row in answer["sections"]]
    assert names == sorted(_files(small))
    assert {"system.gateway", "system.spec", "system.namespaced", "tools.short"} <= set(names)
    assert all(row["tokens"] > 0 for row in answer["sections"])


def test_unknown_section_is_an_envelope_listing_the_known_ones(small):
    """An unknown name is NOT_FOUND: details.sections lists every known name, the hints the closest first."""
    answer = Catalog.open(small).prompt("system.gatway")
    assert answer["ok"] is False
    error = answer["error"]
    assert error["code"] == "NOT_FOUND"
    assert "system.gateway" in error["details"]["sections"]
    assert error["hints"][0].startswith("Did you mean system.gateway")
    assert Catalog.open(small).prompt(42)["error"]["code"] == "BAD_REQUEST"


def test_prompt_reads_a_url_build(small, served):
    """Over HTTP (a real server on 127.0.0.1) the sections are the same as from the folder."""
    catalog = Catalog.open(served)
    for name, text in _files(small).items():
        assert catalog.prompt(name)["text"] == text


def test_cli_prompt_reads_a_url_build(small, served, tmp_path):
    """`toolcat prompt --build URL` lists, prints a dialect's prompt, a named section and a focused section."""
    runner = CliRunner()
    cache = ["--cache-dir", str(tmp_path / "cache")]
    listing = runner.invoke(main, ["prompt", "--build", served, *cache])
    assert listing.exit_code == 0, listing.output
    assert "system.gateway" in listing.stdout
    gateway = runner.invoke(main, ["prompt", "--build", served, *cache, "--dialect", "gateway"])
    assert gateway.exit_code == 0, gateway.output
    assert gateway.stdout == _files(small)["system.gateway"] + "\n"
    section = runner.invoke(main, ["prompt", "--build", served, *cache, "--section", "tools.short"])
    assert section.stdout == _files(small)["tools.short"] + "\n"
    focused = runner.invoke(main, ["prompt", "--build", served, *cache, "--task", "zip files", "--budget", "200"])
    assert focused.exit_code == 0, focused.output
    assert "`file.archive`" in focused.stdout


def test_cli_prompt_errors_are_one_clear_line(small, served, tmp_path):
    """An unknown section names the known ones; an unreachable URL says which; neither prints a traceback."""
    runner = CliRunner()
    unknown = runner.invoke(main, ["prompt", "--build", str(small), "--section", "nope"])
    assert unknown.exit_code == 1
    assert "no section 'nope'; sections: " in unknown.output
    assert "system.gateway" in unknown.output
    missing = runner.invoke(
        main, ["prompt", "--build", served + "missing/", "--cache-dir", str(tmp_path / "c2"), "--dialect", "spec"]
    )
    assert missing.exit_code == 1
    assert "Traceback" not in missing.output
    assert "missing/" in missing.output
