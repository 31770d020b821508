"""Counterfactual re-runs: change one thing about a failed run and see if the verdict flips.

`explain_failure(case, result)` re-runs a failed case with one intervention at a
time, the most telling first, and stops at the first that flips the verdict:

1. **the simulated user replaced from its suspect turn**: the user agent a
   `user_fidelity` metric watches (else the loop one) has its own turns replayed
   word for word up to the turn the metric flagged (else its last); from there
   `user_model` (else its own model, resampled) plays its persona, reminded to
   stay in role (`STAY`). A pass means the failure was the simulated user's
   (``simulated_user``);
2. **a new seed**: injected faults and sampling drawn again, nothing else changed.
   A pass means the verdict is not stable (``flaky``);
3. **the judges resampled**: each failing `llm_judge` re-scores the same
   conversation with three samples. A pass means the judge, not the run, is in doubt.

At most `max_reruns` re-runs are made (each costs what a run costs). The
result's `Attribution` is updated with what was found (`Attribution.counterfactual`);
when nothing flips, an attribution to the agent grows more certain.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any, cast

from google.adk.agents import BaseAgent
from google.adk.models.llm_request import LlmRequest
from google.genai import types

from .._case import EvalCase, UserAgents
from .._result import EvalResult
from .._result._attribution import Attribution
from .._run.loop import run_case
from .._seeds import new_seed
from .._turns import content_text
from .._user_agents import STOP, STOP_SIGNAL, ScriptContext, ScriptedUserAgent
from ..metrics._fidelity import user_turns
from ..metrics._judge import LlmJudge
from ..metrics._scoring import score_trace
from ..models import resolve_model
from ..models._gateway._gate import Gateway
from ..models._gateway._settings import ModelCalls
from ._results import EvalSuiteResult

__all__ = ["EXPLAINED_AT_MOST", "explain_failure", "explain_failures"]

EXPLAINED_AT_MOST = 20
"""Failed runs of a suite that `explain_failures` re-runs at most (each costs re-runs)."""


async def explain_failure(
    case: EvalCase,
    result: EvalResult,
    *,
    max_reruns: int = 3,
    user_model: Any = None,
    model_calls: ModelCalls | None = None,
) -> EvalResult:
    """`result` with its attribution updated by counterfactual re-runs (see the module doc).

    Args:
        case: The case that ran.
        result: Its run that did not pass (a passed run is returned as it is).
        max_reruns: The most re-runs to make.
        user_model: The model that plays the user after the suspect turn (a name
            or a `BaseLlm`; None: the user agent's own).
        model_calls: The settings of the re-runs' model calls (None: the project's).
    """
    if result.passed or result.attribution is None:
        return result
    tried: list[str] = []
    found: dict[str, Any] | None = None
    gateway = Gateway.alone(model_calls)
    for name, intervention in _interventions(case, result, user_model, gateway):
        if len(tried) >= max_reruns:
            break
        flipped = await intervention()
        tried.append(f"{name}: {'passes' if flipped else 'still fails'}")
        if flipped:
            found = _finding(name, result.attribution)
            break
    done = f"tried {'; '.join(tried)}" if tried else "no intervention applies"
    if found is None:
        attribution = result.attribution
        party = "agent" if attribution.party == "unknown" and tried else attribution.party
        confidence = max(attribution.confidence, 0.95 if party == "agent" and tried else 0.0)
        found = {"party": party, "confidence": confidence}
        if party != attribution.party:
            found["evidence"] = "no change of the simulated user or the seed flips the verdict"
    updated = result.attribution.with_counterfactual(counterfactual=done, **found)
    return dataclasses.replace(result, attribution=updated)


async def explain_failures(
    suite: EvalSuiteResult,
    cases: Sequence[EvalCase],
    *,
    max_reruns: int = 3,
    model_calls: ModelCalls | None = None,
) -> EvalSuiteResult:
    """`suite` with `explain_failure` applied to its runs that did not pass (xfailed too).

    At most `EXPLAINED_AT_MOST` runs are explained, the first in the suite's order.
    """
    by_name = {case.name: case for case in cases}
    chosen = [r for r in suite.results if not r.passed and r.name in by_name][:EXPLAINED_AT_MOST]
    explained = {
        id(r): await explain_failure(
            by_name[r.name], r, max_reruns=max_reruns, model_calls=model_calls
        )
        for r in chosen
    }
    results = [explained.get(id(r), r) for r in suite.results]
    cases_stats = [
        dataclasses.replace(stats, runs=tuple(explained.get(id(r), r) for r in stats.runs))
        for stats in suite.cases
    ]
    return dataclasses.replace(suite, results=results, cases=cases_stats)


def _finding(name: str, before: Attribution) -> dict[str, Any]:
    if name.startswith("the simulated user"):
        return {
            "party": "simulated_user",
            "confidence": 0.95,
            "evidence": f"passes when {name}",
        }
    if name == "a new seed":
        return {"flaky": True}
    return {"evidence": f"{before.evidence}; the judge passes it when {name}"}


def _suspect_user(case: EvalCase, result: EvalResult) -> BaseAgent | None:
    """The user agent a `user_fidelity` metric of the case watches, else the loop one."""
    agents = [case.user_agents.loop, *case.user_agents.tools.values()]
    for metric in case.metrics:
        watched = getattr(metric, "agent", None)
        if watched is not None and any(watched is agent for agent in agents):
            return cast(BaseAgent, watched)
    return case.user_agents.loop


def _interventions(
    case: EvalCase, result: EvalResult, user_model: Any, gateway: Gateway
) -> list[tuple[str, Any]]:
    found: list[tuple[str, Any]] = []
    target = _suspect_user(case, result)
    turns, modelled = user_turns(result.user_agent_events, getattr(target, "name", None))
    if target is not None and modelled and turns:
        suspect = _suspect_turn(result, len(turns))
        name = f"the simulated user is replaced from turn {suspect}"

        async def replaced() -> bool:
            replay = ScriptedUserAgent(
                name=target.name, step=_replay_then_model(target, turns, suspect, user_model)
            )
            loop = replay if case.user_agents.loop is target else case.user_agents.loop
            tools = {k: replay if v is target else v for k, v in case.user_agents.tools.items()}
            users = UserAgents(loop=loop, tools=tools)
            again = dataclasses.replace(case, user_agents=users)
            return (await run_case(again, seed=None, attempt=0, gateway=gateway)).passed

        found.append((name, replaced))

    async def reseeded() -> bool:
        seed = new_seed()
        return (await run_case(case, seed=seed, attempt=result.attempt, gateway=gateway)).passed

    found.append(("a new seed", reseeded))
    judges = [m for m in case.metrics if isinstance(m, LlmJudge) and not _passed(result, m.name)]
    if judges:

        async def resampled() -> bool:
            again = [dataclasses.replace(judge, num_samples=3) for judge in judges]
            scored, _ = await score_trace(again, result.trace)
            return all(scored[judge.name].passed for judge in judges)

        found.append(("the judges are resampled (3 samples)", resampled))
    return found


def _passed(result: EvalResult, metric: str) -> bool:
    found = result.metrics.get(metric)
    return found is not None and found.passed


def _suspect_turn(result: EvalResult, turns: int) -> int:
    """The first turn `user_fidelity` flagged, else the user's last turn."""
    for metric in result.metrics.values():
        value = metric.value
        if isinstance(value, dict) and value.get("turns"):
            return int(min(turn["turn"] for turn in value["turns"]))
    return turns


