"""`RunRecord`: what the interception notes about one run, and the trace built from it.

The interception plugin is its only writer. By function call id: what answered
the call instead of its tool (a mock, a refusal, ADK's rejection), what its
mock, simulation or injected fault raised, and how the call does not fit its
tool's declaration; besides, the events of agents that ran inside `AgentTool`
calls, the tool names each agent was last offered, and the first call the case
does not allow (the violation that ends the run). The simulation reads nothing
of it but `trace` and the violation's error; the trace carries the rest to
metrics, results and reports.

An exception a mock raised is kept by identity too: ADK's own traceback log of
it is left out (the result names it), and when it ends the run `error_for`
turns it back into the `EvalToolError` that names the mock, wherever ADK
wrapped it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events import Event
from google.adk.tools.base_tool import BaseTool
from google.genai import types

from .._errors import EvalToolError
from .._quiet import quiet
from .._trace import EvalTrace, NestedEvent
from ._bodies import TOOL_ERROR_CODE, node_refusal
from ._rejections import is_unknown_tool, misfits, unknown_tool_problems

__all__ = ["RunRecord"]


class RunRecord:
    """What one run's interception noted: its calls, nested events and violation."""

    def __init__(self) -> None:
        self.sources: dict[str, str] = {}
        """Call id -> what answered it instead of the tool (``"mock"``, ``"rejected"``)."""
        self.offered: dict[str, list[str]] = {}
        """Agent name -> the tool names its latest model request offered."""
        self.violation: EvalToolError | None = None
        """The first call the case does not allow (the run stops at the next model call)."""
        self._raised: dict[str, str] = {}
        self._problems: dict[str, tuple[str, ...]] = {}
        self._nested: list[NestedEvent] = []
        self._errors: dict[int, tuple[BaseException, str, dict[str, Any]]] = {}

    # -- what the interception writes ----------------------------------------------

    def violate(self, error: EvalToolError) -> EvalToolError:
        """Keeps `error` as the run's violation unless one came first; returns it."""
        if self.violation is None:
            self.violation = error
        return error

    def refuse_node(
        self, name: str, where: str, module: str | None, arguments: dict[str, Any]
    ) -> Event:
        """A workflow code node without a mock: the error event that ends the run.

        It is the replacement body of the node (see `with_node_mocks`), so the
        node's own code never runs.
        """
        error = self.violate(node_refusal(name, where, module, arguments))
        return Event(author=name, error_code=TOOL_ERROR_CODE, error_message=error.summary)

    def arguments(self, tool: BaseTool, args: dict[str, Any], call_id: str | None) -> None:
        """Notes how `args` do not fit `tool`'s declaration, if they do not."""
        problems = misfits(tool, args)
        if problems and call_id:
            self._problems[call_id] = tuple(problems)

    def unknown_tool(
        self, tool: BaseTool, error: BaseException, agent: str, call_id: str | None
    ) -> None:
        """Notes a call to a tool `agent` does not have (ADK answers the model itself)."""
        offered = self.offered.get(agent, [])
        if is_unknown_tool(tool, error) and tool.name not in offered and call_id:
            self._problems[call_id] = tuple(unknown_tool_problems(tool.name, offered))
            self.sources[call_id] = "rejected"
            quiet(error)  # the trace reports it: ADK need not log it too

    def mock_raised(
        self, error: BaseException, tool: str, args: dict[str, Any], call_id: str | None
    ) -> None:
        """Keeps `error`, raised answering a call of `tool`; ADK will not log it."""
        self._errors[id(error)] = (error, tool, dict(args))
        quiet(error)
        if call_id:
            self._raised[call_id] = f"{type(error).__name__}: {error}"

    def nest(self, path: tuple[str, ...], call_ids: tuple[str, ...], event: Event) -> None:
        """Keeps an event of an agent that runs inside the `AgentTool` calls `call_ids`."""
        self._nested.append(NestedEvent(path=path, call_ids=call_ids, event=event))

    # -- what the run reads ------------------------------------------------------------

    def take_violation(self) -> EvalToolError | None:
        """The violation, cleared (a runner used by hand can go on)."""
        violation, self.violation = self.violation, None
        return violation

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

    def offered_names(self) -> set[str]:
        """Every tool name an agent of the run was offered."""
        return {name for names in self.offered.values() for name in names}

    def trace(
        self,
        events: Sequence[Event],
        final_state: Mapping[str, Mapping[str, Any]],
        *,
        initial_state: Mapping[str, Mapping[str, Any]],
        user_agent_events: Sequence[Event],
        case_name: str | None,
        artifacts: Mapping[str, types.Part],
    ) -> EvalTrace:
        """The run's trace: its events and states with what this record noted."""
        return EvalTrace(
            events=tuple(events),
            final_state=final_state,
            initial_state=initial_state,
            user_agent_events=tuple(user_agent_events),
            case_name=case_name,
            nested_events=tuple(self._nested),
            tool_sources=dict(self.sources),
            tool_errors=dict(self._raised),
            argument_problems=dict(self._problems),
            artifacts=artifacts,
        )
