"""Shared builders of ADK goldens for the metric tests."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from google.adk.evaluation.eval_case import IntermediateData, Invocation
from google.genai import types


def invocation(text: str, calls: Iterable[tuple[str, dict[str, Any]]]) -> Invocation:
    """One turn of a golden: the user's `text` and the tool calls expected after it."""
    return Invocation(
        user_content=types.Content(role="user", parts=[types.Part(text=text)]),
        intermediate_data=IntermediateData(
            tool_uses=[types.FunctionCall(name=name, args=args) for name, args in calls]
        ),
    )
