"""The benchmark agent: LiteLlm against the fake provider named by ``BENCH_PROVIDER_URL``."""

from __future__ import annotations

import os

from google.adk.agents import LlmAgent
from google.adk.models.lite_llm import LiteLlm


def lookup(key: str) -> dict:
    """Looks a key up."""
    return {"value": key}


root_agent = LlmAgent(
    name="adk_agent",
    model=LiteLlm(
        model="openai/fake",
        api_base=f"{os.environ.get('BENCH_PROVIDER_URL', 'http://127.0.0.1:9')}/v1",
        api_key="bench",
        _skip_mcp_handler=True,
    ),
    tools=[lookup],
    instruction="Use lookup.",
)
