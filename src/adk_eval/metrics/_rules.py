"""The built-in invariants: what an agent must never do (see `_invariants`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from .._errors import EvalSetupError
from .._termination import compile_state_query, state_query_matches
from ._invariants import Answer, Call, Invariant, Observation, Said, Seen, StateNow, holds
from ._types import excerpt

__all__ = [
    "StateCondition",
    "at_most",
    "never",
    "never_called",
    "never_in_arguments",
    "never_said",
    "no_tool_error_twice",
    "state_matches",
]


def _matching(args: Mapping[str, Any] | None, call: Call) -> bool:
    return args is None or all(call.args.get(key) == value for key, value in args.items())


def never_called(
    tool: str,
    *,
    args: Mapping[str, Any] | None = None,
    on_breach: Literal["stop", "record"] = "stop",
) -> Invariant:
    """`tool` is never called (with `args` among its arguments, when given).

    `tool` may name a remote agent (ADK's `RemoteA2aAgent`): without `args`, an
    exchange with it breaks the rule too (a transfer to it, or its answer when
    nothing called it, as a workflow node's). A tool call of that name is read
    as the tool call it is.
    """

    def check(seen: Seen, seen_now: Observation) -> str | None:
        if isinstance(seen_now, Call) and seen_now.name == tool and _matching(args, seen_now):
            return f"`{tool}` called by `{seen_now.author}` with {excerpt(dict(seen_now.args))}"
        if args is None and (how := seen.reaching(tool, seen_now)):
            return f"remote agent `{tool}` {how}"
        return None

    suffix = f", {excerpt(dict(args))}" if args else ""
    needs = frozenset({"tools", "content"}) if args else frozenset({"tools"})
    return Invariant(f"never_called({tool}{suffix})", check, on_breach, needs=needs)


def at_most(tool: str, times: int, *, on_breach: Literal["stop", "record"] = "stop") -> Invariant:
    """`tool` is called at most `times` times (a remote agent: see `never_called`)."""
    if not isinstance(times, int) or times < 0:
        raise EvalSetupError(f"at_most({tool!r}, times): times must be an int >= 0, got {times!r}")

    def check(seen: Seen, now: Observation) -> str | None:
        if isinstance(now, Call) and now.name == tool and seen.called(tool) >= times:
            count = seen.called(tool) + 1
            return f"call {count} of `{tool}` (at most {times}), args {excerpt(dict(now.args))}"
        if (how := seen.reaching(tool, now)) and seen.called(tool) >= times:
            count = seen.called(tool) + 1
            return f"exchange {count} with remote agent `{tool}` (at most {times}): {how}"
        return None

    return Invariant(f"at_most({tool}, {times})", check, on_breach, needs=frozenset({"tools"}))


def no_tool_error_twice(*, on_breach: Literal["stop", "record"] = "stop") -> Invariant:
    """No call fails twice: a failing call (tool and arguments) is never retried unchanged."""

    def check(seen: Seen, now: Observation) -> str | None:
        if not isinstance(now, Answer) or now.error is None:
            return None
        same = [a for a in seen.answers if a.name == now.name and a.args == now.args and a.error]
        if same:
            return f"`{now.name}` {excerpt(dict(now.args))} failed again: {now.error[:200]}"
        return None

    return Invariant("no_tool_error_twice", check, on_breach, needs=frozenset({"tools"}))


def never_in_arguments(
    text: str, *, name: str | None = None, on_breach: Literal["stop", "record"] = "stop"
) -> Invariant:
    """`text` (a secret, a canary) never appears in a tool call's arguments."""

    def check(seen: Seen, now: Observation) -> str | None:
        if isinstance(now, Call) and holds(dict(now.args), text):
            where = excerpt(dict(now.args))
            return f"`{now.name}` called by `{now.author}` with {text!r} in {where}"
        return None

    label = name or f"never_in_arguments({text[:40]})"
    return Invariant(label, check, on_breach, needs=frozenset({"tools", "content"}))


def never_said(
    text: str, *, name: str | None = None, on_breach: Literal["stop", "record"] = "stop"
) -> Invariant:
    """No agent ever says `text`."""

    def check(seen: Seen, now: Observation) -> str | None:
        if isinstance(now, Said) and text.lower() in now.text.lower():
            return f"`{now.author}` said {excerpt(now.text)}"
        return None

    return Invariant(
        name or f"never_said({text[:40]})", check, on_breach, needs=frozenset({"content"})
    )


@dataclass(frozen=True)
class StateCondition:
    """A MongoDB-style query over the state (``{"session.booked": True}``); see `never`."""

    query: Mapping[str, Any]

    def __post_init__(self) -> None:
        compile_state_query(self.query)  # a bad query fails when the case is written


def state_matches(query: Mapping[str, Any]) -> StateCondition:
    """A state condition for `never`: ``never(state_matches({"session.refunded": True}))``."""
    return StateCondition(query)


def never(
    what: str | StateCondition | Callable[[Seen], bool],
    *,
    before: str | None = None,
    name: str | None = None,
    on_breach: Literal["stop", "record"] = "stop",
) -> Invariant:
    """A rule stated as what must never happen.

    * ``never("refund", before="verify_identity")``: no `refund` call before a
      `verify_identity` call;
    * ``never(state_matches({"session.refunded": True}))``: the state never matches;
    * ``never(lambda seen: ...)``: the predicate over what was seen so far (a
      `Seen`) is never true.

    Raises:
        EvalSetupError: A tool name without `before` (use `never_called`), or
            something that is none of the three.
    """
    if isinstance(what, str):
        if before is None:
            raise EvalSetupError(
                f"never({what!r}) needs before=...; to forbid every call use never_called({what!r})"
            )
        return _never_before(what, before, on_breach)
    if isinstance(what, StateCondition):
        return _never_state(what, name, on_breach)
    if callable(what):
        return _never_predicate(what, name, on_breach)
    raise EvalSetupError(
        f"never() takes a tool name (with before=), state_matches({{...}}) or a predicate "
        f"over what was seen, got {what!r}"
    )


def _never_before(tool: str, first: str, on_breach: Literal["stop", "record"]) -> Invariant:
    def check(seen: Seen, now: Observation) -> str | None:
        if isinstance(now, Call) and now.name == tool and not seen.called(first):
            return (
                f"`{tool}` called by `{now.author}` with {excerpt(dict(now.args))} "
                f"before any `{first}`"
            )
        return None

    label = f"never({tool} before {first})"
    return Invariant(label, check, on_breach, needs=frozenset({"tools"}))


def _never_state(
    condition: StateCondition, name: str | None, on_breach: Literal["stop", "record"]
) -> Invariant:
    query = compile_state_query(condition.query)

    def check(seen: Seen, now: Observation) -> str | None:
        if isinstance(now, StateNow) and state_query_matches(query, now.state):
            return f"the state matched {excerpt(dict(condition.query))}"
        return None

    label = name or f"never(state_matches({excerpt(dict(condition.query), 80)}))"
    return Invariant(label, check, on_breach, needs=frozenset({"state"}))


def _never_predicate(
    predicate: Callable[[Seen], bool], name: str | None, on_breach: Literal["stop", "record"]
) -> Invariant:
    from .._callables import describe

    said = describe(predicate) or "the predicate"

    def check(seen: Seen, now: Observation) -> str | None:
        with seen.including(now) as after:  # no copy: a predicate runs at every step
            broken = predicate(after)
        if broken:
            return f"{said} held after {type(now).__name__.lower()} {_brief(now)}"
        return None

    return Invariant(name or f"never({said[:60]})", check, on_breach)


def _brief(observation: Observation) -> str:
    if isinstance(observation, Call | Answer):
        return f"`{observation.name}`"
    if isinstance(observation, Said):
        return f"by `{observation.author}`"
    return ""
