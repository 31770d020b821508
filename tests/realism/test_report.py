"""The realism report finds a behaviour gap built in on purpose and calls no gap noise."""

from __future__ import annotations

import json
import random

import pytest
from click.testing import CliRunner
from google.adk.agents import LlmAgent
from google.adk.sessions import Session

from adk_eval import EvalCase, ScriptedUserAgent, UserAgents, run_eval_suite
from adk_eval._cli import main
from adk_eval.production import Redactor
from adk_eval.realism._report import realism_report
from adk_eval.realism._runs import runs_of_report
from adk_eval.testing import ScriptedLlm, text_event, user_event

QUESTION = "What is your date of birth?"


def conversation(index: int, direct: bool, passed: bool | None = None) -> Session:
    """A user asks for a booking; asked a question, they answer it directly or dodge it."""
    events = [
        user_event("I need to book a blood test"),
        text_event("desk", QUESTION),
        user_event("12 March 1980" if direct else "not sure, does it matter?"),
        text_event("desk", "Booked for Tuesday." if direct else "I need it to book."),
    ]
    return Session(id=f"s{index}", app_name="clinic", user_id="u", events=events)


def group(rate: float, n: int, rng: random.Random, offset: int = 0) -> list[Session]:
    """`n` conversations, `rate` of them (rounded) answering directly, in a seeded order."""
    direct = [i < round(rate * n) for i in range(n)]
    rng.shuffle(direct)
    return [conversation(offset + i, answers) for i, answers in enumerate(direct)]


def drawn(rate: float, n: int, rng: random.Random, offset: int = 0) -> list[Session]:
    """`n` conversations, each answering directly with probability `rate`."""
    return [conversation(offset + i, rng.random() < rate) for i in range(n)]


def as_runs(sessions: list[Session]) -> list[tuple[list, bool]]:
    return [(s.events, "Booked" in (s.events[-1].content.parts[0].text or "")) for s in sessions]


@pytest.mark.slow
async def test_a_twenty_point_gap_in_cooperation_is_found_at_100_conversations():
    rng = random.Random(7)
    real, simulated = group(0.70, 100, rng), group(0.90, 100, rng, offset=100)

    report = await realism_report(real, as_runs(simulated))

    by_name = {c.name: c for c in report.comparisons}
    direct = by_name["answered_directly_rate"]
    assert direct.significant
    assert round(direct.difference.estimate, 2) == 0.20
    assert report.comparisons[0].name in {"answered_directly_rate", "answers_direct"}
    words = report.lines()
    assert words[0].startswith("realism: 100 real conversation(s) against 100 simulated")
    assert any(
        "answer the agent's questions directly" in line and "unlikely" in line for line in words
    )
    assert report.distance is not None
    assert report.distance.p_value < 0.05


def forthcoming(index: int, asking_agent: bool) -> Session:
    """A user who gives one detail in every message the agent leaves free."""
    said = ["Book a table at Rosa's", "On Friday", "At 8 pm"]
    replies = ["Sure.", "Noted.", "Booked."]
    if asking_agent:  # the agent asks for one detail: answered, not volunteered
        said, replies = [said[0], "4 people", said[1]], ["How many people?", *replies[1:]]
    events = [e for pair in zip(said, replies, strict=True) for e in _turn(*pair)]
    return Session(id=f"f{index}", app_name="clinic", user_id="u", events=events)


def _turn(user: str, desk: str) -> list:
    return [user_event(user), text_event("desk", desk)]


async def test_an_agent_that_asks_more_does_not_make_its_users_look_less_forthcoming():
    real = [forthcoming(i, asking_agent=False) for i in range(30)]
    simulated = [forthcoming(30 + i, asking_agent=True) for i in range(30)]

    report = await realism_report(real, as_runs(simulated), resamples=200)

    by_name = {c.name: c for c in report.comparisons}
    assert "volunteered" not in by_name  # a count: 3 facts against 2, the agent's doing
    volunteering = by_name["volunteered_rate"]  # per message the agent left free: alike
    assert volunteering.difference is not None
    assert volunteering.difference.estimate == 0
    assert not volunteering.significant


@pytest.mark.slow
async def test_no_gap_is_called_noise_in_at_least_95_percent_of_seeded_repetitions():
    false_alarms = 0
    for seed in range(40):
        rng = random.Random(seed)
        real, simulated = drawn(0.70, 100, rng), drawn(0.70, 100, rng, offset=100)
        report = await realism_report(real, as_runs(simulated), seed=seed, resamples=200)
        by_name = {c.name: c for c in report.comparisons}
        false_alarms += by_name["answered_directly_rate"].significant
    assert false_alarms <= 2  # 5 % of 40


async def test_the_gap_in_pass_rate_compares_real_outcomes_with_simulated_verdicts():
    real = [conversation(i, direct=i < 50) for i in range(100)]
    outcomes = {s.id: i < 50 for i, s in enumerate(real)}  # real users: 50 % reached their goal
    simulated = as_runs([conversation(i, direct=i < 90) for i in range(100)])  # 90 % passed

    report = await realism_report(real, simulated, outcomes=outcomes, resamples=200)

    assert report.gap is not None
    assert round(report.gap.gap.estimate, 2) == 0.40
    assert "simulated" in report.gap.sentence()


