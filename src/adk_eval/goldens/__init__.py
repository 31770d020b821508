"""Golden traces: ADK EvalSet files from runs and sessions, and evals from goldens.

* export: `to_golden` (a run or an ADK session -> an ADK `EvalCase`)
* files: `append_golden`, `load_eval_set` (atomic, locked, never overwriting
  an invalid file)
* replay: `expected_trajectories`, `eval_case_from_golden`, `load_goldens`,
  `recorded_user_agent`
* scenarios: `eval_case_from_scenario` (ADK's user-simulator cases, played here)
"""

from ._evalset import AppendResult, EvalSetFileError, append_golden, load_eval_set
from ._evalset import append_eval_case as append_eval_case  # deprecated alias, not in __all__
from ._export import snake_case, to_golden
from ._export import to_eval_case as to_eval_case  # deprecated alias, not in __all__
from ._replay import (
    eval_case_from_golden,
    expected_trajectories,
    load_goldens,
    recorded_user_agent,
)
from ._scenario import eval_case_from_scenario

__all__ = [
    # export
    "to_golden",
    "snake_case",
    # files
    "append_golden",
    "load_eval_set",
    "AppendResult",
    "EvalSetFileError",
    # replay
    "expected_trajectories",
    "eval_case_from_golden",
    "load_goldens",
    "recorded_user_agent",
    # scenarios
    "eval_case_from_scenario",
]
