"""`InterceptionPlugin`: the ADK plugin that applies a `ToolPolicy` to every tool call.

Only a tool's *body* is replaced: before every model call the plugin swaps each
tool that must not run for real for a copy whose body is the mock, the pause of
a tool a user agent answers, or the stop of a call the case does not allow.
ADK runs everything around the copy as around the real tool (see
`InterceptionPlugin`). The plugin also keeps the events of agents that run
inside `AgentTool` calls, for the trace.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from typing import Any

import anyio
from google.adk.agents.callback_context import CallbackContext
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from .._callables import being_cancelled
from .._errors import EvalToolError, SimulatedToolError
from .._model_check import CALLING_TOOL
from .._sandbox._scope import CURRENT
from ._answers import MockCalls
from ._bodies import (
    TOOL_ERROR_CODE,
    ToolBody,
    confirmation_gate,
    nested_pause_refusal,
    pause,
    replaced_tool,
    tool_refusal,
    with_body,
)
from ._direct import DIRECT, guarded, refusal
from ._mocks import ToolMock
from ._policy import ToolPolicy, is_control_tool, is_framework_tool
from ._record import RunRecord
from ._rejections import adk_rejection
from ._tree import refuses_code_execution
from ._watch import Watch

__all__ = ["PLUGIN_NAME", "TOOL_ERROR_CODE", "InterceptionPlugin", "outside_tool_calls"]

PLUGIN_NAME = "adk_eval_interception"

_INSIDE: contextvars.ContextVar[tuple[tuple[str, str], ...]] = contextvars.ContextVar(
    "adk_eval_inside_tool_calls", default=()
)
"""The tool calls (name, call id) the current code runs inside, outermost first: the
events of agents they run (`AgentTool`s, agents a tool builds) are nested under them.

