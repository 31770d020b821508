"""Seeds: one default for draws that should repeat, derived seeds stable across processes."""

from __future__ import annotations

import ast
import inspect
import subprocess
import sys
from pathlib import Path

from adk_eval._seeds import DEFAULT_SEED, derive_seed, new_seed
from adk_eval.fake_provider import FakeProviderServer
from adk_eval.mock_mcp import MockMcpServer
from adk_eval.realism._two_sample import permutation_p

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "adk_eval"


def literal_seed_defaults(tree: ast.AST) -> list[int]:
    """Lines where a parameter or option named ``seed`` defaults to a number written out."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            arguments = node.args
            positional = [*arguments.posonlyargs, *arguments.args]
            with_default = positional[len(positional) - len(arguments.defaults) :]
            pairs = list(zip(with_default, arguments.defaults, strict=True))
            keywords = zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            pairs += [(a, d) for a, d in keywords if d is not None]
            found += [d.lineno for a, d in pairs if a.arg == "seed" and _number(d)]
        if isinstance(node, ast.Call) and any(
            isinstance(arg, ast.Constant) and arg.value == "--seed" for arg in node.args
        ):
            found += [
                k.value.lineno for k in node.keywords if k.arg == "default" and _number(k.value)
            ]
    return found


def _number(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, int)


def test_no_seed_defaults_to_a_number_of_its_own():
    literal = {
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line in literal_seed_defaults(ast.parse(path.read_text()))
    }
    assert not literal  # each says DEFAULT_SEED (or None: a fresh seed per run)


def test_the_finder_sees_a_literal_default():
    code = "def f(*, seed: int = 0): ...\nclick.option('--seed', type=int, default=3)"
    assert literal_seed_defaults(ast.parse(code)) == [1, 2]
    assert literal_seed_defaults(ast.parse("def f(seed: int | None = None): ...")) == []


def test_the_servers_and_the_resampling_default_to_the_one_seed():
    assert inspect.signature(FakeProviderServer).parameters["seed"].default == DEFAULT_SEED
    assert inspect.signature(MockMcpServer).parameters["seed"].default == DEFAULT_SEED
    assert inspect.signature(permutation_p).parameters["seed"].default == DEFAULT_SEED


def test_a_derived_seed_is_the_same_in_another_process_and_fresh_seeds_differ():
    code = "from adk_eval._seeds import derive_seed; print(derive_seed(7, 'tool', 2))"
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert int(other.stdout) == derive_seed(7, "tool", 2)
    assert derive_seed(7, "tool", 2) != derive_seed(7, "tool", 3)
    assert 0 <= derive_seed(7, "tool", 2) < 2**63
    assert new_seed() != new_seed()
