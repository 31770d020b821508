"""Eval cases for the clinician: `EvalCase` objects at module level."""

from __future__ import annotations

import json

from google.adk.sessions import Session

from adk_eval import Bridge, EvalCase, TerminateWhen, ToolMock, UserAgents, YieldInfo
from adk_eval.bridge import default_format_prompt
from adk_eval.metrics import event_count_metric, state_metric

from .agent import root_agent
from .personas import CHEST_PAIN_PERSONA, patient_agents
from .tools import escalate, handover, record_answer, update_belief

MOCK_POLICIES = {
    "chest_pain": {
        "red_flags": ["crushing pain", "spreads to arm or jaw", "cardiac risk factors"],
        "pathway_if_red_flag": "emergency_999",
    },
}


def read_policy(args: dict, ctx) -> dict:
    """Mock of `read`: the policy service is an external dependency."""
    return MOCK_POLICIES.get(args["policy_id"], {"error": f"no policy {args['policy_id']!r}"})


def clinician_prompt(main: Session, info: YieldInfo) -> str:
    """Shows the patient the question, and the clinician's beliefs for consistency."""
    if info.type == "tool" and info.tool_name == "ask":
        beliefs = main.state.get("beliefs", {})
        return (
            f'The clinician asks: "{info.args["question"]}"\n\n'
            f"[For consistency - current beliefs recorded: {json.dumps(beliefs)}]"
        )
    return default_format_prompt(main, info)


SAFE_TOOLS = {
    "record_answer": record_answer,
    "update_belief": update_belief,
    "escalate": escalate,
    "handover": handover,
}

patient_conversation, patient_answer = patient_agents(CHEST_PAIN_PERSONA)

chest_pain = EvalCase(
    name="chest-pain-escalation",
    description="Severe chest pain should be escalated to 999",
    agent=root_agent,
    tool_mocks={"read": ToolMock(read_policy), **SAFE_TOOLS},
    user_agents=UserAgents(loop=patient_conversation, tools={"ask": patient_answer}),
    bridge=Bridge(format_prompt=clinician_prompt),
    initial_state={
        "patient": {
            "age": 55,
            "gender": "male",
            "knownConditions": ["hypertension", "high cholesterol"],
        }
    },
    first_message="I have really bad chest pain",
    terminate_when=TerminateWhen(
        max_turns=10, max_duration=120, state_matches={"session": {"escalation": {"$exists": True}}}
    ),
    metrics=[
        state_metric(
            name="correctly_escalated",
            scope="session",
            key="escalation",
            assertion=lambda v: v["urgencyLevel"] == "emergency_999",
        ),
        state_metric(
            name="history_revealed",
            scope="patient",
            key="revealedConditions",
            assertion=lambda v: set(v) == {"hypertension", "high cholesterol"},
        ),
        event_count_metric(
            name="efficient_triage",
            event_type="tool_call",
            filter=lambda call: call.name == "ask",
            assertion=lambda count: count <= 5,
        ),
    ],
)

CASES = [chest_pain]
