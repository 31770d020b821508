"""OTLP JSON-lines files of ADK-shaped spans, with content capture on or off, for `otlp:PATH`.

Each conversation is one trace per turn: the invocation, ``invoke_agent desk`` and a
``call_llm`` span carrying ADK's own attributes (session and invocation ids). With
content, the model call carries ``gcp.vertex.agent.llm_request`` (the history) and
``llm_response`` (the reply), as ADK writes them with capture on; without, the
``"{}"`` placeholders ADK writes with capture off.
"""

from __future__ import annotations

import json
from pathlib import Path

Turns = list[tuple[str, str]]  # (the user's message, the agent's reply)


def _value(value: object) -> dict[str, str]:
    return {"intValue": str(value)} if isinstance(value, int) else {"stringValue": str(value)}


def _llm(common: dict[str, str], history: list[dict], reply: str, content: bool) -> dict[str, str]:
    attributes = {**common, "gen_ai.operation.name": "generate_content"}
    if content:
        attributes["gcp.vertex.agent.llm_request"] = json.dumps({"contents": history})
        response = {"content": {"role": "model", "parts": [{"text": reply}]}}
        attributes["gcp.vertex.agent.llm_response"] = json.dumps(response)
    else:
        attributes["gcp.vertex.agent.llm_request"] = "{}"
        attributes["gcp.vertex.agent.llm_response"] = "{}"
    return attributes


def conversation_lines(index: int, session_id: str, turns: Turns, content: bool) -> list[str]:
    """One export request (a JSON line) per turn of one conversation."""
    lines, history = [], []
    for turn, (user, agent) in enumerate(turns):
        history.append({"role": "user", "parts": [{"text": user}]})
        common = {
            "gcp.vertex.agent.session_id": session_id,
            "gcp.vertex.agent.invocation_id": f"e-{index}-{turn}",
        }
        base, start = (index + 1) * 100 + turn * 10, 1_750_000_000 * 10**9 + index * 10**12
        start += turn * 10**10
        chain = [
            ("invocation", None, common),
            ("invoke_agent desk", base + 1, {**common, "gen_ai.agent.name": "desk"}),
            ("call_llm", base + 2, _llm(common, history, agent, content)),
        ]
        spans = []
        for n, (name, parent, attributes) in enumerate(chain):
            span = {
                "traceId": f"{index + 1:016x}{turn + 1:016x}",
                "spanId": f"{base + n + 1:016x}",
                "name": name,
                "kind": 1,
                "startTimeUnixNano": str(start + n),
                "endTimeUnixNano": str(start + 100 - n),
                "attributes": [{"key": k, "value": _value(v)} for k, v in attributes.items()],
            }
            if parent is not None:
                span["parentSpanId"] = f"{parent:016x}"
            spans.append(span)
        history.append({"role": "model", "parts": [{"text": agent}]})
        scope = {"scope": {"name": "gcp.vertex.agent"}, "spans": spans}
        lines.append(json.dumps({"resourceSpans": [{"resource": {}, "scopeSpans": [scope]}]}))
    return lines


def write_traces(path: Path, conversations: list[tuple[str, Turns, bool]]) -> str:
    """Writes ``(session id, turns, content captured)`` conversations; the source's spec."""
    lines = [
        line
        for index, (session_id, turns, content) in enumerate(conversations)
        for line in conversation_lines(index, session_id, turns, content)
    ]
    path.write_text("\n".join(lines) + "\n")
    return f"otlp:{path}"
