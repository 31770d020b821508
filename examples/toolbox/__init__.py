"""A toolbox agent for the studio (an ADK agent folder: `adk eval` works on it)."""

from . import agent

__all__ = ["agent"]
