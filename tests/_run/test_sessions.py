"""A case of several sessions on one memory: later sessions find what earlier ones said."""

from __future__ import annotations

from dataclasses import dataclass

import jsonschema
import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.plugins import BasePlugin
from google.adk.tools import load_memory, preload_memory

from adk_eval import (
    CaseSession,
    EvalCase,
    EvalResult,
    EvalSetupError,
    ScriptedUserAgent,
    UserAgents,
    run_eval,
)
from adk_eval._suites._results import suite_from_results
from adk_eval.metrics import MetricResult, render_transcript
from adk_eval.reporting import load_report_schema, suite_report
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call

FACT = "My dog Biscuit is allergic to chicken."
QUESTION = "What food is safe for Biscuit?"


def opening(request) -> str:
    """The user's first message in the model's request: which session this is."""
    first = next(c for c in request.contents if c.role == "user")
    return " ".join(part.text or "" for part in first.parts or [])


def by_session(scripts: dict[str, list]):
    """A responder that plays the script of the session whose opening holds its key."""

    def respond(request):
        steps = next(steps for key, steps in scripts.items() if key in opening(request))
        return steps[model_turn_index(request)]

    return respond


def vet() -> LlmAgent:
    model = ScriptedLlm(
        responder=by_session(
            {
                "allergic": ["Noted."],
                "safe": [tool_call("load_memory", {"query": "Biscuit allergic"}), "No chicken."],
            }
        )
    )
    return LlmAgent(name="vet", model=model, tools=[load_memory], instruction="Help pet owners.")


@dataclass
class Recalls:
    """Passes when a ``load_memory`` call answered with `fact`."""

    fact: str
    name: str = "recalls"

    def evaluate(self, trace) -> MetricResult:
        answers = [str(c.response) for c in trace.tool_calls if c.name == "load_memory"]
        found = any(self.fact in answer for answer in answers)
        return MetricResult(passed=found, evidence=[f"load_memory answers: {len(answers)}"])


@dataclass
class SessionCount:
    """A metric of the whole run: how many sessions it holds."""

    expected: int
    name: str = "sessions"

    def evaluate(self, trace) -> MetricResult:
        return MetricResult(passed=len(trace.sessions) == self.expected, value=len(trace.sessions))


@dataclass
class Never:
    name: str = "never"

    def evaluate(self, trace) -> MetricResult:
        return MetricResult(passed=False, evidence=["fails on purpose"])


def two_sessions(**first) -> EvalCase:
    return EvalCase(
        name="remembers",
        agent=vet(),
        sessions=[
            CaseSession(first_message=FACT, **first),
            CaseSession(first_message=QUESTION, metrics=[Recalls("allergic to chicken")]),
        ],
        metrics=[SessionCount(2)],
    )


async def test_the_second_session_finds_what_the_first_said_and_only_because_of_it():
    result = await run_eval(two_sessions())

    assert result.status == "passed", result.explain()
    assert result.metrics["session_2/recalls"].passed
    first, second = result.trace.sessions
    assert [e.author for e in first.events] == ["user", "vet"]
    assert second.tool_calls[0].name == "load_memory"
    assert FACT in str(second.tool_calls[0].response)
    assert list(result.events) == [*first.events, *second.events]  # the whole run, in turn

    alone = EvalCase(
        name="forgets",
        agent=vet(),
        sessions=[CaseSession(first_message=QUESTION, metrics=[Recalls("allergic to chicken")])],
    )
    forgot = await run_eval(alone)
    assert forgot.status == "failed"
    assert not forgot.metrics["session_1/recalls"].passed


async def test_per_session_and_whole_run_metrics_are_in_the_result_and_a_failing_session_fails():
    result = await run_eval(two_sessions(metrics=[Never()], name="tells"))

    assert list(result.metrics) == ["tells/never", "session_2/recalls", "sessions"]
    assert not result.metrics["tells/never"].passed
    assert result.metrics["session_2/recalls"].passed  # the second session still ran
    assert result.metrics["sessions"].value == 2
    assert result.status == "failed"
    assert "[FAIL] tells/never" in result.explain()


async def test_a_session_that_ends_in_an_error_ends_the_run_and_the_next_does_not_run():
    refused = LlmAgent(
        name="vet",
        model=ScriptedLlm(responder=by_session({"allergic": [tool_call("send_email", {})]})),
        tools=[load_memory, send_email],
    )
    case = EvalCase(
        name="stops",
        agent=refused,
        sessions=[
            CaseSession(first_message=FACT),
            CaseSession(first_message=QUESTION, metrics=[Recalls("chicken")]),
        ],
    )
    result = await run_eval(case)

    assert result.status == "error"
    assert len(result.trace.sessions) == 1
    assert not result.metrics["session_2/recalls"].applicable
    assert "did not run" in result.metrics["session_2/recalls"].evidence[0]


def send_email(to: str) -> str:
    """Sends an email."""
    return "sent"


async def test_each_session_starts_fresh_session_state_and_user_state_carries_over():
    agent = LlmAgent(name="vet", model=ScriptedLlm(responder=lambda request: "Hello."))
    case = EvalCase(
        name="state",
        agent=agent,
        initial_state={"user": {"name": "Ann"}, "session": {"draft": 1}},
        sessions=[CaseSession(first_message="hi"), CaseSession(first_message="hi again")],
    )
    result = await run_eval(case)

    first, second = result.trace.sessions
    assert first.initial_state == {"user": {"name": "Ann"}, "session": {"draft": 1}}
    assert second.initial_state == {"session": {}, "user": {"name": "Ann"}}
    assert result.turns == 0


