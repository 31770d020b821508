"""A case's memory: seeded past sessions and facts that ADK's own memory tools find."""

from __future__ import annotations

import pytest
from google.adk.agents import LlmAgent
from google.adk.sessions import Session
from google.adk.tools import load_memory, preload_memory

from adk_eval import EvalCase, EvalSetupError, run_eval
from adk_eval.testing import ScriptedLlm, text_event, tool_call, user_event

PAST = Session(
    id="last-week",
    app_name="another-app",
    user_id="someone",
    events=[
        user_event("My dog is called Biscuit and he is allergic to chicken."),
        text_event("vet", "Noted: Biscuit, chicken allergy."),
    ],
)


def vet(model, tools) -> LlmAgent:
    return LlmAgent(name="vet", model=model, tools=tools, instruction="Help pet owners.")


async def test_load_memory_finds_seeded_sessions_and_facts():
    model = ScriptedLlm([tool_call("load_memory", {"query": "Biscuit allergic"}), "No chicken."])
    case = EvalCase(
        name="remembers",
        agent=vet(model, [load_memory]),
        first_message="What food is safe for Biscuit?",
        memory=[PAST, "Biscuit is a beagle, born 2019."],
    )
    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    found = result.trace.tool_calls[0].response["result"].memories  # ADK's own answer
    texts = [part.text for memory in found for part in memory.content.parts]
    assert "My dog is called Biscuit and he is allergic to chicken." in texts
    assert "Biscuit is a beagle, born 2019." in texts


async def test_preload_memory_puts_it_in_the_request_and_cases_do_not_share_it():
    seen: list[str] = []

    def model(request):
        seen.append(" ".join(p.text or "" for c in request.contents for p in c.parts or []))
        return "Hello."

    remembered = EvalCase(
        name="preloaded",
        agent=vet(ScriptedLlm(responder=model), [preload_memory]),
        first_message="Does Biscuit have allergies?",
        memory=[PAST],
    )
    forgetful = EvalCase(
        name="blank",
        agent=vet(ScriptedLlm(responder=model), [preload_memory]),
        first_message="Does Biscuit have allergies?",
    )
    assert (await run_eval(remembered)).status == "passed"
    assert (await run_eval(forgetful)).status == "passed"
    assert "allergic to chicken" in seen[0]
    assert "allergic to chicken" not in seen[1]


def test_a_memory_item_of_another_kind_is_one_clear_error():
    with pytest.raises(EvalSetupError, match=r"memory\[1\]: a memory item is text, an ADK Session"):
        EvalCase(
            name="x",
            agent=vet(ScriptedLlm(["hi"]), []),
            first_message="hi",
            memory=["fine", {"text": "not like this"}],
        )
    with pytest.raises(EvalSetupError, match="`memory` is a list"):
        EvalCase(name="x", agent=vet(ScriptedLlm(["hi"]), []), first_message="hi", memory="x")
