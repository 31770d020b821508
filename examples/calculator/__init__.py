"""A calculator agent (ADK agent folder: `adk eval examples/calculator <evalset>` runs it)."""

from . import agent

__all__ = ["agent"]
