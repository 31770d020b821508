"""The pending-request broker: what waits for the person, and their answers.

A request is a row in the store (so the page and a restarted server see it)
and, while something in this process waits for it, a future. Three kinds:

* ``model``: a model call (`wait_for_model`, and remote model calls);
* ``user``: a user agent's turn the person plays (`wait_for_user`);
* ``tool_answer``: a long-running tool's response; nothing waits for it in
  process (the run ended on the call), the session resumes once every call of
  the batch is answered.

`answer` checks an answer against its request before it is stored or delivered.
A request can carry ``answer_by`` (a time): its waiter gives up then (a remote
app's `StudioPlugin` timeout); a later answer is refused, as is one to a request
the waiter gave up on (`abandon`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
import uuid
from dataclasses import dataclass
from typing import Any

from .._bridge import YieldInfo
from .._errors import (
    StudioConflictError,
    StudioGoneError,
    StudioInvalidError,
    StudioNotFoundError,
)
from .._turns import tool_response
from .._user_agents import STOP
from ._kinds import Phase, RequestKind
from ._notify import Notifier
from ._protocol import (
    TOOL_ANSWERS,
    USER_ANSWERS,
    AnswerError,
    check_answer_shape,
    validate_answer,
)
from ._store import RequestRow, StudioStore

__all__ = ["ANSWER_BY", "Answered", "Broker"]

ANSWER_BY = "answer_by"
"""The payload key of the time (``time.time()``) after which no one waits for the answer."""


@dataclass
class _Waiter:
    future: asyncio.Future[Any]
    output_model: Any = None


@dataclass(frozen=True)
class Answered:
    """An answer the broker accepted.

    Attributes:
        request: The request answered (as it was before the answer).
        value: The answer, normalised.
        delivered: Whether something in this process was waiting for it.
    """

    request: RequestRow
    value: dict[str, Any]
    delivered: bool


class Broker:
    """Stores requests for the person, waits for their answers and checks them."""

    def __init__(self, store: StudioStore, notifier: Notifier) -> None:
        self._store = store
        self._notifier = notifier
        self._waiters: dict[str, _Waiter] = {}

    async def add(
        self,
        session_id: str,
        kind: RequestKind,
        agent_name: str,
        payload: dict[str, Any],
        *,
        waited: bool = True,
        output_model: Any = None,
    ) -> RequestRow:
        """Stores a pending request (`waited`: something in this process will wait for it)."""
        row = RequestRow(
            id=uuid.uuid4().hex,
            session_id=session_id,
            kind=kind,
            agent_name=agent_name,
            payload=payload,
        )
        if waited:
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._waiters[row.id] = _Waiter(future, output_model)
        await self._store.add_request(row)
        return row

    async def _wait(self, row: RequestRow, phase: Phase, invocation_id: str | None = None) -> Any:
        """Puts the session in `phase` until `row` is answered; returns the answer."""
        await self._store.update_session(row.session_id, phase=phase, invocation_id=invocation_id)
        await self._notifier.changed(row.session_id)
        try:
            answer = await self._waiters[row.id].future
        finally:
            self._waiters.pop(row.id, None)
        await self._store.update_session(row.session_id, phase="running")
        await self._notifier.changed(row.session_id)
        return answer

    async def wait_for_model(
        self,
        session_id: str,
        agent_name: str,
        invocation_id: str,
        payload: dict[str, Any],
        output_model: Any,
    ) -> dict[str, Any]:
        """Queues a model call for the person and waits for the (validated) answer."""
        row = await self.add(session_id, "model", agent_name, payload, output_model=output_model)
        answer: dict[str, Any] = await self._wait(row, "awaiting_model", invocation_id)
        return answer

    async def wait_for_user(
        self, session_id: str, agent_name: str, prompt: str, info: YieldInfo | None
    ) -> Any:
        """Queues a user agent's turn for the person and waits.

        Returns:
            The reply: a text, a value (for a tool yield), or `STOP`.
        """
        payload = {
            "prompt": prompt,
            "yield": dataclasses.asdict(info) if info is not None else None,
        }
        row = await self.add(session_id, "user", agent_name, payload)
        answer = await self._wait(row, "awaiting_user")
        if answer["type"] == "stop":
            return STOP
        return answer["value"] if answer["type"] == "value" else answer["text"]

    async def answer(self, request_id: str, answer: Any) -> Answered:
        """Checks and stores the person's answer, and hands it to whoever waits for it.

        Raises:
            StudioError: Unknown request (404), already answered (409), or an
                answer that does not fit (422, with the problems).
        """
        row = await self._store.get_request(request_id)
        if row is None:
            raise StudioNotFoundError(f"no request {request_id}")
        answer_by = row.payload.get(ANSWER_BY) if row.kind == "model" else None
        if row.status == "pending" and answer_by is not None and time.time() > answer_by:
            await self.abandon(request_id)
            row.status = "abandoned"
        if row.status == "abandoned":
            raise StudioConflictError(
                f"request {request_id} is no longer awaited: the app that asked stopped waiting "
                "for the answer (its StudioPlugin timed out, or its run ended), so this answer "
                "was not used; the app's next model call will appear as a new request"
            )
        if row.status != "pending":
            raise StudioConflictError(f"request {request_id} is {row.status}; reload the session")
        waiter = self._waiters.get(request_id)
        try:
            if row.kind == "model":
                output_model = waiter.output_model if waiter else None
                value = validate_answer(row.payload, answer, output_model=output_model)
            elif row.kind == "user":
                value = _user_answer(answer)
            else:
                value = _tool_answer(row.payload["tool_name"], answer)
        except AnswerError as error:
            raise StudioInvalidError(
                "the answer does not fit the request", error.problems
            ) from None
        await self._store.answer_request(request_id, value)
        delivered = waiter is not None and not waiter.future.done()
        if waiter is not None and delivered:
            waiter.future.set_result(value)
        return Answered(row, value, delivered)

    async def abandon(self, request_id: str) -> bool:
        """Closes a pending request no one waits for any more; False if it was not pending."""
        self._waiters.pop(request_id, None)
        return await self._store.close_request(request_id, "abandoned")

    async def remote_answer(self, request_id: str, wait: float) -> dict[str, Any] | None:
        """The answer to a remote model call, waiting up to `wait` seconds (None if not yet).

        Raises:
            StudioError: Unknown request (404), or one that will never be answered (410).
        """
        row = await self._store.get_request(request_id)
        if row is None:
            raise StudioNotFoundError(f"no request {request_id}")
        if row.status == "answered":
            return dict(row.answer)
        if row.status != "pending":
            raise StudioGoneError(f"request {request_id} was {row.status}")
        waiter = self._waiters.get(request_id)
        if waiter is None:  # asked again after a restart
            waiter = self._waiters[request_id] = _Waiter(asyncio.get_running_loop().create_future())
        try:
            answer: dict[str, Any] = await asyncio.wait_for(asyncio.shield(waiter.future), wait)
        except TimeoutError:
            return None
        await self._store.update_session(row.session_id, phase="running")
        return answer


def _user_answer(answer: Any) -> dict[str, Any]:
    check_answer_shape(answer, USER_ANSWERS)
    if answer["type"] == "stop":
        return {"type": "stop"}
    if answer["type"] == "value":
        return {"type": "value", "value": answer["value"]}
    return {"type": "text", "text": _text(answer)}


def _tool_answer(tool_name: str, answer: Any) -> dict[str, Any]:
    check_answer_shape(answer, TOOL_ANSWERS)
    if answer["type"] == "value":
        return tool_response(tool_name, answer["value"])
    return tool_response(tool_name, _text(answer))


def _text(answer: dict[str, Any]) -> str:
    if not answer["text"].strip():
        raise AnswerError(["text: the answer is empty"])
    text: str = answer["text"]
    return text
