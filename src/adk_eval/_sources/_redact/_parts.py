"""Where an event's readable text is: what `redact_session` hands to its redaction.

Kept apart from `_redact` (what is found and how it is replaced) so the list of
places, which grows with ADK's and genai's types, reads in one piece: text
parts, function calls and responses (and the blobs a response carries), code,
transcriptions, error messages, metadata, outputs, state deltas, compaction
summaries, and ``text/*`` blobs (`_redact_hidden` decodes them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.genai import types

from ._hidden import blob_text, with_text

__all__ = ["redact_event"]


def redact_event(event: Any, redact: Callable[[Any], Any]) -> None:
    """Redacts one event (a copy) in place."""
    if event.content is not None:
        _redact_content(event.content, redact)
    _redact_fields(
        redact,
        (event.input_transcription, "text"),
        (event.output_transcription, "text"),
        (event, "error_message"),
        (event, "custom_metadata"),
        (event, "output"),
        (event.actions, "state_delta"),
    )
    compaction = event.actions.compaction
    if compaction is not None and compaction.compacted_content is not None:
        _redact_content(compaction.compacted_content, redact)


def _redact_content(content: types.Content, redact: Callable[[Any], Any]) -> None:
    """Redacts the readable parts of a content (a copy) in place."""
    for part in content.parts or []:
        _redact_fields(
            redact,
            (part, "text"),
            (part.function_call, "args"),
            (part.function_response, "response"),
            (part.executable_code, "code"),
            (part.code_execution_result, "output"),
            (part.tool_call, "args"),
            (part.tool_response, "response"),
            (part.audio_transcription, "text"),
        )
        answer = part.function_response
        blobs = [part.inline_data, *(p.inline_data for p in (answer and answer.parts) or [])]
        for blob in blobs:
            if blob is not None:
                _redact_blob(blob, redact)


def _redact_fields(redact: Callable[[Any], Any], *places: tuple[Any, str]) -> None:
    """Redacts each ``(holder, field)`` of `places` that holds something (a None holder: none)."""
    for holder, name in places:
        value = getattr(holder, name) if holder is not None else None
        if value:
            setattr(holder, name, redact(value))


def _redact_blob(blob: Any, redact: Callable[[Any], Any]) -> None:
    """Redacts a blob's name and, of a ``text/*`` blob, its text (in its charset)."""
    _redact_fields(redact, (blob, "display_name"))
    found = blob_text(blob)
    if found is not None and (clean := redact(found[0])) != found[0]:
        with_text(blob, clean, found[1])
