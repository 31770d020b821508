"""Turn mechanics shared by the simulation loop and the studio.

One run of an ADK agent ends in one of three ways: an error, pending
long-running calls (a tool yield), or a final text (the agent waits for the
user). Everything both drivers need to take a run to its next turn lives here:

* `agent_app`: an ADK `App` around an agent (or a user's `App`) with the
  harness's plugins placed first;
* `classify_run`: how a run ended, with its pending calls and its last text;
* `tool_response`, `tool_error_response`: what a tool yield is answered with;
* `resume_message`: the one user message that answers every pending call;
* `event_text`, `content_text`, `parts_text`, `jsonable`: text and JSON-safe values of events.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.agents import BaseAgent
from google.adk.apps import App, ResumabilityConfig
from google.adk.events import Event
from google.adk.plugins.base_plugin import BasePlugin
from google.adk.workflow import Workflow
from google.genai import types

from ._errors import EvalSetupError

__all__ = [
    "CONFIRMATION_CALL",
    "CREDENTIAL_CALL",
    "DEFAULT_USER_ID",
    "PendingCall",
    "RunEnd",
    "STATE_SOURCE_KEY",
    "agent_app",
    "app_name_for",
    "classify_run",
    "content_text",
    "event_text",
    "jsonable",
    "parts_text",
    "resume_message",
    "state_change_source",
    "stable_call_args",
    "tool_error_response",
    "tool_response",
    "user_content",
]

DEFAULT_USER_ID = "eval_user"
"""The ADK user id of every session the harness and the studio create."""


def parts_text(parts: Iterable[types.Part] | None) -> str:
    """The text of some parts, thoughts left out."""
    return "".join(part.text for part in parts or () if part.text and not part.thought)


def content_text(content: types.Content | None) -> str:
    """The text a content holds (thoughts left out; "" for None)."""
    return parts_text(content.parts) if content is not None else ""


def event_text(event: Event) -> str:
    """The text an event's content holds (thoughts left out; "" without content)."""
    return content_text(event.content)


STATE_SOURCE_KEY = "source"
"""The `custom_metadata` key naming the user agents whose state changes an event applies."""


def state_change_source(event: Event) -> str | None:
    """The user agents whose `with_state_change` changes `event` applied, else None."""
    if event.author != "user" or event.content is not None or not event.actions.state_delta:
        return None
    source = (event.custom_metadata or {}).get(STATE_SOURCE_KEY)
    return source if isinstance(source, str) else None


def jsonable(value: Any) -> Any:
    """`value` as plain JSON data (what JSON cannot hold becomes its ``repr``)."""
    return json.loads(json.dumps(value, ensure_ascii=False, default=repr))


_APP_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def app_name_for(name: str) -> str:
    """A valid ADK app name for an agent or target name (valid names are kept)."""
    cleaned = _APP_NAME.sub("_", name).strip("_") or "app"
    if not cleaned[0].isalpha() or cleaned == "user":
        cleaned = f"a_{cleaned}"
    return cleaned


def agent_app(
    agent: BaseAgent | App | Workflow,
    plugins: Sequence[BasePlugin],
    *,
    name: str | None = None,
    resumable: bool = False,
) -> App:
    """An App that runs `agent` with `plugins` first.

    An `App` given as `agent` keeps its settings (its own copies of the
    compaction and context-cache configs: ADK writes into the first) and its own
    plugins, which run after `plugins`; it is not changed. A plain agent or
    `Workflow` gets an App named after it (or `name`).

    Raises:
        EvalSetupError: `agent` is neither an agent, a Workflow nor an App whose
            root is one.
    """
    if isinstance(agent, App):
        if not isinstance(agent.root_agent, BaseAgent | Workflow):
            raise EvalSetupError(
                f"adk_eval needs an App whose root is an agent or a Workflow, got "
                f"{type(agent.root_agent).__name__}"
            )
        update: dict[str, Any] = {"plugins": [*plugins, *agent.plugins]}
        # ADK keeps state in these (it writes the summarizer it makes into the compaction
        # config): each case gets its own, and the user's App is never changed.
        if agent.events_compaction_config is not None:
            update["events_compaction_config"] = agent.events_compaction_config.model_copy()
        if agent.context_cache_config is not None:
            update["context_cache_config"] = copy.deepcopy(agent.context_cache_config)
        if name is not None:
            update["name"] = name
        if resumable:
            update["resumability_config"] = _resumable()
        return agent.model_copy(update=update)
    if not isinstance(agent, BaseAgent | Workflow):
        raise EvalSetupError(
            f"adk_eval needs an ADK agent, Workflow or App, got {type(agent).__name__}"
        )
    return App(
        name=name or app_name_for(agent.name),
        root_agent=agent,
        plugins=list(plugins),
        resumability_config=_resumable() if resumable else None,
    )


