"""Tool mocks: what answers a tool call instead of the real tool.

A `ToolMock` wraps an ``execute(args, ctx)`` callable (sync or async). `ctx` is
a deliberately small `MockToolContext`: the call's identifiers, scoped state,
and a clock the case can fix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeAlias

from ._callables import call_user
from ._state import ScopedState

__all__ = ["Clock", "MockToolContext", "ToolMock"]

Clock: TypeAlias = Callable[[], datetime]
"""A function returning the current time; `EvalCase.clock` may fix it."""

MockExecute: TypeAlias = Callable[[dict[str, Any], "MockToolContext"], Any]


def _system_clock() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class MockToolContext:
    """What a mock may know about the call it answers.

    Attributes:
        call_id: The function call id (``adk-...`` when the model gave none).
        tool_name: Name of the tool being called.
        invocation_id: The ADK invocation the call belongs to.
        agent_name: Name of the agent that made the call.
        state: Scoped read/write access to the calling session's state; writes
            land in the tool response's state delta, like a real tool's.
    """

    call_id: str
    tool_name: str
    invocation_id: str
    agent_name: str
    state: ScopedState
    _clock: Clock = field(default=_system_clock, repr=False)

    def now(self) -> datetime:
        """Returns the current time from the case's clock (timezone-aware)."""
        return self._clock()


@dataclass(frozen=True)
class ToolMock:
    """Answers calls to a tool instead of running it.

    Example:
        ``ToolMock(lambda args, ctx: {"sent": True, "id": "mock-123"})``

    Attributes:
        execute: ``execute(args, ctx)``, sync or async, returning the tool result.
            A dict is the function response as is; anything else is wrapped as
            ``{"result": value}`` (ADK's own convention). Raising stops the run
            with an ``error`` result, like a real tool that raises.
    """

    execute: MockExecute

    def __post_init__(self) -> None:
        if not callable(self.execute):
            raise TypeError(
                f"ToolMock(execute) needs a callable `execute(args, ctx)`, got {self.execute!r}; "
                f"for a fixed answer use ToolMock.returning({self.execute!r})"
            )

    @classmethod
    def returning(cls, value: Any) -> ToolMock:
        """A mock that always answers `value`."""
        return cls(lambda args, ctx: value)

    @classmethod
    def raising(cls, error: BaseException) -> ToolMock:
        """A mock that always raises `error` (the run stops with an ``error`` result)."""

        def _raise(args: dict[str, Any], ctx: MockToolContext) -> Any:
            raise error

        return cls(_raise)

    async def call(self, args: dict[str, Any], ctx: MockToolContext) -> Any:
        """Runs `execute`, awaiting it if it is async."""
        return await call_user(self.execute, args, ctx)


def normalize_response(value: Any) -> dict[str, Any]:
    """Makes any tool result a FunctionResponse dict, the way ADK does."""
    if isinstance(value, dict):
        return value
    return {"result": value}
