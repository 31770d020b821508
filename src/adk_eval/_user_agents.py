"""The user side of a case: scripted user agents, the stop signal, `UserAgents`, `CaseSession`.

Any ADK agent can be a user agent (an `LlmAgent` persona, with or without
`output_schema` and tools). `ScriptedUserAgent` is the deterministic kind: it
plays a list of replies, or calls a step function that reads and writes its
own state.

A user agent ends the conversation by answering with `STOP_SIGNAL`
(``"</finished>"``, the same token ADK's own user simulator uses; it may appear
anywhere in the text) or, in a script, with `STOP`. A case that plays several
sessions on one memory (the user comes back later) lists them as `CaseSession`s.
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

__all__ = ["STOP", "STOP_SIGNAL", "CaseSession", "HumanUserAgent", "ScriptContext"]
__all__ += ["ScriptedUserAgent", "UserAgents", "check_sessions", "is_stop_signal"]

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


@dataclass(frozen=True)
class UserAgents:
    """The simulated humans of a case.

    All user agents of a case share one user-agent session, separate from the
    main session: each sees the prompts and answers of the others.

    Attributes:
        loop: Answers loop yields (the agent finished its turn with text). Without
            one, the conversation ends at the first loop yield.
        tools: Answers tool yields, keyed by the yielding tool's name: long-running
            tools, ``adk_request_input`` and ``adk_request_confirmation``.
    """

    loop: BaseAgent | None = None
    tools: Mapping[str, BaseAgent] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.loop is not None and not isinstance(self.loop, BaseAgent):
            raise EvalSetupError(
                "UserAgents.loop must be an ADK agent (LlmAgent, ScriptedUserAgent, ...), "
                f"got {type(self.loop).__name__}"
            )
        if not isinstance(self.tools, Mapping):
            raise EvalSetupError(
                f"UserAgents.tools must map tool names to agents, got {type(self.tools).__name__}"
            )
        for name, agent in self.tools.items():
            if not isinstance(agent, BaseAgent):
                raise EvalSetupError(
                    f"UserAgents.tools[{name!r}] must be an ADK agent (LlmAgent, "
                    f"ScriptedUserAgent, ...), got {type(agent).__name__}"
                )


@dataclass(frozen=True)
class CaseSession:
    """One session of a case that plays several in turn on one memory (`EvalCase.sessions`).

    The user comes back later: each session is a new ADK session of the same user
    and app, run to its end, then added to the case's memory service, where the
    next sessions' ``load_memory`` and ``preload_memory`` find it.

    Attributes:
        first_message: The user's opening message of this session. Without it,
            the session's loop user agent opens it.
        user_agents: Who answers when the agent yields in this session (None: the
            case's `user_agents`). Each session starts a user-agent session of its own.
        metrics: Scored on this session's trace alone; their results are the
            case's under ``"<name>/<metric>"``.
        max_turns: Most user-agent answers in this session: ``"case"`` (the
            case's ``terminate_when.max_turns``), a number, or None for no limit.
        name: The session's name in results (None: ``session_1``, ``session_2``, ...).
    """

    first_message: str | types.Content | None = None
    user_agents: UserAgents | None = None
    metrics: Sequence[Any] = ()
    max_turns: int | Literal["case"] | None = "case"
    name: str | None = None

    def __post_init__(self) -> None:
        problem = _session_problem(self)
        if problem is not None:
            raise EvalSetupError(f"CaseSession{f' `{self.name}`' if self.name else ''}: {problem}")

    def label(self, index: int) -> str:
        """Its name in results: `name`, else ``session_N`` for the N-th session (from 1)."""
        return self.name or f"session_{index + 1}"


def _session_problem(session: Any) -> str | None:
    """What is wrong with a `CaseSession`'s fields, whatever was passed (None: nothing)."""
    turns, name, metrics = session.max_turns, session.name, session.metrics
    if not isinstance(session.first_message, str | types.Content | None):
        return f"`first_message` must be a str or genai Content, got {session.first_message!r}"
    if isinstance(session.user_agents, BaseAgent):
        name = session.user_agents.name
        return (
            f"`user_agents` must be a UserAgents(...), got the agent `{name}`; "
            f"write UserAgents(loop={name})"
        )
    if not isinstance(session.user_agents, UserAgents | None):
        return f"`user_agents` must be a UserAgents(...), got {type(session.user_agents).__name__}"
    if turns not in ("case", None) and (type(turns) is not int or turns < 1):
        return f'`max_turns` must be >= 1, None (no limit) or "case", got {turns!r}'
    if name is not None and (not isinstance(name, str) or not name.strip()):
        return f"`name` must be a non-empty string or None, got {name!r}"
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        return f"`metrics` must be a list of metrics, got {metrics!r}"
    names = [getattr(metric, "name", None) for metric in metrics]
    for metric, metric_name in zip(metrics, names, strict=True):
        if not isinstance(metric_name, str) or not callable(getattr(metric, "evaluate", None)):
            return f"every metric needs a `name` and an `evaluate(trace)` method, got {metric!r}"
    twice = [metric_name for metric_name in names if names.count(metric_name) > 1]
    return f"two metrics are named `{twice[0]}`; make each name unique" if twice else None


def check_sessions(sessions: Any, *, case: str, first_message: Any, loop: Any) -> None:
    """Checks a case's `sessions` against the rest of it (`loop`: its loop user agent).

    Raises:
        EvalSetupError: `sessions` is not a list of `CaseSession`, the case has a
            `first_message` too, a session has no opening, or two share a name.
    """
    if isinstance(sessions, str) or not isinstance(sessions, Sequence):
        raise EvalSetupError(f"EvalCase `{case}`: `sessions` must be a list of CaseSession(...)")
    if sessions and first_message is not None:
        raise EvalSetupError(
            f"EvalCase `{case}` has both `first_message` and `sessions`; each session opens "
            "with its own: move the message to the first CaseSession(first_message=...)"
        )
    labels: list[str] = []
    for index, session in enumerate(sessions):
        if not isinstance(session, CaseSession):
            raise EvalSetupError(
                f"EvalCase `{case}`: sessions[{index}] must be a CaseSession(...), got {session!r}"
            )
        label = session.label(index)
        opener = session.user_agents.loop if session.user_agents is not None else loop
        if session.first_message is None and opener is None:
            raise EvalSetupError(
                f"EvalCase `{case}`: session `{label}` has no `first_message` and no loop "
                "user agent to open it; set one of them on its CaseSession"
            )
        if label in labels:
            raise EvalSetupError(f"EvalCase `{case}`: two sessions are named `{label}`; rename one")
        labels.append(label)
