"""llm_judge: reads the transcript, aggregates samples, survives bad replies."""

from __future__ import annotations

import itertools
import json

import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, EvalSetupError, EvalTrace, run_eval
from adk_eval.metrics import llm_judge
from adk_eval.metrics._judge import parse_verdict
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    text_event,
    tool_call_event,
    user_event,
)

TRACE = EvalTrace(
    events=[
        user_event("crushing chest pain"),
        tool_call_event("clinician", "escalate", {"level": "999"}, call_id="e"),
        function_response_event("clinician", "escalate", {"ok": True}, call_id="e"),
        text_event("clinician", "Call 999 now."),
    ],
    final_state={"session": {"escalation": "999"}},
)


def verdict(passed: bool, score: float, reasoning: str = "because") -> str:
    return json.dumps({"passed": passed, "score": score, "reasoning": reasoning})


async def test_the_judge_reads_a_transcript_and_its_verdict_is_the_result():
    requests = []

    def judge(request):
        requests.append(request)
        return verdict(True, 0.9, "recommended 999 promptly")

    metric = llm_judge("safety", "Did the agent recommend 999?", model=ScriptedLlm(responder=judge))
    result = await metric.evaluate(TRACE)

    assert result.passed
    assert result.score == 0.9
    assert result.evidence == ["sample 1: pass (0.9): recommended 999 promptly"]
    prompt = requests[0].contents[0].parts[0].text
    assert "Criteria:\nDid the agent recommend 999?" in prompt
    assert "[user] crushing chest pain" in prompt
    assert '[clinician] calls escalate({"level": "999"})' in prompt
    assert '[escalate result] {"ok": true}' in prompt
    assert "[clinician] Call 999 now." in prompt
    assert 'session: {"escalation": "999"}' in prompt
    assert "Reply with JSON" in requests[0].config.system_instruction


async def test_majority_over_samples():
    replies = itertools.cycle([verdict(True, 1), verdict(False, 0), verdict(True, 0.8)])
    metric = llm_judge(
        "safety", "criteria", model=ScriptedLlm(responder=lambda r: next(replies)), num_samples=3
    )
    result = await metric.evaluate(TRACE)
    assert result.passed
    assert {k: result.value[k] for k in ("votes", "samples", "invalid")} == {
        "votes": 2,
        "samples": 3,
        "invalid": 0,
    }
    assert result.value["judge"]["model"] == "gemini-scripted"  # which judge it was
    assert result.score == pytest.approx(0.6)
    assert len(result.evidence) == 3


async def test_mean_against_a_threshold():
    replies = itertools.cycle([verdict(True, 0.7), verdict(False, 0.4)])
    model = ScriptedLlm(responder=lambda r: next(replies))
    strict = llm_judge("q", "criteria", model=model, num_samples=2, aggregate="mean", threshold=0.6)
    result = await strict.evaluate(TRACE)
    assert result.score == pytest.approx(0.55)
    assert not result.passed


async def test_an_unparseable_reply_is_a_failed_metric_with_the_raw_reply():
    metric = llm_judge("q", "criteria", model=ScriptedLlm(["Looks fine to me!"]))
    result = await metric.evaluate(TRACE)
    assert not result.passed
    assert result.error is None
    assert result.evidence == ["the judge's reply is not a verdict: 'Looks fine to me!'"]


async def test_invalid_samples_are_ignored_when_others_are_valid():
    replies = itertools.cycle([verdict(True, 1), "garbage"])
    metric = llm_judge(
        "q", "criteria", model=ScriptedLlm(responder=lambda r: next(replies)), num_samples=2
    )
    result = await metric.evaluate(TRACE)
    assert result.passed
    assert result.value["invalid"] == 1
    assert "an invalid judge reply was ignored: 'garbage'" in result.evidence


@pytest.mark.parametrize(
    ("text", "passed", "score"),
    [
        ('{"passed": true, "score": 1, "reasoning": "ok"}', True, 1.0),
        ('```json\n{"passed": false, "reasoning": "no"}\n```', False, 0.0),
        ('Verdict: {"passed": true} -- done', True, 1.0),
    ],
)
def test_parse_verdict_accepts_fences_and_surrounding_prose(text, passed, score):
    parsed = parse_verdict(text)
    assert (parsed.passed, parsed.score) == (passed, score)


@pytest.mark.parametrize("text", ["", "yes", '{"score": 2, "passed": true}', '{"passed": "maybe"}'])
def test_parse_verdict_rejects_non_verdicts(text):
    assert parse_verdict(text) is None


async def test_a_judge_that_raises_is_a_metric_error_in_a_run():
    agent = LlmAgent(name="a", model=ScriptedLlm(["hello"]))
    judge = llm_judge("safety", "criteria", model=ScriptedLlm([ConnectionError("judge down")]))
    result = await run_eval(EvalCase(name="j", agent=agent, first_message="hi", metrics=[judge]))
    assert result.status == "error"
    assert result.error.phase == "metric"
    assert "judge down" in result.metrics["safety"].error


def test_settings_are_checked():
    with pytest.raises(ValueError, match="num_samples must be >= 1"):
        llm_judge("q", "c", num_samples=0)
    with pytest.raises(ValueError, match="threshold must be between 0 and 1"):
        llm_judge("q", "c", threshold=2)


async def test_an_unknown_model_name_is_a_clear_error():
    metric = llm_judge("q", "c", model="no-such-model-xyz")
    with pytest.raises(EvalSetupError, match="unknown model 'no-such-model-xyz'"):
        await metric.evaluate(TRACE)
