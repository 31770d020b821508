"""The JSON report of a suite (schema ``adk-eval.report``, version 1).

The schema is shipped as ``report.schema.json`` next to this module and
documented in ``docs/json-report.md``. A change that removes or renames a field
bumps `REPORT_VERSION`; new optional fields do not.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from importlib import resources
from typing import Any

from .. import __version__
from .._result import EvalResult
from .._statistics import Interval, wilson
from .._suites._results import CaseStats, EvalSuiteResult
from .._trace import EvalTrace, Message, StateChange, TokenUsage, ToolCall, ToolResponse
from .._transcript import render_transcript
from .._turns import jsonable
from ..metrics._invariants import holds
from ._safety import safety_section

__all__ = [
    "REPORT_SCHEMA",
    "REPORT_VERSION",
    "load_report_schema",
    "suite_report",
    "with_intervals",
]

REPORT_SCHEMA = "adk-eval.report"
REPORT_VERSION = 1


def _usage(usage: TokenUsage) -> dict[str, int]:
    return {
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
    }


def result_record(result: EvalResult) -> dict[str, Any]:
    """One run as report data."""
    termination = result.termination
    return {
        "name": result.name,
        "attempt": result.attempt,
        "status": result.status,
        "outcome": result.outcome,
        "xfail": result.xfail,
        "turns": result.turns,
        "seed": result.seed,
        "duration_ms": round(result.duration_ms, 3),
        "termination_reason": result.termination_reason,
        "termination": None
        if termination is None
        else jsonable(
            {"kind": termination.kind, "limit": termination.limit, "value": termination.value}
        ),
        "error": None
        if result.error is None
        else {
            "phase": result.error.phase,
            "type": result.error.type,
            "message": result.error.message,
        },
        "metrics": {
            name: jsonable(
                {
                    "passed": metric.passed,
                    "score": metric.score,
                    "value": metric.value,
                    "evidence": list(metric.evidence),
                    "error": metric.error,
                    "applicable": metric.applicable,
                    "advisory": metric.advisory,
                }
            )
            for name, metric in result.metrics.items()
        },
        "token_usage": _usage(result.token_usage),
        "usage": [item.to_data() for item in result.usage],
        "cost_usd": result.cost_usd,
        "provider": result.provider.to_data(),
        "attribution": result.attribution.to_data() if result.attribution else None,
        "user_agent_token_usage": _usage(result.user_agent_token_usage),
        "initial_state": jsonable(result.initial_state),
        "final_state": jsonable(result.final_state),
        "transcript": render_transcript(result.trace, include_state=False),
        "conversation": conversation_records(result.trace, _markers(result)),
        "warnings": list(result.warnings),
    }


def _injected(response: Any, markers: dict[str, str]) -> dict[str, str]:
    """``{"injected": ATTACK}`` when `response` carries one of `markers` (else nothing)."""
    for marker, attack in markers.items():
        if holds(response, marker):
            return {"injected": attack}
    return {}


def _markers(result: EvalResult) -> dict[str, str]:
    """Injected payloads' texts -> their attack, from the run's attack metrics."""
    values = [metric.value for metric in result.metrics.values()]
    return {
        value["marker"]: value["attack"]
        for value in values
        if isinstance(value, dict) and value.get("marker") and value.get("attack")
    }


def conversation_records(
    trace: EvalTrace, markers: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """The conversation as structured entries, in order, for the HTML report.

    Kinds: ``message`` (``role``, ``text``), ``tool_call`` (``name``, ``args``,
    ``response``, ``long_running``, ``answered_by``: see `EvalTrace.source_of`;
    ``raised``: what the mock, simulation or fault raised instead of answering;
    ``injected``: the attack whose payload (one of `markers`) its answer carries),
    ``tool_response``
    (a response that came in its own turn: a yield's answer, a confirmed call),
    ``state_change`` (``delta``, and ``source``: the user agents that made it) and
    ``error`` (``code``, ``message``). Every entry has ``author`` and ``path``,
    the `AgentTool` calls it ran inside (outermost first).
    """
    records: list[dict[str, Any]] = []
    answered_in_place = {
        item.call_id for item in trace.all_items if isinstance(item, ToolCall) and item.response
    }
    for item in trace.all_items:
        base: dict[str, Any] = {"author": item.author, "path": list(item.path)}
        if isinstance(item, Message):
            records.append({"kind": "message", "role": item.role, "text": item.text, **base})
        elif isinstance(item, ToolCall):
            records.append(
                {
                    "kind": "tool_call",
                    "name": item.name,
                    "args": jsonable(item.args),
                    "response": jsonable(item.response),
                    "long_running": item.long_running,
                    **trace.notes(item),
                    **_injected(item.response, markers or {}),
                    **base,
                }
            )
        elif isinstance(item, ToolResponse):
            if item.call_id in answered_in_place and item.author != "user":
                continue  # shown with its call
            records.append(
                {
                    "kind": "tool_response",
                    "name": item.name,
                    "response": jsonable(item.response),
                    **base,
                }
            )
        elif isinstance(item, StateChange):
            source = (item.event.custom_metadata or {}).get("source")
            records.append(
                {"kind": "state_change", "delta": jsonable(item.delta), "source": source, **base}
            )
        else:
            records.append({"kind": "error", "code": item.code, "message": item.message, **base})
    return records


def case_record(stats: CaseStats, description: str | None, xfail: str | None) -> dict[str, Any]:
    """One case's repeat statistics as report data."""
    return {
        "name": stats.name,
        "description": description,
        "xfail": xfail,
        "repeat": stats.repeat,
        "runs": len(stats.runs),
        "passes": stats.passes,
        "pass_rate": stats.pass_rate,
        "pass_hat_k": stats.pass_hat_k,
        "pass_at_k": stats.pass_at_k,
        "label": stats.label,
        "cost_usd": stats.cost_usd,
        "intervals": {
            "pass_rate": stats.pass_rate_interval.to_dict(),
            "pass_hat_k": stats.pass_hat_k_estimate.to_dict(),
            "pass_at_k": stats.pass_at_k_estimate.to_dict(),
        },
    }


def suite_report(
    suite: EvalSuiteResult, *, created_at: datetime | None = None, command: str | None = None
) -> dict[str, Any]:
    """The whole suite as a JSON-ready dict following ``report.schema.json``.

    `command` (the one that ran the suite) goes into the safety block's replays.
    """
    first = {r.name: r for r in reversed(suite.results)}
    safety = safety_section(suite.results, suite.seed, command)
    return {
        "schema": REPORT_SCHEMA,
        "version": REPORT_VERSION,
        "created_at": (created_at or datetime.now(UTC)).isoformat(),
        "adk_eval_version": __version__,
        "repeat": suite.repeat,
        "seed": suite.seed,
        "duration_ms": round(suite.duration_ms, 3),
        "passed": suite.ok,
        "pass_rate": suite.pass_rate,
        "intervals": {
            "pass_rate": suite.pass_rate_interval.to_dict(),
            "pass_hat_k": suite.pass_hat_k_interval.to_dict(),
            "pass_at_k": suite.pass_at_k_interval.to_dict(),
        },
        "adaptive": None
        if suite.adaptive is None
        else {
            "max": suite.adaptive.max,
            "threshold": suite.adaptive.threshold,
            "confidence": suite.adaptive.confidence,
            "attempts_saved": suite.attempts_saved,
        },
        "cost": {
            "total_usd": suite.cost_usd,
            "per_passing_run_usd": suite.cost_per_passing_run,
            "tokens": suite.tokens,
            "unpriced_models": suite.unpriced_models,
        },
        "provider": suite.provider.to_data(),
        "stopped_early": suite.stopped_early,
        "interrupted": suite.interrupted,
        "summary": dict(suite.summary),
        "not_run": list(suite.not_run),
        "runs_for_real": suite.runs_for_real.to_data(),
        "cases": [
            case_record(
                stats,
                first[stats.name].description if stats.name in first else None,
                first[stats.name].xfail if stats.name in first else None,
            )
            for stats in suite.cases
        ],
        "results": [result_record(result) for result in suite.results],
        **({"safety": safety} if safety is not None else {}),
    }


def with_intervals(report: dict[str, Any]) -> dict[str, Any]:
    """`report`, with the 95 % intervals a report written before they existed lacks.

    Computed from its counts as `suite_report` computes them (the suite's pass rate
    over its runs, expected failures aside; each case's over its runs).
    """
    if "intervals" in report:
        return report
    s = report["summary"]
    counted = s["total"] - s["not_run"] - s["xfailed"]
    cases = [
        {**case, "intervals": {"pass_rate": wilson(case["passes"], case["runs"]).to_dict()}}
        for case in report["cases"]
    ]
    rate = wilson(s["passed"], counted) if counted > 0 else Interval(1.0, 0.0, 1.0)
    return {**report, "cases": cases, "intervals": {"pass_rate": rate.to_dict()}}


def load_report_schema() -> dict[str, Any]:
    """The JSON Schema of the report."""
    text = resources.files(__package__).joinpath("report.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema
