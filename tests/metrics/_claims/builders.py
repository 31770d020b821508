"""What the claims tests build: traces of calls and messages, and agents with refund tools."""

from __future__ import annotations

from google.adk.agents import LlmAgent
from google.adk.events import Event
from google.genai import types

from adk_eval import EvalTrace
from adk_eval.testing import (
    ScriptedLlm,
    function_response_event,
    tool_call,
    tool_call_event,
    user_event,
)


def call(name: str, answer: dict, n: int, author: str = "support") -> list:
    return [
        tool_call_event(author, name, {"order": "A1"}, call_id=f"c{n}"),
        function_response_event(author, name, answer, call_id=f"c{n}"),
    ]


def trace(*events, **fields) -> EvalTrace:
    return EvalTrace(events=(user_event("please refund order A1"), *events), **fields)


CLAIM = "I've refunded your order A1."


def said_with(text: str, *calls: tuple[str, str]) -> Event:
    """One model response: `text` and the function calls ``(name, id)`` sent with it."""
    parts = [types.Part(text=text), *(tool_call(name, {}, id=id_) for name, id_ in calls)]
    return Event(author="support", content=types.Content(role="model", parts=parts))


def answered(name: str, answer: dict, id_: str) -> Event:
    return function_response_event("support", name, answer, call_id=id_)


def refund_order(order: str) -> dict:
    """Refunds an order to the card it was paid with."""
    raise AssertionError("mocked")


def send_email(to: str, body: str) -> dict:
    """Sends an email."""
    raise AssertionError("mocked")


def support(steps: list, **fields) -> LlmAgent:
    return LlmAgent(
        name="support", model=ScriptedLlm(steps), tools=[refund_order, send_email], **fields
    )


REFUND = tool_call("refund_order", {"order": "A1"})


def billing(steps: list) -> LlmAgent:
    return LlmAgent(
        name="billing",
        description="Handles refunds.",
        model=ScriptedLlm(steps),
        tools=[refund_order],
    )


def zap_account(user: str) -> dict:
    """Deletes the user's account and all their data."""
    raise AssertionError("mocked")
