"""Mining stored conversations into scenarios: what is kept, what is redacted, what is written."""

from __future__ import annotations

import dataclasses
import json

import pytest
from click.testing import CliRunner
from google.adk.agents import LlmAgent
from google.adk.evaluation.eval_set import EvalSet
from google.adk.sessions import Session

from adk_eval import run_eval
from adk_eval._cli import main
from adk_eval.production import open_sessions
from adk_eval.realism._mine import mine_session
from adk_eval.realism._mine_files import EVALSET_NAME, SCENARIOS_NAME, load_mined, mine_sessions
from adk_eval.testing import ScriptedLlm, text_event, user_event


def booking(session_id: str = "s1") -> Session:
    """A real-looking conversation: a goal, an answer when asked, a fact volunteered."""
    events = [
        user_event("I need to book a blood test"),
        text_event("desk", "Sure. What is your date of birth?"),
        user_event("12 March 1980"),
        text_event("desk", "Thanks. I have Tuesday at 10."),
        user_event("Tuesday works, my email is ann@example.com"),
        text_event("desk", "Booked for Tuesday."),
        user_event("thanks"),
    ]
    return Session(id=session_id, app_name="clinic", user_id="ann", events=events, state={})


def test_a_conversation_gives_its_goal_facts_asked_or_volunteered_and_its_manner():
    scenario = mine_session(booking())

    assert scenario is not None
    assert scenario.source == "clinic/ann/s1"
    assert scenario.starting_prompt == scenario.goal == "I need to book a blood test"
    facts = [(fact.turn, fact.text, fact.asked) for fact in scenario.facts]
    assert facts == [
        (1, "12 March 1980", True),
        (2, "Tuesday works, my email is ann@example.com", False),
    ]  # "thanks" says nothing
    assert scenario.held_back() == ["12 March 1980"]
    assert scenario.behaviour.turns == 4
    assert "terse" in scenario.manner
    plan = scenario.plan()
    assert "'12 March 1980' only when the agent asks for it" in plan
    assert "without being asked" in plan
    assert scenario.conversation_scenario().starting_prompt == "I need to book a blood test"


def test_closings_thanks_and_the_users_own_questions_are_not_facts():
    events = [
        user_event("I need a cab to the station"),
        text_event("desk", "How many people?"),
        user_event("for two people"),  # asked: held back
        text_event("desk", "A cab for two to the station. Is that right?"),
        user_event("Yes that's right"),  # a bare confirmation
        text_event("desk", "Booked. Your driver is Sam."),
        user_event("What is the car's number plate?"),  # the user's own question
        text_event("desk", "It is KX12 ABC."),
        user_event("Perfect"),
        text_event("desk", "Anything else?"),
        user_event("Also I need a table for dinner, somewhere cheap"),  # a new goal, volunteered
        text_event("desk", "Which day?"),
        user_event("I don't mind which day"),  # no preference: an answer the user gave
        text_event("desk", "Booked for Friday."),
        user_event("Thank you car! Bye"),
    ]
    session = Session(id="s3", app_name="cabs", user_id="kim", events=events, state={})

    scenario = mine_session(session)

    assert scenario is not None
    assert [(fact.text, fact.asked) for fact in scenario.facts] == [
        ("for two people", True),
        ("Also I need a table for dinner, somewhere cheap", True),
        ("I don't mind which day", True),
    ]
    assert "Thank you" not in scenario.plan()


def test_an_answer_to_a_question_for_a_value_is_a_fact_even_without_a_listed_value():
    events = [
        user_event("I've got chest pain"),
        text_event("desk", "When did it start, and does it spread anywhere?"),
        user_event("It's crushing and it goes down my left arm"),  # a description: a fact
        text_event("desk", "How about a call back from a nurse?"),  # an offer: yes or no
        user_event("That sounds good"),  # taking the offer: no fact
        text_event("desk", "You would like a call back at 5 pm, correct?"),
        user_event("Yes, that's right"),  # a confirmation: no fact
    ]
    session = Session(id="s4", app_name="clinic", user_id="ann", events=events, state={})

    scenario = mine_session(session)

    assert scenario is not None
    assert [(fact.text, fact.asked) for fact in scenario.facts] == [
        ("It's crushing and it goes down my left arm", True)
    ]


