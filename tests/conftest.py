"""Shared helpers: real ADK agents on ScriptedLlm, and a log of real tool executions."""

from __future__ import annotations

import pytest


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
