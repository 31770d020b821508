"""Simulated users against real ones: scenarios mined from production, measured the same way.

Catalogue:

* `mine_sessions`, `mine_session`, `MinedScenario`, `MinedFact`, `MineSummary`,
  `load_mined`: stored conversations (redacted first) as scenarios a simulated user
  plays again: goal, facts asked for or volunteered, manner, outcome, source session;
  written as ADK's EvalSet of conversation scenarios.
* `features`, `UserBehaviour`, `FEATURE_KINDS`: the behaviour of a conversation's user
  side by rules, the same for real and simulated conversations.
* `compare_features`, `FeatureComparison`, `overall_distance`, `pass_rate_gap`: two
  groups of conversations compared feature by feature, with intervals, effect sizes
  and tests corrected for the number of features, said in words.
* `realism_report`, `RealismReport`: real conversations against simulated runs, in
  one report (``adk-eval realism``).
* `PersonaSettings`, `calibrate`, `Calibration`: settings that move a simulated user's
  behaviour, and the ones closest to your real users, checked on held-out sessions
  (``adk-eval realism --calibrate``).
"""

from __future__ import annotations

from ._calibrate import Calibration, calibrate
from ._compare import FeatureComparison, compare_features, overall_distance, pass_rate_gap
from ._features import FEATURE_KINDS, UserBehaviour, features
from ._mine import MinedFact, MinedScenario, mine_session
from ._mine_files import MineSummary, load_mined, mine_sessions
from ._persona import PersonaSettings, replay_with
from ._report import RealismReport, realism_report

__all__ = [
    "FEATURE_KINDS",
    "Calibration",
    "FeatureComparison",
    "MineSummary",
    "MinedFact",
    "MinedScenario",
    "PersonaSettings",
    "RealismReport",
    "UserBehaviour",
    "calibrate",
    "compare_features",
    "features",
    "load_mined",
    "mine_session",
    "mine_sessions",
    "overall_distance",
    "pass_rate_gap",
    "realism_report",
    "replay_with",
]