async def test_simulated_runs_are_measured_without_their_stop_signal_and_reports_carry_them(
    tmp_path,
):
    agent = LlmAgent(name="desk", model=ScriptedLlm([QUESTION, "Booked for Tuesday."]))
    cases = [
        EvalCase(
            name=f"c{i}",
            agent=agent,
            first_message="I need to book a blood test",
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="patient", script=["12 March 1980", "</finished>"])
            ),
        )
        for i in range(3)
    ]
    suite = await run_eval_suite(cases)
    report = await realism_report(
        [conversation(0, True)], suite.results, redactor=Redactor.none(), resamples=200
    )
    turns = {c.name: c for c in report.comparisons}["turns"]
    assert turns.simulated.estimate.estimate == turns.real.estimate.estimate == 2

    from adk_eval.reporting import suite_report

    path = tmp_path / "runs.json"
    path.write_text(json.dumps(suite_report(suite), default=str))
    runs = runs_of_report(path)
    assert len(runs) == 3
    assert [e.author for e in runs[0][0]][:2] == ["user", "desk"]


def test_adk_eval_realism_prints_the_report_and_writes_its_json(tmp_path):
    rng = random.Random(3)
    store = tmp_path / "real"
    store.mkdir()
    for session in group(0.6, 40, rng):
        (store / f"{session.id}.json").write_text(session.model_dump_json())
    runs = {
        "results": [
            {
                "status": "passed",
                "conversation": [
                    {
                        "kind": "message",
                        "role": e.content.role,
                        "author": e.author,
                        "text": e.content.parts[0].text,
                    }
                    for e in session.events
                ],
            }
            for session in group(1.0, 40, rng, offset=40)
        ]
    }
    report = tmp_path / "runs.json"
    report.write_text(json.dumps(runs))
    out = tmp_path / "realism.json"

    done = CliRunner().invoke(main, ["realism", str(store), str(report), "--json", str(out)])

    assert done.exit_code == 0, done.output
    assert "realism: 40 real conversation(s) against 40 simulated" in done.output
    data = json.loads(out.read_text())
    assert {f["name"] for f in data["features"]} >= {"answered_directly_rate", "turns"}
    bad = CliRunner().invoke(main, ["realism", str(store), str(store / "s0.json")])
    assert bad.exit_code != 0
    assert "not a JSON report" in bad.output


async def test_the_json_follows_its_schema_and_the_page_shows_scenarios_side_by_side(tmp_path):
    from importlib import resources

    import jsonschema

    from adk_eval.reporting._realism_html import render_realism_html

    rng = random.Random(5)
    real = group(0.7, 30, rng)
    real[0].events[2].content.parts[0].text = "<script>alert(1)</script> 12 March 1980"
    simulated = [(s.events, True, f"mined clinic/u/{s.id}") for s in group(0.9, 30, rng, offset=0)]

    report = await realism_report(real, simulated, resamples=200)
    data = json.loads(json.dumps(report.to_data(), default=str))

    schema = json.loads(
        resources.files("adk_eval.reporting").joinpath("realism.schema.json").read_text()
    )
    jsonschema.validate(data, schema)
    assert len(data["pairs"]) == 20  # kept, at most
    assert data["pairs"][0]["source"] == "clinic/u/s0"
    page = render_realism_html(data)
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count('<div class="pair">') == 20


async def test_a_run_and_its_json_report_measure_the_same_answers_to_a_long_running_question(
    tmp_path,
):
    from google.adk.tools import LongRunningFunctionTool

    from adk_eval.realism import features
    from adk_eval.reporting import suite_report
    from adk_eval.testing import tool_call

    def ask(question: str) -> None:
        """Asks the patient; the answer comes later."""

    agent = LlmAgent(
        name="desk",
        model=ScriptedLlm(
            [
                tool_call("ask", {"question": "Which days suit you?"}),
                tool_call("ask", {"question": "What is your date of birth?"}),
                "Booked for Tuesday.",
            ]
        ),
        tools=[LongRunningFunctionTool(ask)],
    )
    answers = ScriptedUserAgent(name="patient", script=["Tuesdays", "I'd rather not say"])
    case = EvalCase(
        name="asks",
        agent=agent,
        first_message="I need to book a blood test",
        user_agents=UserAgents(
            loop=ScriptedUserAgent(name="loop", script=["</finished>"]), tools={"ask": answers}
        ),
    )
    suite = await run_eval_suite([case])
    (result,) = suite.results
    path = tmp_path / "runs.json"
    path.write_text(json.dumps(suite_report(suite), default=str))
    ((events, _, _),) = runs_of_report(path)

    live, reported = features(list(result.events)), features(events)
    assert live.agent_questions == 2
    assert (live.answers_direct, live.answers_refusing) == (1, 1)
    assert reported.values() == live.values()


