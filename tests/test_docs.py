"""Every code sample in README.md and docs/*.md runs, so the docs cannot drift from the code.

A sample is a fenced block tagged ``python``, ``console``, ``bash``, ``sh`` or ``shell``. Each runs in a
fresh workspace: a copy of ``catalog_src/`` and its build in ``build/``, also served over HTTP, and every
``https://cdn.example.com/tools/`` in a sample is replaced by that server's URL (the docs' stand-in for a
published catalogue). A ``python`` sample runs on its own in a new interpreter with the workspace as its
working directory; it must exit 0. In a shell sample, every line that runs ``toolcat`` (``$ `` prompts and
backslash continuations allowed) must exit 0; other lines (``make``, ``pip``) are not run, and a shell block
without a toolcat command is not a sample.

A sample opts out with ``<!-- not-tested: reason -->`` on the line right before its fence; every opt-out
must give its reason. Samples in other engineers' pages that fail today are listed in ``KNOWN_FAILING``
(xfail, not run, keyed by file and the sample's first line): when one is rewritten, its entry must go.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import EXAMPLE_SRC, REPO, serve_folder

from toolcat.build import build

DOC_FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
RUN_LANGUAGES = frozenset({"python", "console", "bash", "sh", "shell"})
FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)\s*$")
OPT_OUT = re.compile(r"^<!--\s*not-tested:(?P<reason>.*?)-->\s*$")
PUBLISHED = "https://cdn.example.com/tools/"
SAMPLE_TIMEOUT = 180

#: Samples that fail today, with why: ``(file, first line) → reason`` (none: every sample runs or opts out
#: with its reason). Entries are not run; an entry whose sample text changed fails
#: test_known_failures_name_real_samples, so a rewritten sample is run again.
KNOWN_FAILING: dict[tuple[str, str], str] = {}


@dataclass(frozen=True, slots=True)
class Sample:
    """One fenced code block of a page."""

    file: str
    line: int
    language: str
    text: str
    opt_out: str | None

    @property
    def key(self) -> tuple[str, str]:
        """How KNOWN_FAILING names it: the file and the sample's first non-blank line."""
        first = next((line.strip() for line in self.text.splitlines() if line.strip()), "")
        return self.file, first

    @property
    def commands(self) -> list[str]:
        """The toolcat command lines of a shell sample, continuations joined and prompts removed."""
        joined = re.sub(r"\s*\\\n\s*", " ", self.text)
        lines = (line.strip().removeprefix("$ ").strip() for line in joined.splitlines())
        return [line for line in lines if line.startswith("toolcat ")]


def _samples(path: Path, base: Path = REPO) -> Iterator[Sample]:
    lines = path.read_text(encoding="utf-8").splitlines()
    rel = path.relative_to(base).as_posix()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        end = next((j for j in range(index + 1, len(lines)) if lines[j].startswith("```")), len(lines))
        previous = next((lines[j] for j in range(index - 1, -1, -1) if lines[j].strip()), "")
        opted = OPT_OUT.match(previous.strip())
        yield Sample(
            rel,
            index + 1,
            match.group(1).lower(),
            "\n".join(lines[index + 1 : end]) + "\n",
            opted.group("reason").strip() if opted else None,
        )
        index = end + 1


def all_samples() -> list[Sample]:
    """Every runnable sample: python blocks, and shell blocks that run toolcat."""
    found = [s for path in DOC_FILES for s in _samples(path) if s.language in RUN_LANGUAGES]
    return [s for s in found if s.language == "python" or s.commands]


SAMPLES = all_samples()


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """A copy of catalog_src/, its fresh build in build/, and the URL that build is served at."""
    root = tmp_path_factory.mktemp("docs")
    shutil.copytree(EXAMPLE_SRC, root / "catalog_src")
    build(root / "catalog_src", root / "build")
    with serve_folder(root / "build") as url:
        yield root, url


def _env() -> dict[str, str]:
    bin_dir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}", "NO_COLOR": "1"}


def _run(argv: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv,
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=SAMPLE_TIMEOUT,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def _params() -> list[object]:
    params: list[object] = []
    for sample in SAMPLES:
        marks = []
        if sample.key in KNOWN_FAILING:
            marks.append(pytest.mark.xfail(reason=KNOWN_FAILING[sample.key], run=False))
        params.append(pytest.param(sample, id=f"{sample.file}:{sample.line}", marks=marks))
    return params


@pytest.mark.slow
@pytest.mark.parametrize("sample", _params())
def test_doc_sample_runs(sample: Sample, workspace: tuple[Path, str]) -> None:
    """A documented sample runs against a fresh build of the example catalogue and exits 0."""
    if sample.opt_out is not None:
        pytest.skip(f"not-tested: {sample.opt_out}")
    root, url = workspace
    text = sample.text.replace(PUBLISHED, url)
    if sample.language == "python":
        script = root / f"sample_{sample.line}.py"
        script.write_text(text, encoding="utf-8")
        done = _run([sys.executable, str(script)], root)
        assert done.returncode == 0, f"{sample.file}:{sample.line} failed:\n{done.stderr[-3000:]}"
        return
    for command in Sample(sample.file, sample.line, sample.language, text, None).commands:
        done = _run(["bash", "-c", command], root)
        assert done.returncode == 0, (
            f"{sample.file}:{sample.line}: `{command}` exited {done.returncode}:\n{done.stderr[-3000:]}"
        )


def test_every_opt_out_gives_a_reason() -> None:
    """A `<!-- not-tested: ... -->` comment sits right before a fence and says why the sample is not run."""
    for path in DOC_FILES:
        lines = path.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines, 1):
            opted = OPT_OUT.match(line.strip())
            if opted is None and not line.strip().startswith("<!--"):
                continue
            if opted is None and "not-tested" not in line:
                continue
            where = f"{path.relative_to(REPO)}:{number}"
            assert opted is not None, f"{where}: write <!-- not-tested: reason --> on a line of its own"
            assert len(opted.group("reason").strip()) >= 10, f"{where}: say why the sample is not tested"
            following = next((x for x in lines[number:] if x.strip()), "")
            assert FENCE.match(following), f"{where}: the opt-out must come right before a fence"


