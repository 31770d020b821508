"""What rules cannot measure in a conversation, asked of a model with a structured schema.

The goal in the user's own terms and the constraints they set ("before Friday", "not
the Main Street clinic") need reading, not counting: `extract(session, model)` sends
the conversation (redacted first: it leaves the machine) to a model with
`Extraction` as the response schema and returns what it read. Everything a rule can
measure (facts and when they were given, manner) stays with the rules (`_mine`).
The call goes through the model-call gate as the role ``judge:mine`` (pacing, retries,
the cache and cassettes apply).
"""

from __future__ import annotations

from google.adk.events import Event
from google.adk.sessions import Session
from pydantic import BaseModel, Field

from .._errors import EvalSetupError
from ..models import ModelSpec, resolve_model
from ..models._calls import ask_for

__all__ = ["EXTRACTION_INSTRUCTION", "Extraction", "extract"]

EXTRACTION_INSTRUCTION = (
    "You read a conversation between a user and an assistant. Reply with JSON only: the "
    "user's goal in one sentence, in their own terms (what they wanted done, not how it "
    "went), and the constraints they set on it (deadlines, exclusions, preferences), each "
    "a short phrase. Invent nothing: an empty list when they set none."
)


class Extraction(BaseModel):
    """What a model read in one conversation."""

    goal: str = Field(description="The user's goal in one sentence, in their own terms.")
    constraints: list[str] = Field(
        default_factory=list, description="Deadlines, exclusions, preferences the user set."
    )


def _transcript(events: list[Event]) -> str:
    lines = []
    for event in events:
        parts = (event.content.parts if event.content else None) or []
        text = " ".join(p.text for p in parts if p.text and not p.thought).strip()
        if text:
            lines.append(f"{'User' if event.author == 'user' else 'Assistant'}: {text}")
    return "\n".join(lines)


async def extract(session: Session, model: ModelSpec) -> Extraction:
    """The goal and constraints of `session` as `model` reads them (see the module doc).

    Raises:
        EvalSetupError: The model's reply does not follow the schema (one line quoting it).
    """
    llm = resolve_model(model)
    extraction, reply = await ask_for(
        llm,
        _transcript(session.events),
        instruction=EXTRACTION_INSTRUCTION,
        answer=Extraction,
        role="judge:mine",
        schema=True,
    )
    if extraction is not None:
        return extraction
    raise EvalSetupError(
        f"the mining model's reply is not {{goal, constraints}} JSON: {reply[:200]!r}"
    )