@pytest.mark.parametrize(
    ("words", "turns", "expected"),
    [
        (
            1.0,
            1,
            "Write terse messages of about 1 word; answer the agent's questions directly; "
            "take about 1 message.",
        ),
        (
            12.0,
            3,
            "Write moderate messages of about 12 words; answer the agent's questions "
            "directly; take about 3 messages.",
        ),
    ],
)
def test_the_manner_reads_naturally(words: float, turns: int, expected: str):
    from adk_eval.realism import UserBehaviour

    behaviour = UserBehaviour(turns=turns, words_per_message=words)
    scenario = mine_session(booking())
    assert scenario is not None
    scenario = dataclasses.replace(scenario, behaviour=behaviour)
    assert scenario.manner == expected


def test_an_answer_to_a_long_running_question_is_a_fact_given_when_asked():
    from adk_eval.testing import function_response_event, tool_call_event

    question = {"question": "What is your date of birth?"}
    events = [
        user_event("I need to book a blood test"),
        tool_call_event("desk", "ask", question, call_id="q1", long_running=True),
        function_response_event("user", "ask", {"result": "12 March 1980"}, call_id="q1"),
        text_event("desk", "Booked for Tuesday."),
    ]
    session = Session(id="s2", app_name="clinic", user_id="ann", events=events, state={})

    scenario = mine_session(session)

    assert scenario is not None
    assert [(fact.text, fact.asked) for fact in scenario.facts] == [("12 March 1980", True)]
    assert scenario.held_back() == ["12 March 1980"]


def test_a_session_without_a_user_message_is_not_a_scenario():
    empty = Session(id="e", app_name="a", user_id="u", events=[text_event("desk", "Hi")], state={})
    assert mine_session(empty) is None


async def test_mining_a_source_redacts_first_and_writes_an_evalset_adk_reads(tmp_path):
    store = tmp_path / "sessions"
    store.mkdir()
    for name in ("s1", "s2"):
        (store / f"{name}.json").write_text(booking(name).model_dump_json())
    (store / "s3.json").write_text(
        Session(id="s3", app_name="a", user_id="u", events=[], state={}).model_dump_json()
    )
    out = tmp_path / "mined"

    summary = await mine_sessions(open_sessions(str(store)), out)

    assert (summary.mined, summary.skipped) == (2, 1)
    assert summary.redacted["email"] == 2  # one per conversation
    evalset = EvalSet.model_validate_json((out / EVALSET_NAME).read_text())  # ADK's own model
    assert [case.eval_id for case in evalset.eval_cases] == ["s1", "s2"]
    records = [json.loads(line) for line in (out / SCENARIOS_NAME).read_text().splitlines()]
    assert [r["source"] for r in records] == ["clinic/ann/s1", "clinic/ann/s2"]
    everything = (out / EVALSET_NAME).read_text() + (out / SCENARIOS_NAME).read_text()
    assert "ann@example.com" not in everything
    assert "<EMAIL_1>" in records[0]["facts"][1]["text"]
    assert sorted(p.name for p in out.iterdir()) == [EVALSET_NAME, SCENARIOS_NAME]


async def test_mined_cases_play_with_a_simulated_user_and_hold_back_what_was_asked(tmp_path):
    store = tmp_path / "one.json"
    store.write_text(booking().model_dump_json())
    out = tmp_path / "mined"
    await mine_sessions(open_sessions(str(store)), out)
    agent = LlmAgent(name="desk", model=ScriptedLlm(["What is your date of birth?", "Booked."]))
    user = ScriptedLlm(["12 March 1980", "</finished>"])

    (case,) = load_mined(out, agent, user_model=user)
    result = await run_eval(case)

    assert case.first_message == "I need to book a blood test"
    assert "user_fidelity" in result.metrics
    assert result.metrics["user_fidelity"].passed, result.explain()


