"""Calling user code that may be sync or async (mocks, bridges, metrics, scripts)."""

from __future__ import annotations

import inspect
from typing import Any

__all__ = ["maybe_await"]


async def maybe_await(value: Any) -> Any:
    """Returns `value`, awaiting it first if it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value
