"""The human-as-model protocol: a model request as JSON, and an answer as an `LlmResponse`.

A request shows the person exactly what the model would get: the system
instruction, the conversation (text, function calls, function responses) and
the tool declarations (JSON Schema), plus the output schema if the agent has one.

An answer is one of::

    {"type": "text", "text": "The answer is 8."}
    {"type": "output", "value": {"answer": "8", "confidence": 0.9}}     # output_schema
    {"type": "tool_calls", "calls": [{"name": "add", "args": {"a": 5, "b": 3}}]}

It is validated on the server (tool names, arguments against each tool's
schema, the output against the output schema) before it becomes the model's
response; problems come back as a list of readable messages.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import jsonschema
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types

from .._errors import AnswerError
from .._turns import content_text, jsonable
from ._schemas import declaration_schema, model_schema, validate_against, validate_model

__all__ = [
    "REQUEST_SCHEMA",
    "AnswerError",
    "answer_to_response",
    "content_to_json",
    "MODEL_ANSWERS",
    "TOOL_ANSWERS",
    "USER_ANSWERS",
    "check_answer_shape",
    "request_problems",
    "serialize_request",
    "validate_answer",
]

_NULLABLE_STRING = {"type": ["string", "null"]}
_NULLABLE_OBJECT = {"type": ["object", "null"]}
REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["contents", "tools"],
    "properties": {
        "agent_name": {"type": "string"},
        "instruction": {"type": "string"},
        "contents": {"type": "array", "items": {"$ref": "#/$defs/content"}},
        "tools": {"type": "array", "items": {"$ref": "#/$defs/tool"}},
        "output_schema": _NULLABLE_OBJECT,
    },
    "$defs": {
        "content": {
            "type": "object",
            "properties": {
                "role": _NULLABLE_STRING,
                "parts": {"type": "array", "items": {"$ref": "#/$defs/part"}},
            },
        },
        "part": {
            "type": "object",
            "properties": {
                "text": _NULLABLE_STRING,
                "function_call": {
                    "type": "object",
                    "properties": {
                        "id": _NULLABLE_STRING,
                        "name": _NULLABLE_STRING,
                        "args": _NULLABLE_OBJECT,
                    },
                },
                "function_response": {
                    "type": "object",
                    "properties": {
                        "id": _NULLABLE_STRING,
                        "name": _NULLABLE_STRING,
                        "response": _NULLABLE_OBJECT,
                    },
                },
            },
        },
        "tool": {
            "type": "object",
            "required": ["name", "parameters"],
            "properties": {
                "name": {"type": "string"},
                "description": _NULLABLE_STRING,
                "parameters": {"type": "object"},
                "long_running": {"type": "boolean"},
                "note": _NULLABLE_STRING,
                "allowed": {"type": "boolean"},
            },
        },
    },
}
"""The shape of a model request as `serialize_request` writes it (what a remote app sends)."""


def part_to_json(part: types.Part) -> dict[str, Any] | None:
    """One part of a conversation, as the page shows it (None for parts it does not)."""
    if part.function_call is not None:
        call = part.function_call
        return {
            "function_call": {"id": call.id, "name": call.name, "args": jsonable(call.args or {})}
        }
    if part.function_response is not None:
        response = part.function_response
        return {
            "function_response": {
                "id": response.id,
                "name": response.name,
                "response": jsonable(response.response or {}),
            }
        }
    if part.text and not part.thought:
        return {"text": part.text}
    return None


def content_to_json(content: types.Content) -> dict[str, Any]:
    """A `Content` as ``{"role", "parts"}``."""
    parts = [p for p in (part_to_json(part) for part in content.parts or []) if p is not None]
    return {"role": content.role or "user", "parts": parts}


def _instruction(request: LlmRequest) -> str:
    instruction = request.config.system_instruction if request.config else None
    if instruction is None:
        return ""
    if isinstance(instruction, str):
        return instruction
    if isinstance(instruction, types.Content):
        return content_text(instruction)
    if isinstance(instruction, list):
        return "\n".join(str(getattr(item, "text", item) or "") for item in instruction)
    return str(instruction)


def serialize_request(
    request: LlmRequest,
    agent_name: str,
    *,
    output_schema: Any = None,
    tool_notes: dict[str, str] | None = None,
) -> dict[str, Any]:
    """The model request as JSON for the page.

    Args:
        request: What the model would receive.
        agent_name: The agent making the call.
        output_schema: The agent's output schema (a pydantic model), if any.
        tool_notes: Per tool, a note for the person (e.g. "mocked in this case").
    """
    notes = tool_notes or {}
    tools = []
    for tool in request.config.tools or [] if request.config else []:
        if not isinstance(tool, types.Tool):
            continue
        for declaration in tool.function_declarations or []:
            name = declaration.name or ""
            adk_tool = request.tools_dict.get(name)
            tools.append(
                {
                    "name": name,
                    "description": declaration.description or "",
                    "parameters": declaration_schema(declaration),
                    "long_running": bool(adk_tool is not None and adk_tool.is_long_running),
                    "note": notes.get(name),
                    "allowed": notes.get(name) != "not allowed",
                }
            )
    schema = model_schema(output_schema)
    if schema is None and request.config is not None and request.config.response_schema is not None:
        schema = model_schema(request.config.response_schema)
    return {
        "agent_name": agent_name,
        "instruction": _instruction(request),
        "contents": [content_to_json(content) for content in request.contents],
        "tools": tools,
        "output_schema": schema,
    }


def request_problems(payload: Any) -> list[str]:
    """Every way `payload` is not a model request `serialize_request` could have written.

    Besides the shape (`REQUEST_SCHEMA`), each tool's parameters and the output
    schema must be valid JSON Schemas, since answers are checked against them.
    """
    problems = validate_against(REQUEST_SCHEMA, payload)
    if problems:
        return problems
    schemas = [(f"tools/{i}/parameters", t["parameters"]) for i, t in enumerate(payload["tools"])]
    if payload.get("output_schema") is not None:
        schemas.append(("output_schema", payload["output_schema"]))
    for where, schema in schemas:
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as error:
            problems.append(f"{where}: not a valid JSON Schema: {error.message}")
    return problems


def _answer_schema(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "required": ["type", *fields],
        "properties": {"type": {"const": kind}, **fields},
        "additionalProperties": False,
    }


_TEXT_ANSWER = _answer_schema("text", {"text": {"type": "string"}})
_CALL = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "minLength": 1},
        "args": {"type": "object"},
        "id": {"type": ["string", "null"]},
    },
    "additionalProperties": False,
}
MODEL_ANSWERS: dict[str, dict[str, Any]] = {
    "text": _TEXT_ANSWER,
    "output": _answer_schema("output", {"value": {}}),
    "tool_calls": _answer_schema(
        "tool_calls", {"calls": {"type": "array", "minItems": 1, "items": _CALL}}
    ),
}
"""What an answer to a model request may be, field by field."""
USER_ANSWERS: dict[str, dict[str, Any]] = {
    "text": _TEXT_ANSWER,
    "value": _answer_schema("value", {"value": {}}),
    "stop": _answer_schema("stop", {}),
}
"""What a simulated user's answer may be."""
TOOL_ANSWERS: dict[str, dict[str, Any]] = {
    "text": _TEXT_ANSWER,
    "value": _answer_schema("value", {"value": {}}),
}
"""What a person's answer to a long-running tool may be."""


