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
    for transcription in (event.input_transcription, event.output_transcription):
        if transcription is not None and transcription.text:
            transcription.text = redact(transcription.text)
    if event.error_message:
        event.error_message = redact(event.error_message)
    if event.custom_metadata:
        event.custom_metadata = redact(event.custom_metadata)
    if event.output is not None:
        event.output = redact(event.output)
    actions = event.actions
    if actions.state_delta:
        actions.state_delta = redact(actions.state_delta)
    if actions.compaction is not None and actions.compaction.compacted_content is not None:
        _redact_content(actions.compaction.compacted_content, redact)


def _redact_content(content: types.Content, redact: Callable[[Any], Any]) -> None:
    """Redacts the readable parts of a content (a copy) in place."""
    for part in content.parts or []:
        if part.text:
            part.text = redact(part.text)
        if part.function_call is not None and part.function_call.args:
            part.function_call.args = redact(part.function_call.args)
        if part.function_response is not None and part.function_response.response:
            part.function_response.response = redact(part.function_response.response)
        if part.executable_code is not None and part.executable_code.code:
            part.executable_code.code = redact(part.executable_code.code)
        result = part.code_execution_result
        if result is not None and result.output:
            result.output = redact(result.output)
        if part.tool_call is not None and part.tool_call.args:
            part.tool_call.args = redact(part.tool_call.args)
        if part.tool_response is not None and part.tool_response.response:
            part.tool_response.response = redact(part.tool_response.response)
        if part.audio_transcription is not None and part.audio_transcription.text:
            part.audio_transcription.text = redact(part.audio_transcription.text)
        answer = part.function_response
        blobs = [part.inline_data, *(p.inline_data for p in (answer and answer.parts) or [])]
        for blob in blobs:
            if blob is not None:
                _redact_blob(blob, redact)


def _redact_blob(blob: Any, redact: Callable[[Any], Any]) -> None:
    """Redacts a blob's name and, of a ``text/*`` blob, its text (in its charset)."""
    if blob.display_name:
        blob.display_name = redact(blob.display_name)
    found = blob_text(blob)
    if found is not None and (clean := redact(found[0])) != found[0]:
        with_text(blob, clean, found[1])
