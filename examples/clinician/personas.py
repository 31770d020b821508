"""The simulated patients: a persona prompt each, shared by their two user agents.

A real model plays the persona from its prompt. Offline, the scripted patient
answers by keyword (`rules`); both reach the main session the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from google.adk.agents import LlmAgent

from adk_eval import with_state_change
from adk_eval.testing import tool_call

from .models import PatientRule, patient_model

_ENDING = """
Answer naturally, in one or two sentences. When the clinician has told you what to
do and you have nothing more to ask, say goodbye and end with </finished>.
"""


@dataclass(frozen=True)
class Persona:
    """A patient: the prompt a real model plays, and the offline answers."""

    name: str
    prompt: str
    rules: Sequence[PatientRule]
    default: str


def reveal_condition(condition: str) -> dict:
    """Use when you mention a medical condition from your history.

    Args:
        condition: The condition you mentioned, e.g. "hypertension".
    """
    return with_state_change(
        {"revealed": condition},
        {"patient": {"revealedConditions": [condition]}},
    )


CHEST_PAIN = Persona(
    name="chest_pain",
    prompt="""\
You are a 55-year-old man with sudden severe chest pain. It started 30 minutes ago,
is crushing, and spreads to your left arm. You are anxious and want help quickly.
You also have high blood pressure and high cholesterol, but mention them only if
asked about your medical history; when you do, call `reveal_condition` once for each.
"""
    + _ENDING,
    rules=[
        (
            ["blood pressure", "heart problems"],
            [
                tool_call("reveal_condition", {"condition": "hypertension"}),
                tool_call("reveal_condition", {"condition": "high cholesterol"}),
                "I've got high blood pressure and high cholesterol. "
                "No heart problems that I know of.",
            ],
        ),
        (["start"], ["About 30 minutes ago. It's crushing, and it goes down my left arm."]),
        (["999"], ["OK, I'm calling 999 now. </finished>"]),
    ],
    default="I'm not sure. It really hurts. </finished>",
)

HEADACHE = Persona(
    name="headache",
    prompt="""\
You are a 34-year-old woman with a headache for two days. It built up slowly, feels
like a tight band around your head, and is like the tension headaches you get when
work is stressful (mention those, calling `reveal_condition`, only if asked about your
history). No fever, no stiff neck, your vision is fine, no weakness.
"""
    + _ENDING,
    rules=[
        (
            ["suddenly", "gradually"],
            ["No, it built up slowly. It's a dull, tight feeling, like a band around my head."],
        ),
        (["paracetamol"], ["OK, thank you. I'll rest and see how it goes."]),
        (["fever", "stiff neck"], ["No fever, my neck is fine, and my vision is normal."]),
        (["welcome", "take care"], ["Thanks, bye! </finished>"]),
    ],
    default="I'm not sure. </finished>",
)

ROUTINE = Persona(
    name="routine",
    prompt="""\
You are a 62-year-old man who wants to book a routine blood pressure check. You feel
well. Tuesday mornings suit you best.
"""
    + _ENDING,
    rules=[
        (["days", "times"], ["Tuesday mornings are best for me."]),
        (["confirm", "text"], ["Great, thanks! </finished>"]),
    ],
    default="Thanks. </finished>",
)

ATYPICAL = Persona(
    name="atypical",
    prompt="""\
You are a 68-year-old woman. For the last hour your jaw has ached and you feel sick
and sweaty. You do not call it chest pain. You have diabetes (mention it, calling
`reveal_condition`, only if asked about your history).
"""
    + _ENDING,
    rules=[
        (["clinician", "shortly"], ["OK, I'll wait. </finished>"]),
    ],
    default="My jaw aches and I feel sick. </finished>",
)


UNRELIABLE = Persona(
    name="unreliable",
    prompt="""\
You are a 62-year-old man who wants to book a routine blood pressure check. You feel
well. Tuesday mornings suit you best.
This persona is deliberately unreliable, to show how adk-eval tells a simulated user's
mistake from the agent's: when asked which days suit you, say Friday afternoons,
against your own preference. If you are reminded to stay in your role, do.
"""
    + _ENDING,
    rules=[
        (["stay in your role"], ["Tuesday mornings are best for me."]),
        (["days", "times"], ["Friday afternoons, I suppose."]),
        (["confirm", "text"], ["Great, thanks! </finished>"]),
    ],
    default="Thanks. </finished>",
)
"""The routine patient, told to misbehave: it names the wrong day (see the README)."""


def patient_agents(persona: Persona) -> tuple[LlmAgent, LlmAgent]:
    """The loop user agent (conversation) and the `ask` tool user agent (answers)."""
    conversation = LlmAgent(
        name="patient_conversation",
        model=patient_model(persona.rules, persona.default),
        instruction=persona.prompt,
    )
    answers = LlmAgent(
        name="patient_answer",
        model=patient_model(persona.rules, persona.default),
        instruction=persona.prompt + "\nYou are answering one question from the clinician.",
        tools=[reveal_condition],
    )
    return conversation, answers
