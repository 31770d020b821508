"""A deployed agent under test over A2A: a real ADK agent served with to_a2a, driven by the case."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool

from adk_eval import EvalCase, EvalSetupError, ScriptedUserAgent, UserAgents, run_eval
from adk_eval._tools._deployed import UNOBSERVED_LINE, _carry_trace_context, as_under_test
from adk_eval.metrics import event_count_metric, never_called, state_metric, trajectory_match
from adk_eval.production import open_sessions
from adk_eval.production._score import score_sessions
from adk_eval.testing import ScriptedLlm, tool_call
from tests import deployed_support
from tests.deployed_support import CLERK_SAYS, REAL_CALLS, Served, free_port, served, started

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")  # ADK's experimental A2A notices

NOT_OBSERVED = "not applicable: it reads the agent's tool calls, which a deployed agent's run"


def ask_user(question: str) -> dict[str, str]:
    """Asks the user a question; the answer comes later."""
    return {"status": "asked"}


def booking_reply(request: Any) -> Any:
    """The served agent's model: it answers the last thing in its request."""
    last = request.contents[-1].parts[-1]
    if last.function_response is not None:
        answer = last.function_response.response or {}
        return f"Booked for {answer['day']}." if "day" in answer else "I asked which day."
    words = {"Hi": "Hello! Where to?", "Thanks!": "Goodbye."}
    return words.get(last.text) or tool_call("ask_user", {"question": "Which day?"})


def booking_agent() -> LlmAgent:
    """An agent that greets, asks the user a question through a long-running tool, then books."""
    tools = [LongRunningFunctionTool(ask_user)]
    return LlmAgent(name="booker", model=ScriptedLlm(responder=booking_reply), tools=tools)


def booking_case(url: str, **fields: Any) -> EvalCase:
    user = ScriptedUserAgent(name="traveller", script=["To Paris, please.", "Thanks!"])
    day = ScriptedUserAgent(name="calendar", script=[{"day": "Friday"}])
    users = UserAgents(loop=user, tools={"ask_user": day})
    return EvalCase(name="deployed", agent=url, first_message="Hi", user_agents=users, **fields)


async def test_a_served_agent_is_driven_over_a2a_turn_by_turn_in_one_context():
    with served(booking_agent()) as server:
        result = await run_eval(booking_case(server.url))

    assert result.status == "passed", result.explain()
    said = [(m.author, m.text) for m in result.trace.messages]
    assert said == [
        ("user", "Hi"),
        ("booker", "Hello! Where to?"),  # named after its agent card, as its service names it
        ("user", "To Paris, please."),
        ("booker", "Booked for Friday."),  # after its question, answered by `calendar`
        ("user", "Thanks!"),
        ("booker", "Goodbye."),
    ]
    first, *later = server.contexts()
    assert first is None  # the server opens the context...
    assert len(later) == 3
    assert len(set(later)) == 1  # ...and every later message is sent in it
    answer = server.parts()[2]  # the input-required question, answered by the user agent
    assert answer["data"]["name"] == "ask_user"
    assert answer["data"]["response"] == {"day": "Friday"}
    assert server.requests[2]["params"]["message"]["taskId"]  # the paused task resumed


async def test_metrics_that_read_what_the_service_keeps_are_not_applicable_saying_why():
    metrics = [
        trajectory_match("calls", [], args="ignore"),
        event_count_metric("few_calls", "tool_call", assertion=lambda n: n <= 1),
        state_metric("booked", key="booked", assertion=lambda v: v is True),
        event_count_metric("answers", "agent_message", assertion=lambda n: n >= 1),
    ]
    with served(booking_agent()) as server:
        case = booking_case(server.url, metrics=metrics, invariants=[never_called("delete")])
        result = await run_eval(case)

    verdicts = {name: m.verdict for name, m in result.metrics.items()}
    assert verdicts == {
        "calls": "n/a",
        "few_calls": "n/a",
        "booked": "n/a",
        "never_called(delete)": "n/a",
        "answers": "pass",  # what it said is observed
    }
    assert result.metrics["calls"].evidence[0].startswith(NOT_OBSERVED)
    assert "agent's state" in result.metrics["booked"].evidence[0]
    assert result.status == "passed"
    assert [w for w in result.warnings if w.startswith("not observed:")] == [
        "not observed: the deployed agent's tool calls, state and model usage happen in its own "
        "service, so metrics that read them are not applicable (collect its spans with "
        "`adk-eval collect` to see them)"
    ]


