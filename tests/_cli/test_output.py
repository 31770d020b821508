"""The CLI's tables: every case recognisable, however narrow the terminal."""

from __future__ import annotations

import re

import pytest
from google.adk.agents import LlmAgent
from rich.console import Console

from adk_eval import EvalCase, run_eval_suite
from adk_eval._cli._output import suite_table
from adk_eval.models._gateway._stats import ProviderStats
from adk_eval.testing import ScriptedLlm

NAMES = [
    "travel-itinerary-planning-with-two-stops-paris",
    "travel-itinerary-planning-with-two-stops-rome",
]


@pytest.mark.parametrize("repeat", [1, 2])
async def test_two_cases_sharing_a_long_prefix_never_look_the_same(repeat):
    cases = [
        EvalCase(name=name, agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])), first_message="hi")
        for name in NAMES
    ]
    suite = await run_eval_suite(cases, repeat=repeat)
    console = Console(width=70, record=True, color_system=None)
    console.print(suite_table(suite))
    text = console.export_text()
    for name in NAMES:
        assert name in text, text


def test_runs_are_explained_once_per_way_they_ended():
    from adk_eval import EvalErrorInfo, EvalResult
    from adk_eval._cli._output import explanations

    def run(attempt, message, duration):
        error = EvalErrorInfo(phase="system", message=message, type="RuntimeError")
        return EvalResult(
            name="flaky", status="error", error=error, attempt=attempt, duration_ms=duration
        )

    texts = explanations([run(0, "down", 10), run(1, "slow", 20), run(2, "down", 30)])
    assert len(texts) == 2
    assert texts[0].splitlines()[1] == "2 runs ended this way (runs 1, 3)"
    assert "down" in texts[0]
    assert "slow" in texts[1]
    assert "runs ended this way" not in texts[1]
    passed = EvalResult(name="fine", status="passed")
    assert explanations([passed]) == []
    assert len(explanations([passed], every_run=True)) == 1


def render(renderable) -> str:
    console = Console(width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


async def test_rates_over_an_interrupted_suite_say_how_much_of_it_ran():
    from adk_eval._cli._output import summary_line
    from adk_eval._suites._results import suite_from_results

    suite = await run_eval_suite(
        [
            EvalCase(
                name="a", agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])), first_message="hi"
            )
        ]
    )
    partial = suite_from_results(
        suite.results, case_names=["a", "b"], repeat=1, duration_ms=1.0, stopped_early=True
    )

    line = render(summary_line(partial))
    assert "only 1 of 2 runs ran; pass rate 100% [21%, 100%]" in line


async def test_a_case_without_metrics_is_not_reported_as_a_plain_pass():
    from adk_eval._cli._output import unchecked_line

    agent = LlmAgent(name="a", model=ScriptedLlm(["ok"]))
    suite = await run_eval_suite([EvalCase(name="unchecked", agent=agent, first_message="hi")])

    assert "PASSED (no metrics)" in render(suite_table(suite))
    assert unchecked_line(suite) == (
        "note: 1 case(s) have no metrics, so passing only means they ran to the end: unchecked"
    )


LONG_METRIC = "the_handover_carries_the_patients_availability_for_tuesday"


def split_names(text: str, name: str) -> list[str]:
    """The pieces of `name` in `text` that are neither the whole name nor it cut with "…"."""
    pieces = [p for p in re.split(r"[\s│┃,;:]+", text) if len(p) > 3 and p.rstrip("…") in name]
    return [p for p in pieces if p != name and not (p.endswith("…") and name.startswith(p[:-1]))]


@pytest.mark.parametrize("width", [60, 80, 100, 140])
@pytest.mark.parametrize("repeat", [1, 2])
async def test_failed_metrics_are_never_split_inside_a_name(repeat, width):
    from adk_eval.metrics import state_metric

    cases = [
        EvalCase(
            name=name,
            agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])),
            first_message="hi",
            metrics=[
                state_metric(metric, "session", "handover", lambda v: v is not None)
                for metric in (LONG_METRIC, "asks_for_the_date")
            ],
        )
        for name in NAMES
    ]
    suite = await run_eval_suite(cases, repeat=repeat)
    console = Console(width=width, record=True, color_system=None)
    console.print(suite_table(suite))
    text = console.export_text()

    assert max(map(len, text.splitlines())) <= width, text  # fits: nothing cropped at the edge
    for metric in (LONG_METRIC, "asks_for_the_date"):
        assert split_names(text, metric) == [], text
        assert metric in text or f"{metric[:8]}" in text, text
    for name in NAMES:  # never cut: whole on a line, or folded and read back whole
        assert name in text or name in "".join(text.replace("│", "").split()), text


