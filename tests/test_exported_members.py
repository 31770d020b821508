"""The public API is exactly the documented names: docs/api.md has a table per public module."""

import importlib
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
    "adk_eval.safety",
    "adk_eval.reporting",
    "adk_eval.studio",
    "adk_eval.testing",
    "adk_eval.models",
    "adk_eval.fake_provider",
    "adk_eval.pytest_plugin",
)


def documented_names() -> dict[str, set[str]]:
    """Module -> the names in the first column of its table in docs/api.md."""
    tables: dict[str, set[str]] = {}
    module = None
    for line in API_DOC.read_text().splitlines():
        heading = re.fullmatch(r"## `([\w.]+)`", line)
        if heading:
            module = heading.group(1)
            tables[module] = set()
        elif line.startswith("## "):
            module = None
        elif module and (row := re.match(r"\| `(\w+)` \|", line)):
            tables[module].add(row.group(1))
    return tables


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


@pytest.mark.parametrize(
    "name", ["adk_eval", "adk_eval.reporting", "adk_eval.studio", "adk_eval.safety"]
)
def test_lazy_exports_map_every_public_name(name):
    module = importlib.import_module(name)
    assert set(module._EXPORTS) == set(module.__all__)
    for exported in module.__all__:
        assert getattr(module, exported) is not None, f"{name}.{exported}"


def test_importing_the_package_does_not_import_adk():
    code = (
        "import sys, adk_eval, adk_eval.pytest_plugin, adk_eval.reporting, adk_eval.studio, "
        "adk_eval.models; print('google.adk' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
