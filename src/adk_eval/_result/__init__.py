"""`EvalResult`: what one simulated conversation produced and how it scored.

A result also travels as plain JSON data and back without loss (`EvalResult.to_data`,
`EvalResult.from_data`), for results that cross processes: events are ADK's own
JSON (``Event.model_dump(mode="json")``), every other field is JSON as it is, and
values that JSON cannot hold (a metric's ``value`` that is an object) become their
``repr``: the one lossy corner, and only for such values.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from .._errors import EvalSetupError
from .._termination import Termination, TerminationKind
from .._trace import TRACE_KEYS, EvalTrace, TokenUsage, TraceView, trace_from_data, trace_to_data
from .._trace._spool import SpooledTrace, TraceSpool
from .._transcript import argument_lines, transcript_lines
from .._turns import jsonable
from ..metrics._types import MetricResult
from ..models._gateway._stats import ProviderStats
from ..models._gateway._usage import ModelUsage, priced_usage, total_cost
from ._attribution import Attribution, attribute
from ._status import ErrorPhase, EvalErrorInfo, EvalStatus, phase_words, replies, run_status

__all__ = [
    "DATA_VERSION",
    "ErrorPhase",
    "EvalErrorInfo",
    "EvalResult",
    "EvalStatus",
    "TokenUsage",
    "result_from_data",
    "result_to_data",
    "run_status",
]

_NO_TRACE = EvalTrace(events=())
"""The default of `EvalResult`'s trace: replaced at once by one named for the case."""


