"""What answers a mocked call: an injected fault, a simulating model, the real tool or the mock.

Faults (`ToolMock.with_faults`) are decided first, from the run's seed; the
tool's answer may then carry an injected payload (`ToolMock.with_injection`).
`MockCalls` keeps what a run's mocked calls need across calls: how often each
call came, and each tool's earlier answers.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext

from .._state import ScopedState
from ._clock import CaseClock
from ._context import MockToolContext
from ._direct import unguarded
from ._faults import call_key
from ._injection import Injection
from ._mcp import answers_as_mcp, mcp_result
from ._mocks import ToolMock, normalize_response

__all__ = ["MockCalls", "answerer"]


@dataclass
class MockCalls:
    """A run's mocked calls: their occurrences and earlier answers, its seed and clock."""

    seed: int
    attempt: int
    clock: CaseClock
    _occurrences: Counter[tuple[str, str]] = field(default_factory=Counter)
    _answers: dict[str, list[tuple[dict[str, Any], Any]]] = field(default_factory=dict)

    def start(
        self, mock: ToolMock, tool: BaseTool, args: dict[str, Any], tool_context: ToolContext
    ) -> tuple[str, Callable[[], Awaitable[Any]]]:
        """What answers this call (see `answerer`): its source and the coroutine to await."""
        key = (tool.name, call_key(args))
        occurrence = self._occurrences[key]
        self._occurrences[key] += 1
        ctx = MockToolContext(
            call_id=tool_context.function_call_id or "",
            tool_name=tool.name,
            invocation_id=tool_context.invocation_id,
            agent_name=tool_context.agent_name,
            state=ScopedState(tool_context.state),
            occurrence=occurrence,
            _clock=self.clock,
            _tool_context=tool_context,
        )
        earlier = self._answers.get(tool.name, [])
        return answerer(
            mock,
            tool,
            args,
            tool_context,
            ctx,
            seed=self.seed,
            attempt=self.attempt,
            clock=self.clock,
            earlier=earlier,
        )

    def keep(
        self, tool: BaseTool, args: dict[str, Any], value: Any, source: str, *, interim: bool
    ) -> Any:
        """The call's answer as the tool would give it, kept as one of its earlier answers.

        A value that is not a dict goes to ADK as it is, as a real tool's does:
        the agent's after-tool callbacks see ``7``, and ADK makes it
        ``{"result": 7}`` in the event. An MCP tool's answer goes as `McpTool`
        gives it, a ``CallToolResult`` (`_mcp`). `interim`: a long-running tool
        whose empty answer is an interim one (a user agent gives the final,
        `ToolPolicy.interim`).
        """
        if source == "mock":  # each call its own answer: an edit by a callback stays in it
            value = copy.deepcopy(value)
        self._answers.setdefault(tool.name, []).append((dict(args), normalize_response(value)))
        if answers_as_mcp(tool):
            return mcp_result(value)
        if tool.is_long_running and not value and not interim:
            return {"result": value}  # an empty answer would keep ADK's pause
        return value


def answerer(
    mock: ToolMock,
    tool: BaseTool,
    args: dict[str, Any],
    tool_context: ToolContext,
    ctx: MockToolContext,
    *,
    seed: int,
    attempt: int,
    clock: CaseClock,
    earlier: list[tuple[dict[str, Any], Any]],
) -> tuple[str, Callable[[], Awaitable[Any]]]:
    """What answers one call of `mock`'s tool, and how it is called.

    Args:
        mock: The tool's mock.
        tool: The tool called.
        args: The call's arguments.
        tool_context: ADK's context of the call.
        ctx: The mock's context of the call (its occurrence, the case clock).
        seed: The run's seed.
        attempt: The run's attempt.
        clock: The case clock (injected latency advances it).
        earlier: The tool's earlier calls and answers in this run (a simulating
            model keeps its answers consistent with them).

    Returns:
        The answer's source (``fault``, ``simulated``, ``real``, ``mock``) and a
        coroutine function giving the answer.
    """
    faults = mock.faults
    if faults is not None:
        decision = faults.decide(seed, attempt, tool.name, args, ctx.occurrence)
        clock.advance(decision.latency)
        if decision.fault == "error":
            return "fault", partial(_now, faults.error_answer, tool.name)
        if decision.fault == "timeout":
            return "fault", partial(_now, faults.timeout_answer, tool.name)
    source, answer = _answer(mock, tool, args, tool_context, ctx, earlier)
    injection = mock.injection
    if injection is None:
        return source, answer
    where = {"run_seed": seed, "attempt": attempt, "tool": tool.name, "args": args}
    return source, partial(_poisoned, answer, injection, where, ctx.occurrence)


def _answer(
    mock: ToolMock,
    tool: BaseTool,
    args: dict[str, Any],
    tool_context: ToolContext,
    ctx: MockToolContext,
    earlier: list[tuple[dict[str, Any], Any]],
) -> tuple[str, Callable[[], Awaitable[Any]]]:
    if mock.simulator is not None:
        simulator = mock.simulator
        return "simulated", partial(simulator.answer, tool, args, ctx.state.to_dict(), earlier)
    if mock.real_tool is not None:
        return "real", partial(unguarded(tool), args=args, tool_context=tool_context)
    return "mock", partial(mock.call, dict(args), ctx)


async def _poisoned(
    answer: Callable[[], Awaitable[Any]],
    injection: Injection,
    where: dict[str, Any],
    occurrence: int,
) -> Any:
    """The tool's answer, with a payload when this call's draw says so."""
    return injection.poison(await answer(), occurrence=occurrence, **where)


async def _now(answer: Callable[[str], Any], tool: str) -> Any:
    """An injected fault's answer (or its exception), awaited like any other answer."""
    return answer(tool)
