"""The public API is exactly the documented names: docs/api.md has a table per public module."""

import ast
import importlib
import importlib.util
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import pytest

import adk_eval

API_DOC = Path(__file__).resolve().parents[1] / "docs" / "api.md"
PUBLIC_MODULES = (
    "adk_eval",
    "adk_eval.metrics",
    "adk_eval.goldens",
    "adk_eval.production",
    "adk_eval.realism",
    "adk_eval.safety",
    "adk_eval.reporting",
    "adk_eval.studio",
    "adk_eval.mock_mcp",
    "adk_eval.testing",
    "adk_eval.models",
    "adk_eval.fake_provider",
    "adk_eval.pytest_plugin",
)


def documented_order() -> dict[str, list[str]]:
    """Module -> the names in the first column of its table in docs/api.md, in order."""
    tables: dict[str, list[str]] = {}
    module = None
    for line in API_DOC.read_text().splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            module = heading.group(1)
            tables[module] = []
        elif line.startswith("## "):
            module = None
        elif module and (row := re.match(r"\| `(\w+)` \|", line)):
            tables[module].append(row.group(1))
    return tables


def documented_names() -> dict[str, set[str]]:
    """Module -> the names in the first column of its table in docs/api.md."""
    return {module: set(names) for module, names in documented_order().items()}


def test_the_api_doc_has_a_table_for_each_public_module_and_no_other():
    assert list(documented_names()) == list(PUBLIC_MODULES)


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_each_public_module_exports_exactly_its_documented_names(name):
    module = importlib.import_module(name)
    assert set(module.__all__) == documented_names()[name]
    assert len(module.__all__) == len(set(module.__all__))
    for exported in module.__all__:
        assert hasattr(module, exported), f"{name}.{exported}"


def test_every_other_module_is_private():
    packages = [adk_eval, *(importlib.import_module(m) for m in PUBLIC_MODULES if "." in m)]
    for package in packages:
        for info in pkgutil.iter_modules(getattr(package, "__path__", [])):
            full = f"{package.__name__}.{info.name}"
            if full not in PUBLIC_MODULES and info.name != "__main__":
                assert info.name.startswith("_"), f"{full} is neither documented nor private"


def source(module: str) -> Path:
    """The file of `module`, found without importing it."""
    spec = importlib.util.find_spec(module)
    assert spec is not None, module
    assert spec.origin is not None, module
    return Path(spec.origin)


LAZY_PACKAGES = [name for name in PUBLIC_MODULES if "lazy_names(" in source(name).read_text()]
"""The public packages whose names load on first use: each lists them once, in `_EXPORTS`."""


def test_the_catalogue_packages_load_their_names_on_first_use():
    assert LAZY_PACKAGES == [
        "adk_eval",
        "adk_eval.metrics",
        "adk_eval.safety",
        "adk_eval.reporting",
        "adk_eval.studio",
        "adk_eval.mock_mcp",
    ]


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_a_lazy_package_exports_its_table_in_the_documented_order(name):
    module = importlib.import_module(name)
    assert module.__all__ == list(module._EXPORTS) == documented_order()[name]
    for exported, relative in module._EXPORTS.items():
        defining = importlib.import_module(importlib.util.resolve_name(relative, name))
        assert getattr(module, exported) is getattr(defining, exported), f"{name}.{exported}"


def typing_imports(package: str) -> dict[str, tuple[str, str, str | None]]:
    """Each name the package's ``if TYPE_CHECKING:`` block imports -> (module, name, alias)."""
    path = source(package)
    blocks = [
        node
        for node in ast.parse(path.read_text()).body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, f"{path}: one `if TYPE_CHECKING:` block of imports"
    imported = {}
    for statement in blocks[0].body:
        assert isinstance(statement, ast.ImportFrom), f"{path}:{statement.lineno}: not an import"
        module = importlib.util.resolve_name(
            "." * statement.level + (statement.module or ""), package
        )
        for alias in statement.names:
            imported[alias.asname or alias.name] = (module, alias.name, alias.asname)
    return imported


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_the_typing_block_imports_each_name_of_the_table_from_its_module(name):
    """Type checkers read the typing block, the runtime reads the table: they must agree.

    Each name is imported as itself (``X as X``): with ``__all__`` computed, that is
    what makes a strict type checker see it re-exported.
    """
    table = importlib.import_module(name)._EXPORTS
    imported = typing_imports(name)
    assert sorted(set(table) - set(imported)) == [], "in the table, not in the typing block"
    assert sorted(set(imported) - set(table)) == [], "in the typing block, not in the table"
    for exported, relative in table.items():
        module, original, alias = imported[exported]
        assert module == importlib.util.resolve_name(relative, name), f"{name}.{exported}"
        assert original == alias == exported, f"{name}: import {exported} as {exported}"


def test_importing_the_package_does_not_import_adk():
    code = (
        "import sys, adk_eval, adk_eval.pytest_plugin, adk_eval.reporting, adk_eval.studio, "
        "adk_eval.models; print('google.adk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
