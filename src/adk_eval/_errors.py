"""Every error adk_eval raises on purpose, and its one warning.

Every error says what went wrong, with which value, and what to do about it.
The tree separates mistakes in how a case (or a suite, a metric, an option) is
written, found before anything runs, from failures during a run, and from the
files, databases and servers around them::

    AdkEvalError                 every error adk_eval raises on purpose
    ├── EvalSetupError           written in a way that cannot work; nothing ran
    │   ├── DiscoveryError       eval files or modules cannot be found or imported
    │   ├── CassetteMissError    a replayed model request differs from its recording
    │   └── CollectorError       the span collector cannot start as asked
    ├── EvalRunError             something failed while the conversation ran
    │   ├── EvalToolError        the agent called a tool the case does not allow
    │   ├── EvalUserAgentError   a user agent is missing or failed
    │   ├── EvalSandboxError     a strict sandbox refused what the run was about to do
    │   ├── SimulatedToolError   the model simulating a tool gave no valid answer
    │   ├── ProviderWaitError    a provider's quota stopped the run (wait budget, or billing)
    │   ├── ShadowDivergenceError a shadow replay's agent left the recorded conversation
    │   └── UserCodeExit         user code (a mock, a step, a metric) called sys.exit
    ├── MetricFailure            a metric raised; kept with its failing result, not raised
    ├── EvalSetFileError         an EvalSet file cannot be used; it was not modified
    ├── SpanFormatError          an OTLP export cannot be read as spans
    ├── RunStoreError            the runs database cannot be used
    ├── CacheBusyError           the model cache file stayed locked by other processes
    ├── ScriptExhaustedError     a ScriptedLlm was asked for a step past its script
    ├── ScriptedCallError        a ScriptedLlm step calls a tool as it is not declared
    ├── StudioError              a request the studio cannot carry out
    │   ├── StudioNotFoundError  no such target, session, request or tool call
    │   │   └── StudioGoneError  the request existed but will never be answered
    │   ├── StudioConflictError  not now: the session or request is in another phase
    │   └── StudioInvalidError   what was sent does not fit (`problems` says why)
    │       └── AnswerError      an answer does not fit the model request it answers
    └── StudioUnavailableError   the studio gave a `StudioPlugin` no usable answer

`EvalSetupError` is also a `ValueError` and a `TypeError`; `ScriptExhaustedError`,
`StudioUnavailableError`, `CacheBusyError` and `UserCodeExit` are also
`RuntimeError`s, and `ScriptedCallError`, `SpanFormatError` and `AnswerError`
`ValueError`s (`CollectorError` is one as an `EvalSetupError`), as they were
before the tree, so code that caught those keeps working; `EvalSandboxError` is a
`RuntimeError` (raised inside the run, where a network client passes it on
instead of retrying as it would an `OSError`). `run_eval` raises
`EvalSetupError` (a programming mistake) and records run errors in
`EvalResult.error` with the phase they happened in. Only the studio's server
turns `StudioError`s into HTTP statuses.

The one warning, `SharedModelWarning`, is a `UserWarning`.
"""

from __future__ import annotations

import json
from typing import Any, Literal

__all__ = [
    "AdkEvalError",
    "AnswerError",
    "CacheBusyError",
    "CassetteMissError",
    "CollectorError",
    "DiscoveryError",
    "EvalRunError",
    "EvalSandboxError",
    "EvalSetFileError",
    "EvalSetupError",
    "EvalToolError",
    "EvalUserAgentError",
    "MetricFailure",
    "ProviderWaitError",
    "RunStoreError",
    "ScriptExhaustedError",
    "ScriptedCallError",
    "ShadowDivergenceError",
    "SharedModelWarning",
    "SimulatedToolError",
    "SpanFormatError",
    "StudioConflictError",
    "StudioError",
    "StudioGoneError",
    "StudioInvalidError",
    "StudioNotFoundError",
    "StudioUnavailableError",
    "UserCodeExit",
    "format_args",
]


class AdkEvalError(Exception):
    """Base class of every error adk_eval raises on purpose."""


class EvalSetupError(AdkEvalError, ValueError, TypeError):
    """A case, suite, metric, model or option is written in a way that cannot work.

    Raised before anything runs. It is a `ValueError` and a `TypeError` too.
    """


