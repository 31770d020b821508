"""`MockToolContext`: what a mock may know about the call it answers, and its artifacts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeAlias

from google.genai import types

from .._errors import EvalSetupError
from .._state import ScopedState
from ._clock import system_clock

__all__ = ["ArtifactValue", "Clock", "MockToolContext", "as_part", "with_text"]

ArtifactValue: TypeAlias = "types.Part | str | bytes"
"""An artifact as a case or a mock gives it: a `Part`, text, or bytes."""

Clock: TypeAlias = Callable[[], datetime]
"""A function returning the current time; `EvalCase.clock` may fix it."""


@dataclass(frozen=True)
class MockToolContext:
    """What a mock may know about the call it answers.

    Attributes:
        call_id: The function call id (``adk-...`` when the model gave none).
        tool_name: Name of the tool being called.
        invocation_id: The ADK invocation the call belongs to.
        agent_name: Name of the agent that made the call.
        state: Scoped read/write access to the calling session's state; writes
            land in the tool response's state delta, like a real tool's.
        occurrence: How many times this run called this tool with these same
            args before (0 the first time).

    An async mock saves and reads the session's artifacts as the real tool would
    (`save_artifact`, `load_artifact`, `list_artifacts`): through ADK's tool
    context, so a save lands in the tool response's ``artifact_delta`` and the
    agents that read artifacts see it.
    """

    call_id: str
    tool_name: str
    invocation_id: str
    agent_name: str
    state: ScopedState
    occurrence: int = 0
    _clock: Clock = field(default=system_clock, repr=False)
    _tool_context: Any = field(default=None, repr=False)

    def now(self) -> datetime:
        """Returns the current time from the case's clock (timezone-aware)."""
        return self._clock()

    async def save_artifact(
        self, filename: str, artifact: ArtifactValue, *, mime_type: str | None = None
    ) -> int:
        """Saves `artifact` (a `Part`, text, or bytes of `mime_type`); returns its version."""
        return int(await self._context().save_artifact(filename, as_part(artifact, mime_type)))

    async def load_artifact(self, filename: str, version: int | None = None) -> types.Part | None:
        """The artifact `filename` (its latest version, or `version`); None when there is none."""
        part: types.Part | None = await self._context().load_artifact(filename, version)
        return part

    async def list_artifacts(self) -> list[str]:
        """The names of the session's artifacts."""
        return list(await self._context().list_artifacts())

    def _context(self) -> Any:
        if self._tool_context is None:
            raise EvalSetupError(
                f"`{self.tool_name}`'s mock uses artifacts outside a run: they live in the "
                "session's artifact service (run the case with run_eval)"
            )
        return self._tool_context


def as_part(value: ArtifactValue, mime_type: str | None = None) -> types.Part:
    """An artifact as ADK stores it: text and bytes become a `Part`.

    Text is saved the way ADK's own samples save it, a blob (``text/plain``
    unless `mime_type` says otherwise), so a mock that saves a string leaves
    what the real tool would. A `Part` is saved as it is.

    Raises:
        EvalSetupError: `value` is none of a `Part`, text or bytes.
    """
    if isinstance(value, types.Part):
        return value
    if isinstance(value, str):
        return types.Part.from_bytes(data=value.encode(), mime_type=mime_type or "text/plain")
    if isinstance(value, bytes | bytearray):
        return types.Part.from_bytes(
            data=bytes(value), mime_type=mime_type or "application/octet-stream"
        )
    raise EvalSetupError(
        f"an artifact is a google.genai types.Part, text or bytes, got {type(value).__name__}"
    )


def with_text(part: types.Part, filename: str) -> types.Part:
    """`part` with its ``text`` filled in when it is a text blob (for metrics and reports).

    The text is what ADK gives a model for the artifact (`as_safe_part_for_llm`):
    a ``text/*``, JSON, CSV or XML blob decoded; an image, audio, video or PDF
    keeps no text. The blob stays as it was saved.
    """
    if part.text is not None or part.inline_data is None:
        return part
    from google.adk.tools.load_artifacts_tool import as_safe_part_for_llm

    seen = as_safe_part_for_llm(part, filename)
    placeholders = (f"[Binary artifact: {filename},", f"[Artifact: {filename}, type:")
    if seen.text is None or seen.text.startswith(placeholders):
        return part  # inline media, or ADK's placeholder for a binary it cannot read
    return part.model_copy(update={"text": seen.text})
