"""Which model plays each role: the system agent, the user agents, the judge.

A model is a Gemini name (``"gemini-2.5-flash"``), any LiteLLM
``provider/model`` (``"openai/gpt-4o-mini"``, ``"anthropic/..."``, ``"ollama/..."``),
``"local"`` (the embedded SmolLM2, see docs/models.md) or a `BaseLlm`
object. Names are resolved by ADK's own registry, so anything ADK runs works.

Roles and where they are configured, first match wins:

====================  ============================  ==========================
role                  environment variable          CLI flag
====================  ============================  ==========================
``model``             ``ADK_EVAL_MODEL``            ``--model``
``user_model``        ``ADK_EVAL_USER_MODEL``       ``--user-model``
``judge_model``       ``ADK_EVAL_JUDGE_MODEL``      ``--judge-model``
====================  ============================  ==========================

``user_model`` and ``judge_model`` fall back to ``model``. In code, agents ask
`configured_model` (``LlmAgent(model=configured_model("model", default=...))``);
``llm_judge`` uses ``judge_model`` when it names no model. The CLI flags set the
variables for the run, and ``--model`` also becomes ADK's default model, the
fallback of every `LlmAgent` that names none.

Every model call of a run goes through one gateway, whatever its role: paced
within the providers' quotas (`RateLimit`, learned from 429s otherwise),
retried after rate limits and server errors, answered from a cache or a
cassette when asked (`ModelCalls`, passed to ``run_eval_suite``); a run's
`ProviderStats` say what it met.

The rooms, from the top down (each imports only from those below it):

* `_roles`, which model plays each role: `_roles` (the names here: roles
  resolved, keys checked), `_local` (the embedded ``"local"`` model), `_vertex`
  (Vertex AI credentials and project, checked without network), `_clients`
  (model client libraries imported ahead), `_consult` (the advisor of ADK's
  ``ModelConsultTool``), `_summarizer` (the summarizer of ADK's event
  compaction, on a case's model);
* `_gateway`, every model call of a run through one gate: `_settings`
  (`ModelCalls`), `_gate` (`Gateway`: a suite's settings and pacer; `RunGate`:
  a run's), `_stats` (`ProviderStats`), `_plugin` (`GatewayPlugin`, where an
  agent's calls enter, through a seam ADK documents), `_pipeline` (the call:
  cassette, cache, provider), `_provider` (the provider's answer, paced and
  retried by the gateway alone), `_ask` (one answer, as the judges and
  simulated tools ask), `_requests` (a request as data), `_answers`, `_cache`,
  `_cache_file` and `_cassette` (answers kept), `_usage` (tokens and money);
* `_pacing`, when a call may go: `_limits` (`RateLimit`), `_failures` (what a
  failed call says), `_pacer` (`Pacer`, `LocalPacer`), `_wire`, `_shared` and
  `_ray` (one pacer for a suite's processes or Ray tasks).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._errors import CassetteMissError, ProviderWaitError
from ._gateway._settings import ModelCalls
from ._gateway._stats import ProviderStats
from ._pacing._limits import RateLimit
from ._roles._roles import (
    DEFAULT_JUDGE_MODEL,
    JUDGE_MODEL_ENV,
    ROLE_ENV,
    ModelRole,
    ProviderStatus,
    configured_model,
    default_judge_model,
    missing_credentials,
    model_setting,
    provider_statuses,
    resolve_model,
)

if TYPE_CHECKING:
    from ._roles._roles import ModelSpec as ModelSpec

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "JUDGE_MODEL_ENV",
    "CassetteMissError",
    "ModelCalls",
    "ModelRole",
    "ModelSpec",
    "ProviderStats",
    "ProviderStatus",
    "ProviderWaitError",
    "ROLE_ENV",
    "RateLimit",
    "configured_model",
    "default_judge_model",
    "model_setting",
    "missing_credentials",
    "provider_statuses",
    "resolve_model",
]


def __getattr__(name: str) -> Any:
    # `ModelSpec` names ADK's `BaseLlm`: built on first use, so that importing this
    # module (the CLI does, to print its help) does not import ADK.
    if name == "ModelSpec":
        from google.adk.models.base_llm import BaseLlm

        spec = str | BaseLlm
        globals()["ModelSpec"] = spec
        return spec
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
