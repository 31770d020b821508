"""What runs instead of a tool's body: the copies of tools the interception hands ADK.

The interception does not change the agent's tools (but for the guard of
`_direct`, which only the runs that mock a tool see). Before a model call it puts,
in the request, a shallow copy of each tool that must not run for real whose
``run_async`` is one of these bodies: a mock's answer, the pause of a tool a
user agent answers (`pause`), or the refusal of a call the case does not allow
(`tool_refusal`; `node_refusal` for a workflow node).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, TypeAlias

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from .._errors import EvalToolError

__all__ = [
    "TOOL_ERROR_CODE",
    "ToolBody",
    "confirmation_gate",
    "nested_pause_refusal",
    "node_refusal",
    "pause",
    "replaced_tool",
    "tool_refusal",
    "with_body",
]

TOOL_ERROR_CODE = "ADK_EVAL_TOOL_ERROR"
"""The error code of the event that ends a run after a call the case does not allow."""

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


def tool_refusal(
    tool: BaseTool,
    args: dict[str, Any],
    caller: str,
    *,
    shared: bool = False,
    misspelt: str | None = None,
) -> EvalToolError:
    """The error of a call the case does not allow (`shared`: another tool of the same name).

    `misspelt` is a `tool_mocks` name no tool has that resembles this tool's.
    """
    if not shared:
        hint = (
            f"tool_mocks names `{misspelt}`, which no tool of this run has: did you mean "
            f"`{tool.name}`?"
            if misspelt
            else None
        )
        return EvalToolError(tool.name, args, caller=caller, module=_tool_module(tool), hint=hint)
    return EvalToolError(
        tool.name,
        args,
        detail=(
            f"Tool `{tool.name}` called by {caller} is not the `{tool.name}` tool "
            "provided in tool_mocks (two different tools share the name). Provide this "
            "one too by mocking the name with a ToolMock."
        ),
    )


def nested_pause_refusal(tool: BaseTool, args: dict[str, Any], agent: str) -> EvalToolError:
    """The error of a long-running call inside an `AgentTool`: no user agent can answer it."""
    return EvalToolError(
        tool.name,
        args,
        detail=(
            f"Long-running tool `{tool.name}` was called by agent `{agent}` inside an "
            "AgentTool. ADK cannot pause the outer conversation for it, so no user agent "
            f"can answer. Mock it: tool_mocks={{{tool.name!r}: ToolMock(...)}}."
        ),
    )


def node_refusal(
    name: str, where: str, module: str | None, arguments: dict[str, Any]
) -> EvalToolError:
    """The error of a workflow node that would run code and has no mock."""
    provide = (
        f'  from {module} import {name}\n  node_mocks={{"{name}": {name}}}'
        if module
        else f'  node_mocks={{"{name}": <the node object itself>}}'
    )
    return EvalToolError(
        name,
        {key: value for key, value in arguments.items() if key != "ctx"},
        detail=(
            f"Node `{name}` of {where} would run during eval but no mock was provided: "
            "a function node runs code outside ADK's tool callbacks.\n\n"
            f"Add a mock (a function of the node's arguments, or its output):\n"
            f'  node_mocks={{"{name}": lambda **kwargs: ...}}\n\n'
            f"Or if this node has no side effects, let it run as itself:\n{provide}"
        ),
        kind="node",
    )


def _tool_module(tool: BaseTool) -> str | None:
    """The module a tool's function can be imported from (None if it cannot)."""
    func = getattr(tool, "func", None)
    module = getattr(func, "__module__", None)
    if not isinstance(module, str) or module == "__main__":
        return None
    return None if "<locals>" in getattr(func, "__qualname__", "<locals>") else module
