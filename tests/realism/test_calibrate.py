"""Calibration recovers the persona setting real users were built with, on held-out sessions."""

from __future__ import annotations

import random

import pytest
from google.adk.sessions import Session

from adk_eval._errors import EvalSetupError
from adk_eval.realism._calibrate import calibrate
from adk_eval.realism._features import features
from adk_eval.realism._persona import PersonaSettings, grid, replay_with
from adk_eval.testing import text_event, user_event


def template(index: int) -> Session:
    """A booking: three questions, one statement, and the real user's four answers."""
    events = [
        user_event("I need to book a blood test"),
        text_event("desk", "What is your date of birth?"),
        user_event(f"{index % 28 + 1} March 1980"),
        text_event("desk", "Which clinic suits you?"),
        user_event("the one on Main Street"),
        text_event("desk", "Noted."),
        user_event("I also take blood thinners"),
        text_event("desk", "Any time that suits you best?"),
        user_event("Tuesday morning"),
        text_event("desk", "Booked."),
    ]
    return Session(id=f"t{index}", app_name="clinic", user_id="u", events=events)


def users_like(settings: PersonaSettings, n: int, seed: int) -> list[Session]:
    """`n` conversations whose users follow `settings`: the known truth."""
    rng = random.Random(seed)
    return [
        Session(
            id=f"r{i}",
            app_name="clinic",
            user_id="u",
            events=replay_with(template(i), settings, rng),
        )
        for i in range(n)
    ]


def test_a_replayed_user_follows_its_settings():
    cooperative = PersonaSettings(cooperation=1.0, volunteering=1.0)
    events = replay_with(template(0), cooperative, random.Random(0))
    assert [e.content.parts[0].text for e in events if e.author == "user"][:3] == [
        "I need to book a blood test",
        "1 March 1980 if that helps at all,",
        "the one on Main Street if that helps",
    ]
    dodging = features(replay_with(template(0), PersonaSettings(cooperation=0.0), random.Random(0)))
    assert dodging.answered_directly_rate == 0.0
    impatient = replay_with(template(0), PersonaSettings(patience=1), random.Random(0))
    assert impatient[-1].content.parts[0].text == "never mind, forget it"
    assert "70 %" in PersonaSettings(cooperation=0.7).instruction()


@pytest.mark.parametrize("truth", [PersonaSettings(0.7, 0.0), PersonaSettings(0.9, 1.0)])
@pytest.mark.slow
def test_calibration_recovers_the_setting_real_users_were_built_with(truth):
    real = users_like(truth, 120, seed=11)

    found = calibrate(real, grid(), held_out=0.3, seed=5)

    assert abs(found.best.cooperation - truth.cooperation) <= 0.1 + 1e-9, found.lines()
    assert found.best.volunteering == truth.volunteering, found.lines()
    assert found.sizes == (84, 36)
    assert found.held_out < found.default_held_out or truth == PersonaSettings()
    assert found.held_out < 0.3, found.lines()
    assert found.lines()[0].startswith("calibration: 18 setting(s) tried on 84")


def test_too_few_conversations_is_one_clear_line():
    with pytest.raises(EvalSetupError, match="at least 4 conversations"):
        calibrate([template(0)], grid())


def test_adk_eval_realism_calibrate_prints_the_closest_setting(tmp_path):
    from click.testing import CliRunner

    from adk_eval._cli import main

    store = tmp_path / "real"
    store.mkdir()
    for session in users_like(PersonaSettings(0.6, 0.0), 40, seed=2):
        (store / f"{session.id}.json").write_text(session.model_dump_json())

    done = CliRunner().invoke(main, ["realism", str(store), "--calibrate"])

    assert done.exit_code == 0, done.output
    assert "calibration: 18 setting(s) tried on 28 conversation(s), checked on 12" in done.output
    assert "closest: cooperation=" in done.output
    assert "as a persona instruction:" in done.output
    missing = CliRunner().invoke(main, ["realism", str(store)])
    assert missing.exit_code != 0
    assert "--calibrate" in missing.output


def test_calibration_leaves_out_traces_without_their_words_and_names_them(tmp_path):
    from click.testing import CliRunner

    from adk_eval._cli import main
    from tests.realism.traces import write_traces

    turns = [
        ("I need to book a blood test", "What is your date of birth?"),
        ("12 March 1980", "Booked."),
    ]
    both = [(f"c{i}", turns, True) for i in range(8)] + [(f"x{i}", turns, False) for i in range(3)]
    spec = write_traces(tmp_path / "t.jsonl", both)

    done = CliRunner().invoke(main, ["realism", spec, "--calibrate"])

    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    assert lines[0] == (
        "3 real conversation(s) left out: their source carries no message text "
        "(content capture was off): x0, x1, x2"
    )
    assert "tried on 6 conversation(s), checked on 2" in lines[1]
    silent = write_traces(tmp_path / "s.jsonl", [*both[8:], ("x3", turns, False)])
    none = CliRunner().invoke(main, ["realism", silent, "--calibrate"])
    assert none.exit_code != 0
    assert "realism --calibrate: none of the 4 real conversation(s)" in none.output


def no_preference(index: int) -> Session:
    """A user who answers every question, often by saying any option will do."""
    events = [
        user_event("I need to book a blood test"),
        text_event("desk", "Which clinic suits you?"),
        user_event("I don't mind, any clinic is fine" if index % 2 else "the one on Main Street"),
        text_event("desk", "Which day would you like?"),
        user_event("Doesn't matter" if index % 3 else "Tuesday"),
        text_event("desk", "Morning or afternoon?"),
        user_event("Any time works"),
        text_event("desk", "Booked."),
    ]
    return Session(id=f"n{index}", app_name="clinic", user_id="u", events=events)


def test_users_with_no_preference_calibrate_as_cooperative():
    # "any is fine" answers the question: these users answered every question directly
    candidates = grid(volunteering=(0.0,), verbosity=(1,))  # the answers as they were
    found = calibrate([no_preference(i) for i in range(40)], candidates)
    assert found.best.cooperation == 1.0


def test_a_replayed_user_answers_questions_asked_through_a_long_running_tool():
    from adk_eval.testing import function_response_event, tool_call_event

    asked = {"question": "Which days suit you?"}
    session = Session(
        id="lr",
        app_name="clinic",
        user_id="u",
        events=[
            user_event("I need a blood test"),
            tool_call_event("desk", "ask", asked, call_id="q1", long_running=True),
            function_response_event("user", "ask", {"result": "Tuesday mornings"}, call_id="q1"),
            text_event("desk", "Booked for Tuesday."),
        ],
    )
    dodging = features(replay_with(session, PersonaSettings(cooperation=0.0), random.Random(0)))
    assert (dodging.agent_questions, dodging.answers_evasive) == (1, 1)
    answering = PersonaSettings(cooperation=1.0, verbosity=1)
    assert features(replay_with(session, answering, random.Random(0))).answers_direct == 1
