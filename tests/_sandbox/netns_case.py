"""Run in a network namespace of its own (only loopback): a case whose tool reaches outside.

Prints the run's status and sandbox warnings as JSON. The tool's connection and
name lookup fail there (no route, no name server), as they never leave the
namespace; the model's own lookup is model traffic, which the sandbox lets be.
``python netns_case.py MODE thread``: the tool has a thread of its own open a URL
(a library function as the thread's target), instead of doing it itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import sys
import threading
import urllib.request
from collections.abc import AsyncGenerator

from google.adk.agents import LlmAgent

from adk_eval import EvalCase, run_eval
from adk_eval.testing import ScriptedLlm, tool_call


class LookingUpLlm(ScriptedLlm):
    """A scripted model that resolves its provider's name first, as a real client does."""

    async def generate_content_async(self, llm_request, stream=False) -> AsyncGenerator:  # type: ignore[override]
        with contextlib.suppress(OSError):
            socket.getaddrinfo("api.provider.example", 443)
        async for response in super().generate_content_async(llm_request, stream):
            yield response


def notify(order: str) -> dict:
    """Tells the warehouse."""
    outcome = {}
    for name, act in (
        ("lookup", lambda: socket.getaddrinfo("warehouse.example", 443)),
        ("connect", lambda: socket.create_connection(("203.0.113.5", 80), timeout=2).close()),
    ):
        try:
            act()
            outcome[name] = "ok"
        except OSError as error:
            outcome[name] = type(error).__name__
    return outcome


def notify_in_a_thread(order: str) -> dict:
    """Tells the warehouse, in the background."""
    url = "http://203.0.113.5/orders"
    thread = threading.Thread(target=urllib.request.urlopen, args=(url, None, 2))
    thread.start()
    thread.join()
    return {"sent": order}


async def main(mode: str, how: str) -> None:
    tool = notify_in_a_thread if how == "thread" else notify
    agent = LlmAgent(
        name="shop",
        model=LookingUpLlm([tool_call(tool.__name__, {"order": "A1"}), "Done."]),
        tools=[tool],
    )
    result = await run_eval(
        EvalCase(
            name="notifies",
            agent=agent,
            tool_mocks={tool.__name__: tool},
            first_message="Ship A1",
            sandbox=mode,
        )
    )
    calls = result.trace.tool_calls
    print(
        json.dumps(
            {
                "status": result.status,
                "warnings": list(result.warnings),
                "error": result.error.message if result.error else None,
                "tool": calls[0].response if calls else None,
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "itself"))
