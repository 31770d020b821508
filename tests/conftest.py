"""Shared helpers: real ADK agents on ScriptedLlm, and a log of real tool executions."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]


class ToolLog:
    """Records which real tool functions actually ran."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []

    def record(self, name: str, **args: object) -> None:
        self.calls.append((name, dict(args)))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.calls]


@pytest.fixture
def tool_log() -> ToolLog:
    return ToolLog()


@pytest.fixture
def isolated_imports(monkeypatch):
    """Forgets modules and sys.path entries a test's discovery added."""
    before = set(sys.modules)
    monkeypatch.setattr(sys, "path", list(sys.path))
    yield
    for name in set(sys.modules) - before:
        del sys.modules[name]


CASE_HEADER = """
from google.adk.agents import LlmAgent
from adk_eval import EvalCase, ScriptedUserAgent, TerminateWhen, UserAgents
from adk_eval.metrics import event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, tool_call
"""


@pytest.fixture
def write_evals(tmp_path, isolated_imports):
    """Writes eval files (the common imports are prepended) and returns their folder."""

    def write(files: dict[str, str]) -> Path:
        for name, source in files.items():
            path = tmp_path / name
            path.parent.mkdir(parents=True, exist_ok=True)
            body = textwrap.dedent(source)
            path.write_text(body if name.endswith("__init__.py") else CASE_HEADER + body)
        return tmp_path

    return write
