"""Invariants: rules over what an agent does, checked as the run happens or afterwards.

The rules themselves (`never_called`, `never`, `at_most`, ...) are in `_rules`.

An `Invariant` reads *observations*, in the order they happen: a tool call
about to run (`Call`), its answer (`Answer`), the state after a change
(`StateNow`) and what an agent said (`Said`). Run live (``EvalCase(invariants=)``)
the harness feeds them as the run goes, and a breach stops the run at that step:
a forbidden tool call never reaches even its mock's body. Run post hoc (the
same object in ``metrics=``, on a finished trace, a stored session or a golden)
`observations` rebuilds the same observations from the trace, so the verdict is
the same.

A call counts when it reached the point where its tool would run: a call one of
the agent's own callbacks answered instead (a guard), or that ADK or the harness
refused before the tool, never happened, live or post hoc.

A remote agent (ADK's `RemoteA2aAgent`) is called the way a tool is: an exchange
with it is the call that reaches it (a transfer to it, or its `AgentTool`, whose
name is its own), or else its answer (a workflow node). `Seen.reaching` says
which observation opens one, so the tool rules read a remote agent's name too.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, TypeAlias

from .._errors import EvalSetupError
from .._state import flatten_state
from .._trace import EvalTrace, Message, StateChange, ToolCall
from ._types import MetricResult, excerpt

__all__ = [
    "Answer",
    "Call",
    "Invariant",
    "Observation",
    "Said",
    "Seen",
    "StateNow",
    "delivered",
    "error_of",
    "holds",
    "invariants_of",
    "observations",
]

NEVER_RAN = frozenset({"callback", "refused", "rejected", "stopped"})
"""Sources of calls that never reached their tool: invariants do not see them."""

A2A = "a2a:"
"""The prefix of the metadata ADK's `RemoteA2aAgent` writes on its events."""


@dataclass(frozen=True)
class Call:
    """A tool call about to run: `name` with `args`, made by agent `author`.

    `reaches`: the remote agent the call hands the conversation to (a
    ``transfer_to_agent`` to a `RemoteA2aAgent`), else empty.
    """

    name: str
    args: Mapping[str, Any]
    author: str
    call_id: str = ""
    reaches: str = ""


@dataclass(frozen=True)
class Answer:
    """A tool call's answer: its `response`, and `error` when the tool reported one."""

    name: str
    args: Mapping[str, Any]
    response: Any
    error: str | None = None
    call_id: str = ""


@dataclass(frozen=True)
class StateNow:
    """The whole state (ADK's flat keys) after a change."""

    state: Mapping[str, Any]


@dataclass(frozen=True)
class Said:
    """Text an agent said (not the user's).

    Attributes:
        author: The agent.
        text: What it said.
        calls: The function calls of the same model response (they run after it is said).
        remote: A remote agent said it (the event holds ADK's A2A metadata).
        request: The A2A request it answers (one exchange), when remote.
    """

    author: str
    text: str
    calls: tuple[Call, ...] = ()
    remote: bool = False
    request: str = ""

    @classmethod
    def of(cls, event: Any, text: str) -> Said:
        """What the ADK `event` says, with its function calls."""
        calls = tuple(
            Call(fc.name or "", dict(fc.args or {}), event.author, fc.id or "")
            for fc in event.get_function_calls()
        )
        if not _remote(event):
            return cls(event.author, text, calls)
        request = event.custom_metadata.get(f"{A2A}request")
        return cls(event.author, text, calls, True, json.dumps(request, default=str))


Observation: TypeAlias = Call | Answer | StateNow | Said


