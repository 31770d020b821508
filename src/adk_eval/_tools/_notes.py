"""What the interception notes about each call of a run, for the trace and the result.

By function call id: what answered the call instead of its tool (`sources`),
what its mock, simulation or injected fault raised (`raised`), and how the call
does not fit its tool's declaration (`argument_problems`: an argument the tool
does not declare, a required one missing, a value of the wrong type, a tool
the agent does not have). An exception a mock raised is kept by identity too:
ADK's own traceback log of it is left out (the result names it), and when it
ends the run `error_for` turns it back into the `EvalToolError` that names the
mock, wherever ADK wrapped it.
"""

from __future__ import annotations

from typing import Any

from google.adk.tools.base_tool import BaseTool

from .._errors import EvalToolError
from .._quiet import quiet
from ._rejections import argument_problems, is_unknown_tool, unknown_tool_problems

__all__ = ["CallNotes"]


class CallNotes:
    """What one run's interception noted about its calls, by function call id."""

    def __init__(self) -> None:
        self.sources: dict[str, str] = {}
        """Call id -> what answered it instead of the tool (``"mock"``, ``"rejected"``)."""
        self.raised: dict[str, str] = {}
        """Call id -> what its mock or fault raised (``"RuntimeError: CRM down"``)."""
        self.argument_problems: dict[str, tuple[str, ...]] = {}
        """Call id -> how the call does not fit its tool's declaration."""
        self.offered: dict[str, list[str]] = {}
        """Agent name -> the tool names its latest model request offered."""
        self._errors: dict[int, tuple[BaseException, str, dict[str, Any]]] = {}

    def arguments(self, tool: BaseTool, args: dict[str, Any], call_id: str | None) -> None:
        """Notes how `args` do not fit `tool`'s declaration, if they do not."""
        problems = argument_problems(tool, args)
        if problems and call_id:
            self.argument_problems[call_id] = tuple(problems)

    def unknown_tool(
        self, tool: BaseTool, error: BaseException, agent: str, call_id: str | None
    ) -> None:
        """Notes a call to a tool `agent` does not have (ADK answers the model itself)."""
        offered = self.offered.get(agent, [])
        if is_unknown_tool(tool, error) and tool.name not in offered and call_id:
            self.argument_problems[call_id] = tuple(unknown_tool_problems(tool.name, offered))
            self.sources[call_id] = "rejected"
            quiet(error)  # the trace reports it: ADK need not log it too

    def mock_raised(
        self, error: BaseException, tool: str, args: dict[str, Any], call_id: str | None
    ) -> None:
        """Keeps `error`, raised answering a call of `tool`; ADK will not log it."""
        self._errors[id(error)] = (error, tool, dict(args))
        quiet(error)
        if call_id:
            self.raised[call_id] = f"{type(error).__name__}: {error}"

    def error_for(self, error: BaseException) -> EvalToolError | None:
        """The `EvalToolError` of a mock's exception in `error`'s chain (None if none)."""
        seen: set[int] = set()
        current: BaseException | None = error
        while current is not None and id(current) not in seen:
            seen.add(id(current))
            raised, name, args = self._errors.get(id(current), (None, "", {}))
            if raised is current:
                return EvalToolError(
                    name,
                    args,
                    detail=(
                        f"The mock for tool `{name}` raised {type(current).__name__}: {current}"
                    ),
                )
            current = current.__cause__ or current.__context__
        return None
