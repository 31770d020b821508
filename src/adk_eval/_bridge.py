"""The bridge between the main session and the user-agent session.

::

    main session                 bridge                      user-agent session
    yield (final text or   ->  format_prompt()   ->   prompt (a user message)
    pending tool call)                                 user agent runs; its tools may
                                                       return with_state_change(...)
    state changes applied  <-  collected from tool results
    next user message or   <-  format_response() <-   output (structured, else text)
    function response

Defaults: the loop prompt is the agent's last text; a tool prompt is
``Tool: {name}`` and, on the next line, ``Args: {json}``; the response is the
user agent's structured output if it has one, else its last text. A tool
response that is not a dict is wrapped as ``{"result": value}`` so ADK accepts it.
"""

from __future__ import annotations

import contextvars
import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from google.adk.plugins.base_plugin import BasePlugin
from google.adk.sessions import Session
from google.adk.tools.base_tool import BaseTool
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from ._callables import call_user
from ._errors import EvalSetupError, EvalUserAgentError
from ._session_service import detached
from ._state import flatten_changes
from ._turns import PendingCall

__all__ = [
    "Bridge",
    "StateChangeCollector",
    "StateChangeResult",
    "YieldInfo",
    "as_message",
    "bridge_error",
    "default_format_prompt",
    "default_format_response",
    "with_state_change",
]

YieldType: TypeAlias = Literal["loop", "tool"]

OPENING_PROMPT = "Start the conversation."
"""Prompt the loop user agent gets when it opens a case that has no `first_message`."""


@dataclass(frozen=True)
class YieldInfo:
    """Why the system stopped and is waiting for a user agent.

    Attributes:
        type: ``"loop"`` (the agent ended its turn with text) or ``"tool"`` (a
            long-running call waits for an answer).
        invocation_id: The ADK invocation that yielded.
        agent_name: The agent that yielded (for a loop yield, the last speaker).
        awaiting_input: True for loop yields: the agent waits for the user.
        text: Loop yields: the agent's final text (None when the user agent opens
            the conversation).
        tool_name: Tool yields: the yielding tool.
        call_id: Tool yields: the function call id the answer must carry.
        args: Tool yields: the call's arguments.
    """

    type: YieldType
    invocation_id: str
    agent_name: str | None = None
    awaiting_input: bool = False
    text: str | None = None
    tool_name: str | None = None
    call_id: str | None = None
    args: dict[str, Any] | None = None

    @classmethod
    def of_call(cls, call: PendingCall) -> YieldInfo:
        """The tool yield of a pending long-running call."""
        return cls(
            type="tool",
            invocation_id=call.invocation_id,
            agent_name=call.author,
            tool_name=call.name,
            call_id=call.call_id,
            args=call.args,
        )


FormatPrompt: TypeAlias = Callable[[Session, YieldInfo], str | Awaitable[str]]
FormatResponse: TypeAlias = Callable[[Any, Session, YieldInfo], Any]


def default_format_prompt(main_session: Session, yield_info: YieldInfo) -> str:
    """The default prompt: the agent's last text, or the tool call."""
    return default_prompt(yield_info)


def default_prompt(yield_info: YieldInfo) -> str:
    """`default_format_prompt` without the session it does not need."""
    if yield_info.type == "tool":
        args = json.dumps(yield_info.args or {}, ensure_ascii=False, default=repr)
        return f"Tool: {yield_info.tool_name}\nArgs: {args}"
    if yield_info.text is None:
        return OPENING_PROMPT
    return yield_info.text


def default_format_response(output: Any, user_session: Session, yield_info: YieldInfo) -> Any:
    """The default response: the user agent's output as is."""
    return output


