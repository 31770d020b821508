"""compare_reports: status and pass-rate changes, metric score deltas."""

from __future__ import annotations

import pytest

from adk_eval._statistics import fisher
from adk_eval.reporting import compare_reports
from adk_eval.reporting._compare import noise_floor


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


def repeated(outcomes: dict[str, tuple[int, int]]) -> dict:
    """A report where each case passed `passes` of `runs`."""
    return report(
        {
            name: [run("passed", {})] * passes + [run("failed", {}, passed=False)] * (runs - passes)
            for name, (passes, runs) in outcomes.items()
        },
        repeat=max(runs for _, runs in outcomes.values()),
    )


def test_a_decided_regression_an_improvement_and_noise():
    before = repeated({"breaks": (8, 8), "heals": (0, 8), "wobbles": (5, 8), "once": (1, 1)})
    after = repeated({"breaks": (1, 8), "heals": (8, 8), "wobbles": (3, 8), "once": (0, 1)})

    comparison = compare_reports(before, after)

    decided = {c.name: (c.kind, c.decision) for c in comparison.changes}
    assert decided == {
        "breaks": ("regression", "regressed"),
        "heals": ("improvement", "improved"),
        "wobbles": ("regression", "no evidence"),  # 5/8 -> 3/8 is within chance
        "once": ("regression", "no evidence"),  # one run a side can never decide
    }
    breaks = next(c for c in comparison.changes if c.name == "breaks")
    assert breaks.passes == (8, 8, 1, 8)
    assert breaks.p_value == pytest.approx(fisher(8, 8, 1, 8)[0])
    assert [c.name for c in comparison.decided_regressions] == ["breaks"]
    assert comparison.passes == (14, 25, 12, 25)
    assert comparison.decision == "no evidence"  # the suite's runs, pooled, moved by chance


def test_holm_keeps_a_borderline_drop_from_being_called_among_many_cases():
    # 4/4 -> 0/4 has p = 1/70 = 0.014: decided alone, not among 10 cases (0.05 / 10 = 0.005)
    alone = compare_reports(repeated({"c": (4, 4)}), repeated({"c": (0, 4)}))
    assert alone.changes[0].decision == "regressed"

    many = {f"same{i}": (4, 4) for i in range(9)}
    among = compare_reports(repeated({"c": (4, 4), **many}), repeated({"c": (0, 4), **many}))
    assert next(c for c in among.changes if c.name == "c").decision == "no evidence"
    assert among.changes[0].p_value == pytest.approx(1 / 70)


def test_the_suite_is_decided_on_its_pooled_runs():
    cases = {f"c{i}": (4, 4) for i in range(5)}
    worse = {f"c{i}": (2, 4) for i in range(5)}
    comparison = compare_reports(repeated(cases), repeated(worse))

    assert comparison.decision == "regressed"
    assert comparison.p_value == pytest.approx(fisher(20, 20, 10, 20)[0])
    assert not comparison.decided_regressions  # no case alone is decided (4/4 -> 2/4)


def test_the_noise_floor_is_the_largest_move_between_stored_runs():
    floor = noise_floor([1.0, 0.5, 0.5, 0.75])

    assert (floor.runs, floor.changed, floor.largest) == (4, 2, 0.5)
    assert str(floor) == "±50% (2/3)"
    assert str(noise_floor([1.0])) == "-"


def test_expected_failures_are_left_out_of_the_tests_as_of_the_pass_rate():
    passed, failed = run("passed", {}), run("failed", {}, passed=False)
    before = report({"breaks": [passed] * 4, "gap": [passed] * 4}, repeat=4)
    after = report({"breaks": [failed] * 4, "gap": [run("xfailed", {}, passed=False)] * 4}, 4)

    comparison = compare_reports(before, after)

    gap = next(c for c in comparison.changes if c.name == "gap")
    assert (gap.decision, gap.p_value, gap.passes, gap.xfailed) == (
        "no evidence",
        None,  # nothing to test: every run of B failed as expected
        (4, 4, 0, 0),
        (0, 4),
    )
    # Holm's correction spans the one case tested: 4/4 -> 0/4 (p = 0.014) is decided
    assert [c.name for c in comparison.decided_regressions] == ["breaks"]
    assert comparison.passes == (8, 8, 0, 4)  # each run's pass rate: xfailed runs left out
