"""ADK's `ModelConsultTool`: a tool whose body is a model call, to its advisor model.

ADK 2.11+ lets an agent consult a stronger "advisor" model mid-turn through a
tool. The call is a model call, not a side effect: it runs as ADK's own, and
its advisor is treated like an agent's model. The case's `models` reach it by
the tool's name (or ``"*"``), and an advisor that cannot run here (no key) ends
the run at the call, naming the tool, as an agent's model would.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from google.adk.models.base_llm import BaseLlm
from google.adk.tools.base_tool import BaseTool

from ._roles import LOCAL, missing_credentials, resolve_model

if TYPE_CHECKING:
    from ._roles import ModelSpec

__all__ = ["advisor_for", "advisor_problem", "consult_tool_class", "is_consult_tool"]


@functools.cache
def consult_tool_class() -> type[BaseTool] | None:
    """ADK's `ModelConsultTool` class (None in an ADK that has none)."""
    try:
        from google.adk.tools.model_consult import ModelConsultTool
    except ImportError:  # pragma: no cover - ADK before 2.11
        return None
    kind: type[BaseTool] = ModelConsultTool
    return kind


def is_consult_tool(tool: Any) -> bool:
    """Whether `tool` is a `ModelConsultTool` (or a subclass)."""
    kind = consult_tool_class()
    return kind is not None and isinstance(tool, kind)


def advisor_for(spec: ModelSpec) -> BaseLlm:
    """The advisor model for `spec`, built as ADK builds one (its key is checked at the call)."""
    if isinstance(spec, BaseLlm):
        return spec
    if spec == LOCAL:
        return resolve_model(spec)
    from google.adk.tools.model_consult._advisor import resolve_advisor_llm

    advisor: BaseLlm = resolve_advisor_llm(spec)
    return advisor


def advisor_problem(tool: BaseTool, *, case: str | None) -> str | None:
    """Why `tool`'s advisor model cannot run here (its key is missing), or None.

    The tool builds its advisor from a name when it is made, so ADK's own
    `Gemini` and `LiteLlm` objects are checked by their model name, unless
    they carry their own key, client or address (``client_kwargs``,
    ``base_url``, ``api_key``, ``api_base``); any other model object is trusted.
    """
    model = getattr(tool, "advisor_model", None)
    name = getattr(model, "model", None)
    if not isinstance(name, str) or type(model).__name__ not in ("Gemini", "LiteLlm"):
        return None
    own = dict(getattr(model, "_additional_args", None) or {})
    own.update(getattr(model, "client_kwargs", None) or {})
    if own.get("api_key") or own.get("api_base") or getattr(model, "base_url", None):
        return None
    if getattr(model, "client", None) is not None:
        return None
    problem = missing_credentials(name)
    if problem is None:
        return None
    return (
        (f"EvalCase `{case}`: " if case else "")
        + f"the advisor of tool `{tool.name}` cannot run: {problem}. Give it a model for "
        f'this case with EvalCase(models={{"{tool.name}": ...}}) (or models={{"*": ...}})'
    )
