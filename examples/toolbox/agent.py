"""Agents to play in the studio, with one tool for each kind of form field.

`root_agent` (the toolbox) has a tool per seed-003 scenario: ``add`` (two
integers), ``search`` (a required text and an optional number with a default),
``export_report`` (an enum), ``create_order`` (nested objects and an array),
``fetch_data`` (always raises ``ConnectionError``) and ``slow_lookup`` (an async
tool that takes a while, to cancel). `structured_agent` has an input and an
output schema.

The model is a scripted stand-in: in the studio a person answers every model
call, and under `adk eval` it replays additions ("What is 5+3?" -> ``add`` ->
"The answer is 8.") so exported goldens of additions pass.
"""

from __future__ import annotations

import asyncio
import re
from typing import Literal

from google.adk.agents import LlmAgent
from google.adk.models.llm_request import LlmRequest
from pydantic import BaseModel, Field

from adk_eval.testing import ScriptedLlm, tool_call


def add(a: int, b: int) -> dict:
    """Adds two integers.

    Args:
        a: The first number.
        b: The second number.
    """
    return {"result": a + b}


def search(query: str, limit: int = 10) -> dict:
    """Searches the knowledge base.

    Args:
        query: What to look for.
        limit: How many results at most.
    """
    return {"query": query, "results": [f"{query} result {i + 1}" for i in range(min(limit, 3))]}


def export_report(format: Literal["json", "xml"]) -> dict:
    """Exports the current report.

    Args:
        format: The file format.
    """
    return {"exported": f"report.{format}"}


class Item(BaseModel):
    """One line of an order."""

    sku: str = Field(description="Product code")
    quantity: int = Field(default=1, description="How many")


class Address(BaseModel):
    """Where to ship."""

    street: str
    city: str
    postcode: str | None = None


class Order(BaseModel):
    """An order to place."""

    customer: str = Field(description="Customer name")
    items: list[Item] = Field(description="What to ship")
    ship_to: Address
    express: bool = False


def create_order(order: Order) -> dict:
    """Places an order.

    Args:
        order: The order.
    """
    return {
        "order_id": "o-1001",
        "lines": len(order.items),
        "city": order.ship_to.city,
        "express": order.express,
    }


def fetch_data(url: str) -> dict:
    """Fetches data from a URL (always fails here: there is no network).

    Args:
        url: Where to fetch from.
    """
    raise ConnectionError(f"cannot reach {url}")


async def slow_lookup(seconds: float = 30.0) -> dict:
    """Looks something up slowly.

    Args:
        seconds: How long the lookup takes.
    """
    await asyncio.sleep(seconds)
    return {"done": True, "seconds": seconds}


_ADDITION = re.compile(r"(-?\d+)\s*\+\s*(-?\d+)")


def replay_additions(request: LlmRequest) -> object:
    """The stand-in model: calls ``add`` for "A+B", then reports the result."""
    last = request.contents[-1] if request.contents else None
    for part in (last.parts or []) if last else []:
        if part.function_response is not None:
            return f"The answer is {dict(part.function_response.response or {}).get('result')}."
    text = "".join(p.text or "" for p in (last.parts or [])) if last else ""
    match = _ADDITION.search(text)
    if match is None:
        return "I can only add numbers on my own."
    return tool_call("add", {"a": int(match.group(1)), "b": int(match.group(2))})


root_agent = LlmAgent(
    name="toolbox",
    description="An assistant with one tool of every kind.",
    model=ScriptedLlm(responder=replay_additions, model="scripted-toolbox"),
    instruction=(
        "You help the user with calculations, searches, reports and orders. "
        "Use the tools; tell the user plainly what happened."
    ),
    tools=[add, search, export_report, create_order, fetch_data, slow_lookup],
)


class QueryInput(BaseModel):
    """What the structured agent is asked."""

    query: str = Field(description="The question")
    max_results: int = Field(description="How many results to consider")


class StructuredResult(BaseModel):
    """What the structured agent answers."""

    answer: str = Field(description="The answer")
    confidence: float = Field(description="From 0 to 1")


structured_agent = LlmAgent(
    name="structured",
    description="Takes a structured query and gives a structured answer.",
    model=ScriptedLlm(['{"answer": "unknown", "confidence": 0.0}'], model="scripted-structured"),
    instruction="Answer the query.",
    input_schema=QueryInput,
    output_schema=StructuredResult,
)