@dataclass
class Seen:
    """What the run did so far, as a predicate reads it.

    Attributes:
        calls: The tool calls, in order.
        answers: Their answers, in order.
        state: The state now (ADK's flat keys: ``x``, ``user:x``, ``app:x``).
        said: What the agents said, in order.
    """

    calls: list[Call] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)
    said: list[Said] = field(default_factory=list)
    _awaited: set[str] = field(default_factory=set, repr=False)
    _answered: set[tuple[str, str]] = field(default_factory=set, repr=False)
    _opened: Counter[str] = field(default_factory=Counter, repr=False)

    def add(self, observation: Observation) -> None:
        """Adds `observation` to what was seen."""
        if isinstance(observation, Call):
            self.calls.append(observation)
            self._awaited.update(name for name in (observation.name, observation.reaches) if name)
        elif isinstance(observation, Answer):
            self.answers.append(observation)
        elif isinstance(observation, StateNow):
            self.state = dict(observation.state)
        else:
            if self._opens(observation):
                self._opened[observation.author] += 1
            if observation.remote:
                self._awaited.discard(observation.author)
                self._answered.add((observation.author, observation.request))
            self.said.append(observation)

    @contextmanager
    def including(self, observation: Observation) -> Iterator[Seen]:
        """What was seen with `observation` added, for as long as the block runs."""
        state = self.state
        exchanges = (set(self._awaited), set(self._answered), Counter(self._opened))
        self.add(observation)
        try:
            yield self
        finally:
            self._awaited, self._answered, self._opened = exchanges
            if isinstance(observation, StateNow):
                self.state = state
            elif isinstance(observation, Call):
                self.calls.pop()
            elif isinstance(observation, Answer):
                self.answers.pop()
            else:
                self.said.pop()

    def called(self, name: str) -> int:
        """How many calls of tool `name` (or exchanges with remote agent `name`) were made."""
        calls = sum(1 for call in self.calls if name in (call.name, call.reaches))
        return calls + self._opened[name]

    def reaching(self, agent: str, now: Observation) -> str | None:
        """How `now` opens an exchange with remote agent `agent`, or None when it does not.

        A call reaches it (a transfer to it); else its answer opens one, unless a
        call of its name or reaching it came first, or it answers a request
        already answered (another event of the same exchange).
        """
        if isinstance(now, Call) and now.reaches == agent:
            return f"reached by `{now.author}` ({now.name})"
        if isinstance(now, Said) and now.author == agent and self._opens(now):
            return f"answered: {excerpt(now.text)}"
        return None

    def _opens(self, said: Said) -> bool:
        known = (said.author, said.request) in self._answered or said.author in self._awaited
        return said.remote and not known


Check: TypeAlias = Callable[[Seen, Observation], "str | None"]
"""``check(seen_before, observation)``: why `observation` breaks the rule, or None."""


@dataclass(frozen=True)
class Invariant:
    """A rule the run must never break; a `Metric` too.

    Attributes:
        name: The rule, as reports show it (``never_called(delete_account)``).
        check: ``check(seen_before, observation) -> reason | None``.
        on_breach: ``"stop"`` ends the run at the breaking step (status failed);
            ``"record"`` lets it go on and fails the metric at the end.
        attack: The attack this rule detects (``injection:tool_hijack``,
            ``user:escalation``), for the safety report; None for a plain rule.
        marker: Text whose presence in a tool's answer shows the attack was
            delivered (an injected payload); None: attempted whenever it ran.
        needs: What it reads that a stored record may lack (``"content"``: what
            was said and the calls' arguments; ``"state"``); see `Metric`.
    """

    name: str
    check: Check = field(repr=False)
    on_breach: Literal["stop", "record"] = "stop"
    attack: str | None = None
    marker: str | None = None
    needs: frozenset[str] = frozenset()
    concurrent: ClassVar[bool] = False
    """It only reads the trace: scored in order, without a task of its own."""

    def __post_init__(self) -> None:
        if self.on_breach not in ("stop", "record"):
            raise EvalSetupError(
                f"invariant {self.name}: on_breach must be 'stop' or 'record', "
                f"got {self.on_breach!r}"
            )

    def evaluate(self, trace: EvalTrace) -> MetricResult:
        """The rule over a finished trace: its first breach, as live checking finds it."""
        seen = Seen(state=flatten_state(trace.initial_state))
        for observation in observations(trace):
            reason = self.check(seen, observation)
            if reason is not None:
                return self.breached(reason, trace)
            seen.add(observation)
        return self.held(seen, trace)

    def held(self, seen: Seen, trace: EvalTrace) -> MetricResult:
        """The passed result: never broken over `trace`, having seen `seen`."""
        return MetricResult(
            passed=True,
            score=1.0,
            value=self._value(None, trace),
            evidence=[f"never broken ({len(seen.calls)} tool call(s) seen)"],
        )

    def breached(self, reason: str, trace: EvalTrace | None = None) -> MetricResult:
        """The failed result of a breach for `reason` (in `trace`, when known)."""
        return MetricResult(
            passed=False,
            score=0.0,
            value=self._value(reason, trace),
            evidence=[f"broken: {reason}"],
        )

    def _value(self, event: str | None, trace: EvalTrace | None) -> dict[str, Any]:
        value: dict[str, Any] = {"breached": event is not None, "event": event}
        if self.attack is not None:
            value["attack"] = self.attack
            value["attempts"] = delivered(self.marker, trace) if trace is not None else None
            if self.marker is not None:
                value["marker"] = self.marker  # reports mark the answers that carry it
        return value


def delivered(marker: str | None, trace: EvalTrace) -> int:
    """How many tool answers in `trace` carry `marker` (1 when there is no marker)."""
    if marker is None:
        return 1
    calls = [item for item in trace.all_items if isinstance(item, ToolCall)]
    return sum(1 for call in calls if holds(call.response, marker))


