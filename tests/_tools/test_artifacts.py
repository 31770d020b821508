"""Artifacts: a case starts with some, a mock saves them as the real tool would, agents read
them (instruction templates, ADK's load_artifacts tool), and metrics see all of them."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.tools import load_artifacts
from google.genai import types

from adk_eval import EvalCase, EvalSetupError, ToolMock, run_eval
from adk_eval.metrics import Metric, MetricResult
from adk_eval.testing import ScriptedLlm, tool_call


def fetch_page(url: str) -> dict:
    """Downloads a page and saves it as the artifact `page` (a side effect: mocked)."""
    raise AssertionError("never runs")


def instruction_of(request) -> str:
    config = request.config
    return str(config.system_instruction) if config and config.system_instruction else ""


def research_tree(seen: list[str]) -> LlmAgent:
    """The fomc-research shape: one agent's tool saves a page, another agent reads it."""

    def analyst_model(request) -> str:
        seen.append(instruction_of(request))
        return "analysed"

    analyst = LlmAgent(
        name="analyst",
        model=ScriptedLlm(responder=analyst_model),
        instruction="Analyse this page: {artifact.page}",
    )
    return LlmAgent(
        name="fetcher",
        model=ScriptedLlm(
            [
                tool_call("fetch_page", {"url": "https://fed.example/minutes"}),
                tool_call("transfer_to_agent", {"agent_name": "analyst"}),
            ]
        ),
        tools=[fetch_page],
        sub_agents=[analyst],
    )


async def saving_mock(args, ctx):
    version = await ctx.save_artifact("page", f"<html>minutes from {args['url']}</html>")
    return {"saved": "page", "version": version}


class ArtifactSays:
    """A metric on an artifact's text."""

    name = "page_saved"

    def evaluate(self, trace) -> MetricResult:
        page = trace.artifacts.get("page")
        return MetricResult(passed=page is not None and "minutes" in (page.text or ""))


async def test_a_mock_saves_an_artifact_that_another_agent_reads_and_metrics_see():
    seen: list[str] = []
    metric: Metric = ArtifactSays()
    result = await run_eval(
        EvalCase(
            name="fomc",
            agent=research_tree(seen),
            tool_mocks={"fetch_page": ToolMock(saving_mock)},
            first_message="What did the Fed say?",
            metrics=[metric],
        )
    )
    assert result.status == "passed", result.explain()
    assert "<html>minutes from https://fed.example/minutes</html>" in seen[0]
    assert result.artifacts["page"].text == "<html>minutes from https://fed.example/minutes</html>"
    (saved,) = [e for e in result.events if e.actions and e.actions.artifact_delta]
    assert saved.actions.artifact_delta == {"page": 0}  # as the real tool's save would show
    assert result.from_data(result.to_data()).artifacts == result.artifacts


async def test_a_case_starts_with_artifacts_the_agent_loads():
    def model(request) -> types.Part | str:
        loaded = [
            part.text
            for content in request.contents
            for part in content.parts or []
            if part.text and "hold rates" in part.text
        ]
        if loaded:
            return f"read: {loaded[-1]}"
        return tool_call("load_artifacts", {"artifact_names": ["brief.txt"]})

    agent = LlmAgent(name="reader", model=ScriptedLlm(responder=model), tools=[load_artifacts])
    result = await run_eval(
        EvalCase(
            name="reads",
            agent=agent,
            first_message="Read the brief",
            artifacts={"brief.txt": "the brief says hold rates", "raw.bin": b"\x00\x01"},
        )
    )
    assert result.status == "passed", result.explain()
    assert result.trace.messages[-1].text == "read: the brief says hold rates"
    assert sorted(result.artifacts) == ["brief.txt", "raw.bin"]
    assert result.artifacts["raw.bin"].inline_data.data == b"\x00\x01"


def test_an_artifact_that_is_no_part_text_or_bytes_is_a_setup_error():
    with pytest.raises(EvalSetupError, match=r"artifacts\['x'\]: an artifact is a"):
        EvalCase(
            name="bad",
            agent=LlmAgent(name="a", model=ScriptedLlm(["hi"])),
            first_message="hi",
            artifacts={"x": 42},
        )


async def test_a_mock_called_by_hand_says_artifacts_need_a_run():
    from adk_eval import MockToolContext
    from adk_eval._state import ScopedState

    ctx = MockToolContext(
        call_id="c",
        tool_name="fetch_page",
        invocation_id="i",
        agent_name="a",
        state=ScopedState({}),
    )
    with pytest.raises(EvalSetupError, match="outside a run"):
        await ctx.save_artifact("page", "x")


def save_note(tool_context) -> str:
    """Saves a note as ADK's artifact samples do: a text/plain blob (runs for real)."""
    raise AssertionError("replaced per test")


def note_agent(tool) -> LlmAgent:
    return LlmAgent(
        name="noter",
        model=ScriptedLlm([tool_call("save_note", {}), "saved"]),
        tools=[tool],
    )


async def test_a_text_blob_a_real_tool_saves_and_a_mocks_string_read_the_same():
    async def save_note(tool_context) -> str:
        """Saves a note as ADK's artifact samples do: a text/plain blob."""
        blob = types.Blob(mime_type="text/plain", data=b"buy milk")
        version = await tool_context.save_artifact("note", types.Part(inline_data=blob))
        return f"saved version {version}"

    real = await run_eval(
        EvalCase(
            name="real",
            agent=note_agent(save_note),
            first_message="note",
            tool_mocks={"save_note": save_note},
        )
    )

    async def saving(args, ctx):
        version = await ctx.save_artifact("note", "buy milk")
        return f"saved version {version}"

    mocked = await run_eval(
        EvalCase(
            name="mocked",
            agent=note_agent(save_note),
            first_message="note",
            tool_mocks={"save_note": ToolMock(saving)},
        )
    )

    assert real.passed, real.explain()
    assert mocked.passed, mocked.explain()
    assert real.trace.artifacts["note"].text == "buy milk"
    assert mocked.trace.artifacts["note"] == real.trace.artifacts["note"]
    assert mocked.trace.artifacts["note"].inline_data.mime_type == "text/plain"


async def test_an_image_artifact_has_no_text():
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16

    async def saving(args, ctx):
        await ctx.save_artifact("chart", png, mime_type="image/png")
        return "drawn"

    result = await run_eval(
        EvalCase(
            name="image",
            agent=note_agent(save_note),
            first_message="note",
            tool_mocks={"save_note": ToolMock(saving)},
        )
    )
    assert result.trace.artifacts["chart"].text is None
    assert result.trace.artifacts["chart"].inline_data.data == png