async def test_sqlite_memory_service_finds_the_first_session_too():
    case = two_sessions()
    case.memory_service = "sqlite"
    case.name = "remembers-sqlite"
    result = await run_eval(case)

    assert result.status == "passed", result.explain()


async def test_a_sub_agent_with_preload_memory_sees_the_first_session_in_its_request():
    seen: list[str] = []

    def keeper_model(request):
        instruction = str(request.config.system_instruction or "")
        seen.append(instruction + " ".join(str(c) for c in request.contents))
        return "Biscuit must not eat chicken."

    keeper = LlmAgent(
        name="keeper",
        model=ScriptedLlm(responder=keeper_model),
        tools=[preload_memory],
        description="Answers from what the owner said before.",
    )
    root = LlmAgent(
        name="front_desk",
        model=ScriptedLlm(
            responder=by_session(
                {
                    "allergic": ["Noted."],
                    "safe": [tool_call("transfer_to_agent", {"agent_name": "keeper"})],
                }
            )
        ),
        sub_agents=[keeper],
    )
    case = EvalCase(
        name="delegates",
        agent=root,
        sessions=[CaseSession(first_message=FACT), CaseSession(first_message=QUESTION)],
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    assert len(seen) == 1  # the keeper answered in the second session only
    assert "allergic to chicken" in seen[0]  # preloaded: the second session never said it
    assert result.trace.sessions[1].final_response == "Biscuit must not eat chicken."


async def test_the_json_report_of_a_run_of_sessions_validates_and_its_data_round_trips():
    agent = LlmAgent(name="vet", model=ScriptedLlm(responder=lambda request: "Hello."))
    case = EvalCase(
        name="report",
        agent=agent,
        sessions=[
            CaseSession(first_message="hi", metrics=[SessionCount(0)]),
            CaseSession(first_message="again", name="later"),
        ],
    )
    result = await run_eval(case)
    report = suite_report(
        suite_from_results([result], case_names=["report"], repeat=1, duration_ms=1.0)
    )

    jsonschema.validate(report, load_report_schema())
    assert set(report["results"][0]["metrics"]) == {"session_1/sessions"}
    back = EvalResult.from_data(result.to_data())
    assert back.trace == result.trace
    assert [len(s.events) for s in back.trace.sessions] == [2, 2]


def test_sessions_with_a_first_message_on_the_case_is_one_clear_error():
    with pytest.raises(EvalSetupError, match=r"both `first_message` and `sessions`.*move"):
        EvalCase(
            name="x",
            agent=vet(),
            first_message="hello",
            sessions=[CaseSession(first_message=FACT)],
        )


def test_what_a_session_lacks_is_named():
    with pytest.raises(EvalSetupError, match="session `session_2` has no `first_message`"):
        EvalCase(
            name="x",
            agent=vet(),
            sessions=[CaseSession(first_message=FACT), CaseSession()],
        )
    with pytest.raises(EvalSetupError, match=r"sessions\[0\] must be a CaseSession"):
        EvalCase(name="x", agent=vet(), sessions=[FACT])
    with pytest.raises(EvalSetupError, match="two sessions are named `a`"):
        EvalCase(
            name="x",
            agent=vet(),
            sessions=[CaseSession(first_message="1", name="a"), CaseSession("2", name="a")],
        )
    with pytest.raises(EvalSetupError, match="`max_turns` must be >= 1"):
        CaseSession(first_message="hi", max_turns=0)
    with pytest.raises(EvalSetupError, match="`user_agents` must be a UserAgents"):
        CaseSession(first_message="hi", user_agents=[])  # type: ignore[arg-type]
    with pytest.raises(
        EvalSetupError, match=r"got the agent `guest`; write UserAgents\(loop=guest\)$"
    ):
        CaseSession(first_message="hi", user_agents=ScriptedUserAgent(name="guest", script=[]))  # type: ignore[arg-type]
    with pytest.raises(EvalSetupError, match="`memory_service` must be one of"):
        EvalCase(name="x", agent=vet(), first_message="hi", memory_service="redis")  # type: ignore[arg-type]
    assert CaseSession(user_agents=UserAgents()).label(2) == "session_3"


class SeesSessions(BasePlugin):
    """An App's plugin: notes the session of every model call."""

    def __init__(self) -> None:
        super().__init__(name="sees_sessions")
        self.sessions: list[str] = []

    async def before_model_callback(self, *, callback_context, llm_request):
        self.sessions.append(callback_context.session.id)


async def test_an_app_with_a_plugin_runs_every_session_and_the_plugin_sees_each():
    plugin = SeesSessions()
    case = two_sessions()
    case.agent = App(name="vet_app", root_agent=vet(), plugins=[plugin])
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    assert len(plugin.sessions) == 3  # "Noted.", then the recall and its answer
    assert plugin.sessions[0] != plugin.sessions[1] == plugin.sessions[2]


async def test_the_transcript_and_the_report_mark_where_each_session_starts():
    result = await run_eval(two_sessions())
    lines = render_transcript(result.trace, include_state=False).splitlines()

    assert lines[0] == "— session 1 —"
    assert lines[lines.index("— session 2 —") + 1] == f"[user] {QUESTION}"
    assert f"[user] {FACT}" in lines[: lines.index("— session 2 —")]
    report = suite_report(
        suite_from_results([result], case_names=["remembers"], repeat=1, duration_ms=1.0)
    )
    assert "— session 2 —" in report["results"][0]["transcript"]
    assert "— session 2 —" in result.explain()


def test_a_session_is_played_through_the_conversation_protocols_public_method():
    from adk_eval._run.loop import _Simulation
    from adk_eval._run.sessions import Conversation

    assert callable(Conversation.converse)
    assert _Simulation.converse.__doc__
    assert not hasattr(Conversation, "_converse")
    assert not hasattr(_Simulation, "_converse")
