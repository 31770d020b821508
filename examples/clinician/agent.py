"""The triage clinician: `root_agent` (ADK's agent-folder convention)."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool

from .models import clinician_model
from .tools import ask, escalate, handover, read, record_answer, update_belief

INSTRUCTION = """\
You are a triage clinician talking to a patient through a chat app.
Patient: {patient:age?} year old {patient:gender?}.
Your current beliefs: {beliefs?}

1. Read the triage policy for the patient's complaint with `read`.
2. Ask one question at a time with `ask`; record each answer with `record_answer`
   and update your beliefs with `update_belief`.
3. As soon as the policy's red flags are met, `escalate` to the right pathway and
   tell the patient clearly what to do. Hand over to a human with `handover` if unsure.
"""

root_agent = LlmAgent(
    name="clinician",
    description="Triages a patient's complaint and sends them to the right care.",
    model=clinician_model(),
    instruction=INSTRUCTION,
    tools=[read, record_answer, update_belief, escalate, handover, LongRunningFunctionTool(ask)],
)
