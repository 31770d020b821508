"""The pacer: quota windows, provider blocks, AIMD concurrency, order and cancellation."""

from __future__ import annotations

import asyncio
import math
import random
import threading

import pytest

from adk_eval.models._pacing._failures import Failure
from adk_eval.models._pacing._limits import RateLimit
from adk_eval.models._pacing._pacer import MAX_BACKOFF, MIN_RETRY_WAIT, LocalPacer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def pacer() -> tuple[LocalPacer, Clock]:
    clock = Clock()
    return LocalPacer(clock=clock, rng=random.Random(7)), clock


THREE_PER_SECOND = RateLimit(rpm=180, window=1.0)


def test_a_window_admits_its_quota_then_holds_until_the_answers_are_a_window_old():
    pace, clock = pacer()
    grants = [pace.try_acquire("m", THREE_PER_SECOND) for _ in range(3)]
    assert all(grants)
    assert pace.try_acquire("m", THREE_PER_SECOND) is None
    clock.now += 5.0  # long after, but the three are still in flight: they hold their places
    assert pace.try_acquire("m", THREE_PER_SECOND) is None
    for grant in grants:
        pace.release(grant)
    assert pace.try_acquire("m", THREE_PER_SECOND) is None  # answered just now
    clock.now += 0.99
    assert pace.try_acquire("m", THREE_PER_SECOND) is None
    clock.now += 0.03  # a window and its margin after the answers
    assert pace.try_acquire("m", THREE_PER_SECOND) is not None


def test_keys_are_paced_apart():
    pace, _ = pacer()
    for _ in range(3):
        assert pace.try_acquire("a", THREE_PER_SECOND)
    assert pace.try_acquire("a", THREE_PER_SECOND) is None
    assert pace.try_acquire("b", THREE_PER_SECOND) is not None


def test_tokens_count_by_estimate_then_by_what_the_answer_used():
    pace, clock = pacer()
    limit = RateLimit(tpm=600, window=1.0)  # 10 tokens a window
    first = pace.try_acquire("m", limit, tokens=8)
    assert first is not None
    assert pace.try_acquire("m", limit, tokens=4) is None  # 8 + 4 > 10
    pace.release(first, tokens=3)  # it used less than estimated
    second = pace.try_acquire("m", limit, tokens=4)
    assert second is not None
    pace.release(second, tokens=4)
    assert pace.try_acquire("m", limit, tokens=4) is None  # 3 + 4 + 4 > 10
    clock.now += 1.02
    assert pace.try_acquire("m", limit, tokens=4) is not None


def test_a_request_larger_than_the_window_goes_alone():
    pace, _ = pacer()
    limit = RateLimit(tpm=600, window=1.0)
    assert pace.try_acquire("m", limit, tokens=50) is not None


def test_a_429_blocks_the_key_for_its_retry_after_and_halves_the_concurrency():
    pace, clock = pacer()
    grants = [pace.try_acquire("m", None) for _ in range(8)]
    assert pace.state("m").concurrency == math.inf
    pace.release(grants[0], failure=Failure("rate_limit", retry_after=5.0, status=429))
    state = pace.state("m")
    assert 5.0 <= state.blocked_for <= 5.25
    assert state.concurrency == 4.0  # half the eight in flight
    assert state.rate_limited == 1
    assert pace.try_acquire("m", None) is None
    clock.now += 5.3
    assert pace.try_acquire("m", None) is None  # seven in flight, four allowed
    for grant in grants[1:3]:
        pace.release(grant)
    assert pace.state("m").concurrency < 5  # five in flight: still too many
    assert pace.try_acquire("m", None) is None
    pace.release(grants[3])
    assert pace.try_acquire("m", None) is not None  # four in flight, 4.7 allowed


def test_successes_raise_the_concurrency_by_one_over_itself():
    pace, clock = pacer()
    grants = [pace.try_acquire("m", None) for _ in range(4)]
    pace.release(grants[0], failure=Failure("rate_limit", retry_after=0.0))
    assert pace.state("m").concurrency == 2.0
    clock.now += 1
    pace.release(grants[1])
    assert pace.state("m").concurrency == pytest.approx(2.5)
    pace.release(grants[2])
    assert pace.state("m").concurrency == pytest.approx(2.9)


