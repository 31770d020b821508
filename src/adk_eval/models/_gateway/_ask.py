"""Asking a model for one answer, and reading JSON out of what it says.

Each answer's token usage is recorded for the current role in the run's gate,
and the call goes through the run's gateway as that role (`_pipeline`:
pacing, retries, the cache, a cassette).

What the judge (`llm_judge`) and simulated tools (`ToolMock.simulated`) share:
one non-streaming answer from any ADK model, and the JSON value in a reply that
may be fenced (```json ... ```) or wrapped in a sentence.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, TypeVar

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.genai import types
from pydantic import BaseModel, ValidationError

from ..._sandbox._scope import model_traffic
from ..._turns import parts_text
from ._gate import current_gate
from ._pipeline import call
from ._usage import current_role, usage_role

__all__ = ["ask_for", "complete", "complete_parts", "json_candidates", "json_value", "read_as"]

Answer = TypeVar("Answer", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


async def complete(llm: BaseLlm, request: LlmRequest) -> str:
    """The text of `llm`'s whole answer to `request` (partial chunks skipped)."""
    return parts_text(await complete_parts(llm, request))


async def complete_parts(llm: BaseLlm, request: LlmRequest) -> list[types.Part]:
    """Every part of `llm`'s whole answer to `request`: text and function calls alike."""
    parts: list[types.Part] = []
    gate = current_gate()
    with model_traffic():  # its connections are model traffic (the sandbox lets them be)
        async for response in call(llm, request, False, current_role(), gate):
            if not response.partial:
                parts.extend(response.content.parts or [] if response.content else [])
                gate.record_usage(response.model_version or llm.model, response.usage_metadata)
    return parts


def json_candidates(text: str) -> Iterator[Any]:
    """The JSON values `text` may hold: all of it unfenced, then its outermost ``{...}``."""
    cleaned = _FENCE.sub("", text.strip())
    pieces = [cleaned]
    start, end = cleaned.find("{"), cleaned.rfind("}")
    if 0 <= start < end:
        pieces.append(cleaned[start : end + 1])
    for piece in pieces:
        try:
            yield json.loads(piece)
        except ValueError:
            continue


def json_value(text: str) -> tuple[bool, Any]:
    """``(True, value)`` for the first JSON value in `text`, else ``(False, None)``."""
    for value in json_candidates(text):
        return True, value
    return False, None


def read_as(text: str, answer: type[Answer]) -> Answer | None:
    """The first JSON value in `text` that validates as `answer` (None: none does)."""
    for data in json_candidates(text):
        try:
            return answer.model_validate(data)
        except ValidationError:
            continue
    return None


async def ask_for(
    llm: BaseLlm,
    text: str,
    *,
    instruction: str,
    answer: type[Answer],
    role: str,
    schema: bool = False,
) -> tuple[Answer | None, str]:
    """`llm`'s JSON answer to `text` under `instruction`, read as `answer`.

    Args:
        llm: The model.
        text: The one user message.
        instruction: The system instruction.
        answer: The pydantic model the reply must validate as.
        role: The role its usage is recorded under (``judge:NAME``).
        schema: Also send `answer` as the response schema.

    Returns:
        The first JSON value in the reply that validates (None if none does), and
        the reply's text (for a message quoting it).
    """
    request = LlmRequest(
        model=llm.model,
        contents=[types.Content(role="user", parts=[types.Part(text=text)])],
        config=types.GenerateContentConfig(
            system_instruction=instruction,
            response_mime_type="application/json",
            response_schema=answer if schema else None,
        ),
    )
    with usage_role(role):
        reply = await complete(llm, request)
    return read_as(reply, answer), reply