def check_answer_shape(answer: Any, kinds: dict[str, dict[str, Any]]) -> None:
    """Checks every field of `answer` against the protocol's schema of its ``type``.

    Raises:
        AnswerError: Naming each field that is wrong (``calls/0/id: ...``).
    """
    listed = ", ".join(kinds)
    if not isinstance(answer, dict):
        raise AnswerError([f"(top level): an answer is an object {{type: {listed}, ...}}"])
    kind = answer.get("type")
    if not isinstance(kind, str) or kind not in kinds:
        raise AnswerError([f"type: must be one of {listed}, got {kind!r}"])
    problems = validate_against(kinds[kind], answer)
    if problems:
        raise AnswerError(problems)


def validate_answer(
    payload: dict[str, Any], answer: Any, *, output_model: Any = None
) -> dict[str, Any]:
    """Checks an answer against the request it answers; returns it normalised.

    Raises:
        AnswerError: With every problem found.
    """
    check_answer_shape(answer, MODEL_ANSWERS)
    kind = answer["type"]
    schema = payload.get("output_schema")
    if kind == "text":
        text = answer.get("text")
        if not isinstance(text, str) or not text.strip():
            raise AnswerError(["the final response is empty"])
        if schema is not None:
            raise AnswerError(["this agent has an output schema: answer with the output form"])
        return {"type": "text", "text": text}
    if kind == "output":
        if schema is None:
            raise AnswerError(["this agent has no output schema: answer with text"])
        value = answer.get("value")
        normalised, output_problems = (
            validate_model(output_model, value)
            if output_model is not None
            else (value, validate_against(schema, value))
        )
        if output_problems:
            raise AnswerError(output_problems)
        return {"type": "output", "value": normalised}
    calls = answer["calls"]
    tools = {tool["name"]: tool for tool in payload.get("tools", [])}
    problems: list[str] = []
    normalised_calls = []
    for index, call in enumerate(calls, start=1):
        name = call["name"]
        args = call.get("args", {})
        if name not in tools:
            problems.append(f"call #{index}: no tool named {name!r}")
            continue
        if not tools[name].get("allowed", True):
            note = tools[name].get("note") or "not allowed"
            problems.append(f"call #{index}: `{name}` is not allowed in this session ({note})")
            continue
        problems += [
            f"call #{index} `{name}`: {problem}"
            for problem in validate_against(tools[name]["parameters"], args)
        ]
        call_id = call.get("id") or f"studio-{uuid.uuid4().hex[:10]}"
        normalised_calls.append({"name": name, "args": args, "id": call_id})
    if problems:
        raise AnswerError(problems)
    return {"type": "tool_calls", "calls": normalised_calls}


def answer_to_response(answer: dict[str, Any]) -> LlmResponse:
    """A validated answer as the model's `LlmResponse`."""
    if answer["type"] == "text":
        parts = [types.Part(text=answer["text"])]
    elif answer["type"] == "output":
        parts = [types.Part(text=json.dumps(answer["value"], ensure_ascii=False))]
    else:
        parts = [
            types.Part(
                function_call=types.FunctionCall(
                    id=call.get("id") or f"studio-{uuid.uuid4().hex[:10]}",
                    name=call["name"],
                    args=call["args"],
                )
            )
            for call in answer["calls"]
        ]
    return LlmResponse(content=types.Content(role="model", parts=parts))
