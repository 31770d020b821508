"""The CLI's tables: every case recognisable, however narrow the terminal."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from rich.console import Console

from adk_eval import EvalCase, run_eval_suite
from adk_eval._cli._output import suite_table
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


@pytest.mark.parametrize("repeat", [1, 2])
async def test_at_80_columns_no_case_or_metric_name_is_cut(repeat):
    from adk_eval.metrics import state_metric

    long_metric = "the_handover_carries_the_patients_availability_for_tuesday"
    cases = [
        EvalCase(
            name=name,
            agent=LlmAgent(name="a", model=ScriptedLlm(["ok"])),
            first_message="hi",
            metrics=[state_metric(long_metric, "session", "handover", lambda v: v is not None)],
        )
        for name in NAMES
    ]
    suite = await run_eval_suite(cases, repeat=repeat)
    console = Console(width=80, record=True, color_system=None)
    console.print(suite_table(suite))
    text = "".join(console.export_text().split())  # what folded is read back whole
    table_cells = text.replace("│", "").replace("┃", "")
    for name in NAMES:
        assert name.replace("-", "") in table_cells.replace("-", ""), console.export_text()
    assert "…" not in console.export_text()
