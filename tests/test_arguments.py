"""A tool call checked against the declaration ADK sends the model (both of its forms)."""

from __future__ import annotations

from typing import Literal

from google.adk.tools import FunctionTool
from google.genai import types

from adk_eval._arguments import call_problems, closest_name, declared, tool_problems


def lookup_order(order_id: str, note: str = "", qty: int = 1) -> dict:
    """Looks up an order."""
    return {}


def set_mode(mode: Literal["fast", "safe"], when: str | None = None) -> dict:
    """Sets a mode."""
    return {}


def signature(function):
    return declared(FunctionTool(function)._get_declaration())


def test_a_wrong_name_is_named_with_the_declared_one_it_meant():
    problems = call_problems(signature(lookup_order), {"id": "A1"})
    assert problems == [
        "`id` is not a parameter of `lookup_order`: did you mean `order_id`?",
        "`order_id` is required but missing",
    ]


def test_types_enums_and_optional_values_are_checked_as_json():
    assert call_problems(signature(lookup_order), {"order_id": "A1", "qty": "two"}) == [
        "`qty` should be integer, got 'two' (str)"
    ]
    assert call_problems(signature(lookup_order), {"order_id": "A1", "qty": 2.0}) == []
    assert call_problems(signature(lookup_order), {"order_id": "A1", "qty": True}) != []
    assert call_problems(signature(set_mode), {"mode": "slow"}) == [
        "`mode` should be one of 'fast', 'safe', got 'slow' (str)"
    ]
    assert call_problems(signature(set_mode), {"mode": "safe", "when": None}) == []


def test_a_types_schema_declaration_is_read_like_a_json_schema():
    declaration = types.FunctionDeclaration(
        name="lookup",
        parameters=types.Schema(
            type=types.Type.OBJECT,
            properties={
                "order_id": types.Schema(type=types.Type.STRING),
                "limit": types.Schema(type=types.Type.INTEGER, nullable=True),
            },
            required=["order_id"],
        ),
    )
    tool = declared(declaration)
    assert tool is not None
    assert tool.describe() == "lookup(order_id: string, limit?: integer)"
    assert call_problems(tool, {"order_id": "A", "limit": None}) == []
    assert call_problems(tool, {"orderId": 3}) == [
        "`orderId` is not a parameter of `lookup`: did you mean `order_id`?",
        "`order_id` is required but missing",
    ]


def test_what_the_schema_does_not_say_is_not_guessed():
    open_schema = types.FunctionDeclaration(
        name="anything",
        parameters_json_schema={"type": "object", "additionalProperties": True},
    )
    assert call_problems(declared(open_schema), {"whatever": 1}) == []
    odd = types.FunctionDeclaration(
        name="odd",
        parameters_json_schema={
            "type": "object",
            "properties": {"when": {"format": "date-time"}, "ref": {"$ref": "#/$defs/X"}},
        },
    )
    assert call_problems(declared(odd), {"when": 5, "ref": "x"}) == []
    assert (
        declared(types.FunctionDeclaration(name="n", parameters_json_schema={"$ref": "#/x"}))
        is None
    )
    no_arguments = declared(types.FunctionDeclaration(name="ping"))
    assert call_problems(no_arguments, {"x": 1}) == ["`x` is not a parameter of `ping`"]


def test_the_closest_name_prefers_shared_words_then_spelling():
    assert closest_name("id", ["note", "order_id"]) == "order_id"
    assert closest_name("customerId", ["order_id", "customer_id"]) == "customer_id"
    assert closest_name("ordr_id", ["order_id", "user_id"]) == "order_id"
    assert closest_name("zzz", ["order_id"]) is None
    assert tool_problems("lookup_ordr", {"lookup_order": None, "refund": None}) == [
        "`lookup_ordr` is not a tool of this agent: did you mean `lookup_order`? "
        "(its tools: `lookup_order`, `refund`)"
    ]
