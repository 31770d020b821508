"""Answering one MCP tool call from the served mocks: default-deny, each call logged.

A call to a tool that is not served is refused, loudly: the answer is an error
result naming the tool and the tools served, never a made-up answer. A call
whose arguments do not fit the tool's schema is refused the same way. A served
tool's call is answered as a case's mocked call is (`_tools._answers`): seeded
faults first, then the mock (or the simulating model), then any injection;
a mock that raises gives an error result naming the exception. The result is
the one a `ToolsetMock` standing in for an `McpToolset` gives the model in
process (`_tools._mcp`): the same value reads the same either way.

A `Conversation` is what one MCP connection keeps across its calls: how often
each call came (a recording's n-th answer, a fault's draw), each tool's earlier
answers (a simulating model stays consistent with them), the state mocks
write with ``ctx.state``, and the session its calls are logged in.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema
from google.adk.sessions import Session

from .._state import ScopedState
from .._tools._answers import answerer
from .._tools._clock import CaseClock
from .._tools._context import MockToolContext
from .._tools._faults import call_key
from .._tools._mcp import mcp_error, mcp_result
from .._tools._mocks import normalize_response
from ._declared import ServedTool
from ._log import LoggedCall

__all__ = ["Answer", "Conversation", "answer_call"]


@dataclass
class Conversation:
    """What one MCP connection keeps across its calls (see the module doc)."""

    client: str
    session: Session | None = None
    """Its session in the call log (None: no log, or not opened yet)."""
    state: dict[str, Any] = field(default_factory=dict)
    clock: CaseClock = field(default_factory=CaseClock)
    occurrences: Counter[tuple[str, str]] = field(default_factory=Counter)
    earlier: dict[str, list[tuple[dict[str, Any], Any]]] = field(default_factory=dict)
    calls: int = 0

    def context(self, tool: str, args: dict[str, Any], call_id: str) -> MockToolContext:
        """A mock's context for a call, which is counted: its occurrence is how often it came."""
        key = (tool, call_key(args))
        occurrence = self.occurrences[key]
        self.occurrences[key] += 1
        return MockToolContext(
            call_id=call_id,
            tool_name=tool,
            invocation_id=call_id,
            agent_name=self.client,
            state=ScopedState(self.state),
            occurrence=occurrence,
            _clock=self.clock,
        )


@dataclass(frozen=True)
class Answer:
    """One call's answer: the ``CallToolResult`` sent back (as ADK dumps it), the call as logged."""

    result: dict[str, Any]
    call: LoggedCall

    @property
    def text(self) -> str:
        """The text of its first text content ("" when it has none)."""
        texts = [block.get("text") for block in self.result["content"] if "text" in block]
        return str(texts[0]) if texts else ""

    @property
    def structured(self) -> Any:
        """Its structured content (None when it has none)."""
        return self.result.get("structuredContent")

    @property
    def is_error(self) -> bool:
        """Whether it is an error result."""
        return bool(self.result.get("isError"))


def _refused(call_id: str, tool: str, args: dict[str, Any], why: str) -> Answer:
    call = LoggedCall(call_id, tool, args, {"error": why}, error=why, answered_by="refused")
    return Answer(mcp_error(why), call)


def _refusal(served: Mapping[str, ServedTool], tool: str, args: dict[str, Any]) -> str | None:
    """Why a call is refused (a tool not served, arguments that do not fit), or None."""
    target = served.get(tool)
    if target is None:
        names = ", ".join(f"`{name}`" for name in served) or "none"
        return (
            f"unknown tool `{tool}`: this mock MCP server serves only {names}. It answers no "
            "tool it does not declare; declare and mock it in the tools file to serve it."
        )
    return _unfit(target, args)


def _unfit(served: ServedTool, args: dict[str, Any]) -> str | None:
    """Why `args` do not fit the tool's input schema, or None when they do."""
    try:
        jsonschema.validate(args, served.input_schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the arguments"
        return f"the arguments of `{served.name}` do not fit its schema: {where}: {error.message}"
    except jsonschema.SchemaError:  # the declared schema itself is broken: do not check
        return None
    return None


async def answer_call(
    served: Mapping[str, ServedTool],
    conversation: Conversation,
    tool: str,
    args: dict[str, Any],
    *,
    call_id: str,
    seed: int,
) -> Answer:
    """The answer to one ``tools/call`` (see the module doc).

    Args:
        served: The served tools, by name.
        conversation: The connection the call came on.
        tool: The tool's name as called.
        args: The call's arguments.
        call_id: The call's id (logged with it).
        seed: The server's seed (faults and injections are drawn from it).
    """
    why = _refusal(served, tool, args)
    if why is not None:
        return _refused(call_id, tool, args, why)
    target = served[tool]
    earlier = conversation.earlier.setdefault(tool, [])
    ctx = conversation.context(tool, args, call_id)
    no_adk_context: Any = None  # the mock, a fault or a simulating model answers: none reads it
    source, answer = answerer(
        target.mock,
        target.tool,
        args,
        no_adk_context,
        ctx,
        seed=seed,
        attempt=0,
        clock=conversation.clock,
        earlier=earlier,
    )
    try:
        value = await answer()
    except Exception as error:
        why = f"`{tool}` raised {type(error).__name__}: {error}"
        return _refused(call_id, tool, args, why)
    response = normalize_response(value)
    earlier.append((dict(args), response))
    call = LoggedCall(call_id, tool, args, response, answered_by=source)
    return Answer(mcp_result(value), call)
