"""The judge's query tools: read-only questions about the finished trace.

With ``sees=(..., "query")`` the judge's model is offered four function tools
instead of having everything pasted:

* ``get_state(key)``: one value of the final state (``"refund_issued"``, or a
  scoped key such as ``"user:tier"``);
* ``list_state_keys()``: every key of the final state;
* ``list_tool_calls(name=None)``: every tool call (of one tool), numbered, with
  what answered it;
* ``get_tool_call(index)``: one call in full: its arguments, its answer or
  what it raised, what answered it.

They answer from the trace alone: never the live session, never the agent's
tools. The judge asks in rounds (`ask_with_queries`): each reply's function
calls are answered and sent back, at most `rounds` times; a reply without calls
is the verdict. A judge still asking after the last round gives no verdict (an
invalid sample, said in the evidence).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._state import flatten_state
from .._trace import EvalTrace
from .._turns import parts_text
from ..models._calls import complete_parts
from ._judge_views import call_records

__all__ = ["QUERY_INSTRUCTION", "TraceQueries", "ask_with_queries"]

QUERY_INSTRUCTION = """
You may read the finished run with the tools get_state, list_state_keys,
list_tool_calls and get_tool_call before you answer. They only read; they change
nothing. When you know enough, reply with the JSON verdict and no tool call.
"""


class TraceQueries:
    """The answers to a judge's queries about one trace (see the module doc)."""

    def __init__(self, trace: EvalTrace) -> None:
        self._state = flatten_state(trace.final_state, what="final_state", deep_copy=False)
        self._calls = call_records(trace)

    def get_state(self, key: str) -> dict[str, Any]:
        """One value of the run's final state.

        Args:
            key: The state key, as the agent wrote it: ``refund_issued``, or with
                its scope, ``user:tier``.

        Returns:
            ``{"key", "found", "value"}``; ``found`` is false when the key is not set.
        """
        if key in self._state:
            return {"key": key, "found": True, "value": self._state[key]}
        return {"key": key, "found": False, "value": None}

    def list_state_keys(self) -> dict[str, Any]:
        """Every key of the run's final state (scoped ones as ``scope:key``)."""
        return {"keys": sorted(self._state)}

    def list_tool_calls(self, name: str | None = None) -> dict[str, Any]:
        """The run's tool calls in order, numbered from 1, nested ones included.

        Args:
            name: Only the calls of this tool (all calls when omitted).

        Returns:
            ``{"calls": [{"index", "tool", "agent", "answered_by"}, ...]}``; read one
            in full with get_tool_call(index).
        """
        keep = ("index", "tool", "agent", "answered_by")
        chosen = [c for c in self._calls if name is None or c["tool"] == name]
        return {"calls": [{k: c[k] for k in keep} for c in chosen]}

    def get_tool_call(self, index: int) -> dict[str, Any]:
        """One tool call in full: its arguments, its answer or what it raised, what answered it.

        Args:
            index: The call's number, as list_tool_calls gives it (from 1).
        """
        if not 1 <= index <= len(self._calls):
            return {"error": f"no call #{index}: the run made {len(self._calls)} tool call(s)"}
        return self._calls[index - 1]

    def tools(self) -> list[Any]:
        """The queries as ADK function tools (their declarations are what the model sees)."""
        from google.adk.tools.function_tool import FunctionTool

        return [FunctionTool(query) for query in self._queries().values()]

    def answer(self, call: types.FunctionCall) -> dict[str, Any]:
        """The answer to one of the model's function calls (an error for a bad one)."""
        queries = self._queries()
        query = queries.get(call.name or "")
        if query is None:
            known = ", ".join(queries)
            return {"error": f"there is no tool `{call.name}`; the tools are {known}"}
        try:
            return query(**dict(call.args or {}))
        except TypeError as error:  # arguments that do not fit the declaration
            return {"error": f"`{call.name}` cannot take {dict(call.args or {})!r}: {error}"}

    def _queries(self) -> dict[str, Callable[..., dict[str, Any]]]:
        return {
            "get_state": self.get_state,
            "list_state_keys": self.list_state_keys,
            "list_tool_calls": self.list_tool_calls,
            "get_tool_call": self.get_tool_call,
        }


async def ask_with_queries(
    llm: BaseLlm, request: LlmRequest, queries: TraceQueries, rounds: int
) -> str:
    """The judge's reply after at most `rounds` rounds of queries (see the module doc).

    `request` is not changed: the tools and each round's calls and answers go
    into a copy of it.
    """
    request = request.model_copy(deep=True)
    request.append_tools(queries.tools())
    asked: list[str] = []
    for round_ in range(rounds + 1):
        parts = await complete_parts(llm, request)
        calls = [part.function_call for part in parts if part.function_call is not None]
        if not calls:
            return parts_text(parts)
        asked += [call.name or "" for call in calls]
        if round_ == rounds:
            break
        answers = [
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id, name=call.name, response=queries.answer(call)
                )
            )
            for call in calls
        ]
        request.contents.append(types.Content(role="model", parts=parts))
        request.contents.append(types.Content(role="user", parts=answers))
    return f"(no verdict: the judge was still querying after {rounds} rounds: {', '.join(asked)})"
