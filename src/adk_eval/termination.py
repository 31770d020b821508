"""Why a run stopped, as data: the kind of limit, the limit, and the value reached."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from mongoquery import Query, QueryError

from .errors import EvalSetupError
from .state import scoped_view

__all__ = ["Termination", "TerminationKind", "compile_state_query", "state_query_matches"]

TerminationKind: TypeAlias = Literal["max_turns", "max_duration", "state_matches"]


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
