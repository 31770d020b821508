"""An order-support agent, written as a new team would: the shape the first-suite tests use.

A root agent with a lookup, a refund that moves money (a real side effect), a
long-running question to the customer, and a billing sub-agent it transfers to.
Every tool body appends to `RAN`, so a test can assert that none ran.
"""

from __future__ import annotations

from typing import Any

from google.adk.agents import LlmAgent
from google.adk.tools import LongRunningFunctionTool

RAN: list[str] = []
"""The names of the tool bodies that ran for real."""


def lookup_order(order_id: str) -> dict[str, Any]:
    """Looks up an order by its id."""
    RAN.append("lookup_order")
    return {"order_id": order_id, "status": "delivered", "total": 40.0}


def refund(order_id: str, amount: float, reason: str = "") -> dict[str, Any]:
    """Refunds part or all of an order (moves money)."""
    RAN.append("refund")
    return {"refunded": amount}


def ask_customer(question: str) -> None:
    """Asks the customer a question; the answer comes later."""
    RAN.append("ask_customer")


def issue_invoice(order_id: str) -> dict[str, Any]:
    """Issues a corrected invoice (sends an email)."""
    RAN.append("issue_invoice")
    return {"invoice": f"INV-{order_id}"}


def build(model: Any, billing_model: Any = None) -> LlmAgent:
    """The root agent on `model`; its billing sub-agent on `billing_model` (default: `model`)."""
    billing = LlmAgent(
        name="billing",
        model=billing_model or model,
        instruction="Fix invoices.",
        tools=[issue_invoice],
    )
    return LlmAgent(
        name="support",
        model=model,
        instruction="Help with orders. Look an order up before you refund it.",
        tools=[lookup_order, refund, LongRunningFunctionTool(ask_customer)],
        sub_agents=[billing],
    )
