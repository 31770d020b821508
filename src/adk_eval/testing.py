"""Testing tools: `ScriptedLlm`, an offline ADK model, and event builders.

`ScriptedLlm` plays back a script of model turns (text, function calls, or
both). It picks the step from the request it receives (how many model turns the
request already holds), never from a counter of its own, so one instance can
serve many concurrent cases and sessions::

    model = ScriptedLlm([
        tool_call("read", {"policy_id": "chest_pain"}),
        ["Let me ask.", tool_call("ask", {"question": "When did it start?"})],
        "Please call 999 now.",
    ])
    agent = LlmAgent(name="clinician", model=model, tools=[read, ask])

For behaviour that depends on the request, pass ``responder=`` instead: a
function ``(request) -> step`` (sync or async).

It reports token usage estimated as characters / 4, so token accounting is
exercised offline; the numbers are not any real tokenizer's.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import AsyncGenerator, Callable, Sequence
from typing import Any, ClassVar

from google.adk.events import Event, EventActions
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import Field

from ._arguments import call_problems, declared_by, tool_problems
from ._callables import maybe_await
from ._errors import EvalSetupError, ScriptedCallError, ScriptExhaustedError
from ._quiet import quiet

__all__ = [
    "ScriptExhaustedError",
    "ScriptedCallError",
    "ScriptedLlm",
    "function_response_event",
    "model_turn_index",
    "state_event",
    "text_event",
    "tool_call",
    "tool_call_event",
    "user_event",
]

Step = Any
"""A script step: str (text), a `tool_call(...)` Part, a list of those (one turn
with several parts), an `LlmResponse` (used as is) or an exception (raised)."""


def tool_call(
    name: str, args: dict[str, Any] | None = None, *, id: str | None = None
) -> types.Part:
    """A function-call part for a script (ADK gives it an id if `id` is None)."""
    return types.Part(function_call=types.FunctionCall(name=name, args=args or {}, id=id))


def model_turn_index(request: LlmRequest) -> int:
    """How many model turns the request already holds (the index of the next step)."""
    return sum(1 for content in request.contents if content.role == "model")


def _estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / 4)


def _request_text(request: LlmRequest) -> str:
    pieces: list[str] = []
    instruction = request.config.system_instruction if request.config else None
    if isinstance(instruction, str):
        pieces.append(instruction)
    for content in request.contents:
        for part in content.parts or []:
            if part.text:
                pieces.append(part.text)
            elif part.function_call or part.function_response:
                pieces.append(part.model_dump_json(exclude_none=True))
    return "".join(pieces)


class ScriptedLlm(BaseLlm):
    """An offline `BaseLlm` that plays back scripted text and function calls.

    Args:
        steps: One entry per model turn (see `Step`).
        responder: ``(request) -> step`` (sync or async), instead of `steps`.
        latency: Seconds to wait before answering (simulates a slow model).
        model: The model name ADK sees and responses report. The default,
            ``gemini-scripted``, passes ADK's checks for Gemini's built-in tools
            (``google_search``, ``url_context``, Vertex AI Search), so an agent that
            has them runs offline; the script answers as the model would, having
            used them.
        check_calls: Check every scripted function call against the tools the
            request offers, as declared to the model: a call to a tool the agent
            does not have, or with an argument it does not declare, without one it
            requires, or of the wrong type raises `ScriptedCallError` at that step
            (the run ends in an ``error``). ``False`` sends calls as written, to
            test how an agent copes with a bad call.
    """

    adk_eval_offline: ClassVar[bool] = True
    """No provider answers it: the model-call gateway neither paces it nor waits for it."""

    steps: list[Any] = Field(default_factory=list)
    responder: Callable[[LlmRequest], Any] | None = None
    latency: float = 0.0
    check_calls: bool = True

    def __init__(
        self,
        steps: Sequence[Step] | None = None,
        *,
        responder: Callable[[LlmRequest], Any] | None = None,
        latency: float = 0.0,
        model: str = "gemini-scripted",
        check_calls: bool = True,
    ) -> None:
        if (steps is None) == (responder is None):
            raise EvalSetupError("ScriptedLlm needs exactly one of `steps` or `responder`")
        fields: dict[str, Any] = {"model": model, "check_calls": check_calls}
        fields.update(steps=list(steps or []), responder=responder, latency=latency)
        super().__init__(**fields)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Returns the step for this request as one response."""
        if self.latency:
            await asyncio.sleep(self.latency)
        step = await self._step_for(llm_request)
        if isinstance(step, BaseException):
            raise step
        response = (
            step
            if isinstance(step, LlmResponse)
            else LlmResponse(content=types.Content(role="model", parts=_parts(step)))
        )
        if self.check_calls:
            _check_calls(response, llm_request)
        if response.usage_metadata is None:
            prompt = _estimate_tokens(_request_text(llm_request))
            output = _estimate_tokens(
                "".join(
                    p.text or p.model_dump_json(exclude_none=True)
                    for p in (response.content.parts or [] if response.content else [])
                )
            )
            response.usage_metadata = types.GenerateContentResponseUsageMetadata(
                prompt_token_count=prompt,
                candidates_token_count=output,
                total_token_count=prompt + output,
            )
        if response.model_version is None:
            response.model_version = self.model
        yield response

    async def _step_for(self, request: LlmRequest) -> Step:
        if self.responder is not None:
            return await maybe_await(self.responder(request))
        index = model_turn_index(request)
        if index >= len(self.steps):
            raise _quieted(ScriptExhaustedError)(
                f"ScriptedLlm `{self.model}` has {len(self.steps)} steps but was asked for step "
                f"#{index + 1} (the request already holds {index} model turns). Add steps, or "
                "end the conversation sooner (a user agent STOP, max_turns, state_matches)."
            )
        return self.steps[index]