def test_the_collector_finds_samples_and_opt_outs(tmp_path: Path) -> None:
    """The extractor reads tagged fences, joins continuations, keeps only toolcat lines and sees opt-outs."""
    page = tmp_path / "page.md"
    page.write_text(
        "Intro.\n\n```python\nprint(1)\n```\n\n<!-- not-tested: it serves forever -->\n```console\n"
        "$ toolcat serve \\\n    --build build\nmake build\n```\n\n```\nnot a sample\n```\n",
        encoding="utf-8",
    )
    found = list(_samples(page, tmp_path))
    assert [(s.language, s.line, s.opt_out) for s in found] == [
        ("python", 3, None),
        ("console", 8, "it serves forever"),
        ("", 14, None),
    ]
    assert found[1].commands == ["toolcat serve --build build"]


def test_known_failures_name_real_samples() -> None:
    """Every KNOWN_FAILING entry still names a sample, so a rewritten one is not silently let off."""
    keys = {s.key for s in SAMPLES}
    assert not [key for key in KNOWN_FAILING if key not in keys]


def test_readme_counts_match_a_fresh_build(workspace: tuple[Path, str]) -> None:
    """The README's build summary and catalogue description give the counts a fresh build reports."""
    from toolcat.reader import Catalog  # noqa: PLC0415

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    counts = Catalog.open(workspace[0] / "build").manifest["counts"]
    summary = re.findall(r"(\d+) nodes, (\d+) tools, (\d+) skills", readme)
    assert summary
    assert {tuple(map(int, found)) for found in summary} == {(counts["nodes"], counts["tools"], counts["skills"])}
    described = re.search(r"has (\d+) tools in (\d+) namespaces", readme)
    assert described is not None
    assert int(described.group(1)) == counts["tools"]


def test_readme_build_summary_gives_the_file_counts_of_a_fresh_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's `make build` output says how many files a first build writes, as `make build` writes them.

    `make build` builds the default search tier, which the test suite turns off (TOOLCAT_EMBEDDER=none), so
    this builds once more with the machine's default.
    """
    from toolcat.reader import Catalog  # noqa: PLC0415

    monkeypatch.delenv("TOOLCAT_EMBEDDER", raising=False)
    shutil.copytree(EXAMPLE_SRC, tmp_path / "catalog_src")
    result = build(tmp_path / "catalog_src", tmp_path / "build")
    if "vectors" not in Catalog.open(tmp_path / "build").manifest:
        pytest.skip("this machine builds without the default search tier (toolcat[search] and its weights)")
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    written = re.search(r"(\d+) files written, 0 unchanged, 0 removed \((\d+) in the build\)", readme)
    published = re.search(r"(\d+) artifacts published", readme)
    assert written is not None
    assert published is not None
    assert (int(written.group(1)), int(written.group(2))) == (result.write.files_written, result.write.total_files)
    assert int(published.group(1)) == result.write.files_written


def test_readme_export_sample_gives_four_tools_and_says_which_are_strict(workspace: tuple[Path, str]) -> None:
    """The README's gateway export is 4 tools (3 discovery + the always-loaded file.read), strict as it says."""
    done = _run(
        [sys.executable, "-m", "toolcat.cli", "export", "--provider", "openai", "--dialect", "gateway", "--pinned"],
        workspace[0],
    )
    assert done.returncode == 0, done.stderr
    tools = {entry["function"]["name"]: entry["function"].get("strict") for entry in json.loads(done.stdout)}
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "--dialect gateway --pinned   # the 3 gateway tools and the pinned file.read (4)" in readme
    assert tools == {"tool_help": True, "tool_exec": False, "tool_batch": False, "file_read": True}
    assert (
        "`tool_help` and `file_read` are strict; `tool_exec` and `tool_batch` are\nexported with `strict: false`"
        in readme
    )


def test_gateway_prompt_promises_only_fields_tool_help_prints(workspace: tuple[Path, str]) -> None:
    """The gateway system prompt names each argument's fields as tool_help prints them (001: name, type, required, default)."""
    from toolcat.reader import Catalog  # noqa: PLC0415

    catalog = Catalog.open(workspace[0] / "build")
    prompt = catalog.prompt("system.gateway")["text"]
    promised = re.search(r"shows its arguments \(([^)]*)\)", prompt)
    assert promised is not None
    fields = {field.strip() for field in promised.group(1).split(",")}
    assert fields == {"name", "type", "required", "default", "rules"}
    printed: set[str] = set()
    for op in ("onto.task.list", "onto.task.create"):
        printed.update(*(set(arg) for arg in catalog.tool_help(op)["args"]))
    assert fields <= printed, fields - printed
    limit = next(arg for arg in catalog.tool_help("onto.task.list")["args"] if arg["name"] == "limit")
    assert limit["default"] == 50
    assert "default" not in limit.get("rules", "")
