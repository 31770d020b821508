"""Metrics: small objects that score an `EvalTrace`.

Built-in metrics, by what they read:

* state: `state_metric` (one value of the final state)
* events: `event_count_metric` (how many tool calls, messages, ... of a kind)

Write your own: any object with a `name` and ``evaluate(trace) -> MetricResult``
(sync or async) is a `Metric`.
"""

from .events import EventCountMetric, event_count_metric
from .state import StateMetric, state_metric
from .types import Metric, MetricResult

__all__ = [
    # the protocol and its result
    "Metric",
    "MetricResult",
    # state
    "StateMetric",
    "state_metric",
    # events
    "EventCountMetric",
    "event_count_metric",
]
