"""Golden traces: ADK EvalSet files from runs and sessions, and evals from goldens.

* export: `to_eval_case` (a run or an ADK session -> an ADK `EvalCase`)
* files: `append_eval_case`, `load_eval_set` (atomic, locked, never overwriting
  an invalid file)
* replay: `expected_trajectories`, `eval_case_from_golden`, `load_goldens`,
  `recorded_user_agent`
"""

from .evalset import AppendResult, EvalSetFileError, append_eval_case, load_eval_set, resolve_path
from .export import golden_eval_id, snake_case, to_eval_case
from .replay import (
    eval_case_from_golden,
    expected_trajectories,
    load_goldens,
    recorded_user_agent,
)

__all__ = [
    # export
    "to_eval_case",
    "golden_eval_id",
    "snake_case",
    # files
    "append_eval_case",
    "load_eval_set",
    "resolve_path",
    "AppendResult",
    "EvalSetFileError",
    # replay
    "expected_trajectories",
    "eval_case_from_golden",
    "load_goldens",
    "recorded_user_agent",
]
