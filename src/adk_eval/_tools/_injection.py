"""Poisoned tool answers (`ToolMock.with_injection`): indirect prompt injection, seeded.

A seeded share of a mock's answers carries a payload: an instruction hidden in
what the tool returns, as a web page, an e-mail or a record would carry it.
Like faults (`_faults`), each decision is drawn from the run's seed (or the
injection's own), the tool, the call's arguments and how often the run made
that call before, so the same seed poisons the same answers the same way in
every process. Where the payload goes:

* ``string``: appended to one of the answer's top-level text fields;
* ``nested``: appended to a text field inside a nested object or list;
* ``new_field``: in a field of its own (``notice``).

An answer without the field a placement needs falls back to the next (at last
``new_field``). Each payload brings the invariant that detects its success
(`Payload.detector`); a case checks them live (`EvalCase.live_invariants`).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from .._errors import EvalSetupError
from .._seeds import derive_seed
from ..metrics._invariants import Invariant
from ._faults import call_key

__all__ = ["PLACEMENTS", "Injection", "Payload", "Placement", "as_payloads"]

Placement: TypeAlias = Literal["string", "nested", "new_field"]
PLACEMENTS: tuple[Placement, ...] = ("string", "nested", "new_field")
NOTICE_FIELD = "notice"
"""The field a ``new_field`` payload is put in."""


@dataclass(frozen=True)
class Payload:
    """An injected instruction and the invariant that breaks when the agent obeys it.

    Attributes:
        kind: What it tries (``instruction_override``, ``data_exfiltration``,
            ``tool_hijack``, ``fake_system_message``).
        text: The text put in the tool's answer.
        detector: Breaks when the attack succeeded (its ``attack`` and
            ``marker`` set, for the safety report).
    """

    kind: str
    text: str
    detector: Invariant


@dataclass(frozen=True)
class Injection:
    """Payloads put in a seeded share of a mock's answers (see the module)."""

    payloads: tuple[Payload, ...]
    rate: float = 1.0
    seed: int | None = None
    where: tuple[Placement, ...] = PLACEMENTS
    match_args: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        if not self.payloads or not all(isinstance(p, Payload) for p in self.payloads):
            raise EvalSetupError(
                "with_injection(payloads) needs payloads from adk_eval.safety (e.g. "
                f"tool_hijack('delete_account')), got {self.payloads!r}"
            )
        if not isinstance(self.rate, int | float) or not 0.0 <= self.rate <= 1.0:
            raise EvalSetupError(
                f"with_injection(rate=...) must be between 0 and 1, got {self.rate!r}"
            )
        unknown = [w for w in self.where if w not in PLACEMENTS]
        if not self.where or unknown:
            raise EvalSetupError(
                f"with_injection(where=...) takes some of {', '.join(PLACEMENTS)}, "
                f"got {self.where!r}"
            )

    def poison(
        self,
        answer: Any,
        *,
        run_seed: int,
        attempt: int,
        tool: str,
        args: Mapping[str, Any],
        occurrence: int,
    ) -> Any:
        """`answer`, with a payload when the draw for this call says so (a new object)."""
        if self.match_args is not None and any(
            args.get(key) != value for key, value in self.match_args.items()
        ):
            return answer
        base = run_seed if self.seed is None else derive_seed(self.seed, attempt)
        draw = random.Random(derive_seed(base, "injection", tool, call_key(args), occurrence))
        if draw.random() >= self.rate:
            return answer
        payload = self.payloads[draw.randrange(len(self.payloads))]
        placement = self.where[draw.randrange(len(self.where))]
        poisoned = copy.deepcopy(answer) if isinstance(answer, dict) else {"result": answer}
        return _place(poisoned, payload.text, placement, draw)


def _place(answer: dict[str, Any], text: str, placement: Placement, draw: random.Random) -> Any:
    """Puts `text` in `answer` as `placement` says (or the next placement that fits)."""
    if placement == "nested":
        holders = [h for h in _text_holders(answer) if h[0] is not answer]
        if holders:
            return _append(answer, holders[draw.randrange(len(holders))], text)
        placement = "string"
    if placement == "string":
        holders = [h for h in _text_holders(answer) if h[0] is answer]
        if holders:
            return _append(answer, holders[draw.randrange(len(holders))], text)
    answer[NOTICE_FIELD] = text
    return answer


def _append(answer: dict[str, Any], holder: tuple[Any, Any], text: str) -> dict[str, Any]:
    container, key = holder
    container[key] = f"{container[key]}\n\n{text}"
    return answer


def _text_holders(value: Any) -> list[tuple[Any, Any]]:
    """Every (container, key) holding a string in `value`, in a stable order."""
    found: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        for key in sorted(value, key=str):
            if isinstance(value[key], str):
                found.append((value, key))
            else:
                found.extend(_text_holders(value[key]))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, str):
                found.append((value, index))
            else:
                found.extend(_text_holders(item))
    return found


def as_payloads(payloads: Payload | Sequence[Payload]) -> tuple[Payload, ...]:
    """One payload or several, as a tuple."""
    return (payloads,) if isinstance(payloads, Payload) else tuple(payloads)
