"""Which model plays each role, by name or object: resolved, and its key checked without network.

The roles and where they are configured are in `adk_eval.models`' docstring.
`configured_model` and `model_setting` read a role's variable; `resolve_model`
turns a name into a model object through ADK's own registry (``"local"``: the
embedded `LocalLlm`); `missing_credentials` and `provider_statuses` say what
a provider lacks here, naming the variable to set.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from ..._errors import EvalSetupError
from .._gateway._gate import current_gate
from ._vertex import check_vertex, uses_vertex, vertex_setting

if TYPE_CHECKING:
    from google.adk.models.base_llm import BaseLlm

    ModelSpec: TypeAlias = str | BaseLlm

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "JUDGE_MODEL_ENV",
    "LOCAL",
    "ROLE_ENV",
    "ModelRole",
    "ProviderStatus",
    "configured_model",
    "default_judge_model",
    "missing_credentials",
    "model_setting",
    "provider_statuses",
    "resolve_model",
]

ModelRole: TypeAlias = Literal["model", "user_model", "judge_model"]

ROLE_ENV: Mapping[ModelRole, str] = {
    "model": "ADK_EVAL_MODEL",
    "user_model": "ADK_EVAL_USER_MODEL",
    "judge_model": "ADK_EVAL_JUDGE_MODEL",
}
"""The environment variable of each role."""

JUDGE_MODEL_ENV = ROLE_ENV["judge_model"]
"""Environment variable naming the judge model when a metric sets none."""

DEFAULT_JUDGE_MODEL = "gemini-2.5-flash"

LOCAL = "local"

_GEMINI_KEYS = ("GOOGLE_API_KEY", "GEMINI_API_KEY")
# LiteLLM providers that run on your own machine and need no key.
_KEYLESS = {"ollama", "ollama_chat", "hosted_vllm", "lm_studio", "llamafile", "local"}


def configured_model(role: ModelRole, default: ModelSpec | None = None) -> ModelSpec | None:
    """The model configured for `role`, else `default`.

    Reads the role's variable, then (for ``user_model`` and ``judge_model``)
    ``ADK_EVAL_MODEL``. ``"local"`` comes back as a ready `LocalLlm`, so it can
    go straight into ``LlmAgent(model=...)``.
    """
    setting = model_setting(role)
    if setting is None:
        return default
    value = setting[0]
    return resolve_model(value) if value == LOCAL else value


def model_setting(role: ModelRole) -> tuple[str, str] | None:
    """The model name configured for `role` and the variable it came from (None: unset).

    The role's own variable wins; ``user_model`` and ``judge_model`` fall back
    to ``ADK_EVAL_MODEL``.
    """
    if role not in ROLE_ENV:
        raise EvalSetupError(f"unknown model role {role!r}; use one of {sorted(ROLE_ENV)}")
    fallback = (ROLE_ENV["model"],) if role != "model" else ()
    for env in (ROLE_ENV[role], *fallback):
        value = os.environ.get(env, "").strip()
        if value:
            return value, env
    return None


def default_judge_model() -> ModelSpec:
    """The judge model: the configured ``judge_model``, else `DEFAULT_JUDGE_MODEL`."""
    configured = configured_model("judge_model")
    return configured if configured is not None else DEFAULT_JUDGE_MODEL


def resolve_model(spec: ModelSpec) -> BaseLlm:
    """Returns a `BaseLlm` for a model object or name.

    Raises:
        EvalSetupError: If the name is unknown, or its provider's key is not
            set (the message names the variable).
    """
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.registry import LLMRegistry

    if isinstance(spec, BaseLlm):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise EvalSetupError(f"a model must be a model name or a BaseLlm, got {spec!r}")
    problem = missing_credentials(spec)
    if problem is not None:
        raise EvalSetupError(problem)
    if spec == LOCAL:
        from ._local import LocalLlm

        return LocalLlm()
    try:
        return LLMRegistry.new_llm(spec)
    except ValueError as error:
        raise EvalSetupError(
            f"unknown model {spec!r} ({error}). Use a Gemini name like 'gemini-2.5-flash', "
            "a LiteLLM name like 'openai/gpt-4o-mini', 'local', or a BaseLlm object"
        ) from None


def _is_gemini_name(name: str) -> bool:
    return re.match(r"^(projects/.+/)?(models/)?gemini-", name) is not None


def missing_credentials(spec: ModelSpec) -> str | None:
    """One line naming the variable to set when `spec`'s provider has no key; else None.

    Model objects are trusted (they may carry their own key or base URL);
    ``"local"`` reports what is not installed. A Gemini name on Vertex AI
    (``GOOGLE_GENAI_USE_ENTERPRISE`` or ``GOOGLE_GENAI_USE_VERTEXAI``) needs
    credentials and a project, found without network (see `_vertex`). While a
    cassette replays the run's model calls and a miss is an error
    (``ModelCalls(replay=..., on_miss="error")``, the settings of the current
    run's gate), no call reaches a provider, so no key is needed and none is
    asked for.
    """
    if not isinstance(spec, str):
        return None
    if spec != LOCAL and current_gate().settings.offline:
        return None
    if spec == LOCAL:
        from ._local import local_model_status

        return local_model_status()
    if _is_gemini_name(spec):
        if uses_vertex(spec):
            check = check_vertex()
            setting = vertex_setting()
            on = f"{setting} is on" if setting else "a projects/ name"
            return None if check.ready else f"model {spec!r} runs on Vertex AI ({on}): {check.line}"
        if any(os.environ.get(key) for key in _GEMINI_KEYS):
            return None
        return (
            f"model {spec!r} needs a Gemini API key: set GOOGLE_API_KEY (or GEMINI_API_KEY), "
            "or GOOGLE_GENAI_USE_VERTEXAI=true for Vertex AI, or choose another model"
        )
    provider = spec.split("/", 1)[0] if "/" in spec else ""
    if not provider or provider in _KEYLESS:
        return None
    import litellm

    missing = litellm.validate_environment(spec).get("missing_keys") or []
    if not missing:
        return None
    return f"model {spec!r} needs {' and '.join(missing)}: set it, or choose another model"


@dataclass(frozen=True)
class ProviderStatus:
    """Whether a provider can be used here (never the secret itself).

    Attributes:
        name: Provider name.
        configured: Whether its credentials (or install) are present.
        detail: Which variable is set or missing, or what to install.
    """

    name: str
    configured: bool
    detail: str


def _key_status(name: str, keys: tuple[str, ...], extra: str = "") -> ProviderStatus:
    present = [key for key in keys if os.environ.get(key)]
    if present:
        return ProviderStatus(name, True, f"{present[0]} is set{extra}")
    return ProviderStatus(name, False, f"set {' or '.join(keys)}")


def provider_statuses() -> list[ProviderStatus]:
    """The providers a user can pick, and whether each is ready here."""
    from ._local import local_model_status

    setting = vertex_setting()
    if setting is not None:
        check = check_vertex()
        gemini = ProviderStatus("gemini", check.ready, f"Vertex AI ({setting}): {check.line}")
    else:
        gemini = _key_status("gemini", _GEMINI_KEYS)
    base = os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL")
    local = local_model_status()
    return [
        gemini,
        _key_status("openai", ("OPENAI_API_KEY",), f" (base {base})" if base else ""),
        _key_status("anthropic", ("ANTHROPIC_API_KEY",)),
        ProviderStatus(
            "local",
            local is None,
            "SmolLM2-135M on llama.cpp, installed" if local is None else local,
        ),
    ]
