"""The simulated patient: a persona shared by the conversation and `ask` user agents."""

from __future__ import annotations

from google.adk.agents import LlmAgent

from adk_eval import with_state_change

from .models import patient_model

CHEST_PAIN_PERSONA = """\
You are a 55-year-old man with sudden severe chest pain.
The pain started 30 minutes ago, is crushing, and spreads to your left arm.
You are anxious and want help quickly. Answer naturally, in one or two sentences.

You also have high blood pressure and high cholesterol, but mention them only if
asked about your medical history; when you do, call `reveal_condition` once for each.
When the clinician has told you what to do, say goodbye and end with </finished>.
"""


def reveal_condition(condition: str) -> dict:
    """Use when you mention a medical condition from your history.

    Args:
        condition: The condition you mentioned, e.g. "hypertension".
    """
    return with_state_change(
        {"revealed": condition},
        {"patient": {"revealedConditions": [condition]}},
    )


def patient_agents(persona: str) -> tuple[LlmAgent, LlmAgent]:
    """The loop user agent (conversation) and the `ask` tool user agent (answers)."""
    conversation = LlmAgent(
        name="patient_conversation",
        model=patient_model(),
        instruction=persona,
    )
    answers = LlmAgent(
        name="patient_answer",
        model=patient_model(),
        instruction=persona + "\nYou are answering one question from the clinician.",
        tools=[reveal_condition],
    )
    return conversation, answers
