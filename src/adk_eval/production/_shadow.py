"""Shadow replay: what a new agent version would have done in a stored conversation.

`shadow_session(session, agent)` runs `agent` against the same conversation,
safely, through `run_eval`:

* the recorded tool responses become mocks: a call the recording answered (the
  same tool, the same arguments) gets the recorded response; a tool the recording
  never answered has no mock, so the run stops with the harness's usual error
  and nothing of it runs;
* the recorded user turns become a scripted user: the first is the first
  message, the others answer the agent's turns in order;
* the state the conversation started from is set as far as the events tell
  (see `Recording`).

The conversation **diverges** when the agent calls a recorded tool with
arguments the recording never answered. By default the run stops there and the
divergence is reported (`ShadowDivergenceError`). With `continue_with` (a model: an
LLM, or `ScriptedLlm` as a stand-in), that call gets the tool's last recorded
response and, from the next user turn on, that model plays the user, given the
recorded user turns as its persona.

Each session's recorded and new outcomes are compared: the metrics on both
(same, better, worse), the tool calls of each turn, the agents' replies and the
final state (`ShadowResult`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import anyio
from google.adk.agents import BaseAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.sessions import Session

from .._case import EvalCase, TerminateWhen, UserAgents
from .._errors import EvalSetupError
from .._result import EvalResult
from .._run.loop import run_eval
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import Redactor, redact_session
from .._sources._source import SessionSource
from .._tools._mocks import ToolMock
from .._user_agents import ScriptedUserAgent
from ..metrics._types import Metric
from ._recording import Recording
from ._replay import Replay, recorded_tool, recorded_user, recorded_yield_answers
from ._score import score_stored, session_name

__all__ = ["ShadowOutcome", "ShadowResult", "shadow_session", "shadow_sessions"]

ShadowOutcome = Literal["same", "better", "worse", "diverged", "error"]


@dataclass(frozen=True)
class ShadowResult:
    """A stored session and the candidate's run on it, side by side.

    Attributes:
        name: The session (``app/user/session-id``).
        outcome: ``same`` (the metrics' verdicts agree), ``better`` (the candidate
            passes a metric the recording failed and fails none it passed),
            ``worse`` (it fails a metric the recording passed), ``diverged`` (the
            run stopped where the conversation left the recording) or ``error``
            (the run could not go on: an unrecorded tool, a crash).
        recorded: The stored session scored as a run.
        new: The candidate's run.
        divergence: Where the conversation left the recording, in words.
        continued: After the divergence, the `continue_with` model played the user.
        recorded_calls: The tool calls of each turn, recorded.
        new_calls: The tool calls of each turn, in the new run.
        recorded_replies: The agents' replies of each turn, recorded.
        new_replies: The agents' replies of each turn, in the new run.
        state_changes: Keys whose final value differs, ``{scope: {key: (recorded, new)}}``.
    """

    name: str
    outcome: ShadowOutcome
    recorded: EvalResult
    new: EvalResult
    divergence: str | None = None
    continued: bool = False
    recorded_calls: Sequence[Sequence[str]] = ()
    new_calls: Sequence[Sequence[str]] = ()
    recorded_replies: Sequence[Sequence[str]] = ()
    new_replies: Sequence[Sequence[str]] = ()
    state_changes: dict[str, dict[str, tuple[Any, Any]]] = field(default_factory=dict)

    @property
    def changed(self) -> bool:
        """Whether anything differs: the outcome, a divergence, calls, replies or state."""
        return (
            self.outcome != "same"
            or self.divergence is not None
            or list(map(list, self.recorded_calls)) != list(map(list, self.new_calls))
            or list(map(list, self.recorded_replies)) != list(map(list, self.new_replies))
            or bool(self.state_changes)
        )

    def explain(self) -> str:
        """The comparison, readable: outcome, metrics, calls, replies, state."""
        lines = [f"session `{self.name}`: {self.outcome.upper()}"]
        if self.divergence:
            then = "; a model played the user from there" if self.continued else ""
            lines.append(f"diverged: {self.divergence}{then}")
        if self.new.error is not None and self.outcome == "error":
            lines.append(f"error ({self.new.error.type}): {self.new.error.message}")
        for name in dict.fromkeys([*self.recorded.metrics, *self.new.metrics]):
            before, after = self.recorded.metrics.get(name), self.new.metrics.get(name)
            lines.append(f"[{_verdict(before)} -> {_verdict(after)}] {name}")
        turns = max(len(self.recorded_calls), len(self.new_calls))
        for turn in range(turns):
            old = _at(self.recorded_calls, turn)
            new = _at(self.new_calls, turn)
            mark = "" if old == new else "  (differs)"
            lines.append(
                f"turn {turn + 1} calls: {', '.join(old) or '-'} -> {', '.join(new) or '-'}{mark}"
            )
            old_replies, new_replies = _at(self.recorded_replies, turn), _at(self.new_replies, turn)
            if old_replies != new_replies:
                lines.append(f"  recorded reply: {' / '.join(old_replies) or '-'}")
                lines.append(f"  new reply:      {' / '.join(new_replies) or '-'}")
        for scope, keys in self.state_changes.items():
            for key, (old_value, new_value) in keys.items():
                lines.append(f"state {scope}.{key}: {old_value!r} -> {new_value!r}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as JSON-ready data (values JSON cannot hold are their repr)."""
        metrics = {
            name: {
                "recorded": _verdict(self.recorded.metrics.get(name)),
                "new": _verdict(self.new.metrics.get(name)),
            }
            for name in dict.fromkeys([*self.recorded.metrics, *self.new.metrics])
        }
        error = self.new.error
        data = {
            "session": self.name,
            "outcome": self.outcome,
            "divergence": self.divergence,
            "continued": self.continued,
            "changed": self.changed,
            "new_status": self.new.status,
            "error": None if error is None else {"type": error.type, "message": error.message},
            "metrics": metrics,
            "calls": {"recorded": self.recorded_calls, "new": self.new_calls},
            "replies": {"recorded": self.recorded_replies, "new": self.new_replies},
            "state_changes": {
                scope: {key: {"recorded": old, "new": new} for key, (old, new) in keys.items()}
                for scope, keys in self.state_changes.items()
            },
        }
        safe: dict[str, Any] = json.loads(json.dumps(data, default=repr))
        return safe


