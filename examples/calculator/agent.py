"""The calculator: `root_agent` with `add` and `multiply`, on an offline scripted model.

The scripted model really computes: for "What is 2+3?" it calls ``add(a=2, b=3)``,
then answers "The answer is 5." with the tool's result, so a golden recorded for
it replays the same way under `adk eval`.
"""

from __future__ import annotations

import re

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest

from adk_eval.testing import ScriptedLlm, tool_call


def add(a: int, b: int) -> dict:
    """Adds two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return {"result": a + b}


def multiply(a: int, b: int) -> dict:
    """Multiplies two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return {"result": a * b}


_PROBLEM = re.compile(r"(-?\d+)\s*([+*x])\s*(-?\d+)")


def _last_user_text(request: LlmRequest) -> str:
    for content in reversed(request.contents):
        if content.role == "user":
            text = "".join(p.text or "" for p in content.parts or [])
            if text:
                return text
    return ""


def calculate(request: LlmRequest) -> object:
    """Calls the right tool for the latest question, then reports its result."""
    last = request.contents[-1] if request.contents else None
    responses = (
        [p.function_response for p in (last.parts or []) if p.function_response] if last else []
    )
    if responses:
        return f"The answer is {dict(responses[0].response or {}).get('result')}."
    match = _PROBLEM.search(_last_user_text(request))
    if match is None:
        return "Please ask me to add or multiply two whole numbers, like 2+3."
    a, operator, b = int(match.group(1)), match.group(2), int(match.group(3))
    return tool_call("add" if operator == "+" else "multiply", {"a": a, "b": b})


root_agent = LlmAgent(
    name="calculator",
    description="Adds and multiplies whole numbers with its tools.",
    model=ScriptedLlm(responder=calculate, model="scripted-calculator"),
    instruction="You are a calculator. Use the add and multiply tools; never compute yourself.",
    tools=[add, multiply],
)