STAY = (
    "\n\n(Stay in your role: answer as the persona in your instructions would, truthfully "
    "and fully, and end the conversation only once your goal is met.)"
)
"""What the replacement user is reminded of after the agent's words."""


def _replay_then_model(loop: BaseAgent, turns: Any, suspect: int, user_model: Any) -> Any:
    """Its own turns before `suspect`, then a model playing its persona."""
    llm = resolve_model(user_model) if user_model is not None else loop.canonical_model  # type: ignore[attr-defined]
    persona = str(getattr(loop, "instruction", "") or "")

    async def step(ctx: ScriptContext) -> Any:
        if ctx.turn < suspect - 1 and ctx.turn < len(turns):
            return turns[ctx.turn].reply
        history = []
        for event in ctx.session.events:
            text = content_text(event.content) if event.content else ""
            if text:
                role = "user" if event.author == "user" else "model"
                history.append(types.Content(role=role, parts=[types.Part(text=text)]))
        history.append(types.Content(role="user", parts=[types.Part(text=ctx.prompt + STAY)]))
        request = LlmRequest(
            model=llm.model,
            contents=history,
            config=types.GenerateContentConfig(
                system_instruction=f"{persona}\nWhen you are done, answer {STOP_SIGNAL}."
            ),
        )
        text = ""
        async for response in llm.generate_content_async(request):
            if response.content is not None and not response.partial:
                text += content_text(response.content)
        return text or STOP

    return step
