"""When a run stops and why: the limits (`TerminateWhen`, `Budget`) and what reached them.

`Termination` is why a run stopped, as data: the kind of limit, the limit, and
the value reached; `ModelCallLimit` is the plugin that enforces the limits a
model call can cross.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

from google.adk.agents.callback_context import CallbackContext
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.plugins.base_plugin import BasePlugin

from ._errors import EvalSetupError
from ._state import scoped_view

if TYPE_CHECKING:
    from mongoquery import Query

__all__ = [
    "DEFAULT_MAX_DURATION",
    "DEFAULT_MAX_MODEL_CALLS",
    "DEFAULT_MAX_TURNS",
    "MODEL_CALL_LIMIT_CODE",
    "Budget",
    "ModelCallLimit",
    "UsageTap",
    "TerminateWhen",
    "Termination",
    "TerminationKind",
    "compile_state_query",
    "state_query_matches",
]

TerminationKind: TypeAlias = Literal[
    "max_turns", "max_duration", "max_model_calls", "state_matches", "max_tokens", "max_cost"
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
        if self.kind == "max_tokens":
            return f"max_tokens: {self.value:,} tokens spent (limit {self.limit:,}){self._over()}"
        if self.kind == "max_cost":
            return f"max_cost: ${self.value:.4g} spent (limit ${self.limit:g}){self._over()}"
        return f"state_matches: the state matched {self.limit!r}"

    def _over(self) -> str:
        """How far past a budget the run went, when the last calls went well past it."""
        if not self.limit or self.value < 1.5 * self.limit:
            return ""
        ratio = self.value / self.limit
        times = f"{ratio:,.0f}" if ratio >= 10 else f"{ratio:.1f}"
        return f", {times}x the limit: calls already made crossed it"


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
    from mongoquery import Query, QueryError  # only for a case with a state query

    query = Query(dict(spec))
    try:
        query.match({"session": {}})
    except QueryError as error:
        raise EvalSetupError(f"state_matches query {dict(spec)!r} is invalid: {error}") from None
    return query


def state_query_matches(query: Query, flat_state: Mapping[str, Any]) -> bool:
    """Whether the scoped view of ADK's `flat_state` matches `query`."""
    return bool(query.match(scoped_view(flat_state)))


@dataclass(frozen=True)
class Budget:
    """Tokens and money a run (or a suite) may spend on model calls.

    Attributes:
        max_tokens: Prompt and completion tokens of every model call (None: no limit).
        max_cost: US dollars, priced from litellm's table (None: no limit). Calls of
            a model the table does not price count no money.
    """

    max_tokens: int | None = None
    max_cost: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_tokens", "max_cost"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not value > 0):
                raise EvalSetupError(f"{name} must be a positive number or None, got {value!r}")

    @classmethod
    def of(cls, max_tokens: int | None, max_cost: float | None) -> Budget | None:
        """The budget of these limits, checked; None when neither is set."""
        if max_tokens is None and max_cost is None:
            return None
        return cls(max_tokens, max_cost)

    def exceeded(self, tokens: int, cost: float) -> tuple[TerminationKind, Any, Any] | None:
        """``(kind, limit, value)`` of the first limit `tokens` or `cost` reached, else None."""
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return "max_tokens", self.max_tokens, tokens
        if self.max_cost is not None and cost >= self.max_cost:
            return "max_cost", self.max_cost, cost
        return None


DEFAULT_MAX_TURNS = 20
"""Turn cap when a case sets none (the same default as ADK's user simulator)."""

DEFAULT_MAX_DURATION = 300.0
"""Wall-clock seconds a run may take when a case sets no limit (``None`` only if asked for)."""

DEFAULT_MAX_MODEL_CALLS = 100
"""Cap on the system agent's model calls in one run when a case sets none."""


@dataclass(frozen=True)
class TerminateWhen:
    """When to stop a conversation that has not ended on its own.

    `None` means "no limit". A run stopped by `max_turns` or `max_duration` is
    ``terminated``; a run stopped by `state_matches` finished normally and its
    status comes from the metrics.

    Attributes:
        max_turns: Most yield/resume cycles (user-agent answers) allowed. When
            the system yields once more after this many answers, the run stops.
        max_duration: Wall-clock seconds for the conversation (model calls,
            tools and user agents; metrics excluded). A hung model or tool call
            is cancelled when it runs out. Defaults to 300 s, so nothing hangs
            forever; pass None explicitly for no limit.
        state_matches: A MongoDB-style query over the scoped state view, e.g.
            ``{"session.escalation": {"$exists": True}}``; checked whenever the
            main session's state may have changed (after each system run and
            after user-agent state changes are applied).
        max_model_calls: Most model calls of the system agent in the whole
            run (all turns). It stops a model that calls tools forever inside
            one turn, which `max_turns` cannot see.
        max_tokens: Most prompt and completion tokens of the run's model calls
            (the system's, the user agents', simulated tools'); checked before
            each of the system's model calls, so the call that crosses it and
            the user turn before it still finish; a run that ends over it
            (its last calls crossed it) is terminated too, with the figures.
        max_cost: The same in US dollars, priced from litellm's offline table
            (calls of a model it does not price count no money).
    """

    max_turns: int | None = DEFAULT_MAX_TURNS
    max_duration: float | None = DEFAULT_MAX_DURATION
    state_matches: Mapping[str, Any] | None = None
    max_model_calls: int | None = DEFAULT_MAX_MODEL_CALLS
    max_tokens: int | None = None
    max_cost: float | None = None

    @property
    def budget(self) -> Budget | None:
        """`max_tokens` and `max_cost` as a `Budget` (None: neither is set)."""
        return Budget.of(self.max_tokens, self.max_cost)

    def __post_init__(self) -> None:
        Budget(self.max_tokens, self.max_cost)  # checks them
        if self.max_turns is not None and (
            not isinstance(self.max_turns, int) or isinstance(self.max_turns, bool)
        ):
            raise EvalSetupError(f"max_turns must be an int or None, got {self.max_turns!r}")
        if self.max_turns is not None and self.max_turns < 1:
            raise EvalSetupError(
                f"max_turns must be >= 1 (or None for no limit), got {self.max_turns}"
            )
        if self.max_model_calls is not None and (
            not isinstance(self.max_model_calls, int)
            or isinstance(self.max_model_calls, bool)
            or self.max_model_calls < 1
        ):
            raise EvalSetupError(
                f"max_model_calls must be an int >= 1 or None, got {self.max_model_calls!r}"
            )
        if self.max_duration is not None and (
            not isinstance(self.max_duration, int | float) or isinstance(self.max_duration, bool)
        ):
            raise EvalSetupError(
                f"max_duration must be a number of seconds or None, got {self.max_duration!r}"
            )
        if self.max_duration is not None and not (
            math.isfinite(self.max_duration) and self.max_duration > 0
        ):
            raise EvalSetupError(
                f"max_duration must be a finite number of seconds > 0, got {self.max_duration}; "
                "use max_duration=None for no limit"
            )
        if self.state_matches is not None:
            compile_state_query(self.state_matches)


