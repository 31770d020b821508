"""`FakeProviderServer`: the routes, the order a request goes through, and the lifecycle."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import socket
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from types import TracebackType
from typing import Any, TextIO

from .._errors import EvalSetupError
from .._seeds import DEFAULT_SEED
from ._quota import Quota, QuotaBook, max_in_any_window, rate_limited
from ._replies import (
    Api,
    FakeReply,
    FakeRequest,
    Responder,
    error_body,
    gemini_body,
    openai_body,
    prompt_tokens,
    text_reply,
    turn_of,
)

OVERLOADED = {
    "openai": "The server is overloaded or not ready yet.",
    "gemini": "The model is overloaded. Please try again later.",
}
"""What each provider says with a 503."""


class FakeProviderServer:
    """A fake provider on a free port of 127.0.0.1, served from a background thread.

    A request goes through, in order: the drawn server errors (`error_rate`), the
    reply (`script` or `responder`), the `quota`, then the wait (`delay`, `jitter`
    and the reply's own). Refused requests are answered at once.

    Args:
        script: Replies by turn: the request's number of assistant turns picks
            one (the last one repeats). Strings are text replies.
        responder: Decides the reply from the request instead of `script`. It is
            asked before the quota decides (the reply's completion tokens count
            against it), so it also sees requests the quota then refuses.
        delay: Seconds every answer waits (like a real provider's latency).
        jitter: Spread of that wait: each answer waits ``delay`` times a factor
            drawn uniformly from ``[1 - jitter, 1 + jitter]`` (mean ``delay``);
            0 waits exactly ``delay``. Real latencies vary; a fixed one keeps
            concurrent clients in lockstep.
        quota: Rate limits; a request over them gets a 429 saying when to retry.
            None: no limits.
        error_rate: The fraction of requests failed with a 503 (drawn per
            request, before the quota: a failed request spends no quota).
        seed: Seed of the jitter's and the errors' random numbers (runs repeat
            exactly).
        log: A file each request is appended to as it is decided, as one JSON
            line: ``time`` (seconds since the epoch it arrived), ``api``,
            ``model``, ``turn``, ``outcome``, ``status`` (of the answer),
            ``retry_after`` (the header sent, if any), ``tokens``, ``waited``
            and ``body`` (the request's JSON). None: `requests` only.
        host: Interface to bind (loopback).

    Attributes:
        requests: The server's log: every request received, in order of arrival,
            with its arrival time and outcome.
    """

    def __init__(
        self,
        script: Sequence[FakeReply | str] | None = None,
        *,
        responder: Responder | None = None,
        delay: float = 0.0,
        jitter: float = 0.0,
        quota: Quota | None = None,
        error_rate: float = 0.0,
        seed: int = DEFAULT_SEED,
        log: str | Path | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        if not 0.0 <= jitter <= 1.0:
            raise EvalSetupError(f"jitter must be between 0 and 1, got {jitter}")
        if not 0.0 <= error_rate <= 1.0:
            raise EvalSetupError(f"error_rate must be between 0 and 1, got {error_rate}")
        if (script is None) == (responder is None):
            raise EvalSetupError("give FakeProviderServer a script or a responder (one of them)")
        if script is not None and not script:
            raise EvalSetupError("the script is empty")
        self.script = [text_reply(s) if isinstance(s, str) else s for s in script or []]
        self.responder = responder
        self.delay = delay
        self.jitter = jitter
        self.quota = quota
        self.error_rate = error_rate
        self._random = random.Random(seed)
        # Their own stream, so that the jitter drawn does not depend on the error rate.
        self._errors = random.Random(f"errors-{seed}")
        self._book = QuotaBook(quota) if quota is not None else None
        self.host = host
        self.requests: list[FakeRequest] = []
        self.log = Path(log) if log is not None else None
        self._log_file: TextIO | None = None
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

    # -- the log ------------------------------------------------------------------

    @property
    def rejections(self) -> int:
        """How many requests were refused: 429s over the quota and drawn 503s."""
        return sum(1 for request in list(self.requests) if request.outcome != "admitted")

    def max_admitted_in_any_window(self, window: float, *, model: str | None = None) -> int:
        """The most admitted requests that arrived within any `window` seconds.

        Args:
            window: Length of the span, in seconds: spans are ``[t, t + window)``.
            model: Count only this model's requests; None: every model's.
        """
        arrivals = [
            request.arrived
            for request in list(self.requests)
            if request.outcome == "admitted" and model in (None, request.model)
        ]
        return max_in_any_window(arrivals, window)

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

    async def _answer(self, received: FakeRequest) -> Any:
        """The response to one request, logged in `requests` as it is decided."""
        from starlette.responses import JSONResponse, Response

        api, model = received.api, received.model
        if self.error_rate and self._errors.random() < self.error_rate:
            self._log(replace(received, outcome="server_error"), 503, {})
            return JSONResponse(error_body(api, 503, OVERLOADED[api]), 503)
        reply = self._reply_for(received)
        received = replace(
            received, tokens=prompt_tokens(api, received.body) + reply.completion_tokens
        )
        headers: dict[str, str] = {}
        if self._book is not None:
            refusal = self._book.admit(model, received.arrived, received.tokens)
            if api == "openai":
                headers = self._book.headers(model, received.arrived)
            if refusal is not None:
                body, retry = rate_limited(api, model, self._book.quota, refusal)
                self._log(replace(received, outcome="rate_limited"), 429, retry)
                return JSONResponse(body, 429, headers={**headers, **retry})
        headers.update(reply.headers)
        spread = self._random.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
        received = replace(received, waited=self.delay * spread + reply.delay)
        self._log(received, reply.status, headers)
        if received.waited > 0 and not await self._wait(received.waited):
            # stop() dropped this reply: the server is going away.
            return JSONResponse(error_body(api, 503, "the fake provider stopped"), 503)
        if reply.body is not None:
            return Response(reply.body, reply.status, headers, media_type="application/json")
        if reply.status != 200:
            body = error_body(api, reply.status, reply.text or "fake provider error")
            return JSONResponse(body, reply.status, headers)
        if api == "openai":
            return JSONResponse(openai_body(reply, model, self._ids), headers=headers)
        return JSONResponse(gemini_body(reply, model), headers=headers)

    def _log(self, request: FakeRequest, status: int, headers: dict[str, str]) -> None:
        """Adds `request` to `requests`, and a line to the `log` file when there is one."""
        self.requests.append(request)
        if self.log is None:
            return
        if self._log_file is None:
            self._log_file = self.log.open("a", encoding="utf-8")
        line = {
            "time": round(time.time() - (time.monotonic() - request.arrived), 6),
            "api": request.api,
            "model": request.model,
            "turn": request.turn,
            "outcome": request.outcome,
            "status": status,
            "retry_after": headers.get("retry-after"),
            "tokens": request.tokens,
            "waited": round(request.waited, 6),
            "body": request.body,
        }
        self._log_file.write(json.dumps(line) + "\n")
        self._log_file.flush()

    def close_log(self) -> None:
        """Closes the `log` file (`stop` does; the next request opens it again)."""
        if self._log_file is not None:
            self._log_file.close()
            self._log_file = None

    def app(self) -> Any:
        """The ASGI app (Starlette)."""
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response
        from starlette.routing import Route

        async def answer(api: Api, request: Request) -> Response:
            arrived = time.monotonic()
            try:
                body = await request.json()
            except json.JSONDecodeError:
                return JSONResponse({"error": {"message": "the body is not JSON"}}, 400)
            model = str(body.get("model", "")) if api == "openai" else request.path_params["model"]
            received = FakeRequest(
                api=api, body=body, model=model, turn=turn_of(api, body), arrived=arrived
            )
            response: Response = await self._answer(received)
            return response

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

        from .._sandbox._serving import PromptServer

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        self._socket = sock
        config = uvicorn.Config(
            self.app(), log_level="warning", access_log=False, timeout_keep_alive=30
        )
        self._server = PromptServer(config)
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
            self._server.stop()
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
        self.close_log()

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
