"""A fake model provider on 127.0.0.1 that speaks OpenAI's and Gemini's wire formats.

For tests and benchmarks of the *real* client code (ADK's `LiteLlm` and
`Gemini`) where no provider can be reached. It is a public testing tool::

    with FakeProviderServer([tool_reply("add", {"a": 2, "b": 2}), text_reply("4")]) as server:
        model = LiteLlm(model="openai/fake", api_base=server.openai_base, api_key="x")
        ...
    server.requests  # every request body, in order

Routes: ``POST /v1/chat/completions`` (OpenAI chat completions, non-streaming)
and ``POST /v1beta/models/{model}:generateContent`` (Gemini). Like
`ScriptedLlm`, the reply is chosen from the request (how many assistant turns
it already holds), so one server serves concurrent conversations. A
``responder(request) -> FakeReply`` function can decide instead (failures,
per-request logic). ``python -m adk_eval.fake_provider --delay 0.2`` runs one
in its own process.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

from ._errors import EvalSetupError

__all__ = [
    "FakeProviderServer",
    "FakeReply",
    "FakeRequest",
    "error_reply",
    "raw_reply",
    "text_reply",
    "tool_reply",
]


@dataclass(frozen=True)
class FakeReply:
    """What the fake provider answers.

    Attributes:
        text: Assistant text.
        tool_calls: ``(name, args)`` pairs, answered as tool calls.
        status: HTTP status; not 200 sends an error body with `text` as message.
        body: A raw body sent as is (for malformed replies).
        delay: Seconds to wait before answering (on top of the server's delay).
        prompt_tokens, completion_tokens, cached_tokens: The usage reported (input,
            output, and the input tokens served from the provider's cache).
    """

    text: str | None = None
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200
    body: str | None = None
    delay: float = 0.0
    prompt_tokens: int = 10
    completion_tokens: int = 5
    cached_tokens: int = 0


@dataclass(frozen=True)
class FakeRequest:
    """A request the fake provider received.

    Attributes:
        api: ``"openai"`` or ``"gemini"``.
        body: The JSON body.
        model: The model named in the request.
        turn: How many assistant (model) turns the request already holds.
        waited: Seconds the server waited before answering (delay, jitter and
            the reply's own delay).
    """

    api: str
    body: dict[str, Any]
    model: str
    turn: int
    waited: float = 0.0


def text_reply(text: str, **kwargs: Any) -> FakeReply:
    """A plain text answer."""
    return FakeReply(text=text, **kwargs)


def tool_reply(name: str, args: dict[str, Any] | None = None, **kwargs: Any) -> FakeReply:
    """One tool call (pass ``tool_calls=`` to `FakeReply` for several)."""
    return FakeReply(tool_calls=((name, dict(args or {})),), **kwargs)


def error_reply(status: int, message: str = "fake provider error", **kwargs: Any) -> FakeReply:
    """An HTTP error with the provider's usual error body."""
    return FakeReply(text=message, status=status, **kwargs)


def raw_reply(body: str, status: int = 200, **kwargs: Any) -> FakeReply:
    """A body sent exactly as given (for example, not JSON)."""
    return FakeReply(body=body, status=status, **kwargs)


Responder = Callable[[FakeRequest], FakeReply]


def _openai_turn(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


def _gemini_turn(body: dict[str, Any]) -> int:
    return sum(1 for c in body.get("contents", []) if c.get("role") == "model")


def _openai_body(reply: FakeReply, model: str, ids: itertools.count[int]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": f"call_{next(ids)}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for name, args in reply.tool_calls
        ]
    usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
    usage["total_tokens"] = reply.prompt_tokens + reply.completion_tokens
    return {
        "id": f"chatcmpl-{next(ids)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": {**usage, "prompt_tokens_details": {"cached_tokens": reply.cached_tokens}},
    }


def _gemini_body(reply: FakeReply, model: str) -> dict[str, Any]:
    parts: list[dict[str, Any]] = []
    if reply.text:
        parts.append({"text": reply.text})
    parts += [{"functionCall": {"name": name, "args": args}} for name, args in reply.tool_calls]
    return {
        "candidates": [
            {"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {
            "promptTokenCount": reply.prompt_tokens,
            "candidatesTokenCount": reply.completion_tokens,
            "totalTokenCount": reply.prompt_tokens + reply.completion_tokens,
            "cachedContentTokenCount": reply.cached_tokens,
        },
        "modelVersion": model,
    }


def _error_body(api: str, reply: FakeReply) -> dict[str, Any]:
    message = reply.text or "fake provider error"
    if api == "gemini":
        return {"error": {"code": reply.status, "message": message, "status": "UNAVAILABLE"}}
    return {"error": {"message": message, "type": "fake_error", "code": reply.status}}


class FakeProviderServer:
    """A fake provider on a free port of 127.0.0.1, served from a background thread.

    Args:
        script: Replies by turn: the request's number of assistant turns picks
            one (the last one repeats). Strings are text replies.
        responder: Decides the reply from the request instead of `script`.
        delay: Seconds every answer waits (like a real provider's latency).
        jitter: Spread of that wait: each answer waits ``delay`` times a factor
            drawn uniformly from ``[1 - jitter, 1 + jitter]`` (mean ``delay``);
            0 waits exactly ``delay``. Real latencies vary; a fixed one keeps
            concurrent clients in lockstep.
        seed: Seed of the jitter's random numbers (runs repeat exactly).
        host: Interface to bind (loopback).
    """

    def __init__(
        self,
        script: Sequence[FakeReply | str] | None = None,
        *,
        responder: Responder | None = None,
        delay: float = 0.0,
        jitter: float = 0.0,
        seed: int = 0,
        host: str = "127.0.0.1",
    ) -> None:
        if not 0.0 <= jitter <= 1.0:
            raise EvalSetupError(f"jitter must be between 0 and 1, got {jitter}")
        if (script is None) == (responder is None):
            raise EvalSetupError("give FakeProviderServer a script or a responder (one of them)")
        if script is not None and not script:
            raise EvalSetupError("the script is empty")
        self.script = [text_reply(s) if isinstance(s, str) else s for s in script or []]
        self.responder = responder
        self.delay = delay
        self.jitter = jitter
        self._random = random.Random(seed)
        self.host = host
        self.requests: list[FakeRequest] = []
        self._ids = itertools.count(1)
        self._server: Any = None
        self._thread: threading.Thread | None = None
        self._socket: socket.socket | None = None
        # The serving thread's event loop, and the event stop() sets there to cut delays short.
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping: asyncio.Event | None = None
        self.port = 0

    # -- addresses ----------------------------------------------------------------

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        """The OpenAI-compatible base URL (``api_base`` for LiteLLM)."""
        return f"{self.url}/v1"

    @property
    def gemini_base(self) -> str:
        """The Gemini base URL (``Gemini(base_url=...)``)."""
        return self.url

    # -- answering ----------------------------------------------------------------

    def _reply_for(self, request: FakeRequest) -> FakeReply:
        if self.responder is not None:
            return self.responder(request)
        return self.script[min(request.turn, len(self.script) - 1)]

    async def _wait(self, seconds: float) -> bool:
        """Waits `seconds`; False when stop() cut the wait short."""
        stopping = self._stopping
        if stopping is None:  # app() served by someone else's server: nothing cuts it short
            await asyncio.sleep(seconds)
            return True
        try:
            await asyncio.wait_for(stopping.wait(), seconds)
        except TimeoutError:
            return True
        return False

    def app(self) -> Any:
        """The ASGI app (Starlette)."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def answer(api: str, request: Request) -> Response:
            try:
                body = await request.json()
            except json.JSONDecodeError:
                return JSONResponse({"error": {"message": "the body is not JSON"}}, 400)
            if api == "openai":
                model, turn = str(body.get("model", "")), _openai_turn(body)
            else:
                model, turn = request.path_params["model"], _gemini_turn(body)
            received = FakeRequest(api=api, body=body, model=model, turn=turn)
            reply = self._reply_for(received)
            spread = self._random.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
            received = replace(received, waited=self.delay * spread + reply.delay)
            self.requests.append(received)
            if received.waited > 0 and not await self._wait(received.waited):
                # stop() dropped this reply: the server is going away.
                stopped = FakeReply(text="the fake provider stopped", status=503)
                return JSONResponse(_error_body(api, stopped), 503)
            if reply.body is not None:
                return Response(reply.body, reply.status, media_type="application/json")
            if reply.status != 200:
                return JSONResponse(_error_body(api, reply), reply.status)
            if api == "openai":
                return JSONResponse(_openai_body(reply, model, self._ids))
            return JSONResponse(_gemini_body(reply, model))

        async def openai(request: Request) -> Response:
            return await answer("openai", request)

        async def gemini(request: Request) -> Response:
            return await answer("gemini", request)

        return Starlette(
            routes=[
                Route("/v1/chat/completions", openai, methods=["POST"]),
                Route("/chat/completions", openai, methods=["POST"]),
                Route("/{version}/models/{model}:generateContent", gemini, methods=["POST"]),
            ]
        )

    # -- lifecycle ----------------------------------------------------------------

    def start(self) -> FakeProviderServer:
        """Starts serving; returns when the port accepts connections."""
        import uvicorn

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(
            self.app(), log_level="warning", access_log=False, timeout_keep_alive=30
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._serve, args=(self._server, sock), daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the fake provider did not start")
            time.sleep(0.01)
        return self

    def _serve(self, server: Any, sock: socket.socket) -> None:
        async def serve() -> None:
            self._loop = asyncio.get_running_loop()
            self._stopping = asyncio.Event()
            await server.serve(sockets=[sock])

        asyncio.run(serve())

    def stop(self) -> None:
        """Stops serving at once: the port is closed when it returns.

        Replies still waiting out a delay are dropped, not awaited: a client still
        waiting for one gets a 503 ("the fake provider stopped") right away.
        """
        if self._server is not None:
            self._server.should_exit = True
        loop, stopping = self._loop, self._stopping
        if loop is not None and stopping is not None:
            with contextlib.suppress(RuntimeError):  # RuntimeError: the event loop has ended
                loop.call_soon_threadsafe(stopping.set)
        if self._thread is not None:
            self._thread.join(30)
        if self._socket is not None:
            self._socket.close()
        self._server = self._thread = self._socket = None
        self._loop = self._stopping = None

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def main(argv: Sequence[str] | None = None) -> None:
    """``python -m adk_eval.fake_provider``: serve text replies until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per answer")
    parser.add_argument(
        "--jitter", type=float, default=0.0, help="spread of the delay: 0.5 is delay x [0.5, 1.5]"
    )
    parser.add_argument("--calls", type=int, default=1, help="tool calls before the text answer")
    args = parser.parse_args(argv)
    script: list[FakeReply | str] = [
        tool_reply("lookup", {"key": f"k{i}"}) for i in range(args.calls)
    ] + ["done"]
    import uvicorn

    server = FakeProviderServer(script, delay=args.delay, jitter=args.jitter)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", args.port))
    print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
    uvicorn.Server(
        uvicorn.Config(server.app(), log_level="warning", access_log=False, backlog=4096)
    ).run(sockets=[sock])


if __name__ == "__main__":
    main()
