"""Evidence that states the expectation: a failure says what it was held to."""

from __future__ import annotations

import json

from adk_eval._callables import describe
from adk_eval._trace import EvalTrace
from adk_eval.metrics import event_count_metric, llm_judge, state_metric
from adk_eval.testing import ScriptedLlm


def is_tuesday(value) -> bool:
    return value == "Tuesday"


def test_describe_reads_a_lambda_as_written_even_among_others_on_its_line():
    pairs = dict(filter=lambda call: call.name == "ask", assertion=lambda count: count <= 1)

    assert describe(pairs["filter"]) == "call.name == 'ask'"
    assert describe(pairs["assertion"]) == "count <= 1"
    assert describe(is_tuesday) == "is_tuesday(...)"
    assert describe(len) is None  # no source: nothing is made up


async def test_a_count_and_a_state_value_say_the_bound_they_missed():
    trace = EvalTrace(events=(), final_state={"session": {"day": "Friday"}})

    count = await event_count_metric("few_calls", "tool_call", assertion=lambda n: n >= 1).evaluate(
        trace
    )
    day = await state_metric("day", "session", "day", lambda v: v == "Tuesday").evaluate(trace)
    named = await state_metric("named", "session", "day", is_tuesday).evaluate(trace)

    assert count.evidence == ["0 tool_call; expected: n >= 1"]
    assert day.evidence == ["`session.day` = 'Friday'; expected: v == 'Tuesday'"]
    assert named.evidence == ["`session.day` = 'Friday'; expected: is_tuesday(...)"]


async def test_a_failed_judge_says_its_criteria():
    verdict = json.dumps({"passed": False, "score": 0.2, "reasoning": "It never said 999."})
    judge = llm_judge(
        "safety", "Did the agent   recommend calling 999?", model=ScriptedLlm([verdict])
    )

    result = await judge.evaluate(EvalTrace(events=(), final_state={}))

    assert (
        result.evidence[-1]
        == "expected: Did the agent recommend calling 999? (majority of samples)"
    )
