"""Who failed? Every run that did not pass is attributed to a party, with evidence.

Parties:

* ``agent``: the agent under test did it;
* ``simulated_user``: the simulated user left its role (`user_fidelity`) or broke;
* ``setup``: the case cannot work as written: an unmocked tool, a missing user
  agent, a mock, bridge or metric that raised, a missing key;
* ``provider``: a model provider failed: a rate limit, a 5xx, a timeout, a reply
  that is not what its API promises;
* ``unknown``: nothing here can tell (say so, and how to find out).

Deterministic signals decide where they can: an error's phase and type. Between
the agent and the simulated user, the `user_fidelity` verdict decides when the
case has one; a user agent that answers without a model is faithful by
construction. Counterfactual re-runs (`adk_eval.explain_failure`) add the
strongest evidence: the one change that flips the verdict.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal, TypeAlias

from ..metrics._types import MetricResult
from ._status import EvalErrorInfo

__all__ = ["PARTIES", "Attribution", "Party", "attribute"]

Party: TypeAlias = Literal["agent", "simulated_user", "setup", "provider", "unknown"]
PARTIES: tuple[Party, ...] = ("agent", "simulated_user", "setup", "provider", "unknown")

_PROVIDER_TYPES = re.compile(
    r"RateLimit|ServiceUnavailable|InternalServer|APIConnection|APIError|Timeout|ServerError|"
    r"BadGateway|Overloaded|ResourceExhausted|DeadlineExceeded|JSONDecodeError|ProviderWait|"
    # the transport under a model client (httpx's and Python's own connection errors)
    r"Connect(?:ion)?(?:Error|Timeout|RefusedError|ResetError)|RemoteProtocol|ReadError|"
    r"WriteError|PoolTimeout|NetworkError"
)
_STATUS = r"(?:429|5(?:0[0-4]|29))"  # too many requests, the server errors, 529 overloaded
_PROVIDER_WORDS = re.compile(
    # A status code only where it reads as one ("Error code: 429", "HTTP 503", "503
    # UNAVAILABLE", "'502 Bad Gateway'"), never digits of a path, an id or an amount.
    rf"\b(?:HTTP(?:/[\d.]+)?|status(?:[ _]?code)?|code)[\s:=`'\"]*{_STATUS}\b|"
    rf"(?<![\w/.\-]){_STATUS}[\s.:\-]*(?:too many requests|resource_exhausted|internal\b|"
    r"bad gateway|service unavailable|unavailable|gateway time-?out|deadline_exceeded|overloaded)|"
    r"rate limit|exceeded (?:your )?(?:current )?quota|quota (?:exceeded|exhausted|reached)|"
    r"insufficient_quota|overloaded|timed? ?out|"
    r"service unavailable|internal server error|not valid json|malformed",
    re.IGNORECASE,
)
_CONFIGURATION = re.compile(
    # A provider refusing the case's configuration: a key, a permission, a model name.
    r"litellm\.(?:AuthenticationError|PermissionDeniedError|NotFoundError)|"
    r"^(?:401|403|404) (?:UNAUTHENTICATED|PERMISSION_DENIED|NOT_FOUND)\b|\bapi[ _-]?key\b",
    re.IGNORECASE,
)
_HARNESS_TYPES = {"WorkerDied", "WorkerResultError", "RayTaskFailed"}
_SETUP_TYPES = {
    "EvalToolError",
    "EvalSetupError",
    "EvalSandboxError",
    "CassetteMissError",
    "SimulatedToolError",
    "DiscoveryError",
    "ScriptExhaustedError",
}


@dataclass(frozen=True)
class Attribution:
    """Which party a run that did not pass is attributed to, and why.

    Attributes:
        party: ``agent``, ``simulated_user``, ``setup``, ``provider`` or ``unknown``.
        evidence: Why, in words (the error, the offending user turn, ...).
        confidence: How sure, from 0 to 1 (a rule on an error's type: high; a
            judge's verdict: lower; nothing to go on: 0).
        counterfactual: The one change that flipped the verdict in a re-run, when
            re-runs were made (``passes when the simulated user is replaced from
            turn 2``), or what they showed.
        flaky: A re-run with nothing changed but the seed gave another verdict.
    """

    party: Party
    evidence: str
    confidence: float
    counterfactual: str | None = None
    flaky: bool = False

    def line(self) -> str:
        """``attributed to: agent (confidence 0.8): ...``."""
        text = f"attributed to: {self.party} (confidence {self.confidence:.2f}): {self.evidence}"
        if self.counterfactual:
            text += f"; counterfactual: {self.counterfactual}"
        return text + ("; flaky: a re-run with a new seed flips it" if self.flaky else "")

    def to_data(self) -> dict[str, Any]:
        """Plain data (its fields), for reports and results files."""
        return asdict(self)

    def with_counterfactual(self, **changes: Any) -> Attribution:
        """This attribution, changed by what a re-run showed."""
        return replace(self, **changes)


def _error_party(error: EvalErrorInfo) -> Attribution:
    said = f"{error.type}: {error.message}"
    if error.type in _HARNESS_TYPES:
        return Attribution(
            "unknown", f"the harness lost the run ({_short(said)}): re-run the case alone", 0.0
        )
    if _PROVIDER_TYPES.search(error.type) or _PROVIDER_WORDS.search(error.message):
        return Attribution("provider", f"a model provider failed ({_short(said)})", 0.9)
    if _CONFIGURATION.search(error.message):  # (a rate limit may name the key it counts)
        what = "the provider refused the case's key, permission or model name"
        return Attribution("setup", f"{what} ({_short(said)})", 0.9)
    if error.phase in ("setup", "metric") or error.type in _SETUP_TYPES:
        what = "a metric raised" if error.phase == "metric" else "the case cannot run as written"
        return Attribution("setup", f"{what} ({_short(said)})", 0.95)
    if error.phase == "user_agent":
        if "bridge" in error.message.lower() or "no user agent" in error.message.lower():
            return Attribution("setup", f"the user agents are not set up ({_short(said)})", 0.9)
        return Attribution("simulated_user", f"the simulated user failed ({_short(said)})", 0.8)
    return Attribution("agent", f"the agent under test raised ({_short(said)})", 0.7)


def attribute(
    status: str,
    error: EvalErrorInfo | None,
    metrics: Mapping[str, MetricResult],
    *,
    modelled_user: bool,
) -> Attribution | None:
    """The party a run that did not pass is attributed to (None for a passed run).

    Args:
        status: The run's status.
        error: Why it ended in error, if it did.
        metrics: Its metric results (a `user_fidelity` result is read).
        modelled_user: A model played a user agent of the run.
    """
    if status == "passed":
        return None
    if error is not None:
        return _error_party(error)
    fidelity = [m for m in metrics.values() if isinstance(m.value, dict) and "faithful" in m.value]
    if fidelity and fidelity[0].applicable:
        verdict = fidelity[0]
        if not verdict.passed:
            ruled = verdict.value.get("checked") == "checked by rule"
            return Attribution(
                "simulated_user",
                f"the simulated user left its role: {'; '.join(verdict.evidence)}",
                0.9 if ruled else 0.75,
            )
        failed = ", ".join(n for n, m in metrics.items() if m.applicable and not m.passed)
        what = f"failed {failed}" if failed else status
        return Attribution("agent", f"the simulated user stayed in role; the run {what}", 0.8)
    if not modelled_user:
        return Attribution(
            "agent",
            "the simulated user is scripted, so faithful by construction",
            0.9,
        )
    return Attribution(
        "unknown",
        "a model played the user and nothing checked it: add user_fidelity to the case's "
        "metrics, or re-run with --explain-failures",
        0.0,
    )


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
