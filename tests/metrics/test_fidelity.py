"""user_fidelity: the rules, then the judge, on the user agents' own session."""

from __future__ import annotations

import json

from google.adk.agents import LlmAgent

from adk_eval import STOP_SIGNAL, EvalCase, ScriptedUserAgent, UserAgents, run_eval
from adk_eval.metrics import user_fidelity
from adk_eval.testing import ScriptedLlm

AGENT_SAYS = ["How can I help you today?", "Anything else I can do?", "Goodbye."]


def case(user, metric, name: str = "chat") -> EvalCase:
    return EvalCase(
        name=name,
        agent=LlmAgent(name="desk", model=ScriptedLlm(AGENT_SAYS)),
        first_message="hi",
        user_agents=UserAgents(loop=user),
        metrics=[metric],
    )


def modelled(*replies: str) -> LlmAgent:
    return LlmAgent(name="ann", instruction="You are Ann.", model=ScriptedLlm(list(replies)))


async def test_a_scripted_user_is_faithful_by_construction():
    user = ScriptedUserAgent(name="ann", script=["I need a form.", STOP_SIGNAL])
    result = await run_eval(case(user, user_fidelity(user)))

    fidelity = result.metrics["user_fidelity"]
    assert fidelity.passed
    assert "scripted" in fidelity.evidence[0]


async def test_the_rules_flag_a_user_that_repeats_the_agent_or_ends_at_once():
    echo = modelled("How can I help you today?", STOP_SIGNAL)
    repeated = (await run_eval(case(echo, user_fidelity(echo, judge=False)))).metrics
    assert repeated["user_fidelity"].value["turns"][0]["problem"] == "repeated_agent"

    quitter = modelled(f"Bye. {STOP_SIGNAL}")
    ended = (await run_eval(case(quitter, user_fidelity(quitter, judge=False)))).metrics
    assert not ended["user_fidelity"].passed
    assert ended["user_fidelity"].evidence == ["turn 1: ended_early: 'Bye.'"]


async def test_the_judge_gets_persona_facts_and_turns_and_its_verdict_quotes_the_turn():
    seen = []

    def judge(request):
        seen.append(request.contents[0].parts[0].text)
        verdict = {"turn": 1, "in_role": False, "problem": "revealed_held_back", "quote": "PIN"}
        return json.dumps({"turns": [verdict, {"turn": 2, "in_role": True}]})

    user = modelled("My PIN is 1234, I need a form.", f"No, thanks. {STOP_SIGNAL}")
    metric = user_fidelity(
        user, facts=["needs a form"], hold_back=["the PIN"], model=ScriptedLlm(responder=judge)
    )
    result = await run_eval(case(user, metric))

    fidelity = result.metrics["user_fidelity"]
    assert not fidelity.passed
    assert fidelity.evidence == ["turn 1: revealed_held_back: 'PIN'"]
    (prompt,) = seen
    assert "You are Ann." in prompt
    assert "- needs a form" in prompt
    assert "- the PIN" in prompt
    assert "Turn 1. Agent: How can I help you today?\nUser: My PIN is 1234" in prompt
    assert any(u.role == "judge:user_fidelity" for u in result.usage)


async def test_peoples_labels_on_the_judges_verdicts_calibrate_it(tmp_path):
    from adk_eval import run_eval_suite
    from adk_eval.reporting import suite_report
    from adk_eval.reporting._reviews import add_review, judge_calibration, reviews
    from adk_eval.reporting._store import RunStore

    def judge(request):
        return json.dumps({"turns": [{"turn": 1, "in_role": True}, {"turn": 2, "in_role": True}]})

    user = modelled("I need a form.", f"No, thanks. {STOP_SIGNAL}")
    metric = user_fidelity(user, model=ScriptedLlm(responder=judge, model="judge-7"))
    echo = modelled("How can I help you today?", STOP_SIGNAL)
    ruled = user_fidelity(echo, model=ScriptedLlm(responder=judge, model="judge-7"))
    suite = await run_eval_suite([case(user, metric), case(echo, ruled, "echo")], max_concurrency=1)
    judged, by_rule = (r.metrics["user_fidelity"].value for r in suite.results)
    assert judged["judge"] == metric.identity()
    assert judged["judge"]["model"] == "judge-7"
    assert "judge" not in by_rule  # the rules' verdict is not the judge's

    store = RunStore(tmp_path / "runs.db")
    store.append(suite_report(suite), command="run")
    add_review(store, 1, "chat", 0, "user_fidelity", "agree")

    (found,) = judge_calibration(reviews(store))
    assert (found.metric, found.model, found.labels, found.raw) == (
        "user_fidelity",
        "judge-7",
        1,
        1.0,
    )
