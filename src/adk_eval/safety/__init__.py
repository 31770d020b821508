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
    from .._tools._injection import Payload as Payload
    from ._attacks import Attack as Attack
    from ._attacks import escalation as escalation
    from ._attacks import role_play as role_play
    from ._attacks import social_engineering as social_engineering
    from ._payloads import CANARY as CANARY
    from ._payloads import data_exfiltration as data_exfiltration
    from ._payloads import fake_system_message as fake_system_message
    from ._payloads import instruction_override as instruction_override
    from ._payloads import tool_hijack as tool_hijack

_EXPORTS = {
    "Payload": ".._tools._injection",
    "CANARY": "._payloads",
    "instruction_override": "._payloads",
    "data_exfiltration": "._payloads",
    "tool_hijack": "._payloads",
    "fake_system_message": "._payloads",
    "Attack": "._attacks",
    "escalation": "._attacks",
    "role_play": "._attacks",
    "social_engineering": "._attacks",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
