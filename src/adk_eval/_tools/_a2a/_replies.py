"""What a mocked remote agent answers: scripted replies, or a model playing the agent.

A remote agent (ADK's `RemoteA2aAgent`) is answered by a `RemoteMock` keyed by
its name in ``EvalCase(remote_mocks=...)``. Its answer to one A2A request is a
`RemoteReply`: the reply's text, the task state it ends in (``completed``,
``input-required``, ``failed``) and the artifacts it carries. Replies are
scripted (one per request, in order, or a function of the request's text) or
simulated: a model is told who the agent is from its card (description, skills,
input and output modes) and answers the request, through the model-call gate
like a judge (cached, paced, recorded in cassettes). A `RemoteMock.local` holds
the remote agent's own ADK agent instead, run in process (see `_local`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from ..._errors import EvalSetupError
from ...models import ModelSpec, default_judge_model, resolve_model
from ...models._gateway._ask import complete
from ...models._gateway._usage import usage_role

__all__ = ["RemoteMock", "RemoteReply", "TaskStateName", "remote_mock"]

TaskStateName = Literal["completed", "input-required", "failed"]
"""The A2A task states a reply can end in."""

_STATES = ("completed", "input-required", "failed")

Script = Sequence["str | RemoteReply"] | Callable[[str], "str | RemoteReply"]
"""Scripted replies: one per request, in order, or a function of the request's text."""


@dataclass(frozen=True)
class RemoteReply:
    """One answer of a remote agent to one A2A request.

    Attributes:
        text: The reply's text (the message of the task's last status).
        state: The A2A task state it ends in: ``completed``, ``input-required``
            (the remote agent asks a question back) or ``failed``.
        artifacts: Artifacts the task carries, by name: text, or a JSON value
            (a dict or a list) sent as a data part.
    """

    text: str = ""
    state: TaskStateName = "completed"
    artifacts: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.state not in _STATES:
            raise EvalSetupError(
                f"RemoteReply state must be one of {', '.join(_STATES)}; got {self.state!r}"
            )


def _as_reply(value: object, where: str) -> RemoteReply:
    if isinstance(value, RemoteReply):
        return value
    if isinstance(value, str):
        return RemoteReply(value)
    raise EvalSetupError(f"{where} must be a str or a RemoteReply; got {value!r}")


@dataclass(frozen=True)
class RemoteMock:
    """What answers a remote agent in an eval: scripted replies, a model, or its own code.

    Build one with `RemoteMock.scripted`, `RemoteMock.simulated` or
    `RemoteMock.local`; in
    ``remote_mocks`` a list of replies, a function or a single reply stands for
    ``RemoteMock.scripted(...)``.

    Attributes:
        replies: The scripted replies (None: simulated).
        description: What the agent card says the agent does.
        skills: The card's skills, by name: what each does.
        input_modes: The media types the agent reads.
        output_modes: The media types it answers in.
        model: The model that plays the agent when simulated (None: the judge model).
        agent: The remote agent's own ADK agent, run in process (`RemoteMock.local`).
    """

    replies: Script | None = None
    description: str = ""
    skills: Mapping[str, str] = field(default_factory=dict)
    input_modes: tuple[str, ...] = ("text/plain",)
    output_modes: tuple[str, ...] = ("text/plain",)
    model: ModelSpec | None = None
    agent: Any = None

    @classmethod
    def scripted(cls, replies: Script, *, description: str = "") -> RemoteMock:
        """Replies from a script: a list (one per request, in order) or a function of the text."""
        if not callable(replies):
            if isinstance(replies, str | RemoteReply):
                replies = [replies]
            replies = [_as_reply(r, f"reply {n + 1}") for n, r in enumerate(replies)]
        return cls(replies=replies, description=description)

    @classmethod
    def simulated(
        cls,
        description: str = "",
        *,
        skills: Mapping[str, str] | None = None,
        input_modes: Sequence[str] = ("text/plain",),
        output_modes: Sequence[str] = ("text/plain",),
        model: ModelSpec | None = None,
    ) -> RemoteMock:
        """A model plays the agent its card describes (the judge model unless `model`)."""
        return cls(
            None, description, dict(skills or {}), tuple(input_modes), tuple(output_modes), model
        )

    @classmethod
    def local(cls, agent: Any, *, description: str = "") -> RemoteMock:
        """The remote agent's own ADK `agent`, run in process under the case's interception.

        Its tools are answered by the case's ``tool_mocks`` (refused when
        unmocked) and its model calls go through the run's gate, as the main
        agent's; it is served over A2A in process (see ``_local``).
        """
        from google.adk.agents import BaseAgent

        if not isinstance(agent, BaseAgent):
            raise EvalSetupError(
                f"RemoteMock.local takes the remote agent's ADK agent; got {agent!r}"
            )
        return cls(description=description or agent.description, agent=agent)

    def llm(self) -> Any:
        """The simulating model, resolved (raises `EvalSetupError` for a missing key)."""
        return resolve_model(self.model if self.model is not None else default_judge_model())

    async def reply(self, name: str, request: str, turn: int) -> RemoteReply:
        """The answer to the `turn`-th request (from 0) whose text is `request`."""
        if self.agent is not None:  # its own code answers, in its own server (see `_local`)
            raise EvalSetupError(f"remote mock `{name}` runs its agent; it has no scripted reply")
        if self.replies is None:
            return await self._simulate(name, request)
        if callable(self.replies):
            answer = self.replies(request)
            if inspect.isawaitable(answer):
                answer = await answer
            return _as_reply(answer, f"remote mock `{name}`'s function's answer")
        if turn >= len(self.replies):
            return RemoteReply(
                f"remote mock `{name}` scripts {len(self.replies)} replies; request "
                f"{turn + 1} has none",
                state="failed",
            )
        return _as_reply(self.replies[turn], f"reply {turn + 1}")

    def persona(self, name: str) -> str:
        """The system instruction of the model playing the agent."""
        skills = "".join(f"\n- {skill}: {what}" for skill, what in self.skills.items())
        return (
            f"You are `{name}`, a remote agent another agent calls over the A2A protocol. "
            f"Your agent card says: {self.description or '(no description)'}"
            f"\nSkills:{skills or ' (none listed)'}"
            f"\nYou read {', '.join(self.input_modes)} and answer in "
            f"{', '.join(self.output_modes)}. Answer the request as this agent would, "
            "in a few sentences, with nothing about being simulated."
        )

    async def _simulate(self, name: str, request: str) -> RemoteReply:
        llm = self.llm()
        ask = LlmRequest(
            model=llm.model,
            contents=[types.Content(role="user", parts=[types.Part(text=request)])],
            config=types.GenerateContentConfig(system_instruction=self.persona(name)),
        )
        with usage_role(f"remote:{name}"):
            return RemoteReply(await complete(llm, ask))


def remote_mock(name: str, value: object) -> RemoteMock | None:
    """`value` of ``remote_mocks[name]`` as a `RemoteMock` (None: it is no mock).

    A `RemoteMock` is itself; a list of replies, a function or one reply are
    scripted; anything else (the remote agent itself) is left to the caller.
    """
    if isinstance(value, RemoteMock):
        return value
    if isinstance(value, str | RemoteReply) or (
        isinstance(value, list | tuple) and all(isinstance(v, str | RemoteReply) for v in value)
    ):
        return RemoteMock.scripted(value)  # type: ignore[arg-type]
    if inspect.isfunction(value):  # a def or a lambda (an agent is no function)
        return RemoteMock.scripted(value)
    return None
