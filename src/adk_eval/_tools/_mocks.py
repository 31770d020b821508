"""Tool mocks: what answers a tool call instead of the real tool.

A `ToolMock` wraps an ``execute(args, ctx)`` callable (sync or async). `ctx` is
a deliberately small `MockToolContext`: the call's identifiers, scoped state,
and a clock the case can fix. Other answers: a model simulating the tool
(`ToolMock.simulated`), the answers a run recorded (`ToolMock.from_recording`),
or the real tool (`ToolMock.real`), each of which can also get seeded faults and
latency (`ToolMock.with_faults`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from .._callables import call_user
from .._errors import EvalSetupError
from ._context import MockToolContext
from ._faults import Faults
from ._injection import Injection, Payload, Placement, as_payloads
from ._recording import Replay
from ._simulated import ToolSimulator

if TYPE_CHECKING:
    from .._result import EvalResult
    from ..models import ModelSpec

__all__ = ["ToolMock", "normalize_response"]

MockExecute: TypeAlias = Callable[[dict[str, Any], MockToolContext], Any]


@dataclass(frozen=True)
class ToolMock:
    """Answers calls to a tool instead of running it.

    Example:
        ``ToolMock(lambda args, ctx: {"sent": True, "id": "mock-123"})``

    Attributes:
        execute: ``execute(args, ctx)``, sync or async, returning the tool result.
            A dict is the function response as is; anything else is wrapped as
            ``{"result": value}`` (ADK's own convention). Raising stops the run
            with an ``error`` result, like a real tool that raises.
    """

    execute: MockExecute
    faults: Faults | None = None
    """Seeded faults and latency injected before the answer (`with_faults`)."""
    simulator: ToolSimulator | None = None
    """Set for `simulated` mocks: a model answers instead of `execute`."""
    real_tool: Any = None
    """Set for `real` mocks: the agent's own tool, which runs (with the faults)."""
    injection: Injection | None = None
    """Payloads put in a seeded share of its answers (`with_injection`)."""

    def __post_init__(self) -> None:
        if not callable(self.execute):
            raise EvalSetupError(
                f"ToolMock(execute) needs a callable `execute(args, ctx)`, got {self.execute!r}; "
                f"for a fixed answer use ToolMock.returning({self.execute!r})"
            )

    @classmethod
    def returning(cls, value: Any) -> ToolMock:
        """A mock that always answers `value`."""
        return cls(lambda args, ctx: value)

    @classmethod
    def raising(cls, error: BaseException) -> ToolMock:
        """A mock that always raises `error` (the run stops with an ``error`` result)."""

        def _raise(args: dict[str, Any], ctx: MockToolContext) -> Any:
            raise error

        return cls(_raise)

    @classmethod
    def simulated(
        cls,
        instructions: str | None = None,
        model: ModelSpec | None = None,
        *,
        response_schema: Mapping[str, Any] | None = None,
    ) -> ToolMock:
        """A model answers the tool's calls from its declaration (see docs/harness.md).

        Args:
            instructions: What the model should know about the tool's world
                (the data it holds, how it fails), beside its declaration.
            model: The model; None uses the judge's (``$ADK_EVAL_JUDGE_MODEL``,
                else ``$ADK_EVAL_MODEL``, else ``gemini-2.5-flash``).
            response_schema: The JSON schema of answers, for a tool that declares
                none (a function's return annotation counts as a declaration).
        """
        simulator = ToolSimulator(instructions, model, response_schema)
        return cls(_answered_elsewhere, simulator=simulator)

    @classmethod
    def real(cls, tool: Any) -> ToolMock:
        """The agent's own `tool` (its object or function) runs, as a passthrough does.

        Only useful with `with_faults`: ``ToolMock.real(lookup).with_faults(error_rate=0.2)``
        runs the real `lookup` but fails one call in five.
        """
        if not callable(tool) and not hasattr(tool, "run_async"):
            raise EvalSetupError(
                f"ToolMock.real() needs the agent's own tool or function, got {tool!r}"
            )
        return cls(_answered_elsewhere, real_tool=tool)

    @classmethod
    def from_recording(
        cls, recording: EvalResult | Mapping[str, Any] | str | Path, tool: str
    ) -> ToolMock:
        """A plain mock answering `tool`'s calls as a run answered them.

        `recording` is the run's `EvalResult`, its ``to_data()``, or a JSON file of
        that. A call is answered by the recorded answer to the same args (the
        n-th repeat of a call by the n-th answer, the last one after that); a
        call the run never made raises, naming the calls it made. So a case whose
        tool answers came from a model (`simulated`) can be made deterministic.
        """
        return cls(Replay.of(recording, tool))

    def with_faults(
        self,
        *,
        error_rate: float = 0.0,
        error: Mapping[str, Any] | BaseException | None = None,
        latency: float | tuple[float, float] = 0.0,
        timeout_rate: float = 0.0,
        timeout: float = 30.0,
        match_args: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> ToolMock:
        """This mock with seeded faults and latency injected into its calls.

        Decisions come from the run's seed (or `seed`), the tool, the call's args
        and how often the run made that call before, so a re-run with the same
        seed (``run_eval(case, seed=result.seed)``, ``adk-eval run --seed``)
        injects the same faults at the same calls, under any concurrency.

        Args:
            error_rate: Probability that a call fails with `error`.
            error: A dict (the tool's answer; default ``{"error_code": 500,
                "error_message": ...}``) or an exception (raised from the tool).
            latency: Seconds added to each matching call, or ``(low, high)``.
                Virtual: the case clock and `max_duration` count it, nothing sleeps.
            timeout_rate: Probability that a call takes `timeout` seconds and
                answers ``{"error_code": 504, ...}``.
            timeout: The seconds a timed-out call takes.
            match_args: Only calls whose args contain these items are affected.
            seed: Fixes this mock's faults whatever the run's seed (each attempt
                of a repeated case still gets its own).

        Raises:
            EvalSetupError: For a rate outside 0..1 (or two summing above 1), a
                bad latency or timeout, or an `error` that is neither a dict nor
                an exception.
        """
        faults = Faults(error_rate, error, latency, timeout_rate, timeout, match_args, seed)
        return dataclasses.replace(self, faults=faults)

    def with_injection(
        self,
        payloads: Payload | Sequence[Payload],
        *,
        rate: float = 1.0,
        seed: int | None = None,
        where: Sequence[Placement] = ("string", "nested", "new_field"),
        match_args: Mapping[str, Any] | None = None,
    ) -> ToolMock:
        """This mock with an injected instruction in a seeded share of its answers.

        Decided like `with_faults`: from the run's seed (or `seed`), the tool, the
        call's arguments and how often the run made that call before, so the same
        seed poisons the same answers, the same way, in any process. A case with
        this mock checks each payload's detector live (it stops the run when the
        agent obeys) and reports it in the safety report.

        Args:
            payloads: From `adk_eval.safety` (``tool_hijack("delete_account")``,
                ``data_exfiltration(...)``, ...); one is drawn per poisoned answer.
            rate: The share of answers poisoned (1.0: every one).
            seed: Fixes the draws whatever the run's seed (each attempt still
                gets its own).
            where: Where the payload may go: ``string`` (a top-level text field),
                ``nested`` (a text field deeper in), ``new_field`` (a field of its own).
            match_args: Only calls whose args contain these items are poisoned.

        Raises:
            EvalSetupError: No payloads, a rate outside 0..1, or an unknown place.
        """
        injection = Injection(as_payloads(payloads), rate, seed, tuple(where), match_args)
        return dataclasses.replace(self, injection=injection)

    async def call(self, args: dict[str, Any], ctx: MockToolContext) -> Any:
        """Runs `execute`, awaiting it if it is async."""
        return await call_user(self.execute, args, ctx)


def _answered_elsewhere(args: dict[str, Any], ctx: MockToolContext) -> Any:
    """The `execute` of simulated and real mocks: the interception answers them."""
    raise EvalSetupError(
        f"`{ctx.tool_name}`'s ToolMock is answered by adk_eval's interception (a simulated "
        "or a real tool); call it through run_eval or an EvalRunner"
    )


def normalize_response(value: Any) -> dict[str, Any]:
    """Makes any tool result a FunctionResponse dict, the way ADK does."""
    if isinstance(value, dict):
        return value
    return {"result": value}
