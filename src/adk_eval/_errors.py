"""Errors raised by adk_eval.

Every error says what went wrong, with which value, and what to do about it.
The hierarchy separates mistakes in how a case is written (found before anything
runs) from failures during a run::

    AdkEvalError
    ├── EvalSetupError        the case is misconfigured; nothing ran
    └── EvalRunError          something failed while the conversation ran
        ├── EvalToolError         the agent called a tool the case does not allow
        └── EvalUserAgentError    a user agent is missing or failed

`run_eval` raises `EvalSetupError` directly (it is a programming mistake) and
records run errors in `EvalResult.error` with the phase they happened in.
"""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = [
    "AdkEvalError",
    "EvalRunError",
    "EvalSetupError",
    "EvalToolError",
    "EvalUserAgentError",
]


class AdkEvalError(Exception):
    """Base class of every error adk_eval raises on purpose."""


class EvalSetupError(AdkEvalError, ValueError):
    """An `EvalCase` (or an `EvalRunner`) is configured in a way that cannot work."""


class EvalRunError(AdkEvalError):
    """A failure while the simulated conversation was running."""


def format_args(args: Any) -> str:
    """Renders tool arguments the way error messages show them (indented JSON)."""
    try:
        text = json.dumps(args, indent=2, sort_keys=True, default=repr)
    except (TypeError, ValueError):
        text = repr(args)
    return "\n".join("  " + line for line in text.splitlines())


class EvalToolError(EvalRunError):
    """The system agent called a tool that has neither a mock nor a passthrough.

    Attributes:
        tool_name: Name of the tool the model called.
        tool_args: Arguments of the call.
        caller: Where the calling agent sits (``sub-agent `billing` of `root```).
        module: The module the tool's function comes from, when it has one.
        kind: ``"node"`` for a workflow function node that has no mock,
            ``"agent"`` for an agent that would run code itself (a code executor).
    """

    def __init__(
        self,
        tool_name: str,
        args: Any,
        *,
        detail: str | None = None,
        caller: str | None = None,
        module: str | None = None,
        kind: Literal["tool", "node", "agent"] = "tool",
    ) -> None:
        self.kind = kind
        self.tool_name = tool_name
        self.tool_args = args
        self.detail = detail
        self.caller = caller
        self.module = module
        super().__init__(self._message())

    @property
    def summary(self) -> str:
        """The first line of the message."""
        return str(self).splitlines()[0]

    def _message(self) -> str:
        if self.detail is not None:
            if self.kind == "agent":  # a construct of the agent, not a call
                return self.detail
            called = "Tool was called with args" if self.kind == "tool" else "Node arguments"
            return f"{self.detail}\n\n{called}:\n{format_args(self.tool_args)}"
        name = self.tool_name
        by = f" by {self.caller}" if self.caller else ""
        if self.module:
            provide = f'  from {self.module} import {name}\n  tool_mocks={{"{name}": {name}}}\n'
        else:
            provide = f'  tool_mocks={{"{name}": <the agent\'s own `{name}` tool object>}}\n'
        return (
            f"Tool `{name}` was called{by} during eval but no mock was provided.\n"
            "\n"
            "Add a mock:\n"
            "  tool_mocks={\n"
            f'      "{name}": ToolMock(lambda args, ctx: {{"result": ...}}),\n'
            "  }\n"
            "\n"
            "Or if this tool has no side effects, provide the actual tool:\n"
            f"{provide}"
            "\n"
            f"Tool was called with args:\n{format_args(self.tool_args)}"
        )


class EvalUserAgentError(EvalRunError):
    """A tool yielded without a user agent to answer it, or a user agent failed.

    Attributes:
        tool_name: The yielding tool, or None for a loop yield.
        tool_args: Arguments of the yielding call, if any.
    """

    def __init__(
        self,
        message: str | None = None,
        *,
        tool_name: str | None = None,
        args: Any = None,
    ) -> None:
        self.tool_name = tool_name
        self.tool_args = args
        if message is None:
            message = self._missing_agent_message()
        super().__init__(message)

    def _missing_agent_message(self) -> str:
        name = self.tool_name
        return (
            f"Tool `{name}` yielded but no user agent was provided.\n"
            "\n"
            "Add a tool yield agent:\n"
            "  user_agents=UserAgents(\n"
            f'      tools={{"{name}": LlmAgent(...) or ScriptedUserAgent(...)}},\n'
            "  )\n"
            "\n"
            f"Yield occurred with args:\n{format_args(self.tool_args)}"
        )
