"""What runs for real, read off a suite's cases and carried into every report.

The plugin and the agent callback that post to a sink post for real (a server
on 127.0.0.1 gets what they send): the harness does not hide them, it names
them, before the first case and in the JSON report, the JUnit properties and
the results files shards merge.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jsonschema
import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.tools.agent_tool import AgentTool
from google.adk.tools.mcp_tool.mcp_session_manager import StdioConnectionParams
from google.adk.tools.mcp_tool.mcp_toolset import McpToolset
from mcp import StdioServerParameters

from adk_eval import EvalCase, ToolMock, ToolsetMock, run_eval_suite
from adk_eval._suites._inventory import RunsForReal, of_trees
from adk_eval._suites._run import runs_for_real
from adk_eval._suites._shards import merge_results, write_results
from adk_eval.reporting import junit_xml, load_report_schema, suite_report
from adk_eval.testing import ScriptedLlm, tool_call


class Sink:
    """An analytics endpoint on 127.0.0.1 that keeps what it is sent."""

    def __init__(self) -> None:
        self.received: list[dict] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                outer.received.append(json.loads(self.rfile.read(length)))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/events"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


class AnalyticsPlugin(BasePlugin):
    """Posts every tool result to an analytics sink, as a production App's plugin might."""

    def __init__(self, url: str) -> None:
        super().__init__(name="analytics")
        self.url = url

    async def after_tool_callback(self, *, tool, tool_args, tool_context, result):
        body = json.dumps({"tool": tool.name, "result": result}).encode()
        request = urllib.request.Request(self.url, data=body, method="POST")
        reply = await asyncio.to_thread(urllib.request.urlopen, request, timeout=5)
        reply.close()
        return None


WARN = (
    "processes, signals, connections off this machine or to Unix sockets, binds, name lookups "
    "and file writes of the cases' own code (threads it starts included) are listed in each "
    "run's warnings"
)


def lookup(order: str) -> dict:
    """Looks an order up."""
    return {"order": order}


def refuse_refunds(callback_context, llm_request):
    return None


def audit(url, tool, args, tool_context, tool_response):
    """Posts each tool result to a webhook, as an agent's own audit callback might."""
    body = json.dumps({"callback": "audit", "tool": tool.name, "result": tool_response}).encode()
    urllib.request.urlopen(urllib.request.Request(url, data=body, method="POST"), timeout=5).close()
    return None


def shop_app(url: str) -> App:
    clerk = LlmAgent(
        name="clerk", model=ScriptedLlm(["ok"]), before_model_callback=[refuse_refunds]
    )
    desk = LlmAgent(name="desk", model=ScriptedLlm(["ok"]), tools=[AgentTool(clerk)])
    root = LlmAgent(
        name="shop",
        model=ScriptedLlm([tool_call("lookup", {"order": "A1"}), "Shipped."]),
        tools=[lookup, AgentTool(desk)],
        after_tool_callback=functools.partial(audit, url),
    )
    return App(name="shop", root_agent=root, plugins=[AnalyticsPlugin(url)])


MCP = McpToolset(
    connection_params=StdioConnectionParams(
        server_params=StdioServerParameters(command="npx", args=["-y", "files-server"])
    )
)


def test_of_trees_names_plugins_every_callback_two_agent_tools_deep_and_toolsets():
    reader = LlmAgent(name="reader", model=ScriptedLlm(["ok"]), tools=[MCP])
    found = of_trees([shop_app("http://127.0.0.1:1/x"), reader])

    assert found.plugins == (f"{__name__}.AnalyticsPlugin (`analytics`) of App `shop`",)
    assert found.callbacks == (
        f"{__name__}.audit (after_tool_callback of agent `shop`)",
        f"{__name__}.refuse_refunds (before_model_callback of agent `clerk` inside AgentTool "
        "`clerk` of `desk`)",
    )
    assert found.toolsets == ("McpToolset of agent `reader` starts `npx -y files-server`",)


