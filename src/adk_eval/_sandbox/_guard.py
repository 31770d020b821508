"""One run, watched: its scope current, the user's telemetry held back, the audit hook on."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

from . import _audit, _telemetry
from ._scope import RunScope

__all__ = ["watched"]


@asynccontextmanager
async def watched(scope: RunScope) -> AsyncIterator[RunScope]:
    """Runs the caller as `scope`'s run: telemetry routed, litellm quiet, the hook watching."""
    _telemetry.install()
    if scope.sandbox != "off":
        _audit.install()
    async with AsyncExitStack() as stack:
        if scope.telemetry == "off":
            await stack.enter_async_context(_telemetry.litellm_held_back())
        stack.enter_context(scope.enter())
        yield scope