@dataclass(frozen=True)
class Bridge:
    """Custom transforms between the sessions; each is optional and may be async.

    Attributes:
        format_prompt: ``(main_session, yield_info) -> str``: what the user agent is told.
        format_response: ``(output, user_session, yield_info) -> answer``: what the
            system gets back (text for loop yields; a dict, or anything that is
            then wrapped, for tool yields).
    """

    format_prompt: FormatPrompt | None = None
    format_response: FormatResponse | None = None

    async def prompt(
        self, main_session: Callable[[], Awaitable[Session]], yield_info: YieldInfo
    ) -> str:
        """Runs `format_prompt` (or the default).

        `main_session` fetches the main session; it is called only for a custom
        `format_prompt`, which gets a deep copy made then (`detached`): it can
        read everything and change nothing of the conversation.

        Raises:
            EvalUserAgentError: What the custom `format_prompt` raised, or its
                answer that is not a str.
        """
        if self.format_prompt is None:
            return default_prompt(yield_info)
        try:
            session = detached(await main_session())
            prompt = await call_user(self.format_prompt, session, yield_info)
            if not isinstance(prompt, str):
                raise EvalSetupError(
                    "Bridge.format_prompt must return a str, got "
                    f"{type(prompt).__name__}: {prompt!r}"
                )
        except Exception as error:
            raise bridge_error(error) from error
        return prompt

    async def response(
        self, output: Any, user_session: Callable[[], Awaitable[Session]], yield_info: YieldInfo
    ) -> Any:
        """Runs `format_response` (or the default); `user_session` as in `prompt`.

        Raises:
            EvalUserAgentError: What the custom `format_response` raised.
        """
        if self.format_response is None:
            return output
        try:
            session = detached(await user_session())
            return await call_user(self.format_response, output, session, yield_info)
        except Exception as error:
            raise bridge_error(error) from error


def bridge_error(error: BaseException) -> EvalUserAgentError:
    """`error`, raised by the bridge, as the user agents' error it is."""
    if isinstance(error, EvalUserAgentError):
        return error
    return EvalUserAgentError(f"the bridge raised {type(error).__name__}: {error}")


def as_message(response: Any) -> str | types.Content:
    """A user agent's answer to a loop yield as the system's next message."""
    if isinstance(response, str | types.Content):
        return response
    return json.dumps(response, ensure_ascii=False, default=repr)


@dataclass(frozen=True)
class StateChangeResult:
    """A user-agent tool result carrying state changes for the main session.

    Built by `with_state_change`; the user agent's model sees only `result`.
    """

    result: Any
    changes: Mapping[str, Mapping[str, Any]]


def with_state_change(result: Any, changes: Mapping[str, Mapping[str, Any]]) -> StateChangeResult:
    """Returns `result` from a user-agent tool and changes the main session's state.

    The changes are applied to the main session after the user agent finishes
    and before the system resumes. Merge rule (several changes to one key, or
    several user agents answering parallel tool yields, applied in the order the
    model made the calls): dicts merge key by key, lists gain the items they do
    not hold yet, other values replace; wrap a value in `replace_value` to
    overwrite it.

    Args:
        result: What the user agent's model sees as the tool result.
        changes: Scoped changes, e.g. ``{"patient": {"revealedConditions": ["asthma"]}}``.

    Example:
        ::

            def reveal_condition(condition: str) -> dict:
                return with_state_change(
                    {"revealed": condition},
                    {"patient": {"revealedConditions": [condition]}},
                )
    """
    flatten_changes(changes)  # fail in the tool, with a clear message, not later
    return StateChangeResult(result=result, changes=changes)


_SINK: contextvars.ContextVar[list[Mapping[str, Mapping[str, Any]]] | None] = (
    contextvars.ContextVar("adk_eval_state_change_sink", default=None)
)


def collect_state_changes() -> tuple[list[Mapping[str, Mapping[str, Any]]], contextvars.Token[Any]]:
    """Starts collecting state changes in the current context (ADK tasks inherit it)."""
    sink: list[Mapping[str, Mapping[str, Any]]] = []
    return sink, _SINK.set(sink)


def stop_collecting(token: contextvars.Token[Any]) -> None:
    """Ends a collection started by `collect_state_changes`."""
    _SINK.reset(token)


def record_state_changes(result: StateChangeResult) -> Any:
    """Adds `result`'s changes to the running user agent's collection; returns its result."""
    sink = _SINK.get()
    if sink is not None:
        sink.append(result.changes)
    return result.result


class StateChangeCollector(BasePlugin):
    """Plugin of the user-agent runner: unwraps `with_state_change` results.

    The model gets the plain result; the changes go to the collection of the
    running user agent (tool calls inside its `AgentTool`s included, since they
    inherit the plugin and the context).
    """

    def __init__(self) -> None:
        super().__init__(name="adk_eval_state_changes")

    async def after_tool_callback(
        self,
        *,
        tool: BaseTool,
        tool_args: dict[str, Any],
        tool_context: ToolContext,
        result: Any,
    ) -> dict[str, Any] | None:
        """Replaces a `StateChangeResult` with its plain result and records its changes."""
        if not isinstance(result, StateChangeResult):
            return None
        plain = record_state_changes(result)
        return plain if isinstance(plain, dict) else {"result": plain}