def test_the_same_case_runs_again_in_another_event_loop_in_a_context_of_its_own():
    with served(LlmAgent(name="echo", model=ScriptedLlm(["One.", "Two."] * 4))) as server:
        case = EvalCase(name="again", agent=f"{server.url}/", first_message="hi")
        runs = [asyncio.run(run_eval(case)) for _ in range(2)]  # a client per run and loop

    assert [[m.text for m in run.trace.messages] for run in runs] == [["hi", "One."]] * 2
    assert [run.status for run in runs] == ["passed", "passed"]
    assert server.contexts() == [None, None]  # each conversation opens a context of its own


async def test_a_server_that_is_down_is_one_line_before_anything_runs():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there
    case = EvalCase(name="down", agent=f"http://127.0.0.1:{port}", first_message="hi")
    with pytest.raises(EvalSetupError) as raised:
        await run_eval(case)

    assert str(raised.value) == (
        f"EvalCase `down`: the agent under test `deployed_agent` cannot be reached over A2A at "
        f"http://127.0.0.1:{port}/.well-known/agent-card.json (ConnectError: All connection "
        "attempts failed); start it, or fix the URL"
    )


async def test_a_server_that_stops_mid_run_ends_it_in_an_error_of_one_line():
    with served(LlmAgent(name="echo", model=ScriptedLlm(["One."] * 4))) as server:
        user = ScriptedUserAgent(name="u", step=lambda ctx: stop_then_answer(server))
        users = UserAgents(loop=user)
        case = EvalCase(name="gone", agent=server.url, first_message="hi", user_agents=users)
        result = await run_eval(case)

    assert result.status == "error"
    assert (result.error.phase, result.error.type) == ("system", "EvalRunError")
    assert result.error.message.startswith(
        "agent `echo` ended with error `A2A_ERROR`: A2A request failed:"
    )
    assert "\n" not in result.error.message


def stop_then_answer(server: Served) -> str:
    """The user's answer, after the server stopped listening (it went down mid-run)."""
    server.stop()
    return "are you there?"


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("ftp://agents.example.com", "`agent` is the URL of an agent served over A2A"),
        ("http://agents.example.com", "over plain http off this machine"),
    ],
)
def test_a_url_that_cannot_be_an_a2a_agent_is_one_line(url, says):
    with pytest.raises(EvalSetupError, match=says):
        EvalCase(name="bad", agent=url, first_message="hi")


def test_the_agent_is_named_by_the_path_it_is_served_at_until_its_card_is_read():
    case = EvalCase(name="named", agent="https://agents.example.com/a2a/weather", first_message="x")
    assert case.root_agent.name == "weather"  # building a case sends nothing
    assert type(case.root_agent).__name__ == "RemoteA2aAgent"


@pytest.mark.parametrize(
    ("card", "name"),
    [
        ({"name": "forecaster"}, "forecaster"),
        ({"name": "Weather Desk"}, "weather"),  # no agent name: the path's word stays
        ({"name": "user"}, "weather"),  # the user's own author
        ({}, "weather"),
        (None, "weather"),
    ],
)
def test_a_run_names_the_agent_after_its_cards_name_when_it_can_be_an_agents(card, name):
    case = EvalCase(name="named", agent="https://agents.example.com/a2a/weather", first_message="x")
    app = as_under_test(case.agent_under_test, card=card)
    assert (app.name, app.root_agent.name) == (name, name)
    assert case.root_agent.name == "weather"  # the case's own agent is left as it is


def test_an_agent_given_as_a_remote_a2a_agent_keeps_the_name_it_was_given():
    from google.adk.agents.remote_a2a_agent import RemoteA2aAgent

    mine = RemoteA2aAgent(name="mine", agent_card="http://127.0.0.1:9/.well-known/agent-card.json")
    case = EvalCase(name="given", agent=mine, first_message="x")
    assert as_under_test(case.agent_under_test, card={"name": "theirs"}).root_agent.name == "mine"