async def test_the_rate_and_pass_hat_k_say_which_expected_failures_they_left_out():
    from adk_eval._cli._output import summary_line
    from adk_eval.metrics import state_metric

    never = state_metric("escalated", "session", "escalation", lambda v: v == "999")
    agent = LlmAgent(name="a", model=ScriptedLlm(["ok"]))
    suite = await run_eval_suite(
        [
            EvalCase(name="greets", agent=agent, first_message="hi"),
            EvalCase(name="gap", agent=agent, first_message="hi", metrics=[never], xfail="known"),
        ],
        repeat=3,
    )

    line = " ".join(render(summary_line(suite)).split())
    assert "3 passed, 3 xfailed" in line
    assert "pass rate 100% [44%, 100%] (95% interval; 3 xfailed run(s) left out)" in line
    assert "pass^3 1/1 cases 100% [21%, 100%] (1 all-xfailed case(s) left out)" in line
    assert "xfailed" in render(suite_table(suite))  # its own row: 0/3, failed as expected


RETRIED = ProviderStats(calls=3, retries=2, rate_limited=2, waited_s=4.1)
CACHED = ProviderStats(calls=1, cache_hits=3, cache_misses=1, saved_usd=0.0012)


def test_an_explained_run_says_what_its_model_calls_met_at_their_providers():
    from adk_eval import EvalErrorInfo, EvalResult
    from adk_eval._cli._output import explanations

    def run(attempt, provider, duration=10):
        error = EvalErrorInfo(phase="system", message="down", type="RuntimeError")
        return EvalResult(
            name="books",
            status="error",
            error=error,
            attempt=attempt,
            duration_ms=duration,
            provider=provider,
        )

    (alone,) = explanations([run(0, RETRIED)])
    assert alone.splitlines()[1] == "providers: 2 retries (2 rate-limited), waited 4.1 s"

    # repeats that ended the same way are one explanation, whatever each waited
    (together,) = explanations([run(0, RETRIED, 10), run(1, CACHED, 20)])
    assert together.splitlines()[1:3] == [
        "2 runs ended this way (runs 1, 2)",
        "providers (2 runs together): 2 retries (2 rate-limited), waited 4.1 s; "
        "cache 3 hits / 1 miss, saved $0.0012",
    ]
    (quiet,) = explanations([run(0, ProviderStats(calls=4))])  # nothing worth a line
    assert "providers" not in quiet


def test_a_passed_run_gets_one_provider_line_and_only_when_something_happened():
    from adk_eval import EvalResult
    from adk_eval._cli._output import provider_lines

    runs = [
        EvalResult(name="books", status="passed", provider=RETRIED),
        EvalResult(name="books", status="passed", attempt=1, provider=CACHED),
        EvalResult(name="greets", status="passed", provider=ProviderStats(calls=2)),
        EvalResult(name="fails", status="failed", provider=RETRIED),  # explained instead
    ]
    assert provider_lines(runs) == [  # what the cache answered is the suite's line alone
        "providers of runs that passed:",
        "  books (run 1): 2 retries (2 rate-limited), waited 4.1 s",
    ]
    assert provider_lines(runs[:1]) == [
        "providers of runs that passed:",
        "  books: 2 retries (2 rate-limited), waited 4.1 s",
    ]
    assert provider_lines(runs, every_run=True) == []  # -v: every run is explained
    assert provider_lines(runs[2:3]) == []


def test_many_runs_that_waited_are_listed_longest_wait_first_and_cut_short():
    from adk_eval import EvalResult
    from adk_eval._cli._output import PROVIDER_LINES_AT_MOST, provider_lines

    runs = [
        EvalResult(name=f"c{n}", status="passed", provider=ProviderStats(retries=1, waited_s=n))
        for n in range(1, PROVIDER_LINES_AT_MOST + 4)
    ]
    lines = provider_lines(runs)
    assert lines[1].startswith(f"  c{PROVIDER_LINES_AT_MOST + 3}: ")
    assert len(lines) == PROVIDER_LINES_AT_MOST + 2
    assert lines[-1] == "  ... and 3 more (the JSON report has each)"


def test_the_suite_says_what_its_model_calls_met_only_when_something_happened():
    from adk_eval import EvalResult
    from adk_eval._cli._output import provider_line
    from adk_eval._suites._results import suite_from_results

    def suite(*stats):
        runs = [EvalResult(name=f"c{n}", status="passed", provider=s) for n, s in enumerate(stats)]
        return suite_from_results(
            runs, case_names=[r.name for r in runs], repeat=1, duration_ms=1.0
        )

    assert provider_line(suite(RETRIED, CACHED, RETRIED)) == (
        "providers: 4 retries (4 rate-limited), waited 8.2 s; cache 3 hits / 1 miss, saved $0.0012"
    )
    assert provider_line(suite(ProviderStats(calls=3), ProviderStats())) is None
