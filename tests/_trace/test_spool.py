"""A suite's finished runs keep their traces on disk and read them back exactly."""

from __future__ import annotations

import gc
import math
import threading

from google.adk.agents import LlmAgent
from google.adk.events import Event
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


def test_values_that_cannot_be_pickled_come_back_as_their_repr_and_the_rest_exactly():
    def steps():
        yield "never run"

    lock = threading.Lock()
    kept = types.Part.from_bytes(data=b"\0\1", mime_type="application/octet-stream")
    node_event = Event(author="wf", output={"items": steps(), "total": 3, "ratio": float("nan")})
    trace = EvalTrace(
        events=(
            Event(author="user", content=types.Content(role="user", parts=[types.Part(text="hi")])),
            node_event,
        ),
        final_state={"session": {"lock": lock, "pick": lambda x: x, "limit": math.inf, "n": 2}},
        artifacts={"blob": kept},
        tool_sources={"c1": "mock"},
        case_name="workflow",
    )
    spool = TraceSpool()
    where = spool.put(trace)
    spool._read.clear()
    back = where.load()

    state = back.final_state["session"]
    assert state["lock"] == repr(lock)
    assert state["pick"].startswith("<function ")
    assert "<lambda>" in state["pick"]
    assert state["limit"] == math.inf
    assert state["n"] == 2
    output = back.events[1].output
    assert output["items"].startswith("<generator object ")
    assert "steps" in output["items"]
    assert output["total"] == 3
    assert math.isnan(output["ratio"])
    assert isinstance(back.events[0], Event)
    assert back.events[0].content.parts[0].text == "hi"
    assert back.events[1].author == "wf"
    assert back.artifacts["blob"].inline_data.data == b"\0\1"
    assert (back.tool_sources, back.case_name) == ({"c1": "mock"}, "workflow")
    assert trace.final_state["session"]["lock"] is lock  # the trace itself is not changed


def test_a_value_that_pickles_but_cannot_be_read_back_comes_back_as_its_repr():
    trace = EvalTrace(events=(), final_state={"session": {"bad": Unloadable(1), "ok": [1, 2]}})
    back = TraceSpool().put(trace)
    back.spool._read.clear()
    assert back.load().final_state["session"] == {"bad": "Unloadable(1)", "ok": [1, 2]}


class Unloadable:
    """Pickles (its class is importable) but its reduction fails when read back."""

    def __init__(self, value: int) -> None:
        self.value = value

    def __reduce__(self):
        return (Unloadable._refuse, (self.value,))

    @staticmethod
    def _refuse(value: int) -> Unloadable:
        raise ValueError("cannot be rebuilt")

    def __repr__(self) -> str:
        return f"Unloadable({self.value})"