async def shadow_session(
    session: Session,
    agent: BaseAgent,
    *,
    metrics: Sequence[Metric] = (),
    continue_with: BaseLlm | None = None,
    max_turns: int | None = None,
) -> ShadowResult:
    """Runs `agent` against the conversation `session` recorded (see the module doc).

    Args:
        session: A stored session (`open_sessions`, or ADK's own service).
        agent: The candidate agent (or App, or Workflow), as an `EvalCase` takes it.
        metrics: Scored on both the recorded session and the new run.
        continue_with: A model that plays the user once the conversation
            diverges (None: stop there).
        max_turns: Caps the new run (default: the recorded turns and two more).

    Raises:
        EvalSetupError: The session records no user message to start from.
    """
    recording = Recording.of(session)
    if not recording.user_turns:
        raise EvalSetupError(f"session `{session_name(session)}` records no user message")
    replay = Replay(recording, continue_with)
    case = EvalCase(
        name=session_name(session),
        agent=agent,
        tool_mocks={tool: ToolMock(recorded_tool(replay, tool)) for tool in recording.tools},
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="recorded_user", step=recorded_user(replay)),
            tools={
                tool: ScriptedUserAgent(
                    name="recorded_answers", step=recorded_yield_answers(replay)
                )
                for tool in recording.user_answers
            },
        ),
        first_message=recording.user_turns[0],
        initial_state=recording.initial_state,
        terminate_when=TerminateWhen(max_turns=max_turns or len(recording.user_turns) + 2),
        metrics=list(metrics),
    )
    new = await run_eval(case)
    recorded = await score_stored(session, metrics)
    new_recording = Recording.of(_as_session(new, session))
    return ShadowResult(
        name=case.name,
        outcome=_outcome(recorded, new, replay),
        recorded=recorded,
        new=new,
        divergence=replay.diverged,
        continued=bool(replay.continued),
        recorded_calls=recording.turn_calls,
        new_calls=new_recording.turn_calls,
        recorded_replies=recording.turn_replies,
        new_replies=new_recording.turn_replies,
        state_changes=_state_changes(recording.final_state, new.final_state),
    )


