"""The goldens of ``BENCH_EVALSET`` as adk-eval cases (for ``adk-eval run``), trajectory-scored."""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from adk_agent.agent import lookup, root_agent

from adk_eval.goldens import eval_case_from_golden, load_goldens

CASES = [
    eval_case_from_golden(golden, root_agent, tool_mocks={"lookup": lookup})
    for golden in load_goldens(os.environ["BENCH_EVALSET"]).values()
]
