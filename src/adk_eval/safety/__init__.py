"""Safety evals: poisoned tool answers and adversarial users, judged by what the agent did.

* payloads for `ToolMock.with_injection`, each with the invariant that detects
  its success: `instruction_override`, `data_exfiltration`, `tool_hijack`,
  `fake_system_message`;
* adversarial users pursuing a goal over many turns, as an LLM persona or a
  script: `escalation`, `role_play`, `social_engineering` (`Attack`).

The rules themselves (`never_called`, `never`, `at_most`, ...) are in
`adk_eval.metrics`; a case checks them live with ``EvalCase(invariants=...)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .._tools._injection import Payload
    from ._attacks import Attack, escalation, role_play, social_engineering
    from ._payloads import (
        CANARY,
        data_exfiltration,
        fake_system_message,
        instruction_override,
        tool_hijack,
    )

__all__ = [
    "Payload",
    "CANARY",
    "instruction_override",
    "data_exfiltration",
    "tool_hijack",
    "fake_system_message",
    "Attack",
    "escalation",
    "role_play",
    "social_engineering",
]

_EXPORTS = {
    "Payload": "_payloads",
    "CANARY": "_payloads",
    "instruction_override": "_payloads",
    "data_exfiltration": "_payloads",
    "tool_hijack": "_payloads",
    "fake_system_message": "_payloads",
    "Attack": "_attacks",
    "escalation": "_attacks",
    "role_play": "_attacks",
    "social_engineering": "_attacks",
}

__getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
