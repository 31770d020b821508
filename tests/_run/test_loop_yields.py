"""The simulation loop: yields, user agents, state changes, termination, errors."""

from __future__ import annotations

import asyncio
import time

import anyio
import pytest
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import LongRunningFunctionTool, ToolContext, request_input
from pydantic import BaseModel

from adk_eval import (
    STOP,
    EvalCase,
    ScriptContext,
    ScriptedUserAgent,
    TerminateWhen,
    ToolMock,
    UserAgents,
    run_eval,
    with_state_change,
)
from adk_eval.metrics import MetricResult, event_count_metric, state_metric
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call


def ask(question: str) -> None:
    """Asks the patient a question and waits for the answer."""
    raise AssertionError("the real `ask` must not run when a user agent answers it")


def request_consent(topic: str) -> None:
    """Asks for consent and waits."""
    raise AssertionError("the real `request_consent` must not run")


def read_state(key: str, tool_context: ToolContext) -> dict:
    """Returns a state value (safe: reads only)."""
    return {"value": tool_context.state.get(key)}


def escalate(level: str, tool_context: ToolContext) -> dict:
    """Records an escalation in state (safe: state only)."""
    tool_context.state["escalation"] = {"level": level}
    return {"escalated": level}


def texts_of(request: LlmRequest) -> list[str]:
    return [p.text for c in request.contents for p in c.parts or [] if p.text]


def function_responses_of(request: LlmRequest) -> list[dict]:
    return [
        dict(p.function_response.response)
        for c in request.contents
        for p in c.parts or []
        if p.function_response
    ]


# -- tool yields ----------------------------------------------------------------


async def test_two_parallel_tool_yields_are_answered_in_one_resume():
    requests: list[LlmRequest] = []
    steps = [
        [
            tool_call("ask", {"question": "Age?"}, id="q1"),
            tool_call("ask", {"question": "Pain?"}, id="q2"),
        ],
        "Thank you.",
    ]

    def respond(request: LlmRequest):
        requests.append(request)
        return steps[model_turn_index(request)]

    agent = LlmAgent(
        name="clinician", model=ScriptedLlm(responder=respond), tools=[LongRunningFunctionTool(ask)]
    )

    def answer(ctx: ScriptContext) -> dict:
        return {"answer": f"{ctx.yield_info.args['question']} -> #{ctx.turn}"}

    result = await run_eval(
        EvalCase(
            name="parallel",
            agent=agent,
            first_message="hi",
            user_agents=UserAgents(tools={"ask": ScriptedUserAgent(name="patient", step=answer)}),
        )
    )

    assert result.status == "passed", result.explain()
    assert len(requests) == 2  # the model was called once more, after both answers
    assert function_responses_of(requests[1]) == [
        {"answer": "Age? -> #0"},
        {"answer": "Pain? -> #1"},
    ]
    resume_events = [e for e in result.events if e.author == "user" and e.get_function_responses()]
    assert len(resume_events) == 1
    assert [fr.id for fr in resume_events[0].get_function_responses()] == ["q1", "q2"]
    assert result.turns == 1


