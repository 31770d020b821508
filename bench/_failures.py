"""Runs that did not pass, built the way real runs end, by id (bench/labels/attribution.json).

Provider errors come from the libraries' own classes and their own wording:
openai's errors mapped by LiteLLM's ``exception_type`` (what `LiteLlm` raises),
google-genai's ``APIError.raise_for_response`` on an httpx response (what the
Gemini client raises), httpx against sockets on 127.0.0.1 (a refused port, a
server that never answers, one that hangs up). adk_eval's own errors are raised
from its classes; verdicts are the metrics' own result shapes. Each builder gives
``(status, error, metrics, modelled_user)``, what `attribute` reads.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any

import httpx

from adk_eval._errors import (
    MetricFailure,
)
from adk_eval._result._status import EvalErrorInfo
from adk_eval.metrics._fidelity import UserTurn, _result, deterministic_problems
from adk_eval.metrics._types import MetricResult

Failure = tuple[str, EvalErrorInfo | None, dict[str, MetricResult], bool]
OPENAI = "https://api.openai.com/v1/chat/completions"


def caught(action: Callable[[], Any]) -> BaseException:
    """What `action` raised (it must raise)."""
    try:
        action()
    except Exception as error:
        return error
    raise AssertionError(f"{action} did not raise")


def openai_error(
    kind: str, status: int | None, message: str, code: str | None = None
) -> BaseException:
    """openai's `kind` error for an answer with `status`, as LiteLLM maps and raises it."""
    import litellm
    import openai
    from litellm.litellm_core_utils.exception_mapping_utils import exception_type

    litellm.suppress_debug_info = True
    request = httpx.Request("POST", OPENAI)
    if status is None:  # raised before any answer
        original = (
            getattr(openai, kind)(request=request)
            if kind != "OpenAIError"
            else openai.OpenAIError(message)
        )
    else:
        body = {
            "message": message,
            "type": "server_error" if status >= 500 else "invalid_request_error",
            "code": code,
        }
        response = httpx.Response(status, request=request, json={"error": body})
        original = getattr(openai, kind)(
            f"Error code: {status} - {{'error': {body}}}", response=response, body=body
        )
    return caught(
        lambda: exception_type(
            model="gpt-4o", original_exception=original, custom_llm_provider="openai"
        )
    )


def gemini_error(status: int, state: str, message: str) -> BaseException:
    """google-genai's error for an answer with `status`, as its client raises it."""
    from google.genai import errors

    request = httpx.Request(
        "POST",
        "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent",
    )
    body = {"error": {"code": status, "message": message, "status": state}}
    return caught(
        lambda: errors.APIError.raise_for_response(
            httpx.Response(status, request=request, json=body)
        )
    )


def genai_without_key() -> BaseException:
    from google import genai

    saved = {k: os.environ.pop(k) for k in ("GOOGLE_API_KEY", "GEMINI_API_KEY") if k in os.environ}
    try:
        return caught(genai.Client)
    finally:
        os.environ.update(saved)


@contextlib.contextmanager
def server(answer: bytes | None) -> Iterator[str]:
    """A socket on 127.0.0.1 that reads a request, then answers `answer`.

    None: it never answers; ``b""``: it hangs up.
    """
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    done = threading.Event()

    def serve() -> None:
        connection, _ = listener.accept()
        connection.recv(65536)
        if answer is None:
            done.wait(5)
        elif answer:
            connection.sendall(answer)
        connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1/chat/completions"
    finally:
        done.set()
        thread.join(5)
        listener.close()


def httpx_error(answer: bytes | None) -> BaseException:
    with server(answer) as url:
        return caught(lambda: httpx.post(url, json={}, timeout=0.2).raise_for_status())


def refused() -> BaseException:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # nothing listens there now
    return caught(lambda: httpx.post(f"http://127.0.0.1:{port}/v1/chat/completions", json={}))


def error(phase: str, raised: BaseException, status: str = "error") -> Failure:
    return status, EvalErrorInfo.from_exception(phase, raised), {}, True  # type: ignore[arg-type]


def judged(name: str, raised: BaseException) -> Failure:
    failure = MetricFailure(name, raised)  # type: ignore[arg-type]
    return "error", EvalErrorInfo("metric", str(failure), type(raised).__name__), {}, True


def verdicts(fidelity: MetricResult | None, modelled: bool = True, **failed: str) -> Failure:
    metrics = {name: MetricResult(passed=False, evidence=[why]) for name, why in failed.items()}
    if fidelity is not None:
        metrics["user_fidelity"] = fidelity
    return "failed", None, metrics, modelled


def by_rule(prompt: str, reply: str, number: int = 1) -> MetricResult:
    return _result(deterministic_problems([UserTurn(number, prompt, reply)]), "checked by rule")


def by_judge(problem: str, quote: str) -> MetricResult:
    turn = {"turn": 2, "in_role": False, "problem": problem, "quote": quote}
    return _result([turn], "checked by rule and judge")


def output_schema_error() -> BaseException:
    from pydantic import BaseModel

    class Booking(BaseModel):
        day: str
        room: int

    return caught(lambda: Booking.model_validate_json('{"day": "Tuesday", "room": "the blue one"}'))


def anthropic_overloaded() -> BaseException:
    import litellm

    litellm.suppress_debug_info = True
    return litellm.InternalServerError(
        message=(
            'AnthropicException - {"type":"error","error":{"type":"overloaded_error",'
            '"message":"Overloaded"}}. Handle with `litellm.InternalServerError`.'
        ),
        llm_provider="anthropic",
        model="claude-sonnet-4-5",
    )
