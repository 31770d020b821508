"""The clinician's tools the run's tests share: a question a user agent answers, a state read.

`ask` is a long-running tool: the case's tool user agent answers it, so its body
must never run; `read_state` only reads, so cases pass it through as its own mock.
"""

from __future__ import annotations

from google.adk.tools import ToolContext

__all__ = ["ask", "read_state"]


def ask(question: str) -> None:
    """Asks the patient a question and waits for the answer."""
    raise AssertionError("the real `ask` must not run when a user agent answers it")


def read_state(key: str, tool_context: ToolContext) -> dict:
    """Returns a state value (safe: reads only)."""
    return {"value": tool_context.state.get(key)}
