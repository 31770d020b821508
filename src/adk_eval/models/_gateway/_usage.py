"""Tokens and money: what each role's model calls used in a run, priced offline.

A run's model calls belong to **roles**: ``agent`` (the agent under test, its
sub-agents and the agents inside its `AgentTool`s), ``user:NAME`` (each user
agent), ``judge:METRIC`` (an `llm_judge`), ``tool:NAME`` (a simulated tool).
`ModelUsage` is one role's calls of one model: prompt, completion and cached
prompt tokens, from the responses' own usage, and their cost.

**Cost** comes from litellm's price table as it ships inside the installed
litellm package (read as a file: nothing is imported or downloaded). A model
the table does not price has cost None, shown as "unknown", never 0; a run's or
suite's total is None as soon as one of its models is unpriced (`total_cost`).
Cached prompt tokens are priced at the table's cache-read price where it has
one.

The judge and simulated tools call their models through `_ask.complete`,
which records into the `UsageMeter` of the run's gate, under the role the code
around the call names (`usage_role`); the agent's and the user agents' usage is
read from their events afterwards.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Sequence
from contextvars import ContextVar
from dataclasses import asdict, dataclass, field
from functools import cache
from importlib.util import find_spec
from pathlib import Path
from typing import Any

__all__ = [
    "ModelUsage",
    "UsageMeter",
    "cost_of",
    "current_role",
    "priced_usage",
    "total_cost",
    "usage_role",
]


@dataclass(frozen=True)
class ModelUsage:
    """One role's calls of one model in a run.

    Attributes:
        role: ``agent``, ``user:NAME``, ``judge:METRIC`` or ``tool:NAME``.
        model: The model, as the responses name it (else as configured).
        calls: Model responses that reported usage.
        input_tokens: Prompt tokens (cached ones included).
        output_tokens: Completion tokens.
        cached_tokens: Prompt tokens served from a cache.
        cost_usd: Their cost in US dollars, None when the model has no known price.
    """

    role: str
    model: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        """Prompt and completion tokens."""
        return self.input_tokens + self.output_tokens

    def to_data(self) -> dict[str, Any]:
        """Plain data (its fields), for reports and results files."""
        return asdict(self)


@cache
def _price_text() -> str:
    """Litellm's offline price table as text, read from the installed package ("" if absent)."""
    spec = find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return ""
    path = Path(next(iter(spec.submodule_search_locations)))
    try:
        return (path / "model_prices_and_context_window_backup.json").read_text()
    except OSError:
        return ""


@cache
def _price_table() -> dict[str, dict[str, Any]]:
    """Litellm's offline price table, parsed (empty if absent or not JSON)."""
    try:
        table = json.loads(_price_text() or "{}")
    except ValueError:
        return {}
    return {name: entry for name, entry in table.items() if isinstance(entry, dict)}


@cache  # every model call prices its model: the text search costs 7-13 ms each time
def _price(model: str) -> dict[str, Any] | None:
    bare = model.split("/", 1)[1] if "/" in model else model
    names = (model, bare, f"gemini/{bare}", model.lower(), bare.lower())
    text = _price_text()
    # Parsing the table (3.5 MB) costs more than a whole scripted run; a name the
    # text does not hold, quoted as JSON writes it, has no entry, so no parse.
    if not any(json.dumps(name) in text for name in names):
        return None
    table = _price_table()
    for name in names:
        entry = table.get(name)
        if entry and name != "sample_spec" and entry.get("input_cost_per_token") is not None:
            return entry
    return None


def cost_of(
    model: str, input_tokens: int, output_tokens: int, cached_tokens: int = 0
) -> float | None:
    """What the tokens cost on `model` in US dollars, None when it has no known price."""
    entry = _price(model)
    if entry is None:
        return None
    prompt = float(entry["input_cost_per_token"])
    completion = float(entry.get("output_cost_per_token") or 0.0)
    cached_price = entry.get("cache_read_input_token_cost")
    cached = float(cached_price) if cached_price is not None else prompt
    return (
        (input_tokens - cached_tokens) * prompt
        + cached_tokens * cached
        + output_tokens * completion
    )


def total_cost(usage: Iterable[ModelUsage]) -> float | None:
    """The summed cost, None when a model that was used has no known price."""
    total = 0.0
    for item in usage:
        if item.cost_usd is None:
            if item.total_tokens:
                return None
            continue
        total += item.cost_usd
    return total


@dataclass
class UsageMeter:
    """Usage recorded while a run goes on: ``(role, model) -> [calls, in, out, cached]``."""

    counts: dict[tuple[str, str], list[int]] = field(default_factory=dict)

    def add(self, role: str, model: str, usage: Any) -> None:
        """Adds one response's `usage_metadata` (any object with Gemini's fields)."""
        if usage is None:
            return
        counts = self.counts.setdefault((role, model), [0, 0, 0, 0])
        counts[0] += 1
        counts[1] += getattr(usage, "prompt_token_count", None) or 0
        counts[2] += getattr(usage, "candidates_token_count", None) or 0
        counts[3] += getattr(usage, "cached_content_token_count", None) or 0

    def spent(self) -> tuple[int, float]:
        """Tokens and (priced) US dollars recorded so far."""
        usage = self.usage()
        return sum(u.total_tokens for u in usage), sum(u.cost_usd or 0.0 for u in usage)

    def usage(self) -> list[ModelUsage]:
        """What was recorded, priced."""
        return [
            ModelUsage(
                role, model, calls, prompt, output, cached, cost_of(model, prompt, output, cached)
            )
            for (role, model), (calls, prompt, output, cached) in self.counts.items()
        ]


_ROLE: ContextVar[str] = ContextVar("adk_eval_usage_role", default="other")


@contextlib.contextmanager
def usage_role(role: str) -> Iterator[None]:
    """The role the model calls made inside belong to (``judge:NAME``, ``tool:NAME``)."""
    token = _ROLE.set(role)
    try:
        yield
    finally:
        _ROLE.reset(token)


def current_role() -> str:
    """The role of the model calls made here (``judge:NAME``, ``tool:NAME``; else ``other``)."""
    return _ROLE.get()


def priced_usage(
    events: Iterable[Any], role_of: Any, model_of: Any, extra: Sequence[ModelUsage] = ()
) -> tuple[ModelUsage, ...]:
    """The usage of `events` by role and model, priced, with `extra` (the meter's).

    Args:
        events: ADK events (model events carry ``usage_metadata``).
        role_of: ``author -> role``.
        model_of: ``author -> configured model name`` (used when the event names none).
        extra: Usage recorded elsewhere (judges, simulated tools).
    """
    meter = UsageMeter()
    for event in events:
        usage = getattr(event, "usage_metadata", None)
        if usage is None:
            continue
        author = getattr(event, "author", "") or ""
        model = getattr(event, "model_version", None) or model_of(author) or "unknown"
        meter.add(role_of(author), model, usage)
    return (*meter.usage(), *extra)
