"""Replaying a run's tool answers as a plain mock (`ToolMock.from_recording`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .._errors import EvalSetupError
from .._result import EvalResult
from .._strict_json import load_file
from ._faults import call_key

if TYPE_CHECKING:
    from ._context import MockToolContext

__all__ = ["Replay"]


def _result_of(recording: Any) -> EvalResult:
    if isinstance(recording, EvalResult):
        return recording
    if isinstance(recording, str | Path):
        try:
            recording = load_file(Path(recording), "a recorded run")
        except EvalSetupError as error:
            raise EvalSetupError(
                f"ToolMock.from_recording: cannot read the recording ({error}); write one with "
                "json.dump(result.to_data(), file)"
            ) from None
    if isinstance(recording, Mapping):
        try:
            return EvalResult.from_data(recording)
        except (KeyError, TypeError, ValueError) as error:
            raise EvalSetupError(
                f"ToolMock.from_recording: not the data of an EvalResult ({error}); pass the "
                "result, result.to_data(), or a JSON file of it"
            ) from None
    raise EvalSetupError(
        "ToolMock.from_recording needs an EvalResult, its to_data(), or a JSON file of it; "
        f"got {type(recording).__name__}"
    )


@dataclass(frozen=True)
class Replay:
    """A tool's recorded answers by call args, in the order the run got them."""

    tool: str
    answers: Mapping[str, tuple[Any, ...]]

    @classmethod
    def of(cls, recording: Any, tool: str) -> Replay:
        """The answers `tool` gave in `recording` (see `ToolMock.from_recording`)."""
        result = _result_of(recording)
        answers: dict[str, list[Any]] = {}
        for call in result.trace.select("tool_call", nested=True):
            if call.name == tool and call.response is not None:
                answers.setdefault(call_key(call.args), []).append(call.response)
        if not answers:
            called = sorted({c.name for c in result.trace.select("tool_call", nested=True)})
            raise EvalSetupError(
                f"ToolMock.from_recording: run `{result.name}` has no answered call of "
                f"`{tool}`; it called: {', '.join(called) or 'no tool'}"
            )
        return cls(tool, {key: tuple(values) for key, values in answers.items()})

    def __call__(self, args: dict[str, Any], ctx: MockToolContext) -> Any:
        """The recorded answer to `args`: the n-th for the n-th such call, then the last."""
        key = call_key(args)
        recorded = self.answers.get(key)
        if recorded is None:
            known = "\n".join(f"  {known_key}" for known_key in self.answers)
            raise LookupError(
                f"the recording has no call of `{self.tool}` with {key}; it has:\n{known}"
            )
        return recorded[min(ctx.occurrence, len(recorded) - 1)]
