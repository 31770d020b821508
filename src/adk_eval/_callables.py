"""Calling user code that may be sync or async (mocks, bridges, metrics, scripts).

Where a case shares its event loop with other runs (`run_eval_suite` with a
concurrency above 1, worker processes, Ray tasks, the studio), sync user code runs
in a worker thread: a mock that blocks (a ``time.sleep``, a slow file) delays its
own run only, not every other case on the event loop. A case that has the event
loop to itself (`run_eval` alone, a suite at concurrency 1) calls sync code
directly, as ADK calls a sync tool: a thread hand-off costs about 0.1 ms of CPU,
more than most mocks. Context variables reach the thread.
"""

from __future__ import annotations

import ast
import asyncio
import functools
import inspect
import textwrap
import types
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import anyio.to_thread

from ._errors import UserCodeExit

__all__ = [
    "UserCodeExit",
    "being_cancelled",
    "call_user",
    "describe",
    "maybe_await",
    "sharing_the_event_loop",
]


_LOOP_SHARED: ContextVar[bool] = ContextVar("adk_eval_loop_shared", default=False)


@contextmanager
def sharing_the_event_loop(shared: bool = True) -> Iterator[None]:
    """Inside, `call_user` runs sync code in worker threads (when `shared`).

    Tasks started inside inherit it, as they inherit every context variable.
    """
    token = _LOOP_SHARED.set(shared)
    try:
        yield
    finally:
        _LOOP_SHARED.reset(token)


def being_cancelled() -> bool:
    """Whether the current task has been asked to cancel (a `CancelledError` it sees is real).

    A `CancelledError` that user code raises itself, while nothing cancels the task,
    is that code's error, not a cancellation.
    """
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def maybe_await(value: Any) -> Any:
    """Returns `value`, awaiting it first if it is awaitable."""
    if inspect.isawaitable(value):
        return await value
    return value


def _is_async(function: Callable[..., Any]) -> bool:
    """Whether calling `function` gives a coroutine (worked out once per plain function)."""
    plain = getattr(function, "__func__", function)  # a bound method's function
    if type(plain) is types.FunctionType:
        known = _ASYNC.get(plain)
        if known is None:
            known = _ASYNC[plain] = _works_out_async(plain)
        return known
    return _works_out_async(function)


def _works_out_async(function: Callable[..., Any]) -> bool:
    target = inspect.unwrap(function)
    if isinstance(target, functools.partial):
        target = target.func
    return inspect.iscoroutinefunction(target) or inspect.iscoroutinefunction(
        getattr(target, "__call__", None)  # noqa: B004 - an object with an async __call__
    )


_ASYNC: weakref.WeakKeyDictionary[Any, bool] = weakref.WeakKeyDictionary()
"""Whether a plain function is async, by function (`_is_async`)."""


async def call_user(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
    """Calls user code: async on the event loop, sync in a thread where runs share it.

    See `sharing_the_event_loop`.

    Whatever comes back awaitable (a sync function returning a coroutine) is
    awaited on the event loop.
    """
    try:
        if _is_async(function):
            return await function(*args, **kwargs)
        if _LOOP_SHARED.get():
            result = await anyio.to_thread.run_sync(functools.partial(function, *args, **kwargs))
        else:
            result = function(*args, **kwargs)
        return await maybe_await(result)
    except SystemExit as error:  # would end the event loop, and the process, without a word
        name = getattr(function, "__qualname__", None) or repr(function)
        raise UserCodeExit(f"{name} called sys.exit({error.code!r})") from None


def describe(function: Callable[..., Any]) -> str | None:
    """What `function` checks, as written: a lambda's body (``count <= 5``), else its name.

    For a lambda the source is read and parsed; the lambda of the same arguments
    whose names and constants match the code object is the one described. None
    when nothing can be said (no source, a callable object). A lambda's text is
    worked out once per code object: a metric evaluated on every run, or on
    every stored session, does not read and parse its file again.
    """
    code = getattr(function, "__code__", None)
    name = getattr(function, "__name__", None)
    if code is None or name is None:
        return None
    if name != "<lambda>":
        return f"{name}(...)"
    return _lambda_text(code)


@functools.lru_cache(maxsize=4096)
def _lambda_text(code: types.CodeType) -> str | None:
    """The source of the lambda whose code object is `code` (see `describe`)."""
    try:
        lines, _ = inspect.getsourcelines(code)
    except (OSError, TypeError):
        return None
    source = textwrap.dedent("".join(lines))
    tree: ast.Module | None
    try:
        tree = ast.parse(source)
    except SyntaxError:  # a lambda cut from the middle of a call: parse it alone
        tree = _parse_fragment(source)
        if tree is None:
            return None
    arguments = list(code.co_varnames[: code.co_argcount])
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda) and [a.arg for a in node.args.args] == arguments:
            compiled = compile(ast.Expression(node), "<lambda>", "eval").co_consts[0]
            if compiled.co_names == code.co_names and compiled.co_consts == code.co_consts:
                return ast.unparse(node.body)
    return None


def _parse_fragment(source: str) -> ast.Module | None:
    """`source` from its first ``lambda`` on, cut back until it parses (None if never)."""
    text = source[source.find("lambda") :].rstrip()
    while text:
        try:
            return ast.parse(text)
        except SyntaxError:
            text = text[:-1]
    return None
