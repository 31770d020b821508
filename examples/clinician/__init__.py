"""A triage clinician agent (ADK agent folder: `adk web examples` / `adk eval` work on it)."""

from . import agent

__all__ = ["agent"]
