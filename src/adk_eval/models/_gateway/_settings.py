"""`ModelCalls`: how a suite's model calls are paced, retried, cached and recorded.

One settings object for every model call of a run (the agent's, the user
agents', the judges', the simulated tools', the summarizer's), passed down, never
looked up: ``run_eval_suite(model_calls=...)`` puts it in the suite's plan, the
executor hands it to every run (to a worker process in its `WorkerSetup`), and
the run gives it to its gate. The command line and the pytest plugin build one
from their options and pass it the same way. Given none, a suite (or a run
alone) takes `project_settings`: the defaults with the limits of the project's
``pyproject.toml`` (see `_limits`). ``EvalCase(cache=...)`` chooses a case's
cached roles over the settings'.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, TypeAlias

from ..._errors import EvalSetupError
from .._pacing._limits import RateLimit, limits_from_pyproject, project_pyproject

__all__ = [
    "CACHE_ROLES",
    "DEFAULT_MAX_WAIT",
    "CacheRoles",
    "ModelCalls",
    "cache_roles",
    "project_settings",
    "role_kind",
]

DEFAULT_MAX_WAIT = 600.0
"""Seconds a run may wait for providers' quotas before it ends ``error``."""

CACHE_ROLES = ("agent", "users", "judges", "tools")
"""The roles whose model calls can be cached."""

_KNOWN = frozenset(CACHE_ROLES)

CacheRoles: TypeAlias = str | Sequence[str] | bool | None
"""Roles to cache: ``"all"``, ``"agent,users"``, a sequence of them, True (all) or None/False."""

OnMiss: TypeAlias = Literal["error", "call"]
GivenBy: TypeAlias = Literal["code", "cli", "pytest"]
_GIVEN_BY = ("code", "cli", "pytest")


def cache_roles(value: CacheRoles) -> frozenset[str]:
    """The roles `value` names (see `CacheRoles`).

    Raises:
        EvalSetupError: A role that is none of `CACHE_ROLES` (nor ``all``).
    """
    if value is None or value is False:
        return frozenset()
    if value is True:
        return frozenset(CACHE_ROLES)
    if isinstance(value, frozenset) and value <= _KNOWN:
        return value
    names = value.split(",") if isinstance(value, str) else list(value)
    roles = {str(name).strip() for name in names if str(name).strip()}
    if "all" in roles:
        return frozenset(CACHE_ROLES)
    unknown = sorted(roles - set(CACHE_ROLES))
    if unknown:
        raise EvalSetupError(
            f"cannot cache {', '.join(unknown)}: name roles among {', '.join(CACHE_ROLES)}, "
            "or 'all'"
        )
    return frozenset(roles)


def role_kind(role: str) -> str:
    """The cached-role kind of a call's role (``user:ann`` -> ``users``)."""
    head = role.split(":", 1)[0]
    kinds = {"agent": "agent", "summarizer": "agent", "user": "users", "judge": "judges"}
    return kinds.get(head, "tools" if head == "tool" else head)


@dataclass(frozen=True)
class ModelCalls:
    """How model calls are paced, retried, cached and recorded (see the module doc).

    Attributes:
        limits: Quotas by model name or glob (see `RateLimit`); models without
            one are paced by what their 429s say.
        max_wait: Seconds one run may wait for quota (and between retries of
            server errors) before it ends ``error``, attributed to the provider.
        server_retries: Retries of a 5xx, a timeout or a dropped connection.
        cache: Roles whose answers are cached (see `CacheRoles`).
        cache_path: The cache's SQLite file (None: the user's cache folder).
        cache_ttl: Seconds a cached answer stays valid (None: until cleared).
        record: Record every model call into this cassette folder.
        replay: Answer model calls from this cassette folder, offline.
        on_miss: A replayed request that differs from the recording: ``error``
            ends the run, ``call`` asks the model and updates the cassette.
        given_by: Where these settings were given (``code``, ``cli`` or
            ``pytest``), so that a cassette miss names the options to use there
            (``--record-models``, ``--adk-eval-record-models``, ``ModelCalls(record=...)``).
    """

    limits: Mapping[str, RateLimit] = field(default_factory=dict)
    max_wait: float = DEFAULT_MAX_WAIT
    server_retries: int = 3
    cache: CacheRoles = None
    cache_path: Path | None = None
    cache_ttl: float | None = None
    record: Path | None = None
    replay: Path | None = None
    on_miss: OnMiss = "error"
    given_by: GivenBy = field(default="code", compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cache", cache_roles(self.cache))  # checked, and one form
        for name in ("cache_path", "record", "replay"):
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, Path(value))
        if self.record is not None and self.replay is not None:
            raise EvalSetupError("record or replay model calls, not both: drop one of the two")
        if self.on_miss not in ("error", "call"):
            raise EvalSetupError(f"on_miss must be 'error' or 'call', got {self.on_miss!r}")
        if self.given_by not in _GIVEN_BY:
            raise EvalSetupError(f"given_by must be one of {_GIVEN_BY}, got {self.given_by!r}")
        if not isinstance(self.max_wait, int | float) or self.max_wait < 0:
            raise EvalSetupError(f"max_wait must be seconds >= 0, got {self.max_wait!r}")
        for pattern, limit in self.limits.items():
            if not isinstance(limit, RateLimit):
                raise EvalSetupError(
                    f"limits[{pattern!r}] must be a RateLimit(rpm=..., tpm=...), got {limit!r}"
                )

    @property
    def cached(self) -> frozenset[str]:
        """The roles whose answers are cached."""
        return cache_roles(self.cache)

    def replace(self, **changes: Any) -> ModelCalls:
        """A copy with `changes`."""
        return dataclasses.replace(self, **changes)

    @property
    def offline(self) -> bool:
        """Whether a cassette answers every call, never a provider (so no key is needed)."""
        return self.replay is not None and self.on_miss == "error"

    def __hash__(self) -> int:  # its limits are a mapping: hashed as items
        values = [getattr(self, item.name) for item in dataclasses.fields(self) if item.compare]
        values[0] = tuple(sorted(self.limits.items()))
        return hash(tuple(values))


@lru_cache(maxsize=4)
def _project_settings(cwd: str) -> ModelCalls:
    found = project_pyproject(Path(cwd))
    return ModelCalls(limits=limits_from_pyproject(found) if found else {})


def project_settings() -> ModelCalls:
    """The settings given none: the defaults, with ``pyproject.toml``'s limits (read once).

    Raises:
        EvalSetupError: Its ``[tool.adk-eval.limits]`` table is malformed.
    """
    return _project_settings(os.getcwd())
