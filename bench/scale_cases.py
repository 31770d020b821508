"""The cases of bench/scale.py, at module level so that worker processes can import them.

Each case is the throughput bench's case (3 LiteLlm calls to a FakeProviderServer,
one mocked tool). The providers' URLs and the case count come from the
environment, set by bench/scale.py before anything imports this module.
"""

from __future__ import annotations

import os

from throughput import make_cases

COUNT = int(os.environ.get("ADK_EVAL_BENCH_CASES", "0"))
FAST = make_cases(os.environ["ADK_EVAL_BENCH_FAST_URL"], COUNT)
SLOW = make_cases(os.environ["ADK_EVAL_BENCH_SLOW_URL"], COUNT)
MEMORY = make_cases(
    os.environ["ADK_EVAL_BENCH_FAST_URL"], int(os.environ.get("ADK_EVAL_BENCH_MEMORY_CASES", "0"))
)
