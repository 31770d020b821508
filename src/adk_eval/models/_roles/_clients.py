"""Model client libraries imported ahead of the first model call, where the cases will need them.

ADK's `LiteLlm` imports litellm at its first call (seconds: it brings the OpenAI
SDK and its own types). A run pays that once anyway; importing it with the eval
files instead puts it where start-up is paid: before worker processes are forked
(so each has it), before a worker says it is ready (so work is not handed to a
worker that would first spend seconds importing), and under the collector's
freeze of what start-up made.
"""

from __future__ import annotations

import importlib
import os
import sys

__all__ = ["warm_clients"]


def warm_clients() -> list[str]:
    """Imports the model clients the loaded eval code uses; returns those it imported.

    litellm is imported when ADK's `LiteLlm` module is loaded (an eval file or a
    model of a role uses it, ``local`` included), the way ADK imports it: with
    ``LITELLM_MODE=PRODUCTION`` unless set, so litellm loads no ``.env`` file.
    """
    if "google.adk.models.lite_llm" not in sys.modules or "litellm" in sys.modules:
        return []
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    importlib.import_module("litellm")
    return ["litellm"]
