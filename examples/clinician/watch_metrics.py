"""The metrics `adk-eval watch` scores the clinician's production store with.

    adk-eval watch sqlite:///production/sessions.db --metrics examples/clinician/watch_metrics.py

Cheap metrics only (they read the events and the state, no judge), so a watch
over the store `production.py` writes runs offline and scores every
conversation. Not an ``*_eval.py`` file: ``adk-eval run examples/clinician``
leaves it out.
"""

from __future__ import annotations

from adk_eval.metrics import event_count_metric

__all__ = ["METRICS"]

METRICS = [
    event_count_metric(  # escalated or handed over: the patient left with a pathway
        name="routed",
        event_type="tool_call",
        filter=lambda call: call.name in {"escalate", "handover"},
        assertion=lambda count: count >= 1,
    ),
    event_count_metric(
        name="efficient_triage",
        event_type="tool_call",
        filter=lambda call: call.name == "ask",
        assertion=lambda count: count <= 5,
    ),
]