Price: TypeAlias = Callable[[str, int, int, int], "float | None"]
"""``(model, prompt, completion, cached) -> US dollars`` (None: no known price)."""


class UsageTap(BasePlugin):
    """Counts the tokens and cost of the model calls it sees, as they happen.

    Args:
        price: Prices a call (`models._gateway._usage.cost_of`).
        name: The plugin's name.
    """

    def __init__(self, price: Price, name: str = "adk_eval_usage_tap") -> None:
        super().__init__(name=name)
        self.price = price
        self.tokens = 0
        self.cost = 0.0

    async def after_model_callback(
        self, *, callback_context: CallbackContext, llm_response: LlmResponse
    ) -> LlmResponse | None:
        """Adds the response's usage; never changes it."""
        usage = llm_response.usage_metadata
        if usage is not None and not llm_response.partial:
            prompt, output = usage.prompt_token_count or 0, usage.candidates_token_count or 0
            self.tokens += prompt + output
            model = llm_response.model_version or ""
            cost = self.price(model, prompt, output, usage.cached_content_token_count or 0)
            self.cost += cost or 0.0
        return None

    def spent(self) -> tuple[int, float]:
        """Tokens and (priced) US dollars so far."""
        return self.tokens, self.cost


class ModelCallLimit(UsageTap):
    """Counts the system's model calls; past a limit, answers with an error event instead.

    The error event (code `MODEL_CALL_LIMIT_CODE`) ends the invocation the way
    ADK ends any model error; the simulation turns it into a termination
    (`reason`). This is what stops a model that calls tools forever
    (``max_model_calls``), and a run past its `Budget`: checked before each of the
    system's model calls, with what every other counter of the run (`others`: the
    user agents', the simulated tools') has spent.

    Args:
        limit: Most model calls allowed (None: count only).
        budget: Tokens and money the run may spend (None: no limit).
        price: Prices a call (None: calls count no money).
        others: The run's other counters (anything with ``spent()``: the user
            agents', the judges' and simulated tools'), counted in the budget.
    """

    def __init__(
        self,
        limit: int | None,
        budget: Budget | None = None,
        price: Price | None = None,
        *,
        others: Sequence[Any] = (),
    ) -> None:
        super().__init__(price or (lambda *_: None), name="adk_eval_model_call_limit")
        self.limit = limit
        self.budget = budget
        self.calls = 0
        self.others = tuple(others)
        self.reached: tuple[TerminationKind, Any, Any] | None = None

    def over_budget(self) -> tuple[TerminationKind, Any, Any] | None:
        """``(kind, limit, value)`` when everything the run spent crossed its budget.

        The budget is checked before each system model call, so the run's last
        calls (and what the user agents, judges and simulated tools spent
        after them) can cross it with no call left to stop.
        """
        if self.budget is None:
            return None
        spent = [self.spent(), *(other.spent() for other in self.others)]
        return self.budget.exceeded(*map(sum, zip(*spent, strict=True)))

    def overspent(self) -> Termination | None:
        """The budget the run ended over, if it did (see `over_budget`)."""
        over = self.over_budget()
        return Termination(*over) if over is not None else None

    def reason(self) -> tuple[TerminationKind, Any, Any]:
        """``(kind, limit, value)`` of the limit that stopped the run."""
        return self.reached or ("max_model_calls", self.limit, self.calls)

    async def before_model_callback(
        self, *, callback_context: CallbackContext, llm_request: LlmRequest
    ) -> LlmResponse | None:
        """Lets the call through, or ends the invocation once a limit is spent."""
        self.reached = self.over_budget()
        if self.reached is None and self.limit is not None and self.calls >= self.limit:
            self.reached = ("max_model_calls", self.limit, self.calls)
        if self.reached is not None:
            return LlmResponse(
                error_code=MODEL_CALL_LIMIT_CODE,
                error_message=f"the system agent reached {self.reached[0]}={self.reached[1]}",
                turn_complete=True,
            )
        self.calls += 1
        return None