def test_a_toolset_mock_starts_nothing_so_it_is_not_listed():
    reader = LlmAgent(name="reader", model=ScriptedLlm(["ok"]), tools=[MCP])
    case = EvalCase(
        name="reads",
        agent=reader,
        toolset_mocks={MCP: ToolsetMock({"read": {"description": "Reads."}})},
        first_message="hi",
    )
    assert of_trees([case.agent]).toolsets == (
        "McpToolset of agent `reader` starts `npx -y files-server`",
    )
    assert runs_for_real([case]).toolsets == ()


async def test_a_suite_names_what_ran_for_real_and_every_report_carries_it(tmp_path):
    sink = Sink()
    case = EvalCase(
        name="ships",
        agent=shop_app(sink.url),
        tool_mocks={"lookup": ToolMock.returning({"status": "shipped"})},
        first_message="Where is A1?",
    )
    suite = await run_eval_suite([case])

    assert suite.ok, suite.explain()
    assert sink.received == [  # both ran for real, the plugin first, as ADK orders them
        {"tool": "lookup", "result": {"status": "shipped"}},
        {"callback": "audit", "tool": "lookup", "result": {"status": "shipped"}},
    ]
    shown = suite.runs_for_real
    assert shown.plugins == (f"{__name__}.AnalyticsPlugin (`analytics`) of App `shop`",)
    posting = f"{__name__}.audit (after_tool_callback of agent `shop`)"
    assert shown.callbacks[0] == posting
    assert len(shown.callbacks) == 2
    assert shown.sandbox == ("warn (every case): " + WARN,)
    assert not shown.nothing

    report = suite_report(suite)
    jsonschema.validate(report, load_report_schema())
    assert report["runs_for_real"] == shown.to_data()

    properties = {
        (p.get("name"), p.get("value"))
        for p in junit_xml(suite).getroot().iter("property")
        if p.get("name", "").startswith("runs_for_real.")
    }
    assert ("runs_for_real.plugins", shown.plugins[0]) in properties
    assert ("runs_for_real.callbacks", posting) in properties
    assert len(properties) == len(shown.lines())

    other = RunsForReal(plugins=("other.Plugin (`p`) of App `b`",))
    write_results(tmp_path / "a.json", suite, ["ships"], {"ships": 0})
    second = tmp_path / "b.json"
    data = json.loads((tmp_path / "a.json").read_text())
    second.write_text(
        json.dumps({**data, "cases": [], "results": [], "runs_for_real": other.to_data()})
    )
    merged = merge_results([tmp_path / "a.json", second])
    assert merged.runs_for_real == shown.merged(other)


def test_nothing_but_tools_is_said_so():
    agent = LlmAgent(name="plain", model=ScriptedLlm(["ok"]))
    shown = runs_for_real([EvalCase(name="plain", agent=agent, first_message="hi")])
    assert shown.nothing
    assert shown.lines()[-1].startswith("sandbox: warn (every case)")


def test_suite_options_override_every_cases_modes_and_unknown_ones_are_refused():
    agent = LlmAgent(name="plain", model=ScriptedLlm(["ok"]))
    cases = [
        EvalCase(name="a", agent=agent, first_message="hi"),
        EvalCase(name="b", agent=agent, first_message="hi", sandbox="off", telemetry="keep"),
    ]
    assert runs_for_real(cases).sandbox == (
        "warn (`a`): " + WARN,
        "off (`b`): not watched",
    )
    assert runs_for_real(cases, sandbox="strict").sandbox[0].startswith("strict (every case)")


async def test_an_unknown_suite_mode_is_one_clear_error():
    from adk_eval import EvalSetupError

    agent = LlmAgent(name="plain", model=ScriptedLlm(["ok"]))
    with pytest.raises(EvalSetupError, match="sandbox must be one of 'warn', 'strict', 'off'"):
        await run_eval_suite([EvalCase(name="a", agent=agent, first_message="hi")], sandbox="on")
