"""Calls whose arguments do not fit their tool: what the trace notes, and what ADK answers.

A real model can call a tool with an argument the tool does not declare, without
one it requires, or with a value of the wrong type. `misfits` names
each (the same check `ScriptedLlm` applies to a script); the interception keeps
them by call id for the trace and `explain()`. ADK's `FunctionTool` does not run
its function for some of those calls and answers the model with an error
instead: `adk_rejection` is that answer, from ADK's own checks, so a mocked
function tool rejects exactly the calls the real one would.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.function_tool import FunctionTool

from .._arguments import call_problems, declared_by, tool_problems

__all__ = ["adk_rejection", "is_unknown_tool", "misfits", "unknown_tool_problems"]

_PLACEHOLDER_DESCRIPTION = "Tool not found"
"""The description of the tool ADK makes up for a call to a name the agent has no tool for."""


def misfits(tool: BaseTool, args: dict[str, Any]) -> list[str]:
    """What is wrong with these arguments by `tool`'s declaration ([] if nothing, or no check)."""
    signature = declared_by(tool)
    return call_problems(signature, args) if signature is not None else []


def adk_rejection(tool: BaseTool, args: dict[str, Any]) -> dict[str, Any] | None:
    """ADK's answer to a call its `FunctionTool` does not run (None: ADK would run it).

    ADK checks the arguments before the function (its type validation, when that
    feature is on, then the mandatory parameters) and answers the model with an
    error. The checks are ADK's own methods on the tool.
    """
    if not isinstance(tool, FunctionTool):
        return None
    try:
        _, errors = tool._preprocess_args_with_validation(dict(args))
        if errors:
            return tool._build_validation_error_response(errors)
        missing = [name for name in tool._get_mandatory_args() if name not in args]
    except Exception:  # ADK would raise the same out of the real tool; the mock answers
        return None
    if not missing:
        return None
    names = "\n".join(missing)
    return {
        "error": f"Invoking `{tool.name}()` failed as the following mandatory input "
        f"parameters are not present:\n{names}\nYou could retry calling this tool, but it "
        "is IMPORTANT for you to provide all the mandatory parameters."
    }


def is_unknown_tool(tool: BaseTool, error: BaseException) -> bool:
    """Whether ADK is reporting a call to a tool name the agent does not have."""
    return (
        type(tool) is BaseTool
        and tool.description == _PLACEHOLDER_DESCRIPTION
        and isinstance(error, ValueError)
    )


def unknown_tool_problems(name: str, offered: list[str]) -> list[str]:
    """The problem of a call to `name` when the agent was offered `offered`."""
    return tool_problems(name, dict.fromkeys(offered))
