"""JSON report and JUnit XML for a real suite, including xfail and not-run cases."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import anyio
import jsonschema
import pytest
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval_suite
from adk_eval._statistics import wilson
from adk_eval.metrics import MetricResult, state_metric
from adk_eval.reporting import junit_xml, load_report_schema, suite_report
from adk_eval.testing import ScriptedLlm


class OddValue:
    name = "odd"

    def evaluate(self, trace):
        return MetricResult(passed=True, value={1, 2})  # a set is not JSON


async def hang(request):
    await anyio.sleep_forever()


def case(name, model, **kwargs):
    return EvalCase(name=name, agent=LlmAgent(name="a", model=model), first_message="hi", **kwargs)


async def test_report_validates_and_junit_marks_xfail_and_not_run_as_skipped():
    never = state_metric("never", "session", "x", lambda v: v == 1)
    suite = await run_eval_suite(
        [
            case("odd", ScriptedLlm(["ok"]), metrics=[OddValue()]),
            case("known-gap", ScriptedLlm(["no"]), metrics=[never], xfail="gap"),
            # it fails after the others finished: stop_on_first_failure then cancels only `stuck`
            case("fails", ScriptedLlm(["no"], latency=0.5), metrics=[never]),
            case("stuck", ScriptedLlm(responder=hang)),
        ],
        max_concurrency=4,
        stop_on_first_failure=True,
    )

    report = suite_report(suite)
    jsonschema.validate(report, load_report_schema())
    json.dumps(report)  # plain JSON all the way down
    by_name = {r["name"]: r for r in report["results"]}
    assert by_name["odd"]["metrics"]["odd"]["value"] == "{1, 2}"
    assert by_name["known-gap"]["outcome"] == "xfailed"
    assert report["not_run"] == ["stuck"]
    assert report["passed"] is False

    root = junit_xml(suite).getroot()
    cases = {c.get("name"): c for c in root.iter("testcase")}
    assert cases["known-gap"].find("skipped").get("message") == "xfail: gap"
    assert cases["stuck"].find("skipped").get("message") == "not run: the suite stopped early"
    assert cases["fails"].find("failure") is not None
    assert root.get("skipped") == "2"
    ET.tostring(root)

    # the pass rate with its 95 % interval: 1 of the 2 counted runs (xfail and not run aside)
    assert report["intervals"]["pass_rate"] == wilson(1, 2).to_dict()
    assert report["cases"][0]["intervals"]["pass_rate"] == wilson(1, 1).to_dict()
    suite_properties = {
        p.get("name"): p.get("value") for p in root.find("testsuite").find("properties")
    }
    assert suite_properties["pass_rate"] == "0.5000"
    assert suite_properties["pass_rate.low"] == f"{wilson(1, 2).low:.4f}"
    assert suite_properties["pass_rate.high"] == f"{wilson(1, 2).high:.4f}"


async def test_repeats_give_each_case_its_intervals_in_json_and_junit():
    suite = await run_eval_suite([case("greets", ScriptedLlm(["hello"]))], repeat=3)

    report = suite_report(suite)
    jsonschema.validate(report, load_report_schema())
    (greets,) = report["cases"]
    assert greets["intervals"]["pass_rate"]["low"] == pytest.approx(0.4385, abs=1e-4)  # 3 of 3
    assert greets["intervals"]["pass_hat_k"]["low"] == pytest.approx(0.4385**3, abs=1e-4)
    assert report["intervals"]["pass_hat_k"] == wilson(1, 1).to_dict()
    properties = {
        p.get("name"): p.get("value")
        for p in junit_xml(suite).getroot().find("testsuite").find("properties")
    }
    assert properties["case.greets.pass_rate.low"] == "0.4385"
    assert properties["case.greets.pass_hat_k"] == "1.0000"
    assert properties["pass_hat_k.high"] == "1.0000"


async def test_the_conversation_says_what_answered_each_tool_call():
    from google.adk.tools import LongRunningFunctionTool

    from adk_eval import EvalResult, ScriptedUserAgent, ToolMock, UserAgents, run_eval
    from adk_eval.reporting._json_report import conversation_records
    from adk_eval.testing import tool_call

    def lookup(key: str) -> dict:
        """Looks a key up."""
        return {"value": "real"}

    def send(to: str) -> dict:
        """Sends a message."""
        return {"sent": to}

    def ask(question: str) -> None:
        """Asks the user."""

    model = ScriptedLlm(
        [
            tool_call("lookup", {"key": "k"}),
            tool_call("send", {"to": "bob"}),
            tool_call("ask", {"question": "ok?"}),
            "done",
        ]
    )
    agent = LlmAgent(name="agent", model=model, tools=[lookup, send, LongRunningFunctionTool(ask)])
    result = await run_eval(
        EvalCase(
            name="sources",
            agent=agent,
            first_message="go",
            tool_mocks={"lookup": lookup, "send": ToolMock(lambda args, ctx: {"sent": "mock"})},
            user_agents=UserAgents(tools={"ask": ScriptedUserAgent(name="u", script=["yes"])}),
        )
    )
    assert result.ok, result.explain()
    calls = [r for r in conversation_records(result.trace) if r["kind"] == "tool_call"]
    assert [(c["name"], c["answered_by"]) for c in calls] == [
        ("lookup", "real"),
        ("send", "mock"),
        ("ask", "user_agent"),
    ]
    assert calls[1]["response"] == {"sent": "mock"}
    # the record survives a worker's round trip
    again = EvalResult.from_data(result.to_data())
    assert conversation_records(again.trace) == conversation_records(result.trace)