def test_adk_eval_mine_is_one_command_and_refuses_a_file_for_a_folder(tmp_path):
    store = tmp_path / "one.json"
    store.write_text(booking().model_dump_json())
    out = tmp_path / "mined"

    done = CliRunner().invoke(main, ["mine", str(store), "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "mined 1 scenario(s)" in done.output
    assert "e-mail" in done.output  # what was redacted is said

    refused = CliRunner().invoke(main, ["mine", str(store), "--out", str(store)])
    assert refused.exit_code != 0
    assert "is a file" in refused.output
    assert json.loads(store.read_text())["id"] == "s1"  # nothing the user wrote is touched


@pytest.mark.parametrize("flag", [[], ["--no-redact"]])
def test_no_redact_keeps_the_text_as_stored(tmp_path, flag):
    store = tmp_path / "one.json"
    store.write_text(booking().model_dump_json())
    out = tmp_path / "mined"
    CliRunner().invoke(main, ["mine", str(store), "--out", str(out), *flag])
    kept = "ann@example.com" in (out / SCENARIOS_NAME).read_text()
    assert kept == bool(flag)


async def test_calibrated_settings_join_each_mined_persona(tmp_path):
    from adk_eval.goldens._scenario import simulated_user_instruction
    from adk_eval.realism import PersonaSettings
    from adk_eval.realism._mine_files import _with_settings

    store = tmp_path / "one.json"
    store.write_text(booking().model_dump_json())
    out = tmp_path / "mined"
    await mine_sessions(open_sessions(str(store)), out)
    (case,) = EvalSet.model_validate_json((out / EVALSET_NAME).read_text()).eval_cases
    settings = PersonaSettings(cooperation=0.6)

    tuned = _with_settings(case, settings)

    assert "60 %" not in simulated_user_instruction(case.conversation_scenario)
    assert "60 %" in simulated_user_instruction(tuned.conversation_scenario)
    agent = LlmAgent(name="desk", model=ScriptedLlm(["Booked."]))
    (played,) = load_mined(out, agent, user_model=ScriptedLlm(["</finished>"]), settings=settings)
    assert played.first_message == "I need to book a blood test"


async def test_a_model_reads_the_goal_and_constraints_with_a_structured_schema(tmp_path):
    from adk_eval._errors import EvalSetupError
    from adk_eval.realism._extract import Extraction, extract

    seen = []

    def reader(request):
        seen.append(request)
        return '{"goal": "Book a blood test", "constraints": ["on a Tuesday"]}'

    store = tmp_path / "one.json"
    store.write_text(booking().model_dump_json())
    out = tmp_path / "mined"
    await mine_sessions(open_sessions(str(store)), out, model=ScriptedLlm(responder=reader))

    (record,) = [json.loads(line) for line in (out / SCENARIOS_NAME).read_text().splitlines()]
    assert record["goal"] == "Book a blood test"
    assert record["constraints"] == ["on a Tuesday"]
    assert seen[0].config.response_schema is Extraction
    said = seen[0].contents[0].parts[0].text
    assert "ann@example.com" not in said  # the model reads the redacted text
    assert "<EMAIL_1>" in said
    (case,) = EvalSet.model_validate_json((out / EVALSET_NAME).read_text()).eval_cases
    assert "Hold to this: on a Tuesday." in case.conversation_scenario.conversation_plan

    with pytest.raises(EvalSetupError, match=r"not \{goal, constraints\} JSON: 'still no'"):
        await extract(booking(), ScriptedLlm(["no idea", "still no"]))


GOAL = '{"goal": "Book a blood test", "constraints": []}'


async def test_a_reply_that_is_not_json_is_asked_again_then_its_session_is_skipped_and_named(
    tmp_path,
):
    asked: dict[str, list[str]] = {}

    def reader(request):
        said = request.contents[0].parts[0].text
        who = next(name for name in ("ann", "bob", "cyd", "dee") if f"I am {name}" in said)
        asked.setdefault(who, []).append(request.contents[-1].parts[0].text)
        if who == "bob" or (who == "cyd" and len(asked[who]) == 1):
            return "Sorry, I cannot help with that."  # bob never answers in JSON; cyd once
        return GOAL

    store = tmp_path / "store"
    store.mkdir()
    for n, name in enumerate(("ann", "bob", "cyd", "dee")):
        session = booking(f"s{n}")
        session.events[0].content.parts[0].text = f"I am {name}, I need to book a blood test"
        (store / f"s{n}.json").write_text(session.model_dump_json())
    out = tmp_path / "mined"

    summary = await mine_sessions(
        open_sessions(str(store)), out, model=ScriptedLlm(responder=reader)
    )

    assert (summary.mined, summary.unread, summary.unread_sessions) == (3, 1, ("clinic/ann/s1",))
    assert [len(asked[name]) for name in ("ann", "bob", "cyd", "dee")] == [1, 2, 2, 1]
    assert asked["bob"][1].startswith("Your last reply was not the JSON asked for.")
    assert (
        "1 session(s) skipped: the model's reply was not {goal, constraints} JSON, asked "
        "twice: clinic/ann/s1" in summary.describe()
    )
    sources = [
        json.loads(line)["source"] for line in (out / SCENARIOS_NAME).read_text().splitlines()
    ]
    assert sources == ["clinic/ann/s0", "clinic/ann/s2", "clinic/ann/s3"]
    cases = EvalSet.model_validate_json((out / EVALSET_NAME).read_text()).eval_cases
    assert [c.eval_id for c in cases] == ["s0", "s2", "s3"]


async def test_traces_without_their_words_are_left_out_of_mining_and_named(tmp_path):
    from adk_eval._errors import EvalSetupError
    from tests.realism.traces import write_traces

    turns = [
        ("I need to book a blood test", "What is your date of birth?"),
        ("12 March 1980", "Booked."),
    ]
    spec = write_traces(
        tmp_path / "t.jsonl", [("a", turns, True), ("b", turns, False), ("c", turns, False)]
    )

    summary = await mine_sessions(open_sessions(spec), tmp_path / "mined")

    assert (summary.mined, summary.skipped, summary.silent) == (1, 0, 2)
    assert summary.silent_sessions == ("b", "c")
    assert (
        "2 left out: their source carries no message text (content capture was off): b, c"
        in summary.describe()
    )
    silent = write_traces(tmp_path / "s.jsonl", [("b", turns, False)])
    with pytest.raises(EvalSetupError, match="mine: none of the 1 real conversation"):
        await mine_sessions(open_sessions(silent), tmp_path / "none")
    assert not (tmp_path / "none" / EVALSET_NAME).exists()


async def test_an_open_conversation_is_left_out_of_mining_and_named_unless_included(tmp_path):
    import time

    still_typing = booking("s2").model_copy(update={"last_update_time": time.time()})
    stored = tmp_path / "sessions.json"
    stored.write_text(f"[{booking('s1').model_dump_json()}, {still_typing.model_dump_json()}]")

    summary = await mine_sessions(open_sessions(str(stored)), tmp_path / "mined")

    assert summary.mined == 1
    assert (summary.open, summary.open_sessions) == (1, ("clinic/ann/s2",))
    assert "; 1 left out: still being written" in summary.describe()
    assert "clinic/ann/s2" in summary.describe()
    included = await mine_sessions(open_sessions(str(stored)), tmp_path / "all", include_open=True)
    assert (included.mined, included.open) == (2, 1)


async def test_a_models_readings_keep_the_projects_limit_across_conversations(
    tmp_path, monkeypatch
):
    """Mining's model calls pace on one pacer: the quota in pyproject.toml holds across them."""
    from google.adk.models.lite_llm import LiteLlm

    from adk_eval._sources._source import GivenSessions
    from adk_eval.fake_provider import FakeProviderServer, Quota, text_reply

    (tmp_path / "pyproject.toml").write_text(
        '[tool.adk-eval.limits]\n"openai/fake" = { rpm = "2/1s" }\n'
    )
    monkeypatch.chdir(tmp_path)
    read = text_reply(json.dumps({"goal": "book a blood test", "constraints": []}))
    with FakeProviderServer([read], quota=Quota(requests=2, window=1.0)) as server:
        model = LiteLlm(
            model="openai/fake", api_base=server.openai_base, api_key="x", _skip_mcp_handler=True
        )
        sessions = GivenSessions(booking(f"s{n}") for n in range(4))
        summary = await mine_sessions(sessions, tmp_path / "mined", model=model)
    assert summary.mined == 4
    assert server.rejections == 0, [request.outcome for request in server.requests]
    assert server.max_admitted_in_any_window(1.0) <= 2
