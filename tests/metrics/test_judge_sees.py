"""llm_judge(sees=...): what the judge gets besides the transcript, its query tools, its hash."""

from __future__ import annotations

import hashlib
import json
import re

import pytest
from google.adk.agents import LlmAgent
from google.adk.sessions import Session
from google.adk.tools import AgentTool

from adk_eval import EvalCase, EvalSetupError, EvalTrace, ToolMock, run_eval
from adk_eval._sources._stored import StoredConversation
from adk_eval.metrics import llm_judge
from adk_eval.metrics._judge import JUDGE_INSTRUCTION
from adk_eval.production import Redactor, redact_session
from adk_eval.production._score import score_stored
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    model_turn_index,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)


def refund_trace(issued: bool) -> EvalTrace:
    """The agent says "done" either way; only the final state tells whether it refunded."""
    return EvalTrace(
        events=[user_event("refund order A1 please"), text_event("shop", "Done!")],
        final_state={"session": {"refund_issued": issued}},
    )


def verdict(passed: bool, reasoning: str = "because") -> str:
    return json.dumps({"passed": passed, "score": float(passed), "reasoning": reasoning})


def prompt_of(request) -> str:
    return request.contents[0].parts[0].text


class Judge:
    """A judge model that passes only when what it read shows the refund was issued."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, request) -> str:
        self.prompts.append(prompt_of(request))
        return verdict('"refund_issued": true' in self.prompts[-1])


async def test_only_a_judge_that_sees_the_state_tells_a_refund_from_none():
    blind_model, seeing_model = Judge(), Judge()
    blind = llm_judge(
        "refund_ok", "Was the refund issued?", model=ScriptedLlm(responder=blind_model), sees=()
    )
    seeing = llm_judge(
        "refund_ok",
        "Was the refund issued?",
        model=ScriptedLlm(responder=seeing_model),
        sees=("state",),
    )

    blind_verdicts = [(await blind.evaluate(refund_trace(i))).passed for i in (True, False)]
    seeing_verdicts = [(await seeing.evaluate(refund_trace(i))).passed for i in (True, False)]

    assert blind_model.prompts[0] == blind_model.prompts[1]  # it read the same thing twice
    assert "refund_issued" not in blind_model.prompts[0]
    assert blind_verdicts == [False, False]
    assert 'session: {"refund_issued": true}' in seeing_model.prompts[0]
    assert 'session: {"refund_issued": false}' in seeing_model.prompts[1]
    assert seeing_verdicts == [True, False]


def mocked_trace() -> EvalTrace:
    """A refund a mock answered (writing state), a lookup the real tool answered, a refused call."""
    return EvalTrace(
        events=[
            user_event("refund A1"),
            tool_call_event("shop", "lookup", {"order": "A1"}, call_id="c1"),
            function_response_event("shop", "lookup", {"paid": 30}, call_id="c1"),
            tool_call_event("shop", "refund", {"order": "A1", "amount": 30}, call_id="c2"),
            function_response_event(
                "shop", "refund", {"ok": True}, call_id="c2", state_delta={"refund_issued": True}
            ),
            tool_call_event("shop", "delete_account", {"user": "ann"}, call_id="c3"),
            function_response_event("shop", "delete_account", {"error": "refused"}, call_id="c3"),
            tool_call_event("shop", "notify", {"to": "ann"}, call_id="c4"),
            function_response_event("shop", "notify", {"error": "down"}, call_id="c4"),
            text_event("shop", "Done!"),
        ],
        final_state={"session": {"refund_issued": True}},
        tool_sources={"c2": "mock", "c3": "refused", "c4": "fault"},
        tool_errors={"c4": "ConnectionError: mail down"},
    )


async def test_tool_calls_and_mock_records_are_in_what_the_judge_reads():
    judge = Judge()
    metric = llm_judge(
        "refund_ok", "criteria", model=ScriptedLlm(responder=judge), sees=("tool_calls", "mocks")
    )
    await metric.evaluate(mocked_trace())
    calls, _, mocks = judge.prompts[0].partition("What the mocks recorded")

    assert "Final state" not in judge.prompts[0]  # it did not ask for the state
    assert '#1 shop -> lookup({"order": "A1"}), answered by real: {"paid": 30}' in calls
    assert (
        '#2 shop -> refund({"amount": 30, "order": "A1"}), answered by mock: {"ok": true}' in calls
    )
    assert "#3 shop -> delete_account" in calls
    assert "answered by refused" in calls
    assert "answered by fault: raised ConnectionError: mail down" in calls
    assert "#1 " not in mocks  # the real tool's answer is not a mock's record
    assert "#2 shop -> refund" in mocks
    assert 'occurrence 0; wrote state {"refund_issued": true}' in mocks
    assert "#4 shop -> notify" in mocks
    assert "#3 " not in mocks


def asks_for_the_state(request):
    """Asks get_state('refund_issued') first, then passes when the answer says it is True."""
    answers = [
        part.function_response
        for content in request.contents
        for part in content.parts or []
        if part.function_response
    ]
    if not answers:
        return tool_call("get_state", {"key": "refund_issued"})
    return verdict(answers[-1].response["value"] is True, f"the state says {answers[-1].response}")


async def test_a_querying_judge_reads_the_state_through_a_tool():
    requests = []

    def model(request):
        requests.append(request.model_copy(deep=True))
        return asks_for_the_state(request)

    metric = llm_judge("refund_ok", "criteria", model=ScriptedLlm(responder=model), sees="query")
    issued = await metric.evaluate(refund_trace(True))
    not_issued = await metric.evaluate(refund_trace(False))

    assert issued.passed
    assert not not_issued.passed
    assert "'value': True" in issued.evidence[0]
    assert "refund_issued" not in prompt_of(requests[0])  # nothing pasted: it asked
    offered = {d.name for tool in requests[0].config.tools for d in tool.function_declarations}
    assert offered == {"get_state", "list_state_keys", "list_tool_calls", "get_tool_call"}
    assert requests[0].config.response_mime_type is None  # tools and a JSON type do not mix
    assert "get_state" in requests[0].config.system_instruction
    assert [c.role for c in requests[1].contents] == ["user", "model", "user"]


async def test_the_query_tools_list_and_read_tool_calls():
    steps = [
        tool_call("list_tool_calls", {"name": "refund"}),
        tool_call("get_tool_call", {"index": 2}),
        [tool_call("get_tool_call", {"index": 9}), tool_call("list_state_keys", {})],
        verdict(True),
    ]
    last = []

    def model(request):
        last[:] = [request]
        return steps[model_turn_index(request)]

    metric = llm_judge("q", "criteria", model=ScriptedLlm(responder=model), sees=("query",))
    result = await metric.evaluate(mocked_trace())
    seen = [
        part.function_response.response
        for content in last[0].contents
        for part in content.parts or []
        if part.function_response
    ]

    assert result.passed
    assert seen[0] == {
        "calls": [{"index": 2, "tool": "refund", "agent": "shop", "answered_by": "mock"}],
        "total": 1,
    }
    assert seen[1] == {
        "index": 2,
        "tool": "refund",
        "agent": "shop",
        "args": {"order": "A1", "amount": 30},
        "answered_by": "mock",
        "answer": {"ok": True},
    }
    assert seen[2] == {"error": "no call #9: the run made 4 tool call(s)"}
    assert seen[3] == {"keys": ["refund_issued"], "total": 1}


async def test_a_judge_still_querying_after_its_rounds_gives_no_verdict():
    model = ScriptedLlm(responder=lambda request: tool_call("list_state_keys", {}))
    metric = llm_judge("q", "criteria", model=model, sees="query", max_query_rounds=2)
    result = await metric.evaluate(refund_trace(True))
    assert not result.passed
    assert (
        "still querying after 2 rounds: list_state_keys, list_state_keys, list_state_keys"
        in (result.evidence[0])
    )


def test_the_prompt_hash_covers_what_the_judge_sees():
    def hash_of(**kwargs) -> str:
        return llm_judge(
            "refund_ok", "Was it refunded?", model="gemini-2.5-flash", **kwargs
        ).identity()["prompt_hash"]

    hashes = {
        "default": hash_of(),
        "include_state": hash_of(include_state=True),
        "state": hash_of(sees=("transcript", "state")),
        "transcript": hash_of(sees=("transcript",)),
        "no_state": hash_of(include_state=False),
        "tool_calls": hash_of(sees=("state", "tool_calls")),
        "query": hash_of(sees=("query",)),
        "query_3": hash_of(sees=("query",), max_query_rounds=3),
    }
    # The transcript-and-state judge saw that before sees existed: its labels keep counting.
    before = f"{JUDGE_INSTRUCTION}\nWas it refunded?\nmajority:0.5"
    assert hashes["default"] == hashlib.sha256(before.encode()).hexdigest()[:12]
    assert hashes["default"] == hashes["include_state"] == hashes["state"]
    assert hashes["transcript"] == hashes["no_state"]
    different = ["default", "transcript", "tool_calls", "query", "query_3"]
    assert len({hashes[name] for name in different}) == len(different)


def test_what_a_judge_needs_follows_what_it_sees():
    assert llm_judge("j", "c").needs == {"content"}  # shows the state when there is one
    assert llm_judge("j", "c", sees=("tool_calls",)).needs == {"content"}
    assert llm_judge("j", "c", sees=("state",)).needs == {"content", "state"}
    assert llm_judge("j", "c", include_state=True).needs == {"content", "state"}
    assert llm_judge("j", "c", sees="query").needs == {"content", "state"}
    assert llm_judge("j", "c", sees=["mocks", "state"]).views == ("transcript", "state", "mocks")


async def test_a_judge_that_sees_the_state_is_not_applicable_on_a_trace_without_state():
    session = Session(
        id="s", app_name="shop", user_id="ann", events=list(refund_trace(True).events)
    )
    seeing = llm_judge("seeing", "c", model=ScriptedLlm(responder=Judge()), sees=("state",))
    reading = llm_judge("reading", "c", model=ScriptedLlm(responder=Judge()))
    stored = StoredConversation.build(session, lacks=frozenset({"state"}))
    result = await score_stored(stored, [seeing, reading])
    assert result.metrics["seeing"].verdict == "n/a"
    assert "it reads the state" in result.metrics["seeing"].evidence[0]
    assert result.metrics["reading"].applicable


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"sees": ("state",), "include_state": False},
            re.escape("include_state=False contradicts sees=('state',); drop include_state"),
        ),
        ({"sees": ("tool_calls",), "include_state": True}, "include_state=True contradicts"),
        ({"sees": ("stat",)}, "sees names what the judge gets besides the transcript.*got 'stat'"),
        ({"sees": "query", "max_query_rounds": 0}, "max_query_rounds must be >= 1, got 0"),
    ],
)
def test_settings_that_contradict_or_are_unknown_are_refused(kwargs, message):
    with pytest.raises(EvalSetupError, match=message):
        llm_judge("j", "c", **kwargs)


async def test_a_production_session_is_seen_redacted_in_every_view():
    events = [
        user_event("refund me, I am ann@example.com"),
        tool_call_event("shop", "refund", {"card": "4111 1111 1111 1111"}, call_id="c1"),
        function_response_event("shop", "refund", {"receipt_to": "ann@example.com"}, call_id="c1"),
        text_event("shop", "Done!"),
    ]
    session = Session(
        id="s", app_name="shop", user_id="ann", events=events, state={"contact": "ann@example.com"}
    )
    clean, _ = redact_session(session, Redactor())  # what score does before any metric reads it
    judge = Judge()
    metric = llm_judge(
        "j", "c", model=ScriptedLlm(responder=judge), sees=("state", "tool_calls", "mocks")
    )
    await metric.evaluate(EvalTrace.from_session(clean))
    assert "ann@example.com" not in judge.prompts[0]
    assert "4111" not in judge.prompts[0]
    assert 'session: {"contact": "<EMAIL_1>"}' in judge.prompts[0]
    assert (
        'refund({"card": "<CARD_1>"}), answered by real: {"receipt_to": "<EMAIL_1>"}'
        in (judge.prompts[0])
    )


def issue_refund(order: str, amount: float) -> dict:
    """Issues a refund (mocked in these tests)."""
    raise AssertionError("the real refund never runs")


def refund_mock(args, ctx):
    ctx.state.set("refund_issued", True)
    return {"ok": True, "refund_id": "R-1"}


async def test_a_judge_reads_what_a_sub_agent_did_through_its_mocked_tool():
    refunds = LlmAgent(
        name="refunds",
        description="Issues refunds.",
        model=ScriptedLlm([tool_call("issue_refund", {"order": "A1", "amount": 30}), "refunded"]),
        tools=[issue_refund],
    )
    root = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("refunds", {"request": "refund A1"}), "Done!"]),
        tools=[AgentTool(refunds)],
    )
    judge = Judge()
    metric = llm_judge(
        "refund_ok",
        "Was the refund issued, by a mock standing in for the payment system?",
        model=ScriptedLlm(responder=judge),
        sees=("state", "tool_calls", "mocks"),
    )
    case = EvalCase(
        name="refund",
        agent=root,
        tool_mocks={"issue_refund": ToolMock(refund_mock)},
        first_message="refund A1 please",
        metrics=[metric],
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    seen = judge.prompts[0]
    assert '#1 shop -> refunds({"request": "refund A1"}), answered by agent_tool' in seen
    assert (
        '#2 refunds (inside refunds) -> issue_refund({"amount": 30, "order": "A1"}), '
        'answered by mock: {"ok": true, "refund_id": "R-1"}'
    ) in seen
    _, _, mocks = seen.partition("What the mocks recorded")
    assert 'occurrence 0; wrote state {"refund_issued": true}' in mocks
    assert (
        result.metrics["refund_ok"].value["judge"]["prompt_hash"]
        == metric.identity()["prompt_hash"]
    )


def send_receipt(email: str) -> dict:
    """Sends the receipt (the real tool: it runs while the store is filled)."""
    return {"sent_to": email}


async def test_score_shows_every_view_and_every_query_answer_of_a_stored_session_redacted(
    tmp_path,
):
    from google.adk.runners import Runner
    from google.adk.sessions.sqlite_session_service import SqliteSessionService
    from google.genai import types

    from adk_eval.production import open_sessions
    from adk_eval.production._score import score_sessions

    store = tmp_path / "sessions.db"
    service = SqliteSessionService(str(store))
    agent = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("send_receipt", {"email": "ann@example.com"}), "Sent!"]),
        tools=[send_receipt],
    )
    session = await service.create_session(
        app_name="shop", user_id="ann", state={"contact": "ann@example.com"}
    )
    message = types.Content(role="user", parts=[types.Part(text="mail ann@example.com")])
    async for _ in Runner(agent=agent, app_name="shop", session_service=service).run_async(
        user_id="ann", session_id=session.id, new_message=message
    ):
        pass
    pasted, answers = Judge(), []

    def querying(request):
        if model_turn_index(request) == 0:
            return [
                tool_call("get_state", {"key": "contact"}),
                tool_call("get_tool_call", {"index": 1}),
            ]
        answers.extend(p.function_response.response for p in request.contents[-1].parts)
        return verdict(True)

    metrics = [
        llm_judge("pasted", "c", model=ScriptedLlm(responder=pasted), sees=("state", "tool_calls")),
        llm_judge("queried", "c", model=ScriptedLlm(responder=querying), sees="query"),
    ]
    suite = await score_sessions(open_sessions(f"sqlite:///{store}"), metrics)

    assert suite.results[0].metrics["queried"].passed, suite.results[0].explain()
    seen = pasted.prompts[0]
    assert "ann@example.com" not in seen + json.dumps(answers)
    assert 'session: {"contact": "<EMAIL_1>"}' in seen
    assert (
        'send_receipt({"email": "<EMAIL_1>"}), answered by real: {"sent_to": "<EMAIL_1>"}' in seen
    )
    state, call = answers
    assert state == {"key": "contact", "found": True, "value": "<EMAIL_1>"}
    assert (call["args"], call["answer"]) == ({"email": "<EMAIL_1>"}, {"sent_to": "<EMAIL_1>"})
