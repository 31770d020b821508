"""Seeded fault and latency injection for tool calls (`ToolMock.with_faults`).

Every decision is drawn from a generator seeded by the run's seed (or the
faults' own), the tool's name, the call's arguments and how many times this run
has made that same call before. So a decision never depends on the order in
which concurrent runs, or parallel calls within a run, reach the tool: the same
seed injects the same faults at the same calls, under any concurrency. Each
attempt of a repeated case runs with its own seed, derived from the suite's.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import EvalSetupError
from .._seeds import derive_seed

__all__ = ["FaultDecision", "Faults", "call_key"]

DEFAULT_ERROR: dict[str, Any] = {
    "error_code": 500,
    "error_message": "Internal server error (injected by adk_eval)",
}
"""What an injected error answers unless `Faults.error` says otherwise."""


def call_key(args: Mapping[str, Any]) -> str:
    """A call's args as one canonical string: the same call gives the same key.

    Numbers are compared by value: a model that sends ``7.0`` where a recording has
    ``7`` (JSON does not tell them apart) makes the same call.
    """
    return json.dumps(_by_value(args), sort_keys=True, default=repr)


def _by_value(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {key: _by_value(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_by_value(item) for item in value]
    return value


@dataclass(frozen=True)
class FaultDecision:
    """What happens to one call: `latency` seconds, then the tool or a fault.

    Attributes:
        latency: Injected (virtual) seconds before the answer.
        fault: ``"error"``, ``"timeout"`` or None (the tool answers).
    """

    latency: float
    fault: Literal["error", "timeout"] | None


@dataclass(frozen=True)
class Faults:
    """Faults and latency injected into a tool's calls (see `ToolMock.with_faults`).

    Attributes:
        error_rate: Probability that a call fails with `error`.
        error: What a failed call does: a dict is the tool's answer (default: an
            HTTP-500-like ``{"error_code": 500, "error_message": ...}``); an
            exception is raised from the tool, as a real tool raises it.
        latency: Seconds added to each matching call: a number, or ``(low, high)``
            drawn uniformly. Virtual: the case clock and `max_duration` see it, no
            real waiting happens.
        timeout_rate: Probability that a call times out: it takes `timeout`
            seconds, then answers ``{"error_code": 504, ...}``.
        timeout: The seconds a timed-out call takes.
        match_args: Only calls whose args contain these items are affected.
        seed: Draw from this seed instead of the run's: the same faults in
            every run, whatever its seed (each attempt of a repeated case still
            derives its own from it and the attempt number).
    """

    error_rate: float = 0.0
    error: Mapping[str, Any] | BaseException | None = None
    latency: float | tuple[float, float] = 0.0
    timeout_rate: float = 0.0
    timeout: float = 30.0
    match_args: Mapping[str, Any] | None = None
    seed: int | None = None

    def __post_init__(self) -> None:
        for name in ("error_rate", "timeout_rate"):
            rate = getattr(self, name)
            if not isinstance(rate, int | float) or not 0.0 <= rate <= 1.0:
                raise EvalSetupError(
                    f"with_faults({name}=...) must be between 0 and 1, got {rate!r}"
                )
        if self.error_rate + self.timeout_rate > 1.0:
            raise EvalSetupError(
                f"with_faults: error_rate + timeout_rate must be at most 1, got "
                f"{self.error_rate} + {self.timeout_rate}"
            )
        low, high = self.latency_range
        if not (math.isfinite(low) and math.isfinite(high) and 0.0 <= low <= high):
            raise EvalSetupError(
                f"with_faults(latency=...) must be seconds >= 0 or (low, high) with "
                f"0 <= low <= high, got {self.latency!r}"
            )
        if (
            not isinstance(self.timeout, int | float)
            or not math.isfinite(self.timeout)
            or self.timeout < 0
        ):
            raise EvalSetupError(
                f"with_faults(timeout=...) must be seconds >= 0, got {self.timeout!r}"
            )
        if self.error is not None and not isinstance(self.error, Mapping | Exception):
            kind = (
                " (a BaseException like SystemExit, KeyboardInterrupt or CancelledError ends a "
                "process or a task, not a tool call: use an Exception such as TimeoutError)"
                if isinstance(self.error, BaseException)
                else ""
            )
            raise EvalSetupError(
                "with_faults(error=...) must be a dict (the tool's answer) or an Exception "
                f"(raised from the tool), got {self.error!r}{kind}"
            )
        if self.match_args is not None and not isinstance(self.match_args, Mapping):
            raise EvalSetupError(
                f"with_faults(match_args=...) must be a dict, got {self.match_args!r}"
            )

    @property
    def latency_range(self) -> tuple[float, float]:
        """`latency` as ``(low, high)``."""
        latency = self.latency
        if isinstance(latency, tuple | list) and len(latency) == 2:
            return float(latency[0]), float(latency[1])
        if isinstance(latency, int | float):
            return float(latency), float(latency)
        raise EvalSetupError(
            f"with_faults(latency=...) must be seconds or (low, high), got {latency!r}"
        )

    def matches(self, args: Mapping[str, Any]) -> bool:
        """Whether a call with `args` is one these faults apply to."""
        return self.match_args is None or all(
            key in args and args[key] == value for key, value in self.match_args.items()
        )

    def decide(
        self, run_seed: int, attempt: int, tool: str, args: Mapping[str, Any], occurrence: int
    ) -> FaultDecision:
        """What happens to the `occurrence`-th call (from 0) of `tool` with `args` in a run.

        Args:
            run_seed: The run's seed (used unless these faults have their own).
            attempt: The run's attempt (with an own `seed`, each attempt differs).
            tool: The tool's name.
            args: The call's arguments.
            occurrence: How many times this run made this same call before.
        """
        if not self.matches(args):
            return FaultDecision(0.0, None)
        key = call_key(args)
        base = run_seed if self.seed is None else derive_seed(self.seed, attempt)
        draw = random.Random(derive_seed(base, tool, key, occurrence))
        low, high = self.latency_range
        latency = draw.uniform(low, high) if high > low else low
        roll = draw.random()
        if roll < self.error_rate:
            return FaultDecision(latency, "error")
        if roll < self.error_rate + self.timeout_rate:
            return FaultDecision(latency + self.timeout, "timeout")
        return FaultDecision(latency, None)

    def error_answer(self, tool: str) -> dict[str, Any]:
        """The answer of an injected error (raises it when `error` is an exception)."""
        if isinstance(self.error, BaseException):
            raise self.error
        return dict(self.error) if self.error is not None else dict(DEFAULT_ERROR)

    def timeout_answer(self, tool: str) -> dict[str, Any]:
        """The answer of an injected timeout."""
        return {
            "error_code": 504,
            "error_message": f"`{tool}` timed out after {self.timeout:g} s (injected by adk_eval)",
        }