@dataclass(frozen=True)
class EvalResult(TraceView):
    """The outcome of `run_eval` for one case.

    It holds the run's `trace`; its events, states, artifacts and what the
    interception noted per call (`events`, `final_state`, `tool_sources`, ...)
    are the trace's, read-only. `EvalResult.from_fields(name=..., status=...,
    events=...)` builds that trace from them.

    Attributes:
        name: The case's name.
        status: ``passed`` (every metric passed), ``failed`` (a metric failed),
            ``error`` (something raised; see `error`) or ``terminated`` (a
            turn or time limit stopped the run; metrics still ran).
        metrics: Metric name -> result.
        duration_ms: Wall time of the conversation and metrics.
        turns: Completed yield/resume cycles (user-agent answers delivered).
        token_usage: Tokens of the system agent's model calls.
        error: Set when status is ``error``.
        termination_reason: Which condition stopped the run, if one did.
        termination: The same, with the limit and the value reached.
        user_agent_token_usage: Tokens of the user agents' model calls.
        description: The case's description.
        xfail: The case's reason for being expected not to pass, if any.
        attempt: Which repetition of the case this is (0 when not repeated).
        seed: The seed injected faults were drawn from (``run_eval(case,
            seed=result.seed)`` injects the same faults again).
        agent_name: The root agent of the system under test.
        warnings: What went wrong without stopping the run, one line each (an
            event compaction that failed, what the sandbox saw).
        usage: Tokens and cost of every model call, by role and model: the agent
            under test (``agent``), each user agent (``user:NAME``), judges
            (``judge:METRIC``) and simulated tools (``tool:NAME``); see `cost_usd`.
        attribution: For a run that did not pass, the party it is attributed to
            (the agent, the simulated user, the set-up, the provider) with evidence
            and a confidence; None for a passed run.
        provider: What the run's model calls met on the way to their providers:
            retries after 429s and server errors, seconds waited for quota (not
            counted against ``max_duration``), cache hits and what they saved,
            calls replayed from or recorded into a cassette.
        trace: The run's trace. Its fields are the result's too, read-only
            (`TraceView`: ``events``, ``final_state``, ``tool_sources``, ...).
    """

    name: str
    status: EvalStatus
    metrics: Mapping[str, MetricResult] = field(default_factory=dict)
    duration_ms: float = 0.0
    turns: int = 0
    token_usage: TokenUsage = field(default_factory=TokenUsage)
    error: EvalErrorInfo | None = None
    termination_reason: TerminationKind | None = None
    termination: Termination | None = None
    user_agent_token_usage: TokenUsage = field(default_factory=TokenUsage)
    description: str | None = None
    xfail: str | None = None
    attempt: int = 0
    agent_name: str | None = None
    seed: int | None = None
    warnings: Sequence[str] = ()
    usage: Sequence[ModelUsage] = ()
    attribution: Attribution | None = None
    provider: ProviderStats = field(default_factory=ProviderStats)
    _trace: EvalTrace | SpooledTrace = field(default=_NO_TRACE, repr=False)
    """The trace, or where a suite spooled it (`trace` reads it back); by default one
    without events, of this case."""

    def __post_init__(self) -> None:
        if self._trace is _NO_TRACE:
            object.__setattr__(self, "_trace", EvalTrace(events=(), case_name=self.name))

    @classmethod
    def from_fields(
        cls,
        name: str,
        status: EvalStatus,
        *,
        trace: EvalTrace | SpooledTrace | None = None,
        **fields: Any,
    ) -> EvalResult:
        """The result with its fields and its trace's side by side (``events=``, ...).

        Args:
            name: The case's name.
            status: The run's status.
            trace: The run's trace; the trace fields given replace its own.
            **fields: The result's fields and the trace's (`TRACE_KEYS`), by name.

        Raises:
            TypeError: A keyword that is neither a field nor a trace field.
        """
        given = {key: fields.pop(key) for key in TRACE_KEYS if key in fields}
        if trace is None:
            trace = EvalTrace(events=(), case_name=name)
        if given:
            trace = dataclasses.replace(_loaded(trace), **given)
        return cls(name, status, **fields, _trace=trace)

    @property
    def trace(self) -> EvalTrace:
        """The trace the metrics scored (the run's events, states and call notes)."""
        return _loaded(self._trace)

    def spooled(self, spool: TraceSpool) -> EvalResult:
        """This result with its trace written to `spool`, read back when asked for."""
        if isinstance(self._trace, SpooledTrace):
            return self
        return dataclasses.replace(self, _trace=spool.put(self._trace))

    @property
    def cost_usd(self) -> float | None:
        """What the run's model calls cost in US dollars; None when a model has no price."""
        return total_cost(self.usage)

    @property
    def passed(self) -> bool:
        """Whether the status is ``passed``."""
        return self.status == "passed"

    @property
    def outcome(self) -> Literal["passed", "failed", "error", "terminated", "xfailed", "xpassed"]:
        """The status as a suite counts it: an `xfail` case ``xfailed`` or ``xpassed``."""
        if self.xfail is not None and self.status in ("failed", "terminated"):
            return "xfailed"
        if self.xfail is not None and self.status == "passed":
            return "xpassed"
        return self.status

    @property
    def ok(self) -> bool:
        """Whether this run leaves a suite green (passed, or failed as expected)."""
        return self.outcome in ("passed", "xfailed")

    @property
    def failed_metrics(self) -> dict[str, MetricResult]:
        """The metrics that did not pass (not-applicable ones are not failures)."""
        return {
            name: result
            for name, result in self.metrics.items()
            if not result.passed and result.applicable
        }

    @classmethod
    def of_trace(cls, trace: EvalTrace, **fields: Any) -> EvalResult:
        """The result of a run whose trace is `trace` (`fields`: the rest, by name)."""
        termination = fields.get("termination")
        extra = fields.pop("usage", ())  # recorded while it ran: judges, simulated tools
        usage = (
            *priced_usage(
                (*trace.events, *(nested.event for nested in trace.nested_events)),
                lambda author: "agent",
                lambda author: None,
            ),
            *priced_usage(trace.user_agent_events, lambda author: f"user:{author}", lambda a: None),
            *extra,
        )
        user_modelled = any(
            e.author != "user" and (e.model_version or e.usage_metadata)
            for e in trace.user_agent_events
        )
        attribution = fields.pop("attribution", None) or attribute(
            fields["status"],
            fields.get("error"),
            fields.get("metrics", {}),
            modelled_user=user_modelled,
        )
        return cls(
            trace.case_name or "",
            fields.pop("status"),
            usage=usage,
            attribution=attribution,
            _trace=trace,
            token_usage=TokenUsage.from_events(trace.events),
            termination_reason=termination.kind if termination else None,
            user_agent_token_usage=TokenUsage.from_events(trace.user_agent_events),
            **fields,
        )

    def __repr__(self) -> str:
        """A short summary; events and states are left out (``to_data()`` has them all).

        Python builds reprs nobody reads: asyncio's runner formats the finished main
        task, and so every event of a suite, when it exits.
        """
        verdicts = {name: "passed" if m.passed else "failed" for name, m in self.metrics.items()}
        error = f", error={self.error.type}" if self.error else ""
        return (
            f"EvalResult(name={self.name!r}, status={self.status!r}, attempt={self.attempt}, "
            f"turns={self.turns}, events={len(self.events)}, metrics={verdicts}{error}, "
            f"duration_ms={self.duration_ms:.0f})"
        )

    def to_data(self) -> dict[str, Any]:
        """The result as JSON-ready data, which `from_data` turns back into an equal result."""
        return result_to_data(self)

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> EvalResult:
        """The result `to_data` wrote (for results that come from another process).

        Raises:
            ValueError: The data is of another format version.
        """
        return result_from_data(data)

    def explain(self, *, last_turns: int = 6) -> str:
        """A readable account of the result: status, reason, failed metrics, last turns."""
        lines = [
            f"EvalCase `{self.name}`: {self.status.upper()} after {replies(self.turns)}, "
            f"{self.duration_ms / 1000:.2f}s"
        ]
        if self.outcome == "xfailed":
            lines.append(f"expected not to pass (xfail): {self.xfail}")
        elif self.outcome == "xpassed":
            lines.append(f"passed although marked xfail (remove the marker?): {self.xfail}")
        if self.error is not None:
            lines.append(f"error in {phase_words(self.error.phase)} ({self.error.type}):")
            lines.extend("  " + line for line in self.error.message.splitlines())
        if self.termination is not None:
            lines.append(f"stopped by {self.termination}")
        if self.attribution is not None:
            lines.append(self.attribution.line())
        lines.extend(f"warning: {warning}" for warning in self.warnings)
        for name, result in self.metrics.items():
            mark = result.verdict.upper()
            score = "" if result.score is None else f" score={result.score:g}"
            advisory = " (advisory)" if result.advisory else ""
            lines.append(f"[{mark}{advisory}] {name}{score}")
            if result.error:
                lines.append(f"    error: {result.error}")
            if not result.applicable:
                lines.append(f"    - {result.evidence[0]}")
            elif not result.passed:  # a failure's evidence is shown whole
                lines.extend(f"    - {item}" for item in result.evidence)
            elif result.evidence:  # a pass gets one short line, so the conversation stays in view
                lines.append(f"    - {_one_line(str(result.evidence[0]))}")
        misfits = argument_lines(self.trace)
        if misfits:
            lines.append("calls that do not fit their tool's declaration:")
            lines.extend("  " + line for line in misfits)
        transcript = transcript_lines(self.trace, max_chars_per_entry=200, brief=True)
        transcript = transcript[-last_turns:] if last_turns > 0 else []
        if transcript:
            lines.append(f"last {min(last_turns, len(transcript))} entries of the conversation:")
            lines.extend("  " + line for line in transcript)
        return "\n".join(lines)