def traced(tmp_path, captured: int, silent: int) -> str:
    """An OTLP file: `captured` conversations with their words, then `silent` without."""
    from tests.realism.traces import write_traces

    turns = [("I need to book a blood test", QUESTION), ("12 March 1980", "Booked for Tuesday.")]
    dodged = [(turns[0][0], QUESTION), ("not sure, does it matter?", "I need it to book.")]
    return write_traces(
        tmp_path / "traces.jsonl",
        [(f"t{i}", turns if i % 2 else dodged, i < captured) for i in range(captured + silent)],
    )


async def test_conversations_whose_source_carries_no_text_are_left_out_and_named(tmp_path):
    from importlib import resources

    import jsonschema

    from adk_eval.production import open_sessions

    spec = traced(tmp_path, captured=6, silent=3)
    simulated = as_runs(group(0.5, 10, random.Random(1)))

    report = await realism_report(open_sessions(spec), simulated, resamples=200)

    assert report.real == 6
    assert (report.left_out, report.left_out_sessions) == (3, ("t6", "t7", "t8"))
    assert report.lines()[1] == (
        "3 real conversation(s) left out: their source carries no message text "
        "(content capture was off): t6, t7, t8"
    )
    turns = next(c for c in report.comparisons if c.name == "turns")
    assert turns.real.n == 6
    assert turns.real.estimate.estimate == 2.0  # the mean of two messages: no silent user in it
    data = json.loads(json.dumps(report.to_data(), default=str))
    assert data["left_out"] == {
        "count": 3,
        "sessions": ["t6", "t7", "t8"],
        "why": "their source carries no message text (content capture was off)",
    }
    schema = resources.files("adk_eval.reporting").joinpath("realism.schema.json").read_text()
    jsonschema.validate(data, json.loads(schema))


async def test_a_source_with_no_message_text_at_all_is_one_line(tmp_path):
    from adk_eval._errors import EvalSetupError
    from adk_eval.production import open_sessions

    spec = traced(tmp_path, captured=0, silent=4)
    with pytest.raises(EvalSetupError) as raised:
        await realism_report(open_sessions(spec), as_runs(group(0.5, 4, random.Random(1))))
    said = str(raised.value)
    assert "\n" not in said
    assert said.startswith(f"realism: none of the 4 real conversation(s) of the traces in {spec}")
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY" in said


def test_adk_eval_realism_on_traces_without_text_says_so_in_one_line(tmp_path):
    spec = traced(tmp_path, captured=0, silent=4)
    report = tmp_path / "runs.json"
    report.write_text(json.dumps({"results": []}))
    done = CliRunner().invoke(main, ["realism", spec, str(report)])
    assert done.exit_code != 0
    assert "realism: none of the 4 real conversation(s)" in done.output
    assert "Traceback" not in done.output


async def test_an_open_conversation_is_left_out_and_named_unless_included(tmp_path):
    import time

    from adk_eval.production import open_sessions

    real = group(0.5, 10, random.Random(1))
    real[3] = real[3].model_copy(  # the user's last message, unanswered a second ago
        update={"events": real[3].events[:3], "last_update_time": time.time()}
    )
    stored = tmp_path / "sessions.json"
    stored.write_text("[" + ", ".join(s.model_dump_json() for s in real) + "]")
    simulated = as_runs(group(0.5, 10, random.Random(2)))

    report = await realism_report(open_sessions(str(stored)), simulated, resamples=200)

    assert report.real == 9
    assert (report.open, report.open_sessions) == (1, ("clinic/u/s3",))
    assert "1 real conversation(s) left out: still being written" in "\n".join(report.lines())
    assert report.to_data()["open"]["sessions"] == ["clinic/u/s3"]
    included = await realism_report(
        open_sessions(str(stored)), simulated, resamples=200, include_open=True
    )
    assert (included.real, included.open) == (10, 1)


async def test_the_report_ends_on_how_far_its_rules_agree_with_people():
    from adk_eval.realism._report import ACCURACY, COMPARED

    rng = random.Random(3)
    report = await realism_report(group(0.7, 10, rng), as_runs(group(0.9, 10, rng, 10)))

    assert set(ACCURACY) == set(COMPARED)  # every compared feature has its measured figure
    last = report.lines()[-1]
    assert last.startswith("the rules agree with people reading real dialogues: ")
    assert all(f"{name} {ACCURACY[name]}" in last for name in COMPARED)


def test_the_quoted_figures_are_the_published_bench_results():
    """ACCURACY is what bench/user_behaviour_agreement.py last published, held out."""
    from pathlib import Path

    from adk_eval.realism._report import ACCURACY

    results = Path(__file__).parents[2] / "bench" / "results" / "user_behaviour_agreement.json"
    held_out = json.loads(results.read_text())["agreement"]["held_out"]
    measured_as = {  # the report's feature -> the bench's row that measures it
        "answered_directly_rate": "answers_direct",
        "answers_refusing": "answers",
        "volunteered_rate": "volunteered_per_message",
    }
    for name, quoted in ACCURACY.items():
        row = held_out[measured_as.get(name, name)]
        assert quoted.split(" %")[0] == f"{round(100 * row['agreement'])}", name
