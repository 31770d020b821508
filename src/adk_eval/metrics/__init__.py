"""Metrics: small objects that score an `EvalTrace`.

Built-in metrics, by what they read:

* state: `state_metric` (one value of the final state), `state_query` (a
  MongoDB-style query over the final state), `final_state_match` (the whole
  final state against an expected one)
* events: `event_count_metric` (how many tool calls, messages, ... of a kind),
  `trajectory_match` (the tool calls against an expected list or an ADK golden)
* judgement: `llm_judge` (a model reads the transcript and gives a verdict),
  `user_fidelity` (did the simulated user stay in its role?)
* ADK's own metrics: `adk_metric` (any metric of ADK's registry, run by ADK)
* invariants: `never_called`, `never` (a call before another, a state, a
  predicate), `at_most`, `no_tool_error_twice`, `never_in_arguments`,
  `never_said`: rules checked as the run happens (``EvalCase(invariants=)``,
  stopping the run at the breaking step) or, as metrics, on a finished trace

Write your own: any object with a `name` and ``evaluate(trace) -> MetricResult``
(sync or async) is a `Metric`. `score_session` scores a stored ADK session;
`render_transcript` renders a trace as the judges read it.

Names are imported on first use, so a run whose cases use none of ADK's own
metrics does not import ADK's evaluation package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .._transcript import render_transcript
    from ._adk import AdkMetric, adk_metric, adk_metrics_from_config
    from ._events import EventCountMetric, event_count_metric
    from ._fidelity import UserFidelity, user_fidelity
    from ._invariants import Invariant, Seen
    from ._judge import LlmJudge, llm_judge
    from ._query import StateQueryMetric, state_query
    from ._rules import (
        at_most,
        never,
        never_called,
        never_in_arguments,
        never_said,
        no_tool_error_twice,
        state_matches,
    )
    from ._scoring import score_session
    from ._state import FinalStateMetric, StateMetric, final_state_match, state_metric
    from ._trajectory import ExpectedCall, TrajectoryMetric, trajectory_match
    from ._types import Metric, MetricResult


__all__ = [
    # the protocol and its result
    "Metric",
    "MetricResult",
    # state
    "StateMetric",
    "state_metric",
    "FinalStateMetric",
    "final_state_match",
    "StateQueryMetric",
    "state_query",
    # events
    "EventCountMetric",
    "event_count_metric",
    "ExpectedCall",
    "TrajectoryMetric",
    "trajectory_match",
    # judgement
    "LlmJudge",
    "llm_judge",
    "UserFidelity",
    "user_fidelity",
    "AdkMetric",
    "adk_metric",
    "adk_metrics_from_config",
    # invariants: checked live (EvalCase(invariants=...)) or post hoc, as metrics
    "Invariant",
    "Seen",
    "never",
    "never_called",
    "at_most",
    "no_tool_error_twice",
    "never_in_arguments",
    "never_said",
    "state_matches",
    # scoring traces and stored sessions
    "score_session",
    "render_transcript",
]


_EXPORTS = {
    "Metric": "_types",
    "MetricResult": "_types",
    "StateMetric": "_state",
    "state_metric": "_state",
    "FinalStateMetric": "_state",
    "final_state_match": "_state",
    "StateQueryMetric": "_query",
    "state_query": "_query",
    "EventCountMetric": "_events",
    "event_count_metric": "_events",
    "ExpectedCall": "_trajectory",
    "TrajectoryMetric": "_trajectory",
    "trajectory_match": "_trajectory",
    "LlmJudge": "_judge",
    "llm_judge": "_judge",
    "UserFidelity": "_fidelity",
    "user_fidelity": "_fidelity",
    "AdkMetric": "_adk",
    "adk_metric": "_adk",
    "adk_metrics_from_config": "_adk",
    "Invariant": "_invariants",
    "Seen": "_invariants",
    "never": "_rules",
    "never_called": "_rules",
    "at_most": "_rules",
    "no_tool_error_twice": "_rules",
    "never_in_arguments": "_rules",
    "never_said": "_rules",
    "state_matches": "_rules",
    "score_session": "_scoring",
    "render_transcript": "_judge",
}

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