class DiscoveryError(EvalSetupError):
    """Cases could not be found or loaded; the message is one line saying why."""


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
        hint: A likely cause, said right after the first line (a misspelt mock).
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
        hint: str | None = None,
    ) -> None:
        self.kind = kind
        self.hint = hint
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
        hint = f"{self.hint}\n\n" if self.hint else ""
        return (
            f"Tool `{name}` was called{by} during eval but no mock was provided.\n"
            "\n"
            f"{hint}"
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


class EvalSandboxError(EvalRunError, RuntimeError):
    """A strict sandbox refused something the run was about to do (`EvalCase.sandbox`)."""


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


class SimulatedToolError(EvalRunError):
    """The model simulating a tool gave no valid answer (after one retry) or failed."""


class ProviderWaitError(EvalRunError):
    """A run stopped waiting for a provider's quota (its wait budget, or a quota never cleared).

    It waited as long as it may (`ModelCalls.max_wait`), or the provider's quota is
    one waiting never clears (OpenAI's ``insufficient_quota``: billing).
    """


class CassetteMissError(EvalSetupError):
    """A replayed model request differs from its cassette's recording (one line says where)."""


class CollectorError(EvalSetupError):
    """The span collector cannot start as asked (its output file); one line.

    A refused address is the `EvalSetupError` every server of adk-eval raises for
    a host that is not loopback (`adk_eval._sandbox._loopback.refuse_remote`).
    """


class UserCodeExit(EvalRunError, RuntimeError):
    """User code (a mock, a step, a metric) called ``sys.exit``: an error of that code."""


class MetricFailure(AdkEvalError):
    """A metric raised instead of returning a `MetricResult` (kept, not raised).

    Attributes:
        metric_name: The metric's name.
        error: What it raised.
    """

    def __init__(self, metric_name: str, error: Exception) -> None:
        super().__init__(f"metric `{metric_name}` raised {type(error).__name__}: {error}")
        self.metric_name = metric_name
        self.error = error


class ShadowDivergenceError(EvalRunError):
    """A shadow replay's agent called a recorded tool with arguments the recording never answered.

    The replay stops there (`adk_eval.production.shadow_session` without
    ``continue_with``): the recording cannot say what the tool would have answered.
    """


class EvalSetFileError(AdkEvalError):
    """An EvalSet file is missing, unreadable or invalid; it was not modified."""


class SpanFormatError(AdkEvalError, ValueError):
    """An OTLP export that cannot be read as spans; the message says where and why."""


class RunStoreError(AdkEvalError):
    """The runs database cannot be used (not a database, too new, no such run)."""


class CacheBusyError(AdkEvalError, RuntimeError):
    """The model cache file stayed locked by other processes longer than the busy timeout.

    Not an `EvalSetupError`: nothing is wrong with the case or the file. A run
    takes it as a miss (or an answer not kept); ``adk-eval cache`` prints it.
    """


class ScriptExhaustedError(AdkEvalError, RuntimeError):
    """A `ScriptedLlm` was asked for a step past the end of its script."""


class ScriptedCallError(AdkEvalError, ValueError):
    """A `ScriptedLlm` step calls a tool the agent lacks, or with arguments it does not declare."""


class StudioError(AdkEvalError):
    """A request the studio cannot carry out (one of the subclasses says which kind).

    Attributes:
        problems: Every problem found with what was sent, as readable messages.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


class StudioNotFoundError(StudioError):
    """No such target, session, request or running tool call."""


class StudioGoneError(StudioNotFoundError):
    """The request existed but will never be answered (cancelled or ended)."""


class StudioConflictError(StudioError):
    """Not now: the session or request is in another phase (busy, answered, unfinished)."""


class StudioInvalidError(StudioError):
    """What was sent does not fit: a bad role, answer, message or file."""


class AnswerError(StudioInvalidError, ValueError):
    """An answer the model request cannot accept; `problems` says why, one problem a field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems), problems)


class StudioUnavailableError(AdkEvalError, RuntimeError):
    """The studio gave no usable answer; the only error `StudioPlugin` raises.

    It could not be reached, refused the request, gave no answer within the
    plugin's `timeout`, or replied with something that is not the studio protocol.
    """


class SharedModelWarning(UserWarning):
    """Two eval files set the model of one shared agent object: one of them loses."""
