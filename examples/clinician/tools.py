"""The clinician's tools.

`read` calls the policy service (an external dependency: mocked in evals).
`record_answer`, `update_belief`, `escalate` and `handover` only change session
state (safe: evals run the real ones). `ask` is long-running: the question goes
to the patient and the answer arrives later (a user agent answers it in evals).
"""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Literal

from google.adk.tools import ToolContext

POLICY_SERVICE = os.environ.get("POLICY_SERVICE_URL", "https://policies.example.invalid")


def read(policy_id: str) -> dict:
    """Reads a triage policy (what to ask, red flags, where to send the patient).

    Args:
        policy_id: The policy to read, e.g. "chest_pain", "headache", "routine".
    """
    with urllib.request.urlopen(f"{POLICY_SERVICE}/policies/{policy_id}", timeout=10) as reply:
        return json.load(reply)


def record_answer(question: str, answer: str, tool_context: ToolContext) -> dict:
    """Records the patient's answer to a question.

    Args:
        question: The question as asked.
        answer: The patient's answer, in their words.
    """
    answers = dict(tool_context.state.get("answers", {}))
    answers[question] = answer
    tool_context.state["answers"] = answers
    return {"recorded": question}


def update_belief(
    condition: str, likelihood: Literal["low", "medium", "high"], tool_context: ToolContext
) -> dict:
    """Updates how likely a condition is, given what the patient said.

    Args:
        condition: The condition, e.g. "acute_coronary_syndrome".
        likelihood: "low", "medium" or "high".
    """
    beliefs = dict(tool_context.state.get("beliefs", {}))
    beliefs[condition] = likelihood
    tool_context.state["beliefs"] = beliefs
    return {"beliefs": beliefs}


def escalate(
    urgency_level: Literal["emergency_999", "urgent_111", "gp_routine"],
    reason: str,
    tool_context: ToolContext,
) -> dict:
    """Escalates the patient to a care pathway. Ends the triage.

    Args:
        urgency_level: "emergency_999", "urgent_111" or "gp_routine".
        reason: Why, in one sentence.
    """
    tool_context.state["escalation"] = {"urgencyLevel": urgency_level, "reason": reason}
    return {"escalated": urgency_level}


def handover(summary: str, tool_context: ToolContext) -> dict:
    """Hands the case over to a human clinician with a summary. Ends the triage.

    Args:
        summary: What the human clinician needs to know.
    """
    tool_context.state["handover"] = {"summary": summary}
    return {"handed_over": True}


def ask(question: str) -> None:
    """Asks the patient a question and waits for the answer.

    Args:
        question: One clear question.
    """
    # The app shows the question to the patient; the answer comes back later as
    # this call's function response, so there is nothing to return now.
    return None