ADK runs each tool call in a task of its own with a copy of the context, so a
value set in ``before_tool_callback`` reaches exactly what that call runs.
"""


@contextmanager
def outside_tool_calls() -> Iterator[None]:
    """Runs its code inside no tool call: the events of the agents it runs are not nested.

    For a `RemoteMock.local` agent's own runner: its `RemoteA2aAgent` relays its
    events already (nested, behind an `AgentTool`), so its own copies are not kept.
    """
    token = _INSIDE.set(())
    try:
        yield
    finally:
        _INSIDE.reset(token)


class InterceptionPlugin(BasePlugin):
    """ADK plugin that applies a `ToolPolicy` to every tool call of the system agent.

    Only a tool's *body* is replaced. Before every model call it swaps, in the
    request's tools, each tool the policy does not let run for real for a copy
    whose body answers with the mock, pauses (a tool a user agent answers), or
    records the call as not allowed. ADK then runs everything else around the
    copy as it would around the real tool: the agent's own before-tool callbacks
    first (their answer wins), the confirmation gate, the error callbacks, the
    after-tool callbacks. A call the policy does not allow ends the run with an
    error event (`TOOL_ERROR_CODE`) rather than an exception, so ADK logs no
    traceback for it; `EvalRunner.run_async` raises the recorded `EvalToolError`.

    Calls whose tool was not swapped (ADK replays calls of a resumed invocation
    without a model call) are decided in ``before_tool_callback``, the same way.
    """

    def __init__(
        self,
        policy: ToolPolicy,
        record: RunRecord,
        watch: Watch,
        mock_calls: MockCalls,
        sessions: BaseSessionService,
    ) -> None:
        super().__init__(name=PLUGIN_NAME)
        self._policy = policy
        self._record = record
        self._watch = watch
        self._mock_calls = mock_calls
        self._sessions = sessions
        """The main sessions' service: an invocation on another is a nested runner's."""

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Ends the run after a call that is not allowed; else swaps the tools' bodies."""
        self._record.offered[callback_context.agent_name] = list(llm_request.tools_dict)
        if (stopped := self._watch.stop_response()) is not None:  # an invariant was broken
            return stopped
        if self._record.violation is None:  # an agent the set-up walk could not see, say
            agent = callback_context.get_invocation_context().agent
            if (problem := refuses_code_execution(agent)) is not None:
                error = EvalToolError("code execution", {}, detail=problem, kind="agent")
                self._record.violate(error)
        if (violation := self._record.violation) is not None:
            return LlmResponse(
                error_code=TOOL_ERROR_CODE, error_message=violation.summary, turn_complete=True
            )
        for name, tool in list(llm_request.tools_dict.items()):
            body = self._body(tool)
            if body is not None:
                guarded(tool)  # its own object too, for code that calls it directly
                llm_request.tools_dict[name] = with_body(tool, body)
        return None

    def _body(self, tool: BaseTool) -> ToolBody | None:
        """What runs instead of `tool`'s body (None: the real tool runs)."""
        policy = self._policy
        if replaced_tool(tool) is not None:
            return None
        if is_framework_tool(tool) and not is_control_tool(tool):
            return None  # a name the agent has no tool by: ADK answers "not found", no mock does
        mock = policy.mocks.get(tool.name)
        if mock is not None:
            if mock.real_tool is not None and not policy.passthrough[tool.name].allows(tool):
                return partial(self._refuse, tool, shared=True)
            return partial(self._run_mock, mock, tool)
        provided = policy.passthrough.get(tool.name)
        if provided is not None:
            return None if provided.allows(tool) else partial(self._refuse, tool, shared=True)
        if is_framework_tool(tool):
            return None
        if tool.is_long_running:
            return pause
        if policy.simulate_unmocked is not None:
            return partial(self._run_mock, policy.simulate_unmocked, tool)
        return partial(self._refuse, tool)

    async def before_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
    ) -> dict[str, Any] | None:
        """Lets a swapped tool through to ADK; decides a call whose tool was not swapped."""
        CALLING_TOOL.set((tool.name, tool_context.agent_name))  # for agents its body builds
        DIRECT.set(self._direct)  # for tools its body calls itself
        _INSIDE.set((*_INSIDE.get(), (tool.name, tool_context.function_call_id or "")))
        original = replaced_tool(tool)
        self._record.arguments(original or tool, tool_args, tool_context.function_call_id)
        body = self._body(original or tool)
        if body is None or body is pause:  # it runs for real, or pauses: it happens now
            stopped = self._admit(tool.name, tool_args, tool_context)
            if stopped is not None:
                return stopped
        if original is not None:
            if original.name not in self._policy.mocks:
                self._refuse_nested_pause(original, tool_args, tool_context)
            return None
        if body is None:
            if tool_context.function_call_id and not isinstance(tool, AgentTool):
                self._record.sources[tool_context.function_call_id] = "real"  # it may run agents
            self._refuse_nested_pause(tool, tool_args, tool_context)
            if adk_rejection(tool, tool_args) is not None and tool_context.function_call_id:
                self._record.sources[tool_context.function_call_id] = "rejected"  # by ADK's tool
            return None
        if body is pause:
            self._refuse_nested_pause(tool, tool_args, tool_context)
            return {}  # `{}` skips the function and, being falsy, keeps ADK's pause.
        gate = await confirmation_gate(tool, tool_args, tool_context)
        if gate is not None:
            return gate
        response = await body(args=tool_args, tool_context=tool_context)
        return response if response is not None else {"result": None}  # None: not answered

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: dict[str, Any],
    ) -> dict[str, Any] | None:
        """Notes a swapped call whose body never ran: a callback answered it instead."""
        self._watch.answer(tool.name, tool_args, tool_context, result)
        call_id = tool_context.function_call_id
        original = replaced_tool(tool)
        if not call_id or call_id in self._record.sources or original is None:
            return None
        paused = original.is_long_running and tool.name not in self._policy.mocks
        if not paused:  # a pause is answered by a user agent, later
            self._record.sources[call_id] = "callback"
        return None

    async def on_tool_error_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        error: Exception,
    ) -> dict[str, Any] | None:
        """Notes a call to a tool the agent does not have (ADK answers the model itself)."""
        self._watch.answer(tool.name, tool_args, tool_context, error=error)
        call_id = tool_context.function_call_id
        self._record.unknown_tool(tool, error, tool_context.agent_name, call_id)
        return None

    def _admit(
        self, name: str, args: dict[str, Any], tool_context: ToolContext
    ) -> dict[str, Any] | None:
        """None lets a call reach its tool; else the answer that stops it there.

        Calls reach this point one at a time, a model turn's parallel calls too.
        Once the run is stopping (an invariant broke, a call or the strict
        sandbox refused), every later call is refused, its turn's included.
        """
        reason = self._stopping()
        if reason is None:
            return self._watch.call(name, args, tool_context, self._record.sources)
        if tool_context.function_call_id:
            self._record.sources[tool_context.function_call_id] = "stopped"
        tool_context.actions.skip_summarization = True
        return {"error": f"adk_eval stopped the run before this call: {reason}"}

    def _direct(
        self, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> EvalToolError | None:
        """A direct call to `tool`'s own object (see `guarded`): None lets it run."""
        if self._body(tool) is None:
            return None
        inside = _INSIDE.get()
        return self._record.violate(refusal(tool, args, inside[-1][0] if inside else None))

    def _stopping(self) -> str | None:
        """Why the run is stopping (None while it goes on)."""
        scope = CURRENT.get()
        if self._watch.stop is not None:
            return self._watch.stop.line
        if self._record.violation is not None:
            return self._record.violation.summary
        return scope.violation.line() if scope is not None and scope.violation else None

    def _refuse_nested_pause(
        self, tool: BaseTool, tool_args: dict[str, Any], tool_context: ToolContext
    ) -> None:
        nested = tool_context._invocation_context.session_service is not self._sessions
        if tool.is_long_running and nested:
            raise nested_pause_refusal(tool, tool_args, tool_context.agent_name)

    async def on_event_callback(
        self, *, invocation_context: InvocationContext, event: Event
    ) -> Event | None:
        """Keeps the events of agents inside `AgentTool` calls (they have their own session)."""
        main = invocation_context.session_service is self._sessions
        self._watch.event(invocation_context, event, main=main)
        inside = _INSIDE.get()
        if inside and not main:
            path = tuple(name for name, _ in inside)
            self._record.nest(path, tuple(call_id for _, call_id in inside), event)
        return None

    async def _refuse(
        self,
        tool: BaseTool,
        *,
        args: dict[str, Any],
        tool_context: ToolContext,
        shared: bool = False,
    ) -> dict[str, Any]:
        """Records a call the case does not allow; the run stops before the next model call."""
        policy = self._policy
        stopped = self._admit(tool.name, args, tool_context) if self._stopping() else None
        if stopped is not None:  # one more call the stopping run never made
            return stopped
        outer = [name for name, _ in _INSIDE.get()[:-1]]  # the calls this one runs inside
        inside = outer[-1] if outer else None
        caller = policy.describe_agent(tool_context.agent_name, tool.name, inside)
        misspelt = policy.misspelt_mock(tool.name)
        error = self._record.violate(
            tool_refusal(tool, args, caller, shared=shared, misspelt=misspelt)
        )
        tool_context.actions.skip_summarization = True
        if tool_context.function_call_id:
            self._record.sources[tool_context.function_call_id] = "refused"
        return {"error": f"adk_eval stopped the run: {error.summary}"}

    async def _run_mock(
        self,
        mock: ToolMock,
        tool: BaseTool,
        *,
        args: dict[str, Any],
        tool_context: ToolContext,
    ) -> Any:
        rejection = adk_rejection(tool, args) if mock.real_tool is None else None
        if rejection is not None:  # ADK's function tool would not run for these arguments
            if tool_context.function_call_id:
                self._record.sources[tool_context.function_call_id] = "rejected"
            return rejection
        stopped = self._admit(tool.name, args, tool_context)
        if stopped is not None:  # the run stops, or an invariant forbids it: no body runs
            return stopped
        source, answer = self._mock_calls.start(mock, tool, args, tool_context)
        if tool_context.function_call_id:  # before it answers: an answer that raises is its own
            self._record.sources[tool_context.function_call_id] = source
        try:
            value = await answer()
        except SimulatedToolError as error:  # stop the run, whatever the agent's callbacks do
            self._record.violate(EvalToolError(tool.name, args, detail=str(error)))
            tool_context.actions.skip_summarization = True
            return {"error": f"adk_eval stopped the run: {error}"}
        except Exception as error:  # ADK hands it to the error callbacks, as a tool's
            if source != "real":  # the result reports it: ADK need not log it too
                self._record.mock_raised(error, tool.name, args, tool_context.function_call_id)
            raise
        except anyio.get_cancelled_exc_class() as error:
            if being_cancelled():  # the run itself is cancelled (max_duration, Ctrl-C)
                raise
            # raised by the mock itself: ADK would end the run quietly, and it would pass
            detail = f"The mock for tool `{tool.name}` raised {type(error).__name__}"
            self._record.violate(EvalToolError(tool.name, args, detail=detail))
            tool_context.actions.skip_summarization = True
            return {"error": f"adk_eval stopped the run: {detail}"}
        interim = tool.name in self._policy.interim
        return self._mock_calls.keep(tool, args, value, source, interim=interim)
