"""The shape of the package: imports point one way, no cycles, small modules and functions,
and tests laid out as the package is (a tests folder per source folder, small test modules).

The import contract is a test over grimp's import graph rather than import-linter's
contracts: one graph gives both rules exactly as stated (a module never imports a
higher layer, and no two modules import each other through any chain, inside a
layer too, which a layers contract does not forbid), counts every import (inside
functions and under ``if TYPE_CHECKING:`` included), and a failure names the file
and line of each offending import.
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "adk_eval"
TESTS = Path(__file__).resolve().parent

LAYERS: list[list[str]] = [
    ["__main__"],
    ["_cli"],
    ["reporting", "studio", "pytest_plugin", "mock_mcp", "_mock_a2a"],
    ["_web"],
    [""],  # the package itself: the catalogue of the public names
    ["realism"],
    ["production"],
    ["_suites", "goldens", "safety"],
    ["_run"],
    ["_case"],
    ["_user_agents"],
    ["_bridge"],
    ["_tools"],
    ["_result"],
    ["metrics", "_model_check"],
    ["_agent_tree", "_transcript"],
    ["_trace", "_termination", "_session_service", "models", "testing", "fake_provider"],
    ["_sources"],
    ["_state", "_turns", "_lazy", "_strict_json", "_callables", "_arguments", "_sandbox"],
    ["_statistics", "_seeds", "_file_kinds"],
    ["_quiet"],
    ["_errors"],
]
"""The layers of `adk_eval`, top to bottom: a module imports only from its own package
or from a lower layer; the parts of one layer do not import each other."""

MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60  # from `def` to the function's last line, docstring included
MAX_TOP_LEVEL_MODULES = 24
MAX_TEST_MODULE_LINES = 600


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("adk_eval", cache_dir=None)


def part_of(module: str) -> str:
    """The layer part a module belongs to: its first name under `adk_eval` ("" for the root)."""
    names = module.split(".")
    return names[1] if len(names) > 1 else ""


def layer_of(part: str) -> int:
    return next(index for index, parts in enumerate(LAYERS) if part in parts)


def where(graph: grimp.ImportGraph, importer: str, imported: str) -> str:
    details = graph.get_import_details(importer=importer, imported=imported)
    lines = ", ".join(str(detail["line_number"]) for detail in details)
    return f"{importer} (line {lines}) imports {imported}"


def test_every_module_has_a_layer(graph):
    parts = {part_of(module) for module in graph.modules}
    assert parts == {part for layer in LAYERS for part in layer}


def test_imports_point_down_the_layers(graph):
    wrong = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            above, below = part_of(importer), part_of(imported)
            if above != below and layer_of(above) >= layer_of(below):
                wrong.append(where(graph, importer, imported))
    assert not wrong, "imports that point up or sideways:\n" + "\n".join(wrong)


SOURCES_MAY_IMPORT = {
    "adk_eval._errors",
    "adk_eval._file_kinds",
    "adk_eval._sandbox",
    "adk_eval._sandbox._loopback",
}
"""All of adk_eval that `_sources` (what reads stored conversations from outside) may
import: the error tree, the file-kind table, and the one loopback rule its span collector
asks."""


def test_the_sources_wing_stands_on_the_error_tree_alone(graph):
    wrong = [
        where(graph, importer, imported)
        for importer in sorted(graph.modules)
        if part_of(importer) == "_sources"
        for imported in sorted(graph.find_modules_directly_imported_by(importer))
        if part_of(imported) != "_sources" and imported not in SOURCES_MAY_IMPORT
    ]
    assert not wrong, "imports out of _sources:\n" + "\n".join(wrong)


def test_there_is_no_import_cycle(graph):
    cycles = [component for component in strongly_connected(graph) if len(component) > 1]
    described = [" <-> ".join(sorted(component)) for component in cycles]
    assert not cycles, "import cycles:\n" + "\n".join(described)


def test_only_the_sources_wing_redacts_a_stored_session():
    """Redaction happens once, where a stored conversation is read (`_sources._stored`)."""
    callers = []
    for path in python_files():
        if path.relative_to(PACKAGE).parts[0] == "_sources":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            called = node.func if isinstance(node, ast.Call) else None
            name = getattr(called, "id", None) or getattr(called, "attr", None)
            if name == "redact_session":
                callers.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert not callers, callers


def strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """Tarjan's strongly connected components of the import graph (iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[set[str]] = []
    for root in sorted(graph.modules):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.find_modules_directly_imported_by(root))))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append(
                        (child, iter(sorted(graph.find_modules_directly_imported_by(child))))
                    )
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                components.append(component)
    return components


class FakeGraph:
    """Just what `strongly_connected` reads of a graph."""

    def __init__(self, imports: dict[str, set[str]]) -> None:
        self.imports = imports
        self.modules = set(imports)

    def find_modules_directly_imported_by(self, module: str) -> set[str]:
        return self.imports[module]


def test_the_cycle_finder_finds_cycles_and_nothing_else():
    graph = FakeGraph({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()})
    cycles = [c for c in strongly_connected(graph) if len(c) > 1]  # type: ignore[arg-type]
    assert cycles == [{"a", "b", "c"}]


def python_files() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines():
    long = {
        str(path.relative_to(PACKAGE)): lines
        for path in python_files()
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert not long


LONG_FUNCTIONS: set[str] = set()
"""The functions over `MAX_FUNCTION_LINES` lines, at most 8: a list that only shrinks."""


def test_no_function_is_over_60_lines_but_the_few_listed():
    long = set()
    for path in python_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                first = node.body[0]  # a docstring documents; it does not make a function long
                if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                    lines -= (first.end_lineno or first.lineno) - first.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.add(f"{path.relative_to(PACKAGE).as_posix()}:{node.name}")
    assert long <= LONG_FUNCTIONS, sorted(long - LONG_FUNCTIONS)  # new long functions
    assert long >= LONG_FUNCTIONS, sorted(LONG_FUNCTIONS - long)  # shortened: take it off
    assert len(LONG_FUNCTIONS) <= 8


def test_at_most_24_top_level_modules():
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(modules) <= MAX_TOP_LEVEL_MODULES, modules


def test_every_source_folder_has_a_tests_folder():
    """`src/adk_eval/<path>/` (any folder holding a module) is tested in `tests/<path>/`.

    That folder is a package (an `__init__.py`, as every tests folder has) holding at
    least one `test_*.py`; the package's root is tested in `tests/` itself.
    """
    folders = sorted({path.parent.relative_to(PACKAGE) for path in python_files()})
    missing = [
        f"tests/{folder.as_posix()}/" if folder.parts else "tests/"
        for folder in folders
        if not (TESTS / folder / "__init__.py").is_file()
        or not any((TESTS / folder).glob("test_*.py"))
    ]
    assert not missing, "source folders without their tests folder: " + ", ".join(missing)


def test_no_test_module_is_over_600_lines():
    long = {
        path.relative_to(TESTS).as_posix(): lines
        for path in sorted(TESTS.rglob("test_*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_TEST_MODULE_LINES
    }
    assert not long, long


def test_the_readme_layout_names_every_folder_and_top_level_module():
    readme = (PACKAGE.parents[1] / "README.md").read_text()
    layout = readme[readme.index("## Layout") : readme.index("## Development")]
    listed = {line.split()[0] for line in layout.splitlines() if line.startswith("  ")}
    present = {path.name for path in PACKAGE.glob("*.py")}
    present |= {f"{path.name}/" for path in PACKAGE.iterdir() if path.is_dir()}
    present -= {"__pycache__/"}
    assert present <= listed, sorted(present - listed)
