"""Which model plays a role: a Gemini name, a LiteLLM ``provider/model``, or a `BaseLlm`.

Names are resolved by ADK's own registry (`LLMRegistry`), so anything ADK can
run works here: ``"gemini-2.5-flash"``, ``"openai/gpt-4o-mini"`` (through
`LiteLlm`), or a model object such as ``LiteLlm(...)`` or `ScriptedLlm`.
"""

from __future__ import annotations

import os
from typing import TypeAlias

from google.adk.models.base_llm import BaseLlm
from google.adk.models.registry import LLMRegistry

from .errors import EvalSetupError

__all__ = [
    "DEFAULT_JUDGE_MODEL",
    "JUDGE_MODEL_ENV",
    "ModelSpec",
    "default_judge_model",
    "resolve_model",
]

ModelSpec: TypeAlias = str | BaseLlm

JUDGE_MODEL_ENV = "ADK_EVAL_JUDGE_MODEL"
"""Environment variable naming the judge model when a metric sets none."""

DEFAULT_JUDGE_MODEL = "gemini-2.5-flash"


def resolve_model(spec: ModelSpec) -> BaseLlm:
    """Returns a `BaseLlm` for a model object or name.

    Raises:
        EvalSetupError: If ADK knows no model by that name.
    """
    if isinstance(spec, BaseLlm):
        return spec
    if not isinstance(spec, str) or not spec:
        raise EvalSetupError(f"a model must be a model name or a BaseLlm, got {spec!r}")
    try:
        return LLMRegistry.new_llm(spec)
    except ValueError as error:
        raise EvalSetupError(
            f"unknown model {spec!r} ({error}). Use a Gemini name like 'gemini-2.5-flash', "
            "a LiteLLM name like 'openai/gpt-4o-mini', or a BaseLlm object"
        ) from None


def default_judge_model() -> ModelSpec:
    """The judge model: ``$ADK_EVAL_JUDGE_MODEL``, else `DEFAULT_JUDGE_MODEL`."""
    return os.environ.get(JUDGE_MODEL_ENV) or DEFAULT_JUDGE_MODEL
