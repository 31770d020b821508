"""The typed items of a trace: tool calls and responses, messages, state changes, errors.

Also `NestedEvent` (an event of an agent that ran inside an `AgentTool` call)
and `TokenUsage` (tokens summed over model events).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias

from google.adk.events import Event

__all__ = [
    "ErrorEntry",
    "Message",
    "NestedEvent",
    "StateChange",
    "TokenUsage",
    "ToolCall",
    "ToolResponse",
    "TraceEventType",
    "TraceItem",
]

TraceEventType: TypeAlias = Literal[
    "tool_call", "tool_response", "user_message", "agent_message", "state_change", "error"
]
"""The kinds of items a trace holds (what `event_count_metric` counts)."""


@dataclass(frozen=True)
class ToolCall:
    """A function call the agent made, with the response it got (if any).

    Attributes:
        name: Tool name.
        args: Call arguments.
        call_id: Function call id.
        author: The agent that made the call.
        invocation_id: ADK invocation of the call.
        response: The matching function response, or None if it never came.
        long_running: Whether the call was long-running (a tool yield).
        path: The `AgentTool` calls the item was made inside, outermost first
            (empty for the conversation itself).
        event: The ADK event holding the call.
    """

    name: str
    args: dict[str, Any]
    call_id: str | None
    author: str
    invocation_id: str
    response: dict[str, Any] | None
    long_running: bool
    event: Event = field(repr=False, compare=False)
    path: tuple[str, ...] = ()

    @property
    def error(self) -> Any:
        """The ``error`` entry of the response, if the tool reported one."""
        return (self.response or {}).get("error")


@dataclass(frozen=True)
class ToolResponse:
    """A function response (from a tool, a mock, or a user agent answering a yield)."""

    name: str
    call_id: str | None
    response: dict[str, Any]
    author: str
    event: Event = field(repr=False, compare=False)
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class Message:
    """Text from the user (``role="user"``) or an agent (``role="agent"``)."""

    role: Literal["user", "agent"]
    author: str
    text: str
    event: Event = field(repr=False, compare=False)
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class StateChange:
    """A state delta recorded on an event (by a tool, or by adk_eval for a user agent)."""

    delta: dict[str, Any]
    author: str
    event: Event = field(repr=False, compare=False)
    path: tuple[str, ...] = ()


@dataclass(frozen=True)
class ErrorEntry:
    """An ADK error event (a failed model call, tool or node)."""

    code: str
    message: str | None
    author: str
    event: Event = field(repr=False, compare=False)
    path: tuple[str, ...] = ()


TraceItem: TypeAlias = ToolCall | ToolResponse | Message | StateChange | ErrorEntry


@dataclass(frozen=True)
class NestedEvent:
    """An event of an agent that ran inside an `AgentTool` call (its own session).

    Attributes:
        path: The names of the `AgentTool`s it ran inside, outermost first.
        call_ids: The function call ids of those `AgentTool` calls, in the same order.
        event: The ADK event.
    """

    path: tuple[str, ...]
    call_ids: tuple[str, ...]
    event: Event


@dataclass(frozen=True)
class TokenUsage:
    """Tokens counted from the events' usage metadata."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: TokenUsage) -> TokenUsage:
        return TokenUsage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.total_tokens + other.total_tokens,
        )

    @classmethod
    def from_events(cls, events: Iterable[Event]) -> TokenUsage:
        """Sums `usage_metadata` over model events."""
        total = cls()
        for event in events:
            usage = event.usage_metadata
            if usage is None:
                continue
            prompt = usage.prompt_token_count or 0
            output = usage.candidates_token_count or 0
            total += cls(prompt, output, usage.total_token_count or prompt + output)
        return total
