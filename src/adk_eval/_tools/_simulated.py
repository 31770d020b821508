"""Simulated tools: a model answers a tool's calls from its declaration.

`ToolMock.simulated()` (or `EvalCase(simulate_unmocked=True)`) hands a call to
a model with what a person writing the mock would look at: the tool's name,
description and parameter schema, the schema of its response when one is
declared, the call's args, the calling session's state and every earlier
answer of the same tool in this run, so that ``get_order(7)`` asked twice
describes the same order. The answer must be JSON; with a response schema it
must validate. An invalid answer is sent back once with the problem; a second
invalid answer stops the run (`SimulatedToolError`, status ``error``, phase
``system``) with the answer shown.
"""

from __future__ import annotations

import json
import sys
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.tools.base_tool import BaseTool
from google.genai import types
from pydantic import TypeAdapter

from .._errors import SimulatedToolError
from ..models import ModelSpec, default_judge_model, resolve_model
from ..models._gateway._ask import complete, json_value
from ..models._gateway._usage import usage_role

__all__ = ["SIMULATOR_INSTRUCTION", "ToolSimulator", "response_schema_of"]

SIMULATOR_INSTRUCTION = """\
You stand in for a software tool while an AI agent is being tested, so that no
real system is touched. Given the tool's declaration, the arguments of a call,
the state of the session and the tool's earlier answers in this conversation,
reply with exactly what the real tool would return: realistic data that is
consistent with the earlier answers (the same record looked up twice is the same
record). Reply with a JSON value only, no prose, no code fence."""

_MAX_TRIES = 2


def _json(value: Any) -> str:
    return json.dumps(value, indent=2, sort_keys=True, default=repr)


def response_schema_of(tool: BaseTool) -> dict[str, Any] | None:
    """The JSON schema of what `tool` returns, when it declares one.

    From its declaration (``response_json_schema`` or ``response``), else, for a
    function tool, from the function's return annotation. None when nothing
    says (no annotation, ``None``, ``Any``).
    """
    declaration = tool._get_declaration()
    if declaration is not None:
        if declaration.response_json_schema:
            return dict(declaration.response_json_schema)
        if declaration.response is not None:
            schema = declaration.response.json_schema.model_dump(mode="json", exclude_none=True)
            return schema or None
    func = getattr(tool, "func", None)
    if func is None:
        return None
    try:
        annotation = typing.get_type_hints(func).get("return")
    except Exception:  # unresolvable annotations: nothing to check against
        return None
    if annotation in (None, type(None), Any):
        return None
    try:
        return TypeAdapter(annotation).json_schema()
    except Exception:  # a type pydantic cannot describe
        return None


def _declaration(tool: BaseTool) -> dict[str, Any]:
    declaration = tool._get_declaration()
    described: dict[str, Any] = {"name": tool.name, "description": tool.description}
    if declaration is not None:
        parameters = declaration.parameters_json_schema or (
            declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
            if declaration.parameters is not None
            else None
        )
        if parameters:
            described["parameters"] = parameters
    return described


def _problem(text: str, schema: Mapping[str, Any] | None) -> tuple[str | None, Any]:
    """``(None, answer)`` for a valid reply, else ``(what is wrong, None)``."""
    found, value = json_value(text)
    if schema is None:
        return None, value if found else text
    if not found:
        return "it is not JSON", None
    import jsonschema  # 20 modules: only when a simulated answer has a schema to meet

    try:
        jsonschema.validate(value, schema)
    except jsonschema.ValidationError as error:
        where = "/".join(str(part) for part in error.absolute_path) or "the answer"
        return f"{where}: {error.message} (the response schema)", None
    except jsonschema.SchemaError:  # the tool's own schema is broken: do not check
        return None, value
    return None, value


