"""One pacer for a suite's processes: the parent serves it on a Unix socket, workers ask it.

The first tests run the server and its clients in this process, on other threads and
event loops; the last ones run real suites on worker processes (and Ray tasks) whose
model calls, through ADK's real `LiteLlm`, go to a fake provider with a quota.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from adk_eval import Ray, Workers, run_eval_suite
from adk_eval._suites._discovery import import_file
from adk_eval.fake_provider import FakeProviderServer, Quota
from adk_eval.models._gateway._settings import ModelCalls
from adk_eval.models._pacing._failures import Failure
from adk_eval.models._pacing._limits import RateLimit
from adk_eval.models._pacing._pacer import LocalPacer, Pacer
from adk_eval.models._pacing._ray import PacerActor
from adk_eval.models._pacing._shared import (
    PACER_ENV,
    PacerClient,
    SharedPacer,
    handed_pacer,
    serve_pacer,
)

from ..._suites._ray.test_executor import ray_head  # noqa: F401  (a fixture: a Ray head on 127.0.0.1)

SERVER_ERROR = Failure("server", status=503)
"""A release that leaves the concurrency as it is (a success would raise it)."""


def eventually(check: Callable[[], bool], what: str) -> None:
    """Waits until `check()` holds (other threads and processes answer when they do)."""
    deadline = time.monotonic() + 10
    while not check():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.002)


def queued(pacer: Pacer, key: str) -> int:
    return len(pacer._keys[key].queue) if key in pacer._keys else 0


@pytest.fixture
def served() -> Iterator[tuple[Pacer, SharedPacer]]:
    pacer = LocalPacer()
    with serve_pacer(pacer) as shared:
        yield pacer, shared


class Loop:
    """An event loop on a thread of its own (a worker's loop, as the client sees it)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def task(self, coroutine) -> asyncio.Task:
        """`coroutine` as a task of this loop (cancel it with `cancel`)."""

        async def start() -> asyncio.Task:
            return asyncio.ensure_future(coroutine)

        return self.run(start()).result()

    def cancel(self, task: asyncio.Task) -> None:
        self.loop.call_soon_threadsafe(task.cancel)

    def block(self) -> threading.Event:
        """Holds the loop until the returned event is set (what it has to do waits)."""
        free = threading.Event()
        self.loop.call_soon_threadsafe(free.wait)
        return free

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        self.loop.close()


@pytest.fixture
def other_loop() -> Iterator[Loop]:
    loop = Loop()
    yield loop
    loop.close()


def one_at_a_time(pacer: Pacer, key: str):
    """Teaches `key` a concurrency of 1 (a 429), and holds its one place."""
    taught = pacer.try_acquire(key, None)
    pacer.release(taught, failure=Failure("rate_limit", retry_after=0.0, status=429))
    pacer._keys[key].blocked_until = 0.0  # the 429's block (half a second at least) waited out
    held = pacer.try_acquire(key, None)
    assert held is not None
    assert pacer.state(key).concurrency == 1.0
    return held


async def test_grants_come_in_the_order_asked_across_clients_and_loops(served, other_loop):
    pacer, shared = served
    first, second = PacerClient(shared.address), PacerClient(shared.address)
    held = one_at_a_time(pacer, "m")
    order: list[str] = []

    async def turn(client: PacerClient, name: str) -> None:
        grant = await client.acquire("m", None)
        order.append(name)
        client.release(grant, failure=SERVER_ERROR)

    waits = []
    for number, (client, name) in enumerate(
        [(first, "a1"), (second, "b1"), (first, "a2"), (second, "b2")], start=1
    ):
        if client is first:  # asked from another thread's event loop
            waits.append(asyncio.wrap_future(other_loop.run(turn(client, name))))
        else:
            waits.append(asyncio.ensure_future(turn(client, name)))
        await asyncio.to_thread(eventually, lambda n=number: queued(pacer, "m") == n, "queued")
    pacer.release(held, failure=SERVER_ERROR)
    await asyncio.gather(*waits)

    assert order == ["a1", "b1", "a2", "b2"]
    await asyncio.to_thread(eventually, lambda: pacer.state("m").in_flight == 0, "released")


async def test_a_cancelled_wait_gives_up_its_turn(served):
    pacer, shared = served
    client = PacerClient(shared.address)
    held = one_at_a_time(pacer, "m")
    waiting = asyncio.ensure_future(client.acquire("m", None))
    await asyncio.to_thread(eventually, lambda: queued(pacer, "m") == 1, "queued")

    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.to_thread(eventually, lambda: queued(pacer, "m") == 0, "the wait ended")
    pacer.release(held, failure=SERVER_ERROR)

    assert pacer.state("m").in_flight == 0  # the cancelled wait took no place
    grant = await client.acquire("m", None)
    assert pacer.state("m").in_flight == 1
    client.release(grant)
    await asyncio.to_thread(eventually, lambda: pacer.state("m").in_flight == 0, "released")


@pytest.mark.parametrize("first", ["grant", "cancel"])
async def test_a_grant_that_reaches_a_caller_who_gave_up_is_released(served, other_loop, first):
    pacer, shared = served
    client = PacerClient(shared.address)
    held = one_at_a_time(pacer, "m")
    waiting = other_loop.task(client.acquire("m", None))
    await asyncio.to_thread(eventually, lambda: queued(pacer, "m") == 1, "queued")
    free = other_loop.block()  # the caller's loop hears nothing until `free`
    if first == "cancel":  # the caller gives up, then the grant arrives
        other_loop.cancel(waiting)
    pacer.release(held, failure=SERVER_ERROR)  # the server grants the waiting call
    await asyncio.to_thread(eventually, lambda: not client._waiting, "the grant reached it")
    if first == "grant":  # the grant arrives, then the caller gives up
        other_loop.cancel(waiting)
    assert pacer.state("m").in_flight == 1
    free.set()

    await asyncio.to_thread(eventually, waiting.done, "the caller ended")
    assert waiting.cancelled()
    await asyncio.to_thread(
        eventually, lambda: pacer.state("m").in_flight == 0, "the grant was released"
    )


async def test_a_429_one_client_meets_blocks_the_key_for_every_client(served):
    pacer, shared = served
    one, other = PacerClient(shared.address), PacerClient(shared.address)
    limit = RateLimit(rpm=6000, window=1.0)

    grant = await one.acquire("m", limit, tokens=10)
    one.release(grant, tokens=12, failure=Failure("rate_limit", retry_after=30.0, status=429))
    await asyncio.to_thread(eventually, lambda: pacer.state("m").rate_limited == 1, "heard")

    state = await asyncio.to_thread(other.state, "m")
    assert state.rate_limited == 1
    assert 29.0 < state.blocked_for <= 31.0
    assert state.concurrency == 1.0
    with pytest.raises(TimeoutError):  # blocked for half a minute: no grant comes
        await asyncio.wait_for(other.acquire("m", limit), 0.3)
    await asyncio.to_thread(eventually, lambda: queued(pacer, "m") == 0, "the wait ended")
    assert pacer.state("m").in_flight == 0


async def test_a_connection_that_drops_releases_its_grants_and_ends_its_waits(served):
    pacer, shared = served
    held = one_at_a_time(pacer, "m")
    pacer.release(held, failure=SERVER_ERROR)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as raw:  # the protocol, as written
        raw.connect(shared.address)
        requests = [
            {"op": "acquire", "id": n, "key": "m", "limit": None, "tokens": 0} for n in (1, 2)
        ]
        raw.sendall(b"".join(json.dumps(r).encode() + b"\n" for r in requests))
        answer = json.loads(raw.makefile().readline())
        assert answer["id"] == 1
        assert answer["waited"] >= 0
        await asyncio.to_thread(eventually, lambda: queued(pacer, "m") == 1, "the second waits")
        assert pacer.state("m").in_flight == 1
    await asyncio.to_thread(
        eventually,
        lambda: pacer.state("m").in_flight == 0 and queued(pacer, "m") == 0,
        "the dropped connection gave everything back",
    )


async def test_a_client_whose_server_is_gone_paces_alone_and_says_so_once(caplog):
    pacer = LocalPacer()
    shared = serve_pacer(pacer)
    client = PacerClient(shared.address)
    grant = await client.acquire("m", None)
    client.release(grant)
    shared.close()
    await asyncio.to_thread(eventually, lambda: client._lost, "the client heard it")

    with caplog.at_level(logging.WARNING):
        for _ in range(2):
            grant = await client.acquire("m", None)
            client.release(grant)
        refused = PacerClient(shared.address)  # nobody serves there any more
        grant = await refused.acquire("m", None)
    refused.release(grant)

    warnings = [r.getMessage() for r in caplog.records if "pacer" in r.getMessage()]
    assert len(warnings) == 2  # one per client
    assert "paces its model calls alone" in warnings[0]


async def test_the_ray_actor_gives_back_what_a_failed_task_held():
    actor = PacerActor()  # its methods, as Ray's async actor runs them
    held = one_at_a_time(actor.pacer, "m")
    actor.pacer.release(held, failure=SERVER_ERROR)
    assert await actor.acquire("task-1", 1, "m", None, 0.0) is not None
    waiting = asyncio.ensure_future(actor.acquire("task-1", 2, "m", None, 0.0))
    await asyncio.to_thread(eventually, lambda: queued(actor.pacer, "m") == 1, "queued")

    await actor.drop("task-1")  # the task failed

    assert await waiting is None
    assert actor.pacer.state("m").in_flight == 0
    assert queued(actor.pacer, "m") == 0
    assert await actor.acquire("task-2", 1, "m", None, 0.0) is not None


def test_a_worker_paces_on_the_pacer_its_parent_hands_it_else_on_its_own(served, monkeypatch):
    pacer, shared = served
    monkeypatch.setenv(PACER_ENV, shared.address)
    handed = handed_pacer()
    assert isinstance(handed, PacerClient)
    assert handed.address == shared.address
    grant = handed.try_acquire("m", None) or asyncio.run(handed.acquire("m", None))
    eventually(lambda: pacer.state("m").in_flight == 1, "the parent's pacer granted it")
    handed.release(grant)
    monkeypatch.delenv(PACER_ENV)
    assert isinstance(handed_pacer(), LocalPacer)


SUITE = """
import os

from google.adk.models.lite_llm import LiteLlm


def model():
    return LiteLlm(
        model="openai/fake-model",
        api_base=os.environ["ADK_EVAL_TEST_FAKE_BASE"],
        api_key="test-key",
        _skip_mcp_handler=True,
        num_retries=0,  # every 429 reaches the gateway (no retry in litellm)
    )


CASES = [
    EvalCase(
        name=f"hello-{i}",
        agent=LlmAgent(name="a", model=model()),
        first_message="hi",
        terminate_when=TerminateWhen(max_turns=1),
    )
    for i in range(20)
]
"""

FAKE_MODEL_LIMIT = {"openai/fake-model": RateLimit(rpm=300, window=1.0)}  # 5 a second

ONLY_WORKERS = Workers(2, run_while_starting=False)
"""Both worker processes call the provider at once (this process would run the suite alone
while they start)."""


@pytest.fixture
def provider(monkeypatch) -> Iterator[FakeProviderServer]:
    """A provider that admits 5 requests a second (its URL is in the cases' environment)."""
    with FakeProviderServer(["hello"], quota=Quota(requests=5, window=1.0)) as server:
        monkeypatch.setenv("ADK_EVAL_TEST_FAKE_BASE", server.openai_base)
        yield server


def passed(suite) -> bool:
    return suite.summary["passed"] == 20 and all(r.status == "passed" for r in suite.results)


@pytest.mark.slow
async def test_worker_processes_share_one_pacer_and_a_known_limit_is_never_refused(
    write_evals, provider
):
    module = import_file(write_evals({"pacing_eval.py": SUITE}) / "pacing_eval.py")

    known = ModelCalls(limits=FAKE_MODEL_LIMIT)
    suite = await run_eval_suite(
        module.CASES, executor=ONLY_WORKERS, max_concurrency=8, model_calls=known
    )

    assert passed(suite), [r.explain() for r in suite.results if r.status != "passed"]
    assert suite.placement == "2 worker process(es)"
    assert provider.max_admitted_in_any_window(1.0) <= 5
    assert provider.rejections == 0
    assert suite.provider.calls == 20


@pytest.mark.slow
async def test_worker_processes_share_what_429s_teach(write_evals, provider):
    module = import_file(write_evals({"learning_eval.py": SUITE}) / "learning_eval.py")

    workers = Workers(2, run_while_starting=False)
    suite = await run_eval_suite(module.CASES, executor=workers, max_concurrency=8)

    assert passed(suite), [r.explain() for r in suite.results if r.status != "passed"]
    assert suite.provider.rate_limited > 0
    assert suite.provider.rate_limited == provider.rejections
    # The workers' 429s taught the executor's pacer: the one this process served them.
    learned = workers.pacer.state(f"openai/fake-model at {provider.openai_base}")
    assert learned.rate_limited == provider.rejections
    assert learned.concurrency < 8
    assert provider.max_admitted_in_any_window(1.0) <= 5
    assert suite.provider.calls == 20


@pytest.mark.slow
async def test_ray_tasks_share_one_pacer_and_a_known_limit_is_never_refused(
    ray_head,  # noqa: F811
    tmp_path,
    monkeypatch,
    isolated_imports,
    provider,
):
    from ...conftest import CASE_HEADER

    monkeypatch.chdir(tmp_path)  # the suite's folder is shipped to the Ray workers
    path = tmp_path / "ray_pacing_eval.py"
    path.write_text(CASE_HEADER + SUITE)
    module = import_file(path)

    known = ModelCalls(limits=FAKE_MODEL_LIMIT)
    suite = await run_eval_suite(
        module.CASES, executor=Ray(address=ray_head), max_concurrency=4, model_calls=known
    )

    assert passed(suite), [r.explain() for r in suite.results if r.status != "passed"]
    assert provider.max_admitted_in_any_window(1.0) <= 5
    assert provider.rejections == 0
    assert suite.provider.calls == 20
