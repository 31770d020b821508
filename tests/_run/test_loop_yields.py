"""The loop's tool yields: each answered by its user agent, and the state changes they make.

Parallel calls are answered in one resume (their user agents concurrently); ADK's
`request_input` and a pass-through long-running tool yield too; a `with_state_change`
answer reaches the system, never the user agent's model, merged in call order.
"""

from __future__ import annotations

import asyncio

import anyio
from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from google.adk.tools import LongRunningFunctionTool, request_input

from adk_eval import (
    EvalCase,
    ScriptContext,
    ScriptedUserAgent,
    UserAgents,
    run_eval,
    with_state_change,
)
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call

from .clinic import ask, read_state


def request_consent(topic: str) -> None:
    """Asks for consent and waits."""
    raise AssertionError("the real `request_consent` must not run")


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
