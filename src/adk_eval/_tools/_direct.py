"""Direct calls: code that calls a mocked tool's own object, not through the agent.

The interception answers the calls ADK makes: the model asks for a tool, ADK
runs the copy the harness put in the request. But a tool that runs for real
may hold another tool of the agent and await its ``run_async`` itself (a
composed tool, a helper). ADK's callbacks never see that call, so the copy is
not what runs: the tool's own object is.

So while a run uses a tool that must not run for real, that object answers
``run_async`` through `guarded`: an instance attribute that asks the run the
calling code belongs to (`DIRECT`, a context variable set for every tool call
the run makes). Outside a run, or in a run that lets the tool run, it is the
tool's own ``run_async``; in a run that mocks it, refuses or pauses it, the
call is refused with an `EvalToolError` that ends the run. It is the one
change the harness makes to an agent's tool, and it changes nothing outside
the runs that mock the tool.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from .._errors import EvalToolError

__all__ = ["DIRECT", "DirectCall", "guarded", "refusal", "unguarded"]

DirectCall = Callable[[BaseTool, dict[str, Any], ToolContext], EvalToolError | None]
"""A run's decision on a direct call: None lets the tool run, else the error to raise."""

DIRECT: contextvars.ContextVar[DirectCall | None] = contextvars.ContextVar(
    "adk_eval_direct_call", default=None
)
"""The decision of the run whose tool call the current code runs inside (None: no run)."""

_GUARD = "_adk_eval_guarded"


def guarded(tool: BaseTool) -> None:
    """Routes direct ``run_async`` calls on `tool`'s own object through the current run.

    Idempotent; a tool whose attributes cannot be set is left as it is.
    """
    if getattr(tool, "__dict__", {}).get(_GUARD):
        return
    own = type(tool).run_async

    async def run_async(*, args: dict[str, Any], tool_context: ToolContext) -> Any:
        decide = DIRECT.get()
        error = decide(tool, args, tool_context) if decide is not None else None
        if error is not None:
            raise error
        return await own(tool, args=args, tool_context=tool_context)

    try:
        setattr(tool, "run_async", run_async)  # noqa: B010 - shadows the method, this object only
        setattr(tool, _GUARD, True)
    except (AttributeError, TypeError):  # slots, or a frozen model: nothing to guard with
        return


def unguarded(tool: BaseTool) -> Callable[..., Any]:
    """`tool`'s own ``run_async``, past its guard: the harness's call of a real tool."""
    run_async: Callable[..., Any] = type(tool).run_async.__get__(tool)
    return run_async if getattr(tool, "__dict__", {}).get(_GUARD) else tool.run_async


def refusal(tool: BaseTool, args: dict[str, Any], caller: str | None) -> EvalToolError:
    """The error of a direct call to `tool`, made by the code of tool `caller`."""
    by = f"tool `{caller}`, which runs for real," if caller else "code the run runs"
    return EvalToolError(
        tool.name,
        args,
        detail=(
            f"{by} called `{tool.name}` directly (its object's `run_async`), not through "
            f"the agent, while the case mocks or refuses `{tool.name}`: its real body "
            "would have run unseen. adk_eval refused the call. Mock "
            + (f"`{caller}` too" if caller else "the calling code")
            + f", or let the agent call `{tool.name}` itself."
        ),
    )
