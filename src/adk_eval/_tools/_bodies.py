"""What runs instead of a tool's body: the copies of tools the interception hands ADK.

The interception never changes the agent's tools. Before a model call it puts,
in the request, a shallow copy of each tool that must not run for real whose
``run_async`` is one of these bodies: a mock's answer, the pause of a tool a
user agent answers (`pause`), or the refusal of a call the case does not allow.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

__all__ = ["ToolBody", "confirmation_gate", "pause", "replaced_tool", "with_body"]

_ORIGINAL = "_adk_eval_original_tool"
"""Attribute of a tool copy whose body the harness replaced: the agent's own tool."""

ToolBody: TypeAlias = Callable[..., Awaitable[Any]]


def replaced_tool(tool: BaseTool) -> BaseTool | None:
    """The agent's own tool, if `tool` is a copy whose body the harness replaced."""
    original = getattr(tool, _ORIGINAL, None)
    return original if isinstance(original, BaseTool) else None


def with_body(tool: BaseTool, body: ToolBody) -> BaseTool:
    """A shallow copy of `tool` (same class, name, declaration, flags) that runs `body`."""
    clone = copy.copy(tool)
    setattr(clone, "run_async", body)  # noqa: B010 - an instance attribute shadows the method
    setattr(clone, _ORIGINAL, tool)
    return clone


async def pause(**_: Any) -> None:
    """The body of a tool a user agent answers: nothing, so ADK keeps the pause."""
    return None


async def confirmation_gate(
    tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
) -> dict[str, Any] | None:
    """Keeps a mocked tool's confirmation step (ADK's gate runs after plugins)."""
    if await tool.check_require_confirmation(tool_args, tool_context) is not True:
        return None
    confirmation = tool_context.tool_confirmation
    if confirmation is None:
        tool_context.request_confirmation(
            hint=(
                f"Please approve or reject the tool call {tool.name}() by responding with a "
                "FunctionResponse with an expected ToolConfirmation payload."
            )
        )
        tool_context.actions.skip_summarization = True
        return {"error": "This tool call requires confirmation, please approve or reject."}
    if not confirmation.confirmed:
        return {"error": "This tool call is rejected."}
    return None
