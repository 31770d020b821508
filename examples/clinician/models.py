"""Which models play the clinician, the patient and the judge.

* a model configured for the role (``--model``/``--user-model``/``--judge-model``,
  or ``ADK_EVAL_MODEL``/``ADK_EVAL_USER_MODEL``/``ADK_EVAL_JUDGE_MODEL``), for
  example ``local``: that model.
* else ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` set: Gemini (``gemini-2.5-flash``).
* else ``OPENAI_API_KEY`` set: OpenAI through LiteLLM (``openai/gpt-4o-mini``).
* else: offline, on `ScriptedLlm` stand-ins, and one line on stderr says so.

The stand-ins follow the conversation: the clinician picks its script from the
patient's complaint, the patient answers each question by its keywords, and the
judge applies one rule (the clinician must have told the patient the pathway
recorded in the final state). They exercise the whole harness with no key;
they do not judge anything.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from adk_eval.models import ModelRole, configured_model
from adk_eval.testing import ScriptedLlm, model_turn_index, tool_call


def _provider() -> str:
    if configured_model("model") is not None:
        return "configured"
    if os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"):
        return "gemini"
    if os.environ.get("OPENAI_API_KEY"):
        return "openai"
    return "scripted"


PROVIDER = _provider()
if PROVIDER == "scripted":
    print(
        "clinician example: no GOOGLE_API_KEY, GEMINI_API_KEY or OPENAI_API_KEY set; "
        "the agents and the judge run offline on scripted models",
        file=sys.stderr,
    )


def _real_model(role: ModelRole) -> str | BaseLlm | None:
    chosen = configured_model(role)
    if chosen is not None:
        return chosen
    if PROVIDER == "gemini":
        return "gemini-2.5-flash"
    if PROVIDER == "openai":
        from google.adk.models.lite_llm import LiteLlm

        return LiteLlm(model="openai/gpt-4o-mini")
    return None


# -- reading requests ---------------------------------------------------------------


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


# -- the scripted clinician -----------------------------------------------------------

Step = Callable[[LlmRequest], Any]

Q_ONSET = "When did the pain start, and does it spread to your arm, jaw or back?"
Q_HISTORY = "Do you have any heart problems, high blood pressure or high cholesterol?"
Q_SUDDEN = (
    "Did the headache come on suddenly, like the worst headache of your life, "
    "or build up gradually?"
)
Q_RED_FLAGS = "Do you have a fever, a stiff neck, changes in your vision, or weakness anywhere?"
Q_DAYS = "Which days and times suit you best for a blood pressure check?"


def _answered(question: str, condition: str, likelihood: str) -> Step:
    return lambda r: [
        tool_call("record_answer", {"question": question, "answer": _last_answer(r)}),
        tool_call("update_belief", {"condition": condition, "likelihood": likelihood}),
    ]


CHEST_PAIN: list[Step] = [
    lambda r: tool_call("read", {"policy_id": "chest_pain"}),
    lambda r: [
        "I'm sorry you're in pain. I need to ask a few quick questions.",
        tool_call("ask", {"question": Q_ONSET}),
    ],
    _answered(Q_ONSET, "acute_coronary_syndrome", "medium"),
    lambda r: tool_call("ask", {"question": Q_HISTORY}),
    _answered(Q_HISTORY, "acute_coronary_syndrome", "high"),
    lambda r: tool_call(
        "escalate",
        {
            "urgency_level": "emergency_999",
            "reason": "Crushing chest pain spreading to the left arm with cardiac risk factors.",
        },
    ),
    lambda r: "This could be a heart attack. Please call 999 now and don't drive yourself.",
]

HEADACHE: list[Step] = [
    lambda r: tool_call("read", {"policy_id": "headache"}),
    lambda r: [
        "I'm sorry to hear that. A couple of questions to rule out anything serious.",
        tool_call("ask", {"question": Q_SUDDEN}),
    ],
    _answered(Q_SUDDEN, "subarachnoid_haemorrhage", "low"),
    lambda r: tool_call("ask", {"question": Q_RED_FLAGS}),
    _answered(Q_RED_FLAGS, "tension_headache", "high"),
    lambda r: tool_call(
        "escalate",
        {"urgency_level": "gp_routine", "reason": "Gradual-onset headache without red flags."},
    ),
    lambda r: (
        "This sounds like a tension headache. Rest, drink water, and take paracetamol if you "
        "need it. Book a GP appointment if it lasts more than a week, and call 111 straight "
        "away if you get a fever or a stiff neck."
    ),
    lambda r: "You're welcome. Take care, and call 111 if anything changes.",
]

ROUTINE: list[Step] = [
    lambda r: tool_call("read", {"policy_id": "routine"}),
    lambda r: tool_call("ask", {"question": Q_DAYS}),
    lambda r: [
        tool_call("record_answer", {"question": Q_DAYS, "answer": _last_answer(r)}),
        tool_call(
            "handover",
            {"summary": f"Routine blood pressure check; availability: {_last_answer(r)}"},
        ),
    ],
    lambda r: (
        "Thanks! I've passed your request to a clinician at the practice, "
        "who will confirm your appointment by text."
    ),
]

UNKNOWN: list[Step] = [
    lambda r: tool_call(
        "handover", {"summary": f"Complaint not covered by a policy: {_first_user_text(r)!r}"}
    ),
    lambda r: "I'm passing you to one of our clinicians, who will be with you shortly.",
    lambda r: "A clinician will be with you shortly.",
]

SCRIPTS: dict[str, list[Step]] = {
    "chest pain": CHEST_PAIN,
    "headache": HEADACHE,
    "appointment": ROUTINE,
}


def scripted_clinician(request: LlmRequest) -> Any:
    """Plays the script for the complaint in the patient's first message."""
    complaint = _first_user_text(request).lower()
    script = next((s for key, s in SCRIPTS.items() if key in complaint), UNKNOWN)
    turn = model_turn_index(request)
    return script[min(turn, len(script) - 1)](request)


