"""What rules cannot measure in a conversation, asked of a model with a structured schema.

The goal in the user's own terms and the constraints they set ("before Friday", "not
the Main Street clinic") need reading, not counting: `extract(session, model)` sends
the conversation (redacted first: it leaves the machine) to a model with
`Extraction` as the response schema and returns what it read. Everything a rule can
measure (facts and when they were given, manner) stays with the rules (`_mine`).
The call goes through the model-call gate as the role ``judge:mine`` (pacing, retries,
the cache and cassettes apply). A reply that is not the JSON asked for is asked again
once: the request then holds that reply and a reminder of the shape (a different
request, so no cache answers it with the same reply); `read_goal` then gives None and
the last reply, and `extract` raises.
"""

from __future__ import annotations

from google.adk.events import Event
from google.adk.models.llm_request import LlmRequest
from google.adk.sessions import Session
from google.genai import types
from pydantic import BaseModel, Field

from .._errors import EvalSetupError
from ..models import ModelSpec, resolve_model
from ..models._gateway._ask import complete, read_as
from ..models._gateway._usage import usage_role

__all__ = ["EXTRACTION_INSTRUCTION", "Extraction", "extract", "read_goal"]

EXTRACTION_INSTRUCTION = (
    "You read a conversation between a user and an assistant. Reply with JSON only: the "
    "user's goal in one sentence, in their own terms (what they wanted done, not how it "
    "went), and the constraints they set on it (deadlines, exclusions, preferences), each "
    "a short phrase. Invent nothing: an empty list when they set none."
)
_AGAIN = (
    "Your last reply was not the JSON asked for. Reply with one JSON object and nothing "
    'else: {"goal": "...", "constraints": ["..."]}.'
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


async def read_goal(
    session: Session, model: ModelSpec, *, attempts: int = 2
) -> tuple[Extraction | None, str]:
    """The goal and constraints of `session` as `model` reads them, and its last reply.

    A reply that is not the JSON asked for is answered with a reminder and asked
    again (`attempts` in all); None when no reply was that JSON.
    """
    llm = resolve_model(model)
    contents = [types.Content(role="user", parts=[types.Part(text=_transcript(session.events))])]
    config = types.GenerateContentConfig(
        system_instruction=EXTRACTION_INSTRUCTION,
        response_mime_type="application/json",
        response_schema=Extraction,
    )
    reply = ""
    for attempt in range(attempts):
        if attempt:
            contents.append(types.Content(role="model", parts=[types.Part(text=reply)]))
            contents.append(types.Content(role="user", parts=[types.Part(text=_AGAIN)]))
        request = LlmRequest(model=llm.model, contents=list(contents), config=config)
        with usage_role("judge:mine"):
            reply = await complete(llm, request)
        found = read_as(reply, Extraction)
        if found is not None:
            return found, reply
    return None, reply


async def extract(session: Session, model: ModelSpec) -> Extraction:
    """The goal and constraints of `session` as `model` reads them (see the module doc).

    Raises:
        EvalSetupError: No reply follows the schema, asked twice (one line quoting the last).
    """
    extraction, reply = await read_goal(session, model)
    if extraction is not None:
        return extraction
    raise EvalSetupError(
        f"the mining model's reply is not {{goal, constraints}} JSON: {reply[:200]!r}"
    )
