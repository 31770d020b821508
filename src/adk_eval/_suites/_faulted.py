"""Suite-wide faults: every mocked tool of a case fails at one seeded rate.

``run_eval_suite(cases, faults=0.2)`` (``adk-eval run --faults 0.2``) runs each
case as `with_default_faults` gives it: a copy whose mocks each fail one call in
five, drawn from the run's seed as `ToolMock.with_faults` draws (so the same
seed fails the same calls). What gets the faults, and what does not:

* a `ToolMock` answering with a function, fixed values or a recording, and a
  simulated one (`ToolMock.simulated`, the case's `simulate_unmocked`), when it
  has no faults of its own;
* a mock with its own `with_faults` keeps them, at its own rate;
* a real tool never: the agent's own tool or function in `tool_mocks`, and
  `ToolMock.real(tool)` without faults, run as written. Faults stand in for a
  dependency that fails; a tool the case runs for real fails on its own, and a
  copy of the case never wraps its body.

The user's case is never changed: the suite runs a copy.

Its model calls are recorded apart (`cassettes_apart`): the pass with faults
sends other requests than the pass without (a tool's answer is an error), so
its cassettes go to ``<DIR>/_faults-<rate>/`` and are replayed from there, and
the pass without faults keeps ``<DIR>/<case>/attempt-<n>.json``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from .._case import EvalCase
from .._errors import EvalSetupError
from .._tools._faults import Faults
from .._tools._mocks import ToolMock
from ..models._gateway._settings import ModelCalls

__all__ = ["FAULTED_CASSETTES", "cassettes_apart", "check_fault_rate", "with_default_faults"]

FAULTED_CASSETTES = "_faults-{rate:g}"
"""The subfolder of a cassette folder for a pass with faults at `rate` (``_faults-0.2``).

No case's folder is named so: a case's folder starts with a letter or a digit.
"""


def check_fault_rate(rate: object, name: str = "faults") -> float:
    """`rate` as a fault rate: the share of calls that fail, above 0 and at most 1.

    Args:
        rate: The value given.
        name: The argument it was given as, for the message.

    Raises:
        EvalSetupError: Naming the argument, the value and the range.
    """
    if isinstance(rate, bool) or not isinstance(rate, int | float) or not 0 < rate <= 1:
        raise EvalSetupError(
            f"{name} must be the share of mocked tool calls that fail, above 0 and at most 1 "
            f"(0.2: one call in five), got {rate!r}"
        )
    return float(rate)


def with_default_faults(case: EvalCase, rate: float | None) -> EvalCase:
    """`case` with seeded faults at `rate` on each mock without its own (see the module doc).

    Returns `case` itself when `rate` is None or nothing of it is mocked.
    """
    if rate is None:
        return case
    faults = Faults(error_rate=rate)
    mocks = {name: _faulted(value, faults) for name, value in case.tool_mocks.items()}
    simulated = case.simulate_unmocked
    if simulated is True:  # the default simulated mock, made here to carry the faults
        simulated = ToolMock.simulated()
    unmocked = _faulted(simulated, faults)
    changed = any(mocks[name] is not value for name, value in case.tool_mocks.items())
    if not changed and unmocked is case.simulate_unmocked:
        return case
    return dataclasses.replace(case, tool_mocks=mocks, simulate_unmocked=unmocked)


def _faulted(value: Any, faults: Faults) -> Any:
    """`value` with `faults` when it is a mock (not a real tool) without faults of its own."""
    if isinstance(value, ToolMock) and value.faults is None and value.real_tool is None:
        return dataclasses.replace(value, faults=faults)
    return value


def cassettes_apart(settings: ModelCalls, rate: float | None) -> ModelCalls:
    """`settings` with their cassettes under `FAULTED_CASSETTES` when `rate` is a fault rate."""
    if rate is None or (settings.record is None and settings.replay is None):
        return settings
    folder = FAULTED_CASSETTES.format(rate=rate)
    if settings.record is not None:
        return settings.replace(record=settings.record / folder)
    assert settings.replay is not None
    return settings.replace(replay=settings.replay / folder)
