"""The judge's query tools: read-only questions about the finished trace.

With ``sees=(..., "query")`` the judge's model is offered four function tools
instead of having everything pasted:

* ``get_state(key)``: one value of the final state (``"refund_issued"``, or a
  scoped key such as ``"user:tier"``);
* ``list_state_keys(start=1)``: the keys of the final state, `PAGE` at a time;
* ``list_tool_calls(name=None, start=1)``: the tool calls (of one tool),
  numbered, with what answered each, `PAGE` at a time;
* ``get_tool_call(index)``: one call in full: its arguments, its answer or
  what it raised, what answered it.

They answer from the trace alone: never the live session, never the agent's
tools. Each answer is a JSON copy, made when it is asked for (nothing the
model's client does with it reaches the trace), and bounded: a value, an
argument list or an answer over `ANSWER_LIMIT` characters of JSON comes as its
first characters and a marker; a list comes a page at a time with ``total`` and
the ``next`` start. A call the tools do not have, or arguments they do not
take, is answered with an ``error`` the model can read.

The judge asks in rounds (`ask_with_queries`): each reply's function calls are
answered and sent back, at most `rounds` times; a reply without calls is the
verdict. A judge still asking after the last round gives no verdict (an
invalid sample, said in the evidence).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._state import flatten_state
from .._trace import EvalTrace
from .._turns import parts_text
from ..models._gateway._ask import complete_parts
from ._judge_views import call_records

__all__ = ["ANSWER_LIMIT", "PAGE", "QUERY_INSTRUCTION", "TraceQueries", "ask_with_queries"]

ANSWER_LIMIT = 8000
"""Characters of JSON one value (a state value, a call's arguments, its answer) takes at most."""

PAGE = 100
"""Entries one list answer holds at most (``list_state_keys``, ``list_tool_calls``)."""

QUERY_INSTRUCTION = """
You may read the finished run with the tools get_state, list_state_keys,
list_tool_calls and get_tool_call before you answer. They only read; they change
nothing. When you know enough, reply with the JSON verdict and no tool call.
"""


def _copy(value: Any, limit: int | None = ANSWER_LIMIT) -> Any:
    """A JSON copy of `value` (what is not JSON as its repr); over `limit` characters, cut."""
    text = json.dumps(value, ensure_ascii=False, default=repr, sort_keys=True)
    if limit is None or len(text) <= limit:
        return json.loads(text)
    return text[:limit] + f"… [{len(text) - limit} more characters]"


def _number(value: Any) -> int:
    """A whole number as a model sends it (Gemini's numbers may arrive as ``2.0``)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"a whole number is needed, got {value!r}")
    return value


def _page(entries: list[Any], start: Any, what: str) -> dict[str, Any]:
    """Entries `start` (from 1) to ``start + PAGE - 1``, the total, and the next start."""
    first = _number(start)
    if first < 1:
        raise TypeError(f"start counts from 1, got {first}")
    answer = {what: entries[first - 1 : first - 1 + PAGE], "total": len(entries)}
    if first - 1 + PAGE < len(entries):
        answer["next"] = first + PAGE
    return answer


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
            A long value comes cut, with a marker saying how much more there is.
        """
        if isinstance(key, str) and key in self._state:
            return {"key": key, "found": True, "value": _copy(self._state[key])}
        return {"key": _copy(key), "found": False, "value": None}

    def list_state_keys(self, start: int = 1) -> dict[str, Any]:
        """The keys of the run's final state (scoped ones as ``scope:key``), sorted.

        Args:
            start: The first key's position, from 1 (when the answer says ``next``).

        Returns:
            ``{"keys": [...], "total"}``, at most 100 keys, and ``next``: the start
            of the keys after these, when there are more.
        """
        return _page(sorted(self._state), start, "keys")

    def list_tool_calls(self, name: str | None = None, start: int = 1) -> dict[str, Any]:
        """The run's tool calls in order, numbered from 1, nested ones included.

        Args:
            name: Only the calls of this tool (all calls when omitted).
            start: The first call's position in the list, from 1 (when the answer
                says ``next``).

        Returns:
            ``{"calls": [{"index", "tool", "agent", "answered_by"}, ...], "total"}``,
            at most 100 calls, and ``next`` when there are more; read one in full
            with get_tool_call(index).
        """
        keep = ("index", "tool", "agent", "answered_by")
        chosen = [c for c in self._calls if name is None or c["tool"] == name]
        return _page([{k: c[k] for k in keep} for c in chosen], start, "calls")

    def get_tool_call(self, index: int) -> dict[str, Any]:
        """One tool call in full: its arguments, its answer or what it raised, what answered it.

        Args:
            index: The call's number, as list_tool_calls gives it (from 1).
        """
        number = _number(index)
        if not 1 <= number <= len(self._calls):
            return {"error": f"no call #{number}: the run made {len(self._calls)} tool call(s)"}
        return {key: _copy(value) for key, value in self._calls[number - 1].items()}

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
            return dict(_copy(query(**dict(call.args or {})), limit=None))
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
