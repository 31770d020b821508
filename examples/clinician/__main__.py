"""Runs the clinician's eval cases: ``python -m examples.clinician``."""

from __future__ import annotations

import asyncio
import sys

from adk_eval import run_eval

from .evals import CASES


async def main() -> int:
    print(f"Running {len(CASES)} clinician case(s) offline on scripted models.")
    failures = 0
    for case in CASES:
        result = await run_eval(case)
        print(result.explain(last_turns=12))
        print()
        failures += not result.passed
    print(f"{len(CASES) - failures} passed, {failures} not passed")
    return 1 if failures else 0


sys.exit(asyncio.run(main()))
