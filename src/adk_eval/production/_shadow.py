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
(same, better, worse: over the metrics that could judge the recording), the tool
calls of each turn, the agents' replies and the final state (`ShadowResult`).

`shadow_sessions(source, agent)` replays the stored conversations of a source as
`StoredConversations` gives them: redacted, open ones and those whose source
carries no words to replay left out, counted and named (`ShadowResults.counts`).
Their model calls (the candidate's, the user model's, the judges') follow the
project's settings through one `Gateway`, so a limit holds across the
conversations replayed at once, as across a suite's runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from google.adk.agents import BaseAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.sessions import Session

from .._case import EvalCase, TerminateWhen, UserAgents
from .._errors import EvalSetupError
from .._result import EvalResult
from .._run.loop import run_case
from .._sources._filter import SessionFilter
from .._sources._redact._redactor import Redactor
from .._sources._source import SessionSource
from .._sources._stored import ReadCounts, StoredConversation, with_words
from .._tools._mocks import ToolMock
from .._user_agents import ScriptedUserAgent
from ..metrics._types import Metric
from ..models._gateway._gate import Gateway
from ._recording import Recording
from ._replay import Replay, recorded_tool, recorded_user, recorded_yield_answers
from ._score import score_stored

__all__ = [
    "ShadowOutcome",
    "ShadowResult",
    "ShadowResults",
    "shadow_session",
    "shadow_sessions",
]

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
        lacks: What the recording's source does not carry (a trace's ``state``):
            metrics that read it are not applicable on the recording, and count
            toward neither better nor worse.
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
    lacks: frozenset[str] = frozenset()

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
        if self.lacks:
            lacking = " and ".join(sorted(self.lacks))
            lines.append(f"the recording lacks the {lacking}: what reads it is N/A on it")
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
            "lacks": sorted(self.lacks),
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
        session: A stored session (`open_sessions`, or ADK's own service), replayed
            as it is (`shadow_sessions` redacts what it reads).
        agent: The candidate agent (or App, or Workflow), as an `EvalCase` takes it.
        metrics: Scored on both the recorded session and the new run.
        continue_with: A model that plays the user once the conversation
            diverges (None: stop there).
        max_turns: Caps the new run (default: the recorded turns and two more).

    Raises:
        EvalSetupError: The session records no user message to start from.
    """
    stored, recording = StoredConversation.build(session), Recording.of(session)
    if not recording.user_turns:
        raise EvalSetupError(f"session `{stored.name}` records no user message")
    replay = Replay(recording, continue_with)
    return await _shadow(stored, replay, agent, metrics, max_turns, Gateway.alone())


async def _shadow(
    stored: StoredConversation,
    replay: Replay,
    agent: Any,
    metrics: Sequence[Metric],
    max_turns: int | None,
    gateway: Gateway,
) -> ShadowResult:
    """`agent` run on what `replay` plays back, beside `stored` scored as it was recorded.

    The run and the scoring of the recording call models through `gateway`.
    """
    recording = replay.recording
    case = _case(stored.name, agent, replay, metrics, max_turns)
    new = await run_case(case, seed=None, attempt=0, gateway=gateway)
    recorded = await score_stored(stored, metrics, gateway)
    new_recording = Recording.of(_as_session(new, stored.session))
    return ShadowResult(
        name=stored.name,
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
        lacks=stored.lacks,
    )


def _case(
    name: str, agent: Any, replay: Replay, metrics: Sequence[Metric], max_turns: int | None
) -> EvalCase:
    """The case that replays: recorded answers as mocks, recorded user turns as the user."""
    recording = replay.recording
    return EvalCase(
        name=name,
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


class ShadowResults(list[ShadowResult]):
    """What `shadow_sessions` returns: the results, in the order they finished, and `counts`.

    Attributes:
        counts: What the read left out (open conversations, those whose source
            carries no words to replay), what redaction replaced, and what the
            source said about itself.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts = ReadCounts()


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
    include_open: bool = False,
) -> ShadowResults:
    """`shadow_session` on every stored conversation of `source` that passes `filters`.

    Conversations are read as they are replayed (`max_concurrency` at once), each
    redacted first (`redactor`; default: the built-in kinds, as `score_sessions`):
    the candidate's models see markers, never the stored values. Left out, counted
    and named in the results' `counts`: open conversations (unless `include_open`:
    replayed as far as they were written) and conversations whose source carries
    no words (a trace with content capture off). A conversation that records no
    user message is skipped. Results come in the order they finish.

    Raises:
        EvalSetupError: The source, or a session of it, cannot be read (one line
            naming it).
    """
    results, gateway = ShadowResults(), Gateway.alone()
    stream = with_words(source, filters, redactor=redactor, include_open=include_open)

    async def replay(_: int, stored: StoredConversation) -> None:
        recording = Recording.of(stored.session)
        if not recording.user_turns:
            return
        replaying = Replay(recording, continue_with)
        result = await _shadow(stored, replaying, agent, metrics, None, gateway)
        results.append(result)
        outcome = on_result(result) if on_result is not None else None
        if outcome is not None:
            await outcome

    await stream.each(replay, max_concurrency)
    results.counts = stream.counts
    return results


def _outcome(recorded: EvalResult, new: EvalResult, replay: Replay) -> ShadowOutcome:
    """The verdicts compared, over the metrics that judged the recording.

    A metric not applicable on the recording (it reads what the recording's source
    lacks, or what only a simulated run has) tells neither better nor worse.
    """
    if replay.diverged is not None and replay.continue_with is None:
        return "diverged"
    if new.status == "error":
        return "error"
    judged = {name for name, result in recorded.metrics.items() if result.applicable}
    passed_before = {name for name in judged if recorded.metrics[name].passed}
    passed_after = {n for n, m in new.metrics.items() if n in judged and m.applicable and m.passed}
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
