"""Scripted user agents and the stop signal.

Any ADK agent can be a user agent (an `LlmAgent` persona, with or without
`output_schema` and tools). `ScriptedUserAgent` is the deterministic kind: it
plays a list of replies, or calls a step function that reads and writes its
own state.

A user agent ends the conversation by answering with `STOP_SIGNAL`
(``"</finished>"``, the same token ADK's own user simulator uses; it may appear
anywhere in the text) or, in a script, with `STOP`.
"""

from __future__ import annotations

import contextvars
import functools
import json
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeGuard

from google.adk.agents import BaseAgent
from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event, EventActions
from google.adk.sessions import Session
from google.genai import types
from pydantic import BaseModel

from ._bridge import StateChangeResult, YieldInfo, record_state_changes
from ._callables import call_user
from ._errors import EvalSetupError, EvalUserAgentError
from ._session_service import detached
from ._turns import content_text

__all__ = [
    "STOP",
    "STOP_SIGNAL",
    "HumanUserAgent",
    "ScriptContext",
    "ScriptedUserAgent",
    "is_stop_signal",
]

STOP_SIGNAL = "</finished>"
"""Text a user agent answers with to end the conversation (case-insensitive)."""


class _Stop:
    def __repr__(self) -> str:
        return "STOP"


STOP: Any = _Stop()
"""A script reply (or step result) that ends the conversation.

The string ``"STOP"`` is not it: a script that holds the string sends it to the
agent as a message like any other (a texting user's unsubscribe, say).
"""

CURRENT_YIELD: contextvars.ContextVar[YieldInfo | None] = contextvars.ContextVar(
    "adk_eval_current_yield", default=None
)
"""The yield a user agent is answering (set by the simulation, read by scripts)."""


def is_stop_signal(text: str | None) -> bool:
    """Whether a user agent's text asks to end the conversation."""
    return bool(text) and STOP_SIGNAL in (text or "").lower()


@dataclass
class ScriptContext:
    """What a step function of a `ScriptedUserAgent` gets.

    Attributes:
        turn: How many replies this agent has given before in this case (0 first).
        prompt: The text the bridge sent (what the system said or asked).
        yield_info: The yield being answered (tool name, args, ...).
        state: The user-agent session's state; changes are saved with the reply.
    """

    turn: int
    prompt: str
    yield_info: YieldInfo | None
    state: dict[str, Any]
    _live_session: Session = field(repr=False)

    @functools.cached_property
    def session(self) -> Session:
        """A deep copy of the shared user-agent session, made when first read.

        Changing it changes nothing of the conversation; a step that never
        reads it costs no copy.
        """
        return detached(self._live_session)


StepFunction = Callable[[ScriptContext], Any]


class _DirectUserAgent(BaseAgent):
    """A user agent whose answer is one event computed from the session (`_reply`)."""

    async def _run_async_impl(self, ctx: InvocationContext) -> AsyncGenerator[Event, None]:
        yield await self._reply(
            ctx.session,
            content_text(ctx.user_content),
            ctx.invocation_id,
        )

    async def _reply(self, session: Session, prompt: str, invocation_id: str) -> Event:
        raise NotImplementedError


