"""An ADK agent folder for `adk eval` in bench/versus_adk_eval.py."""

from . import agent  # noqa: F401
