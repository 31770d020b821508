"""llm_judge on large worlds and its query tools' safety: what the judge reads is bounded, with
markers; the query tools answer copies, never change the trace, and answer bad calls with errors."""

from __future__ import annotations

import copy
import json
from datetime import date

from adk_eval import EvalTrace
from adk_eval.metrics import llm_judge
from adk_eval.metrics._judge_tools import ANSWER_LIMIT, PAGE, TraceQueries
from adk_eval.metrics._judge_views import TRANSCRIPT_LIMIT, VIEW_LIMIT, bounded
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    model_turn_index,
    text_event,
    tool_call,
    tool_call_event,
    user_event,
)

PASS = json.dumps({"passed": True, "score": 1.0, "reasoning": "read it"})


def busy_trace(calls: int = 2000, blob: int = 5_000_000) -> EvalTrace:
    """`calls` mocked lookups, each with a 1 kB answer, and a state holding a `blob`-byte value."""
    events = [user_event("check everything")]
    for i in range(1, calls + 1):
        events.append(tool_call_event("shop", "lookup", {"order": f"A{i}"}, call_id=f"c{i}"))
        answer = {"order": f"A{i}", "note": "n" * 1000}
        events.append(function_response_event("shop", "lookup", answer, call_id=f"c{i}"))
    events.append(text_event("shop", "All checked."))
    return EvalTrace(
        events=events,
        final_state={"session": {"blob": "x" * blob, "refund_issued": True}},
        tool_sources={f"c{i}": "mock" for i in range(1, calls + 1)},
    )


class Reader:
    """A judge model that keeps what it was asked to read."""

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, request) -> str:
        self.prompts.append(request.contents[0].parts[0].text)
        return PASS


async def test_a_judge_of_a_5_mb_state_and_2000_calls_reads_a_bounded_prompt_with_markers():
    reader = Reader()
    judge = llm_judge(
        "j", "c", model=ScriptedLlm(responder=reader), sees=("state", "tool_calls", "mocks")
    )
    assert (await judge.evaluate(busy_trace())).passed
    seen = reader.prompts[0]

    assert len(seen) < TRANSCRIPT_LIMIT + 2 * VIEW_LIMIT + 20_000  # not 7 MB
    transcript, _, views = seen.partition("\n\nTool calls (numbered")
    assert "[user] check everything" in transcript  # the first entries and the last are kept
    assert "[shop] All checked." in transcript
    assert "transcript entries left out here" in transcript
    assert '"blob": "xxxx' in transcript  # the state, cut
    assert "more characters]" in transcript
    calls, _, mocks = views.partition("What the mocks recorded")
    assert '#1 shop -> lookup({"order": "A1"})' in calls
    assert '#2000 shop -> lookup({"order": "A2000"})' in calls
    assert "tool calls left out here" in calls
    assert "the judge reads at most 40000 characters of them" in calls
    assert len(calls) < VIEW_LIMIT + 500
    assert "#2000 shop" in mocks
    assert "records left out here" in mocks
    assert len(mocks) < VIEW_LIMIT + 500


def test_bounded_keeps_what_fits_and_says_what_it_left_out():
    lines = [f"line {i:02}" for i in range(20)]  # 7 characters each, 8 with its newline
    assert bounded(lines, 1000, "lines") is lines
    kept = bounded(lines, 40, "lines")
    assert kept == [
        *lines[:2],
        "… [16 lines left out here (128 characters): "
        "the judge reads at most 40 characters of them]",
        *lines[-2:],
    ]


async def test_the_query_tools_answer_a_large_world_in_bounded_pages():
    queries = TraceQueries(busy_trace(calls=250, blob=100_000))

    blob = queries.get_state("blob")
    assert blob["found"]
    assert len(blob["value"]) < ANSWER_LIMIT + 40
    assert blob["value"].endswith(f"… [{100_002 - ANSWER_LIMIT} more characters]")
    first = queries.list_tool_calls()
    assert [c["index"] for c in first["calls"]] == list(range(1, PAGE + 1))
    assert (first["total"], first["next"]) == (250, PAGE + 1)
    last = queries.list_tool_calls(start=201)
    assert [c["index"] for c in last["calls"]] == list(range(201, 251))
    assert "next" not in last
    assert queries.get_tool_call(250)["args"] == {"order": "A250"}
    assert queries.list_state_keys() == {"keys": ["blob", "refund_issued"], "total": 2}


async def test_the_query_tools_change_nothing_and_answer_bad_calls_with_errors():
    trace = busy_trace(calls=2, blob=10)
    trace.final_state["session"]["when"] = date(2024, 5, 1)  # not JSON: answered as its repr
    before = (copy.deepcopy(trace.final_state), [dict(c.args) for c in trace.nested_tool_calls])
    steps = [
        [
            tool_call("get_state", {"key": "refund_issued", "value": False}),
            tool_call("set_state", {"key": "refund_issued", "value": False}),
            tool_call("get_tool_call", {"index": 1.0}),  # as Gemini may send a number
            tool_call("get_tool_call", {"index": "one"}),
            tool_call("get_state", {"key": "when"}),
        ],
        tool_call("get_state", {"key": "refund_issued"}),
        PASS,
    ]
    answers: list[list[dict]] = []

    def model(request):
        turn = model_turn_index(request)
        if turn:
            got = [p.function_response.response for p in request.contents[-1].parts]
            answers.append(copy.deepcopy(got))
            for answer in got:  # a client that changes what it was given
                answer.clear()
        return steps[turn]

    judge = llm_judge("j", "c", model=ScriptedLlm(responder=model, check_calls=False), sees="query")
    assert (await judge.evaluate(trace)).passed

    wrong_args, unknown, by_float, by_word, not_json = answers[0]
    assert "`get_state` cannot take" in wrong_args["error"]
    assert "unexpected keyword argument 'value'" in wrong_args["error"]
    assert unknown == {
        "error": "there is no tool `set_state`; the tools are get_state, list_state_keys, "
        "list_tool_calls, get_tool_call"
    }
    assert by_float["args"] == {"order": "A1"}
    assert "a whole number is needed, got 'one'" in by_word["error"]
    assert not_json["value"] == "datetime.date(2024, 5, 1)"
    assert answers[1] == [{"key": "refund_issued", "found": True, "value": True}]
    assert (trace.final_state, [c.args for c in trace.nested_tool_calls]) == before


def test_a_query_answer_is_a_copy_of_the_trace_not_the_trace():
    trace = busy_trace(calls=1, blob=10)
    trace.final_state["session"]["order"] = {"items": ["book"]}
    queries = TraceQueries(trace)

    queries.get_state("order")["value"]["items"].append("stolen")
    queries.get_tool_call(1)["args"]["order"] = "changed"
    queries.get_tool_call(1)["answer"]["order"] = "changed"

    assert trace.final_state["session"]["order"] == {"items": ["book"]}
    assert trace.nested_tool_calls[0].args == {"order": "A1"}
    assert queries.get_tool_call(1)["answer"]["order"] == "A1"
