"""Distribution: ``pip install toolcat`` is the reader alone, imported as ``toolcat``; extras add the rest."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from support import REPO

HEAVY = ("scikit-learn", "numpy", "scipy", "mkdocs", "mkdocs-material", "mcp", "jinja2", "jsonschema", "pyyaml")


def test_package_code_never_names_its_source_folder():
    """Code in compiler/ imports its siblings relatively (or as toolcat), never as ``compiler``: it ships as toolcat."""
    for file in sorted((REPO / "compiler").rglob("*.py")):
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "compiler" for a in node.names), file
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] != "compiler", file


def test_toolcat_package_exports_the_reader_lazily():
    """``import toolcat`` loads no reader module until ``toolcat.Catalog`` is used, then it is the reader's class."""
    code = (
        "import sys, toolcat; before = 'toolcat.reader' in sys.modules; from toolcat import Catalog; "
        "from toolcat.reader import Catalog as C; print(before, Catalog is C)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd="/")
    assert out.stdout.split() == ["False", "True"]


@pytest.mark.slow
def test_reader_only_install_reads_a_build_and_names_the_missing_extras(example_build: Path, tmp_path: Path):
    """A fresh venv with ``pip install .`` (no extras) opens a build, lists it, and a build command names [build]."""
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    bin_dir = env_dir / "bin"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(bin_dir / "pip"), "install", "-q", "--disable-pip-version-check", str(REPO)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    if done.returncode != 0 and ("No matching distribution" in done.stderr or "connection" in done.stderr.lower()):
        pytest.skip(f"pip could not reach a package index to build the wheel: {done.stderr.strip()[-200:]}")
    assert done.returncode == 0, done.stderr[-2000:]
    listed = subprocess.run(
        [str(bin_dir / "pip"), "list", "--format=freeze", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    ).stdout.lower()
    installed = {line.split("==")[0] for line in listed.splitlines()}
    assert not installed & set(HEAVY), installed
    code = f"from toolcat import Catalog; out = Catalog.open({str(example_build)!r}).list(); print(out['ok'])"
    read = subprocess.run(
        [str(bin_dir / "python"), "-c", code], capture_output=True, text=True, check=False, env=env, cwd=tmp_path
    )
    assert read.stdout.strip() == "True", read.stderr[-2000:]
    build = subprocess.run(
        [str(bin_dir / "toolcat"), "build", str(REPO / "catalog_src"), "--out", str(tmp_path / "b")],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
    )
    assert build.returncode == 1
    assert "pip install 'toolcat[build]'" in build.stderr
    assert "Traceback" not in build.stderr
    served = subprocess.run(
        [str(bin_dir / "toolcat"), "serve", "--build", str(example_build)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        cwd=tmp_path,
        timeout=60,
    )
    assert "pip install 'toolcat[mcp]'" in served.stderr


def test_every_subpackage_ships():
    """Each folder of compiler/ with an ``__init__.py`` is listed in pyproject's packages (else it would not ship)."""
    import tomllib  # noqa: PLC0415

    root = REPO
    listed = set(tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    source = root / "compiler"
    found = {
        ".".join(["toolcat", *init.parent.relative_to(source).parts])
        for init in source.rglob("__init__.py")
        if "__pycache__" not in init.parts
    }
    assert found - listed == set(), "subpackages missing from pyproject.toml's packages"
    assert "toolcat.format.schemas" in listed  # the JSON schemas are package data of format/


def test_the_version_has_one_source():
    """pyproject.toml reads the version from toolcat.__version__; it is not written a second time."""
    import tomllib  # noqa: PLC0415

    root = REPO
    project = tomllib.loads((root / "pyproject.toml").read_text())
    assert "version" in project["project"]["dynamic"]
    assert "version" not in project["project"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "toolcat.format.version.__version__"}


def _source_copy(dest: Path) -> Path:
    """The repository's tracked and new (not ignored) files, copied: building in place would litter build/."""
    listed = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    for rel in listed:
        source = REPO / rel
        if source.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            (dest / rel).write_bytes(source.read_bytes())
    return dest


@pytest.mark.slow
def test_wheel_and_sdist_ship_the_license_and_full_metadata(tmp_path: Path):
    """The wheel and the sdist hold LICENSE; their metadata names authors, classifiers, project URLs, absolute links."""
    import tarfile  # noqa: PLC0415
    import zipfile  # noqa: PLC0415

    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    python = str(env_dir / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    setup = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "setuptools>=77", "wheel"],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=600,
    )
    if setup.returncode != 0:
        pytest.skip(f"pip could not install the build backend from a package index: {setup.stderr.strip()[-200:]}")
    source = _source_copy(tmp_path / "src")
    dist = tmp_path / "dist"
    backend = (
        "import sys, setuptools.build_meta as b; d = sys.argv[1]; print(b.build_wheel(d)); print(b.build_sdist(d))"
    )
    built = subprocess.run(
        [python, "-c", backend, str(dist)], capture_output=True, text=True, check=False, env=env, cwd=source
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel_name,) = [p.name for p in dist.glob("*.whl")]
    (sdist_name,) = [p.name for p in dist.glob("*.tar.gz")]
    with zipfile.ZipFile(dist / wheel_name) as wheel:
        names = wheel.namelist()
        metadata_name = next(n for n in names if n.endswith(".dist-info/METADATA"))
        metadata = wheel.read(metadata_name).decode("utf-8")
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names[-10:]
    assert "toolcat/templates/site/overrides/partials/header.html" in names
    with tarfile.open(dist / sdist_name) as sdist:
        assert any(n.endswith("/LICENSE") and n.count("/") == 1 for n in sdist.getnames())
    head, _, description = metadata.partition("\n\n")
    assert "License-Expression: MIT" in head
    assert "License-File: LICENSE" in head
    assert "Author: toolcat developers" in head or "Author-email: toolcat developers" in head
    assert "Classifier: Programming Language :: Python :: 3.11" in head
    for label in ("Homepage", "Documentation", "Source", "Issues", "Changelog"):
        assert f"Project-URL: {label}, https://github.com/toolcat-dev/toolcat" in head, label
    links = re.findall(r"\]\(([^)]+)\)", description)
    assert links
    assert [link for link in links if not link.startswith(("https://", "http://", "#"))] == []
