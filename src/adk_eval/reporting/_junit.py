"""JUnit XML for CI systems: one ``<testcase>`` per run.

A run's warnings (what the sandbox saw, a failed compaction) are written
whatever its outcome, as properties ``warning.1``, ``warning.2``, ... and as
its ``<system-err>``, one ``warning: ...`` line each. The suite's properties
hold its pass rate with its 95 % interval (``pass_rate``, ``pass_rate.low``,
``pass_rate.high``) and, with repeats, pass^k and pass@k over the cases and each
case's own (``case.NAME.pass_rate``, ``case.NAME.pass_hat_k``).

What model calls met on the way to their providers (`ProviderStats`) is a
testcase's properties ``provider.retries``, ``provider.rate_limited``,
``provider.waited_s``, ``provider.cache_hits``, ... and, summed over the runs,
the testsuite's: only the fields that are not zero, and only for runs (a suite)
that retried, waited, used the cache or a cassette.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from datetime import UTC, datetime
from pathlib import Path

from .._result import EvalResult
from .._statistics import Interval
from .._suites._results import EvalSuiteResult
from .._transcript import render_transcript
from ..models._gateway._stats import ProviderStats

__all__ = ["junit_xml", "write_junit_xml"]


def _interval_properties(properties: ET.Element, prefix: str, interval: Interval) -> None:
    """``PREFIX`` = the estimate, ``PREFIX.low`` / ``PREFIX.high`` = its 95 % interval."""
    for suffix, value in (
        ("", interval.estimate),
        (".low", interval.low),
        (".high", interval.high),
    ):
        ET.SubElement(properties, "property", name=f"{prefix}{suffix}", value=f"{value:.4f}")


def _provider_properties(properties: ET.Element, stats: ProviderStats) -> None:
    """``provider.FIELD`` for each field of `stats` that is not zero (nothing when uneventful)."""
    if not stats.eventful:
        return
    for key, value in stats.to_data().items():
        if value is None:  # the cache saved an unknown amount
            text = "unknown"
        elif not value:
            continue
        elif key == "saved_usd":
            text = f"{value:.6f}"
        elif isinstance(value, float):
            text = f"{value:.3f}"
        else:
            text = str(value)
        ET.SubElement(properties, "property", name=f"provider.{key}", value=text)


def _testcase(result: EvalResult, repeat: int) -> ET.Element:
    name = result.name if repeat == 1 else f"{result.name}[{result.attempt}]"
    case = ET.Element(
        "testcase", classname="adk_eval", name=name, time=f"{result.duration_ms / 1000:.3f}"
    )
    properties = ET.SubElement(case, "properties")
    for key, value in [
        ("status", result.status),
        ("outcome", result.outcome),
        ("turns", str(result.turns)),
        ("termination_reason", result.termination_reason or ""),
        ("tokens", str(result.token_usage.total_tokens)),
        ("cost_usd", "unknown" if result.cost_usd is None else f"{result.cost_usd:.6f}"),
    ]:
        ET.SubElement(properties, "property", name=key, value=value)
    _provider_properties(properties, result.provider)
    for metric_name, metric in result.metrics.items():
        ET.SubElement(
            properties,
            "property",
            name=f"metric.{metric_name}",
            value=metric.verdict + ("" if metric.score is None else f" {metric.score:g}"),
        )
    if result.attribution is not None:
        for key, value in result.attribution.to_data().items():
            if value is not None:
                text = f"{value:.2f}" if isinstance(value, float) else str(value)
                ET.SubElement(properties, "property", name=f"attribution.{key}", value=text)
    for number, warning in enumerate(result.warnings, start=1):
        ET.SubElement(properties, "property", name=f"warning.{number}", value=warning)
    outcome = result.outcome
    if outcome == "error":
        assert result.error is not None
        element = ET.SubElement(
            case, "error", message=result.error.message.splitlines()[0], type=result.error.phase
        )
        element.text = result.explain()
    elif outcome in ("failed", "terminated", "xpassed"):
        failed = ", ".join(result.failed_metrics) or outcome
        element = ET.SubElement(case, "failure", message=f"{outcome}: {failed}", type=outcome)
        element.text = result.explain()
    elif outcome == "xfailed":
        ET.SubElement(case, "skipped", message=f"xfail: {result.xfail}")
    ET.SubElement(case, "system-out").text = render_transcript(result.trace)
    if result.warnings:  # a passing run's too (Jenkins shows a test's stderr whatever its status)
        text = "\n".join(f"warning: {warning}" for warning in result.warnings)
        ET.SubElement(case, "system-err").text = text
    return case


def junit_xml(suite: EvalSuiteResult, *, name: str = "adk-eval") -> ET.ElementTree:
    """The suite as a JUnit XML tree (runs that did not finish are skipped entries)."""
    outcomes = [r.outcome for r in suite.results]
    attributes = {
        "name": name,
        "tests": str(len(suite.results) + suite.summary["not_run"]),
        "failures": str(sum(o in ("failed", "terminated", "xpassed") for o in outcomes)),
        "errors": str(outcomes.count("error")),
        "skipped": str(outcomes.count("xfailed") + suite.summary["not_run"]),
        "time": f"{suite.duration_ms / 1000:.3f}",
    }
    root = ET.Element("testsuites", attributes)
    testsuite = ET.SubElement(
        root,
        "testsuite",
        {**attributes, "timestamp": datetime.now(UTC).isoformat(timespec="seconds")},
    )
    properties = ET.SubElement(testsuite, "properties")
    _interval_properties(properties, "pass_rate", suite.pass_rate_interval)
    for key, cost in (
        ("cost_usd", suite.cost_usd),
        ("cost_per_passing_run_usd", suite.cost_per_passing_run),
    ):
        value = "unknown" if cost is None else f"{cost:.6f}"
        ET.SubElement(properties, "property", name=key, value=value)
    _provider_properties(properties, suite.provider)
    if suite.adaptive is not None:
        ET.SubElement(properties, "property", name="adaptive", value=str(suite.adaptive))
        saved = str(suite.attempts_saved)
        ET.SubElement(properties, "property", name="attempts_saved", value=saved)
    if suite.repeat > 1:
        _interval_properties(properties, "pass_hat_k", suite.pass_hat_k_interval)
        _interval_properties(properties, "pass_at_k", suite.pass_at_k_interval)
        for stats in suite.cases:  # each case's own, over its runs
            _interval_properties(
                properties, f"case.{stats.name}.pass_rate", stats.pass_rate_interval
            )
            _interval_properties(
                properties, f"case.{stats.name}.pass_hat_k", stats.pass_hat_k_estimate
            )
    lines = suite.runs_for_real.lines()
    if lines:  # what ran for real, one property each (`runs_for_real.plugins`, ...)
        for line in lines:
            kind, _, item = line.partition(": ")
            ET.SubElement(properties, "property", name=f"runs_for_real.{kind}", value=item)
    for result in suite.results:
        testsuite.append(_testcase(result, suite.repeat))
    for case_name in suite.not_run:
        skipped = ET.SubElement(
            testsuite, "testcase", classname="adk_eval", name=case_name, time="0"
        )
        ET.SubElement(skipped, "skipped", message="not run: the suite stopped early")
    ET.indent(root)
    return ET.ElementTree(root)


def write_junit_xml(suite: EvalSuiteResult, path: Path) -> None:
    """Writes `junit_xml(suite)` to `path` (parent folders are created)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    junit_xml(suite).write(path, encoding="utf-8", xml_declaration=True)
