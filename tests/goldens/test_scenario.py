"""ADK's conversation scenarios run here: ADK's user-simulator instruction, its stop signal."""

from __future__ import annotations

import json

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest

from adk_eval import run_eval
from adk_eval.goldens import eval_case_from_golden, load_eval_set
from adk_eval.testing import ScriptedLlm, model_turn_index

SCENARIO_SET = {
    "eval_set_id": "scenarios",
    "eval_cases": [
        {
            "eval_id": "book_a_table",
            "conversation_scenario": {
                "starting_prompt": "I'd like to book a table.",
                "conversation_plan": "Ask for a table for two at 8pm; accept any table offered.",
            },
            "session_input": {"app_name": "host", "user_id": "u", "state": {"user:vip": True}},
        }
    ],
}


async def test_a_scenario_case_plays_with_adks_simulator_instruction_and_stop_signal(tmp_path):
    path = tmp_path / "scenarios.evalset.json"
    path.write_text(json.dumps(SCENARIO_SET))
    (golden,) = load_eval_set(path).eval_cases

    seen: list[str] = []

    def simulated_user(request: LlmRequest):
        seen.append(str(request.config.system_instruction))
        return ["For two at 8pm, please.", "Great, thanks! </finished>"][model_turn_index(request)]

    host = LlmAgent(
        name="host",
        model=ScriptedLlm(["For how many, and when?", "Booked: a table for two at 8pm."]),
    )
    case = eval_case_from_golden(golden, host)
    user = case.user_agents.loop
    assert isinstance(user, LlmAgent)
    user.model = ScriptedLlm(responder=simulated_user)  # the configured user model, offline

    result = await run_eval(case)

    assert result.status == "passed", result.explain()
    said = [(m.role, m.text) for m in result.trace.messages]
    assert said == [
        ("user", "I'd like to book a table."),  # the starting prompt opens, as in ADK
        ("agent", "For how many, and when?"),
        ("user", "For two at 8pm, please."),
        ("agent", "Booked: a table for two at 8pm."),
    ]
    assert result.turns == 1  # the stop signal ends the conversation and is no turn
    assert result.initial_state["user"] == {"vip": True}
    # ADK's own template, rendered with the plan and the stop signal
    assert "Ask for a table for two at 8pm; accept any table offered." in seen[0]
    assert "</finished>" in seen[0]
