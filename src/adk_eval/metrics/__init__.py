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
  `never_said`, `claimed_actions` (no claimed action without a successful tool
  call before it: English rules, an optional judge): rules checked as the run
  happens (``EvalCase(invariants=)``, stopping the run at the breaking step) or,
  as metrics, on a finished trace

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
    from .._transcript import render_transcript as render_transcript
    from ._adk import AdkMetric as AdkMetric
    from ._adk import adk_metric as adk_metric
    from ._adk import adk_metrics_from_config as adk_metrics_from_config
    from ._claims import claimed_actions as claimed_actions
    from ._events import EventCountMetric as EventCountMetric
    from ._events import event_count_metric as event_count_metric
    from ._fidelity import UserFidelity as UserFidelity
    from ._fidelity import user_fidelity as user_fidelity
    from ._invariants import Invariant as Invariant
    from ._invariants import Seen as Seen
    from ._judge import LlmJudge as LlmJudge
    from ._judge import llm_judge as llm_judge
    from ._query import StateQueryMetric as StateQueryMetric
    from ._query import state_query as state_query
    from ._rules import at_most as at_most
    from ._rules import never as never
    from ._rules import never_called as never_called
    from ._rules import never_in_arguments as never_in_arguments
    from ._rules import never_said as never_said
    from ._rules import no_tool_error_twice as no_tool_error_twice
    from ._rules import state_matches as state_matches
    from ._scoring import score_session as score_session
    from ._state import FinalStateMetric as FinalStateMetric
    from ._state import StateMetric as StateMetric
    from ._state import final_state_match as final_state_match
    from ._state import state_metric as state_metric
    from ._trajectory import ExpectedCall as ExpectedCall
    from ._trajectory import TrajectoryMetric as TrajectoryMetric
    from ._trajectory import trajectory_match as trajectory_match
    from ._types import Metric as Metric
    from ._types import MetricResult as MetricResult

_EXPORTS = {
    # the protocol and its result
    "Metric": "._types",
    "MetricResult": "._types",
    # state
    "StateMetric": "._state",
    "state_metric": "._state",
    "FinalStateMetric": "._state",
    "final_state_match": "._state",
    "StateQueryMetric": "._query",
    "state_query": "._query",
    # events
    "EventCountMetric": "._events",
    "event_count_metric": "._events",
    "ExpectedCall": "._trajectory",
    "TrajectoryMetric": "._trajectory",
    "trajectory_match": "._trajectory",
    # judgement
    "LlmJudge": "._judge",
    "llm_judge": "._judge",
    "UserFidelity": "._fidelity",
    "user_fidelity": "._fidelity",
    "AdkMetric": "._adk",
    "adk_metric": "._adk",
    "adk_metrics_from_config": "._adk",
    # invariants: checked live (EvalCase(invariants=...)) or post hoc, as metrics
    "Invariant": "._invariants",
    "Seen": "._invariants",
    "never": "._rules",
    "never_called": "._rules",
    "at_most": "._rules",
    "no_tool_error_twice": "._rules",
    "never_in_arguments": "._rules",
    "never_said": "._rules",
    "claimed_actions": "._claims",
    "state_matches": "._rules",
    # scoring traces and stored sessions
    "score_session": "._scoring",
    "render_transcript": ".._transcript",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