def _resumable() -> ResumabilityConfig:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # ResumabilityConfig is experimental
        return ResumabilityConfig(is_resumable=True)


@dataclass(frozen=True)
class PendingCall:
    """A long-running call a run ended on, waiting for its answer.

    Attributes:
        call_id: The function call id the answer must carry.
        name: The tool.
        args: The call's arguments.
        invocation_id: The invocation that made the call.
        author: The agent that made the call.
    """

    call_id: str
    name: str
    args: dict[str, Any]
    invocation_id: str
    author: str


@dataclass(frozen=True)
class RunEnd:
    """How one run of the agent ended.

    Attributes:
        events: The run's events.
        pending: Long-running calls still waiting for an answer (a tool yield).
        text: The last text an agent said ("" if none).
        author: Who said it (None if nobody did).
        invocation_id: The invocation of that text (or of the last event).
    """

    events: Sequence[Event]
    pending: Sequence[PendingCall]
    text: str
    author: str | None
    invocation_id: str


def classify_run(events: Sequence[Event], interim: Collection[str] = ()) -> RunEnd:
    """Finds the pending long-running calls and the last agent text of a run's events.

    A long-running call is answered by a response with its id; for a tool named in
    `interim`, only by one the user sends (the tool's own response is its interim
    answer, as ADK treats it: the call waits for the client's final one).
    """
    answered = {
        fr.id
        for event in events
        for fr in event.get_function_responses()
        if fr.id and (event.author == "user" or fr.name not in interim)
    }
    pending = {  # by id: a relayed call can come again with its task's pause (A2A)
        call.id: PendingCall(
            call_id=call.id,
            name=call.name or "",
            args=dict(call.args or {}),
            invocation_id=event.invocation_id,
            author=event.author,
        )
        for event in events
        for call in event.get_function_calls()
        if call.id and call.id in (event.long_running_tool_ids or ()) and call.id not in answered
    }
    invocation_id = events[-1].invocation_id if events else ""
    for event in reversed(events):
        text = event_text(event) if event.author != "user" else ""
        if text:
            return RunEnd(events, list(pending.values()), text, event.author, event.invocation_id)
    return RunEnd(events, list(pending.values()), "", None, invocation_id)


CONFIRMATION_CALL = "adk_request_confirmation"
"""The call ADK makes to ask for a tool confirmation (answered like any tool yield)."""

CREDENTIAL_CALL = "adk_request_credential"
"""The call ADK makes to ask for a credential (a node or tool with an ``auth_config``)."""


def stable_call_args(name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    """A call's args as goldens keep and compare them.

    ADK's confirmation request carries the id of the call it confirms, made up
    anew in every run; it is left out so a replay can match the golden.
    """
    if name != CONFIRMATION_CALL:
        return dict(args)
    stable = copy.deepcopy(dict(args))
    original = stable.get("originalFunctionCall")
    if isinstance(original, dict):
        original.pop("id", None)
    return stable


def tool_response(tool_name: str, value: Any) -> dict[str, Any]:
    """The `FunctionResponse` payload answering a call to `tool_name` with `value`.

    A dict is kept; ``True``/``False`` answering ADK's confirmation request is
    ``{"confirmed": value}``; a string or number answering ADK's credential request
    is an API key (``{"auth_type": "apiKey", "api_key": ...}``, an `AuthCredential`);
    anything else is ``{"result": value}``.
    """
    if tool_name == CONFIRMATION_CALL and isinstance(value, bool):
        return {"confirmed": value}
    is_key = isinstance(value, str | int | float) and not isinstance(value, bool)
    if tool_name == CREDENTIAL_CALL and is_key:
        return {"auth_type": "apiKey", "api_key": str(value)}
    if isinstance(value, dict):
        return value
    return {"result": value}


def tool_error_response(
    error: BaseException | str, error_type: str | None = None
) -> dict[str, Any]:
    """The response of a tool that failed: ``{"error": {"type": ..., "message": ...}}``."""
    if isinstance(error, BaseException):
        return {"error": {"type": error_type or type(error).__name__, "message": str(error)}}
    return {"error": {"type": error_type or "ToolError", "message": error}}


def user_content(message: str | types.Content) -> types.Content:
    """A user message: a str becomes one text part (a `Content` is kept as is)."""
    if isinstance(message, types.Content):
        return message
    # built without validating: a str and a role are what the fields take
    return types.Content.model_construct(
        role="user", parts=[types.Part.model_construct(text=message)]
    )


def resume_message(answers: Sequence[tuple[PendingCall, dict[str, Any]]]) -> types.Content:
    """One user message answering pending calls, one `FunctionResponse` each, in order."""
    return types.Content(
        role="user",
        parts=[
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.call_id, name=call.name, response=response
                )
            )
            for call, response in answers
        ],
    )
