"""`StudioPlugin` against studios that misbehave: one error type, and `timeout` is the bound.

What the app sees is checked the documented way: ``except StudioUnavailableError``
around ``with unwrap_studio_errors():`` (ADK wraps a plugin's error in a RuntimeError).
"""

from __future__ import annotations

import asyncio
import socket
import time
from contextlib import nullcontext

import pytest
from google.adk.agents import LlmAgent
from google.adk.apps import App
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from adk_eval.studio import StudioPlugin, StudioUnavailableError, unwrap_studio_errors
from adk_eval.testing import ScriptedLlm

from ..conftest import serving


def studio(create=None, answer=None) -> Starlette:
    """A fake studio: `create` answers the model call, `answer` each wait for its answer."""

    async def created(request: Request) -> Response:
        return await create(request) if create else JSONResponse({"request_id": "r1"})

    async def answered(request: Request) -> Response:
        if answer:
            return await answer(request)
        await asyncio.sleep(min(float(request.query_params["wait"]), 0.2))
        return Response(status_code=204)  # no answer yet

    return Starlette(
        routes=[
            Route("/api/remote/model-requests", created, methods=["POST"]),
            Route("/api/remote/model-requests/{rid}/answer", answered),
        ]
    )


async def run_app(url: str, *, unwrap: bool = True, **plugin: object) -> list[str]:
    """One targeted model call through an App with the plugin (as docs/studio.md shows it)."""
    agent = LlmAgent(name="triage", model=ScriptedLlm(["the real model must not answer"]))
    app = App(name="their_app", root_agent=agent, plugins=[StudioPlugin(url, "t", **plugin)])
    service = InMemorySessionService()
    runner = Runner(app=app, session_service=service)
    session = await service.create_session(app_name="their_app", user_id="u")
    texts: list[str] = []
    try:
        with unwrap_studio_errors() if unwrap else nullcontext():
            async for event in runner.run_async(
                user_id="u",
                session_id=session.id,
                new_message=types.Content(role="user", parts=[types.Part(text="hi")]),
            ):
                texts += [p.text for p in (event.content.parts if event.content else []) if p.text]
    finally:
        await runner.close()
    return texts


async def call_model(url: str, **plugin: object) -> StudioUnavailableError | list[str]:
    """The texts of one targeted model call, or the `StudioUnavailableError` the app caught."""
    try:
        return await run_app(url, **plugin)
    except StudioUnavailableError as error:  # the documented except
        return error


def raised(outcome: object) -> StudioUnavailableError:
    assert isinstance(outcome, StudioUnavailableError), repr(outcome)
    return outcome


async def test_adk_wraps_the_plugins_error_and_unwrap_studio_errors_raises_it_as_itself():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    with pytest.raises(RuntimeError) as wrapped:  # ADK 2.13: "Error in plugin ..."
        await run_app(closed, unwrap=False, timeout=10)
    assert not isinstance(wrapped.value, StudioUnavailableError)
    assert isinstance(wrapped.value.__cause__, StudioUnavailableError)
    with pytest.raises(StudioUnavailableError, match="failed: All connection attempts failed"):
        await run_app(closed, timeout=10)


def test_unwrap_studio_errors_leaves_other_errors_alone():
    for error in (RuntimeError("boom"), ValueError("bad")):
        with pytest.raises(type(error)) as caught, unwrap_studio_errors():
            raise error
        assert caught.value is error
    unavailable = StudioUnavailableError("not reachable")
    with pytest.raises(StudioUnavailableError) as caught, unwrap_studio_errors():
        raise unavailable
    assert caught.value is unavailable


@pytest.mark.slow
async def test_a_studio_that_never_answers_is_given_up_on_after_timeout():
    with serving(studio()) as url:
        started = time.monotonic()
        outcome = await call_model(url, timeout=2, poll_seconds=25)
        took = time.monotonic() - started
    assert "gave no answer within 2 s" in str(raised(outcome))
    assert took < 4, f"timeout=2 gave up after {took:.1f} s"


@pytest.mark.slow  # a few seconds of processes: make test runs it
async def test_a_studio_that_hangs_on_the_first_request_is_bounded_by_timeout_too():
    async def hang(request: Request) -> Response:
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    with serving(studio(create=hang)) as url:
        started = time.monotonic()
        outcome = await call_model(url, timeout=3, poll_seconds=25)
        took = time.monotonic() - started
    assert "gave no answer within 3 s" in str(raised(outcome))
    assert took < 5, f"timeout=3 gave up after {took:.1f} s"


def reply(body: object, status: int = 200):
    async def respond(request: Request) -> Response:
        if isinstance(body, str):
            return PlainTextResponse(body, status_code=status)
        return JSONResponse(body, status_code=status)

    return respond


@pytest.mark.parametrize(
    ("create", "answer", "what"),
    [
        (reply("ok"), None, "the model call"),
        (reply([1, 2]), None, "the model call"),
        (reply({"request_id": 5}), None, "the model call"),
        (reply({"id": "r1"}), None, "the model call"),
        (None, reply("<html>proxy</html>"), "the wait for an answer"),
        (None, reply({"answer": "Call 999."}), "the wait for an answer"),
        (None, reply({"answer": {"type": "bogus"}}), "the wait for an answer"),
        (None, reply({"answer": {"type": "tool_calls", "calls": [{"name": 1}]}}), "the wait"),
    ],
)
async def test_garbage_from_the_studio_is_a_studio_unavailable_error(create, answer, what):
    with serving(studio(create, answer)) as url:
        error = raised(await call_model(url, timeout=10, poll_seconds=1))
    assert f"answered {what}" in str(error)
    assert "not the studio protocol" in str(error)


async def test_refusals_and_an_unreachable_studio_are_the_same_error():
    with serving(studio(create=reply({"error": "bad token"}, 401))) as url:
        assert "401" in str(raised(await call_model(url, timeout=10)))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{probe.getsockname()[1]}"
    assert "failed" in str(raised(await call_model(closed, timeout=10)))


async def test_a_proper_answer_still_comes_back_as_the_models_response():
    with serving(studio(answer=reply({"answer": {"type": "text", "text": "Call 999."}}))) as url:
        assert await call_model(url, timeout=10) == ["Call 999."]