class ScriptedUserAgent(_DirectUserAgent):
    """A deterministic user agent: a list of replies or a step function.

    A reply is a str (sent as text), a dict or pydantic model (structured output,
    e.g. the answer to a tool yield), or `STOP`; ``with_state_change(reply,
    changes)`` sends `reply` and changes the main session's state as a user-agent
    tool would (replayed goldens use it). The n-th reply goes to the n-th
    prompt this agent receives in the case, counted from the shared session, so
    one instance can serve many concurrent cases.

    Example:
        ::

            patient = ScriptedUserAgent(
                name="patient",
                script=["I have chest pain", "About 30 minutes", STOP],
            )

            def step(ctx: ScriptContext) -> str:
                ctx.state["asked"] = ctx.state.get("asked", 0) + 1
                return f"Answer #{ctx.state['asked']} to {ctx.prompt!r}"

            echo = ScriptedUserAgent(name="echo", step=step)

    Attributes:
        script: The replies, in order.
        step: ``step(ctx) -> reply``, sync or async (instead of `script`).
        when_exhausted: After the last scripted reply: ``"stop"`` ends the
            conversation, ``"error"`` fails the run.
    """

    script: Sequence[Any] | None = None
    step: StepFunction | None = None
    when_exhausted: Literal["stop", "error"] = "stop"

    def model_post_init(self, context: Any) -> None:
        """Checks that exactly one of `script` and `step` is given."""
        super().model_post_init(context)
        if (self.script is None) == (self.step is None):
            raise EvalSetupError(
                f"ScriptedUserAgent `{self.name}` needs exactly one of `script` (a list of "
                "replies) or `step` (a function)"
            )
        if self.script is not None and isinstance(self.script, str | bytes):
            raise EvalSetupError(
                f"ScriptedUserAgent `{self.name}`: `script` must be a list of replies, got the "
                f"string {self.script!r}; for one reply write script=[{self.script!r}]"
            )

    async def _reply(self, session: Session, prompt: str, invocation_id: str) -> Event:
        turn = sum(
            1 for event in session.events if event.author == self.name and event.content is not None
        )
        state = dict(session.state)
        before = dict(state)
        script_ctx = ScriptContext(
            turn=turn,
            prompt=prompt,
            yield_info=CURRENT_YIELD.get(),
            state=state,
            _live_session=session,
        )
        reply = await self._next_reply(script_ctx)
        delta = {k: v for k, v in state.items() if k not in before or before[k] != v}
        return _reply_event(invocation_id, self.name, reply, EventActions(state_delta=delta))

    async def _next_reply(self, ctx: ScriptContext) -> Any:
        if self.step is not None:
            return await call_user(self.step, ctx)
        assert self.script is not None
        if ctx.turn < len(self.script):
            return self.script[ctx.turn]
        if self.when_exhausted == "stop":
            return STOP
        raise EvalUserAgentError(
            f"ScriptedUserAgent `{self.name}` has {len(self.script)} replies but was asked for "
            f"reply #{ctx.turn + 1} (prompt: {ctx.prompt!r}). Add replies, or use "
            "when_exhausted='stop' to end the conversation there."
        )


HumanResponder = Callable[[str, YieldInfo | None], Awaitable[Any]]


class HumanUserAgent(_DirectUserAgent):
    """A user agent whose replies come from a person (the studio uses it).

    Attributes:
        respond: ``async respond(prompt, yield_info) -> reply``; the reply is
            what a `ScriptedUserAgent` script holds (text, a dict, `STOP`).
    """

    respond: HumanResponder

    async def _reply(self, session: Session, prompt: str, invocation_id: str) -> Event:
        reply = await self.respond(prompt, CURRENT_YIELD.get())
        return _reply_event(invocation_id, self.name, reply, EventActions())


def answers_directly(agent: BaseAgent) -> TypeGuard[_DirectUserAgent]:
    """Whether `agent` can answer without an ADK runner invocation.

    True for a `ScriptedUserAgent` or `HumanUserAgent` whose run is not
    overridden and that has no agent callbacks: its answer is one event computed
    from the session, which `direct_reply` builds at a fraction of a runner's
    cost (no invocation, no session copy).
    """
    return (
        isinstance(agent, _DirectUserAgent)
        and type(agent)._run_async_impl is _DirectUserAgent._run_async_impl
        and not agent.before_agent_callback
        and not agent.after_agent_callback
    )


async def direct_reply(
    agent: _DirectUserAgent, session: Session, prompt: str, invocation_id: str
) -> Event:
    """The event `agent` answers `prompt` with, the same one its run would yield."""
    return await agent._reply(session, prompt, invocation_id)


def _reply_event(invocation_id: str, author: str, reply: Any, actions: EventActions) -> Event:
    """The event a user agent answers with: its reply as text, plus structured output.

    A reply built by `with_state_change` hands its changes to the running answer's
    collection (applied to the main session like a user-agent tool's).
    """
    if isinstance(reply, StateChangeResult):
        reply = record_state_changes(reply)
    text, output = _render(reply)
    return Event(
        invocation_id=invocation_id,
        author=author,
        content=types.Content(role="model", parts=[types.Part(text=text)]),
        output=output,
        actions=actions,
    )


def _render(reply: Any) -> tuple[str, Any]:
    if reply is STOP:
        return STOP_SIGNAL, None
    if isinstance(reply, str):
        return reply, None
    if isinstance(reply, BaseModel):
        reply = reply.model_dump(mode="json")
    if isinstance(reply, Mapping | list | bool | int | float):
        return json.dumps(reply, ensure_ascii=False, default=repr), reply
    raise EvalSetupError(
        f"a ScriptedUserAgent reply must be a str, dict, list, number, bool, pydantic model, "
        f"STOP or with_state_change(reply, changes), got {type(reply).__name__}: {reply!r}"
    )
