"""The exception tree: every exception class toolcat defines derives from ToolcatError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import click

import toolcat
import toolcat.format.errors as errors_module
from toolcat.build.errors import SourceError
from toolcat.engines.regex import UnsupportedPatternError
from toolcat.format.envelope import ReaderError
from toolcat.format.errors import ToolcatError
from toolcat.importers.common import ImporterError
from toolcat.importers.mcp import McpImportError
from toolcat.reader.folder import BuildReadError


def _toolcat_modules() -> list[str]:
    """Every module of the installed toolcat package (examples and templates included)."""
    return sorted(m.name for m in pkgutil.walk_packages(toolcat.__path__, "toolcat."))


def _exception_classes() -> dict[str, type[BaseException]]:
    """Exception classes defined in toolcat (not imported from elsewhere), by qualified name."""
    found: dict[str, type[BaseException]] = {}
    for name in _toolcat_modules():
        module = importlib.import_module(name)
        for _, value in inspect.getmembers(module, inspect.isclass):
            if issubclass(value, BaseException) and value.__module__.startswith("toolcat."):
                found[f"{value.__module__}.{value.__qualname__}"] = value
    return found


def test_every_toolcat_exception_derives_from_toolcat_error():
    """No module of toolcat defines an exception class outside the ToolcatError tree."""
    classes = _exception_classes()
    outside = sorted(name for name, cls in classes.items() if not issubclass(cls, ToolcatError))
    assert outside == []
    assert len(classes) >= 15, sorted(classes)  # the walk really found the tree (ReaderError, CatalogError, ...)


def test_named_errors_keep_their_older_bases():
    """The root is added beside the old bases: ValueError and ClickException handlers still catch them."""
    assert issubclass(UnsupportedPatternError, ValueError)
    assert issubclass(BuildReadError, ValueError)
    assert issubclass(SourceError, click.ClickException)
    assert issubclass(McpImportError, ImporterError)
    assert issubclass(ReaderError, ToolcatError)


def test_tree_drawn_in_the_docstring_names_every_class():
    """The module docstring of toolcat.format.errors draws every exception class of toolcat."""
    drawn = errors_module.__doc__ or ""
    missing = sorted({cls.__name__ for cls in _exception_classes().values()} - set(drawn.replace("(", " ").split()))
    assert missing == []
