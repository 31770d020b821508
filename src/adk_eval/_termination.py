"""Why a run stopped, as data: the kind of limit, the limit, and the value reached."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin
from mongoquery import Query, QueryError

from ._errors import EvalSetupError
from ._state import scoped_view

__all__ = [
    "MODEL_CALL_LIMIT_CODE",
    "ModelCallLimit",
    "Termination",
    "TerminationKind",
    "compile_state_query",
    "state_query_matches",
]

TerminationKind: TypeAlias = Literal[
    "max_turns", "max_duration", "max_model_calls", "state_matches"
]

MODEL_CALL_LIMIT_CODE = "ADK_EVAL_MAX_MODEL_CALLS"
"""The error code of the event that ends a run at `TerminateWhen.max_model_calls`."""


@dataclass(frozen=True)
class Termination:
    """A limit or stop condition that ended the run.

    Attributes:
        kind: Which condition fired.
        limit: The configured limit (turns, seconds, or the query).
        value: What was reached (turns done, seconds elapsed, or the matching state).
    """

    kind: TerminationKind
    limit: Any
    value: Any

    def __str__(self) -> str:
        if self.kind == "max_turns":
            return f"max_turns: {self.value} turns reached the limit of {self.limit}"
        if self.kind == "max_model_calls":
            return f"max_model_calls: {self.value} system model calls (limit {self.limit})"
        if self.kind == "max_duration":
            return f"max_duration: stopped after {self.value:.2f}s (limit {self.limit}s)"
        return f"state_matches: the state matched {self.limit!r}"


def compile_state_query(spec: Mapping[str, Any]) -> Query:
    """Checks a MongoDB-style state query and compiles it.

    Raises:
        EvalSetupError: If `spec` is not a dict or uses an unknown operator.
    """
    if not isinstance(spec, Mapping):
        raise EvalSetupError(
            "state_matches must be a MongoDB-style query dict like "
            f"{{'session.escalation': {{'$exists': True}}}}, got {spec!r}"
        )
    query = Query(dict(spec))
    try:
        query.match({"session": {}})
    except QueryError as error:
        raise EvalSetupError(f"state_matches query {dict(spec)!r} is invalid: {error}") from None
    return query


def state_query_matches(query: Query, flat_state: Mapping[str, Any]) -> bool:
    """Whether the scoped view of ADK's `flat_state` matches `query`."""
    return bool(query.match(scoped_view(flat_state)))


class ModelCallLimit(BasePlugin):
    """Counts the system's model calls; past the limit, answers with an error event instead.

    The error event (code `MODEL_CALL_LIMIT_CODE`) ends the invocation the way
    ADK ends any model error; the simulation turns it into a ``max_model_calls``
    termination. This is what stops a model that calls tools forever.

    Args:
        limit: Most model calls allowed (None: count only).
    """

    def __init__(self, limit: int | None) -> None:
        super().__init__(name="adk_eval_model_call_limit")
        self.limit = limit
        self.calls = 0

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Lets the call through, or ends the invocation once the limit is spent."""
        if self.limit is not None and self.calls >= self.limit:
            return LlmResponse(
                error_code=MODEL_CALL_LIMIT_CODE,
                error_message=f"the system agent reached max_model_calls={self.limit}",
                turn_complete=True,
            )
        self.calls += 1
        return None