def _quieted(kind: type[Exception]) -> Callable[[str], Exception]:
    """Builds an error of `kind` that ADK does not log (the run's result reports it)."""

    def build(message: str) -> Exception:
        error = kind(message)
        quiet(error)
        return error

    return build


def _check_calls(response: LlmResponse, request: LlmRequest) -> None:
    """Raises `ScriptedCallError` for the first scripted call the request's tools refuse."""
    for part in response.content.parts or [] if response.content else []:
        call = part.function_call
        if call is None or call.name is None:
            continue
        tool = request.tools_dict.get(call.name)
        problems = tool_problems(call.name, request.tools_dict)
        signature = declared_by(tool) if tool is not None else None
        if signature is not None:
            problems = call_problems(signature, dict(call.args or {}))
        if not problems:
            continue
        lines = "\n".join(f"  - {problem}" for problem in problems)
        declaration = f"\n  declared: {signature.describe()}" if signature is not None else ""
        raise _quieted(ScriptedCallError)(
            f"ScriptedLlm step #{model_turn_index(request) + 1} calls `{call.name}` "
            f"as the agent cannot:\n{lines}{declaration}\n"
            "A script is test code: fix the call (or pass ScriptedLlm(..., "
            "check_calls=False) to send calls as written, to test how the agent copes)."
        )


def _parts(step: Step) -> list[types.Part]:
    items = step if isinstance(step, list | tuple) else [step]
    parts: list[types.Part] = []
    for item in items:
        if isinstance(item, str):
            parts.append(types.Part(text=item))
        elif isinstance(item, types.Part):
            parts.append(item)
        elif isinstance(item, dict):
            parts.append(types.Part(text=json.dumps(item)))
        else:
            raise EvalSetupError(
                "a ScriptedLlm step must be a str, dict, tool_call(...) Part, a list of those, "
                f"an LlmResponse or an exception, got {type(item).__name__}: {item!r}"
            )
    return parts


# -- event builders for tests (real ADK events, no mocks) ------------------------


def user_event(text: str, *, invocation_id: str = "inv-1") -> Event:
    """A user text message event."""
    return Event(
        author="user",
        invocation_id=invocation_id,
        content=types.Content(role="user", parts=[types.Part(text=text)]),
    )


def text_event(author: str, text: str, *, invocation_id: str = "inv-1") -> Event:
    """An agent text event."""
    return Event(
        author=author,
        invocation_id=invocation_id,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
    )


def tool_call_event(
    author: str,
    name: str,
    args: dict[str, Any] | None = None,
    *,
    call_id: str = "call-1",
    long_running: bool = False,
    invocation_id: str = "inv-1",
) -> Event:
    """An agent event holding one function call."""
    return Event(
        author=author,
        invocation_id=invocation_id,
        content=types.Content(role="model", parts=[tool_call(name, args, id=call_id)]),
        long_running_tool_ids={call_id} if long_running else set(),
    )


def function_response_event(
    author: str,
    name: str,
    response: dict[str, Any],
    *,
    call_id: str = "call-1",
    state_delta: dict[str, Any] | None = None,
    invocation_id: str = "inv-1",
) -> Event:
    """A function response event (as ADK builds it after a tool runs)."""
    return Event(
        author=author,
        invocation_id=invocation_id,
        content=types.Content(
            role="user",
            parts=[
                types.Part(
                    function_response=types.FunctionResponse(
                        id=call_id, name=name, response=response
                    )
                )
            ],
        ),
        actions=EventActions(state_delta=state_delta or {}),
    )


def state_event(state_delta: dict[str, Any], *, author: str = "user") -> Event:
    """A content-less event carrying a state delta."""
    return Event(
        author=author, invocation_id="inv-state", actions=EventActions(state_delta=state_delta)
    )