async def test_the_request_carries_the_runs_trace_context_when_tracing_is_on():
    """The served side extracts, with OpenTelemetry's own propagator, the trace the run is in."""
    from opentelemetry import propagate, trace
    from opentelemetry.sdk.trace import TracerProvider

    tracer = TracerProvider().get_tracer("the user's tests")
    with served(LlmAgent(name="echo", model=ScriptedLlm(["One."] * 4))) as server:
        case = EvalCase(name="traced", agent=server.url, first_message="hi")
        with tracer.start_as_current_span("evaluation") as span:
            result = await run_eval(case)

    assert result.status == "passed"
    (headers,) = server.headers
    carried = trace.get_current_span(propagate.extract(headers)).get_span_context()
    assert carried.is_remote
    assert carried.trace_id == span.get_span_context().trace_id  # the served side is in it


async def test_with_no_span_current_no_trace_context_is_sent():
    """No tracing active (ADK's spans are OpenTelemetry's no-op ones): no header at all."""
    request = httpx.Request("POST", "http://127.0.0.1:9/")
    await _carry_trace_context(request)
    assert "traceparent" not in request.headers
    assert set(request.headers) == {"host", "content-length"}


@pytest.fixture
def shop(tmp_path, request) -> Iterator[dict[str, Any]]:
    """The deployed shop, each server a process of its own on 127.0.0.1, as a user starts them.

    ``adk-eval mock-mcp`` (its call log), ``adk-eval collect`` (its spans file), and the
    clerk served with ``to_a2a()``, its MCP toolset at the mock and its spans sent to the
    collector; a real tool body that runs writes to ``real calls``. Given True
    (indirectly), the clerk's app runs each request in the trace context it carries.
    """
    extract = getattr(request, "param", False)
    mcp, otlp, a2a = free_port(), free_port(), free_port()
    paths = {key: tmp_path / key for key in ("calls.db", "spans.db", "real calls")}
    env = {
        REAL_CALLS: str(paths["real calls"]),
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
        "GOOGLE_API_USE_CLIENT_CERTIFICATE": "false",  # no mTLS probe on loopback
    }
    cli, tools = [sys.executable, "-m", "adk_eval"], deployed_support.__file__
    mock = [*cli, "mock-mcp", tools, "--http", f"127.0.0.1:{mcp}", "--log", str(paths["calls.db"])]
    collect = [*cli, "collect", "--otlp", f"127.0.0.1:{otlp}", "--out", str(paths["spans.db"])]
    endpoint = f"http://127.0.0.1:{otlp}/v1/traces"
    agent = [
        sys.executable,
        "-m",
        "tests.deployed_support",
        str(a2a),
        f"http://127.0.0.1:{mcp}/mcp",
    ]
    agent += [endpoint, *(["extract"] if extract else [])]
    servers = [(collect, otlp), (mock, mcp), (agent, a2a)]
    with started(servers, env) as (_, _, clerk):  # stopped in reverse: the clerk first
        yield {"url": f"http://127.0.0.1:{a2a}", "paths": paths, "clerk": clerk, "env": env} | {
            "endpoint": endpoint
        }


