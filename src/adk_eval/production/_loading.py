"""The objects ``adk-eval shadow`` names on its command line: the candidate agent and a model.

``--agent`` and ``--continue-with`` take ``LOCATION[:NAME]``, where LOCATION is a
Python file (``agents/support.py``) or a dotted module (``support.agent``):

* an agent: NAME, or else the module's ``root_agent`` (ADK's convention), then
  its ``app``; an ADK agent, an `App` or an ADK 2 `Workflow`;
* a model: a model name (``gemini-2.5-flash``, ``openai/gpt-4o-mini``, ``local``),
  or LOCATION:NAME of a `BaseLlm` object (a `ScriptedLlm` stands in for a person
  or a model in tests).
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from .._errors import DiscoveryError, EvalSetupError

__all__ = ["load_agent", "load_model"]

_AGENT_NAMES = ("root_agent", "app")


def _module(location: str) -> ModuleType | None:
    """The module at `location` (a file or a dotted name), None when it names neither."""
    from .._suites._discovery import import_file, import_module, looks_like_module

    path = Path(location)
    try:
        if path.is_file():
            return import_file(path)
        if path.suffix != ".py" and looks_like_module(location):
            return import_module(location)
    except DiscoveryError as error:
        raise EvalSetupError(str(error)) from None
    return None


def _is_agent(value: Any) -> bool:
    from google.adk.agents import BaseAgent
    from google.adk.apps import App
    from google.adk.workflow import Workflow

    return isinstance(value, BaseAgent | App | Workflow)


def load_agent(spec: str) -> Any:
    """The agent `spec` names (see the module doc).

    Raises:
        EvalSetupError: One line: a missing file or module, a missing NAME, or not an agent.
    """
    location, _, name = spec.rpartition(":") if ":" in spec else (spec, "", "")
    module = _module(location)
    if module is None:
        raise EvalSetupError(f"--agent {spec}: no such file or module `{location}`")
    names = (name,) if name else _AGENT_NAMES
    found = [n for n in names if hasattr(module, n)]
    if not found:
        wanted = f"`{name}`" if name else "`root_agent` or `app` (or give LOCATION:NAME)"
        raise EvalSetupError(f"--agent {spec}: {location} has no {wanted}")
    value = getattr(module, found[0])
    if not _is_agent(value):
        raise EvalSetupError(
            f"--agent {spec}: `{found[0]}` is a {type(value).__name__}, not an ADK agent, "
            "App or Workflow"
        )
    return value


def load_model(spec: str) -> Any:
    """The model `spec` names: a `BaseLlm` (see the module doc).

    Raises:
        EvalSetupError: One line: an unknown name, a missing key, or not a model.
    """
    from google.adk.models.base_llm import BaseLlm

    from ..models import resolve_model

    location, _, name = spec.rpartition(":")
    names_an_object = name and (Path(location).suffix == ".py" or "/" not in location)
    module = _module(location) if names_an_object else None
    if module is None:
        return resolve_model(spec)
    if not hasattr(module, name):
        raise EvalSetupError(f"--continue-with {spec}: {location} has no `{name}`")
    value = getattr(module, name)
    if not isinstance(value, BaseLlm):
        raise EvalSetupError(
            f"--continue-with {spec}: `{name}` is a {type(value).__name__}, not a model (BaseLlm)"
        )
    return value
