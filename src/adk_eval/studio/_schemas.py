"""JSON Schemas the page builds forms from, and server-side validation of answers.

Tool parameters come from the declarations in the model request itself
(``parameters_json_schema``, or the legacy genai ``parameters`` converted), so
the person sees exactly what the model would. `input_schema` / `output_schema`
are pydantic models; their JSON Schema is used the same way. Validation uses
JSON Schema (with ``$ref``/``$defs``) and, for pydantic schemas, pydantic itself.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from google.genai import types
from pydantic import BaseModel, ValidationError

from .._turns import jsonable

__all__ = ["declaration_schema", "model_schema", "validate_against", "validate_model"]

_EMPTY_OBJECT: dict[str, Any] = {"type": "object", "properties": {}}


def declaration_schema(declaration: types.FunctionDeclaration) -> dict[str, Any]:
    """The parameters of a tool declaration, as a JSON Schema object."""
    if declaration.parameters_json_schema is not None:
        schema = declaration.parameters_json_schema
        return dict(schema) if isinstance(schema, dict) else jsonable(schema)
    if declaration.parameters is not None:
        converted = declaration.parameters.json_schema.model_dump(mode="json", exclude_none=True)
        return dict(converted)
    return dict(_EMPTY_OBJECT)


def model_schema(model: Any) -> dict[str, Any] | None:
    """The JSON Schema of an agent's input/output schema (None when there is none)."""
    if model is None:
        return None
    if isinstance(model, type) and issubclass(model, BaseModel):
        return model.model_json_schema()
    if isinstance(model, dict):
        return model
    return None


def validate_against(schema: dict[str, Any], value: Any) -> list[str]:
    """Every way `value` breaks `schema`, as readable messages (empty when valid)."""
    validator = jsonschema.Draft202012Validator(schema)
    try:
        errors = sorted(validator.iter_errors(value), key=lambda e: list(e.absolute_path))
    except Exception as unusable:  # a schema the validator cannot use
        # Schemas can come from a remote app's request: one with an unresolvable
        # `$ref` (or otherwise unusable) makes every answer a problem, not a crash.
        return [f"(schema): the schema cannot be used: {unusable}"]
    problems = []
    for error in errors:
        where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
        problems.append(f"{where}: {error.message}")
    return problems


def validate_model(model: Any, value: Any) -> tuple[Any, list[str]]:
    """Validates `value` against a pydantic model (or a JSON Schema dict).

    Returns:
        The value to send (the model's JSON dump when valid) and the problems.
    """
    if isinstance(model, type) and issubclass(model, BaseModel):
        try:
            return model.model_validate(value).model_dump(mode="json"), []
        except ValidationError as error:
            return value, [
                f"{'/'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
                for e in error.errors()
            ]
    schema = model_schema(model)
    return value, validate_against(schema, value) if schema else []
