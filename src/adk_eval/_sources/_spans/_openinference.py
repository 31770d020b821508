"""Events of one conversation from OpenInference spans (Phoenix/Arize instrumentation).

OpenInference names a span's kind in ``openinference.span.kind`` (``LLM``,
``TOOL``, ``AGENT``, ``CHAIN``...), the conversation and user in ``session.id`` and
``user.id``, an LLM span's messages in flattened lists
(``llm.input_messages.{i}.message.role``/``.content``,
``llm.output_messages.{i}.message.tool_calls.{j}.tool_call.id``/``.function.name``/
``.function.arguments``) and its token counts in ``llm.token_count.prompt``/
``completion``/``total``; a TOOL span its ``tool.name``, ``input.value`` (the
arguments) and ``output.value`` (the answer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from google.adk.events import Event, EventActions
from google.genai import types

from ._span import Span

__all__ = ["is_openinference", "openinference_events"]

KIND = "openinference.span.kind"


def is_openinference(spans: Sequence[Span]) -> bool:
    """Whether the spans follow the OpenInference conventions."""
    return any(KIND in span.attributes for span in spans)


def _messages(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Unflattens ``prefix.{i}.message.*`` into one dict per message."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        index, _, rest = key[len(prefix) + 1 :].partition(".")
        if index.isdigit() and rest.startswith("message."):
            found.setdefault(int(index), {})[rest[len("message.") :]] = value
    return [found[i] for i in sorted(found)]


def _loads(value: Any) -> Any:
    try:
        return json.loads(value) if isinstance(value, str) else value
    except ValueError:
        return value


def _content(message: Mapping[str, Any], role: str) -> types.Content:
    parts = []
    if message.get("content"):
        parts.append(types.Part(text=str(message["content"])))
    calls: dict[int, dict[str, Any]] = {}
    for key, value in message.items():
        if key.startswith("tool_calls."):
            index, _, rest = key[len("tool_calls.") :].partition(".")
            if index.isdigit():
                calls.setdefault(int(index), {})[rest] = value
    for i in sorted(calls):
        call = calls[i]
        args = _loads(call.get("tool_call.function.arguments"))
        function = types.FunctionCall(
            id=call.get("tool_call.id"),
            name=str(call.get("tool_call.function.name", "")),
            args=args if isinstance(args, dict) else None,
        )
        parts.append(types.Part(function_call=function))
    return types.Content(role=role, parts=parts)


def _usage(attributes: Mapping[str, Any]) -> types.GenerateContentResponseUsageMetadata | None:
    prompt = attributes.get("llm.token_count.prompt")
    completion = attributes.get("llm.token_count.completion")
    if prompt is None and completion is None:
        return None
    total = attributes.get("llm.token_count.total")
    return types.GenerateContentResponseUsageMetadata(
        prompt_token_count=prompt,
        candidates_token_count=completion,
        total_token_count=total if total is not None else (prompt or 0) + (completion or 0),
    )


def _walk(
    root: Span, children: Mapping[str, list[Span]], agent: str, out: list[tuple[Span, str]]
) -> None:
    """Appends the LLM and TOOL spans under `root` with their agent (a stack: no recursion)."""
    stack = [(root, agent)]
    while stack:
        span, agent = stack.pop()
        kind = span.attributes.get(KIND)
        if kind == "AGENT":
            agent = str(
                span.attributes.get("agent.name")
                or span.name.removeprefix("agent_run [").rstrip("]")
            )
        if kind in ("LLM", "TOOL"):
            out.append((span, agent))
            if kind == "TOOL":
                continue
        stack.extend((child, agent) for child in reversed(children.get(span.span_id, [])))


def openinference_events(
    roots: Sequence[Span], children: Mapping[str, list[Span]]
) -> tuple[list[Event], bool | None, str]:
    """The events, whether messages were captured (None: no LLM span), and the user id."""
    events: list[Event] = []
    captured: bool | None = None
    user_id = ""
    for root in roots:
        steps: list[tuple[Span, str]] = []
        _walk(root, children, "", steps)
        user_id = user_id or str(root.attributes.get("user.id") or "")
        first = True
        pending: list[tuple[Span, str]] = []
        for span, agent in [*steps, (root, "")]:
            if span.attributes.get(KIND) == "TOOL":
                pending.append((span, agent))
                continue
            if pending:
                events.append(_responses(pending, events))
                pending = []
            if span is root:
                break
            user_id = user_id or str(span.attributes.get("user.id") or "")
            inputs = _messages(span.attributes, "llm.input_messages")
            outputs = _messages(span.attributes, "llm.output_messages")
            captured = bool(captured or inputs or outputs)
            if first:
                users = [m for m in inputs if m.get("role") == "user"]
                content = _content(users[-1], "user") if users else None
                events.append(
                    Event(
                        id=f"{root.span_id}-user",
                        author="user",
                        content=content,
                        timestamp=root.start_ns / 1e9,
                    )
                )
                first = False
            content = _content(outputs[0], "model") if outputs else None
            events.append(
                Event(
                    id=span.span_id,
                    author=agent,
                    content=content,
                    usage_metadata=_usage(span.attributes),
                    timestamp=span.end_ns / 1e9,
                )
            )
    return events, captured, user_id


def _responses(tools: list[tuple[Span, str]], events: list[Event]) -> Event:
    calls = events[-1].get_function_calls() if events else []
    parts = []
    actions = EventActions()
    for span, _ in tools:
        name = str(span.attributes.get("tool.name") or span.name)
        call = next((c for c in calls if c.name == name), None)
        if call is not None:
            calls.remove(call)
        output = _loads(span.attributes.get("output.value"))
        response = output if isinstance(output, dict) else {"result": output}
        parts.append(
            types.Part(
                function_response=types.FunctionResponse(
                    id=call.id if call else None, name=name, response=response
                )
            )
        )
        if name == "transfer_to_agent" and call is not None and call.args:
            actions.transfer_to_agent = call.args.get("agent_name")
    return Event(
        id=tools[0][0].span_id,
        author=tools[0][1],
        content=types.Content(role="user", parts=parts),
        actions=actions,
        timestamp=max(s.end_ns for s, _ in tools) / 1e9,
    )