def _loaded(trace: EvalTrace | SpooledTrace) -> EvalTrace:
    return trace.load() if isinstance(trace, SpooledTrace) else trace


def _one_line(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


DATA_VERSION = 1
"""The version of the format (`result_from_data` refuses another)."""


_PLAIN: tuple[str, ...] = ("name", "status", "duration_ms", "turns", "termination_reason")
_PLAIN += ("description", "xfail", "attempt", "agent_name")
"""The fields that are JSON as they are (`seed` too, but older data may lack it)."""


def result_to_data(result: EvalResult) -> dict[str, Any]:
    """`result` as JSON-ready data (its trace's fields flat beside its own)."""
    plain = {key: getattr(result, key) for key in _PLAIN}
    return {
        "version": DATA_VERSION,
        **plain,
        "metrics": {
            name: jsonable(dataclasses.asdict(metric)) for name, metric in result.metrics.items()
        },
        "token_usage": dataclasses.asdict(result.token_usage),
        "error": dataclasses.asdict(result.error) if result.error else None,
        "termination": jsonable(dataclasses.asdict(result.termination))
        if result.termination
        else None,
        "user_agent_token_usage": dataclasses.asdict(result.user_agent_token_usage),
        **trace_to_data(result.trace),
        "warnings": list(result.warnings),
        "seed": result.seed,
        "usage": [item.to_data() for item in result.usage],
        "attribution": result.attribution.to_data() if result.attribution else None,
        "provider": result.provider.to_data(),
    }


def result_from_data(data: Mapping[str, Any]) -> EvalResult:
    """The `EvalResult` that `result_to_data` wrote.

    Raises:
        EvalSetupError: The data is of another format version, or its name, status,
            attempt or duration is not what `result_to_data` writes.
        KeyError, TypeError, ValueError: Other fields are missing or malformed.
    """
    if data.get("version") != DATA_VERSION:
        raise EvalSetupError(
            f"EvalResult data of version {data.get('version')!r}; this adk-eval reads "
            f"version {DATA_VERSION}"
        )
    checks = {
        "name": isinstance(data["name"], str),
        "status": data["status"] in get_args(EvalStatus),
        "attempt": isinstance(data["attempt"], int) and data["attempt"] >= 0,
        "turns": isinstance(data["turns"], int) and data["turns"] >= 0,
        "duration_ms": isinstance(data["duration_ms"], int | float)
        and math.isfinite(data["duration_ms"])
        and data["duration_ms"] >= 0,
    }
    wrong = [name for name, ok in checks.items() if not ok]
    if wrong:
        raise EvalSetupError(f"EvalResult data with a bad {wrong[0]}: {data[wrong[0]]!r}")
    metrics = {name: MetricResult(**fields) for name, fields in data["metrics"].items()}
    termination = data["termination"]
    return EvalResult(
        **{key: data[key] for key in _PLAIN},
        metrics=metrics,
        _trace=trace_from_data(data, case_name=data["name"]),
        token_usage=TokenUsage(**data["token_usage"]),
        error=EvalErrorInfo(**data["error"]) if data["error"] else None,
        termination=Termination(**termination) if termination else None,
        user_agent_token_usage=TokenUsage(**data["user_agent_token_usage"]),
        warnings=tuple(data.get("warnings", ())),
        seed=data.get("seed"),
        usage=tuple(ModelUsage(**item) for item in data.get("usage", ())),
        attribution=Attribution(**data["attribution"]) if data.get("attribution") else None,
        provider=ProviderStats.from_data(data.get("provider")),
    )
