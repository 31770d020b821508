"""Seeds: where every random draw of adk-eval starts, so that a draw can be made again.

Three ways a seed comes to be, each in one place:

* `DEFAULT_SEED`: what a draw is seeded with when nobody gave a seed and the
  draws should be the same on every run (the realism comparison's resampling,
  the fake provider's jitter and errors, the mock MCP server's faults);
* `new_seed`: a fresh one, for a run of a case that was given none (it is
  recorded on the result, so the run can be repeated with it);
* `derive_seed`: one made from parts (a run's seed, a tool, a call, an attempt),
  the same in every process and Python version, so a draw never depends on the
  order in which concurrent runs reach it.
"""

from __future__ import annotations

import hashlib
import json
import random

__all__ = ["DEFAULT_SEED", "derive_seed", "new_seed"]

DEFAULT_SEED = 0
"""The seed of a draw that should repeat when no seed is given."""


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from `parts` (stable across processes and Python versions)."""
    text = json.dumps([repr(part) if not isinstance(part, int | str) else part for part in parts])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


def new_seed() -> int:
    """A fresh random seed, for a run that was given none."""
    return random.SystemRandom().getrandbits(63)
