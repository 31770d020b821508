"""Calling user code that may be sync or async (mocks, bridges, metrics, scripts).

Sync user code runs in a worker thread, never on the event loop: a mock that
blocks (a ``time.sleep``, a slow file) delays its own run only, not every other
case of a suite sharing the loop. Context variables reach the thread.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

import anyio.to_thread

__all__ = ["call_user", "maybe_await"]


async def maybe_await(value: Any) -> Any:
    """Returns `value`, awaiting it first if it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


def _is_async(function: Callable[..., Any]) -> bool:
    target = inspect.unwrap(function)
    if isinstance(target, functools.partial):
        target = target.func
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


async def call_user(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Calls user code: async code on the loop, sync code in a worker thread.

    Whatever comes back awaitable (a sync function returning a coroutine) is
    awaited on the loop.
    """
    if _is_async(function):
        return await function(*args, **kwargs)
    result = await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))
    return await maybe_await(result)
