"""How ``run``'s model calls meet their providers: quotas, retries, the cache, cassettes.

`CallOptions` holds ``--rpm`` and ``--tpm`` (``N/WINDOW``: ``--rpm 20/10s``),
the hidden ``--quota-window`` of older command lines, ``--max-provider-wait``,
``--cache``, ``--cache-ttl``, ``--record-models``, ``--replay-models`` and
``--on-miss``. `CallOptions.settings` merges them over the project's
``[tool.adk-eval.limits]`` into one `ModelCalls`, which ``run`` passes to its
suites (and they to every run, in any process).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ._common import fail, grouped

if TYPE_CHECKING:
    from ..models._gateway._settings import ModelCalls

__all__ = ["CallOptions", "call_options"]


@dataclass(frozen=True)
class CallOptions:
    """``run``'s options about model calls (see the module doc)."""

    rpm: tuple[str, ...] = ()
    tpm: tuple[str, ...] = ()
    quota_window: float | None = None
    max_provider_wait: float | None = None
    cache: str | None = None
    cache_ttl: float | None = None
    record_models: Path | None = None
    replay_models: Path | None = None
    on_miss: str | None = None

    def settings(self) -> ModelCalls:
        """The `ModelCalls` these options give (each mistake is one error line).

        The limits are the project's ``pyproject.toml`` ones, with ``--rpm`` and
        ``--tpm`` over them.
        """
        from .._errors import EvalSetupError
        from ..models._gateway._settings import project_settings
        from ..models._pacing._limits import limits_from_options

        if self.record_models is not None and self.replay_models is not None:
            fail("--record-models and --replay-models: record or replay, not both")
        given = {
            "max_wait": self.max_provider_wait,
            "cache": self.cache,
            "cache_ttl": self.cache_ttl,
            "record": self.record_models,
            "replay": self.replay_models,
            "on_miss": self.on_miss,
        }
        try:
            settings = project_settings()
            limits = limits_from_options(self.rpm, self.tpm, self.quota_window)
            settings = settings.replace(
                limits={**settings.limits, **limits},
                given_by="cli",
                **{name: value for name, value in given.items() if value is not None},
            )
        except EvalSetupError as error:
            fail(str(error))
        if self.on_miss is not None and settings.replay is None:
            fail("--on-miss applies to --replay-models: give the cassette folder to replay")
        if settings.replay is not None and not settings.replay.is_dir():
            fail(
                f"--replay-models {settings.replay}: no such folder; record one with "
                "--record-models first"
            )
        return settings


_FOLDER = click.Path(file_okay=False, path_type=Path)

call_options = grouped(
    "calls",
    CallOptions,
    click.option(
        "--rpm",
        multiple=True,
        metavar="[MODEL=]N/WINDOW",
        help="A provider's quota of requests as it states it: 20/10s is 20 in any 10 s (500/1m, "
        "1500/1d), for every model or one (repeat it; MODEL may be a glob). Calls wait for "
        "it instead of being refused. Over [tool.adk-eval.limits] in pyproject.toml.",
    ),
    click.option(
        "--tpm",
        multiple=True,
        metavar="[MODEL=]N/WINDOW",
        help="A provider's quota of tokens, as --rpm: 250000/1m.",
    ),
    click.option(
        "--quota-window",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        hidden=True,  # the window is said with the limit (--rpm 20/10s)
        help="The window bare --rpm and --tpm numbers (per minute) are counted over.",
    ),
    click.option(
        "--max-provider-wait",
        type=click.FloatRange(min=0),
        metavar="SECONDS",
        help="How long one run may wait for providers' quotas (after 429s) before it ends "
        "'error', attributed to the provider (default 600). Waiting does not count against "
        "max_duration.",
    ),
    click.option(
        "--cache",
        metavar="ROLES",
        help="Cache model answers of these roles: all, or agent,users,judges,tools. A second "
        "run of an unchanged case sends nothing (each --repeat attempt has its own entry).",
    ),
    click.option(
        "--cache-ttl",
        type=click.FloatRange(min=0, min_open=True),
        metavar="SECONDS",
        help="With --cache: answers older than this are asked again.",
    ),
    click.option(
        "--record-models",
        type=_FOLDER,
        metavar="DIR",
        help="Record every model call of each run into cassettes in DIR (by case and attempt).",
    ),
    click.option(
        "--replay-models",
        type=_FOLDER,
        metavar="DIR",
        help="Answer every model call from the cassettes in DIR: offline, no key. A request "
        "that differs from its recording ends that run with one line saying where.",
    ),
    click.option(
        "--on-miss",
        type=click.Choice(["error", "call"]),
        help="With --replay-models: on a request that differs from the recording, end the run "
        "('error', the default) or call the model and update the cassette ('call').",
    ),
)
"""The options of `CallOptions`, handed to the command as ``calls``."""


def settings_lines(settings: ModelCalls) -> list[str]:
    """What ``run`` says about its model calls before it starts (nothing when all default)."""
    from ..models._gateway._settings import DEFAULT_MAX_WAIT

    lines = []
    if settings.limits:
        limits = "; ".join(
            f"{name} {limit.describe()}" for name, limit in sorted(settings.limits.items())
        )
        lines.append(f"quotas: {limits}")
    if settings.max_wait != DEFAULT_MAX_WAIT:
        lines.append(f"max provider wait: {settings.max_wait:g} s per run")
    if settings.cached:
        from ..models._gateway._cache import cache_file

        ttl = f", answers kept {settings.cache_ttl:g} s" if settings.cache_ttl else ""
        roles = ", ".join(sorted(settings.cached))
        lines.append(f"cache: {roles} ({cache_file(settings)}{ttl})")
    if settings.record is not None:
        lines.append(f"recording model calls into {settings.record}")
    if settings.replay is not None:
        miss = "call the model" if settings.on_miss == "call" else "end the run"
        lines.append(f"replaying model calls from {settings.replay} (a miss: {miss})")
    return lines