@pytest.mark.slow
async def test_a_deployed_agents_mcp_tools_pointed_at_mock_mcp_run_no_real_body(shop):
    """The mock MCP log and the collected spans hold the case's conversation; no real body ran."""
    user = ScriptedUserAgent(name="customer", script=["Thanks!"])
    lookups = event_count_metric("lookups", "tool_call", assertion=lambda n: n == 1)
    case = EvalCase(
        name="shop",
        agent=shop["url"],
        first_message="Where is order A1?",
        user_agents=UserAgents(loop=user),
        metrics=[lookups],
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    said = ["Where is order A1?", CLERK_SAYS[0], "Thanks!", CLERK_SAYS[1]]
    assert [m.text for m in result.trace.messages] == said
    relayed = [(c.name, c.args, c.response) for c in result.trace.tool_calls]
    ((name, args, answer),) = relayed  # the service relays its call over A2A (ADK to ADK)
    assert (name, args) == ("get_order", {"order_id": "A1"})
    assert answer["structuredContent"] == {"order_id": "A1", "status": "shipped"}  # the mock's
    assert await logged_calls(shop["paths"]["calls.db"]) == [
        ("get_order", {"order_id": "A1"}, answer["structuredContent"])
    ]
    assert not shop["paths"]["real calls"].exists()  # the real get_order never ran
    assert result.metrics["lookups"].verdict == "n/a"  # its calls are not observed as such
    assert result.metrics["lookups"].evidence[0].startswith(NOT_OBSERVED)
    assert [w for w in result.warnings if w.startswith("not observed:")] == [UNOBSERVED_LINE]

    shop["clerk"].terminate()  # stopped: every span it ended was sent to the collector
    shop["clerk"].wait(30)
    runs: list[Any] = []  # each scored run with its trace (a passing one is kept without)
    score = await score_sessions(
        open_sessions(str(shop["paths"]["spans.db"])),
        [lookups],
        include_open=True,
        on_result=lambda run, session: runs.append(run),
    )
    (collected,) = runs  # the served side's conversation: its two turns, in one context
    assert score.ok
    assert [n for n in score.notes if "A2A" in n] == [  # no tracing here: no context to send
        f"{shop['paths']['spans.db']}: a remote agent's invocation served over A2A not joined to "
        "its caller (no trace context): scored as a conversation of its own"
    ]
    assert [(m.role, m.text) for m in collected.trace.messages] == [
        (m.role, m.text) for m in result.trace.messages
    ]
    assert [(c.name, c.args, c.response) for c in collected.trace.tool_calls] == relayed
    assert collected.metrics["lookups"].verdict == "pass"  # its spans show its calls
    (call,), (seen,) = result.trace.tool_calls, collected.trace.tool_calls
    assert seen.call_id == call.call_id  # the very call the service relayed
    # The same author on both sides: the run named the agent after its card, as its spans do.
    assert [m.author for m in collected.trace.messages] == [m.author for m in result.trace.messages]
    assert {m.author for m in result.trace.messages if m.role == "agent"} == {"clerk"}


@pytest.mark.slow
@pytest.mark.parametrize("shop", [True], indirect=True, ids=["extracting"])
async def test_a_traced_evaluation_and_the_service_read_as_one_conversation(shop):
    """Tracing on in the evaluating process, its spans and the service's to one collector.

    The run's A2A client sends its trace context, the service extracts it: the
    collected spans are one conversation, the evaluation's, with the service's
    tool call in it under the agent's own name, and nothing said unjoined.
    """
    argv = [sys.executable, "-m", "tests.deployed_support", "evaluate"]
    evaluating = await asyncio.to_thread(
        subprocess.run,
        [*argv, shop["url"], shop["endpoint"]],
        env={**os.environ, **shop["env"]},
        capture_output=True,
        timeout=120,
        check=True,
    )
    ran = json.loads(evaluating.stdout.decode().strip().splitlines()[-1])
    assert ran["status"] == "passed", evaluating.stderr.decode()[-2000:]
    shop["clerk"].terminate()
    shop["clerk"].wait(30)
    runs: list[Any] = []
    score = await score_sessions(
        open_sessions(str(shop["paths"]["spans.db"])),
        [event_count_metric("lookups", "tool_call", assertion=lambda n: n == 1)],
        include_open=True,
        on_result=lambda run, session: runs.append(run),
    )

    (joined,) = runs  # one conversation, not one per service
    assert joined.name.startswith("eval//")  # the evaluating process's: the service's nested
    assert [[m.author, m.text] for m in joined.trace.messages] == ran["said"]
    assert {author for author, _ in ran["said"]} == {"user", "clerk"}
    assert [(c.name, c.args) for c in joined.trace.tool_calls] == [
        ("get_order", {"order_id": "A1"})
    ]
    assert joined.metrics["lookups"].verdict == "pass"
    assert [n for n in score.notes if "A2A" in n or "remote agent" in n] == []


def test_a_real_body_of_the_shops_tools_records_that_it_ran(tmp_path, monkeypatch):
    """What the deployed shop's test relies on: had `get_order`'s body run, it would show."""
    monkeypatch.setenv(REAL_CALLS, str(tmp_path / "ran"))
    deployed_support.get_order("Z9")
    assert (tmp_path / "ran").read_text() == '{"get_order": "Z9"}\n'


async def logged_calls(log: Path) -> list[tuple[str, dict, dict]]:
    """Every call in the mock MCP log: tool, arguments, structured answer."""
    from google.adk.sessions.sqlite_session_service import SqliteSessionService

    store = SqliteSessionService(str(log))
    listed = await store.list_sessions(app_name="mock-mcp")
    calls, answers = [], []
    for found in listed.sessions:
        session = await store.get_session(
            app_name="mock-mcp", user_id=found.user_id, session_id=found.id
        )
        for event in session.events:
            calls += [(c.name, dict(c.args or {})) for c in event.get_function_calls()]
            answers += [r.response for r in event.get_function_responses()]
    return [
        (name, args, answer.get("structuredContent", answer))
        for (name, args), answer in zip(calls, answers, strict=True)
    ]
