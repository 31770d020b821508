"""The studio: a person plays an ADK agent's model (or a simulated user) in the browser.

* `SimulatedAgentConfig`: an agent to play and where its goldens go.
* `StudioPlugin`: remote mode, for your own ADK app; `StudioUnavailableError`, the
  one error it raises, which ADK wraps in a ``RuntimeError`` (`unwrap_studio_errors`
  raises it as itself).
* ``adk-eval studio TARGET`` starts it (see ``docs/studio.md``).

Names are imported on first use: the server's dependencies load only when needed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_names

if TYPE_CHECKING:
    from .._errors import StudioUnavailableError as StudioUnavailableError
    from ._config import SimulatedAgentConfig as SimulatedAgentConfig
    from ._remote import StudioPlugin as StudioPlugin
    from ._remote import unwrap_studio_errors as unwrap_studio_errors

_EXPORTS = {
    "SimulatedAgentConfig": "._config",
    "StudioPlugin": "._remote",
    "StudioUnavailableError": ".._errors",
    "unwrap_studio_errors": "._remote",
}

__all__, __getattr__, __dir__ = lazy_names(__name__, _EXPORTS)
