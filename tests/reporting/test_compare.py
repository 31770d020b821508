"""compare_reports: status and pass-rate changes, metric score deltas."""

from __future__ import annotations

from adk_eval.reporting import compare_reports


def run(outcome: str, scores: dict[str, float | None], passed=True) -> dict:
    return {
        "name": "c",
        "outcome": outcome,
        "metrics": {name: {"score": s, "passed": passed} for name, s in scores.items()},
    }


def report(cases: dict[str, list[dict]], repeat: int = 1) -> dict:
    return {
        "repeat": repeat,
        "cases": [
            {
                "name": name,
                "pass_rate": sum(r["outcome"] == "passed" for r in runs) / len(runs) if runs else 0,
                "label": "flaky",
            }
            for name, runs in cases.items()
        ],
        "results": [{**r, "name": name} for name, runs in cases.items() for r in runs],
    }


def test_regressions_improvements_added_removed_and_metric_deltas():
    before = report(
        {
            "stays": [run("passed", {"judge": 0.9})],
            "breaks": [run("passed", {"judge": 0.8})],
            "heals": [run("failed", {}, passed=False)],
            "gone": [run("passed", {})],
        }
    )
    after = report(
        {
            "stays": [run("passed", {"judge": 0.7})],
            "breaks": [run("error", {"judge": 0.8})],
            "heals": [run("passed", {})],
            "new": [run("passed", {})],
        }
    )
    comparison = compare_reports(before, after)
    kinds = {c.name: c.kind for c in comparison.changes}
    assert kinds == {
        "stays": "unchanged",
        "breaks": "regression",
        "heals": "improvement",
        "new": "added",
        "gone": "removed",
    }
    stays = next(c for c in comparison.changes if c.name == "stays")
    assert stays.metric_deltas == {"judge": (0.9, 0.7)}
    breaks = comparison.regressions[0]
    assert (breaks.before, breaks.after, breaks.rate_before, breaks.rate_after) == (
        "passed",
        "error",
        1.0,
        0.0,
    )


def test_with_repeats_pass_rates_are_compared():
    before = report({"c": [run("passed", {}), run("passed", {}), run("failed", {})]}, repeat=3)
    after = report({"c": [run("passed", {}), run("failed", {}), run("failed", {})]}, repeat=3)
    [change] = compare_reports(before, after).changes
    assert change.kind == "regression"
    assert (round(change.rate_before, 2), round(change.rate_after, 2)) == (0.67, 0.33)
    assert change.before == "flaky"
