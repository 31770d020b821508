"""Simulated users against real ones: scenarios mined from production, measured the same way.

Catalogue (what docs/simulated-users.md teaches):

* `mine_sessions`, `MineSummary`, `load_mined`: stored conversations (redacted first)
  mined into scenarios a simulated user plays again: goal, facts asked for or
  volunteered, manner, outcome, source session; written as ADK's EvalSet of
  conversation scenarios, and read back as cases.
* `features`, `UserBehaviour`: the behaviour of a conversation's user side by rules,
  the same for real and simulated conversations.
* `compare_features`, `overall_distance`, `pass_rate_gap`: two groups of
  conversations compared feature by feature, with intervals, effect sizes and tests
  corrected for the number of features, said in words.
* `realism_report`, `RealismReport`: real conversations against simulated runs, in
  one report (``adk-eval realism``).
* `PersonaSettings`, `replay_with`, `calibrate`: settings that move a simulated
  user's behaviour, and the ones closest to your real users, checked on held-out
  sessions (``adk-eval realism --calibrate``).

What these return without being named here (a scenario, a comparison, a
calibration) is read through its attributes.
"""

from __future__ import annotations

from ._calibrate import calibrate
from ._compare import compare_features, overall_distance, pass_rate_gap
from ._features import UserBehaviour, features
from ._mine_files import MineSummary, load_mined, mine_sessions
from ._persona import PersonaSettings, replay_with
from ._report import RealismReport, realism_report

__all__ = [
    "MineSummary",
    "PersonaSettings",
    "RealismReport",
    "UserBehaviour",
    "calibrate",
    "compare_features",
    "features",
    "load_mined",
    "mine_sessions",
    "overall_distance",
    "pass_rate_gap",
    "realism_report",
    "replay_with",
]
