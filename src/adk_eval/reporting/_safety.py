"""The safety report: per attack kind and per case, attempted and breached runs.

An attack is any invariant tagged with one (`Invariant.attack`): the detector
of a payload a mock injects (``injection:KIND``) or the success oracle of an
adversarial user (``user:TACTIC``). A run *attempted* it when the attack
reached the agent (a poisoned answer was delivered; an adversarial user always
is) and *breached* when the rule broke. Each breach names the breaking event
and the command that replays it: the suite's seed and the case (a run's seed
derives from them), so the same answers are poisoned the same way again.
"""

from __future__ import annotations

import shlex
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._result import EvalResult

__all__ = ["safety_lines", "safety_section"]


def safety_section(
    results: Sequence[EvalResult], seed: int | None, command: str | None = None
) -> dict[str, Any] | None:
    """The JSON report's ``safety`` block (None when no case carries an attack).

    Args:
        results: The suite's runs.
        seed: The suite's seed.
        command: The command that ran the suite (its paths are replayed); None:
            ``adk-eval run <eval files>``.
    """
    runs = [
        _run(result, name, metric.value, seed, command)
        for result in results
        for name, metric in result.metrics.items()
        if isinstance(metric.value, dict) and metric.value.get("attack")
    ]
    if not runs:
        return None
    kinds: dict[str, dict[str, Any]] = {}
    for run in runs:
        kind = kinds.setdefault(
            run["attack"], {"attack": run["attack"], "cases": {}, "attempted": 0, "breached": 0}
        )
        case = kind["cases"].setdefault(
            run["case"], {"case": run["case"], "attempted": 0, "breached": 0}
        )
        for counts in (kind, case):
            counts["attempted"] += run["attempted"]
            counts["breached"] += run["breached"]
    attacks = [{**kind, "cases": list(kind["cases"].values())} for kind in kinds.values()]
    return {"attacks": attacks, "runs": runs}


def _run(
    result: EvalResult, name: str, value: dict[str, Any], seed: int | None, command: str | None
) -> dict[str, Any]:
    attempts = value.get("attempts")
    breached = bool(value.get("breached"))
    return {
        "attack": value["attack"],
        "case": result.name,
        "attempt": result.attempt,
        "invariant": name,
        "attempted": breached or attempts is None or attempts > 0,
        "breached": breached,
        "event": value.get("event"),
        "replay": _replay(command, result, seed) if breached else None,
    }


def _replay(command: str | None, result: EvalResult, seed: int | None) -> str:
    """``adk-eval run PATHS -k CASE --seed SEED`` (with ``--repeat`` up to its attempt)."""
    words = shlex.split(command.removesuffix(" (interrupted)")) if command else []
    base = []
    for word in words:
        if word.startswith("-"):
            break
        base.append(word)
    if len(base) < 3:
        base = ["adk-eval", "run", "<eval files>"]
    replay = [*base, "-k", result.name, "--seed", str(seed if seed is not None else result.seed)]
    if result.attempt:
        replay += ["--repeat", str(result.attempt + 1)]
    return shlex.join(replay)


def safety_lines(section: dict[str, Any] | None) -> list[str]:
    """The safety section of ``adk-eval run``'s output (nothing when there is none)."""
    if section is None:
        return []
    breached = sum(kind["breached"] for kind in section["attacks"])
    attempted = sum(kind["attempted"] for kind in section["attacks"])
    lines = [f"safety: {breached} of {attempted} attacked run(s) breached"]
    for kind in section["attacks"]:
        cases = ", ".join(
            f"{case['case']} {case['breached']}/{case['attempted']}" for case in kind["cases"]
        )
        lines.append(
            f"  {kind['attack']}: {kind['breached']} of {kind['attempted']} breached ({cases})"
        )
        for run in section["runs"]:
            if run["attack"] == kind["attack"] and run["breached"]:
                lines.append(f"    {run['case']} (run {run['attempt'] + 1}): {run['event']}")
                lines.append(f"      replay: {run['replay']}")
    return lines
