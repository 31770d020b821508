"""Which models play the clinician and the patient.

Offline (the default) both are `ScriptedLlm`s: deterministic stand-ins that
follow the conversation (the clinician picks its script from the patient's
complaint; the patient answers each question by its keywords). They exercise
the whole harness with no API key; they do not judge anything.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call

Q_ONSET = "When did the pain start, and does it spread to your arm, jaw or back?"
Q_HISTORY = "Do you have any heart problems, high blood pressure or high cholesterol?"


def _texts(content: types.Content) -> str:
    return "".join(part.text or "" for part in content.parts or [])


def _first_user_text(request: LlmRequest) -> str:
    for content in request.contents:
        if content.role == "user" and _texts(content):
            return _texts(content)
    return ""


def _last_answer(request: LlmRequest) -> str:
    """The patient's last answer to `ask`, as text."""
    for content in reversed(request.contents):
        for part in content.parts or []:
            response = part.function_response
            if response is not None and response.name == "ask":
                payload = dict(response.response or {})
                return str(payload.get("result", json.dumps(payload)))
    return ""


Step = Callable[[LlmRequest], Any]

CHEST_PAIN: list[Step] = [
    lambda r: tool_call("read", {"policy_id": "chest_pain"}),
    lambda r: [
        "I'm sorry you're in pain. I need to ask a few quick questions.",
        tool_call("ask", {"question": Q_ONSET}),
    ],
    lambda r: [
        tool_call("record_answer", {"question": Q_ONSET, "answer": _last_answer(r)}),
        tool_call(
            "update_belief", {"condition": "acute_coronary_syndrome", "likelihood": "medium"}
        ),
    ],
    lambda r: tool_call("ask", {"question": Q_HISTORY}),
    lambda r: [
        tool_call("record_answer", {"question": Q_HISTORY, "answer": _last_answer(r)}),
        tool_call("update_belief", {"condition": "acute_coronary_syndrome", "likelihood": "high"}),
    ],
    lambda r: tool_call(
        "escalate",
        {
            "urgency_level": "emergency_999",
            "reason": "Crushing chest pain spreading to the left arm with cardiac risk factors.",
        },
    ),
    lambda r: "This could be a heart attack. Please call 999 now and don't drive yourself.",
]

UNKNOWN: list[Step] = [
    lambda r: tool_call("handover", {"summary": f"Complaint not covered: {_first_user_text(r)!r}"}),
    lambda r: "I'm passing you to one of our clinicians, who will be with you shortly.",
]

SCRIPTS: dict[str, list[Step]] = {"chest pain": CHEST_PAIN}


def scripted_clinician(request: LlmRequest) -> Any:
    """Plays the script for the complaint in the patient's first message."""
    complaint = _first_user_text(request).lower()
    script = next((s for key, s in SCRIPTS.items() if key in complaint), UNKNOWN)
    turn = model_turn_index(request)
    if turn >= len(script):
        return "Is there anything else I can help with?"
    return script[turn](request)


def _turns_since_prompt(request: LlmRequest) -> tuple[str, int]:
    """The latest prompt from the bridge, and how many model turns followed it."""
    prompt, since = "", 0
    for content in request.contents:
        if content.role == "user" and _texts(content):
            prompt, since = _texts(content), 0
        elif content.role == "model":
            since += 1
    return prompt, since


def scripted_patient(request: LlmRequest) -> Any:
    """A 55-year-old man with chest pain, answering by the question's keywords."""
    prompt, since = _turns_since_prompt(request)
    lowered = prompt.lower()
    if "blood pressure" in lowered or "heart problems" in lowered:
        steps: list[Any] = [
            tool_call("reveal_condition", {"condition": "hypertension"}),
            tool_call("reveal_condition", {"condition": "high cholesterol"}),
            "I've got high blood pressure and high cholesterol. No heart problems that I know of.",
        ]
    elif "start" in lowered:
        steps = ["About 30 minutes ago. It's crushing, and it goes down my left arm."]
    elif "999" in lowered:
        steps = ["OK, I'm calling 999 now. </finished>"]
    else:
        steps = ["I'm not sure. It really hurts. </finished>"]
    return steps[min(since, len(steps) - 1)]


def clinician_model() -> ScriptedLlm:
    """The model of the agent under test."""
    return ScriptedLlm(responder=scripted_clinician, model="scripted-clinician")


def patient_model() -> ScriptedLlm:
    """The model of the simulated patient."""
    return ScriptedLlm(responder=scripted_patient, model="scripted-patient")