def _config(llm: BaseLlm, schema: Mapping[str, Any] | None) -> types.GenerateContentConfig:
    """JSON output, held to `schema` where the model can be (structured output)."""
    config = types.GenerateContentConfig(
        system_instruction=SIMULATOR_INSTRUCTION, response_mime_type="application/json"
    )
    if schema is not None:
        lite = sys.modules.get("google.adk.models.lite_llm")  # loaded when one is in use
        if lite is not None and isinstance(llm, lite.LiteLlm):
            config.response_schema = dict(schema)  # LiteLLM's response_format
        else:
            config.response_json_schema = dict(schema)
    return config


@dataclass(frozen=True)
class ToolSimulator:
    """How a simulated tool is answered (see the module doc).

    Attributes:
        instructions: What to tell the model about this tool's world (data it
            holds, how it fails), beside its declaration.
        model: The model; None uses the judge's (``$ADK_EVAL_JUDGE_MODEL``, else
            ``$ADK_EVAL_MODEL``, else ``gemini-2.5-flash``).
        response_schema: The JSON schema answers must follow, when the tool
            declares none (or to replace it).
    """

    instructions: str | None = None
    model: ModelSpec | None = None
    response_schema: Mapping[str, Any] | None = None

    def llm(self) -> BaseLlm:
        """The model, resolved (raises `EvalSetupError` for a missing key)."""
        return resolve_model(self.model if self.model is not None else default_judge_model())

    async def answer(
        self,
        tool: BaseTool,
        args: Mapping[str, Any],
        state: Mapping[str, Any],
        earlier: Sequence[tuple[Mapping[str, Any], Any]],
    ) -> Any:
        """The simulated answer to one call.

        Args:
            tool: The tool called.
            args: The call's arguments.
            state: The calling session's state (scoped view).
            earlier: This run's earlier ``(args, answer)`` pairs of the same tool.

        Raises:
            SimulatedToolError: Two invalid answers, or the model failed.
        """
        schema = self.response_schema or response_schema_of(tool)
        prompt = self._prompt(tool, schema, args, state, earlier)
        contents = [types.Content(role="user", parts=[types.Part(text=prompt)])]
        llm = self.llm()
        text, problem = "", ""
        for _ in range(_MAX_TRIES):
            request = LlmRequest(
                model=llm.model, contents=list(contents), config=_config(llm, schema)
            )
            try:
                with usage_role(f"tool:{tool.name}"):
                    text = await complete(llm, request)
            except Exception as error:
                raise SimulatedToolError(
                    f"the model simulating `{tool.name}` failed: {type(error).__name__}: {error}"
                ) from error
            found, value = _problem(text, schema)
            if found is None:
                return value
            problem = found
            contents += [
                types.Content(role="model", parts=[types.Part(text=text)]),
                types.Content(
                    role="user",
                    parts=[types.Part(text=f"That answer is not valid: {problem}. Reply again.")],
                ),
            ]
        raise SimulatedToolError(
            f"the model simulating `{tool.name}` gave no valid answer in {_MAX_TRIES} tries "
            f"({problem}); its last answer:\n{text}"
        )

    def _prompt(
        self,
        tool: BaseTool,
        schema: Mapping[str, Any] | None,
        args: Mapping[str, Any],
        state: Mapping[str, Any],
        earlier: Sequence[tuple[Mapping[str, Any], Any]],
    ) -> str:
        """The request: the tool, schema, instructions, the state, its answers so far, the call."""
        lines = [f"Tool declaration:\n{_json(_declaration(tool))}"]
        if schema is not None:
            lines.append(f"The tool's answer follows this JSON schema:\n{_json(schema)}")
        if self.instructions:
            lines.append(f"About this tool:\n{self.instructions.strip()}")
        lines.append(f"Session state:\n{_json(state)}")
        if earlier:
            history = "\n".join(
                f"- called with {json.dumps(a, sort_keys=True, default=repr)} -> "
                f"{json.dumps(r, sort_keys=True, default=repr)}"
                for a, r in earlier
            )
            lines.append(f"Its earlier answers in this conversation:\n{history}")
        lines.append(f"Now it is called with:\n{_json(dict(args))}\nReply with its answer.")
        return "\n\n".join(lines)
