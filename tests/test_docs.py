"""The Python examples in the README and docs/ run as written, in order, one script per page.

The rule, for README.md and every docs/*.md page:

- A page's ```python blocks, in order, are one script: written to a file (blank lines keep
  each line at its line number in the page, so a traceback points into the page) and run
  with this venv's `python` in a subprocess, in a fresh temporary directory (also its HOME),
  with `LITELLM_LOCAL_MODEL_COST_MAP=True` and no other environment: no API key, no model
  configuration. A block may use the names of the blocks above it. There is no top-level
  `await` (a script cannot have one): async code runs through `asyncio.run(...)`.
- A line `print(...)  # expected` must print `expected` (the script's stdout contains it).
- A ```python block on the line right after `<!-- pytest -->` is a pytest test file instead:
  the page's ```python blocks above it, then the block, written to `test_<page>.py` and run
  by `pytest` in a subprocess (with the installed pytest plugins and the pytest-asyncio
  settings docs/pytest.md gives); every `test_*` function the block defines must pass, so
  "0 items" fails. It is not part of the page's script.
- ```py blocks are fragments and do not run; FRAGMENTS below counts them per page, so a new
  fragment is a decision made here, not an accident.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # every page runs python in a subprocess (make test runs them)

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
PYTEST_MARK = "<!-- pytest -->"
TIMEOUT = 300  # seconds per script or pytest file

# What docs/pytest.md tells pytest-asyncio users to configure.
PYTEST_ASYNCIO = """[tool.pytest.ini_options]
asyncio_mode = "auto"
asyncio_default_fixture_loop_scope = "function"
"""

# ```py fragments per page; every other page has none.
FRAGMENTS = {"pytest.md": 2, "studio.md": 2}

# Tests that fail under the rule for now, by test id, each with why (strict: once the page is
# fixed the xfail fails, and its line goes).
BROKEN: dict[str, str] = {}

_FENCE = re.compile(
    rf"^(?P<mark>{re.escape(PYTEST_MARK)}\n)?```(?P<lang>python|py)\n(?P<source>.*?)^```$",
    re.M | re.S,
)


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: `python` (runs), `pytest` (a test file) or `py` (fragment)."""

    kind: str
    line: int  # the page's line number of the block's first line of code
    source: str


def blocks(path: Path) -> list[Block]:
    text = path.read_text()
    found = []
    for match in _FENCE.finditer(text):
        kind = "pytest" if match["mark"] else match["lang"]
        line = text.count("\n", 0, match.start("source")) + 1
        found.append(Block(kind, line, match["source"]))
    return found


def as_file(page_blocks: list[Block]) -> str:
    """The blocks, each at its page line (blank lines between them)."""
    lines: list[str] = []
    for block in page_blocks:
        lines += [""] * (block.line - 1 - len(lines))
        lines += block.source.splitlines()
    return "\n".join(lines) + "\n"


def expected_prints(source: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*print\(.*\)\s+#\s*(.+)$", source, re.M)]


def defined_tests(source: str) -> list[str]:
    tree = ast.parse(source)
    return [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name.startswith("test_")
    ]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    env = {"PATH": path, "HOME": str(cwd), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def module_name(path: Path) -> str:
    # Never a name that shadows an import (pytest.md would be `pytest`).
    return "page_" + re.sub(r"\W", "_", path.stem.lower())


def param(*values: object, name: str) -> object:
    if name not in BROKEN:
        return pytest.param(*values, id=name)
    return pytest.param(
        *values, id=name, marks=pytest.mark.xfail(reason=f"{name}: {BROKEN[name]}", strict=True)
    )


SCRIPTS = [
    param(path, name=path.name)
    for path in PAGES
    if any(block.kind == "python" for block in blocks(path))
]
PYTEST_FILES = [
    param(path, block.line, name=f"{path.name}:{block.line}")
    for path in PAGES
    for block in blocks(path)
    if block.kind == "pytest"
]


@pytest.mark.parametrize("path", SCRIPTS)
def test_a_pages_python_blocks_run_as_one_script_and_print_what_they_say(path, tmp_path):
    page = [block for block in blocks(path) if block.kind == "python"]
    for block in page:
        tests = defined_tests(block.source)
        assert not tests, f"{path.name}:{block.line} defines {tests}: mark it {PYTEST_MARK}"
    script = tmp_path / f"{module_name(path)}.py"
    script.write_text(as_file(page))
    done = run([sys.executable, script.name], tmp_path)
    assert done.returncode == 0, f"{path.name} does not run as a script:\n{done.stderr[-4000:]}"
    for block in page:
        for expected in expected_prints(block.source):
            assert expected in done.stdout, (
                f"{path.name}:{block.line}: no {expected!r} in:\n{done.stdout[-4000:]}"
            )


@pytest.mark.parametrize(("path", "line"), PYTEST_FILES)
def test_a_pytest_block_passes_under_pytest_as_a_test_file(path, line, tmp_path):
    page = blocks(path)
    (block,) = [b for b in page if b.line == line]
    above = [b for b in page if b.kind == "python" and b.line < line]
    tests = defined_tests(block.source)
    assert tests, f"{path.name}:{line} is marked pytest but defines no test_* function"
    (tmp_path / "pyproject.toml").write_text(PYTEST_ASYNCIO)
    test_file = tmp_path / f"test_{module_name(path)}.py"
    test_file.write_text(as_file([*above, block]))
    done = run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test_file.name], tmp_path
    )
    assert done.returncode == 0, f"{path.name}:{line} fails under pytest:\n{done.stdout[-4000:]}"
    assert re.search(rf"\b{len(tests)} passed\b", done.stdout), done.stdout[-2000:]


def test_fragments_are_where_the_list_says():
    counts = {p.name: sum(b.kind == "py" for b in blocks(p)) for p in PAGES}
    assert {name: n for name, n in counts.items() if n} == FRAGMENTS


def test_the_readme_has_runnable_examples():
    kinds = [block.kind for block in blocks(ROOT / "README.md")]
    assert kinds.count("python") >= 2
    assert kinds.count("pytest") >= 1