async def shadow_sessions(
    source: SessionSource,
    agent: Any,
    *,
    metrics: Sequence[Metric] = (),
    filters: SessionFilter | None = None,
    continue_with: BaseLlm | None = None,
    max_concurrency: int = 4,
    on_result: Callable[[ShadowResult], Awaitable[None] | None] | None = None,
    redactor: Redactor | None = None,
) -> list[ShadowResult]:
    """`shadow_session` on every stored session of `source` that passes `filters`.

    Sessions are read as they are replayed (`max_concurrency` at once); a session
    that records no user message is skipped. Results come in the order they finish.
    Each session is redacted first (`redactor`; default: the built-in kinds, as
    `score_sessions`): the candidate's models see markers, never the stored values.

    Raises:
        EvalSetupError: The source cannot be read (one line naming it).
    """
    results: list[ShadowResult] = []
    slots = anyio.Semaphore(max_concurrency)  # also bounds how far ahead sessions are read
    redactor = redactor if redactor is not None else Redactor()

    async def replay(session: Session) -> None:
        try:
            if redactor.enabled:
                session, _ = redact_session(session, redactor)
            if not Recording.of(session).user_turns:
                return
            result = await shadow_session(
                session, agent, metrics=metrics, continue_with=continue_with
            )
        finally:
            slots.release()
        results.append(result)
        if on_result is not None:
            outcome = on_result(result)
            if outcome is not None:
                await outcome

    problems: list[EvalSetupError] = []
    async with anyio.create_task_group() as group:
        try:
            async for session in source.sessions(filters or SessionFilter()):
                await slots.acquire()
                group.start_soon(replay, session)
        except EvalSetupError as error:  # the store: raised as it is, not in a group
            problems.append(error)
            group.cancel_scope.cancel()
    if problems:
        raise problems[0]
    return results


def _outcome(recorded: EvalResult, new: EvalResult, replay: Replay) -> ShadowOutcome:
    if replay.diverged is not None and replay.continue_with is None:
        return "diverged"
    if new.status == "error":
        return "error"
    passed_before = {n for n, m in recorded.metrics.items() if m.applicable and m.passed}
    passed_after = {n for n, m in new.metrics.items() if m.applicable and m.passed}
    if passed_before - passed_after:
        return "worse"
    if passed_after - passed_before:
        return "better"
    return "same"


def _as_session(result: EvalResult, like: Session) -> Session:
    return Session(
        app_name=like.app_name, user_id=like.user_id, id=like.id, events=list(result.events)
    )


def _state_changes(recorded: Any, new: Any) -> dict[str, dict[str, tuple[Any, Any]]]:
    changes: dict[str, dict[str, tuple[Any, Any]]] = {}
    for scope in sorted({*recorded, *new}):
        before, after = recorded.get(scope, {}), new.get(scope, {})
        for key in sorted({*before, *after}):
            if before.get(key) != after.get(key):
                changes.setdefault(scope, {})[key] = (before.get(key), after.get(key))
    return changes


def _verdict(result: Any) -> str:
    if result is None:
        return "-"
    return "N/A" if not result.applicable else ("pass" if result.passed else "FAIL")


def _at(items: Sequence[Sequence[str]], index: int) -> list[str]:
    return list(items[index]) if index < len(items) else []