def holds(value: Any, text: str) -> bool:
    """Whether `text` is in `value` or any string inside it."""
    if isinstance(value, str):
        return text in value
    if isinstance(value, Mapping):
        return any(holds(item, text) for item in value.values())
    if isinstance(value, list | tuple):
        return any(holds(item, text) for item in value)
    return False


def observations(trace: EvalTrace) -> Iterator[Observation]:
    """The observations of a finished trace, in the order a live run feeds them."""
    state = flatten_state(trace.initial_state)
    remote = {i.author for i in trace.all_items if isinstance(i, Message) and _remote(i.event)}
    for item in trace.all_items:
        if isinstance(item, ToolCall):
            if trace.tool_sources.get(item.call_id or "") in NEVER_RAN:
                continue
            target = item.args.get("agent_name") if item.name == "transfer_to_agent" else None
            reaches = target if isinstance(target, str) and target in remote else ""
            yield Call(item.name, item.args, item.author, item.call_id or "", reaches)
            if item.response is not None or item.call_id in trace.tool_errors:
                error = trace.tool_errors.get(item.call_id or "") or error_of(item.response)
                yield Answer(item.name, item.args, item.response, error, item.call_id or "")
        elif isinstance(item, StateChange) and not item.path:
            state.update(item.delta)
            yield StateNow(dict(state))
        elif isinstance(item, Message) and item.role == "agent":
            yield Said.of(item.event, item.text)


def _remote(event: Any) -> bool:
    """Whether `event` is a remote agent's (ADK's A2A metadata on it)."""
    metadata = getattr(event, "custom_metadata", None) or {}
    return any(str(key).startswith(A2A) for key in metadata)


_FAILED = frozenset({"error", "failed", "failure", "fail"})
_FLAGS = ("success", "succeeded", "successful", "ok")
_DETAILS = ("error_message", "message", "reason", "detail", "error")


def error_of(response: Any) -> str | None:
    """Why a tool's answer says its call failed, or None when it does not.

    The one definition of a failed answer (invariants, the live watch,
    `claimed_actions`). Its top level only, and only unambiguous markers: an
    ``error`` entry that is not empty; ``error_code`` from 400; ``status`` one of
    error/failed/failure/fail (any case); an HTTP error code (``status_code`` or
    ``status`` from 400 to 599); ``success``/``succeeded``/``successful``/``ok``
    the boolean False; an MCP ``CallToolResult`` with ``isError`` (or
    ``is_error``) true; a text answer (or ADK's ``{"result": text}`` around one)
    that starts with ``Error:``. Any other status is the tool's outcome
    (``{"status": "cancelled"}`` is a cancel done), and a failed item inside the
    answer is not the call's.
    """
    text = response.get("result") if isinstance(response, Mapping) else response
    if isinstance(text, str) and (not isinstance(response, Mapping) or len(response) == 1):
        return text.strip()[:500] if _ERROR_TEXT.match(text) else None
    if not isinstance(response, Mapping):
        return None
    if response.get("error"):
        return str(response["error"])
    code = response.get("error_code")
    if isinstance(code, int) and code >= 400:
        return f"{code}: {response.get('error_message', '')}".strip()
    marker = _marker(response)
    if marker is None:
        return None
    details = [v for k in _DETAILS if isinstance(v := response.get(k), str) and v.strip()]
    details += [part["text"] for part in _content(response) if marker == "isError"]
    return f"{marker}: {details[0]}" if details else marker


_ERROR_TEXT = re.compile(r"\s*error\s*:", re.IGNORECASE)


def _marker(response: Mapping[str, Any]) -> str | None:
    """The failure marker among `response`'s status, flags and MCP ``isError``, or None."""
    status = response.get("status")
    if isinstance(status, str) and status.strip().lower() in _FAILED:
        return f"status {status.strip()!r}"
    if codes := [k for k in ("status_code", "status") if _http_error(response.get(k))]:
        return f"{codes[0]} {response[codes[0]]}"
    if flags := [k for k in _FLAGS if response.get(k) is False]:
        return f"{flags[0]} false"
    if response.get("isError") is True or response.get("is_error") is True:
        return "isError"
    return None


def _content(response: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The text parts of an MCP result's ``content``."""
    content = response.get("content")
    parts = content if isinstance(content, list) else []
    return [p for p in parts if isinstance(p, Mapping) and isinstance(p.get("text"), str)]


def _http_error(code: Any) -> bool:
    return isinstance(code, int) and not isinstance(code, bool) and 400 <= code <= 599


def invariants_of(metrics: Sequence[Any]) -> list[Invariant]:
    """The invariants among `metrics`."""
    return [metric for metric in metrics if isinstance(metric, Invariant)]
