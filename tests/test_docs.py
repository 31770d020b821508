"""The README's Python examples run as written."""

from __future__ import annotations

import ast
import asyncio
import contextlib
import inspect
import io
import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.DOTALL)


def test_readme_python_examples_run():
    blocks = python_blocks()
    assert len(blocks) >= 3
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for source in blocks:
            before = set(namespace)
            code = compile(source, str(README), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
            result = eval(code, namespace)
            if inspect.iscoroutine(result):
                asyncio.run(result)
            for name in set(namespace) - before:
                if name.startswith("test_") and inspect.iscoroutinefunction(namespace[name]):
                    asyncio.run(namespace[name]())
    assert "passed 1 1" in out.getvalue()