def test_a_429_without_a_time_backs_off_exponentially_with_jitter():
    pace, clock = pacer()
    blocks = []
    for _ in range(9):
        grant = pace.try_acquire("m", None)
        if grant is None:
            clock.now += pace.state("m").blocked_for + 0.001
            grant = pace.try_acquire("m", None)
        assert grant is not None
        pace.release(grant, failure=Failure("rate_limit"))
        blocks.append(pace.state("m").blocked_for)
    for attempt, block in enumerate(blocks[:6]):
        ceiling = 2.0**attempt
        assert ceiling / 2 <= block <= ceiling
    assert max(blocks) <= MAX_BACKOFF
    clock.now += pace.state("m").blocked_for + 0.001
    success = pace.try_acquire("m", None)
    assert success is not None
    pace.release(success)  # a success starts the backoff over
    failure = pace.try_acquire("m", None)
    assert failure is not None
    pace.release(failure, failure=Failure("rate_limit"))
    assert 0.5 <= pace.state("m").blocked_for <= 1.0


@pytest.mark.parametrize("told", [0.0, 0.001, MIN_RETRY_WAIT / 2])
def test_a_429_that_says_retry_at_once_waits_the_floor_and_more_each_time(told):
    pace, clock = pacer()
    blocks = []
    for _ in range(4):
        clock.now += pace.state("m").blocked_for + 0.001
        grant = pace.try_acquire("m", None)
        assert grant is not None
        pace.release(grant, failure=Failure("rate_limit", retry_after=told))
        blocks.append(pace.state("m").blocked_for)
    for attempt, block in enumerate(blocks):  # 0.5-1, 1-2, 2-4, 4-8: never asked again at once
        assert MIN_RETRY_WAIT * 2**attempt <= block <= 2.0**attempt


def test_refusals_of_calls_already_in_flight_do_not_grow_the_backoff():
    pace, clock = pacer()
    grants = [pace.try_acquire("m", None) for _ in range(8)]
    for grant in grants:  # eight calls sent together, refused together: one refusal's backoff
        assert grant is not None
        pace.release(grant, failure=Failure("rate_limit"))
    assert 0.5 <= pace.state("m").blocked_for <= 1.0
    clock.now += pace.state("m").blocked_for + 0.001
    again = pace.try_acquire("m", None)  # sent after them: refused again, the backoff grows
    assert again is not None
    pace.release(again, failure=Failure("rate_limit"))
    assert 1.0 <= pace.state("m").blocked_for <= 2.0


def test_a_server_error_neither_blocks_nor_lowers_the_concurrency():
    pace, _ = pacer()
    grant = pace.try_acquire("m", None)
    assert grant is not None
    pace.release(grant, failure=Failure("server", status=503))
    state = pace.state("m")
    assert (state.blocked_for, state.concurrency, state.rate_limited) == (0.0, math.inf, 0)


async def test_waiters_go_in_the_order_they_came():
    pace = LocalPacer()
    limit = RateLimit(rpm=60 * 2 / 0.2, window=0.2)  # two a fifth of a second
    order: list[int] = []

    async def one(number: int) -> None:
        grant = await pace.acquire("m", limit)
        order.append(number)
        pace.release(grant)

    tasks = []
    for number in range(6):
        tasks.append(asyncio.create_task(one(number)))
        await asyncio.sleep(0)  # each asks after the one before
    await asyncio.gather(*tasks)
    assert order == list(range(6))


async def test_a_cancelled_waiter_gives_up_its_turn_to_the_next():
    pace = LocalPacer()
    first = pace.try_acquire("m", RateLimit(rpm=60, window=60.0))  # one a minute: taken
    assert first is not None
    pace.release(first, failure=Failure("rate_limit", retry_after=MIN_RETRY_WAIT))
    stuck = asyncio.create_task(pace.acquire("m", RateLimit(rpm=60, window=60.0)))
    await asyncio.sleep(0.01)
    stuck.cancel()
    with pytest.raises(asyncio.CancelledError):
        await stuck
    other = await asyncio.wait_for(pace.acquire("n", None), 1.0)  # another key: unaffected
    pace.release(other)
    later = asyncio.create_task(pace.acquire("m", None))  # no window for this call: the block only
    grant = await asyncio.wait_for(later, 5.0)
    assert grant.waited > 0.1  # it waited out the block, not the cancelled one's turn
    pace.release(grant)


async def test_a_release_in_another_thread_wakes_a_waiter_of_this_loop():
    pace = LocalPacer()
    held = [pace.try_acquire("m", None) for _ in range(2)]
    pace.release(held[0], failure=Failure("rate_limit", retry_after=MIN_RETRY_WAIT))
    waiting = asyncio.create_task(pace.acquire("m", None))
    await asyncio.sleep(MIN_RETRY_WAIT + 0.1)  # past the block: only the wake can end the wait
    assert not waiting.done()  # one in flight, concurrency 1

    def release_elsewhere() -> None:
        assert held[1] is not None
        pace.release(held[1])

    thread = threading.Thread(target=release_elsewhere)
    thread.start()
    thread.join()
    grant = await asyncio.wait_for(waiting, 5.0)
    pace.release(grant)
