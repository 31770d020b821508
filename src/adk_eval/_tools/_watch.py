"""`Watch`: a run's invariants, fed what happens as it happens.

The interception plugin feeds a tool call when it reaches the point where its
tool would run (inside the swapped body, after the agent's own callbacks; for a
tool that runs for real or pauses, before it), its answer, every state change
and every text an agent says; the simulation feeds the state changes user
agents make. The first breach of a ``stop`` invariant stops the run there.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from google.adk.agents.invocation_context import InvocationContext
from google.adk.events import Event
from google.adk.models.llm_response import LlmResponse
from google.adk.tools.tool_context import ToolContext

from .._trace import EvalTrace
from .._turns import event_text
from ..metrics._invariants import (
    Answer,
    Call,
    Invariant,
    Observation,
    Said,
    Seen,
    StateNow,
    error_of,
)
from ..metrics._types import MetricResult
from ._remote import is_remote_agent

__all__ = ["INVARIANT_CODE", "Breach", "Watch"]

INVARIANT_CODE = "ADK_EVAL_INVARIANT"
"""The error code of the model response that ends a run at a breached invariant."""


@dataclass(frozen=True)
class Breach:
    """An invariant broken during the run, and why."""

    invariant: Invariant
    reason: str

    @property
    def line(self) -> str:
        """One line: the rule and the breaking step."""
        return f"invariant {self.invariant.name} broken: {self.reason}"


@dataclass
class Watch:
    """The invariants of one run and what they saw so far.

    Attributes:
        invariants: Checked at every observation.
        seen: What the run did so far.
        breaches: The first breach of each invariant broken, in order.
        stop: The breach that stops the run (the first of a ``stop`` invariant).
        errors: What the invariants that raised raised (they are no longer checked).
    """

    invariants: Sequence[Invariant] = ()
    seen: Seen = field(default_factory=Seen)
    breaches: dict[str, Breach] = field(default_factory=dict)
    stop: Breach | None = None
    errors: dict[str, Exception] = field(default_factory=dict)
    _calls: set[str] = field(default_factory=set)

    @classmethod
    def of(cls, invariants: Sequence[Invariant], state: Mapping[str, Any]) -> Watch:
        """A watch of `invariants` on a run starting with the flat `state`."""
        return cls(tuple(invariants), Seen(state=dict(state)))

    def see(self, observation: Observation) -> Breach | None:
        """Checks `observation`; the breach that stops the run, when it does (else None)."""
        if not self.invariants or self.stop is not None:
            return None
        if isinstance(observation, Answer) and observation.call_id not in self._calls:
            return None  # its call never reached the tool (a callback answered it)
        if isinstance(observation, Call) and observation.call_id:
            self._calls.add(observation.call_id)
        for invariant in self.invariants:
            if invariant.name in self.breaches or invariant.name in self.errors:
                continue
            try:
                reason = invariant.check(self.seen, observation)
            except Exception as error:  # its metric reports it (the run: a metric error)
                self.errors[invariant.name] = error
                continue
            if reason is None:
                continue
            breach = Breach(invariant, reason)
            self.breaches[invariant.name] = breach
            if invariant.on_breach == "stop" and self.stop is None:
                self.stop = breach
        self.seen.add(observation)
        return self.stop

    def result(self, invariant: Invariant, trace: EvalTrace) -> MetricResult:
        """`invariant`'s metric: its live breach, else the rule checked over `trace`.

        Raises:
            Exception: What the invariant raised while the run went on.
        """
        if invariant.name in self.errors:
            raise self.errors[invariant.name]
        breach = self.breaches.get(invariant.name)
        if breach is None:
            return invariant.evaluate(trace)
        result = invariant.breached(breach.reason, trace)
        if breach is self.stop:
            result.evidence.append("checked live: the run stopped at this step")
        return result

    # -- what the interception plugin feeds ---------------------------------------

    def call(
        self,
        name: str,
        args: Mapping[str, Any],
        tool_context: ToolContext,
        sources: MutableMapping[str, str],
    ) -> dict[str, Any] | None:
        """A call about to reach its tool: None to let it, or the answer that stops the run."""
        if not self.invariants:  # most runs have none: nothing to build
            return None
        call_id = tool_context.function_call_id or ""
        call = Call(
            name, dict(args), tool_context.agent_name, call_id, _reaches(name, args, tool_context)
        )
        if self.see(call) is None:
            return None
        assert self.stop is not None
        if call_id:
            sources[call_id] = "invariant"
        tool_context.actions.skip_summarization = True
        return {"error": f"adk_eval stopped the run: {self.stop.line}"}

    def answer(
        self,
        name: str,
        args: Mapping[str, Any],
        tool_context: ToolContext,
        response: Any = None,
        error: BaseException | None = None,
    ) -> None:
        """A call's answer (or the exception its tool raised)."""
        if not self.invariants:
            return
        said = f"{type(error).__name__}: {error}" if error is not None else error_of(response)
        call_id = tool_context.function_call_id or ""
        self.see(Answer(name, dict(args), response, said, call_id))

    def event(self, context: InvocationContext, event: Event, *, main: bool) -> None:
        """An event: its state change (main session) and what an agent said in it."""
        if not self.invariants or event.partial:  # most runs have none: nothing to do
            return
        delta = event.actions.state_delta
        if main and delta:
            self.see(StateNow({**context.session.state, **delta}))
        text = event_text(event)
        if text and event.author != "user" and not event.get_function_responses():
            self.see(Said.of(event, text))

    def stop_response(self) -> LlmResponse | None:
        """The model response that ends the run once an invariant stopped it (else None)."""
        if self.stop is None:
            return None
        return LlmResponse(
            error_code=INVARIANT_CODE, error_message=self.stop.line, turn_complete=True
        )


def _reaches(name: str, args: Mapping[str, Any], tool_context: ToolContext) -> str:
    """The remote agent a ``transfer_to_agent`` call hands the conversation to, else empty."""
    target = args.get("agent_name")
    if name != "transfer_to_agent" or not isinstance(target, str):
        return ""
    root = getattr(tool_context._invocation_context.agent, "root_agent", None)
    return target if root is not None and is_remote_agent(root.find_agent(target)) else ""
