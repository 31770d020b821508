"""How far a suite's budget (`--max-tokens`, `--max-cost`) is overshot by runs in flight.

A suite checks its budget as runs finish: once the finished runs have spent
it, the runs still going are cancelled and the rest never start. The model
calls those cancelled runs made before the cancel were paid for, but no
result carries them. This script runs ``--cases`` identical conversations
(``--turns`` turns of a ~165-token reply each, a scripted model answering
after ``--latency`` s) under a token budget of ``--budget-runs`` runs' worth,
at each ``--concurrency``, and counts every token the model reported, in
finished and cancelled runs alike (an ``after_model_callback`` on the agent).
Both sides do the same work: the same suite, counted two ways.

    python bench/budget_overshoot.py                  # concurrency 1, 4, 16
    python bench/budget_overshoot.py --concurrency 8

Writes ``bench/results/budget_overshoot.json``.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from _common import machine, write_result
from google.adk.agents import LlmAgent

from adk_eval import EvalCase, ScriptedUserAgent, TerminateWhen, UserAgents, run_eval_suite
from adk_eval._termination import Budget
from adk_eval.testing import ScriptedLlm

REPLY = "Let me tell you more about that. " * 20  # ~165 tokens a reply


def cases(count: int, turns: int, latency: float, paid: list[int]) -> list[EvalCase]:
    """`count` conversations; `paid` gets the tokens of every model call as it returns."""

    def tally(callback_context: Any, llm_response: Any) -> None:
        usage = llm_response.usage_metadata
        if usage is not None:
            paid.append((usage.prompt_token_count or 0) + (usage.candidates_token_count or 0))

    return [
        EvalCase(
            name=f"chat-{index}",
            agent=LlmAgent(
                name="talker",
                model=ScriptedLlm([REPLY] * (turns + 1), latency=latency),
                after_model_callback=tally,
            ),
            first_message="hi",
            user_agents=UserAgents(loop=ScriptedUserAgent(name="u", script=["go on"] * turns)),
            terminate_when=TerminateWhen(max_turns=turns),
        )
        for index in range(count)
    ]


async def one_run_tokens(turns: int) -> int:
    """What one whole conversation spends (the unit of the budget and the overshoot)."""
    paid: list[int] = []
    suite = await run_eval_suite(cases(1, turns, 0.0, paid))
    assert suite.summary["errors"] == 0
    return sum(paid)


async def measure(concurrency: int, args: argparse.Namespace, per_run: int) -> dict[str, Any]:
    paid: list[int] = []
    budget = Budget(max_tokens=int(args.budget_runs * per_run))
    suite = await run_eval_suite(
        cases(args.cases, args.turns, args.latency, paid),
        max_concurrency=concurrency,
        budget=budget,
    )
    assert budget.max_tokens is not None
    reported = suite.budget_reached.value if suite.budget_reached else None
    spent = sum(paid)
    return {
        "concurrency": concurrency,
        "budget_tokens": budget.max_tokens,
        "finished_runs": len(suite.results),
        "reported_tokens": reported,
        "paid_tokens": spent,
        "unreported_tokens": spent - (reported or 0),
        "overshoot_tokens": spent - budget.max_tokens,
        "overshoot_runs": (spent - budget.max_tokens) / per_run,
    }


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    per_run = await one_run_tokens(args.turns)
    rows = [await measure(c, args, per_run) for c in args.concurrency]
    return {"machine": machine(), "tokens_per_run": per_run, "turns": args.turns, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=64)
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--latency", type=float, default=0.02)
    parser.add_argument("--budget-runs", type=float, default=10.5)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4, 16])
    parser.add_argument("--json", default="bench/results/budget_overshoot.json")
    args = parser.parse_args()
    result = asyncio.run(main_async(args))
    print(f"one run spends {result['tokens_per_run']:,} tokens; budget {args.budget_runs} runs")
    print("concurrency  finished  reported   paid       over budget (runs)")
    for row in result["rows"]:
        print(
            f"{row['concurrency']:>11}  {row['finished_runs']:>8}  "
            f"{row['reported_tokens'] or 0:>9,}  {row['paid_tokens']:>9,}  "
            f"{row['overshoot_tokens']:>9,} ({row['overshoot_runs']:.2f})"
        )
    write_result(args.json, result)


if __name__ == "__main__":
    main()
