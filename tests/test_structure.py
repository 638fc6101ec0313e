"""The package's structure stays honest: no import cycle between its modules, no module too big to read.

Only module-level imports count (those inside ``if TYPE_CHECKING:`` excepted): an import inside a
function is lazy by design (a heavy or optional dependency, loaded when a command needs it) and
cannot make a module fail to import, so it is not an edge of the graph.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = "toolcat"
SOURCE = Path(__file__).resolve().parent.parent / "compiler"
MAX_LINES = 500


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


def _top_level_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Imports that run when the module is imported: the module body, and try/if blocks in it (not TYPE_CHECKING)."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and not _is_type_checking(node):
            pending.extend([*node.body, *node.orelse])
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody, *(s for h in node.handlers for s in h.body)])
    return found


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
    """Module → the package modules its module-level imports load."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, (file, is_package) in modules.items():
        tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
        graph[name] = set()
        for node in _top_level_imports(tree):
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


def _size_reason(tree: ast.Module) -> bool:
    docstring = ast.get_docstring(tree) or ""
    return any(line.strip().startswith("Size:") for line in docstring.splitlines())


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
    assert "toolcat.plan" in graph["toolcat.build"]
    assert "toolcat.artifacts" in graph["toolcat.plan"]
    assert (
        "toolcat.reader" in graph["toolcat.reader.catalog"]
        or "toolcat.reader.envelope" in graph["toolcat.reader.catalog"]
    )
    contributors = ("toolcat.index", "toolcat.prompts", "toolcat.exports", "toolcat.export_build")
    assert not [c for c in contributors if "toolcat.plan" in graph[c]], "a contributor imports the planner back"


def test_no_module_over_500_lines_without_a_reason():
    """A module over 500 lines says why at its top (a docstring line starting with "Size:")."""
    offenders = []
    for file, _ in sorted(_modules().values()):
        text = file.read_text(encoding="utf-8")
        lines = text.count("\n") + (not text.endswith("\n") and bool(text))
        if lines <= MAX_LINES:
            continue
        if not _size_reason(ast.parse(text, filename=str(file))):
            offenders.append(f"{file.relative_to(SOURCE.parent)}: {lines} lines")
    assert not offenders, (
        f"modules over {MAX_LINES} lines with no 'Size:' reason in their docstring (split them, or say why not):\n  "
        + "\n  ".join(offenders)
    )


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
    from toolcat.verify import verify_build  # noqa: PLC0415

    report = verify_build(_escaping_build(tmp_path, example_build))
    about_outside = [p for p in report.problems if "outside.json" in p]
    assert len(about_outside) == 1, report.problems  # refused, so never parsed or schema-checked
    assert "not a clean relative path" in about_outside[0]


def test_build_folder_reads_builds_through_the_reader(tmp_path, example_build):
    """exports.BuildFolder (export, stats, prompt) refuses a build whose refs leave the folder."""
    import pytest  # noqa: PLC0415

    from toolcat.exports import BuildFolder  # noqa: PLC0415

    with pytest.raises(ValueError, match="not a clean relative path"):
        BuildFolder(_escaping_build(tmp_path, example_build))
