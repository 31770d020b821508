"""The parts of a shadow replay that stand in for the recorded world: tools, user, person.

A `Replay` holds what they share during one run: the `Recording`, the model that
plays the user once the conversation diverges, and where it diverged.

* `recorded_tool`: a tool's mock, answering a call with the recorded response of
  the same call, and making the state change recorded with it (so an
  `AgentTool` whose agent has an ``output_key`` writes it again); any other
  call is the divergence.
* `recorded_yield_answers`: a person's recorded answers to tool yields.
* `recorded_user`: the recorded user turns, then (diverged, with a model) that model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from google.adk.models.base_llm import BaseLlm

from .._errors import ShadowDivergenceError
from .._state import scoped_view
from .._user_agents import STOP, STOP_SIGNAL, ScriptContext
from ._recording import Recording, call_key

__all__ = ["Replay", "recorded_tool", "recorded_user", "recorded_yield_answers"]


@dataclass
class Replay:
    """What the mocks and the scripted user share during one shadow run."""

    recording: Recording
    continue_with: BaseLlm | None
    diverged: str | None = None
    diverged_at_turn: int | None = None
    continued: list[str] = field(default_factory=list)
    used: set[tuple[str, int]] = field(default_factory=set)
    """The recorded user answers to tool yields given so far: (tool, index)."""


def recorded_tool(replay: Replay, tool: str) -> Any:
    """The mock of a recorded tool: the recorded response of the same call, and its state change."""

    def answer(args: dict[str, Any], ctx: Any) -> Any:
        key = call_key(tool, args)
        if key in replay.recording.answers:
            changed = scoped_view(replay.recording.state_changes.get(key, {}))
            for scope, values in changed.items():
                for name, value in values.items():
                    ctx.state.set(name, value, scope=scope)
            return replay.recording.answers[key]
        recorded = [k for k in replay.recording.answers if k.startswith(tool + "{")]
        what = (
            f"`{tool}` was called with {key.removeprefix(tool)}; the recording answered it "
            f"only for {', '.join(k.removeprefix(tool) for k in recorded)}"
        )
        if replay.diverged is None:
            replay.diverged = what
        if replay.continue_with is None:
            raise ShadowDivergenceError(f"the conversation left the recording: {what}")
        return replay.recording.tools[tool][-1]

    return answer


def recorded_yield_answers(replay: Replay) -> Any:
    """A person's recorded answers to tool yields (confirmations, long-running tools).

    A yield gets the recorded answer to the same call, else the next unused one
    of that tool (a confirmation's arguments carry a new call id every run).
    """

    def step(ctx: ScriptContext) -> Any:
        info = ctx.yield_info
        tool = info.tool_name if info is not None and info.tool_name else ""
        recorded = replay.recording.user_answers.get(tool, ())
        free = [i for i in range(len(recorded)) if (tool, i) not in replay.used]
        key = call_key(tool, info.args if info is not None else None)
        chosen = next((i for i in free if recorded[i][0] == key), free[0] if free else None)
        if chosen is None:
            raise ShadowDivergenceError(
                f"the conversation left the recording: `{tool}` waited for the user a "
                f"{len(recorded) + 1}th time; the recording answered it {len(recorded)} time(s)"
            )
        replay.used.add((tool, chosen))
        return recorded[chosen][1]

    return step


def recorded_user(replay: Replay) -> Any:
    """The user: the recorded turns, then (diverged, with a model) that model."""

    async def step(ctx: ScriptContext) -> Any:
        turns = replay.recording.user_turns
        if replay.diverged is not None and replay.continue_with is not None:
            if replay.diverged_at_turn is None:
                replay.diverged_at_turn = ctx.turn
            return await _persona_reply(replay, ctx)
        if ctx.turn + 1 < len(turns):
            return turns[ctx.turn + 1]
        return STOP

    return step


async def _persona_reply(replay: Replay, ctx: ScriptContext) -> str:
    """The next user message from `continue_with`, playing the recorded user."""
    from google.adk.models.llm_request import LlmRequest
    from google.genai import types

    assert replay.continue_with is not None
    persona = "\n".join(f"- {turn}" for turn in replay.recording.user_turns)
    history = []  # the conversation as the user sees it: the assistant's words are "user" turns
    for event in ctx.session.events:
        text = "".join(p.text or "" for p in (event.content.parts if event.content else []) or [])
        if text:
            role = "model" if event.author == "recorded_user" else "user"
            history.append(types.Content(role=role, parts=[types.Part(text=text)]))
    history.append(types.Content(role="user", parts=[types.Part(text=ctx.prompt)]))
    request = LlmRequest(
        contents=history,
        config=types.GenerateContentConfig(
            system_instruction=(
                "You are the user of an assistant, continuing a conversation. In the "
                f"recorded conversation you said:\n{persona}\nReply to the assistant's "
                "last message as that user would, in one short message; when you have "
                f"nothing more to ask, answer {STOP_SIGNAL}."
            )
        ),
    )
    text = ""
    async for response in replay.continue_with.generate_content_async(request):
        if response.content is not None:
            text += "".join(part.text or "" for part in response.content.parts or [])
    replay.continued.append(text)
    return text or STOP