# -- the scripted patient ----------------------------------------------------------------

PatientRule = tuple[Sequence[str], Sequence[Any]]
"""(keywords of the clinician's message, replies: tool_call(...) steps then text)."""


def _prompt_and_turns_since(request: LlmRequest) -> tuple[str, int]:
    prompt, since = "", 0
    for content in request.contents:
        if content.role == "user" and _texts(content):
            prompt, since = _texts(content), 0
        elif content.role == "model":
            since += 1
    return prompt, since


def scripted_patient(rules: Sequence[PatientRule], default: str) -> Callable[[LlmRequest], Any]:
    """A patient answering by keyword: the first rule whose keyword is in the prompt."""

    def respond(request: LlmRequest) -> Any:
        prompt, since = _prompt_and_turns_since(request)
        lowered = prompt.lower()
        steps: Sequence[Any] = next(
            (replies for keywords, replies in rules if any(k in lowered for k in keywords)),
            [default],
        )
        return steps[min(since, len(steps) - 1)]

    return respond


# -- the scripted judge ------------------------------------------------------------------

_PATHWAY_WORDS = {
    "emergency_999": "999",
    "urgent_111": "111",
    "gp_routine": "gp",
}


def scripted_judge(request: LlmRequest) -> str:
    """One rule: the clinician told the patient the pathway recorded in the final state.

    As the `user_fidelity` judge, one rule too: a patient whose persona prefers a day
    names that day, not another.
    """
    text = _texts(request.contents[-1])
    if "Instructions (persona):" in text:
        return _scripted_fidelity(text)
    state = text.split("Final state:")[-1]
    said = " ".join(re.findall(r"^\[clinician\] (.+)$", text, flags=re.MULTILINE)).lower()
    level = re.search(r'"urgencyLevel": "(\w+)"', state)
    if level:
        word = _PATHWAY_WORDS.get(level.group(1), level.group(1))
    elif '"handover"' in state:
        word = "clinician"
    else:
        return json.dumps(
            {"passed": False, "score": 0.0, "reasoning": "The conversation ended with no pathway."}
        )
    passed = word in said
    return json.dumps(
        {
            "passed": passed,
            "score": 1.0 if passed else 0.0,
            "reasoning": (
                f"The final pathway is {word!r}; the clinician "
                + ("told the patient." if passed else "never told the patient.")
            ),
        }
    )


_DAY = re.compile(r"\b(Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)s?\b")


def _scripted_fidelity(text: str) -> str:
    persona, _, turns = text.partition("Turn 1.")
    prefers = _DAY.findall(persona.split("deliberately")[0])
    verdicts = []
    for number, turn in enumerate(("Turn 1." + turns).split("\nTurn ")[0:], start=1):
        said = turn.split("User:", 1)[-1]
        named = _DAY.findall(said)
        wrong = [day for day in named if prefers and day not in prefers]
        verdicts.append(
            {
                "turn": number,
                "in_role": not wrong,
                "problem": "contradicted_facts" if wrong else "none",
                "quote": said.strip() if wrong else "",
            }
        )
    return json.dumps({"turns": verdicts})


# -- the models ----------------------------------------------------------------------------


def clinician_model() -> str | BaseLlm:
    """The model of the agent under test."""
    real = _real_model("model")
    if real is not None:
        return real
    return ScriptedLlm(responder=scripted_clinician, model="scripted-clinician")


def patient_model(rules: Sequence[PatientRule], default: str) -> str | BaseLlm:
    """The model of a simulated patient (`rules` only matter offline)."""
    real = _real_model("user_model")
    if real is not None:
        return real
    return ScriptedLlm(responder=scripted_patient(rules, default), model="scripted-patient")


def judge_model() -> str | BaseLlm:
    """The model of the `llm_judge` metrics."""
    real = _real_model("judge_model")
    if real is not None:
        return real
    return ScriptedLlm(responder=scripted_judge, model="scripted-judge")
