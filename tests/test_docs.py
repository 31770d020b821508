"""The Python examples in the README and docs/ run as written, printing what they say.

Blocks fenced as ``python`` run, in order, one namespace per file (``py`` blocks
are fragments and do not). A ``print(...)  # expected`` line must print `expected`.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
import sys
import types
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def python_blocks(path: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.DOTALL)


def expected_prints(source: str) -> list[str]:
    return [m.group(1).strip() for m in re.finditer(r"^\s*print\(.*\)\s+#\s*(.+)$", source, re.M)]


@pytest.mark.parametrize("path", [p for p in DOCS if python_blocks(p)], ids=lambda p: p.name)
def test_python_examples_run_and_print_what_they_say(path, monkeypatch):
    module = types.ModuleType(f"docs_{path.stem.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)  # dataclasses look modules up
    namespace = module.__dict__
    for source in python_blocks(path):
        out = io.StringIO()
        before = set(namespace)
        with contextlib.redirect_stdout(out):
            code = compile(source, str(path), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
            for name in set(namespace) - before:
                if name.startswith("test_") and inspect.iscoroutinefunction(namespace[name]):
                    asyncio.run(namespace[name]())
        for expected in expected_prints(source):
            assert expected in out.getvalue(), (
                f"{path.name}: expected {expected!r} in {out.getvalue()!r}"
            )


def test_the_readme_has_runnable_examples():
    assert len(python_blocks(ROOT / "README.md")) >= 3