async def test_distinct_tool_user_agents_answer_concurrently():
    both_started = anyio.Event()
    started: list[str] = []

    async def waits_for_the_other(ctx: ScriptContext) -> dict:
        started.append(ctx.yield_info.tool_name)
        if len(started) == 2:
            both_started.set()
        with anyio.fail_after(5):  # only completes if the other agent runs at the same time
            await both_started.wait()
        return {"ok": ctx.yield_info.tool_name}

    model = ScriptedLlm(
        [
            [tool_call("ask", {"question": "q"}), tool_call("request_consent", {"topic": "t"})],
            "done",
        ]
    )
    agent = LlmAgent(
        name="clinician",
        model=model,
        tools=[LongRunningFunctionTool(ask), LongRunningFunctionTool(request_consent)],
    )
    result = await run_eval(
        EvalCase(
            name="concurrent-answers",
            agent=agent,
            first_message="hi",
            user_agents=UserAgents(
                tools={
                    "ask": ScriptedUserAgent(name="patient", step=waits_for_the_other),
                    "request_consent": ScriptedUserAgent(name="guardian", step=waits_for_the_other),
                }
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert sorted(started) == ["ask", "request_consent"]


async def test_adk_request_input_yields_to_its_user_agent():
    model = ScriptedLlm(
        [tool_call("adk_request_input", {"message": "Your name?"}, id="ri-1"), "Nice to meet you."]
    )
    agent = LlmAgent(name="greeter", model=model, tools=[request_input])
    result = await run_eval(
        EvalCase(
            name="request-input",
            agent=agent,
            first_message="hi",
            user_agents=UserAgents(
                tools={
                    "adk_request_input": ScriptedUserAgent(name="human", script=[{"name": "Ann"}])
                }
            ),
        )
    )

    assert result.status == "passed", result.explain()
    [call] = result.trace.tool_calls
    assert call.response == {"name": "Ann"}
    assert result.trace.final_response == "Nice to meet you."


async def test_passthrough_long_running_tool_runs_then_waits_for_its_user_agent(tool_log):
    def note_question(question: str) -> None:
        """Records the question, then waits for the patient."""
        tool_log.record("note_question", question=question)

    tool = LongRunningFunctionTool(note_question)
    model = ScriptedLlm([tool_call("note_question", {"question": "Age?"}), "ok"])
    agent = LlmAgent(name="clinician", model=model, tools=[tool])
    result = await run_eval(
        EvalCase(
            name="lro-passthrough",
            agent=agent,
            first_message="hi",
            tool_mocks={"note_question": note_question},
            user_agents=UserAgents(
                tools={"note_question": ScriptedUserAgent(name="p", script=[{"age": 55}])}
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert tool_log.calls == [("note_question", {"question": "Age?"})]
    assert result.trace.tool_calls[0].response == {"age": 55}


# -- with_state_change -----------------------------------------------------------


async def test_state_change_reaches_the_system_and_is_hidden_from_the_user_agent_model():
    def reveal_condition(condition: str) -> dict:
        """Mention a condition from your history."""
        return with_state_change({"revealed": condition}, {"patient": {"revealed": [condition]}})

    patient_requests: list[LlmRequest] = []
    patient_steps = [
        tool_call("reveal_condition", {"condition": "hypertension"}),
        "I have high blood pressure.",
    ]

    def patient_model(request: LlmRequest):
        patient_requests.append(request)
        return patient_steps[model_turn_index(request)]

    patient = LlmAgent(
        name="patient", model=ScriptedLlm(responder=patient_model), tools=[reveal_condition]
    )
    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm(
            [
                tool_call("ask", {"question": "Any history?"}),
                tool_call("read_state", {"key": "patient:revealed"}),
                "Noted.",
            ]
        ),
        tools=[LongRunningFunctionTool(ask), read_state],
    )
    result = await run_eval(
        EvalCase(
            name="state-change",
            agent=system,
            first_message="hi",
            tool_mocks={"read_state": read_state},
            user_agents=UserAgents(tools={"ask": patient}),
        )
    )

    assert result.status == "passed", result.explain()
    read = next(c for c in result.trace.tool_calls if c.name == "read_state")
    assert read.response == {"value": ["hypertension"]}
    # the user agent's model saw only the plain result, never the state changes
    assert function_responses_of(patient_requests[1]) == [{"revealed": "hypertension"}]
    assert result.final_state["patient"] == {"revealed": ["hypertension"]}
    # the change is applied by a content-less event the system model never sees
    change_events = [e for e in result.events if e.custom_metadata and e.actions.state_delta]
    assert [e.actions.state_delta for e in change_events] == [
        {"patient:revealed": ["hypertension"]}
    ]
    assert change_events[0].content is None


async def test_parallel_state_changes_merge_in_call_order():
    def reveal(condition: str) -> dict:
        """Reveal a condition."""
        return with_state_change(
            {"ok": True}, {"patient": {"revealed": [condition]}, "session": {"last": condition}}
        )

    def answerer(name: str, condition: str, delay: float) -> LlmAgent:
        async def respond(request: LlmRequest):
            await asyncio.sleep(delay)  # the later call finishes first
            return [tool_call("reveal", {"condition": condition}), "ok"][model_turn_index(request)]

        return LlmAgent(name=name, model=ScriptedLlm(responder=respond), tools=[reveal])

    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm(
            [
                [tool_call("ask", {"question": "a"}), tool_call("request_consent", {"topic": "b"})],
                "done",
            ]
        ),
        tools=[LongRunningFunctionTool(ask), LongRunningFunctionTool(request_consent)],
    )
    result = await run_eval(
        EvalCase(
            name="merge-order",
            agent=system,
            first_message="hi",
            initial_state={"patient": {"revealed": ["asthma"]}},
            user_agents=UserAgents(
                tools={
                    "ask": answerer("first", "hypertension", 0.2),
                    "request_consent": answerer("second", "diabetes", 0.0),
                }
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.final_state["patient"]["revealed"] == ["asthma", "hypertension", "diabetes"]
    assert result.final_state["session"]["last"] == "diabetes"


# -- termination ------------------------------------------------------------------


async def test_state_matches_stops_the_run_normally():
    system = LlmAgent(
        name="clinician",
        model=ScriptedLlm([tool_call("escalate", {"level": "999"}), "Call 999 now."]),
        tools=[escalate],
    )
    patient = ScriptedUserAgent(name="patient", script=[], when_exhausted="error")
    result = await run_eval(
        EvalCase(
            name="stop-on-state",
            agent=system,
            first_message="chest pain",
            tool_mocks={"escalate": escalate},
            user_agents=UserAgents(loop=patient),
            terminate_when=TerminateWhen(
                state_matches={"session": {"escalation": {"$exists": True}}}
            ),
            metrics=[
                state_metric("escalated", "session", "escalation", lambda v: v["level"] == "999")
            ],
        )
    )

    assert result.status == "passed", result.explain()
    assert result.termination_reason == "state_matches"
    assert result.termination.value["session"]["escalation"] == {"level": "999"}
    assert result.turns == 0
    assert result.user_agent_events == ()


async def test_max_turns_terminates_and_metrics_still_run():
    system = LlmAgent(name="chatty", model=ScriptedLlm(responder=lambda r: "Tell me more."))
    patient = ScriptedUserAgent(name="patient", step=lambda ctx: f"message {ctx.turn}")
    result = await run_eval(
        EvalCase(
            name="endless",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
            terminate_when=TerminateWhen(max_turns=3),
            metrics=[event_count_metric("replies", "agent_message", assertion=lambda n: n == 4)],
        )
    )

    assert result.status == "terminated"
    assert result.termination_reason == "max_turns"
    assert (result.termination.limit, result.termination.value) == (3, 3)
    assert result.turns == 3
    assert result.metrics["replies"].passed, result.explain()
    assert [m.text for m in result.trace.select("user_message")] == [
        "hi",
        "message 0",
        "message 1",
        "message 2",
    ]


async def test_max_duration_cuts_a_model_that_never_returns():
    cancelled = anyio.Event()

    async def hang(request: LlmRequest):
        try:
            await anyio.sleep_forever()
        finally:
            cancelled.set()

    agent = LlmAgent(name="stuck", model=ScriptedLlm(responder=hang))
    before = set(asyncio.all_tasks())
    limit = 0.5
    started = time.perf_counter()

    result = await run_eval(
        EvalCase(
            name="hung",
            agent=agent,
            first_message="hi",
            terminate_when=TerminateWhen(max_duration=limit),
            metrics=[
                event_count_metric("user_messages", "user_message", assertion=lambda n: n == 1)
            ],
        )
    )
    elapsed = time.perf_counter() - started

    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"
    assert result.termination.value >= limit
    assert cancelled.is_set()  # the hung call itself was cancelled, not abandoned
    # a generous margin: timers on shared CI machines overshoot by up to ~1.5s
    assert elapsed < limit + 3.0
    assert result.metrics["user_messages"].passed
    await asyncio.sleep(0)
    leftover = {
        t for t in asyncio.all_tasks() if t not in before and t is not asyncio.current_task()
    }
    assert leftover == set()


async def test_max_duration_cuts_a_hung_tool():
    async def hang_forever(args, ctx):
        await anyio.sleep_forever()

    def slow_lookup(q: str) -> dict:
        """Looks something up."""
        return {}

    agent = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("slow_lookup", {"q": "x"}), "done"]),
        tools=[slow_lookup],
    )
    result = await run_eval(
        EvalCase(
            name="hung-tool",
            agent=agent,
            first_message="hi",
            tool_mocks={"slow_lookup": ToolMock(hang_forever)},
            terminate_when=TerminateWhen(max_duration=0.3),
        )
    )

    assert result.status == "terminated"
    assert result.termination_reason == "max_duration"


# -- user agents --------------------------------------------------------------------


async def test_loop_user_agent_opens_the_conversation_without_a_first_message():
    system = LlmAgent(name="a", model=ScriptedLlm(["Hello! How can I help?"]))
    patient = ScriptedUserAgent(
        name="patient", step=lambda ctx: "I feel sick" if ctx.turn == 0 else STOP
    )
    result = await run_eval(
        EvalCase(name="opening", agent=system, user_agents=UserAgents(loop=patient))
    )

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.messages] == ["I feel sick", "Hello! How can I help?"]
    assert result.turns == 0  # neither the opening nor the STOP that ends it is a turn


async def test_llm_user_agent_stop_signal_ends_the_conversation():
    system = LlmAgent(name="a", model=ScriptedLlm(responder=lambda r: "Anything else?"))
    patient = LlmAgent(
        name="patient", model=ScriptedLlm(["Just one thing", "No, thanks! </finished>"])
    )
    result = await run_eval(
        EvalCase(
            name="stop-signal",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.termination_reason is None
    assert [m.text for m in result.trace.select("user_message")] == ["hi", "Just one thing"]


async def test_tool_user_agent_with_output_schema_answers_with_structured_output():
    class Answer(BaseModel):
        answer: str
        confident: bool

    patient = LlmAgent(
        name="patient",
        model=ScriptedLlm(['{"answer": "30 minutes", "confident": true}']),
        output_schema=Answer,
    )
    system = LlmAgent(
        name="c",
        model=ScriptedLlm([tool_call("ask", {"question": "How long?"}), "ok"]),
        tools=[LongRunningFunctionTool(ask)],
    )
    result = await run_eval(
        EvalCase(
            name="structured",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(tools={"ask": patient}),
        )
    )

    assert result.status == "passed", result.explain()
    assert result.trace.tool_calls[0].response == {"answer": "30 minutes", "confident": True}


async def test_user_agent_shares_one_session_across_roles():
    seen_by_loop: list[list[str]] = []

    def loop_step(ctx: ScriptContext):
        seen_by_loop.append([e.author for e in ctx.session.events])
        return STOP

    system = LlmAgent(
        name="c",
        model=ScriptedLlm([tool_call("ask", {"question": "q"}), "Any questions?"]),
        tools=[LongRunningFunctionTool(ask)],
    )
    result = await run_eval(
        EvalCase(
            name="shared-session",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(
                loop=ScriptedUserAgent(name="talker", step=loop_step),
                tools={"ask": ScriptedUserAgent(name="answerer", script=[{"a": 1}])},
            ),
        )
    )

    assert result.status == "passed", result.explain()
    assert seen_by_loop == [["user", "answerer", "user"]]


async def test_a_failing_user_agent_is_a_user_agent_error():
    def broken(ctx: ScriptContext):
        raise ValueError("persona crashed")

    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(
            name="broken-user",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="patient", step=broken)),
        )
    )

    assert result.status == "error"
    assert result.error.phase == "user_agent"
    assert "User agent `patient` failed while answering a loop yield" in result.error.message
    assert "ValueError: persona crashed" in result.error.message


async def test_a_failing_system_model_is_a_system_error():
    system = LlmAgent(name="a", model=ScriptedLlm([ConnectionError("provider down")]))
    result = await run_eval(EvalCase(name="broken-system", agent=system, first_message="hi"))

    assert result.status == "error"
    assert result.error.phase == "system"
    assert "provider down" in result.error.message


async def test_exhausted_script_is_a_clear_system_error():
    system = LlmAgent(name="a", model=ScriptedLlm(["one"]))
    patient = ScriptedUserAgent(name="patient", script=["more please"])
    result = await run_eval(
        EvalCase(
            name="short-script",
            agent=system,
            first_message="hi",
            user_agents=UserAgents(loop=patient),
        )
    )

    assert result.status == "error"
    assert "has 1 steps but was asked for step #2" in result.error.message


# -- metrics, tokens, isolation -----------------------------------------------------------


async def test_a_metric_that_raises_is_reported_and_the_others_still_run():
    class Boom:
        name = "boom"

        def evaluate(self, trace):
            raise KeyError("missing")

    class Good:
        name = "good"

        async def evaluate(self, trace):
            return MetricResult(passed=True, score=1.0)

    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(name="metric-error", agent=system, first_message="hi", metrics=[Boom(), Good()])
    )

    assert result.status == "error"
    assert result.error.phase == "metric"
    assert "metric `boom` raised KeyError" in result.error.message
    assert result.metrics["good"].passed
    assert not result.metrics["boom"].passed
    assert result.metrics["boom"].error.startswith("KeyError")


async def test_failing_metric_makes_the_status_failed():
    system = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    result = await run_eval(
        EvalCase(
            name="fails",
            agent=system,
            first_message="hi",
            metrics=[event_count_metric("no_tools", "tool_call", assertion=lambda n: n > 0)],
        )
    )

    assert result.status == "failed"
    assert result.failed_metrics.keys() == {"no_tools"}


async def test_token_usage_is_summed_from_the_events():
    system = LlmAgent(
        name="a",
        model=ScriptedLlm([tool_call("read_state", {"key": "k"}), "done"]),
        tools=[read_state],
    )
    result = await run_eval(
        EvalCase(
            name="tokens", agent=system, first_message="hi", tool_mocks={"read_state": read_state}
        )
    )

    per_event = [e.usage_metadata for e in result.events if e.usage_metadata]
    assert len(per_event) == 2
    assert result.token_usage.input_tokens == sum(u.prompt_token_count for u in per_event) > 0
    assert result.token_usage.output_tokens == sum(u.candidates_token_count for u in per_event) > 0
    assert result.token_usage.total_tokens == (
        result.token_usage.input_tokens + result.token_usage.output_tokens
    )


async def test_concurrent_cases_sharing_one_agent_do_not_see_each_others_state():
    def bump(tool_context: ToolContext) -> dict:
        """Increments a counter in state (safe)."""
        count = tool_context.state.get("user:count", 0) + 1
        tool_context.state["user:count"] = count
        return {"count": count}

    agent = LlmAgent(
        name="counter",
        model=ScriptedLlm([tool_call("bump"), tool_call("bump"), "done"]),
        tools=[bump],
    )
    cases = [
        EvalCase(
            name=f"case-{i}",
            agent=agent,
            first_message="go",
            tool_mocks={"bump": bump},
            initial_state={"user": {"count": i * 100}, "session": {"who": i}},
        )
        for i in range(10)
    ]
    results = {}

    async def run(case):
        results[case.name] = await run_eval(case)

    async with anyio.create_task_group() as group:
        for case in cases:
            group.start_soon(run, case)

    for i in range(10):
        result = results[f"case-{i}"]
        assert result.status == "passed", result.explain()
        assert result.final_state["user"]["count"] == i * 100 + 2
        assert result.final_state["session"]["who"] == i
    assert cases[3].initial_state["user"]["count"] == 300  # the case's own dict is untouched


@pytest.mark.parametrize("bad_answer", [lambda ctx: 42])
async def test_loop_answers_that_are_not_text_are_sent_as_json(bad_answer):
    system = LlmAgent(name="a", model=ScriptedLlm(["q?", "ok"]))
    patient = ScriptedUserAgent(name="p", step=lambda ctx: {"n": 42} if ctx.turn == 0 else STOP)
    result = await run_eval(
        EvalCase(
            name="json-loop", agent=system, first_message="hi", user_agents=UserAgents(loop=patient)
        )
    )

    assert result.status == "passed", result.explain()
    assert [m.text for m in result.trace.select("user_message")] == ["hi", '{"n": 42}']


def _forbidden_agent():
    from google.adk.agents import LlmAgent

    from adk_eval.testing import ScriptedLlm, tool_call

    def delete_account(user: str) -> dict:
        """Deletes an account (never mocked: the case expects the run to stop here)."""
        raise AssertionError("never runs")

    return LlmAgent(
        name="admin",
        model=ScriptedLlm([tool_call("delete_account", {"user": "1"}), "Deleted."]),
        tools=[delete_account],
    )


async def test_a_case_expecting_an_unmocked_tool_passes_when_the_run_stops_there():
    from adk_eval import EvalCase, EvalToolError, run_eval

    by_class = await run_eval(
        EvalCase(name="c", agent=_forbidden_agent(), first_message="go", expect_error=EvalToolError)
    )
    by_pattern = await run_eval(
        EvalCase(name="p", agent=_forbidden_agent(), first_message="go", expect_error="delete_acc")
    )

    for result in (by_class, by_pattern):
        assert result.status == "passed", result.explain()
        assert result.error is None
        assert result.metrics["expect_error"].evidence[0].startswith("ended as expected")
        assert "EvalToolError: " in result.metrics["expect_error"].evidence[0]


async def test_a_case_expecting_an_error_fails_without_it_and_keeps_another_error():
    from adk_eval import EvalCase, ToolMock, run_eval

    mocked = EvalCase(
        name="m",
        agent=_forbidden_agent(),
        first_message="go",
        tool_mocks={"delete_account": ToolMock.returning({"ok": True})},
        expect_error="EvalToolError",
    )
    other = EvalCase(
        name="o", agent=_forbidden_agent(), first_message="go", expect_error=TimeoutError
    )

    no_error, wrong_error = await run_eval(mocked), await run_eval(other)

    assert no_error.status == "failed"
    assert no_error.metrics["expect_error"].evidence == [
        "expected the run to end in an error matching 'EvalToolError'; it ended without an error"
    ]
    assert wrong_error.status == "error"
    assert (
        wrong_error.metrics["expect_error"]
        .evidence[0]
        .startswith("expected `TimeoutError`; the run ended in EvalToolError")
    )


def test_expect_error_must_be_an_exception_class_or_a_pattern():
    import pytest

    from adk_eval import EvalCase, EvalSetupError

    with pytest.raises(EvalSetupError, match="`expect_error` must be an exception class"):
        EvalCase(name="x", agent=_forbidden_agent(), first_message="go", expect_error=42)
