"""A suite's finished runs keep their traces on disk and read them back exactly."""

from __future__ import annotations

import gc
import math

from google.adk.agents import LlmAgent
from google.genai import types

from adk_eval import EvalCase, ToolMock, run_eval, run_eval_suite
from adk_eval._trace import EvalTrace
from adk_eval._trace._spool import SpooledTrace, TraceSpool
from adk_eval.testing import ScriptedLlm, tool_call


def test_a_spooled_trace_comes_back_exactly_nan_and_bytes_included():
    spool = TraceSpool()
    image = types.Part.from_bytes(data=b"\x89PNG\0", mime_type="image/png")
    trace = EvalTrace(
        events=(),
        final_state={"session": {"limit": float("inf"), "mean": float("nan")}},
        artifacts={"chart.png": image},
        tool_sources={"c1": "mock"},
        case_name="odd",
    )
    where = spool.put(trace)
    spool._read.clear()  # not the copy kept from the last read: the file's
    back = where.load()
    assert back.final_state["session"]["limit"] == math.inf
    assert math.isnan(back.final_state["session"]["mean"])
    assert back.artifacts["chart.png"].inline_data.data == b"\x89PNG\0"
    assert back.tool_sources == {"c1": "mock"}
    assert back.case_name == "odd"


def lookup(key: str) -> dict:
    """Looks a key up (mocked)."""
    raise AssertionError("mocked")


async def test_a_suites_results_read_their_spooled_traces_and_a_run_keeps_its_own():
    agent = LlmAgent(
        name="a", model=ScriptedLlm([tool_call("lookup", {"key": "k"}), "Done."]), tools=[lookup]
    )
    case = EvalCase(
        name="c",
        agent=agent,
        first_message="go",
        tool_mocks={"lookup": ToolMock.returning({"value": float("nan")})},
    )
    alone = await run_eval(case)
    suite = await run_eval_suite([case], repeat=2)

    assert not isinstance(alone._trace, SpooledTrace)  # one run: nothing to save memory for
    for result in suite.results:
        assert isinstance(result._trace, SpooledTrace)
        assert [e.author for e in result.events] == [e.author for e in alone.events]
        (call,) = result.trace.tool_calls
        assert math.isnan(call.response["value"])
    gc.collect()
    assert suite.results[0].explain().startswith("EvalCase `c`: PASSED")
